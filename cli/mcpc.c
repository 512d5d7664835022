/*
 * mcpc.c - the `mcpc` command-line client for Model Context Protocol servers:
 * main, and the run from the first mcpc call to the last.
 *
 * mcpc is two things at once:
 *
 *  1. A tool. `mcpc` starts (or reaches) an MCP server, then lists its tools,
 *     calls one, reads its resources and prompts, or shows its initialize result.
 *     stdout carries exactly one JSON document and a newline, so it can be piped
 *     into jq and friends; everything else goes to stderr, and the exit status
 *     says what happened (the EXITS table in options.c; `mcpc --help`, mcpc.1).
 *
 *  2. The first example of the libmcpc C API (include/mcpc.h), kept small on
 *     purpose, one file per job:
 *       - options.c, parse.c: the command line, from one table of options that
 *         also makes --help and the man page (help.c);
 *       - here: options (mcpc_options_new / _set_* / _free; connect copies
 *         them), connecting over stdio with an argv array (no shell involved) or
 *         HTTP, and OAuth (mcpc_oauth_t: the login in login.c, the credential
 *         store in store.c); per-call settings (mcpc_call_opts_init, then set
 *         only what you need), results (owned `char *` versus borrowed
 *         `const char *`);
 *       - output.c: errors, a status plus mcpc_last_error_message(), read on the
 *         calling thread before the next mcpc call;
 *       - and Ctrl-C done right. SIGINT/SIGTERM are blocked before the library
 *         starts any thread and waited for on a thread of the platform layer's
 *         (platform.h), which triggers an mcpc_cancel_t. No mcpc function is ever
 *         called from a signal handler (there are none). On Windows a console
 *         control handler does the same (platform_win.c);
 *       - and everywhere: freeing everything on every path.
 *
 * Build: `make cli` (the files are the Makefile's CLI_SRC).
 */

#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "assertion.h"
#include "cli.h"
#include "config.h"
#include "elicit.h"
#include "login.h"
#include "options.h"
#include "platform.h"
#include "store.h"

/* The library's default timeout (mcpc_options_new), which also bounds a login. */
#define DEFAULT_TIMEOUT_MS 60000

/* The roots result for the directories, as absolute file:// URIs (percent-encoded)
 * named by their last component (JSON-escaped). NULL when out of memory or a
 * directory has no absolute path. */
static char *roots_json(const char *const *dirs, size_t n)
{
    struct buf b = {0};
    bool ok = buf_add(&b, "{\"roots\":[", 10);
    for (size_t i = 0; ok && i < n; i++) {
        char *abs = plat_abs_dir(dirs[i]);
        if (abs == NULL) {
            ok = false;
            break;
        }
        ok = buf_add(&b, i ? ",{\"uri\":\"file://" : "{\"uri\":\"file://", i ? 16 : 15);
        for (const unsigned char *c = (const unsigned char *)abs; ok && *c; c++) {
            char esc[4];
            if (isalnum(*c) || strchr(PLAT_URI_PATH_SAFE, *c)) {
                ok = buf_add(&b, (const char *)c, 1);
            } else {
                snprintf(esc, sizeof esc, "%%%02X", *c);
                ok = buf_add(&b, esc, 3);
            }
        }
        const char *name = strrchr(abs, '/');
        name = name && name[1] ? name + 1 : abs;
        ok = ok && buf_add(&b, "\",\"name\":", 9) && buf_add_json_string(&b, name);
        ok = ok && buf_add(&b, "}", 1);
        free(abs);
    }
    if (ok && buf_add(&b, "]}", 2))
        return b.p;
    free(b.p);
    return NULL;
}

static void on_roots(void *userdata, mcpc_input_t *input)
{
    if (mcpc_input_complete(input, userdata) != MCPC_OK)
        fprintf(stderr, "mcpc: roots: %s\n", mcpc_last_error_message());
    mcpc_input_free(input);
}

static void free_roots(void *userdata) { free(userdata); }

/*
 * Adds the OAuth settings of --oauth to `opts`. The store (if any) goes to the
 * settings: *store is NULL afterwards. Returns -1 to go on, or an exit status.
 */
static int add_oauth(const struct config *cfg, struct store **store, mcpc_options_t *opts)
{
    mcpc_oauth_t *oauth = mcpc_oauth_new();
    if (oauth == NULL) {
        fputs("mcpc: cannot create the OAuth settings\n", stderr);
        return EXIT_ERROR;
    }
    mcpc_status_t st = MCPC_OK;
    if (cfg->client_id != NULL)
        st = mcpc_oauth_set_client(oauth, cfg->client_id, cfg->client_secret);
    if (st == MCPC_OK && cfg->scope != NULL)
        st = mcpc_oauth_set_scope(oauth, cfg->scope);
    if (st == MCPC_OK && cfg->client_key_pem != NULL)
        st = mcpc_oauth_set_client_key(oauth, cfg->client_key_pem);
    if (st == MCPC_OK && cfg->client_credentials)
        st = mcpc_oauth_set_grant(oauth, MCPC_OAUTH_CLIENT_CREDENTIALS);
    bool assertion = cfg->assertion_argv.argc > 0;
    if (st == MCPC_OK && assertion)
        st = mcpc_oauth_set_grant(oauth, MCPC_OAUTH_JWT_BEARER);
    if (st == MCPC_OK && assertion) {
        /* Half the run's timeout: what is left is for using the assertion, so a
         * hanging command ends as no assertion rather than as a timeout. */
        struct assertion_command *c = assertion_command_new(cfg->id_token_cmd ? "--id-token-command" : "--assertion-command",
                                                  cfg->assertion_argv.argv, cfg->assertion_argv.argc,
                                                  (cfg->timeout_ms > 0 ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS) / 2);
        if (c == NULL) {
            fputs("mcpc: out of memory\n", stderr);
            mcpc_oauth_free(oauth);
            return EXIT_ERROR;
        }
        st = assertion_attach(c, oauth);
    }
    if (st == MCPC_OK && cfg->idp_token_endpoint != NULL)
        st = mcpc_oauth_set_identity_provider(oauth, cfg->idp_token_endpoint, cfg->idp_client_id);
    if (st == MCPC_OK && cfg->no_dpop)
        st = mcpc_oauth_set_dpop(oauth, 0);
    if (st == MCPC_OK && cfg->headless)
        st = mcpc_oauth_set_headless(oauth, 1);
    if (st == MCPC_OK && *store != NULL) {
        st = store_attach(*store, oauth);
        *store = NULL;
    }
    /* The listener comes first: the redirect URI names its port. A headless run
     * or a grant with no user never logs in, so needs none. */
    if (st == MCPC_OK && !cfg->client_credentials && !assertion && !cfg->headless) {
        const char *why = NULL;
        struct login *l = login_new(cfg->timeout_ms > 0 ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS,
                                    !cfg->no_browser, &why);
        if (l == NULL) {
            fprintf(stderr, "mcpc: cannot listen on 127.0.0.1 for the login: %s\n", why);
            mcpc_oauth_free(oauth);
            return EXIT_ERROR;
        }
        st = login_attach(l, oauth);
    }
    if (st == MCPC_OK)
        st = mcpc_options_set_oauth(opts, oauth); /* copies the settings */
    mcpc_oauth_free(oauth);
    if (st != MCPC_OK) {
        report_status(st);
        return exit_code_for(st);
    }
    return -1;
}

/* --log-level: each server log message to stderr, on one line of its own, control
 * characters escaped (the text is the server's). */
static void on_server_log(void *userdata, const char *level, const char *logger, const char *data)
{
    (void)userdata;
    fputs("mcpc: server log ", stderr);
    put_sanitized(stderr, level);
    if (logger != NULL) {
        fputc(' ', stderr);
        put_sanitized(stderr, logger);
    }
    fputs(": ", stderr);
    put_sanitized(stderr, data);
    fputc('\n', stderr);
}

/* --proxy, --noproxy and --proxy-user into the options. */
static mcpc_status_t set_proxy(const struct config *cfg, mcpc_options_t *opts)
{
    mcpc_status_t st = MCPC_OK;
    if (cfg->proxy != NULL)
        st = mcpc_options_set_proxy(opts, cfg->proxy);
    if (st == MCPC_OK && cfg->noproxy != NULL)
        st = mcpc_options_set_no_proxy(opts, cfg->noproxy);
    if (st == MCPC_OK && cfg->proxy_user != NULL) {
        const char *colon = strchr(cfg->proxy_user, ':');
        size_t n = (size_t)(colon - cfg->proxy_user);
        char *user = malloc(n + 1);
        if (user == NULL)
            return MCPC_ERR_INVALID_ARG;
        memcpy(user, cfg->proxy_user, n);
        user[n] = '\0';
        st = mcpc_options_set_proxy_credentials(opts, user, colon + 1);
        free(user);
    }
    return st;
}

/* Builds the client options; returns -1 to go on, or an exit status. */
static int make_options(const struct config *cfg, struct store **store, mcpc_options_t **out)
{
    mcpc_status_t st = MCPC_OK;
    mcpc_options_t *opts = mcpc_options_new();
    *out = NULL;
    if (opts == NULL) {
        fputs("mcpc: cannot create client options\n", stderr);
        return EXIT_ERROR;
    }
    if (cfg->timeout_ms > 0)
        st = mcpc_options_set_timeout_ms(opts, cfg->timeout_ms);
    if (st == MCPC_OK && cfg->legacy)
        st = mcpc_options_set_negotiation(opts, MCPC_NEGOTIATE_LEGACY);
    if (st == MCPC_OK && cfg->protocol_version != NULL)
        st = mcpc_options_set_protocol_version(opts, cfg->protocol_version);
    if (st == MCPC_OK && cfg->validate_output)
        st = mcpc_options_set_validate_output(opts, true);
    if (st == MCPC_OK && cfg->elicit != ELICIT_NONE)
        st = mcpc_options_set_elicitation_handler(opts, MCPC_ELICIT_MODE_FORM | MCPC_ELICIT_MODE_URL,
                                                  cfg->elicit == ELICIT_JSON ? elicit_json_line : elicit_by_field,
                                                  NULL, NULL);
    if (st == MCPC_OK && cfg->n_roots > 0) {
        char *roots = roots_json(cfg->roots, cfg->n_roots);
        if (roots == NULL) {
            fputs("mcpc: --roots: cannot resolve the directories\n", stderr);
            mcpc_options_free(opts);
            return EXIT_ERROR;
        }
        st = mcpc_options_set_roots_handler(opts, on_roots, roots, free_roots);
    }
    /* --config's env and cwd for the server it names. */
    for (size_t k = 0; st == MCPC_OK && k < cfg->server.n_env; k++) {
        char *kv = cfg->server.env[k];
        char *eq = strchr(kv, '=');
        *eq = '\0';
        st = mcpc_options_set_env(opts, kv, eq + 1);
        *eq = '=';
    }
    if (st == MCPC_OK && cfg->server.cwd != NULL)
        st = mcpc_options_set_cwd(opts, cfg->server.cwd);
    if (st == MCPC_OK && cfg->log_level != NULL) {
        st = mcpc_options_set_log_level(opts, cfg->log_level);
        if (st == MCPC_OK)
            st = mcpc_options_set_log_callback(opts, on_server_log, NULL, NULL);
    }
    if (st == MCPC_OK)
        st = mcpc_options_set_stderr(opts, cfg->inherit_stderr ? MCPC_STDERR_INHERIT
                                                               : MCPC_STDERR_DISCARD);
    /* HTTP settings (validated while parsing; they only matter with --url). */
    for (size_t k = 0; st == MCPC_OK && cfg->url != NULL && k < cfg->n_headers; k++) {
        const char *h = cfg->headers[k];
        const char *colon = strchr(h, ':');
        size_t name_len = (size_t)(colon - h);
        char *name = malloc(name_len + 1);
        if (name == NULL) {
            fputs("mcpc: out of memory\n", stderr);
            mcpc_options_free(opts);
            return EXIT_ERROR;
        }
        memcpy(name, h, name_len);
        name[name_len] = '\0';
        const char *value = colon + 1;
        while (*value == ' ' || *value == '\t')
            value++;
        st = mcpc_options_add_header(opts, name, value);
        free(name);
    }
    if (st == MCPC_OK && cfg->url != NULL && cfg->bearer != NULL)
        st = mcpc_options_set_bearer_token(opts, cfg->bearer);
    if (st == MCPC_OK && cfg->url != NULL && cfg->cacert != NULL)
        st = mcpc_options_add_ca_file(opts, cfg->cacert);
    if (st == MCPC_OK && cfg->url != NULL && cfg->transport != NULL)
        st = mcpc_options_set_http_transport(opts, cfg->http_transport);
    if (st == MCPC_OK && cfg->url != NULL && cfg->http_version != -1)
        st = mcpc_options_set_http_version(opts, cfg->http_version);
    if (st == MCPC_OK && cfg->url != NULL && (cfg->proxy != NULL || cfg->noproxy != NULL || cfg->proxy_user != NULL)) {
        st = set_proxy(cfg, opts);
        if (st != MCPC_OK) {
            report_status(st);
            mcpc_options_free(opts);
            return EXIT_USAGE; /* the proxy given is not usable: nothing started */
        }
    }
    if (st != MCPC_OK) {
        report_status(st);
        mcpc_options_free(opts);
        return exit_code_for(st);
    }
    if (cfg->oauth) {
        int code = add_oauth(cfg, store, opts);
        if (code >= 0) {
            mcpc_options_free(opts);
            return code;
        }
    }
    *out = opts;
    return -1;
}

/* Connects as configured; returns -1 with *out_client set, or an exit status. */
static int connect_client(const struct config *cfg, const struct words *server_argv,
                          const mcpc_options_t *opts, mcpc_client_t **out_client)
{
    *out_client = NULL;
    mcpc_status_t st;
    if (cfg->url != NULL) {
        /* Checks the URL (https://, or http:// on loopback) before connecting, then
         * runs initialize over Streamable HTTP. Bounded by the timeout. */
        st = mcpc_client_connect_http(cfg->url, opts, out_client);
    } else {
        /* Spawns the server (argv[0] looked up in PATH), runs initialize, and sends
         * notifications/initialized. Cannot be cancelled; bounded by the timeout. */
        st = mcpc_client_connect_stdio((const char *const *)server_argv->argv,
                                       server_argv->argc, opts, out_client);
    }
    if (st != MCPC_OK) {
        report_status(st);
        return exit_code_for(st);
    }
    return -1;
}

/* What the library can check without starting or connecting to anything: the URL
 * policy and the call's arguments. Returns -1 to go on, or EXIT_USAGE. */
static int check_before_start(const struct config *cfg)
{
    mcpc_status_t st = MCPC_OK;
    if (cfg->url != NULL)
        st = mcpc_check_url(cfg->url);
    if (st == MCPC_OK && (cfg->command == CMD_CALL || cfg->command == CMD_PROMPT))
        st = mcpc_check_arguments(cfg->tool_args);
    if (st != MCPC_OK) {
        report_status(st);
        return EXIT_USAGE;
    }
    return -1;
}

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

static int cmd_tools(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts)
{
    mcpc_tool_list_t *list = NULL;
    char *json = NULL;
    /* Follows nextCursor through every page; the timeout covers the whole listing. */
    mcpc_status_t st = mcpc_client_list_tools(client, call_opts, &list);
    if (st == MCPC_OK)
        st = mcpc_tool_list_to_json(list, &json);
    int code = json_or_error(st, json);
    mcpc_string_free(json);
    mcpc_tool_list_free(list);
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
    int code;
    if (st == MCPC_OK || st == MCPC_ERR_TOOL || st == MCPC_ERR_OUTPUT_SCHEMA) {
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
    int code = json_or_error(st, json);
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

/* Runs cfg->command and prints its result; returns the exit status. */
static int run_command(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const struct config *cfg)
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
    case CMD_RESOURCES:
    case CMD_TEMPLATES:
    case CMD_PROMPTS:
    case CMD_PROMPT:
    case CMD_COMPLETE:
        return cmd_json(client, call_opts, cfg);
    case CMD_NONE:
        break;
    }
    return EXIT_USAGE;
}

static const mcpc_cancel_t *_Atomic g_cancel; /* set once the handle exists */

/* Runs on the platform layer's interrupt thread, never in a signal handler. */
static void on_interrupt(void)
{
    /* Any thread may trigger a cancel handle; the call carrying it returns
     * MCPC_ERR_CANCELLED and the server is sent notifications/cancelled. */
    mcpc_cancel_trigger(atomic_load(&g_cancel));
    login_interrupt();
    assertion_interrupt();
}

/* Everything from the first mcpc call on. Returns the exit status. */
static int run(const struct config *cfg, const struct words *server_argv,
               const mcpc_cancel_t *cancel, struct store **store)
{
    mcpc_options_t *opts = NULL;
    mcpc_client_t *client = NULL;
    int code = check_before_start(cfg);
    if (code >= 0)
        return code;
    code = make_options(cfg, store, &opts);
    if (code >= 0)
        return code;

    code = connect_client(cfg, server_argv, opts, &client);
    mcpc_options_free(opts); /* connect copied what it needs */
    int sig = plat_interrupt_received();
    if (sig != 0) {
        /* The signal came during connect, which cannot be cancelled (a login
         * or an assertion command it waits for is: see login_interrupt and
         * assertion_interrupt). */
        fprintf(stderr, "mcpc: %s: interrupted by %s while connecting\n",
                mcpc_status_name(MCPC_ERR_CANCELLED), plat_interrupt_name(sig));
        mcpc_client_free(client);
        return EXIT_CANCELLED;
    }
    if (code >= 0)
        return code;

    mcpc_call_opts_t call_opts;
    mcpc_call_opts_init(&call_opts); /* defaults: the client's timeout, no progress */
    call_opts.cancel = cancel;
    code = run_command(client, &call_opts, cfg);

    /* Closes the connection: stdin EOF to the server, then SIGTERM, then SIGKILL
     * to its process group after the close grace periods; the child is reaped. */
    mcpc_client_free(client);
    return code;
}

int main(int argc, char **argv)
{
    plat_init();
    struct config cfg;
    struct words server_argv = {0};
    int code = parse_args(argc, argv, &cfg);
    if (code < 0 && cfg.stdio_cmd != NULL) {
        const char *err = split_command(cfg.stdio_cmd, &server_argv);
        if (err != NULL)
            code = usage_error("--stdio: %s", err);
    } else if (code < 0 && cfg.server.argv.argc > 0) {
        server_argv = cfg.server.argv; /* moved: the config's command is the server */
        memset(&cfg.server.argv, 0, sizeof cfg.server.argv);
    }
    struct store *store = NULL;
    if (code < 0 && cfg.oauth_store != NULL) {
        const char *why = NULL;
        store = store_open(cfg.oauth_store, &why);
        if (store == NULL)
            code = usage_error("--oauth-store '%s': %s", cfg.oauth_store, why);
    }
    if (code < 0 && (cfg.assertion_cmd != NULL || cfg.id_token_cmd != NULL)) {
        const char *err = split_command(cfg.assertion_cmd ? cfg.assertion_cmd : cfg.id_token_cmd,
                                        &cfg.assertion_argv);
        if (err != NULL)
            code = usage_error("%s: %s", cfg.assertion_cmd ? "--assertion-command" : "--id-token-command", err);
    }
    if (code < 0 && cfg.client_key_file != NULL) {
        const char *why = NULL;
        cfg.client_key_pem = client_key_read(cfg.client_key_file, &why);
        if (cfg.client_key_pem == NULL)
            code = usage_error("--client-key '%s': %s", cfg.client_key_file, why);
    }
    if (code < 0 && cfg.oauth && !login_init()) {
        fprintf(stderr, "mcpc: pipe: %s\n", strerror(errno));
        code = EXIT_ERROR;
    }
    if (code >= 0)
        goto out;

    /* Before the first mcpc call: see plat_interrupts_start. */
    if (!plat_interrupts_start(on_interrupt)) {
        code = EXIT_ERROR;
        goto out;
    }

    mcpc_cancel_t *cancel = mcpc_cancel_new();
    if (cancel == NULL) {
        fputs("mcpc: cannot create a cancel handle\n", stderr);
        plat_interrupts_stop();
        code = EXIT_ERROR;
        goto out;
    }
    atomic_store(&g_cancel, cancel);
    if (plat_interrupt_received() != 0) /* it came before the handle existed */
        mcpc_cancel_trigger(cancel);

    code = run(&cfg, &server_argv, cancel, &store);

    plat_interrupts_stop();
    atomic_store(&g_cancel, NULL);
    mcpc_cancel_free(cancel); /* no thread can trigger it any more */

out:
    store_free(store); /* NULL once the OAuth settings took it */
    words_free(&server_argv);
    words_free(&cfg.assertion_argv);
    client_key_free(cfg.client_key_pem);
    free(cfg.headers);
    free(cfg.roots);
    server_config_free(&cfg.server);
    return code;
}
