/* C tests of MCP Apps against the demo server (`--apps`, demo/apps.py), in both
 * protocol generations: the extension declared, each listed tool's view and
 * visibility, a view fetched with its Content-Security-Policy and `allow` attribute
 * (from the read content's `_meta.ui`, else the listing's), and each view a host must
 * refuse: the wrong MIME type, too large, CSP sources that try to break out. */
#define _GNU_SOURCE
#include "harness.h"

static const char *ERAS[] = {"--era=legacy", "--era=modern"};
static char log_path[128];

static mcpc_client_t *connect_demo(const char *era) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-apps-%d.log", (int)getpid());
    unlink(log_path);
    const char *argv[] = {"python3", "demo/server.py", "--apps", era, "--log", log_path};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    CHECK_STATUS(mcpc_options_add_extension(o, "io.modelcontextprotocol/ui",
                                            "{\"mimeTypes\":[\"text/html;profile=mcp-app\"]}"),
                 MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 6, o, &c), MCPC_OK);
    mcpc_options_free(o);
    return c;
}

static void close_client(mcpc_client_t *c) {
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
}

/* The index of tool `name` in `list`, or -1. */
static long find(const mcpc_tool_list_t *list, const char *name) {
    for (size_t i = 0; i < mcpc_tool_list_count(list); i++)
        if (strcmp(mcpc_tool_list_name(list, i), name) == 0) return (long)i;
    return -1;
}

static void test_declared_and_tools_views(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e]);
        if (!c) continue;
        mcpc_tool_list_t *list = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &list), MCPC_OK);
        long show = find(list, "show_clock"), tick = find(list, "clock_tick"), flat = find(list, "legacy_view"),
             echo = find(list, "echo");
        CHECK(show >= 0 && tick >= 0 && flat >= 0 && echo >= 0);
        if (show >= 0 && tick >= 0 && flat >= 0 && echo >= 0) {
            CHECK(strcmp(mcpc_tool_list_ui_uri(list, (size_t)show), "ui://demo/clock.html") == 0);
            CHECK(mcpc_tool_list_ui_visibility(list, (size_t)show) == (MCPC_UI_MODEL | MCPC_UI_APP));
            /* App-only: a host keeps it out of the model's tools. */
            CHECK(mcpc_tool_list_ui_visibility(list, (size_t)tick) == MCPC_UI_APP);
            CHECK(strcmp(mcpc_tool_list_ui_uri(list, (size_t)flat), "ui://demo/listed.html") == 0);
            CHECK(mcpc_tool_list_ui_uri(list, (size_t)echo) == NULL);
            CHECK(mcpc_tool_list_ui_visibility(list, (size_t)echo) == (MCPC_UI_MODEL | MCPC_UI_APP));
        }
        CHECK(mcpc_tool_list_ui_uri(list, 9999) == NULL && mcpc_tool_list_ui_visibility(list, 9999) == 0);
        CHECK(mcpc_tool_list_ui_uri(NULL, 0) == NULL && mcpc_tool_list_ui_visibility(NULL, 0) == 0);
        mcpc_tool_list_free(list);
        /* The declaration reached the server, settings and all. */
        CHECK(file_contains(log_path, "\"io.modelcontextprotocol/ui\":{\"mimeTypes\":[\"text/html;profile=mcp-app\"]}"));
        close_client(c);
    }
}

static void test_view_and_its_policy(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e]);
        if (!c) continue;
        mcpc_ui_view_t *v = NULL;
        CHECK_STATUS(mcpc_client_read_ui_view(c, "ui://demo/clock.html", NULL, &v), MCPC_OK);
        size_t len = 0;
        const char *html = mcpc_ui_view_html(v, &len);
        CHECK(html && strstr(html, "<title>Demo clock</title>") && len == strlen(html));
        CHECK(strcmp(mcpc_ui_view_csp(v),
                     "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com; "
                     "style-src 'self' 'unsafe-inline' https://cdn.example.com; "
                     "img-src 'self' data: https://cdn.example.com; font-src 'self' https://cdn.example.com; "
                     "media-src 'self' data: https://cdn.example.com; connect-src 'self' wss://live.example.com; "
                     "frame-src 'none'; object-src 'none'; base-uri 'self'") == 0);
        CHECK(strcmp(mcpc_ui_view_allow(v), "clipboard-write") == 0);
        CHECK(mcpc_ui_view_domain(v) && strcmp(mcpc_ui_view_domain(v), "demo-clock.example.com") == 0);
        CHECK(mcpc_ui_view_prefers_border(v) == 1);
        CHECK(strstr(mcpc_ui_view_meta_json(v), "\"prefersBorder\":true") != NULL);
        mcpc_ui_view_free(v);

        /* No _meta.ui anywhere: the specification's restrictive default. */
        v = NULL;
        CHECK_STATUS(mcpc_client_read_ui_view(c, "ui://demo/plain.html", NULL, &v), MCPC_OK);
        CHECK(v && strstr(mcpc_ui_view_csp(v), "connect-src 'none'; frame-src 'none'"));
        CHECK(v && strcmp(mcpc_ui_view_allow(v), "") == 0 && mcpc_ui_view_domain(v) == NULL);
        CHECK(v && mcpc_ui_view_prefers_border(v) == -1 && strcmp(mcpc_ui_view_meta_json(v), "null") == 0);
        mcpc_ui_view_free(v);

        /* A blob, decoded; a policy given in the listing only. */
        v = NULL;
        CHECK_STATUS(mcpc_client_read_ui_view(c, "ui://demo/blob.html", NULL, &v), MCPC_OK);
        CHECK(v && strstr(mcpc_ui_view_html(v, NULL), "Demo clock"));
        mcpc_ui_view_free(v);
        v = NULL;
        CHECK_STATUS(mcpc_client_read_ui_view(c, "ui://demo/listed.html", NULL, &v), MCPC_OK);
        CHECK(v && strstr(mcpc_ui_view_csp(v), "frame-src https://player.example.com;"));
        CHECK(v && mcpc_ui_view_prefers_border(v) == 0);
        mcpc_ui_view_free(v);

        CHECK(mcpc_ui_view_html(NULL, &len) == NULL && len == 0 && mcpc_ui_view_csp(NULL) == NULL);
        mcpc_ui_view_free(NULL);
        close_client(c);
    }
}

/* Views a host must not render: each refused, nothing handed out. */
static void test_hostile_views(void) {
    static const struct {
        const char *uri;
        mcpc_status_t status;
        const char *says;
    } cases[] = {
        {"ui://demo/wrong-mime.html", MCPC_ERR_PROTOCOL, "MIME type"},
        {"ui://demo/huge.html", MCPC_ERR_MESSAGE_TOO_LARGE, "over"},
        {"ui://demo/inject.html", MCPC_ERR_PROTOCOL, "connectDomains[0]"},
        {"ui://demo/quote.html", MCPC_ERR_PROTOCOL, "resourceDomains[0]"},
        {"ui://demo/missing.html", MCPC_ERR_RPC, "not found"},
        {"https://example.com/view.html", MCPC_ERR_INVALID_ARG, "ui://"},
    };
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e]);
        if (!c) continue;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            mcpc_ui_view_t *v = NULL;
            CHECK_STATUS(mcpc_client_read_ui_view(c, cases[k].uri, NULL, &v), cases[k].status);
            CHECK(v == NULL);
            CHECK(strstr(mcpc_last_error_message(), cases[k].says) != NULL);
        }
        CHECK_STATUS(mcpc_client_read_ui_view(c, NULL, NULL, NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_read_ui_view(NULL, "ui://demo/clock.html", NULL, NULL), MCPC_ERR_INVALID_ARG);
        close_client(c);
    }
}

/* Relays one message; its status, and the reply (malloc'd copy, or NULL). */
static mcpc_status_t relay(mcpc_client_t *c, const char *msg, char **reply) {
    char *out = NULL;
    mcpc_status_t st = mcpc_client_relay_ui(c, msg, NULL, &out);
    *reply = out ? strdup(out) : NULL;
    mcpc_string_free(out);
    return st;
}

/* A view's messages: what it may ask reaches the server and comes back with the
 * view's id; anything else is answered here and never reaches the server. */
static void test_relay(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e]);
        if (!c) continue;
        char *r = NULL;
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"id\":\"v-1\",\"method\":\"tools/call\","
                              "\"params\":{\"name\":\"clock_tick\",\"arguments\":{}}}", &r), MCPC_OK);
        CHECK(r && strstr(r, "\"id\":\"v-1\"") && strstr(r, "\"time\":\"12:01\""));
        free(r);
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\","
                              "\"params\":{\"uri\":\"ui://demo/plain.html\"}}", &r), MCPC_OK);
        CHECK(r && strstr(r, "\"id\":7") && strstr(r, "Demo clock"));
        free(r);
        /* A tool the view may not call, and one of no tool of this server: refused here. */
        static const char *refused_tools[] = {"model_only", "other_server_tool"};
        for (size_t k = 0; k < 2; k++) {
            char msg[256];
            snprintf(msg, sizeof msg, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"%s\"}}", refused_tools[k]);
            CHECK_STATUS(relay(c, msg, &r), MCPC_OK);
            CHECK(r && strstr(r, "\"code\":-32602") && strstr(r, "\"id\":8"));
            free(r);
            char logged_name[64];
            snprintf(logged_name, sizeof logged_name, "\"name\":\"%s\"", refused_tools[k]);
            CHECK(!file_contains(log_path, logged_name));
        }
        /* A method a view may not ask: answered here. */
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"prompts/get\","
                              "\"params\":{\"name\":\"greet\"}}", &r), MCPC_OK);
        CHECK(r && strstr(r, "\"code\":-32601"));
        free(r);
        CHECK(!file_contains(log_path, "\"method\":\"prompts/get\""));
        /* A ui/ method is the host's; notifications/message goes on; other notifications do not. */
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ui/initialize\",\"params\":{}}", &r),
                     MCPC_ERR_NOT_SUPPORTED);
        CHECK(r == NULL);
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\","
                              "\"params\":{\"level\":\"info\",\"data\":\"from the view\"}}", &r), MCPC_OK);
        CHECK(r == NULL);
        CHECK(wait_for_file_text(log_path, "from the view", 5000));
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{}}", &r),
                     MCPC_ERR_NOT_SUPPORTED);
        /* Not one JSON-RPC request or notification. */
        CHECK_STATUS(relay(c, "not json", &r), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(relay(c, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", &r), MCPC_ERR_INVALID_ARG);
        CHECK(strstr(mcpc_last_error_message(), "batch") != NULL);
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", &r), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(relay(c, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", &r), MCPC_ERR_INVALID_ARG);
        size_t big = (1 << 20) + 64;
        char *huge = malloc(big + 1);
        if (huge) {
            int n = snprintf(huge, big, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"");
            memset(huge + n, 'a', big - (size_t)n - 3);
            memcpy(huge + big - 3, "\"}}", 4);
            CHECK_STATUS(relay(c, huge, &r), MCPC_ERR_INVALID_ARG);
            CHECK(strstr(mcpc_last_error_message(), "over") != NULL);
            free(huge);
        }
        CHECK_STATUS(mcpc_client_relay_ui(c, NULL, NULL, NULL), MCPC_ERR_INVALID_ARG);
        close_client(c);
    }
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_declared_and_tools_views);
    RUN(test_view_and_its_policy);
    RUN(test_hostile_views);
    RUN(test_relay);
    unlink(log_path);
    return harness_finish();
}
