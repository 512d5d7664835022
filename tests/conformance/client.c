/* The client under test for the official MCP conformance runner
 * (@modelcontextprotocol/conformance), written against the public C API only.
 *
 * Contract (set by the runner): the server URL is the last argument, the scenario
 * name is in MCP_CONFORMANCE_SCENARIO, and some scenarios hand extra data in
 * MCP_CONFORMANCE_CONTEXT (JSON). The client does the scenario's job over
 * Streamable HTTP with mcpc's defaults (auto negotiation: server/discover, then
 * initialize for older servers) and exits 0 when it could; the runner judges what
 * went over the wire. Every step is printed to stdout (the runner keeps it in
 * stdout.txt with -o).
 *
 * Nothing here works around the library: each scenario does what an application
 * would do with mcpc (connect, list, call, close). */
#define _GNU_SOURCE
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../cli/json_scan.h"
#include "mcpc.h"

static const char *scenario = "";

static void say(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("[%s] ", scenario);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
}

/* Reports a failed mcpc call with its status and message; returns 1. */
static int failed(const char *what, mcpc_status_t st) {
    say("%s: %s: %s (rpc code %lld)", what, mcpc_status_name((int32_t)st), mcpc_last_error_message(),
        (long long)mcpc_last_error_rpc_code());
    return 1;
}

/* GETs `url` (http:// only: the test authorization server is on loopback) and
 * returns its Location header, or NULL. */
static char *get_location(const char *url) {
    char host[256], port[16] = "80";
    const char *p = strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
    if (!p) return NULL;
    size_t hl = strcspn(p, ":/");
    if (hl >= sizeof host) return NULL;
    memcpy(host, p, hl);
    host[hl] = 0;
    p += hl;
    if (*p == ':') {
        size_t pl = strcspn(++p, "/");
        if (pl >= sizeof port) return NULL;
        memcpy(port, p, pl);
        port[pl] = 0;
        p += pl;
    }
    const char *path = *p ? p : "/";
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) return NULL;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) return NULL;
    char req[8192];
    int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n\r\n", path, host, port);
    if (n <= 0 || (size_t)n >= sizeof req || write(fd, req, (size_t)n) != n) {
        close(fd);
        return NULL;
    }
    static char buf[65536];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof buf - 1 && (r = read(fd, buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
    close(fd);
    buf[got] = 0;
    for (char *line = strstr(buf, "\r\n"); line && line[2] != '\r'; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, "location:", 9) == 0) {
            char *v = line + 11;
            while (*v == ' ') v++;
            return strndup(v, strcspn(v, "\r\n"));
        }
    }
    return NULL;
}

/* The host's part of a login, as a test harness plays it: the test authorization
 * server approves at once, so fetch the URL and hand back where it redirects. */
static void on_authorize(void *userdata, mcpc_auth_request_t *req) {
    (void)userdata;
    const char *url = mcpc_auth_request_url(req);
    say("authorize: %s", url);
    char *back = get_location(url);
    if (back) {
        mcpc_auth_request_complete(req, back);
        free(back);
    } else {
        say("no redirect from the authorization server");
        mcpc_auth_request_cancel(req);
    }
}

/* OAuth as an application configures it: a loopback redirect, a client ID metadata
 * document where the server supports one, and what the runner's context names: a
 * pre-registered client, its private key (private_key_jwt), a workload's JWT, or an
 * enterprise identity provider's ID token to exchange. */
static mcpc_oauth_t *oauth_settings(void) {
    mcpc_oauth_t *a = mcpc_oauth_new();
    mcpc_oauth_set_redirect_uri(a, "http://localhost:3000/callback");
    mcpc_oauth_set_client_metadata_url(a, "https://conformance-test.local/client-metadata.json");
    mcpc_oauth_set_authorize_callback(a, on_authorize, NULL, NULL);
    const char *ctx = getenv("MCP_CONFORMANCE_CONTEXT");
    if (!ctx) return a;
    char *id = js_get_string(ctx, "client_id");
    char *secret = js_get_string(ctx, "client_secret");
    char *key = js_get_string(ctx, "private_key_pem");
    char *workload = js_get_string(ctx, "valid_jwt");
    char *id_token = js_get_string(ctx, "idp_id_token");
    char *idp = js_get_string(ctx, "idp_token_endpoint");
    char *idp_client = js_get_string(ctx, "idp_client_id");
    if (id) mcpc_oauth_set_client(a, id, secret);
    if (key) mcpc_oauth_set_client_key(a, key);
    if (strncmp(scenario, "auth/client-credentials", 23) == 0) mcpc_oauth_set_grant(a, MCPC_OAUTH_CLIENT_CREDENTIALS);
    if (workload || id_token) {
        mcpc_oauth_set_grant(a, MCPC_OAUTH_JWT_BEARER);
        mcpc_oauth_set_assertion(a, workload ? workload : id_token);
    }
    if (id_token && idp && idp_client) mcpc_oauth_set_identity_provider(a, idp, idp_client);
    free(id);
    free(secret);
    free(key);
    free(workload);
    free(id_token);
    free(idp);
    free(idp_client);
    return a;
}

/* Accepts every form with nothing filled in, as a user submitting the form as it
 * was offered: mcpc fills in the schema's defaults before it answers. */
static void on_elicit(void *userdata, mcpc_input_t *input) {
    (void)userdata;
    say("elicitation from %s: %s; schema %s", mcpc_input_server(input), mcpc_input_message(input),
        mcpc_input_schema_json(input) ? mcpc_input_schema_json(input) : "(none)");
    mcpc_status_t st = mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, NULL);
    if (st != MCPC_OK) failed("answering the elicitation", st);
    mcpc_input_free(input);
}

static mcpc_status_t connect_to(const char *url, mcpc_client_t **client) {
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_client_info(o, "mcpc-conformance-client", mcpc_version());
    if (strncmp(scenario, "elicitation", 11) == 0) {
        mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, NULL, NULL);
    }
    if (strncmp(scenario, "sep-2640-", 9) == 0) {
        mcpc_options_add_extension(o, "io.modelcontextprotocol/skills", NULL);
    }
    mcpc_options_set_timeout_ms(o, 20000);
    mcpc_oauth_t *a = oauth_settings();
    mcpc_options_set_oauth(o, a);
    mcpc_oauth_free(a);
    mcpc_status_t st = mcpc_client_connect_http(url, o, client);
    mcpc_options_free(o);
    if (st == MCPC_OK) {
        say("connected: protocol %s, negotiated by %s", mcpc_client_protocol_version(*client),
            mcpc_client_negotiated_by(*client));
    }
    return st;
}

static mcpc_status_t list(mcpc_client_t *c, mcpc_tool_list_t **out) {
    mcpc_status_t st = mcpc_client_list_tools(c, NULL, out);
    if (st == MCPC_OK) {
        for (size_t i = 0; i < mcpc_tool_list_len(*out); i++) say("tool: %s", mcpc_tool_list_name(*out, i));
    }
    return st;
}

/* Calls a tool and prints the outcome; MCPC_ERR_TOOL counts as a completed call. */
static mcpc_status_t call(mcpc_client_t *c, const char *name, const char *args, char **text_out) {
    mcpc_result_t *r = NULL;
    mcpc_status_t st = mcpc_client_call_tool(c, name, args, NULL, &r);
    if (st == MCPC_OK || st == MCPC_ERR_TOOL) {
        say("call %s -> %s: %s", name, mcpc_status_name((int32_t)st), mcpc_result_json(r));
        if (text_out) *text_out = strdup(mcpc_result_text(r, NULL));
        mcpc_result_free(r);
        return MCPC_OK;
    }
    failed(name, st);
    return st;
}

/* ---- scenarios ---------------------------------------------------------- */

/* Connect, list the tools, close. Also the fallback for unknown scenarios, and what
 * json-schema-ref-no-deref needs (the client must list, and never fetch a $ref). */
static int sc_list_only(mcpc_client_t *c) {
    mcpc_tool_list_t *l = NULL;
    mcpc_status_t st = list(c, &l);
    mcpc_tool_list_free(l);
    return st == MCPC_OK ? 0 : failed("tools/list", st);
}

/* tools_call: the mock offers add_numbers(a, b); the check passes once it is called. */
static int sc_tools_call(mcpc_client_t *c) {
    if (sc_list_only(c) != 0) return 1;
    char *text = NULL;
    if (call(c, "add_numbers", "{\"a\":5,\"b\":3}", &text) != MCPC_OK) return 1;
    int ok = text && strstr(text, "8") != NULL;
    free(text);
    return ok ? 0 : 1;
}

/* sse-retry: the reply stream of test_reconnection ends after a priming event; the
 * library resumes it with GET and Last-Event-ID after the server's retry delay. */
static int sc_sse_retry(mcpc_client_t *c) {
    char *text = NULL;
    if (call(c, "test_reconnection", "{}", &text) != MCPC_OK) return 1;
    int ok = text && strstr(text, "Reconnection test completed") != NULL;
    free(text);
    return ok ? 0 : 1;
}

/* json-schema-2020-12-preservation: send the focal tool's inputSchema, exactly as
 * listed, back to json_schema_echo as {"schema": ...}. */
static int sc_schema_preservation(mcpc_client_t *c) {
    mcpc_tool_list_t *l = NULL;
    mcpc_status_t st = list(c, &l);
    if (st != MCPC_OK) return failed("tools/list", st);
    int rc = 1;
    const char *focal = NULL;
    bool have_echo = false;
    for (size_t i = 0; i < mcpc_tool_list_len(l); i++) {
        if (strcmp(mcpc_tool_list_name(l, i), "json_schema_echo") == 0) {
            have_echo = true;
        } else if (!focal) {
            focal = mcpc_tool_list_json(l, i);
        }
    }
    const char *schema;
    size_t len;
    if (have_echo && focal && js_get(focal, "inputSchema", &schema, &len)) {
        size_t n = len + 32;
        char *args = malloc(n);
        snprintf(args, n, "{\"schema\":%.*s}", (int)len, schema);
        rc = call(c, "json_schema_echo", args, NULL) == MCPC_OK ? 0 : 1;
        free(args);
    } else {
        say("no json_schema_echo, or no focal tool with an inputSchema");
    }
    mcpc_tool_list_free(l);
    return rc;
}

/* request-metadata: every request must carry _meta (protocol version, client info,
 * capabilities) and the MCP-Protocol-Version header; the first request is refused
 * with -32022 and the client must retry with a supported version. */
static int sc_request_metadata(mcpc_client_t *c) {
    if (sc_list_only(c) != 0) return 1;
    return call(c, "any_tool", "{}", NULL) == MCPC_OK ? 0 : 1;
}

/* http-standard-headers: Mcp-Method on every POST, Mcp-Name on tools/call. */
static int sc_standard_headers(mcpc_client_t *c) {
    mcpc_tool_list_t *l = NULL;
    mcpc_status_t st = list(c, &l);
    if (st != MCPC_OK) return failed("tools/list", st);
    int rc = 0;
    for (size_t i = 0; i < mcpc_tool_list_len(l); i++) {
        if (call(c, mcpc_tool_list_name(l, i), "{}", NULL) != MCPC_OK) rc = 1;
    }
    mcpc_tool_list_free(l);
    return rc;
}

/* http-custom-headers: the runner's context lists the calls to make
 * ({"toolCalls":[{"name":..., "arguments":{...}}, ...]}); mcpc mirrors the
 * x-mcp-header parameters into Mcp-Param-* headers. */
static int sc_custom_headers(mcpc_client_t *c) {
    const char *ctx = getenv("MCP_CONFORMANCE_CONTEXT");
    const char *calls;
    size_t len;
    if (!ctx || !js_get(ctx, "toolCalls", &calls, &len)) {
        say("MCP_CONFORMANCE_CONTEXT has no toolCalls");
        return 1;
    }
    if (sc_list_only(c) != 0) return 1;
    int rc = 0;
    const char *item;
    size_t ilen;
    for (size_t i = 0; js_index(calls, i, &item, &ilen); i++) {
        char *one = js_dup(item, ilen);
        char *name = js_get_string(one, "name");
        char *args = js_get_raw(one, "arguments");
        if (!name || call(c, name, args ? args : "{}", NULL) != MCPC_OK) rc = 1;
        free(name);
        free(args);
        free(one);
    }
    return rc;
}

/* http-invalid-tool-headers: call every tool the library offers. mcpc drops tools
 * whose x-mcp-header annotations are invalid, so only valid_tool may be called. */
static int sc_invalid_tool_headers(mcpc_client_t *c) {
    mcpc_tool_list_t *l = NULL;
    mcpc_status_t st = list(c, &l);
    if (st != MCPC_OK) return failed("tools/list", st);
    int rc = 0;
    for (size_t i = 0; i < mcpc_tool_list_len(l); i++) {
        const char *name = mcpc_tool_list_name(l, i);
        if (call(c, name, strcmp(name, "valid_tool") == 0 ? "{\"region\":\"us-west1\"}" : "{}", NULL) != MCPC_OK)
            rc = 1;
    }
    mcpc_tool_list_free(l);
    return rc;
}

/* sep-2322-client-request-state: input_required rounds. test_mrtr_echo_state runs
 * while test_mrtr_unrelated is called (the state must not leak into it); then the
 * no-state tool and a result without resultType. */
struct pending {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    mcpc_status_t status;
    char *json;
    char *error;
};

static void on_call_done(void *userdata, mcpc_status_t status, mcpc_result_t *result, const char *error) {
    struct pending *p = userdata;
    pthread_mutex_lock(&p->lock);
    p->status = status;
    p->json = result ? strdup(mcpc_result_json(result)) : NULL;
    p->error = strdup(error ? error : "");
    p->done = true;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->lock);
    mcpc_result_free(result);
}

static int sc_request_state(mcpc_client_t *c) {
    if (sc_list_only(c) != 0) return 1;
    int rc = 0;
    struct pending p = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, MCPC_OK, NULL, NULL};
    mcpc_status_t st = mcpc_client_call_tool_async(c, "test_mrtr_echo_state", "{}", NULL, on_call_done, &p, NULL);
    if (st != MCPC_OK) return failed("test_mrtr_echo_state (start)", st);
    if (call(c, "test_mrtr_unrelated", "{}", NULL) != MCPC_OK) rc = 1;
    pthread_mutex_lock(&p.lock);
    while (!p.done) pthread_cond_wait(&p.cond, &p.lock);
    pthread_mutex_unlock(&p.lock);
    say("call test_mrtr_echo_state -> %s: %s %s", mcpc_status_name((int32_t)p.status), p.json ? p.json : "",
        p.error);
    if (p.status != MCPC_OK) rc = 1;
    free(p.json);
    free(p.error);
    if (call(c, "test_mrtr_no_state", "{}", NULL) != MCPC_OK) rc = 1;
    char *text = NULL;
    if (call(c, "test_mrtr_no_result_type", "{}", &text) != MCPC_OK || !text ||
        strcmp(text, "no-result-type-test-ok") != 0)
        rc = 1;
    free(text);
    return rc;
}

/* elicitation-sep1034-client-defaults: the tool asks for a form whose fields all have
 * defaults; the server checks that each default arrived. */
static int sc_elicitation_defaults(mcpc_client_t *c) {
    if (sc_list_only(c) != 0) return 1;
    char *text = NULL;
    if (call(c, "test_client_elicitation_defaults", "{}", &text) != MCPC_OK) return 1;
    int ok = text && strstr(text, "Elicitation completed") != NULL;
    free(text);
    return ok ? 0 : 1;
}

/* sep-2640-client-no-prefetch: what a host does on connect: list the skills, and
 * fetch none of their files. */
static int sc_skills_list(mcpc_client_t *c) {
    char *json = NULL;
    mcpc_status_t st = mcpc_client_list_skills(c, NULL, &json);
    if (st != MCPC_OK) return failed("skills/list", st);
    say("skills: %s", json);
    mcpc_string_free(json);
    return 0;
}

/* Reads one file of a skill through the library's verification; 0 when it passed. */
static int read_verified(mcpc_client_t *c, const char *uri) {
    mcpc_contents_t *contents = NULL;
    mcpc_status_t st = mcpc_client_read_skill_file(c, uri, NULL, &contents);
    mcpc_contents_free(contents);
    if (st != MCPC_OK) return failed(uri, st);
    say("verified %s", uri);
    return 0;
}

/* sep-2640-client-verify-*: load the first skill listed as a host does: its SKILL.md
 * first, and its other files only once SKILL.md passed verification. */
static int sc_skills_load(mcpc_client_t *c) {
    char *json = NULL;
    mcpc_status_t st = mcpc_client_list_skills(c, NULL, &json);
    if (st != MCPC_OK) return failed("skills/list", st);
    const char *entry = NULL, *files = NULL, *file = NULL;
    size_t len = 0;
    char *uri = NULL;
    int rc = 1;
    if (js_index(json, 0, &entry, &len) && (uri = js_get_string(entry, "uri")) != NULL) {
        rc = read_verified(c, uri);
        if (rc == 0 && js_get(entry, "resources", &files, &len)) {
            for (size_t i = 0; rc == 0 && js_index(files, i, &file, &len); i++) {
                char *f = js_get_string(file, "uri");
                if (f && strcmp(f, uri) != 0) rc = read_verified(c, f);
                free(f);
            }
        }
    } else {
        say("no skill listed");
    }
    free(uri);
    mcpc_string_free(json);
    return rc;
}

struct scenario {
    const char *name;
    int (*run)(mcpc_client_t *);
};

static const struct scenario SCENARIOS[] = {
    {"initialize", sc_list_only},
    {"tools_call", sc_tools_call},
    {"sse-retry", sc_sse_retry},
    {"json-schema-2020-12-preservation", sc_schema_preservation},
    {"json-schema-ref-no-deref", sc_list_only},
    {"request-metadata", sc_request_metadata},
    {"http-standard-headers", sc_standard_headers},
    {"http-custom-headers", sc_custom_headers},
    {"http-invalid-tool-headers", sc_invalid_tool_headers},
    {"sep-2322-client-request-state", sc_request_state},
    {"elicitation-sep1034-client-defaults", sc_elicitation_defaults},
    {"sep-2640-client-no-prefetch", sc_skills_list},
    {"sep-2640-client-verify-digest", sc_skills_load},
    {"sep-2640-client-verify-size", sc_skills_load},
    {"sep-2640-client-verify-frontmatter", sc_skills_load},
};

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s URL (scenario in MCP_CONFORMANCE_SCENARIO)\n", argv[0]);
        return 2;
    }
    const char *url = argv[argc - 1];
    const char *s = getenv("MCP_CONFORMANCE_SCENARIO");
    scenario = s ? s : "";
    /* any other scenario: what a tools-only client does; an auth scenario also
     * calls each tool, which may need more scope (step-up) */
    int (*run)(mcpc_client_t *) = strncmp(scenario, "auth/", 5) == 0 ? sc_standard_headers : sc_list_only;
    for (size_t i = 0; i < sizeof SCENARIOS / sizeof SCENARIOS[0]; i++) {
        if (strcmp(SCENARIOS[i].name, scenario) == 0) run = SCENARIOS[i].run;
    }
    say("server %s", url);

    mcpc_client_t *client = NULL;
    mcpc_status_t st = connect_to(url, &client);
    if (st != MCPC_OK) {
        /* auth/resource-mismatch: the metadata is for another resource, so mcpc
         * refuses before any authorization request; that is the expected outcome. */
        if (st == MCPC_ERR_AUTH_SERVER && strcmp(scenario, "auth/resource-mismatch") == 0) {
            say("refused as expected: %s", mcpc_last_error_message());
            return 0;
        }
        return failed("connect", st);
    }
    int rc = run(client);
    mcpc_client_free(client); /* closes: DELETE for a session */
    say("%s", rc == 0 ? "done" : "FAILED");
    return rc;
}
