/*
 * apps.c - MCP Apps: `views` prints each listed tool that has a view (its ui:// URI
 * and who may see it), `view URI` fetches a view and prints it with the policy to
 * render it under, and `tools` shows each tool's view and visibility (add_tool_ui).
 * All of it is the server's text, printed as JSON strings.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "client.h"

#define ADD(lit) ok = ok && buf_add(&b, lit, sizeof lit - 1)

/* Appends who may see a tool: ["model","app"], or the part of it `who` holds. */
static bool add_visibility(struct buf *b, uint32_t who)
{
    bool both = (who & MCPC_UI_MODEL) && (who & MCPC_UI_APP);
    return buf_add(b, "[", 1) && (!(who & MCPC_UI_MODEL) || buf_add(b, "\"model\"", 7)) &&
           (!both || buf_add(b, ",", 1)) && (!(who & MCPC_UI_APP) || buf_add(b, "\"app\"", 5)) &&
           buf_add(b, "]", 1);
}

bool add_tool_ui(struct buf *b, const mcpc_tool_list_t *list, size_t i)
{
    const char *uri = mcpc_tool_list_ui_uri(list, i); /* borrowed from list */
    return buf_add(b, "{\"view\":", 8) && (uri ? buf_add_json_string(b, uri) : buf_add(b, "null", 4)) &&
           buf_add(b, ",\"visibility\":", 14) && add_visibility(b, mcpc_tool_list_ui_visibility(list, i)) &&
           buf_add(b, "}", 1);
}

int cmd_views(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts)
{
    mcpc_tool_list_t *list = NULL;
    mcpc_status_t st = mcpc_client_list_tools(client, call_opts, &list);
    if (st != MCPC_OK)
        return json_or_error(st, NULL);
    struct buf b = {0};
    bool ok = true, first = true;
    ADD("[");
    for (size_t i = 0; i < mcpc_tool_list_count(list); i++) {
        const char *uri = mcpc_tool_list_ui_uri(list, i); /* borrowed from list */
        if (uri == NULL)
            continue;
        if (!first)
            ADD(",");
        first = false;
        ADD("{\"name\":");
        ok = ok && buf_add_json_string(&b, mcpc_tool_list_name(list, i));
        ADD(",\"uri\":");
        ok = ok && buf_add_json_string(&b, uri);
        ADD(",\"visibility\":");
        ok = ok && add_visibility(&b, mcpc_tool_list_ui_visibility(list, i));
        ADD("}");
    }
    ADD("]");
    mcpc_tool_list_free(list);
    int code = ok ? print_json(b.p) : (fputs("mcpc: out of memory\n", stderr), EXIT_ERROR);
    free(b.p);
    return code;
}

int cmd_view(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *uri)
{
    mcpc_ui_view_t *v = NULL;
    mcpc_status_t st = mcpc_client_read_ui_view(client, uri, call_opts, &v);
    if (st != MCPC_OK)
        return json_or_error(st, NULL);
    struct buf b = {0};
    bool ok = true;
    int border = mcpc_ui_view_prefers_border(v);
    const char *domain = mcpc_ui_view_domain(v);
    ADD("{\"csp\":");
    ok = ok && buf_add_json_string(&b, mcpc_ui_view_csp(v));
    ADD(",\"allow\":");
    ok = ok && buf_add_json_string(&b, mcpc_ui_view_allow(v));
    ADD(",\"domain\":");
    ok = ok && (domain ? buf_add_json_string(&b, domain) : buf_add(&b, "null", 4));
    ADD(",\"prefersBorder\":");
    ok = ok && buf_add(&b, border < 0 ? "null" : border ? "true" : "false", border < 0 ? 4 : border ? 4 : 5);
    ADD(",\"meta\":");
    ok = ok && buf_add(&b, mcpc_ui_view_meta_json(v), strlen(mcpc_ui_view_meta_json(v))); /* JSON already */
    ADD(",\"html\":");
    ok = ok && buf_add_json_string(&b, mcpc_ui_view_html(v, NULL));
    ADD("}");
    mcpc_ui_view_free(v);
    int code = ok ? print_json(b.p) : (fputs("mcpc: out of memory\n", stderr), EXIT_ERROR);
    free(b.p);
    return code;
}
