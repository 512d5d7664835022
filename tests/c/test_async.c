/* C tests of the asynchronous API and of concurrency: completions run exactly once,
 * cancel from any thread (also racing the response), close completing everything in
 * flight, many threads and many calls in flight on one client, over the bundled stdio
 * transport and the caller-supplied seam. MCPC_STRESS_SCALE (default 1.0) scales
 * the call counts. Closing line: "N passed, N failed, N skipped". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness.h"
#include "seam_host.h"

static char log_path[256];
static int conn_counter;
static double scale = 1.0;

static int scaled(int n) {
    int v = (int)(n * scale);
    return v < 1 ? 1 : v;
}

static const char *env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

static void demo_argv(const char **argv, const char *fault) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-atest-%d-%d.log", (int)getpid(), ++conn_counter);
    unlink(log_path);
    size_t n = 0;
    argv[n++] = env_or("MCPC_PYTHON", "python3");
    argv[n++] = env_or("MCPC_DEMO_SERVER", "demo/server.py");
    argv[n++] = "--log";
    argv[n++] = log_path;
    if (fault) {
        argv[n++] = "--fault";
        argv[n++] = fault;
    }
    argv[n] = NULL;
}

static size_t argc_of(const char **argv) {
    size_t n = 0;
    while (argv[n]) n++;
    return n;
}

static mcpc_client_t *connect_stdio(const char *fault) {
    const char *argv[8];
    demo_argv(argv, fault);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, argc_of(argv), NULL, &c), MCPC_OK);
    return c;
}

static void finish_client(mcpc_client_t *c) {
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
    CHECK(count_processes_with(log_path) == 0);
    CHECK(count_zombie_children() == 0);
    unlink(log_path);
}

/* Counts completions; waiters block on a condition variable, never on a fixed delay. */
struct counter {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    int ok;
    int cancelled;
    int closed;
    int other;
    int mismatched;
    int reentry_refused;
};

static void counter_init(struct counter *c) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->cond, NULL);
}

static void counter_destroy(struct counter *c) {
    pthread_mutex_destroy(&c->lock);
    pthread_cond_destroy(&c->cond);
}

static int counter_wait(struct counter *c, int target, int limit_ms) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += limit_ms / 1000;
    deadline.tv_nsec += (long)(limit_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&c->lock);
    while (c->done < target) {
        if (pthread_cond_timedwait(&c->cond, &c->lock, &deadline) != 0) break;
    }
    int done = c->done;
    pthread_mutex_unlock(&c->lock);
    return done >= target;
}

/* One async call: its expected text, and where its completion is counted. */
struct call {
    struct counter *counter;
    char want[48];
    mcpc_client_t *client;
    int completions;
};

static void record(struct counter *k, struct call *call, mcpc_status_t st, mcpc_result_t *r) {
    pthread_mutex_lock(&k->lock);
    if (call) call->completions++;
    if (st == MCPC_OK) {
        k->ok++;
        if (call && call->want[0] && strcmp(mcpc_result_text(r, NULL), call->want) != 0) k->mismatched++;
    } else if (st == MCPC_ERR_CANCELLED) {
        k->cancelled++;
    } else if (st == MCPC_ERR_CLOSED) {
        k->closed++;
    } else {
        k->other++;
    }
    k->done++;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

/* A thread completions must never run on (the seam host's delivering thread), when set. */
static pthread_t not_on_thread;
static atomic_int not_on_thread_set;
static atomic_int completions_on_wrong_thread;

static void on_call_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct call *call = ud;
    if (atomic_load(&not_on_thread_set) && pthread_equal(pthread_self(), not_on_thread)) {
        atomic_fetch_add(&completions_on_wrong_thread, 1);
    }
    CHECK(msg != NULL);
    CHECK((st == MCPC_OK || st == MCPC_ERR_TOOL) == (r != NULL));
    CHECK(mcpc_last_error_status() == st);
    record(call->counter, call, st, r);
    mcpc_result_free(r);
}

static void test_async_call_basics(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    struct counter k;
    counter_init(&k);
    struct call calls[3] = {{&k, "hi", c, 0}, {&k, "", c, 0}, {&k, "", c, 0}};
    mcpc_op_t *op = NULL;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "{\"text\":\"hi\"}", NULL, on_call_done, &calls[0], &op), MCPC_OK);
    CHECK(op != NULL);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "fail", "{}", NULL, on_call_done, &calls[1], NULL), MCPC_OK);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "nope", "{}", NULL, on_call_done, &calls[2], NULL), MCPC_OK);
    CHECK(counter_wait(&k, 3, 20000));
    CHECK(k.ok == 1 && k.mismatched == 0 && k.other == 2);
    CHECK(mcpc_op_is_finished(op));
    /* Cancel after completion is a no-op; the completion is not repeated. */
    mcpc_op_cancel(op);
    mcpc_op_free(op);
    for (int i = 0; i < 3; i++) CHECK(calls[i].completions == 1);
    /* Errors found at once are returned, with no callback. */
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "[1]", NULL, on_call_done, &calls[0], &op), MCPC_ERR_INVALID_ARG);
    CHECK(op == NULL);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", NULL, NULL, NULL, NULL, &op), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_call_tool_async(NULL, "echo", NULL, NULL, on_call_done, &calls[0], &op), MCPC_ERR_INVALID_ARG);
    CHECK(calls[0].completions == 1);
    finish_client(c);
    counter_destroy(&k);
}

struct tool_error_seen {
    struct counter k;
    int tool_status_ok;
    int rpc_code_ok;
};

static void on_fail_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct tool_error_seen *s = ud;
    s->tool_status_ok = st == MCPC_ERR_TOOL && r && mcpc_result_is_error(r) && strstr(msg, "boom");
    mcpc_result_free(r);
    record(&s->k, NULL, st, NULL);
}

static void on_rpc_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct tool_error_seen *s = ud;
    (void)msg;
    s->rpc_code_ok = st == MCPC_ERR_RPC && r == NULL && mcpc_last_error_rpc_code() == -32602;
    record(&s->k, NULL, st, NULL);
}

static void test_async_errors_carry_details(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    struct tool_error_seen s = {0};
    counter_init(&s.k);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "fail", "{\"message\":\"boom\"}", NULL, on_fail_done, &s, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "nope", "{}", NULL, on_rpc_done, &s, NULL), MCPC_OK);
    CHECK(counter_wait(&s.k, 2, 20000));
    CHECK(s.tool_status_ok);
    CHECK(s.rpc_code_ok);
    finish_client(c);
    counter_destroy(&s.k);
}

struct list_seen {
    struct counter k;
    size_t len;
};

static void on_list_done(void *ud, mcpc_status_t st, mcpc_tool_list_t *l, const char *msg) {
    struct list_seen *s = ud;
    (void)msg;
    s->len = l ? mcpc_tool_list_len(l) : 0;
    mcpc_tool_list_free(l);
    record(&s->k, NULL, st, NULL);
}

static void test_async_list(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    struct list_seen s = {0};
    counter_init(&s.k);
    CHECK_STATUS(mcpc_client_list_tools_async(c, NULL, on_list_done, &s, NULL), MCPC_OK);
    CHECK(counter_wait(&s.k, 1, 20000));
    CHECK(s.k.ok == 1 && s.len == 25);
    finish_client(c);
    counter_destroy(&s.k);
}

struct connect_seen {
    struct counter k;
    mcpc_client_t *client;
    char message[256];
};

static void on_connect_done(void *ud, mcpc_status_t st, mcpc_client_t *client, const char *msg) {
    struct connect_seen *s = ud;
    s->client = client;
    snprintf(s->message, sizeof s->message, "%s", msg);
    record(&s->k, NULL, st, NULL);
}

static void test_async_connect(void) {
    const char *argv[8];
    demo_argv(argv, NULL);
    struct connect_seen s = {0};
    counter_init(&s.k);
    mcpc_op_t *op = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio_async(argv, argc_of(argv), NULL, on_connect_done, &s, &op), MCPC_OK);
    CHECK(counter_wait(&s.k, 1, 20000));
    CHECK(s.k.ok == 1 && s.client != NULL);
    mcpc_op_free(op);
    if (s.client) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(s.client, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        finish_client(s.client);
    }
    counter_destroy(&s.k);

    /* A handshake failure goes to the callback, and leaves no process. */
    demo_argv(argv, "init-error");
    memset(&s, 0, sizeof s);
    counter_init(&s.k);
    CHECK_STATUS(mcpc_client_connect_stdio_async(argv, argc_of(argv), NULL, on_connect_done, &s, NULL), MCPC_OK);
    CHECK(counter_wait(&s.k, 1, 20000));
    CHECK(s.k.other == 1 && s.client == NULL && strstr(s.message, "initialization refused"));
    CHECK(count_processes_with(log_path) == 0);
    counter_destroy(&s.k);
}

static void test_async_connect_cancel(void) {
    /* A "server" that never answers: the connect waits until cancelled. */
    const char *argv[] = {"sh", "-c", "sleep 30; exit 0", "mcpc-atest-marker-sleep"};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_close_grace_ms(o, 100, 2000);
    struct connect_seen s = {0};
    counter_init(&s.k);
    mcpc_op_t *op = NULL;
    /* The shell's $0 marks the process for the check. */
    CHECK_STATUS(mcpc_client_connect_stdio_async(argv, 4, o, on_connect_done, &s, &op), MCPC_OK);
    mcpc_options_free(o);
    double t0 = now_ms();
    while (count_processes_with("mcpc-atest-marker-sleep") == 0 && now_ms() - t0 < 10000) {
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    mcpc_op_cancel(op);
    mcpc_op_cancel(op);
    CHECK(counter_wait(&s.k, 1, 20000));
    CHECK(s.k.cancelled == 1 && s.client == NULL);
    if (s.k.cancelled != 1) fprintf(stderr, "  connect ended with: %s (ok %d other %d)\n", s.message, s.k.ok, s.k.other);
    CHECK(count_processes_with("mcpc-atest-marker-sleep") == 0);
    mcpc_op_free(op);
    counter_destroy(&s.k);
}

static void test_async_cancel(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    struct counter k;
    counter_init(&k);
    struct call call = {&k, "", c, 0};
    mcpc_op_t *op = NULL;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", NULL, on_call_done, &call, &op), MCPC_OK);
    CHECK(wait_for_file_text(log_path, "\"name\":\"slow\"", 10000));
    CHECK(!mcpc_op_is_finished(op));
    mcpc_op_cancel(op);
    CHECK(counter_wait(&k, 1, 10000));
    CHECK(k.cancelled == 1 && call.completions == 1);
    CHECK(wait_for_file_text(log_path, "{\"event\":\"cancelled\"", 5000));
    mcpc_op_cancel(op); /* idempotent */
    mcpc_op_free(op);

    /* A cancel handle in the call options cancels an async call too. */
    mcpc_cancel_t *cancel = mcpc_cancel_new();
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.cancel = cancel;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", &o, on_call_done, &call, NULL), MCPC_OK);
    mcpc_cancel_trigger(cancel);
    CHECK(counter_wait(&k, 2, 10000));
    CHECK(k.cancelled == 2 && call.completions == 2);
    mcpc_cancel_free(cancel);
    finish_client(c);
    counter_destroy(&k);
}

struct timed {
    struct counter k;
    pthread_t caller;
    atomic_int on_caller_thread;
    atomic_int timed_out_with_message;
    atomic_int order[2];
    atomic_int seen;
};

static void on_timed_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct timed *t = ud;
    if (pthread_equal(pthread_self(), t->caller)) atomic_fetch_add(&t->on_caller_thread, 1);
    if (st == MCPC_ERR_TIMEOUT && r == NULL && strstr(msg, "timed out after")) {
        atomic_fetch_add(&t->timed_out_with_message, 1);
    }
    /* Which call ended first: the short one is tagged with its timeout in the result. */
    int n = atomic_fetch_add(&t->seen, 1);
    if (n < 2) atomic_store(&t->order[n], strstr(msg, "timed out after") ? (int)strtol(strstr(msg, "after ") + 6, NULL, 10) : -1);
    mcpc_result_free(r);
    record(&t->k, NULL, st, NULL);
}

/* Makes `t` ready for a test's calls (made on this thread), and call options with
 * a long and a short timeout. */
static void timed_init(struct timed *t, mcpc_call_opts_t *long_o, int long_ms, mcpc_call_opts_t *short_o,
                       int short_ms) {
    memset(t, 0, sizeof *t);
    counter_init(&t->k);
    t->caller = pthread_self();
    mcpc_call_opts_init(long_o);
    mcpc_call_opts_init(short_o);
    long_o->timeout_ms = long_ms;
    short_o->timeout_ms = short_ms;
}

/* Timeouts of asynchronous calls: each call times out on its own deadline (a short
 * one started after a long one is not held up by it), completes with MCPC_ERR_TIMEOUT
 * on an mcpc thread, and the server is told with notifications/cancelled. */
static void test_async_timeout(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    static struct timed t;
    mcpc_call_opts_t long_o, short_o;
    timed_init(&t, &long_o, 8000, &short_o, 300);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", &long_o, on_timed_done, &t, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", &short_o, on_timed_done, &t, NULL), MCPC_OK);
    CHECK(counter_wait(&t.k, 1, 6000));
    double first = now_ms() - t0;
    CHECK(first < 5000); /* the short deadline, not the long one */
    CHECK(atomic_load(&t.order[0]) >= 300 && atomic_load(&t.order[0]) < 5000);
    CHECK(wait_for_file_text(log_path, "\"reason\":\"timed out\"", 5000));
    CHECK(counter_wait(&t.k, 2, 15000));
    CHECK(atomic_load(&t.order[1]) >= 8000);
    CHECK(atomic_load(&t.timed_out_with_message) == 2);
    CHECK(atomic_load(&t.on_caller_thread) == 0);
    finish_client(c);
    counter_destroy(&t.k);
}

/* A blocking call shares its client's deadlines with the asynchronous calls: one
 * with a short timeout, made while an asynchronous call with a long one is in
 * flight, times out on its own deadline; closing ends the long one. */
static void test_blocking_timeout_beside_async(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    static struct timed t;
    mcpc_call_opts_t long_o, short_o;
    timed_init(&t, &long_o, 20000, &short_o, 300);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", &long_o, on_timed_done, &t, NULL), MCPC_OK);
    double t0 = now_ms();
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &short_o, &r), MCPC_ERR_TIMEOUT);
    CHECK(r == NULL);
    double took = now_ms() - t0;
    CHECK(took >= 290 && took < 5000);
    CHECK(strstr(mcpc_last_error_message(), "timed out after") != NULL);
    CHECK(wait_for_file_text(log_path, "\"reason\":\"timed out\"", 5000));
    /* The client is unharmed, and the long call still in flight. */
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK(atomic_load(&t.seen) == 0);
    finish_client(c);
    CHECK(counter_wait(&t.k, 1, 5000));
    CHECK(t.k.closed == 1);
    counter_destroy(&t.k);
}

static void test_cancel_races_completion(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    int n = scaled(500);
    struct counter k;
    counter_init(&k);
    struct call *calls = calloc((size_t)n, sizeof *calls);
    for (int i = 0; i < n; i++) {
        calls[i] = (struct call){&k, "", c, 0};
        snprintf(calls[i].want, sizeof calls[i].want, "r%d", i);
        char args[64];
        snprintf(args, sizeof args, "{\"text\":\"r%d\"}", i);
        mcpc_op_t *op = NULL;
        CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", args, NULL, on_call_done, &calls[i], &op), MCPC_OK);
        if (i % 2 == 0) mcpc_op_cancel(op);
        mcpc_op_free(op);
    }
    CHECK(counter_wait(&k, n, 60000));
    /* Every call completed exactly once, as OK (with its own text) or cancelled. */
    int once = 1;
    for (int i = 0; i < n; i++) once &= calls[i].completions == 1;
    CHECK(once);
    CHECK(k.ok + k.cancelled == n && k.mismatched == 0 && k.other == 0);
    CHECK(k.cancelled >= 1);
    /* The client is unharmed. */
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    finish_client(c);
    free(calls);
    counter_destroy(&k);
}

static void run_many_in_flight(mcpc_client_t *c, int n) {
    struct counter k;
    counter_init(&k);
    struct call *calls = calloc((size_t)n, sizeof *calls);
    for (int i = 0; i < n; i++) {
        calls[i] = (struct call){&k, "", c, 0};
        snprintf(calls[i].want, sizeof calls[i].want, "m%d", i);
        char args[64];
        snprintf(args, sizeof args, "{\"text\":\"m%d\"}", i);
        CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", args, NULL, on_call_done, &calls[i], NULL), MCPC_OK);
    }
    CHECK(counter_wait(&k, n, 120000));
    CHECK(k.ok == n && k.mismatched == 0);
    free(calls);
    counter_destroy(&k);
}

static void test_thousand_in_flight(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    run_many_in_flight(c, scaled(1000));
    finish_client(c);
}

static void test_close_completes_everything(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    int n = scaled(100);
    struct counter k;
    counter_init(&k);
    struct call *calls = calloc((size_t)n, sizeof *calls);
    for (int i = 0; i < n; i++) {
        calls[i] = (struct call){&k, "", c, 0};
        CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", NULL, on_call_done, &calls[i], NULL), MCPC_OK);
    }
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    /* Everything completed before close returned: no waiting here. */
    pthread_mutex_lock(&k.lock);
    int done = k.done, closed = k.closed;
    pthread_mutex_unlock(&k.lock);
    CHECK(done == n && closed == n);
    /* After close: refused at once, no callback. */
    struct call late = {&k, "", c, 0};
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "{}", NULL, on_call_done, &late, NULL), MCPC_ERR_CLOSED);
    CHECK(late.completions == 0);
    finish_client(c);
    free(calls);
    counter_destroy(&k);
}

/* A completion callback that chains: a blocking call is refused, an async one works. */
static void on_chained_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct call *call = ud;
    record(call->counter, NULL, st, r);
    mcpc_result_free(r);
    (void)msg;
}

static void on_first_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct call *call = ud;
    (void)msg;
    mcpc_result_free(r);
    mcpc_result_t *blocked = NULL;
    if (mcpc_client_call_tool(call->client, "echo", "{}", NULL, &blocked) == MCPC_ERR_WOULD_DEADLOCK) {
        pthread_mutex_lock(&call->counter->lock);
        call->counter->reentry_refused++;
        pthread_mutex_unlock(&call->counter->lock);
    }
    CHECK(mcpc_client_close(call->client) == MCPC_ERR_WOULD_DEADLOCK);
    mcpc_client_call_tool_async(call->client, "echo", "{\"text\":\"chained\"}", NULL, on_chained_done, call, NULL);
    record(call->counter, NULL, st, NULL);
}

static void test_reentry_from_completion(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    struct counter k;
    counter_init(&k);
    struct call call = {&k, "", c, 0};
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "{\"text\":\"a\"}", NULL, on_first_done, &call, NULL), MCPC_OK);
    CHECK(counter_wait(&k, 2, 20000));
    CHECK(k.ok == 2 && k.reentry_refused == 1);
    finish_client(c);
    counter_destroy(&k);
}

static atomic_int async_progress;

static void on_async_progress(void *ud, double p, double total, const char *m) {
    (void)ud;
    (void)p;
    (void)total;
    (void)m;
    atomic_fetch_add(&async_progress, 1);
}

static void test_async_progress(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    struct counter k;
    counter_init(&k);
    struct call call = {&k, "", c, 0};
    atomic_store(&async_progress, 0);
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.on_progress = on_async_progress;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":200}", &o, on_call_done, &call, NULL), MCPC_OK);
    CHECK(counter_wait(&k, 1, 20000));
    CHECK(k.ok == 1 && atomic_load(&async_progress) == 4);
    finish_client(c);
    counter_destroy(&k);
}

#define THREADS 8

struct worker {
    mcpc_client_t *client;
    int index;
    int calls;
    int ok;
};

static void *worker_main(void *p) {
    struct worker *w = p;
    for (int i = 0; i < w->calls; i++) {
        char args[128], want[64];
        snprintf(want, sizeof want, "t%d-c%d", w->index, i);
        snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
        mcpc_result_t *r = NULL;
        if (mcpc_client_call_tool(w->client, "echo", args, NULL, &r) == MCPC_OK && strcmp(mcpc_result_text(r, NULL), want) == 0) {
            w->ok++;
        }
        mcpc_result_free(r);
    }
    return NULL;
}

static void run_threads(mcpc_client_t *c, int per_thread) {
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){c, i, per_thread, 0};
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    int total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += w[i].ok;
    }
    CHECK(total == THREADS * per_thread);
}

static void test_threads_stdio(void) {
    mcpc_client_t *c = connect_stdio(NULL);
    if (!c) return;
    run_threads(c, scaled(1000));
    finish_client(c);
}

static mcpc_client_t *connect_seam(struct seam_host **out_host, int exchange) {
    const char *argv[8];
    demo_argv(argv, NULL);
    struct seam_host *h = seam_start(argv, exchange);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_transport(h->transport, NULL, &c), MCPC_OK);
    *out_host = h;
    return c;
}

static void finish_seam(mcpc_client_t *c, struct seam_host *h) {
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
    seam_stop(h);
    CHECK(count_processes_with(log_path) == 0);
    unlink(log_path);
}

static void test_threads_seam(void) {
    struct seam_host *h = NULL;
    mcpc_client_t *c = connect_seam(&h, 0);
    if (c) run_threads(c, scaled(1000));
    finish_seam(c, h);
}

static void test_in_flight_seam_and_exchange(void) {
    for (int exchange = 0; exchange < 2; exchange++) {
        struct seam_host *h = NULL;
        mcpc_client_t *c = connect_seam(&h, exchange);
        /* Completions run on mcpc threads, not on the thread that delivers the responses. */
        if (h) {
            not_on_thread = h->reader;
            atomic_store(&not_on_thread_set, 1);
        }
        atomic_store(&completions_on_wrong_thread, 0);
        if (c) run_many_in_flight(c, scaled(1000));
        atomic_store(&not_on_thread_set, 0);
        CHECK(atomic_load(&completions_on_wrong_thread) == 0);
        finish_seam(c, h);
    }
}

static void on_connect_transport_done(void *ud, mcpc_status_t st, mcpc_client_t *client, const char *msg) {
    on_connect_done(ud, st, client, msg);
}

static void test_async_connect_transport(void) {
    const char *argv[8];
    demo_argv(argv, NULL);
    struct seam_host *h = seam_start(argv, 0);
    struct connect_seen s = {0};
    counter_init(&s.k);
    CHECK_STATUS(mcpc_client_connect_transport_async(h->transport, NULL, on_connect_transport_done, &s, NULL), MCPC_OK);
    CHECK(counter_wait(&s.k, 1, 20000));
    CHECK(s.k.ok == 1 && s.client);
    if (s.client) run_many_in_flight(s.client, scaled(50));
    finish_seam(s.client, h);
    counter_destroy(&s.k);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    const char *sc = getenv("MCPC_STRESS_SCALE");
    if (sc && *sc) scale = atof(sc);
    RUN(test_async_call_basics);
    RUN(test_async_errors_carry_details);
    RUN(test_async_list);
    RUN(test_async_connect);
    RUN(test_async_connect_cancel);
    RUN(test_async_connect_transport);
    RUN(test_async_cancel);
    RUN(test_async_timeout);
    RUN(test_blocking_timeout_beside_async);
    RUN(test_cancel_races_completion);
    RUN(test_thousand_in_flight);
    RUN(test_close_completes_everything);
    RUN(test_reentry_from_completion);
    RUN(test_async_progress);
    RUN(test_threads_stdio);
    RUN(test_threads_seam);
    RUN(test_in_flight_seam_and_exchange);
    return harness_finish();
}
