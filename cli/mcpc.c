/*
 * mcpc.c - the `mcpc` command-line client for Model Context Protocol servers.
 *
 * This file is two things at once:
 *
 *  1. A tool. `mcpc` starts (or, later, reaches) an MCP server, then lists its
 *     tools, calls one, reads its resources and prompts, or shows its initialize
 *     result. stdout carries exactly one JSON document and a newline, so it can
 *     be piped into jq and friends;
 *     everything else goes to stderr, and the exit status says what happened.
 *
 *  2. The first example of the libmcpc C API (include/mcpc.h), kept small on
 *     purpose. Read it top to bottom to see:
 *       - options: mcpc_options_new / _set_* / _free (connect copies them);
 *       - connecting over stdio with an argv array (no shell involved);
 *       - per-call settings: mcpc_call_opts_init, then set only what you need;
 *       - results: owned `char *` (mcpc_string_free) versus borrowed `const char *`;
 *       - errors: a status plus mcpc_last_error_message(), read on the calling
 *         thread before the next mcpc call;
 *       - Ctrl-C done right: block SIGINT/SIGTERM before the library starts any
 *         thread, wait for them with sigwait() on a thread of our own, and trigger
 *         an mcpc_cancel_t from there. No mcpc function is ever called from a
 *         signal handler (there are no signal handlers at all). On Windows a
 *         console control handler does the same (platform_win.c);
 *       - freeing everything on every path.
 *
 * Build: `make cli` (the files are the Makefile's CLI_SRC).
 *
 * Exit status: 0 success, 1 usage error, 2 the tool returned an error result,
 * 3 transport, protocol, handshake, JSON-RPC or authorization error, 4 timeout,
 * 5 cancelled by SIGINT or SIGTERM (Ctrl-C or Ctrl-Break on Windows), or a login
 * cancelled or denied.
 *
 * With --oauth it also shows the OAuth client (mcpc_oauth_t): the login runs in
 * login.c, the credential store in store.c.
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcpc.h"

#include "assertion.h"
#include "cli.h"
#include "config.h"
#include "elicit.h"
#include "login.h"
#include "platform.h"
#include "store.h"

/* The library's default timeout (mcpc_options_new), which also bounds a login. */
#define DEFAULT_TIMEOUT_MS 60000

static const char USAGE[] =
    "Usage: mcpc [OPTIONS] COMMAND\n"
    "\n"
    "A command-line client for Model Context Protocol (MCP) servers.\n"
    "stdout gets exactly one JSON document and a newline; messages go to stderr.\n"
    "\n"
    "Commands:\n"
    "  tools                   print all tools as one JSON array (all pages)\n"
    "  call NAME [ARGS_JSON]   call tool NAME with the JSON object ARGS_JSON (default:\n"
    "                          no arguments) and print its result JSON\n"
    "  info                    print the initialize result JSON (server info,\n"
    "                          capabilities, protocol version)\n"
    "  request METHOD [PARAMS_JSON]\n"
    "                          send request METHOD with the JSON object PARAMS_JSON\n"
    "                          and print its result JSON\n"
    "  resources               print all resources as one JSON array (all pages)\n"
    "  templates               print all resource templates as one JSON array\n"
    "  read URI                read resource URI and print its result JSON\n"
    "  prompts                 print all prompts as one JSON array (all pages)\n"
    "  prompt NAME [ARGS_JSON] get prompt NAME with the JSON object ARGS_JSON (string\n"
    "                          values) and print its result JSON\n"
    "  complete prompt|resource REF ARGUMENT VALUE\n"
    "                          ask for completions of ARGUMENT (typed so far: VALUE)\n"
    "                          of prompt REF or resource template REF\n"
    "\n"
    "Server (exactly one is required):\n"
    "  --stdio \"COMMAND [ARGS...]\"\n"
    "                          start COMMAND and talk to it over its stdin/stdout; the\n"
    "                          string is split into words like a shell does ('...',\n"
    "                          \"...\", backslash), but no shell runs: no variables,\n"
    "                          globs, pipes or redirections\n"
    "  --url URL               connect over Streamable HTTP (https://, or http:// on loopback)\n"
    "\n"
    "Options:\n"
    "  --timeout MS            timeout in milliseconds for connecting, for the whole\n"
    "                          tool listing and for the call (default 60000)\n"
    "  --protocol-version V    use protocol version V only (2026-07-28, 2025-11-25,\n"
    "                          2025-06-18, 2025-03-26, 2024-11-05)\n"
    "  --legacy                negotiate with initialize only (2024-11-05 to 2025-11-25);\n"
    "                          default: probe with server/discover, use 2026-07-28 when\n"
    "                          the server speaks it, else initialize\n"
    "  --stderr                let the server's stderr through (default: discarded)\n"
    "  --header \"Name: value\"  extra HTTP request header (repeatable; --url only)\n"
    "  --bearer TOKEN          send \"Authorization: Bearer TOKEN\" (--url only)\n"
    "  --cacert FILE           trust the CA certificates in FILE (--url only)\n"
    "  --transport MODE        auto (default): Streamable HTTP, then the HTTP+SSE\n"
    "                          transport of 2024-11-05 when the server refuses the\n"
    "                          POST (400, 404, 405); streamable; or sse (URL: the\n"
    "                          event stream's, such as https://host/sse) (--url only)\n"
    "  --http1.1               speak HTTP/1.1 only (default: HTTP/2 for https:// when\n"
    "                          the server offers it by ALPN, else HTTP/1.1) (--url only)\n"
    "  --http2-prior-knowledge speak HTTP/2 from the first byte: h2c for http://, only\n"
    "                          h2 offered over TLS (--url only)\n"
    "  --log-level LEVEL       ask the server for its log at LEVEL and above (debug,\n"
    "                          info, notice, warning, error, critical, alert,\n"
    "                          emergency) and print it to stderr\n"
    "  --proxy URL             reach the server through this HTTP proxy (http:// or\n"
    "                          https://; \"none\": no proxy); default: https_proxy,\n"
    "                          http_proxy, all_proxy and no_proxy as curl reads them,\n"
    "                          never for loopback (--url only)\n"
    "  --noproxy LIST          hosts reached directly: names (with subdomains), IP\n"
    "                          addresses, CIDR ranges, or * (replaces no_proxy)\n"
    "  --proxy-user USER:PASSWORD  Basic credentials for the proxy\n"
    "  --roots DIR             offer directory DIR to the server as a root (repeatable)\n"
    "  --elicit                answer the server's elicitation on this terminal\n"
    "                          (prompts on stderr, answers from stdin): its message,\n"
    "                          then each field of a form in turn, with its title,\n"
    "                          description, choices (answer a number or a value;\n"
    "                          several comma-separated, or !none), default and whether\n"
    "                          it is required; a boolean takes y or n. An empty answer\n"
    "                          takes the default or leaves an optional field out; a\n"
    "                          value that does not fit is asked again; !decline\n"
    "                          declines, !cancel or the end of input cancels, and !!\n"
    "                          starts a text beginning with !. A URL is shown with\n"
    "                          the server's name and consent asked (y/N); mcpc never\n"
    "                          opens it. Without it, elicitation is not offered\n"
    "  --validate-output       check a call's structuredContent against its tool's\n"
    "                          outputSchema (the tools are listed first); a result\n"
    "                          that does not fit is printed, and mcpc exits 3\n"
    "  --elicit-json           like --elicit, for scripts: a form is answered with one\n"
    "                          JSON object on one line (empty: the defaults;\n"
    "                          !decline; !cancel), asked again when it does not fit\n"
    "\n"
    "Authorization (OAuth 2.1, --url only):\n"
    "  --oauth                 authorize with OAuth when the server asks for it: a\n"
    "                          browser login, its redirect received on 127.0.0.1\n"
    "  --client-id ID          a pre-registered client id (default: register the\n"
    "                          client where the authorization server allows it)\n"
    "  --client-secret SECRET  its secret (or set MCPC_CLIENT_SECRET, which keeps it\n"
    "                          off the command line)\n"
    "  --scope SCOPE           the scope to ask for when the server names none\n"
    "  --oauth-store FILE      keep tokens and registrations in FILE (JSON, mode 0600),\n"
    "                          so the next run needs no login\n"
    "  --no-browser            only print the login URL; do not run xdg-open\n"
    "  --client-credentials    no user: the client credentials grant (needs\n"
    "                          --client-id and a secret or --client-key)\n"
    "  --headless              never log in: stored or refreshed credentials only\n"
    "  --client-key FILE       authenticate the client (--client-id) with this\n"
    "                          PKCS#8 P-256 private key (PEM) instead of a secret\n"
    "                          (private_key_jwt)\n"
    "  --assertion-command \"COMMAND [ARGS...]\"\n"
    "                          no user: the JWT bearer grant; COMMAND (split like\n"
    "                          --stdio, no shell) runs each time a fresh assertion is\n"
    "                          needed and prints it (a workload identity token); one\n"
    "                          that fails or runs longer than half of --timeout\n"
    "                          gives none (exit 3)\n"
    "  --id-token-command \"COMMAND [ARGS...]\"\n"
    "                          like --assertion-command, but COMMAND prints an ID token\n"
    "                          of the enterprise identity provider, which is exchanged\n"
    "                          there for an ID-JAG first; needs both of:\n"
    "  --idp-token-endpoint URL  the identity provider's token endpoint\n"
    "  --idp-client-id ID      this client's id at the identity provider\n"
    "  --no-dpop               never bind tokens to a key with DPoP (default: DPoP\n"
    "                          when the authorization server offers ES256)\n"
    "\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the CLI's and the library's versions and exit\n"
    "  --config FILE --server NAME\n"
    "                          the server NAME of an MCP hosts' JSON configuration\n"
    "                          (\"mcpServers\": command, args, env, cwd; or url,\n"
    "                          headers, type \"sse\"), instead of --stdio or --url\n"
    "Options may also be written --name=value, and may follow the command;\n"
    "\"--\" ends the options.\n"
    "\n"
    "Exit status:\n"
    "  0 success            1 usage error         2 the tool returned an error result\n"
    "  3 transport, protocol, handshake, JSON-RPC or authorization error (also a\n"
    "    login that is needed but not allowed: --headless; an assertion command\n"
    "    that gives none; with --validate-output, a result that does not fit its\n"
    "    tool's outputSchema, printed all the same)\n"
    "  4 timeout            5 cancelled (" PLAT_INTERRUPTS "; a login cancelled or denied)\n";

/* ------------------------------------------------------------------------- */
/* Command line                                                               */
/* ------------------------------------------------------------------------- */

enum command {
    CMD_NONE,
    CMD_TOOLS,
    CMD_CALL,
    CMD_INFO,
    CMD_REQUEST,
    CMD_RESOURCES,
    CMD_TEMPLATES,
    CMD_READ,
    CMD_PROMPTS,
    CMD_PROMPT,
    CMD_COMPLETE,
};

/* The commands: name, positional arguments (least, most), what is missing. */
static const struct {
    const char *name;
    enum command command;
    size_t min_args, max_args;
    const char *missing;
} COMMANDS[] = {
    {"tools", CMD_TOOLS, 0, 0, NULL},
    {"info", CMD_INFO, 0, 0, NULL},
    {"call", CMD_CALL, 1, 2, "call: missing tool NAME"},
    {"request", CMD_REQUEST, 1, 2, "request: missing METHOD"},
    {"resources", CMD_RESOURCES, 0, 0, NULL},
    {"templates", CMD_TEMPLATES, 0, 0, NULL},
    {"read", CMD_READ, 1, 1, "read: missing URI"},
    {"prompts", CMD_PROMPTS, 0, 0, NULL},
    {"prompt", CMD_PROMPT, 1, 2, "prompt: missing NAME"},
    {"complete", CMD_COMPLETE, 4, 4, "complete: expected prompt|resource REF ARGUMENT VALUE"},
};
#define COMMAND_NAMES "tools, call, info, request, resources, templates, read, prompts, prompt or complete"

struct config {
    /* Server: exactly one of these. */
    const char *stdio_cmd;
    const char *url;
    /* HTTP-only settings, validated now, used once --url is wired. */
    const char **headers; /* "Name: value", n_headers of them; the array is malloc'd */
    size_t n_headers;
    const char *bearer;
    const char *cacert;
    const char *proxy;      /* --proxy: a URL, or "none" */
    const char *noproxy;    /* --noproxy: curl's NO_PROXY list */
    const char *proxy_user; /* --proxy-user USER:PASSWORD */
    const char *transport;  /* --transport auto|streamable|sse */
    const char *log_level;  /* --log-level: the server's log to stderr */
    /* --config FILE --server NAME: the server from a hosts' configuration file. */
    const char *config_file;
    const char *server_name;
    struct server_config server; /* what the file says; its url becomes `url` */
    int32_t http_transport; /* its MCPC_HTTP_* */
    int32_t http_version;   /* --http1.1, --http2-prior-knowledge: MCPC_HTTP_VERSION_*; -1: not given */
    /* OAuth (--oauth); the secret may come from MCPC_CLIENT_SECRET. */
    bool oauth;
    const char *client_id;
    const char *client_secret;
    const char *scope;
    const char *oauth_store;
    bool no_browser;
    bool client_credentials;
    bool headless;
    const char *client_key_file;
    char *client_key_pem; /* its contents, read and checked in main */
    const char *assertion_cmd;
    const char *id_token_cmd;
    struct words assertion_argv; /* the one of the two given, split in main */
    const char *idp_token_endpoint;
    const char *idp_client_id;
    bool no_dpop;
    /* Client settings. */
    int64_t timeout_ms; /* 0: the library default */
    const char *protocol_version;
    bool legacy;
    bool inherit_stderr;
    bool validate_output;
    /* Input for the server. */
    const char **roots; /* directories, n_roots of them; the array is malloc'd */
    size_t n_roots;
    enum { ELICIT_NONE, ELICIT_FIELDS, ELICIT_JSON } elicit;
    /* What to do. */
    enum command command;
    const char *tool_name;
    const char *tool_args; /* NULL: no arguments */
    /* complete: the reference kind (MCPC_COMPLETE_*), the argument and its value;
     * tool_name holds the reference. */
    int32_t complete_kind;
    const char *complete_arg;
    const char *complete_value;
};

/* Parses a positive decimal integer that fits int64_t. */
static bool parse_positive_ms(const char *s, int64_t *out)
{
    int64_t v = 0;
    if (*s == '\0')
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        int d = *s - '0';
        if (v > (INT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (v <= 0)
        return false;
    *out = v;
    return true;
}

/* RFC 9110 token characters (header field names). */
static bool is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return true;
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* "Name: value": a token name, a colon, a value without control characters. */
static bool valid_header(const char *h, const char **why)
{
    const unsigned char *p = (const unsigned char *)h;
    if (!is_tchar(*p)) {
        *why = *p == ':' ? "empty header name" : "header must be \"Name: value\"";
        return false;
    }
    while (is_tchar(*p))
        p++;
    if (*p != ':') {
        *why = "header must be \"Name: value\" (bad character in the name, or no colon)";
        return false;
    }
    for (p++; *p; p++) {
        if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
            *why = "control character in the header value";
            return false;
        }
    }
    return true;
}

static bool header_is(const char *h, const char *name)
{
    size_t n = strlen(name);
    return strncasecmp(h, name, n) == 0 && h[n] == ':';
}

/* A bearer token goes into a header value: visible ASCII only, not empty. */
static bool valid_bearer(const char *t)
{
    if (*t == '\0')
        return false;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++)
        if (*p <= 0x20 || *p >= 0x7f)
            return false;
    return true;
}

/* The CA file must be something we can open for reading, and not a directory. */
static bool check_cacert(const char *path, const char **why)
{
    /* O_NONBLOCK: opening a FIFO that has no writer must not hang. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        *why = strerror(errno);
        return false;
    }
    struct stat st;
    bool ok = true;
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
        ok = false;
    } else if (S_ISDIR(st.st_mode)) {
        *why = "is a directory";
        ok = false;
    }
    close(fd);
    return ok;
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

/* The options; those with has_value take one (as the next argument or after "="). */
enum opt_id {
    OPT_STDIO, OPT_URL, OPT_TIMEOUT, OPT_HEADER, OPT_BEARER, OPT_CACERT,
    OPT_PROTOCOL_VERSION, OPT_LEGACY, OPT_STDERR, OPT_ROOTS, OPT_ELICIT, OPT_ELICIT_JSON, OPT_VALIDATE_OUTPUT, OPT_HELP,
    OPT_OAUTH, OPT_CLIENT_ID, OPT_CLIENT_SECRET, OPT_SCOPE, OPT_OAUTH_STORE,
    OPT_NO_BROWSER, OPT_CLIENT_CREDENTIALS, OPT_HEADLESS, OPT_CLIENT_KEY, OPT_ASSERTION_COMMAND,
    OPT_ID_TOKEN_COMMAND, OPT_IDP_TOKEN_ENDPOINT, OPT_IDP_CLIENT_ID, OPT_NO_DPOP, OPT_PROXY, OPT_NOPROXY,
    OPT_PROXY_USER, OPT_TRANSPORT, OPT_HTTP11, OPT_HTTP2_PK, OPT_LOG_LEVEL, OPT_VERSION, OPT_CONFIG, OPT_SERVER, OPT_UNKNOWN
};

static const struct {
    const char *name;
    enum opt_id id;
    bool has_value;
} OPTIONS[] = {
    {"--stdio", OPT_STDIO, true},
    {"--url", OPT_URL, true},
    {"--timeout", OPT_TIMEOUT, true},
    {"--header", OPT_HEADER, true},
    {"--bearer", OPT_BEARER, true},
    {"--cacert", OPT_CACERT, true},
    {"--protocol-version", OPT_PROTOCOL_VERSION, true},
    {"--legacy", OPT_LEGACY, false},
    {"--stderr", OPT_STDERR, false},
    {"--roots", OPT_ROOTS, true},
    {"--elicit", OPT_ELICIT, false},
    {"--elicit-json", OPT_ELICIT_JSON, false},
    {"--validate-output", OPT_VALIDATE_OUTPUT, false},
    {"--help", OPT_HELP, false},
    {"-h", OPT_HELP, false},
    {"--version", OPT_VERSION, false},
    {"--config", OPT_CONFIG, true},
    {"--server", OPT_SERVER, true},
    {"-V", OPT_VERSION, false},
    {"--oauth", OPT_OAUTH, false},
    {"--client-id", OPT_CLIENT_ID, true},
    {"--client-secret", OPT_CLIENT_SECRET, true},
    {"--scope", OPT_SCOPE, true},
    {"--oauth-store", OPT_OAUTH_STORE, true},
    {"--no-browser", OPT_NO_BROWSER, false},
    {"--client-credentials", OPT_CLIENT_CREDENTIALS, false},
    {"--headless", OPT_HEADLESS, false},
    {"--client-key", OPT_CLIENT_KEY, true},
    {"--assertion-command", OPT_ASSERTION_COMMAND, true},
    {"--id-token-command", OPT_ID_TOKEN_COMMAND, true},
    {"--idp-token-endpoint", OPT_IDP_TOKEN_ENDPOINT, true},
    {"--idp-client-id", OPT_IDP_CLIENT_ID, true},
    {"--no-dpop", OPT_NO_DPOP, false},
    {"--proxy", OPT_PROXY, true},
    {"--noproxy", OPT_NOPROXY, true},
    {"--proxy-user", OPT_PROXY_USER, true},
    {"--transport", OPT_TRANSPORT, true},
    {"--http1.1", OPT_HTTP11, false},
    {"--http2-prior-knowledge", OPT_HTTP2_PK, false},
    {"--log-level", OPT_LOG_LEVEL, true},
};

/* --config FILE --server NAME: the server's command (with its env and cwd) or URL
 * (with its headers and transport) from the file. -1 to go on, or the usage exit
 * status. */
static int load_server(struct config *cfg)
{
    if (cfg->config_file == NULL && cfg->server_name == NULL)
        return -1;
    if (cfg->config_file == NULL || cfg->server_name == NULL)
        return usage_error("--config and --server go together");
    if (cfg->stdio_cmd != NULL || cfg->url != NULL)
        return usage_error("--config cannot be used with --stdio or --url");
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
    if (cfg->url == NULL)
        return usage_error("--oauth needs --url");
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

/* Sets a single-valued option once; giving it twice is a usage error. */
static int set_once(const char **slot, const char *value, const char *name)
{
    if (*slot != NULL)
        return usage_error("%s given more than once", name);
    *slot = value;
    return -1;
}

/*
 * Parses the command line into *cfg. Returns -1 to go on, or an exit status:
 * EXIT_OK after printing --help, EXIT_USAGE after printing a usage error.
 * cfg->headers is allocated here; the caller frees it on every path.
 */
static int parse_args(int argc, char **argv, struct config *cfg)
{
    const char *pos[6]; /* the first positional arguments: COMMAND, at most 4 more, one extra */
    size_t npos = 0;    /* how many positional arguments there are */
    bool only_positional = false;
    const char *timeout_text = NULL;
    int rc;

    memset(cfg, 0, sizeof *cfg);
    cfg->http_version = -1;
    cfg->headers = malloc(sizeof *cfg->headers * (size_t)(argc > 0 ? argc : 1));
    cfg->roots = malloc(sizeof *cfg->roots * (size_t)(argc > 0 ? argc : 1));
    if (cfg->headers == NULL || cfg->roots == NULL) {
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

        /* Find the option; accept --name=value for options with a value. */
        const char *eq = arg[1] == '-' ? strchr(arg, '=') : NULL;
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        enum opt_id id = OPT_UNKNOWN;
        bool has_value = false;
        const char *opt_name = arg;
        for (size_t k = 0; k < sizeof OPTIONS / sizeof OPTIONS[0]; k++) {
            if (strlen(OPTIONS[k].name) == name_len &&
                strncmp(OPTIONS[k].name, arg, name_len) == 0) {
                id = OPTIONS[k].id;
                has_value = OPTIONS[k].has_value;
                opt_name = OPTIONS[k].name;
                break;
            }
        }
        if (id == OPT_UNKNOWN)
            return usage_error("unknown option '%s'", arg);

        const char *value = NULL;
        if (has_value) {
            if (eq != NULL)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return usage_error("option %s requires an argument", opt_name);
        } else if (eq != NULL) {
            return usage_error("option %s does not take an argument", opt_name);
        }

        switch (id) {
        case OPT_VERSION:
            /* The header this CLI was built with, and the library it runs with. */
            printf("mcpc %s (libmcpc %s)\n", MCPC_VERSION, mcpc_version());
            if (fflush(stdout) == EOF)
                return EXIT_ERROR;
            return EXIT_OK;
        case OPT_HELP:
            fputs(USAGE, stdout);
            if (fflush(stdout) == EOF)
                return EXIT_ERROR;
            return EXIT_OK;
        case OPT_STDIO:
            if ((rc = set_once(&cfg->stdio_cmd, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_URL:
            if ((rc = set_once(&cfg->url, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_TIMEOUT:
            if ((rc = set_once(&timeout_text, value, opt_name)) >= 0)
                return rc;
            if (!parse_positive_ms(value, &cfg->timeout_ms))
                return usage_error("--timeout: '%s' is not a positive integer "
                                   "(milliseconds)", value);
            break;
        case OPT_HEADER: {
            const char *why = NULL;
            if (!valid_header(value, &why)) /* not echoed: it may hold a secret */
                return usage_error("--header #%zu: %s", cfg->n_headers + 1, why);
            cfg->headers[cfg->n_headers++] = value;
            break;
        }
        case OPT_BEARER:
            if ((rc = set_once(&cfg->bearer, value, opt_name)) >= 0)
                return rc;
            if (!valid_bearer(value))
                return usage_error("--bearer: the token must be non-empty "
                                   "visible ASCII without spaces");
            break;
        case OPT_CACERT: {
            const char *why = NULL;
            if ((rc = set_once(&cfg->cacert, value, opt_name)) >= 0)
                return rc;
            if (!check_cacert(value, &why))
                return usage_error("--cacert '%s': %s", value, why);
            break;
        }
        case OPT_PROXY:
            if ((rc = set_once(&cfg->proxy, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_NOPROXY:
            if ((rc = set_once(&cfg->noproxy, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_CONFIG:
            if ((rc = set_once(&cfg->config_file, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_SERVER:
            if ((rc = set_once(&cfg->server_name, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_LOG_LEVEL:
            if ((rc = set_once(&cfg->log_level, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_TRANSPORT:
            if ((rc = set_once(&cfg->transport, value, opt_name)) >= 0)
                return rc;
            if (strcmp(value, "auto") == 0)
                cfg->http_transport = MCPC_HTTP_AUTO;
            else if (strcmp(value, "streamable") == 0)
                cfg->http_transport = MCPC_HTTP_STREAMABLE;
            else if (strcmp(value, "sse") == 0)
                cfg->http_transport = MCPC_HTTP_SSE;
            else
                return usage_error("--transport: '%s' is not auto, streamable or sse", value);
            break;
        case OPT_HTTP11:
        case OPT_HTTP2_PK: {
            int32_t v = id == OPT_HTTP11 ? MCPC_HTTP_VERSION_1_1 : MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE;
            if (cfg->http_version != -1 && cfg->http_version != v)
                return usage_error("--http1.1 and --http2-prior-knowledge exclude each other");
            cfg->http_version = v;
            break;
        }
        case OPT_PROXY_USER:
            if ((rc = set_once(&cfg->proxy_user, value, opt_name)) >= 0)
                return rc;
            if (strchr(value, ':') == NULL) /* not echoed: it holds a secret */
                return usage_error("--proxy-user: expected USER:PASSWORD");
            break;
        case OPT_PROTOCOL_VERSION:
            if ((rc = set_once(&cfg->protocol_version, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_STDERR:
            cfg->inherit_stderr = true;
            break;
        case OPT_ROOTS: {
            struct stat st;
            if (stat(value, &st) != 0 || !S_ISDIR(st.st_mode))
                return usage_error("--roots '%s': not a directory", value);
            cfg->roots[cfg->n_roots++] = value;
            break;
        }
        case OPT_ELICIT:
            cfg->elicit = ELICIT_FIELDS;
            break;
        case OPT_ELICIT_JSON:
            cfg->elicit = ELICIT_JSON;
            break;
        case OPT_VALIDATE_OUTPUT:
            cfg->validate_output = true;
            break;
        case OPT_LEGACY:
            cfg->legacy = true;
            break;
        case OPT_OAUTH:
            cfg->oauth = true;
            break;
        case OPT_CLIENT_ID:
            if ((rc = set_once(&cfg->client_id, value, opt_name)) >= 0)
                return rc;
            if (*value == '\0')
                return usage_error("--client-id: the id is empty");
            break;
        case OPT_CLIENT_SECRET:
            if ((rc = set_once(&cfg->client_secret, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_SCOPE:
            if ((rc = set_once(&cfg->scope, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_OAUTH_STORE:
            if ((rc = set_once(&cfg->oauth_store, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_NO_BROWSER:
            cfg->no_browser = true;
            break;
        case OPT_CLIENT_CREDENTIALS:
            cfg->client_credentials = true;
            break;
        case OPT_HEADLESS:
            cfg->headless = true;
            break;
        case OPT_CLIENT_KEY:
            if ((rc = set_once(&cfg->client_key_file, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_ASSERTION_COMMAND:
            if ((rc = set_once(&cfg->assertion_cmd, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_ID_TOKEN_COMMAND:
            if ((rc = set_once(&cfg->id_token_cmd, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_IDP_TOKEN_ENDPOINT:
            if ((rc = set_once(&cfg->idp_token_endpoint, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_IDP_CLIENT_ID:
            if ((rc = set_once(&cfg->idp_client_id, value, opt_name)) >= 0)
                return rc;
            break;
        case OPT_NO_DPOP:
            cfg->no_dpop = true;
            break;
        case OPT_UNKNOWN:
            break;
        }
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

    /* The command and its arguments. */
    if (npos == 0)
        return usage_error("missing command (" COMMAND_NAMES ")");
    const char *cmd = pos[0];
    size_t which = sizeof COMMANDS / sizeof COMMANDS[0];
    for (size_t k = 0; k < sizeof COMMANDS / sizeof COMMANDS[0]; k++)
        if (strcmp(cmd, COMMANDS[k].name) == 0)
            which = k;
    if (which == sizeof COMMANDS / sizeof COMMANDS[0])
        return usage_error("unknown command '%s' (expected " COMMAND_NAMES ")", cmd);
    cfg->command = COMMANDS[which].command;
    if (npos - 1 < COMMANDS[which].min_args)
        return usage_error("%s", COMMANDS[which].missing);
    if (npos - 1 > COMMANDS[which].max_args)
        return usage_error("unexpected argument '%s'", pos[COMMANDS[which].max_args + 1]);
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

    /* The server. */
    if ((cfg->stdio_cmd == NULL && cfg->server.argv.argc == 0) == (cfg->url == NULL))
        return usage_error("%s", cfg->url ? "--stdio and --url cannot be used together"
                                          : "one of --stdio, --url or --config is required");
    if (cfg->url != NULL && !valid_url(cfg->url))
        return usage_error("--url: '%s' is not an http:// or https:// URL", cfg->url);
    return -1;
}

/* ------------------------------------------------------------------------- */
/* Interrupts (SIGINT/SIGTERM, Ctrl-C/Ctrl-Break) become a cancel: platform.h */
/* ------------------------------------------------------------------------- */

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

/* ------------------------------------------------------------------------- */
/* The commands                                                               */
/* ------------------------------------------------------------------------- */

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

/* ------------------------------------------------------------------------- */
/* Input for the server: --roots and --elicit                                 */
/* ------------------------------------------------------------------------- */

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

/* ------------------------------------------------------------------------- */
/* Connecting and running                                                     */
/* ------------------------------------------------------------------------- */

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

/*
 * What the library can check without starting or connecting to anything: the URL
 * policy and the call's arguments. A failure is a usage error. Returns -1 to go
 * on, or an exit status.
 */
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

    switch (cfg->command) {
    case CMD_INFO:
        code = cmd_info(client);
        break;
    case CMD_TOOLS:
        code = cmd_tools(client, &call_opts);
        break;
    case CMD_CALL:
        code = cmd_call(client, &call_opts, cfg->tool_name, cfg->tool_args, cfg->validate_output);
        break;
    case CMD_REQUEST:
        code = cmd_request(client, &call_opts, cfg->tool_name, cfg->tool_args);
        break;
    case CMD_READ:
        code = cmd_read(client, &call_opts, cfg->tool_name);
        break;
    case CMD_RESOURCES:
    case CMD_TEMPLATES:
    case CMD_PROMPTS:
    case CMD_PROMPT:
    case CMD_COMPLETE:
        code = cmd_json(client, &call_opts, cfg);
        break;
    case CMD_NONE:
        code = EXIT_USAGE;
        break;
    }

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
    if (code >= 0) {
        words_free(&server_argv);
        words_free(&cfg.assertion_argv);
        client_key_free(cfg.client_key_pem);
        free(cfg.headers);
        free(cfg.roots);
        server_config_free(&cfg.server);
        return code;
    }

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
