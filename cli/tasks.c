/*
 * tasks.c - a call that becomes a task: each status change shown on stderr, and
 * with --detach the task's reference printed on stdout instead of following it;
 * `resume REFERENCE` follows such a task to its end.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "client.h"

/* The task callback's state: one call at a time, so one of it. */
static struct {
    bool detach;
    char *reference; /* the last reference seen (malloc'd) */
} watch;

/* Runs on the thread that follows the task (the caller's, for the CLI's blocking
 * calls); the status message is the server's text, so it is written sanitized. */
static int32_t on_task(void *userdata, const char *reference, const char *status, const char *message)
{
    (void)userdata;
    char *copy = strdup(reference);
    if (copy != NULL) {
        free(watch.reference);
        watch.reference = copy;
    }
    fprintf(stderr, "mcpc: task %s", status);
    if (message != NULL && *message != '\0') {
        fputs(": ", stderr);
        put_sanitized(stderr, message);
    }
    fputc('\n', stderr);
    return watch.detach ? MCPC_TASK_DETACH : MCPC_TASK_FOLLOW;
}

void task_options(mcpc_call_opts_t *opts, const struct config *cfg)
{
    watch.detach = cfg->detach;
    opts->task_mode = cfg->task_mode;
    opts->task_timeout_ms = cfg->task_timeout_ms;
    opts->on_task = on_task;
}

int task_detached(mcpc_status_t st)
{
    if (st != MCPC_ERR_TASK_DETACHED || !watch.detach || watch.reference == NULL)
        return -1;
    int code = print_json(watch.reference);
    free(watch.reference);
    watch.reference = NULL;
    return code;
}

int cmd_resume(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *reference)
{
    char *json = NULL;
    mcpc_status_t st = mcpc_client_resume_task(client, reference, call_opts, &json);
    int code = task_detached(st);
    if (code < 0)
        code = json_or_error(st, json);
    mcpc_string_free(json);
    free(watch.reference);
    watch.reference = NULL;
    return code;
}
