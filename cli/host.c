/*
 * host.c - `mcpc --config FILE` without --server: every server of the file behind
 * one mcpc_host_t, started together; `tools` prints the catalog under qualified
 * names, `call QUALIFIED ARGS` routes the call to its server, `status` prints each
 * server's state. A server that fails to start is reported on stderr and leaves
 * the others running. A file's ${input:ID} comes from the environment (on_resolve).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "client.h"

/* Runs on mcpc_host_start's thread or an mcpc thread, one report at a time. */
static void on_event(void *userdata, mcpc_host_event_t event, const char *server, mcpc_server_state_t state,
                     const char *detail)
{
    (void)userdata;
    /* `server` and `detail` are the file's name and the library's message; a
     * server's own text in the message is quoted and bounded by the library. */
    if (event == MCPC_HOST_SERVER_STATE && (state == MCPC_SERVER_FAILED || state == MCPC_SERVER_NEEDS_LOGIN))
        fprintf(stderr, "mcpc: server %s: %s: %s\n", server, state == MCPC_SERVER_FAILED ? "failed" : "needs a login",
                detail ? detail : "");
}

/* A VS Code file's ${input:ID}: the value of MCPC_INPUT_<ID> (the ID upper-cased, each
 * character outside [A-Z0-9] as _), so a secret stays off the command line and out of
 * the file. Runs on the thread of mcpc_host_add_config. */
static int32_t on_resolve(void *userdata, const char *kind, const char *reference, const char *prompt, char *buf,
                          size_t buf_len)
{
    (void)userdata;
    (void)prompt;
    char name[256] = "MCPC_INPUT_";
    size_t n = strlen(name);
    if (strcmp(kind, "input") != 0)
        return 1;
    for (const char *p = reference; *p != '\0'; p++) {
        if (n + 1 >= sizeof name)
            return 1;
        char c = *p;
        name[n++] = (c >= 'a' && c <= 'z') ? (char)(c - 'a' + 'A')
                    : ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) ? c
                                                                          : '_';
    }
    name[n] = '\0';
    const char *value = getenv(name);
    if (value == NULL || strlen(value) >= buf_len)
        return 1;
    memcpy(buf, value, strlen(value) + 1);
    return 0;
}

int run_host(const struct config *cfg, const mcpc_options_t *opts, const mcpc_call_opts_t *call_opts)
{
    mcpc_host_t *host = NULL;
    mcpc_status_t st = mcpc_host_new(opts, &host);
    if (st == MCPC_OK)
        st = mcpc_host_set_event_callback(host, on_event, NULL, NULL);
    if (st == MCPC_OK)
        st = mcpc_host_set_resolver(host, on_resolve, NULL, NULL);
    if (st == MCPC_OK)
        st = mcpc_host_add_config(host, cfg->config_file, NULL);
    if (st == MCPC_OK)
        st = mcpc_host_start(host);
    if (st != MCPC_OK) {
        report_status(st);
        mcpc_host_free(host);
        /* A malformed file is the user's to fix, as a wrong option is. */
        return st == MCPC_ERR_CONFIG ? EXIT_USAGE : exit_code_for(st);
    }
    int code = EXIT_USAGE;
    char *json = NULL; /* owned: mcpc_string_free */
    if (cfg->command == CMD_CALL) {
        mcpc_result_t *result = NULL;
        st = mcpc_host_call_tool(host, cfg->tool_name, cfg->tool_args, call_opts, &result);
        code = print_call_result(st, result);
    } else if (cfg->command == CMD_TOOLS || cfg->command == CMD_STATUS) {
        st = cfg->command == CMD_TOOLS ? mcpc_host_tools(host, &json) : mcpc_host_status(host, &json);
        code = json_or_error(st, json);
    }
    mcpc_string_free(json);
    /* Closes every server: each one's stdin, then SIGTERM, then SIGKILL; all reaped. */
    mcpc_host_free(host);
    return code;
}
