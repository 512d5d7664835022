/* config.h - one server of an MCP hosts' configuration file (--config FILE --server NAME). */
#ifndef MCPC_CLI_CONFIG_H
#define MCPC_CLI_CONFIG_H

#include <stddef.h>

#include "cli.h"

/* What the file says of one server. Everything is malloc'd; free with
 * server_config_free. */
struct server_config {
    struct words argv;  /* command and args (stdio); argc 0 for a URL */
    char *url;          /* url (HTTP), or NULL */
    char *cwd;          /* cwd, or NULL */
    char **env;         /* "NAME=value", n_env of them */
    size_t n_env;
    char **headers;     /* "Name: value", n_headers of them */
    size_t n_headers;
    int sse;            /* "type": "sse": the HTTP+SSE transport of 2024-11-05 */
};

/* Reads server `name` from the JSON file `path`: the "mcpServers" object (or VS
 * Code's "servers") maps names to {command, args, env, cwd} or {url, headers, type}.
 * Returns 0, or -1 with *why saying what is wrong (static text or the library's
 * message). */
int server_config_load(const char *path, const char *name, struct server_config *out, const char **why);

void server_config_free(struct server_config *c);

#endif
