/*
 * commands.c - the commands: each one mcpc call (or two), its result printed as
 * one JSON document on stdout, its failure reported on stderr, and the exit
 * status it means. Results show the API's two kinds of string: owned `char *`
 * (mcpc_string_free) and `const char *` borrowed from a result object.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "client.h"

/* Prints the server's initialize (or server/discover) result, with one member added
 * in front: "mcpc": {"protocolVersion": ..., "negotiatedBy": ...}, saying which
 * version is in use and how it was chosen. */
static int cmd_info(const mcpc_client_t *client)
{
    char *json = NULL; /* owned: mcpc_string_free */
    mcpc_status_t st = mcpc_client_server_info(client, &json);
    if (st != MCPC_OK) {
        report_status(st);
        return exit_code_for(st);
    }
    /* Both strings come from the library's fixed vocabulary: no escaping needed. */
    const char *version = mcpc_client_protocol_version(client);
    const char *how = mcpc_client_negotiated_by(client);
    const char *rest = json + 1; /* the result is a JSON object: skip its "{" */
    while (*rest == ' ' || *rest == '\n' || *rest == '\t' || *rest == '\r')
        rest++;
    size_t len = strlen(json) + strlen(version) + strlen(how) + 64;
    char *out = malloc(len);
    int code = EXIT_ERROR;
    if (out != NULL) {
        snprintf(out, len, "{\"mcpc\":{\"protocolVersion\":\"%s\",\"negotiatedBy\":\"%s\"}%s%s", version, how,
                 *rest == '}' ? "" : ",", rest);
        code = print_json(out);
        free(out);
    } else {
        fputs("mcpc: out of memory\n", stderr);
    }
    mcpc_string_free(json);
    return code;
}

/* Each tool as the server sent it, with one member added in front, as info does:
 * "mcpc": {"view": ..., "visibility": [...]}, its MCP Apps view (a ui:// URI, or null)
 * and who may see and call it (both "model" and "app" unless the tool says less). */
static int cmd_tools(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts)
{
    mcpc_tool_list_t *list = NULL;
    /* Follows nextCursor through every page; the timeout covers the whole listing. */
    mcpc_status_t st = mcpc_client_list_tools(client, call_opts, &list);
    if (st != MCPC_OK)
        return json_or_error(st, NULL);
    struct buf b = {0};
    bool ok = buf_add(&b, "[", 1);
    for (size_t i = 0; ok && i < mcpc_tool_list_count(list); i++) {
        const char *tool = mcpc_tool_list_json(list, i); /* borrowed: an object, "{...}" */
        const char *rest = tool + strspn(tool, " \t\r\n") + 1;
        rest += strspn(rest, " \t\r\n");
        ok = (i == 0 || buf_add(&b, ",", 1)) && buf_add(&b, "{\"mcpc\":", 8) && add_tool_ui(&b, list, i) &&
             (*rest == '}' || buf_add(&b, ",", 1)) && buf_add(&b, rest, strlen(rest));
    }
    ok = ok && buf_add(&b, "]", 1);
    mcpc_tool_list_free(list);
    int code = ok ? print_json(b.p) : (fputs("mcpc: out of memory\n", stderr), EXIT_ERROR);
    free(b.p);
    return code;
}

/* With `validate`, the tools are listed first: the check uses the outputSchema each
 * tool had in the client's last listing. */
static int cmd_call(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts,
                    const char *name, const char *args_json, bool validate)
{
    mcpc_result_t *result = NULL;
    mcpc_status_t st = MCPC_OK;
    if (validate) {
        mcpc_tool_list_t *list = NULL;
        st = mcpc_client_list_tools(client, call_opts, &list);
        mcpc_tool_list_free(list);
    }
    if (st == MCPC_OK)
        st = mcpc_client_call_tool(client, name, args_json, call_opts, &result);
    return print_call_result(st, result);
}

int print_call_result(mcpc_status_t st, mcpc_result_t *result)
{
    int code = task_detached(st);
    if (code >= 0) {
        /* --detach: the task's reference is printed; the task runs on. */
    } else if (st == MCPC_OK || st == MCPC_ERR_TOOL || st == MCPC_ERR_OUTPUT_SCHEMA) {
        /* MCPC_ERR_TOOL: the tool ran and said it failed; MCPC_ERR_OUTPUT_SCHEMA: its
         * result does not fit its schema. Either way the result is still ours.
         * Report first: the message is gone after the next mcpc call. */
        if (st != MCPC_OK)
            report_status(st);
        code = print_json(mcpc_result_json(result)); /* borrowed from result */
        if (code == EXIT_OK)
            code = exit_code_for(st);
    } else {
        report_status(st);
        code = exit_code_for(st);
    }
    mcpc_result_free(result);
    return code;
}

static int cmd_request(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts,
                       const char *method, const char *params_json)
{
    char *json = NULL;
    mcpc_status_t st = mcpc_client_request(client, method, params_json, call_opts, &json);
    int code = task_detached(st);
    if (code < 0)
        code = json_or_error(st, json);
    mcpc_string_free(json);
    return code;
}

/* resources, templates, prompts, prompt and complete: one JSON string each. */
static int cmd_json(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const struct config *cfg)
{
    char *json = NULL;
    mcpc_status_t st = MCPC_ERR_INVALID_ARG;
    switch (cfg->command) {
    case CMD_RESOURCES:
        st = mcpc_client_list_resources(client, call_opts, &json);
        break;
    case CMD_TEMPLATES:
        st = mcpc_client_list_resource_templates(client, call_opts, &json);
        break;
    case CMD_PROMPTS:
        st = mcpc_client_list_prompts(client, call_opts, &json);
        break;
    case CMD_PROMPT:
        st = mcpc_client_get_prompt(client, cfg->tool_name, cfg->tool_args, call_opts, &json);
        break;
    case CMD_COMPLETE:
        st = mcpc_client_complete(client, cfg->complete_kind, cfg->tool_name, cfg->complete_arg,
                                  cfg->complete_value, NULL, call_opts, &json);
        break;
    default:
        break;
    }
    int code = json_or_error(st, json);
    mcpc_string_free(json);
    return code;
}

/* read: the result as the server sent it (blobs in base64, as in JSON). */
static int cmd_read(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *uri)
{
    mcpc_contents_t *contents = NULL;
    mcpc_status_t st = mcpc_client_read_resource(client, uri, call_opts, &contents);
    int code = json_or_error(st, mcpc_contents_json(contents));
    mcpc_contents_free(contents);
    return code;
}

int run_command(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const struct config *cfg)
{
    switch (cfg->command) {
    case CMD_INFO:
        return cmd_info(client);
    case CMD_TOOLS:
        return cmd_tools(client, call_opts);
    case CMD_CALL:
        return cmd_call(client, call_opts, cfg->tool_name, cfg->tool_args, cfg->validate_output);
    case CMD_REQUEST:
        return cmd_request(client, call_opts, cfg->tool_name, cfg->tool_args);
    case CMD_READ:
        return cmd_read(client, call_opts, cfg->tool_name);
    case CMD_SKILLS:
        return cmd_skills(client, call_opts);
    case CMD_SKILL:
        return cmd_skill(client, call_opts, cfg->tool_name, cfg->tool_args);
    case CMD_VIEWS:
        return cmd_views(client, call_opts);
    case CMD_VIEW:
        return cmd_view(client, call_opts, cfg->tool_name);
    case CMD_RESUME:
        return cmd_resume(client, call_opts, cfg->tool_name);
    case CMD_RESOURCES:
    case CMD_TEMPLATES:
    case CMD_PROMPTS:
    case CMD_PROMPT:
    case CMD_COMPLETE:
        return cmd_json(client, call_opts, cfg);
    case CMD_STATUS: /* a host's, not a client's (host.c) */
    case CMD_NONE:
        break;
    }
    return EXIT_USAGE;
}
