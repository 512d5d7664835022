/*
 * assertion.h - the client's own credentials for `mcpc --oauth`: the key file of
 * --client-key, and the assertions of --assertion-command and --id-token-command
 * (a command run, no shell, each time mcpc needs a fresh one; its standard
 * output, trimmed, is the assertion).
 */
#ifndef MCPC_CLI_ASSERTION_H
#define MCPC_CLI_ASSERTION_H

#include <stddef.h>
#include <stdint.h>

#include "mcpc.h"

struct assertion_command;

/*
 * Reads the --client-key file `path` and checks that it is a key mcpc takes.
 * Returns the PEM (free it with client_key_free) or NULL and sets *why.
 */
char *client_key_read(const char *path, const char **why);

/* Clears and frees a key from client_key_read. NULL is a no-op. */
void client_key_free(char *pem);

/*
 * A command that runs `argv` (`argc` words, copied; the program looked up in
 * PATH), killed after `timeout_ms`; `option` (static) names it in messages.
 * A command that fails, hangs, or prints nothing or too much gives no assertion
 * (so the token request fails with MCPC_ERR_LOGIN_REQUIRED). NULL when memory
 * runs out.
 */
struct assertion_command *assertion_command_new(const char *option, char *const *argv, size_t argc, int64_t timeout_ms);

/* Makes `c` the assertion callback of `oauth`; the settings own `c` from then on
 * (also when this fails). */
mcpc_status_t assertion_attach(struct assertion_command *c, mcpc_oauth_t *oauth);

/* Kills the command running now, if any, and makes later ones give none at once
 * (on SIGINT or SIGTERM). Any thread. */
void assertion_interrupt(void);

#endif
