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
 *       - connect.c: options (mcpc_options_new / _set_* / _free; connect copies
 *         them), connecting over stdio with an argv array (no shell involved) or
 *         HTTP, and OAuth (mcpc_oauth_t: the login in login.c, the credential
 *         store in store.c);
 *       - commands.c: per-call settings (mcpc_call_opts_init_sized, then set only what
 *         you need), results (owned `char *` versus borrowed `const char *`);
 *       - output.c: errors, a status plus mcpc_last_error_message(), read on the
 *         calling thread before the next mcpc call;
 *       - here: Ctrl-C done right. SIGINT/SIGTERM are blocked before the library
 *         starts any thread and waited for on a thread of the platform layer's
 *         (platform.h), which triggers an mcpc_cancel_t. No mcpc function is ever
 *         called from a signal handler (there are none). On Windows a console
 *         control handler does the same (platform_win.c);
 *       - and everywhere: freeing everything on every path.
 *
 * Build: `make cli` (the files are the Makefile's CLI_SRC).
 */

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "assertion.h"
#include "cli.h"
#include "client.h"
#include "config.h"
#include "login.h"
#include "options.h"
#include "platform.h"
#include "store.h"

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
    if (cfg->host_mode) {
        mcpc_call_opts_t host_call;
        mcpc_call_opts_init_sized(&host_call, sizeof host_call);
        host_call.cancel = cancel;
        task_options(&host_call, cfg);
        code = run_host(cfg, opts, &host_call);
        mcpc_options_free(opts);
        return code;
    }

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
    mcpc_call_opts_init_sized(&call_opts, sizeof call_opts); /* defaults: the client's timeout, no progress */
    call_opts.cancel = cancel;
    task_options(&call_opts, cfg);
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
    free(cfg.extensions);
    server_config_free(&cfg.server);
    return code;
}
