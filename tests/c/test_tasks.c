/* C tests of tasks against the demo server (`--tasks`, demo/tasks.py), in both
 * generations: the tasks of 2025-11-25 (legacy era: `params.task`, `tasks/get`,
 * `tasks/result`, the input the server queues until `tasks/result`) and the tasks
 * extension of 2026-07-28 (modern era: `resultType: "task"`, `tasks/get` carrying the
 * result and the input requests, `tasks/update`). The per-call preference, the task
 * callback, detaching and resuming, blocking, async and generic calls, and each way a
 * hostile server bends a task. */
#define _GNU_SOURCE
#include <pthread.h>

#include "harness.h"

#define TASKS_EXT "io.modelcontextprotocol/tasks"

static char log_path[128];

struct seen {
    pthread_mutex_t lock;
    char statuses[512];   /* "working,completed," */
    char reference[512];  /* the last reference */
    int detach_on;        /* detach at the first status when set */
    int cancel_on_working;
    mcpc_cancel_t *cancel;
    int elicitations;
};

static void seen_init(struct seen *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

static int32_t on_task(void *ud, const char *reference, const char *status, const char *message) {
    (void)message;
    struct seen *s = ud;
    pthread_mutex_lock(&s->lock);
    strncat(s->statuses, status, sizeof s->statuses - strlen(s->statuses) - 2);
    strcat(s->statuses, ",");
    snprintf(s->reference, sizeof s->reference, "%s", reference);
    pthread_mutex_unlock(&s->lock);
    if (s->cancel && s->cancel_on_working && strcmp(status, "working") == 0) mcpc_cancel_trigger(s->cancel);
    return s->detach_on ? MCPC_TASK_DETACH : MCPC_TASK_FOLLOW;
}

static void on_elicit(void *ud, mcpc_input_t *input) {
    struct seen *s = ud;
    pthread_mutex_lock(&s->lock);
    s->elicitations++;
    pthread_mutex_unlock(&s->lock);
    if (mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, "{\"colour\":\"blue\"}") != MCPC_OK)
        fprintf(stderr, "  answering: %s\n", mcpc_last_error_message());
    mcpc_input_free(input);
}

static void free_nothing(void *p) { (void)p; }

/* The demo server in `era` with tasks; `ext`: declare the tasks extension; `s`
 * (may be NULL) answers elicitations. */
static mcpc_client_t *connect_demo(const char *era, int ext, struct seen *s) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-tasks-%d.log", (int)getpid());
    unlink(log_path);
    const char *argv[] = {"python3", "demo/server.py", "--tasks", era, "--log", log_path};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    if (ext) mcpc_options_add_extension(o, TASKS_EXT, NULL);
    if (s) mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, s, free_nothing);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 6, o, &c), MCPC_OK);
    mcpc_options_free(o);
    return c;
}

/* How many lines of the server's log hold `needle` (and `also`, when not NULL). */
static int logged(const char *needle, const char *also) {
    char *text = read_file(log_path);
    int n = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        n += strstr(line, needle) && (!also || strstr(line, also));
    free(text);
    return n;
}

/* The log line index of the first `needle` after line `from`, or -1. */
static int logged_at(const char *needle, int from) {
    char *text = read_file(log_path);
    int i = 0, at = -1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), i++)
        if (i > from && strstr(line, needle)) {
            at = i;
            break;
        }
    free(text);
    return at;
}

static void close_client(mcpc_client_t *c) {
    if (!c) return;
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
}

static mcpc_call_opts_t opts_for(int mode, struct seen *s) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init_sized(&o, sizeof o);
    o.task_mode = mode;
    if (s) {
        o.on_task = on_task;
        o.task_userdata = s;
    }
    return o;
}

/* A call's status and, on success or a tool error, its first text. */
static mcpc_status_t call(mcpc_client_t *c, const char *tool, const char *args, const mcpc_call_opts_t *o,
                          char *text, size_t cap) {
    mcpc_result_t *r = NULL;
    mcpc_status_t st = mcpc_client_call_tool(c, tool, args, o, &r);
    if (text) snprintf(text, cap, "%s", r && mcpc_result_text(r, NULL) ? mcpc_result_text(r, NULL) : "");
    if (st != MCPC_OK) fprintf(stderr, "  %s: %s\n", tool, mcpc_last_error_message());
    mcpc_result_free(r);
    return st;
}

static const char *ERAS[] = {"--era=legacy", "--era=modern"};

/* A tool that requires a task is followed to its end by default, in both
 * generations; the callback sees each status once, with the task's reference. */
static void test_followed_to_the_end(void) {
    for (int e = 0; e < 2; e++) {
        struct seen s;
        seen_init(&s);
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        mcpc_call_opts_t o = opts_for(MCPC_TASK_ALLOW, &s);
        char text[256];
        CHECK_STATUS(call(c, "task_required", "{\"topic\":\"rust\",\"ms\":300}", &o, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "report on rust") == 0);
        CHECK(strcmp(s.statuses, "working,completed,") == 0);
        CHECK(strstr(s.reference, e ? "\"generation\":\"v2\"" : "\"generation\":\"v1\""));
        CHECK(strstr(s.reference, "\"originalOperation\":\"tools/call\""));
        CHECK(strstr(s.reference, "\"endpointId\":\"stdio:python3 demo/server.py --tasks"));
        CHECK(logged("\"method\":\"tasks/get\"", NULL) >= 1);
        CHECK(logged("\"method\":\"tasks/result\"", NULL) == (e ? 0 : 1));
        close_client(c);
    }
}

/* The preference per call: allow runs an optional tool at once, prefer makes it a
 * task, forbid never asks for one, require refuses what cannot be a task before
 * anything is sent. */
static void test_preferences(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e], 0, NULL);
        if (!c) continue;
        char text[256];
        mcpc_call_opts_t allow = opts_for(MCPC_TASK_ALLOW, NULL);
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"a\",\"ms\":10}", &allow, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "report on a") == 0);
        CHECK(logged("\"method\":\"tasks/", NULL) == 0);

        mcpc_call_opts_t prefer = opts_for(MCPC_TASK_PREFER, NULL);
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"b\",\"ms\":10}", &prefer, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "report on b") == 0);
        CHECK(logged("\"method\":\"tasks/get\"", NULL) >= 1);

        /* Forbid: no task asked for (legacy), the extension not declared (modern). */
        mcpc_call_opts_t forbid = opts_for(MCPC_TASK_FORBID, NULL);
        mcpc_status_t st = call(c, "task_required", "{\"topic\":\"c\"}", &forbid, NULL, 0);
        CHECK_STATUS(st, e ? MCPC_ERR_MISSING_CAPABILITY : MCPC_ERR_RPC);

        /* Require, on a tool that cannot be a task (legacy: echo says nothing). */
        int before = logged("\"method\":\"tools/call\"", NULL);
        mcpc_call_opts_t require = opts_for(MCPC_TASK_REQUIRE, NULL);
        if (!e) {
            CHECK_STATUS(call(c, "echo", "{\"text\":\"x\"}", &require, NULL, 0), MCPC_ERR_NOT_SUPPORTED);
            CHECK(logged("\"method\":\"tools/call\"", NULL) == before);
        }
        /* Without the extension declared, require adds it to the request. */
        CHECK_STATUS(call(c, "task_required", "{\"topic\":\"d\",\"ms\":10}", &require, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "report on d") == 0);
        mcpc_call_opts_t bad = opts_for(7, NULL);
        CHECK_STATUS(call(c, "echo", "{\"text\":\"x\"}", &bad, NULL, 0), MCPC_ERR_INVALID_ARG);
        close_client(c);
    }
}

/* Input inside a task goes to the input handlers, once: under 2025-11-25 the
 * server sends it only after `tasks/result`; under the extension it rides in every
 * `tasks/get` and is answered with one `tasks/update`. */
static void test_input_answered_once(void) {
    for (int e = 0; e < 2; e++) {
        struct seen s;
        seen_init(&s);
        mcpc_client_t *c = connect_demo(ERAS[e], 1, &s);
        if (!c) continue;
        mcpc_call_opts_t o = opts_for(MCPC_TASK_ALLOW, &s);
        char text[256];
        CHECK_STATUS(call(c, "task_ask", "{}", &o, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "colour: blue (accept)") == 0);
        CHECK(s.elicitations == 1);
        CHECK(strstr(s.statuses, "input_required,") != NULL);
        if (e) {
            CHECK(logged("\"event\":\"task-update\"", NULL) == 1);
            /* The same input request in every poll: still answered once. */
            s.elicitations = 0;
            CHECK_STATUS(call(c, "task_report", "{\"topic\":\"q\",\"fault\":\"same-input\"}", &o, text, sizeof text),
                         MCPC_OK);
            CHECK(s.elicitations == 1);
            CHECK(logged("\"event\":\"task-update\"", NULL) == 2);
            CHECK(strcmp(text, "colour: blue (accept)") == 0);
        }
        close_client(c);
    }
}

/* Poll intervals of 0, negative, enormous and changing: clamped, so the client
 * neither spins nor stalls. */
static void test_hostile_intervals(void) {
    const char *faults[] = {"poll-zero", "poll-negative", "poll-huge", "poll-changing"};
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        for (size_t f = 0; f < 4; f++) {
            char args[128];
            snprintf(args, sizeof args, "{\"topic\":\"p\",\"ms\":400,\"fault\":\"%s\"}", faults[f]);
            int before = logged("\"method\":\"tasks/get\"", NULL);
            double t0 = now_ms();
            mcpc_call_opts_t o = opts_for(MCPC_TASK_PREFER, NULL);
            char text[64];
            CHECK_STATUS(call(c, "task_report", args, &o, text, sizeof text), MCPC_OK);
            double took = now_ms() - t0;
            int polls = logged("\"method\":\"tasks/get\"", NULL) - before;
            /* At least 100 ms apart: a 400 ms task takes a handful of polls, not hundreds. */
            CHECK(polls <= 8);
            /* An enormous interval waits at most 5 s (10 s would show no cap). */
            CHECK(took < 8000);
            if (polls > 8 || took >= 8000) fprintf(stderr, "  %s: %d polls, %.0f ms\n", faults[f], polls, took);
        }
        close_client(c);
    }
}

/* A task that never ends stops at the task's timeout and is cancelled on the
 * server; a status the client does not know, or an answer for another task, is a
 * protocol error, and the task is cancelled too. */
static void test_never_ending_and_malformed(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        mcpc_call_opts_t o = opts_for(MCPC_TASK_PREFER, NULL);
        o.task_timeout_ms = 800;
        double t0 = now_ms();
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"n\",\"fault\":\"never\"}", &o, NULL, 0), MCPC_ERR_TIMEOUT);
        CHECK(now_ms() - t0 < 5000);
        CHECK(wait_for_file_text(log_path, "\"event\":\"task-cancel\"", 5000));

        o.task_timeout_ms = 0;
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"n\",\"fault\":\"bad-status\"}", &o, NULL, 0),
                     MCPC_ERR_PROTOCOL);
        CHECK(strstr(mcpc_last_error_message(), "exploded") != NULL);
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"n\",\"fault\":\"other-id\"}", &o, NULL, 0),
                     MCPC_ERR_PROTOCOL);
        /* The task itself is cancelled, not the one the server named. */
        int cancelled = 0;
        for (int i = 0; i < 100 && !(cancelled = logged("\"event\":\"task-cancel\"", "\"task-3\"")); i++) usleep(20000);
        CHECK(cancelled == 1 && logged("\"event\":\"task-cancel\"", "task-3-other") == 0);
        /* The failed task: the tool's error (legacy) or the task's error (modern). */
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"n\",\"fault\":\"fail\",\"ms\":10}", &o, NULL, 0),
                     e ? MCPC_ERR_RPC : MCPC_ERR_TOOL);
        if (e) CHECK(mcpc_last_error_rpc_code() == -32603);
        close_client(c);
    }
}

/* A cancel ends the call, cancels the task on the server and polls no more, even
 * when the server then says the task completed. */
static void test_cancel_polls_no_more(void) {
    for (int e = 0; e < 2; e++) {
        struct seen s;
        seen_init(&s);
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        s.cancel = mcpc_cancel_new();
        s.cancel_on_working = 1;
        mcpc_call_opts_t o = opts_for(MCPC_TASK_PREFER, &s);
        o.cancel = s.cancel;
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"c\",\"ms\":300,\"fault\":\"result-after-cancel\"}", &o,
                          NULL, 0),
                     MCPC_ERR_CANCELLED);
        CHECK(wait_for_file_text(log_path, "\"event\":\"task-cancel\"", 5000));
        /* A ping after: the log holds everything sent before it. */
        CHECK_STATUS(call(c, "echo", "{\"text\":\"after\"}", NULL, NULL, 0), MCPC_OK);
        int at = logged_at("\"method\":\"tasks/cancel\"", -1);
        CHECK(at >= 0 && logged_at("\"method\":\"tasks/get\"", at) < 0);
        mcpc_cancel_free(s.cancel);
        close_client(c);
    }
}

/* A server that gives a second call the id of a task another call follows: the
 * second call fails, the first goes on. A status that goes back from a terminal one
 * (legacy notifications) is not reported. */
static void test_reused_id_and_status_back(void);

struct done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int finished;
    mcpc_status_t status;
};

static void on_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *message) {
    (void)message;
    struct done *d = ud;
    mcpc_result_free(r);
    pthread_mutex_lock(&d->lock);
    d->status = st;
    d->finished = 1;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

static void test_reused_id_and_status_back(void) {
    for (int e = 0; e < 2; e++) {
        struct seen s;
        seen_init(&s);
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        struct done d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPC_OK};
        mcpc_call_opts_t o = opts_for(MCPC_TASK_PREFER, &s);
        CHECK_STATUS(mcpc_client_call_tool_async(c, "task_report", "{\"topic\":\"1\",\"ms\":1500,\"fault\":\"reuse-id\"}",
                                                 &o, on_done, &d, NULL),
                     MCPC_OK);
        /* The first call follows the task before the second is made. */
        for (int i = 0; i < 200 && !strstr(s.statuses, "working"); i++) usleep(10000);
        mcpc_call_opts_t o2 = opts_for(MCPC_TASK_PREFER, NULL);
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"2\",\"ms\":10,\"fault\":\"reuse-id\"}", &o2, NULL, 0),
                     MCPC_ERR_PROTOCOL);
        CHECK(strstr(mcpc_last_error_message(), "another call") != NULL);
        pthread_mutex_lock(&d.lock);
        while (!d.finished) pthread_cond_wait(&d.cond, &d.lock);
        pthread_mutex_unlock(&d.lock);
        CHECK_STATUS(d.status, MCPC_OK);

        if (!e) {
            struct seen b;
            seen_init(&b);
            mcpc_call_opts_t ob = opts_for(MCPC_TASK_PREFER, &b);
            char text[64];
            CHECK_STATUS(call(c, "task_report", "{\"topic\":\"b\",\"ms\":200,\"fault\":\"back-from-terminal\"}", &ob,
                              text, sizeof text),
                         MCPC_OK);
            CHECK(strcmp(text, "report on b") == 0);
            CHECK(strcmp(b.statuses, "working,completed,") == 0);
        }
        close_client(c);
    }
}

/* Detached: the call ends, the task runs on, and its reference resumes it (on the
 * same client, the server's process being this client's). A reference for another
 * endpoint or generation is refused. */
static void test_detach_and_resume(void) {
    for (int e = 0; e < 2; e++) {
        struct seen s;
        seen_init(&s);
        s.detach_on = 1;
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        mcpc_call_opts_t o = opts_for(MCPC_TASK_PREFER, &s);
        CHECK_STATUS(call(c, "task_report", "{\"topic\":\"later\",\"ms\":500}", &o, NULL, 0), MCPC_ERR_TASK_DETACHED);
        CHECK(logged("\"event\":\"task-cancel\"", NULL) == 0);
        char *json = NULL;
        CHECK_STATUS(mcpc_client_resume_task(c, s.reference, NULL, &json), MCPC_OK);
        CHECK(json && strstr(json, "report on later"));
        mcpc_string_free(json);
        json = NULL;
        char other[600];
        snprintf(other, sizeof other, "{\"endpointId\":\"elsewhere\",\"generation\":\"%s\",\"taskId\":\"t\","
                 "\"originalOperation\":\"tools/call\"}", e ? "v2" : "v1");
        CHECK_STATUS(mcpc_client_resume_task(c, other, NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_resume_task(c, "{\"generation\":\"v2\"}", NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_resume_task(NULL, s.reference, NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK(json == NULL);
        close_client(c);
    }
}

/* The generic request follows a task too, and a program that knows only the first
 * version of mcpc_call_opts_t gets the defaults for the task fields. */
static void test_generic_and_old_struct(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e], 1, NULL);
        if (!c) continue;
        char *json = NULL;
        CHECK_STATUS(mcpc_client_request(c, "tools/call", "{\"name\":\"task_required\",\"arguments\":{\"topic\":\"g\",\"ms\":10}}",
                                         NULL, &json),
                     MCPC_OK);
        CHECK(json && strstr(json, "report on g"));
        mcpc_string_free(json);
        /* Garbage past the first version's size is never read. */
        mcpc_call_opts_t old;
        memset(&old, 0xAB, sizeof old);
        mcpc_call_opts_init(&old);
        char text[64];
        CHECK_STATUS(call(c, "task_required", "{\"topic\":\"o\",\"ms\":10}", &old, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "report on o") == 0);
        close_client(c);
    }
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_followed_to_the_end);
    RUN(test_preferences);
    RUN(test_input_answered_once);
    RUN(test_hostile_intervals);
    RUN(test_never_ending_and_malformed);
    RUN(test_cancel_polls_no_more);
    RUN(test_reused_id_and_status_back);
    RUN(test_detach_and_resume);
    RUN(test_generic_and_old_struct);
    unlink(log_path);
    return harness_finish();
}
