/* The ABI's promises a C host relies on without seeing them:
 *   - mcpc_call_opts_t grows: a program built against an older header (its struct
 *     smaller, initialised by mcpc_call_opts_init) and one built against a newer
 *     header (its struct larger) both work, and a field this library does not know
 *     is refused unless left at its default;
 *   - a panic never hangs a host or unwinds into C: each kind of export returns its
 *     fallback (a status, NULL, 0, false) with MCPC_ERR_PANIC as the last error, and
 *     an operation whose work panics (spawned, direct, or while its result is read)
 *     still runs its completion, with MCPC_ERR_PANIC naming the operation.
 * The panics are injected by a debug build of the library (MCPC_INJECT_PANIC, set
 * here before the first mcpc call); each point is one only the test that names it
 * reaches. */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static const char *env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

static mcpc_status_t connect_demo(mcpc_client_t **out) {
    const char *argv[] = {env_or("MCPC_PYTHON", "python3"), env_or("MCPC_DEMO_SERVER", "demo/server.py")};
    return mcpc_client_connect_stdio(argv, 2, NULL, out);
}

/* A program built against a header whose struct has one field more than this
 * library's (a newer header). */
struct grown_opts {
    mcpc_call_opts_t known;
    int64_t later_field;
};

static void test_call_opts_of_every_size(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(&c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;

    /* Today's header, the first init: the first version's size; the fields of the
     * second version (tasks) are left as they were, and read as their defaults. */
    mcpc_call_opts_t first;
    memset(&first, 0xAB, sizeof first);
    mcpc_call_opts_init(&first);
    CHECK(first.struct_size == offsetof(mcpc_call_opts_t, task_mode));
    CHECK(first.task_mode != MCPC_TASK_ALLOW && first.on_task != NULL);
    CHECK(first.timeout_ms == 0 && first.cancel == NULL && first.on_progress == NULL);
    first.timeout_ms = 10000;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"a\"}", &first, &r), MCPC_OK);
    mcpc_result_free(r);
    r = NULL;

    /* Today's header, the sized init. */
    mcpc_call_opts_t sized;
    memset(&sized, 0xAB, sizeof sized);
    CHECK_STATUS(mcpc_call_opts_init_sized(&sized, sizeof sized), MCPC_OK);
    CHECK(sized.struct_size == sizeof sized);
    CHECK(sized.timeout_ms == 0 && sized.max_total_ms == 0 && !sized.reset_timeout_on_progress);
    CHECK(sized.task_mode == MCPC_TASK_ALLOW && sized.task_timeout_ms == 0 && sized.on_task == NULL);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"b\"}", &sized, &r), MCPC_OK);
    mcpc_result_free(r);
    r = NULL;

    /* A newer header: the field this library does not know is zeroed by the init,
     * and accepted while zero... */
    struct grown_opts grown;
    memset(&grown, 0xAB, sizeof grown);
    CHECK_STATUS(mcpc_call_opts_init_sized(&grown.known, sizeof grown), MCPC_OK);
    CHECK(grown.known.struct_size == sizeof grown);
    CHECK(grown.later_field == 0);
    grown.known.timeout_ms = 10000;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"c\"}", &grown.known, &r), MCPC_OK);
    mcpc_result_free(r);
    r = NULL;
    /* ...and refused, saying why, once set: the library cannot do what it asks. */
    grown.later_field = 7;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{}", &grown.known, &r), MCPC_ERR_INVALID_ARG);
    CHECK(r == NULL);
    CHECK(strstr(mcpc_last_error_message(), "does not know") != NULL);

    /* Sizes no version of the struct ever had. */
    CHECK_STATUS(mcpc_call_opts_init_sized(NULL, sizeof sized), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_call_opts_init_sized(&sized, 8), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_call_opts_init_sized(&sized, (size_t)1 << 20), MCPC_ERR_INVALID_ARG);
    sized.struct_size = 8;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{}", &sized, &r), MCPC_ERR_INVALID_ARG);
    sized.struct_size = 0xFFFFFFFFu; /* garbage, as an uninitialised struct holds */
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{}", &sized, &r), MCPC_ERR_INVALID_ARG);
    mcpc_call_opts_init(NULL); /* a no-op */

    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
}

/* Checks that the last error is MCPC_ERR_PANIC naming `what`. */
static void check_panicked(const char *what) {
    CHECK(mcpc_last_error_status() == MCPC_ERR_PANIC);
    CHECK(strstr(mcpc_last_error_message(), what) != NULL);
}

static void test_each_kind_of_export_falls_back(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(&c), MCPC_OK);
    if (!c) return;
    char *json = NULL;
    /* A status (a blocking call): MCPC_ERR_PANIC, nothing handed out. */
    CHECK_STATUS(mcpc_client_request(c, "ping", NULL, NULL, &json), MCPC_ERR_PANIC);
    CHECK(json == NULL);
    check_panicked("mcpc_client_request");

    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    /* A pointer: NULL. */
    CHECK(mcpc_result_text(r, NULL) == NULL);
    check_panicked("mcpc_result_text");
    /* A number: 0. */
    CHECK(mcpc_result_text_count(r) == 0);
    check_panicked("mcpc_result_text_count");
    /* A bool: false. */
    CHECK(!mcpc_result_is_error(r));
    check_panicked("mcpc_result_is_error");
    mcpc_result_free(r);

    /* The client is unharmed by any of it. */
    r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"y\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
}

/* One completion: its status and message, and whether it ran (once). */
struct done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int runs;
    mcpc_status_t status;
    char message[512];
};

static void done_init(struct done *d) {
    memset(d, 0, sizeof *d);
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
}

static void done_record(struct done *d, mcpc_status_t status, const char *message) {
    pthread_mutex_lock(&d->lock);
    d->runs++;
    d->status = status;
    snprintf(d->message, sizeof d->message, "%s", message ? message : "");
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

/* Waits for the completion: the test fails rather than hangs if it never comes. */
static void done_wait(struct done *d) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 30;
    pthread_mutex_lock(&d->lock);
    while (d->runs == 0) {
        if (pthread_cond_timedwait(&d->cond, &d->lock, &until) != 0) break;
    }
    pthread_mutex_unlock(&d->lock);
    CHECK(d->runs == 1);
}

static void done_free(struct done *d) {
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
}

static void on_list(void *ud, mcpc_status_t st, mcpc_tool_list_t *list, const char *msg) {
    done_record(ud, st, msg);
    mcpc_tool_list_free(list);
}

static void on_call(void *ud, mcpc_status_t st, mcpc_result_t *result, const char *msg) {
    done_record(ud, st, msg);
    mcpc_result_free(result);
}

static void on_request(void *ud, mcpc_status_t st, char *json, const char *msg) {
    done_record(ud, st, msg);
    mcpc_string_free(json);
}

static void test_operations_complete_when_their_work_panics(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(&c), MCPC_OK);
    if (!c) return;
    struct done d;

    /* Spawned: the listing's task panics. */
    done_init(&d);
    mcpc_op_t *op = NULL;
    CHECK_STATUS(mcpc_client_list_tools_async(c, NULL, on_list, &d, &op), MCPC_OK);
    done_wait(&d);
    CHECK(d.status == MCPC_ERR_PANIC);
    CHECK(strstr(d.message, "mcpc_client_list_tools_async") != NULL);
    CHECK(op && mcpc_op_is_finished(op));
    mcpc_op_free(op);
    done_free(&d);

    /* Direct (no cancel handle, no progress: no task of its own): the completion
     * panics on the thread that routed the response. */
    done_init(&d);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "{\"text\":\"d\"}", NULL, on_call, &d, NULL), MCPC_OK);
    done_wait(&d);
    CHECK(d.status == MCPC_ERR_PANIC);
    CHECK(strstr(d.message, "mcpc_client_call_tool_async") != NULL);
    CHECK(strstr(d.message, "tools/call \"echo\"") != NULL);
    done_free(&d);

    /* Spawned for a call with a cancel handle: the call's task panics. */
    done_init(&d);
    mcpc_cancel_t *cancel = mcpc_cancel_new();
    mcpc_call_opts_t o;
    CHECK_STATUS(mcpc_call_opts_init_sized(&o, sizeof o), MCPC_OK);
    o.cancel = cancel;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "{\"text\":\"s\"}", &o, on_call, &d, NULL), MCPC_OK);
    done_wait(&d);
    CHECK(d.status == MCPC_ERR_PANIC);
    CHECK(strstr(d.message, "mcpc_client_call_tool_async") != NULL);
    mcpc_cancel_free(cancel);
    done_free(&d);

    /* The reading of a result panics, after the work itself went well. */
    done_init(&d);
    CHECK_STATUS(mcpc_client_request_async(c, "tools/list", NULL, NULL, on_request, &d, NULL), MCPC_OK);
    done_wait(&d);
    CHECK(d.status == MCPC_ERR_PANIC);
    CHECK(strstr(d.message, "mcpc_client_request_async") != NULL);
    done_free(&d);

    /* Close waits for nothing left behind, and the client still works until then. */
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"z\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    /* Before the first mcpc call, while this is the only thread. */
    setenv("MCPC_INJECT_PANIC",
           "export:mcpc_client_request,export:mcpc_result_text,export:mcpc_result_text_count,"
           "export:mcpc_result_is_error,spawned:mcpc_client_list_tools_async,"
           "direct:mcpc_client_call_tool_async,spawned:mcpc_client_call_tool_async,"
           "deliver:mcpc_client_request_async",
           1);
    RUN(test_call_opts_of_every_size);
    RUN(test_each_kind_of_export_falls_back);
    RUN(test_operations_complete_when_their_work_panics);
    return harness_finish();
}
