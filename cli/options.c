/*
 * options.c - every option of mcpc, once: its name, short form, placeholder,
 * section, handler and help text in one row of OPTIONS, which parse.c parses
 * with and help.c prints --help and the man page from. The commands and the exit
 * statuses are tables here too, for the same reason.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcpc.h"

#include "options.h"
#include "platform.h"

/* ---- values ------------------------------------------------------------------ */

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

bool valid_header(const char *h, const char **why)
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

/* ---- handlers: -1 to go on, or an exit status ------------------------------- */

#define FIELD(cfg, opt, type) ((type *)(void *)((char *)(cfg) + (opt)->field))

/* A single-valued option, set once: giving it twice is a usage error. */
static int set_string(struct config *cfg, const struct cli_option *opt, const char *value)
{
    const char **slot = FIELD(cfg, opt, const char *);
    if (*slot != NULL)
        return usage_error("%s given more than once", opt->name);
    *slot = value;
    return -1;
}

static int set_flag(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)value;
    *FIELD(cfg, opt, bool) = true;
    return -1;
}

static int set_timeout(struct config *cfg, const struct cli_option *opt, const char *value)
{
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (!parse_positive_ms(value, &cfg->timeout_ms))
        return usage_error("--timeout: '%s' is not a positive integer (milliseconds)", value);
    return -1;
}

static int set_task_timeout(struct config *cfg, const struct cli_option *opt, const char *value)
{
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (!parse_positive_ms(value, &cfg->task_timeout_ms))
        return usage_error("--task-timeout: '%s' is not a positive integer (milliseconds)", value);
    return -1;
}

static int set_task_mode(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)opt;
    static const char *const names[] = {"allow", "forbid", "prefer", "require"};
    static const int32_t modes[] = {MCPC_TASK_ALLOW, MCPC_TASK_FORBID, MCPC_TASK_PREFER, MCPC_TASK_REQUIRE};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strcmp(value, names[k]) == 0) {
            cfg->task_mode = modes[k];
            return -1;
        }
    return usage_error("--task: '%s' is not one of allow, forbid, prefer, require", value);
}

static int add_header(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)opt;
    const char *why = NULL;
    if (!valid_header(value, &why)) /* not echoed: it may hold a secret */
        return usage_error("--header #%zu: %s", cfg->n_headers + 1, why);
    cfg->headers[cfg->n_headers++] = value;
    return -1;
}

/* The library checks the id and the settings when the client is made. */
static int add_extension(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)opt;
    cfg->extensions[cfg->n_extensions++] = value;
    return -1;
}

static int set_bearer(struct config *cfg, const struct cli_option *opt, const char *value)
{
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (!valid_bearer(value))
        return usage_error("--bearer: the token must be non-empty visible ASCII without spaces");
    return -1;
}

static int set_cacert(struct config *cfg, const struct cli_option *opt, const char *value)
{
    const char *why = NULL;
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (!check_cacert(value, &why))
        return usage_error("--cacert '%s': %s", value, why);
    return -1;
}

static int set_transport(struct config *cfg, const struct cli_option *opt, const char *value)
{
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (strcmp(value, "auto") == 0)
        cfg->http_transport = MCPC_HTTP_AUTO;
    else if (strcmp(value, "streamable") == 0)
        cfg->http_transport = MCPC_HTTP_STREAMABLE;
    else if (strcmp(value, "sse") == 0)
        cfg->http_transport = MCPC_HTTP_SSE;
    else
        return usage_error("--transport: '%s' is not auto, streamable or sse", value);
    return -1;
}

/* --http1.1 and --http2-prior-knowledge: each may repeat, but not both. */
static int set_http_version(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)value;
    if (cfg->http_version != -1 && cfg->http_version != opt->choice)
        return usage_error("--http1.1 and --http2-prior-knowledge exclude each other");
    cfg->http_version = opt->choice;
    return -1;
}

static int set_proxy_user(struct config *cfg, const struct cli_option *opt, const char *value)
{
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (strchr(value, ':') == NULL) /* not echoed: it holds a secret */
        return usage_error("--proxy-user: expected USER:PASSWORD");
    return -1;
}

static int add_root(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)opt;
    struct stat st;
    if (stat(value, &st) != 0 || !S_ISDIR(st.st_mode))
        return usage_error("--roots '%s': not a directory", value);
    cfg->roots[cfg->n_roots++] = value;
    return -1;
}

/* --elicit and --elicit-json: the last one given wins. */
static int set_elicit(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)value;
    cfg->elicit = (enum elicit_mode)opt->choice;
    return -1;
}

static int set_client_id(struct config *cfg, const struct cli_option *opt, const char *value)
{
    int rc = set_string(cfg, opt, value);
    if (rc >= 0)
        return rc;
    if (*value == '\0')
        return usage_error("--client-id: the id is empty");
    return -1;
}

static int show_help(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)cfg;
    (void)opt;
    (void)value;
    return print_help();
}

static int show_man(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)cfg;
    (void)opt;
    (void)value;
    return print_man();
}

/* The header this CLI was built with, and the library it runs with. */
static int show_version(struct config *cfg, const struct cli_option *opt, const char *value)
{
    (void)cfg;
    (void)opt;
    (void)value;
    printf("mcpc %s (libmcpc %s)\n", MCPC_VERSION, mcpc_version());
    return fflush(stdout) == EOF ? EXIT_ERROR : EXIT_OK;
}

/* ---- the tables ---------------------------------------------------------------- */

#define AT(f) offsetof(struct config, f)

const struct cli_option OPTIONS[] = {
    {"--stdio", 0, "\"COMMAND [ARGS...]\"", SEC_SERVER, set_string, AT(stdio_cmd), 0,
     "start COMMAND and talk to it over its stdin/stdout; the string is split into words like "
     "a shell does ('...', \"...\", backslash), but no shell runs: no variables, globs, pipes "
     "or redirections"},
    {"--url", 0, "URL", SEC_SERVER, set_string, AT(url), 0,
     "connect over Streamable HTTP (https://, or http:// on loopback)"},
    {"--config", 0, "FILE", SEC_SERVER, set_string, AT(config_file), 0,
     "an MCP hosts' JSON configuration (\"mcpServers\": command, args, env, cwd; or url, "
     "headers, type \"sse\"): its server --server NAME, instead of --stdio or --url; without "
     "--server, every server of the file (mcpServers, VS Code's servers, Zed's "
     "context_servers, mcp.json) for tools, call QUALIFIED and status (docs/host.md); a "
     "file's ${input:ID} is the environment's MCPC_INPUT_<ID> (upper case, other characters "
     "as _)"},
    {"--server", 0, "NAME", SEC_SERVER, set_string, AT(server_name), 0,
     "the server of --config's file to use"},

    {"--timeout", 0, "MS", SEC_CLIENT, set_timeout, AT(timeout_text), 0,
     "timeout in milliseconds for connecting, for the whole tool listing and for the call "
     "(default 60000)"},
    {"--protocol-version", 0, "V", SEC_CLIENT, set_string, AT(protocol_version), 0,
     "use protocol version V only (2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05)"},
    {"--legacy", 0, NULL, SEC_CLIENT, set_flag, AT(legacy), 0,
     "negotiate with initialize only (2024-11-05 to 2025-11-25); default: probe with "
     "server/discover, use 2026-07-28 when the server speaks it, else initialize"},
    {"--stderr", 0, NULL, SEC_CLIENT, set_flag, AT(inherit_stderr), 0,
     "let the server's stderr through (default: discarded)"},
    {"--extension", 0, "ID[=JSON]", SEC_CLIENT, add_extension, 0, 0,
     "declare the extension ID to the server, with its settings JSON (an object; default {}); "
     "repeatable. info shows the server's under capabilities.extensions"},
    {"--header", 0, "\"Name: value\"", SEC_CLIENT, add_header, 0, 0,
     "extra HTTP request header (repeatable; --url only)"},
    {"--bearer", 0, "TOKEN", SEC_CLIENT, set_bearer, AT(bearer), 0,
     "send \"Authorization: Bearer TOKEN\" (--url only)"},
    {"--cacert", 0, "FILE", SEC_CLIENT, set_cacert, AT(cacert), 0,
     "trust the CA certificates in FILE (--url only)"},
    {"--transport", 0, "MODE", SEC_CLIENT, set_transport, AT(transport), 0,
     "auto (default): Streamable HTTP, then the HTTP+SSE transport of 2024-11-05 when the "
     "server refuses the POST (400, 404, 405); streamable; or sse (URL: the event stream's, "
     "such as https://host/sse) (--url only)"},
    {"--http1.1", 0, NULL, SEC_CLIENT, set_http_version, 0, MCPC_HTTP_VERSION_1_1,
     "speak HTTP/1.1 only (default: HTTP/2 for https:// when the server offers it by ALPN, "
     "else HTTP/1.1) (--url only)"},
    {"--http2-prior-knowledge", 0, NULL, SEC_CLIENT, set_http_version, 0,
     MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE,
     "speak HTTP/2 from the first byte: h2c for http://, only h2 offered over TLS (--url only)"},
    {"--log-level", 0, "LEVEL", SEC_CLIENT, set_string, AT(log_level), 0,
     "ask the server for its log at LEVEL and above (debug, info, notice, warning, error, "
     "critical, alert, emergency) and print it to stderr"},
    {"--proxy", 0, "URL", SEC_CLIENT, set_string, AT(proxy), 0,
     "reach the server through this HTTP proxy (http:// or https://; \"none\": no proxy); "
     "default: https_proxy, http_proxy, all_proxy and no_proxy as curl reads them, never for "
     "loopback (--url only)"},
    {"--noproxy", 0, "LIST", SEC_CLIENT, set_string, AT(noproxy), 0,
     "hosts reached directly: names (with subdomains), IP addresses, CIDR ranges, or * "
     "(replaces no_proxy)"},
    {"--proxy-user", 0, "USER:PASSWORD", SEC_CLIENT, set_proxy_user, AT(proxy_user), 0,
     "Basic credentials for the proxy"},
    {"--roots", 0, "DIR", SEC_CLIENT, add_root, 0, 0,
     "offer directory DIR to the server as a root (repeatable)"},
    {"--elicit", 0, NULL, SEC_CLIENT, set_elicit, 0, ELICIT_FIELDS,
     "answer the server's elicitation on this terminal (prompts on stderr, answers from "
     "stdin): its message, then each field of a form in turn, with its title, description, "
     "choices (answer a number or a value; several comma-separated, or !none), default and "
     "whether it is required; a boolean takes y or n. An empty answer takes the default or "
     "leaves an optional field out; a value that does not fit is asked again; !decline "
     "declines, !cancel or the end of input cancels, and !! starts a text beginning with !. "
     "A URL is shown with the server's name and consent asked (y/N); mcpc never opens it. "
     "Without it, elicitation is not offered"},
    {"--elicit-json", 0, NULL, SEC_CLIENT, set_elicit, 0, ELICIT_JSON,
     "like --elicit, for scripts: a form is answered with one JSON object on one line "
     "(empty: the defaults; !decline; !cancel), asked again when it does not fit"},
    {"--task", 0, "MODE", SEC_CLIENT, set_task_mode, 0, 0,
     "whether call and request may run as a task: allow (the default: where the tool or the "
     "declared tasks extension needs one), forbid, prefer or require. A task is followed to "
     "its end; each status change is shown on stderr"},
    {"--task-timeout", 0, "MS", SEC_CLIENT, set_task_timeout, AT(task_timeout_text), 0,
     "how long following a task may take in all (default: --timeout covers it); each request "
     "keeps --timeout"},
    {"--detach", 0, NULL, SEC_CLIENT, set_flag, AT(detach), 0,
     "once the call is a task, print its reference (JSON) on stdout and exit 0, leaving the "
     "task running; resume REFERENCE follows it later"},
    {"--validate-output", 0, NULL, SEC_CLIENT, set_flag, AT(validate_output), 0,
     "check a call's structuredContent against its tool's outputSchema (the tools are listed "
     "first); a result that does not fit is printed, and mcpc exits 3"},

    {"--oauth", 0, NULL, SEC_AUTH, set_flag, AT(oauth), 0,
     "authorize with OAuth when the server asks for it: a browser login, its redirect "
     "received on 127.0.0.1 (with --config alone: each HTTP server that asks, under its own "
     "\"oauth\" settings)"},
    {"--client-id", 0, "ID", SEC_AUTH, set_client_id, AT(client_id), 0,
     "a pre-registered client id (default: register the client where the authorization "
     "server allows it)"},
    {"--client-secret", 0, "SECRET", SEC_AUTH, set_string, AT(client_secret), 0,
     "its secret (or set MCPC_CLIENT_SECRET, which keeps it off the command line)"},
    {"--scope", 0, "SCOPE", SEC_AUTH, set_string, AT(scope), 0,
     "the scope to ask for when the server names none"},
    {"--oauth-store", 0, "FILE", SEC_AUTH, set_string, AT(oauth_store), 0,
     "keep tokens and registrations in FILE (JSON, mode 0600), so the next run needs no login"},
    {"--no-browser", 0, NULL, SEC_AUTH, set_flag, AT(no_browser), 0,
     "only print the login URL; do not run xdg-open"},
    {"--client-credentials", 0, NULL, SEC_AUTH, set_flag, AT(client_credentials), 0,
     "no user: the client credentials grant (needs --client-id and a secret or --client-key)"},
    {"--headless", 0, NULL, SEC_AUTH, set_flag, AT(headless), 0,
     "never log in: stored or refreshed credentials only"},
    {"--client-key", 0, "FILE", SEC_AUTH, set_string, AT(client_key_file), 0,
     "authenticate the client (--client-id) with this PKCS#8 P-256 private key (PEM) instead "
     "of a secret (private_key_jwt)"},
    {"--assertion-command", 0, "\"COMMAND [ARGS...]\"", SEC_AUTH, set_string, AT(assertion_cmd), 0,
     "no user: the JWT bearer grant; COMMAND (split like --stdio, no shell) runs each time a "
     "fresh assertion is needed and prints it (a workload identity token); one that fails or "
     "runs longer than half of --timeout gives none (exit 3)"},
    {"--id-token-command", 0, "\"COMMAND [ARGS...]\"", SEC_AUTH, set_string, AT(id_token_cmd), 0,
     "like --assertion-command, but COMMAND prints an ID token of the enterprise identity "
     "provider, which is exchanged there for an ID-JAG first; needs both of:"},
    {"--idp-token-endpoint", 0, "URL", SEC_AUTH, set_string, AT(idp_token_endpoint), 0,
     "the identity provider's token endpoint"},
    {"--idp-client-id", 0, "ID", SEC_AUTH, set_string, AT(idp_client_id), 0,
     "this client's id at the identity provider"},
    {"--no-dpop", 0, NULL, SEC_AUTH, set_flag, AT(no_dpop), 0,
     "never bind tokens to a key with DPoP (default: DPoP when the authorization server "
     "offers ES256)"},

    {"--help", 'h', NULL, SEC_INFO, show_help, 0, 0, "print this help and exit"},
    {"--version", 'V', NULL, SEC_INFO, show_version, 0, 0,
     "print the CLI's and the library's versions and exit"},
    /* The man page's roff source, which cli/mcpc.1 is made from: for the build,
     * not the user, so neither --help nor the page lists it. */
    {"--man", 0, NULL, SEC_HIDDEN, show_man, 0, 0, "print the man page (roff) and exit"},
};
const size_t N_OPTIONS = sizeof OPTIONS / sizeof OPTIONS[0];

/* In the order --help lists them, which is also the order the usage errors name them. */
const struct cli_command COMMANDS[] = {
    {"tools", CMD_TOOLS, 0, 0, NULL, NULL,
     "print all tools as one JSON array (all pages), each as the server sent it with a member "
     "\"mcpc\" in front: {\"view\": its MCP Apps view (ui:// URI) or null, \"visibility\": who may "
     "see and call it, [\"model\",\"app\"] unless the tool says less}"},
    {"call", CMD_CALL, 1, 2, "NAME [ARGS_JSON]", "call: missing tool NAME",
     "call tool NAME with the JSON object ARGS_JSON (default: no arguments) and print its "
     "result JSON"},
    {"info", CMD_INFO, 0, 0, NULL, NULL,
     "print the initialize result JSON (server info, capabilities, protocol version), with "
     "a member \"mcpc\" in front saying which protocol version is in use and how it was chosen"},
    {"request", CMD_REQUEST, 1, 2, "METHOD [PARAMS_JSON]", "request: missing METHOD",
     "send request METHOD with the JSON object PARAMS_JSON and print its result JSON"},
    {"resources", CMD_RESOURCES, 0, 0, NULL, NULL,
     "print all resources as one JSON array (all pages)"},
    {"templates", CMD_TEMPLATES, 0, 0, NULL, NULL,
     "print all resource templates as one JSON array"},
    {"read", CMD_READ, 1, 1, "URI", "read: missing URI",
     "read resource URI and print its result JSON"},
    {"prompts", CMD_PROMPTS, 0, 0, NULL, NULL, "print all prompts as one JSON array (all pages)"},
    {"prompt", CMD_PROMPT, 1, 2, "NAME [ARGS_JSON]", "prompt: missing NAME",
     "get prompt NAME with the JSON object ARGS_JSON (string values) and print its result JSON"},
    {"complete", CMD_COMPLETE, 4, 4, "prompt|resource REF ARGUMENT VALUE",
     "complete: expected prompt|resource REF ARGUMENT VALUE",
     "ask for completions of ARGUMENT (typed so far: VALUE) of prompt REF or resource "
     "template REF"},
    {"skills", CMD_SKILLS, 0, 0, NULL, NULL,
     "print the server's skills (io.modelcontextprotocol/skills) as one JSON array of their "
     "entries (all pages)"},
    {"skill", CMD_SKILL, 1, 2, "NAME [FILE]", "skill: missing NAME",
     "print the SKILL.md of the skill NAME, or its FILE (a path within the skill), once "
     "verified against the listing (size, sha256 digest, frontmatter); a file that fails is "
     "not printed"},
    {"views", CMD_VIEWS, 0, 0, NULL, NULL,
     "MCP Apps: print each tool that has a view as {name, uri, visibility} (one JSON array); "
     "declare the extension with --extension io.modelcontextprotocol/ui"},
    {"view", CMD_VIEW, 1, 1, "URI", "view: missing URI",
     "MCP Apps: fetch the view URI (ui://) and print it with the policy to render it under: "
     "{csp, allow, domain, prefersBorder, meta, html}; a view of another MIME type, too large, "
     "or whose policy declares a source that is not an origin is refused"},
    {"status", CMD_STATUS, 0, 0, NULL, NULL,
     "with --config and no --server: start every server of the file and print each one's "
     "state as one JSON array of {name, state, tools, error, stderr}"},
    {"resume", CMD_RESUME, 1, 1, "REFERENCE", "resume: missing REFERENCE",
     "follow the task of REFERENCE (the JSON --detach printed) to its end and print the "
     "result JSON of the request it was"},
};
const size_t N_COMMANDS = sizeof COMMANDS / sizeof COMMANDS[0];

/* What output.c's exit_code_for and the commands return. */
const struct cli_exit EXITS[] = {
    {EXIT_OK, "success"},
    {EXIT_USAGE, "usage error: an option, command or argument that is wrong (checked before "
                 "anything starts where it can be: a URL the library refuses, arguments that "
                 "are not a JSON object, a proxy setting that cannot be used)"},
    {EXIT_TOOL_ERROR, "the tool returned an error result (printed all the same)"},
    {EXIT_ERROR, "transport, protocol, handshake, JSON-RPC or authorization error (also a "
                 "login that is needed but not allowed: --headless; an assertion command that "
                 "gives none; with --validate-output, a result that does not fit its tool's "
                 "outputSchema, printed all the same)"},
    {EXIT_TIMEOUT, "timeout"},
    {EXIT_CANCELLED, "cancelled (" PLAT_INTERRUPTS "; a login cancelled or denied)"},
};
const size_t N_EXITS = sizeof EXITS / sizeof EXITS[0];
