/*
 * options.h - the command line as data: the tables of options, commands and exit
 * statuses (options.c), parsed into a struct config (parse.c) and described by
 * --help and the man page (help.c). An option is written once, in its table row.
 */
#ifndef MCPC_CLI_OPTIONS_H
#define MCPC_CLI_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "config.h"

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
    CMD_SKILLS,
    CMD_SKILL,
    CMD_RESUME,
    CMD_VIEWS,
    CMD_VIEW,
    CMD_STATUS,
};

enum elicit_mode { ELICIT_NONE, ELICIT_FIELDS, ELICIT_JSON };

/* What the command line says; zeroed, then filled by parse_args. */
struct config {
    /* Server: exactly one of these, or --config with --server. */
    const char *stdio_cmd;
    const char *url;
    /* HTTP-only settings, validated while parsing, used with --url. */
    const char **headers; /* "Name: value", n_headers of them; the array is malloc'd */
    size_t n_headers;
    /* --extension ID[=JSON], n_extensions of them; the array is malloc'd. */
    const char **extensions;
    size_t n_extensions;
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
    bool host_mode; /* --config without --server: every server of the file (host.c) */
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
    const char *timeout_text; /* --timeout as written: given once */
    int64_t timeout_ms;       /* 0: the library default */
    const char *protocol_version;
    bool legacy;
    bool inherit_stderr;
    bool validate_output;
    /* Tasks: --task (MCPC_TASK_*), --task-timeout, --detach. */
    int32_t task_mode;
    const char *task_timeout_text;
    int64_t task_timeout_ms;
    bool detach;
    /* Input for the server. */
    const char **roots; /* directories, n_roots of them; the array is malloc'd */
    size_t n_roots;
    enum elicit_mode elicit;
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

/* The groups of options, in the order --help and the man page show them. */
enum opt_section { SEC_SERVER, SEC_CLIENT, SEC_AUTH, SEC_INFO, SEC_HIDDEN };

struct cli_option;

/* Applies an option's value (NULL for an option that takes none) to *cfg. Returns
 * -1 to go on, or an exit status (a usage error is printed first). */
typedef int (*opt_handler)(struct config *cfg, const struct cli_option *opt, const char *value);

struct cli_option {
    const char *name;       /* "--timeout" */
    char short_name;        /* 'h' for -h; 0 for none */
    const char *arg;        /* the value's placeholder ("MS"); NULL: the option takes none */
    enum opt_section section;
    opt_handler set;
    size_t field;           /* offsetof(struct config, ...), for handlers that take one */
    int choice;             /* the value a handler stores, for options that pick one */
    const char *help;       /* one paragraph, wrapped when shown */
};

extern const struct cli_option OPTIONS[];
extern const size_t N_OPTIONS;

/* The commands: name, positional arguments (least, most), their synopsis, what a
 * run without enough says, and what the command does. */
struct cli_command {
    const char *name;
    enum command command;
    size_t min_args, max_args;
    const char *args;    /* "NAME [ARGS_JSON]", or NULL */
    const char *missing; /* the usage error when arguments are missing */
    const char *help;
};

extern const struct cli_command COMMANDS[];
extern const size_t N_COMMANDS;

/* The exit statuses and what each means. */
struct cli_exit {
    int code;
    const char *help;
};

extern const struct cli_exit EXITS[];
extern const size_t N_EXITS;

/*
 * Parses the command line into *cfg (parse.c). Returns -1 to go on, or an exit
 * status: EXIT_OK after --help or --version, EXIT_USAGE after printing a usage
 * error. cfg->headers and cfg->roots are allocated here; the caller frees them on
 * every path.
 */
int parse_args(int argc, char **argv, struct config *cfg);

/* "Name: value": a token name, a colon, a value without control characters; else
 * *why says what is wrong (options.c). */
bool valid_header(const char *h, const char **why);

/* --help on stdout, and the roff source of the man page (help.c). Each returns
 * EXIT_OK, or EXIT_ERROR when stdout cannot be written. */
int print_help(void);
int print_man(void);

#endif
