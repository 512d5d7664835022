/*
 * login.h - the browser login of `mcpc --oauth`: a loopback listener on
 * 127.0.0.1 that receives the authorization server's redirect, and the
 * mcpc_authorize_cb that shows the URL, waits for that redirect and completes
 * the login with it.
 */
#ifndef MCPC_CLI_LOGIN_H
#define MCPC_CLI_LOGIN_H

#include <stdbool.h>
#include <stdint.h>

#include "mcpc.h"

struct login;

/*
 * Opens the listener on 127.0.0.1 at a port the system picks. A login waits at
 * most `timeout_ms` for the redirect; `open_browser` runs xdg-open on the URL.
 * Returns NULL and sets *why when the listener cannot be opened.
 */
struct login *login_new(int64_t timeout_ms, bool open_browser, const char **why);

/* Frees a login that was never attached. NULL is a no-op. */
void login_free(struct login *l);

/* Sets the redirect URI (http://127.0.0.1:PORT/callback) and the authorize
 * callback of `oauth`; the settings own `l` from then on (also when this fails). */
mcpc_status_t login_attach(struct login *l, mcpc_oauth_t *oauth);

/* Prepares login_interrupt; call once before any thread starts. */
bool login_init(void);

/* Makes a login that waits now, or any later one, give up (cancel it). Any thread. */
void login_interrupt(void);

#endif
