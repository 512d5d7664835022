/*
 * parse.c - the command line into a struct config: each option found in the
 * OPTIONS table and handed to its handler, then the checks that span options,
 * then the command and its arguments from the COMMANDS table.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcpc.h"

#include "config.h"
#include "options.h"

static bool header_is(const char *h, const char *name)
{
    size_t n = strlen(name);
    return strncasecmp(h, name, n) == 0 && h[n] == ':';
}

/* Minimal check now; the HTTP transport will do the real parsing. */
static bool valid_url(const char *u)
{
    const char *rest = NULL;
    if (strncasecmp(u, "http://", 7) == 0)
        rest = u + 7;
    else if (strncasecmp(u, "https://", 8) == 0)
        rest = u + 8;
    return rest != NULL && *rest != '\0' && *rest != '/';
}

/* --config FILE --server NAME: the server's command (with its env and cwd) or URL
 * (with its headers and transport) from the file. -1 to go on, or the usage exit
 * status. */
static int load_server(struct config *cfg)
{
    if (cfg->config_file == NULL && cfg->server_name == NULL)
        return -1;
    if (cfg->config_file == NULL)
        return usage_error("--server needs --config");
    if (cfg->stdio_cmd != NULL || cfg->url != NULL)
        return usage_error("--config cannot be used with --stdio or --url");
    if (cfg->server_name == NULL) {
        cfg->host_mode = true; /* every server of the file: host.c */
        return -1;
    }
    const char *why = NULL;
    if (server_config_load(cfg->config_file, cfg->server_name, &cfg->server, &why) != 0)
        return usage_error("--config '%s', server '%s': %s", cfg->config_file, cfg->server_name, why);
    if (cfg->server.url != NULL) {
        cfg->url = cfg->server.url;
        if (cfg->server.sse && cfg->transport == NULL) {
            cfg->transport = "sse";
            cfg->http_transport = MCPC_HTTP_SSE;
        }
        const char **more = realloc(cfg->headers, (cfg->n_headers + cfg->server.n_headers + 1) * sizeof *more);
        if (more == NULL)
            return usage_error("out of memory");
        cfg->headers = more;
        for (size_t k = 0; k < cfg->server.n_headers; k++) {
            if (!valid_header(cfg->server.headers[k], &why))
                return usage_error("--config '%s', server '%s', header #%zu: %s", cfg->config_file,
                                   cfg->server_name, k + 1, why);
            cfg->headers[cfg->n_headers++] = cfg->server.headers[k];
        }
    }
    return -1;
}

/* The OAuth options go together: -1 to go on, or the usage exit status. */
static int check_oauth(struct config *cfg)
{
    bool any = cfg->client_id || cfg->client_secret || cfg->scope || cfg->oauth_store ||
               cfg->no_browser || cfg->client_credentials || cfg->headless || cfg->client_key_file ||
               cfg->assertion_cmd || cfg->id_token_cmd || cfg->idp_token_endpoint || cfg->idp_client_id ||
               cfg->no_dpop;
    if (!cfg->oauth)
        return any ? usage_error("--client-id, --client-secret, --scope, --oauth-store, --no-browser, "
                                 "--client-credentials, --headless, --client-key, --assertion-command, "
                                 "--id-token-command, --idp-token-endpoint, --idp-client-id and "
                                 "--no-dpop need --oauth")
                   : -1;
    /* With --config alone, the settings are every HTTP server's (over the file's own). */
    if (cfg->url == NULL && !cfg->host_mode)
        return usage_error("--oauth needs --url or --config");
    if (cfg->bearer != NULL)
        return usage_error("--oauth and --bearer cannot be used together");
    for (size_t k = 0; k < cfg->n_headers; k++)
        if (header_is(cfg->headers[k], "Authorization"))
            return usage_error("--oauth and --header \"Authorization: ...\" cannot be used together");
    if (cfg->client_key_file != NULL && cfg->client_id == NULL)
        return usage_error("--client-key needs --client-id");
    if (cfg->client_key_file != NULL && cfg->client_secret != NULL)
        return usage_error("--client-key and --client-secret cannot be used together");
    if (cfg->assertion_cmd != NULL && cfg->id_token_cmd != NULL)
        return usage_error("--assertion-command and --id-token-command cannot be used together");
    if ((cfg->assertion_cmd || cfg->id_token_cmd) && cfg->client_credentials)
        return usage_error("--client-credentials and an assertion command cannot be used together");
    if ((cfg->id_token_cmd != NULL) != (cfg->idp_token_endpoint != NULL && cfg->idp_client_id != NULL) ||
        ((cfg->idp_token_endpoint != NULL) != (cfg->idp_client_id != NULL)))
        return usage_error("--id-token-command, --idp-token-endpoint and --idp-client-id go together");
    if (cfg->idp_token_endpoint != NULL && !valid_url(cfg->idp_token_endpoint))
        return usage_error("--idp-token-endpoint: '%s' is not an http:// or https:// URL",
                           cfg->idp_token_endpoint);
    if (cfg->idp_client_id != NULL && *cfg->idp_client_id == '\0')
        return usage_error("--idp-client-id: the id is empty");
    if (cfg->client_secret == NULL && cfg->client_id != NULL && cfg->client_key_file == NULL) {
        const char *env = getenv("MCPC_CLIENT_SECRET");
        if (env != NULL && *env != '\0')
            cfg->client_secret = env;
    }
    if (cfg->client_secret != NULL && cfg->client_id == NULL)
        return usage_error("a client secret (--client-secret or MCPC_CLIENT_SECRET) needs --client-id");
    if (cfg->client_credentials && cfg->client_secret == NULL && cfg->client_key_file == NULL)
        return usage_error("--client-credentials needs --client-id and a secret "
                           "(--client-secret or MCPC_CLIENT_SECRET) or --client-key");
    return -1;
}

/* The row of `arg` ("--name", "--name=value" or "-x"), or NULL; *eq is set to the
 * "=" of a long option's value, if any. */
static const struct cli_option *find_option(const char *arg, const char **eq)
{
    *eq = NULL;
    if (arg[1] != '-') { /* a short form: exactly "-x" */
        for (size_t k = 0; k < N_OPTIONS; k++)
            if (OPTIONS[k].short_name != 0 && arg[1] == OPTIONS[k].short_name && arg[2] == '\0')
                return &OPTIONS[k];
        return NULL;
    }
    *eq = strchr(arg, '=');
    size_t name_len = *eq ? (size_t)(*eq - arg) : strlen(arg);
    for (size_t k = 0; k < N_OPTIONS; k++)
        if (strlen(OPTIONS[k].name) == name_len && strncmp(OPTIONS[k].name, arg, name_len) == 0)
            return &OPTIONS[k];
    return NULL;
}

/* "tools, call, ... or complete", from the table, into out (`size` bytes). */
static const char *command_names(char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t k = 0; k < N_COMMANDS && len < size; k++)
        len += (size_t)snprintf(out + len, size - len, "%s%s", k == 0 ? "" : k + 1 < N_COMMANDS ? ", " : " or ",
                                COMMANDS[k].name);
    return out;
}

/* The command and its arguments (pos[0..npos), at most 6 kept) into *cfg: -1 to
 * go on, or the usage exit status. */
static int parse_command(const char *const *pos, size_t npos, struct config *cfg)
{
    char names[160];
    if (npos == 0)
        return usage_error("missing command (%s)", command_names(names, sizeof names));
    const struct cli_command *c = NULL;
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (strcmp(pos[0], COMMANDS[k].name) == 0)
            c = &COMMANDS[k];
    if (c == NULL)
        return usage_error("unknown command '%s' (expected %s)", pos[0], command_names(names, sizeof names));
    cfg->command = c->command;
    if (npos - 1 < c->min_args)
        return usage_error("%s", c->missing);
    if (npos - 1 > c->max_args)
        return usage_error("unexpected argument '%s'", pos[c->max_args + 1]);
    if (cfg->command == CMD_COMPLETE) {
        if (strcmp(pos[1], "prompt") == 0)
            cfg->complete_kind = MCPC_COMPLETE_PROMPT;
        else if (strcmp(pos[1], "resource") == 0)
            cfg->complete_kind = MCPC_COMPLETE_RESOURCE;
        else
            return usage_error("complete: '%s' is neither prompt nor resource", pos[1]);
        cfg->tool_name = pos[2];
        cfg->complete_arg = pos[3];
        cfg->complete_value = pos[4];
    } else if (npos > 1) {
        cfg->tool_name = pos[1];
        cfg->tool_args = npos > 2 ? pos[2] : NULL;
    }
    return -1;
}

int parse_args(int argc, char **argv, struct config *cfg)
{
    const char *pos[6]; /* the first positional arguments: COMMAND, at most 4 more, one extra */
    size_t npos = 0;    /* how many positional arguments there are */
    bool only_positional = false;
    int rc;

    memset(cfg, 0, sizeof *cfg);
    cfg->http_version = -1;
    /* Each argument is at most one header, root or extension: argc entries always suffice. */
    cfg->headers = malloc(sizeof *cfg->headers * (size_t)(argc > 0 ? argc : 1));
    cfg->roots = malloc(sizeof *cfg->roots * (size_t)(argc > 0 ? argc : 1));
    cfg->extensions = malloc(sizeof *cfg->extensions * (size_t)(argc > 0 ? argc : 1));
    if (cfg->headers == NULL || cfg->roots == NULL || cfg->extensions == NULL) {
        fputs("mcpc: out of memory\n", stderr);
        return EXIT_ERROR;
    }

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (npos < sizeof pos / sizeof pos[0])
                pos[npos] = arg;
            npos++;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = true;
            continue;
        }
        const char *eq = NULL;
        const struct cli_option *opt = find_option(arg, &eq);
        if (opt == NULL)
            return usage_error("unknown option '%s'", arg);
        const char *value = NULL;
        if (opt->arg != NULL) {
            if (eq != NULL)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return usage_error("option %s requires an argument", opt->name);
        } else if (eq != NULL) {
            return usage_error("option %s does not take an argument", opt->name);
        }
        if ((rc = opt->set(cfg, opt, value)) >= 0)
            return rc;
    }

    /* The file's headers join --header's first, so both are judged together. */
    if ((rc = load_server(cfg)) >= 0)
        return rc;
    if (cfg->bearer != NULL) {
        for (size_t k = 0; k < cfg->n_headers; k++)
            if (header_is(cfg->headers[k], "Authorization"))
                return usage_error("--bearer and an \"Authorization\" header (--header or --config) "
                                   "cannot be used together");
    }
    if ((rc = check_oauth(cfg)) >= 0)
        return rc;
    if ((rc = parse_command(pos, npos, cfg)) >= 0)
        return rc;

    /* The server, or with --config alone every server of the file. */
    if (cfg->host_mode) {
        if (cfg->command != CMD_TOOLS && cfg->command != CMD_CALL && cfg->command != CMD_STATUS)
            return usage_error("--config without --server: the commands are tools, call and status");
        return -1;
    }
    if (cfg->command == CMD_STATUS)
        return usage_error("status: needs --config FILE without --server");
    if ((cfg->stdio_cmd == NULL && cfg->server.argv.argc == 0) == (cfg->url == NULL))
        return usage_error("%s", cfg->url ? "--stdio and --url cannot be used together"
                                          : "one of --stdio, --url or --config is required");
    if (cfg->url != NULL && !valid_url(cfg->url))
        return usage_error("--url: '%s' is not an http:// or https:// URL", cfg->url);
    return -1;
}
