/*
 * connect.c - from the parsed command line to a connected client: the options
 * (mcpc_options_new, then only the settings given; connect copies them), the
 * server's input (--roots, --elicit, --log-level), OAuth (--oauth) and the
 * connection over stdio (an argv array, no shell) or HTTP.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "assertion.h"
#include "client.h"
#include "elicit.h"
#include "login.h"
#include "platform.h"

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
    /* MCPC_ERR_CLOSED: asked while mcpc closes, there is nobody left to answer; not
     * a fault worth a line. */
    mcpc_status_t st = mcpc_input_complete(input, userdata);
    if (st != MCPC_OK && st != MCPC_ERR_CLOSED)
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

int make_options(const struct config *cfg, struct store **store, mcpc_options_t **out)
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
    /* "ID[=JSON]" and "Name: value" pairs, split at their separator. */
    for (size_t k = 0; st == MCPC_OK && k < cfg->n_extensions + cfg->n_headers; k++) {
        bool is_ext = k < cfg->n_extensions;
        if (!is_ext && cfg->url == NULL)
            break; /* headers only matter with --url */
        const char *pair = is_ext ? cfg->extensions[k] : cfg->headers[k - cfg->n_extensions];
        const char *sep = strchr(pair, is_ext ? '=' : ':');
        size_t key_len = sep ? (size_t)(sep - pair) : strlen(pair);
        char *key = malloc(key_len + 1);
        if (key == NULL) {
            fputs("mcpc: out of memory\n", stderr);
            mcpc_options_free(opts);
            return EXIT_ERROR;
        }
        memcpy(key, pair, key_len);
        key[key_len] = '\0';
        if (is_ext) {
            st = mcpc_options_add_extension(opts, key, sep ? sep + 1 : NULL);
        } else {
            const char *value = sep + 1; /* validated while parsing: a colon is there */
            while (*value == ' ' || *value == '\t')
                value++;
            st = mcpc_options_add_header(opts, key, value);
        }
        free(key);
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

int connect_client(const struct config *cfg, const struct words *server_argv,
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

int check_before_start(const struct config *cfg)
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
