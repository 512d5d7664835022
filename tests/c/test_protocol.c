/* C tests of the public API against the demo server (demo/server.py) and its
 * fault modes, over one of three transports chosen by MCPC_TEST_TRANSPORT:
 *   stdio     mcpc starts the server (the bundled stdio transport);
 *   seam      the test starts the server and carries messages over the caller-
 *             supplied stream transport (send callback + mcpc_transport_deliver);
 *   exchange  the same with the request/response form (mcpc_exchange_complete).
 * Run from the repository root; the closing line is "N passed, N failed, N skipped".
 * An argument runs only tests whose name contains it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness.h"
#include "seam_host.h"

enum { MODE_STDIO, MODE_SEAM, MODE_EXCHANGE };
static int mode = MODE_STDIO;
static struct seam_host *host;

#define ONLY_IN(cond, why)          \
    do {                            \
        if (!(cond)) {              \
            harness_skip(why);      \
            return;                 \
        }                           \
    } while (0)
#define STDIO_ONLY() ONLY_IN(mode == MODE_STDIO, "needs the bundled stdio transport")

static char log_path[256];
static int conn_counter;

static const char *env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* Starts the demo server (with `fault`, or none) and connects; the server logs
 * what it receives to log_path, whose unique name also marks its processes. */
static mcpc_status_t connect_demo_args(const char *fault, const char *extra, mcpc_options_t *opts,
                                       mcpc_client_t **out) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-ctest-%d-%d.log", (int)getpid(), ++conn_counter);
    unlink(log_path);
    const char *argv[11];
    size_t argc = 0;
    argv[argc++] = env_or("MCPC_PYTHON", "python3");
    argv[argc++] = env_or("MCPC_DEMO_SERVER", "demo/server.py");
    argv[argc++] = "--log";
    argv[argc++] = log_path;
    if (fault) {
        argv[argc++] = "--fault";
        argv[argc++] = fault;
    }
    if (extra) {
        argv[argc++] = extra;
    }
    if (mode == MODE_STDIO) {
        return mcpc_client_connect_stdio(argv, argc, opts, out);
    }
    argv[argc] = NULL;
    host = seam_start(argv, mode == MODE_EXCHANGE);
    if (!host) {
        *out = NULL;
        return MCPC_ERR_SPAWN;
    }
    mcpc_status_t st = mcpc_client_connect_transport(host->transport, opts, out);
    if (st != MCPC_OK) {
        seam_stop(host);
        host = NULL;
    }
    return st;
}

static mcpc_status_t connect_demo(const char *fault, mcpc_options_t *opts, mcpc_client_t **out) {
    return connect_demo_args(fault, NULL, opts, out);
}

/* Connects to the demo server with these close grace periods (stdin EOF to SIGTERM,
 * SIGTERM to SIGKILL), the other options at their defaults. */
static mcpc_status_t connect_demo_grace(const char *fault, int64_t close_ms, int64_t term_ms, mcpc_client_t **out) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_close_grace_ms(o, close_ms, term_ms), MCPC_OK);
    mcpc_status_t st = connect_demo(fault, o, out);
    mcpc_options_free(o);
    return st;
}

/* Closes and frees the client, then checks that no server process (or zombie) is left. */
static void close_and_check_cleanup(mcpc_client_t *c) {
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
    if (host) {
        seam_stop(host);
        host = NULL;
    }
    CHECK(count_processes_with(log_path) == 0);
    CHECK(count_zombie_children() == 0);
    unlink(log_path);
}

static mcpc_call_opts_t opts_timeout(int64_t ms) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = ms;
    return o;
}

static void test_handshake(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    char *info = NULL;
    CHECK_STATUS(mcpc_client_server_info(c, &info), MCPC_OK);
    CHECK(info && strstr(info, "\"mcpc-demo\""));
    CHECK(info && strstr(info, "\"instructions\""));
    CHECK(strcmp(mcpc_client_protocol_version(c), "2025-11-25") == 0);
    mcpc_string_free(info);
    CHECK(wait_for_file_text(log_path, "notifications/initialized", 5000));
    CHECK(file_contains(log_path, "\"clientInfo\":{\"name\":\"mcpc\""));
    CHECK(file_contains(log_path, "\"capabilities\":{}"));
    close_and_check_cleanup(c);
}

static void test_pinned_version_and_client_info(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_protocol_version(o, "2025-03-26"), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_protocol_version(o, "1999-01-01"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_client_info(o, "tester", "9.9"), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    CHECK(strcmp(mcpc_client_protocol_version(c), "2025-03-26") == 0);
    CHECK(file_contains(log_path, "\"protocolVersion\":\"2025-03-26\""));
    CHECK(file_contains(log_path, "\"clientInfo\":{\"name\":\"tester\",\"version\":\"9.9\"}"));
    close_and_check_cleanup(c);
}

static void test_handshake_failures(void) {
    const char *faults[] = {"bad-version", "empty-version", "init-error"};
    for (size_t i = 0; i < 3; i++) {
        mcpc_client_t *c = (mcpc_client_t *)1;
        CHECK_STATUS(connect_demo(faults[i], NULL, &c), MCPC_ERR_HANDSHAKE);
        CHECK(c == NULL);
        if (i == 0) CHECK(strstr(mcpc_last_error_message(), "1999-01-01") != NULL);
        if (i == 2) CHECK(mcpc_last_error_rpc_code() == -32603);
        /* The transport was shut down: no server left, no zombie. */
        CHECK(count_processes_with(log_path) == 0);
        CHECK(count_zombie_children() == 0);
        CHECK(!file_contains(log_path, "notifications/initialized"));
        unlink(log_path);
    }
}

static void test_spawn_failure(void) {
    STDIO_ONLY();
    const char *argv[] = {"/nonexistent/mcp-server"};
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 1, NULL, &c), MCPC_ERR_SPAWN);
    CHECK(strstr(mcpc_last_error_message(), "/nonexistent/mcp-server") != NULL);
    CHECK(c == NULL);
}

static void test_pagination(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_tool_list_t *l = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
    /* Both spellings: _count, and _len, its alias until 1.0. */
    CHECK(mcpc_tool_list_count(l) == 25);
    CHECK(mcpc_tool_list_len(l) == 25);
    CHECK(strcmp(mcpc_tool_list_name(l, 0), "echo") == 0);
    CHECK(strcmp(mcpc_tool_list_name(l, 24), "item_19") == 0);
    CHECK(mcpc_tool_list_name(l, 25) == NULL);
    CHECK(strstr(mcpc_tool_list_json(l, 0), "\"inputSchema\"") != NULL);
    char *all = NULL;
    CHECK_STATUS(mcpc_tool_list_to_json(l, &all), MCPC_OK);
    CHECK(all && all[0] == '[' && strstr(all, "\"item_19\""));
    mcpc_string_free(all);
    mcpc_tool_list_free(l);
    /* Five pages: the first without a cursor, then c1..c4. */
    CHECK(file_contains(log_path, "\"cursor\":\"c4\""));
    close_and_check_cleanup(c);
}

static void expect_list_error(const char *fault, mcpc_status_t want, const char *named, size_t max_pages) {
    mcpc_options_t *o = mcpc_options_new();
    if (max_pages) CHECK_STATUS(mcpc_options_set_max_pages(o, max_pages), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(fault, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    mcpc_tool_list_t *l = (mcpc_tool_list_t *)1;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), want);
    CHECK(l == NULL);
    CHECK(strstr(mcpc_last_error_message(), named) != NULL);
    /* The connection survives a bad listing. */
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"still here\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static void test_repeated_cursor(void) { expect_list_error("repeated-cursor", MCPC_ERR_CURSOR_REPEATED, "\"c1\"", 0); }
static void test_cursor_cycle(void) { expect_list_error("cursor-cycle", MCPC_ERR_CURSOR_REPEATED, "\"A\"", 0); }
static void test_duplicate_names(void) { expect_list_error("duplicate-names", MCPC_ERR_DUPLICATE_TOOL, "\"echo\"", 0); }
static void test_page_limit(void) { expect_list_error("endless-pages", MCPC_ERR_TOO_MANY_PAGES, "10 pages", 10); }

static void test_calls(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    size_t len = 0;

    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"hello\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, &len), "hello") == 0 && len == 5);
    CHECK(mcpc_result_structured_json(r) == NULL);
    CHECK(!mcpc_result_is_error(r));
    CHECK(mcpc_result_text_count(r) == 1);
    mcpc_result_free(r);

    CHECK_STATUS(mcpc_client_call_tool(c, "add", "{\"a\":2,\"b\":3}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_structured_json(r), "{\"sum\":5}") == 0);
    CHECK(r && strstr(mcpc_result_json(r), "\"structuredContent\"") != NULL);
    mcpc_result_free(r);

    /* Text with an embedded NUL comes out whole, with its length. */
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"a\\u0000b\"}", NULL, &r), MCPC_OK);
    const char *t = mcpc_result_text(r, &len);
    CHECK(len == 3 && t[0] == 'a' && t[1] == 0 && t[2] == 'b');
    mcpc_result_free(r);

    /* Non-text blocks are kept in the result JSON; text blocks come out in order. */
    CHECK_STATUS(mcpc_client_call_tool(c, "multi", NULL, NULL, &r), MCPC_OK);
    CHECK(mcpc_result_text_count(r) == 2);
    CHECK(strcmp(mcpc_result_text(r, NULL), "one\ntwo") == 0);
    CHECK(strcmp(mcpc_result_text_at(r, 1, &len), "two") == 0 && len == 3);
    CHECK(mcpc_result_text_at(r, 2, &len) == NULL);
    CHECK(strstr(mcpc_result_json(r), "\"image/png\"") != NULL);
    mcpc_result_free(r);

    /* A tool failure is an error status, with the result handed out. */
    CHECK_STATUS(mcpc_client_call_tool(c, "fail", "{\"message\":\"boom\"}", NULL, &r), MCPC_ERR_TOOL);
    CHECK(r != NULL && mcpc_result_is_error(r));
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "boom") == 0);
    CHECK(strstr(mcpc_last_error_message(), "boom") != NULL);
    mcpc_result_free(r);

    /* A JSON-RPC error is its own status, with its code. */
    r = (mcpc_result_t *)1;
    CHECK_STATUS(mcpc_client_call_tool(c, "no_such_tool", "{}", NULL, &r), MCPC_ERR_RPC);
    CHECK(r == NULL);
    CHECK(mcpc_last_error_rpc_code() == -32602);
    CHECK(strstr(mcpc_last_error_message(), "no_such_tool") != NULL);

    /* Bad arguments from the caller never reach the server. */
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "[1,2]", NULL, &r), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":", NULL, &r), MCPC_ERR_INVALID_ARG);
    CHECK(!file_contains(log_path, "[1,2]"));
    close_and_check_cleanup(c);
}

/* A request and a notification by method name: results as the server sent them,
 * JSON-RPC errors with their code, and what the session owns refused. */
struct request_done {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    mcpc_status_t status;
    char *json;
};

static void on_request_done(void *ud, mcpc_status_t st, char *json, const char *msg) {
    (void)msg;
    struct request_done *d = ud;
    pthread_mutex_lock(&d->mu);
    d->status = st;
    d->json = json;
    d->done++;
    pthread_cond_signal(&d->cv);
    pthread_mutex_unlock(&d->mu);
}

static void test_generic_request(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    char *json = NULL;
    CHECK_STATUS(mcpc_client_request(c, "tools/list", NULL, NULL, &json), MCPC_OK);
    CHECK(json && json[0] == '{' && strstr(json, "\"tools\"") && strstr(json, "\"echo\""));
    mcpc_string_free(json);
    json = NULL;
    CHECK_STATUS(mcpc_client_request(c, "tools/call", "{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3}}", NULL, &json),
                 MCPC_OK);
    CHECK(json && strstr(json, "\"sum\":5"));
    mcpc_string_free(json);
    json = (char *)1;
    CHECK_STATUS(mcpc_client_request(c, "x/nothing", "{}", NULL, &json), MCPC_ERR_RPC);
    CHECK(json == NULL && mcpc_last_error_rpc_code() == -32601);
    CHECK(strstr(mcpc_last_error_message(), "x/nothing") != NULL);
    CHECK_STATUS(mcpc_client_request(c, "tools/list", "[1]", NULL, &json), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_request(c, "initialize", NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_request(c, "", NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_request(c, "tools/list", NULL, NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_notify(c, "notifications/x-test", "{\"k\":17}"), MCPC_OK);
    CHECK_STATUS(mcpc_client_notify(c, "notifications/initialized", NULL), MCPC_ERR_INVALID_ARG);
    CHECK(wait_for_file_text(log_path, "notifications/x-test", 5000));

    struct request_done d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPC_OK, NULL};
    mcpc_op_t *op = NULL;
    CHECK_STATUS(mcpc_client_request_async(c, "tools/call", "{\"name\":\"echo\",\"arguments\":{\"text\":\"hi\"}}",
                                           NULL, on_request_done, &d, &op),
                 MCPC_OK);
    pthread_mutex_lock(&d.mu);
    while (!d.done) pthread_cond_wait(&d.cv, &d.mu);
    pthread_mutex_unlock(&d.mu);
    CHECK(d.done == 1 && d.status == MCPC_OK && d.json && strstr(d.json, "\"hi\""));
    mcpc_string_free(d.json);
    mcpc_op_free(op);
    CHECK_STATUS(mcpc_client_request_async(c, "tools/list", NULL, NULL, NULL, &d, NULL), MCPC_ERR_INVALID_ARG);
    close_and_check_cleanup(c);
}

static void test_timeout(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t o = opts_timeout(300);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":20000}", &o, &r), MCPC_ERR_TIMEOUT);
    CHECK(now_ms() - t0 < 10000);
    CHECK(r == NULL);
    CHECK(strstr(mcpc_last_error_message(), "timed out") != NULL);
    /* The server was told, and saw the cancel for that request. */
    CHECK(wait_for_file_text(log_path, "{\"event\":\"cancelled\"", 5000));
    CHECK(file_contains(log_path, "\"method\":\"notifications/cancelled\""));
    CHECK(file_contains(log_path, "\"reason\":\"timed out\""));
    /* The connection still works. */
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"after\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static void test_client_default_timeout(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_timeout_ms(o, 0), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_timeout_ms(o, 5000), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, o, &c), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_timeout_ms(o, 300), MCPC_OK); /* options were copied */
    mcpc_options_free(o);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":400}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

struct cancel_args {
    mcpc_cancel_t *cancel;
    const char *log;
};

static void *cancel_when_call_arrives(void *p) {
    struct cancel_args *a = p;
    /* Wait until the server has the call, then cancel from this thread. */
    wait_for_file_text(a->log, "\"name\":\"slow\"", 10000);
    mcpc_cancel_trigger(a->cancel);
    return NULL;
}

static void test_cancel_from_another_thread(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_cancel_t *cancel = mcpc_cancel_new();
    struct cancel_args a = {cancel, log_path};
    pthread_t th;
    pthread_create(&th, NULL, cancel_when_call_arrives, &a);
    mcpc_call_opts_t o = opts_timeout(30000);
    o.cancel = cancel;
    mcpc_result_t *r = NULL;
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &o, &r), MCPC_ERR_CANCELLED);
    CHECK(now_ms() - t0 < 20000);
    pthread_join(th, NULL);
    CHECK(mcpc_cancel_is_triggered(cancel));
    CHECK(wait_for_file_text(log_path, "{\"event\":\"cancelled\"", 5000));
    CHECK(file_contains(log_path, "\"reason\":\"cancelled by the client\""));
    /* An already-triggered handle cancels at once; idempotent triggers. */
    mcpc_cancel_trigger(cancel);
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &o, &r), MCPC_ERR_CANCELLED);
    mcpc_cancel_free(cancel);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static atomic_int progress_count;
/* The thread blocked in the call, and how many callbacks ran on it. Over stdio the
 * caller's thread reads its own response, but callbacks must still run on mcpc's
 * threads, where a blocking call is refused instead of deadlocking. */
static pthread_t calling_thread;
static atomic_int callbacks_on_caller;

static void note_callback_thread(void) {
    if (pthread_equal(pthread_self(), calling_thread)) atomic_fetch_add(&callbacks_on_caller, 1);
}

static void on_progress(void *ud, double progress, double total, const char *message) {
    (void)message;
    CHECK(ud == &progress_count);
    CHECK(progress >= 1 && total == 4);
    note_callback_thread();
    atomic_fetch_add(&progress_count, 1);
}

static void test_progress(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    atomic_store(&progress_count, 0);
    atomic_store(&callbacks_on_caller, 0);
    calling_thread = pthread_self();
    mcpc_call_opts_t o = opts_timeout(20000);
    o.on_progress = on_progress;
    o.progress_userdata = &progress_count;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":400}", &o, &r), MCPC_OK);
    CHECK(atomic_load(&progress_count) == 4);
    if (mode == MODE_STDIO) CHECK(atomic_load(&callbacks_on_caller) == 0);
    CHECK(file_contains(log_path, "\"progressToken\""));
    mcpc_result_free(r);

    if (mode == MODE_EXCHANGE) { /* progress arrives with the response: no early restarts */
        close_and_check_cleanup(c);
        return;
    }
    /* Progress restarts the timeout: 4 notifications over 2 s keep a 1.5 s timeout alive... */
    o = opts_timeout(1500);
    o.reset_timeout_on_progress = true;
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":2000}", &o, &r), MCPC_OK);
    mcpc_result_free(r);
    /* ...but not past the total limit. */
    o.max_total_ms = 1000;
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":4000}", &o, &r), MCPC_ERR_TIMEOUT);
    close_and_check_cleanup(c);
}

static void test_exit_during_call(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("exit-during-call", NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t o = opts_timeout(30000);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &o, &r), MCPC_ERR_TRANSPORT);
    CHECK(now_ms() - t0 < 5000);
    if (mode == MODE_STDIO) CHECK(strstr(mcpc_last_error_message(), "status 3") != NULL);
    /* Later calls fail fast, with the same cause. */
    t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &o, &r), MCPC_ERR_TRANSPORT);
    CHECK(now_ms() - t0 < 1000);
    close_and_check_cleanup(c);
}

static void test_close_stdout(void) {
    STDIO_ONLY();
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_grace("close-stdout", 200, 200, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t co = opts_timeout(30000);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &co, &r), MCPC_ERR_TRANSPORT);
    CHECK(now_ms() - t0 < 5000);
    CHECK(strstr(mcpc_last_error_message(), "closed its stdout") != NULL);
    close_and_check_cleanup(c);
}

static void test_garbage_and_bad_responses(void) {
    /* A garbage line is dropped on its own, and the call gets its real answer. */
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("garbage-line", NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"ok\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "ok") == 0);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"again\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static void test_malformed_response_fails_its_call_at_once(void) {
    /* A response to a pending call with both result and error, or neither, fails
     * that call at once, naming what was wrong; the valid response that follows is
     * late and dropped, and one to an id nobody asked for is only dropped. */
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("bad-responses", NULL, &c), MCPC_OK);
    if (!c) return;
    const char *args[] = {"{\"text\":\"both\"}", "{\"text\":\"neither\"}"};
    const char *why[] = {"both result and error", "neither result nor error"};
    for (int i = 0; i < 2; i++) {
        mcpc_result_t *r = NULL;
        mcpc_call_opts_t o = opts_timeout(30000);
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", args[i], &o, &r), MCPC_ERR_PROTOCOL);
        CHECK(r == NULL);
        CHECK(now_ms() - t0 < 5000);
        CHECK(strstr(mcpc_last_error_message(), why[i]) != NULL);
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"fine\"}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "fine") == 0);
        mcpc_result_free(r);
    }
    close_and_check_cleanup(c);
}

static void test_long_line(void) {
    /* Over the limit: the connection fails with a clear error. */
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_max_message_size(o, 1024 * 1024), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("long-line", o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_ERR_MESSAGE_TOO_LARGE);
        CHECK(strstr(mcpc_last_error_message(), "1048576") != NULL);
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_ERR_MESSAGE_TOO_LARGE);
        close_and_check_cleanup(c);
    }
    /* Under the default 16 MiB limit, the same 2 MiB line is fine. */
    CHECK_STATUS(connect_demo("long-line", NULL, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        size_t len = 0;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_text(r, &len);
        CHECK(len == 2 * 1024 * 1024);
        mcpc_result_free(r);
        close_and_check_cleanup(c);
    }
}

static atomic_int stderr_lines;
static atomic_int stderr_freed;

static void on_stderr(void *ud, const char *line, size_t len) {
    (void)line;
    (void)len;
    atomic_fetch_add((atomic_int *)ud, 1);
}

static void free_counter(void *ud) { atomic_fetch_add((atomic_int *)ud, 1); }

static void test_stderr_flood(void) {
    STDIO_ONLY();
    atomic_store(&stderr_lines, 0);
    atomic_store(&stderr_freed, 0);
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_stderr_callback(o, on_stderr, &stderr_lines, NULL), MCPC_OK);
    /* A failing registration still frees its userdata, exactly once. */
    CHECK_STATUS(mcpc_options_set_stderr_callback(o, NULL, &stderr_freed, free_counter), MCPC_ERR_INVALID_ARG);
    CHECK(atomic_load(&stderr_freed) == 1);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("stderr-flood", o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"y\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
    /* 1 MiB twice, 16384 lines each: all drained and delivered before close returned. */
    CHECK(atomic_load(&stderr_lines) >= 2 * 16384);

    /* Discarded stderr never stalls the server either. */
    CHECK_STATUS(connect_demo("stderr-flood", NULL, &c), MCPC_OK);
    if (!c) return;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static void test_server_requests_answered(void) {
    ONLY_IN(mode != MODE_EXCHANGE, "a request/response host holds server requests until a response");
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("ping-during-call", NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK(file_contains(log_path, "\"id\":\"srv-1\",\"result\":{}"));
    if (harness_failures_in_test) {
        char *log = read_file(log_path);
        fprintf(stderr, "server log:\n%s\n", log);
        free(log);
    }
    CHECK(file_contains(log_path, "\"id\":\"srv-2\",\"error\":{\"code\":-32601"));
    close_and_check_cleanup(c);
}

struct notes {
    atomic_int message;
    atomic_int list_changed;
    atomic_int deadlock_refused;
    mcpc_client_t *client;
};

static void on_notification(void *ud, const char *method, const char *params) {
    struct notes *n = ud;
    note_callback_thread();
    if (strcmp(method, "notifications/message") == 0 && params && strstr(params, "hello")) {
        atomic_fetch_add(&n->message, 1);
        /* A blocking call from a callback is refused instead of deadlocking. */
        mcpc_result_t *r = NULL;
        if (mcpc_client_call_tool(n->client, "echo", "{}", NULL, &r) == MCPC_ERR_WOULD_DEADLOCK && r == NULL) {
            atomic_fetch_add(&n->deadlock_refused, 1);
        }
    }
    if (strcmp(method, "notifications/tools/list_changed") == 0) {
        atomic_fetch_add(&n->list_changed, 1);
    }
}

static void test_notifications_and_reentry(void) {
    static struct notes n;
    atomic_store(&n.message, 0);
    atomic_store(&n.list_changed, 0);
    atomic_store(&n.deadlock_refused, 0);
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_notification_callback(o, on_notification, &n, NULL), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("notify-during-call", o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    n.client = c;
    atomic_store(&callbacks_on_caller, 0);
    calling_thread = pthread_self();
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    /* Notifications sent before the response are routed before it... */
    CHECK(atomic_load(&n.message) == 1);
    CHECK(atomic_load(&n.list_changed) == 1);
    CHECK(atomic_load(&n.deadlock_refused) == 1);
    /* ...on an mcpc thread, never on the caller's own. */
    if (mode == MODE_STDIO) CHECK(atomic_load(&callbacks_on_caller) == 0);
    /* A response after them is again read on the caller's thread, notifications or not. */
    for (int i = 0; i < 20; i++) {
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"y\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
    }
    CHECK(atomic_load(&n.message) == 21);
    close_and_check_cleanup(c);
}

static atomic_int later_seen;

static void on_later(void *ud, const char *method, const char *params) {
    (void)ud;
    if (strcmp(method, "notifications/message") == 0 && params && strstr(params, "later")) {
        atomic_fetch_add(&later_seen, 1);
    }
}

/* The calling thread reads its own response and disarms the reader task's watch on the
 * pipe while it does; once the call returns, the watch is armed again, so a notification
 * that arrives while nothing is in flight is delivered without waiting for the next call. */
static void test_notification_while_idle(void) {
    STDIO_ONLY();
    atomic_store(&later_seen, 0);
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_notification_callback(o, on_later, NULL, NULL), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("notify-after-call", o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    for (int round = 1; round <= 3; round++) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        double end = now_ms() + 5000;
        while (atomic_load(&later_seen) < round && now_ms() < end) {
            struct timespec ts = {0, 2 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        CHECK(atomic_load(&later_seen) == round);
    }
    close_and_check_cleanup(c);
}

static void test_stubborn_server_is_killed(void) {
    STDIO_ONLY();
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_grace("stubborn", 200, 200, &c), MCPC_OK);
    if (!c) return;
    double t0 = now_ms();
    close_and_check_cleanup(c);
    CHECK(now_ms() - t0 < 5000);
}

static void test_sigterm_reaches_server_despite_host_mask(void) {
    STDIO_ONLY();
    /* A host that handles signals on a sigwait thread blocks them everywhere else;
     * the server must not inherit that mask, or our SIGTERM would not reach it. */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, &old);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_grace("linger", 100, 30000, &c), MCPC_OK);
    if (c) {
        double t0 = now_ms();
        close_and_check_cleanup(c);
        /* SIGTERM ended it; SIGKILL would have come only after 30 s. */
        CHECK(now_ms() - t0 < 15000);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void test_grandchild_is_killed(void) {
    STDIO_ONLY();
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("grandchild", NULL, &c), MCPC_OK);
    if (!c) return;
    CHECK(wait_for_file_text(log_path, "\"event\":\"grandchild\"", 5000));
    char *log = read_file(log_path);
    char *p = strstr(log, "\"pid\":");
    int pid = p ? atoi(p + 6) : 0;
    free(log);
    CHECK(pid > 0);
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/%d", pid);
    CHECK(access(proc, F_OK) == 0);
    close_and_check_cleanup(c);
    /* The grandchild was in the server's process group, and went with it. It is not
     * our child, so its reaping is init's: wait for it to be gone or a zombie. */
    int gone = 0;
    for (int i = 0; i < 400 && !gone; i++) {
        char stat_path[80];
        snprintf(stat_path, sizeof stat_path, "/proc/%d/stat", pid);
        char *st = read_file(stat_path);
        char *cp = strrchr(st, ')');
        gone = st[0] == 0 || (cp && cp[2] == 'Z');
        free(st);
        if (!gone) {
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    CHECK(gone);
}

static void test_caller_errors(void) {
    mcpc_client_t *c = (mcpc_client_t *)1;
    CHECK_STATUS(mcpc_client_connect_stdio(NULL, 1, NULL, &c), MCPC_ERR_INVALID_ARG);
    CHECK(c == NULL);
    const char *argv[] = {"python3"};
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 0, NULL, &c), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 1, NULL, NULL), MCPC_ERR_INVALID_ARG);
    const char bad_utf8[] = {'p', (char)0xff, 'x', 0};
    const char *argv_bad[] = {bad_utf8};
    CHECK_STATUS(mcpc_client_connect_stdio(argv_bad, 1, NULL, &c), MCPC_ERR_INVALID_UTF8);
    CHECK(strstr(mcpc_last_error_message(), "argv[0]") != NULL);
    /* The checks made before anything starts. */
    CHECK_STATUS(mcpc_check_url("https://example.com/mcp"), MCPC_OK);
    CHECK_STATUS(mcpc_check_url("http://[::1]:9/mcp"), MCPC_OK);
    CHECK_STATUS(mcpc_check_url("http://example.com/mcp"), MCPC_ERR_INSECURE_URL);
    CHECK_STATUS(mcpc_check_url("http://u:secret@127.0.0.1/mcp"), MCPC_ERR_INVALID_ARG);
    CHECK(strstr(mcpc_last_error_message(), "secret") == NULL);
    CHECK_STATUS(mcpc_check_url(NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_check_url(bad_utf8), MCPC_ERR_INVALID_UTF8);
    CHECK_STATUS(mcpc_check_arguments(NULL), MCPC_OK);
    CHECK_STATUS(mcpc_check_arguments(" {\"a\":[1]} "), MCPC_OK);
    CHECK_STATUS(mcpc_check_arguments("null"), MCPC_OK);
    CHECK_STATUS(mcpc_check_arguments("[1]"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_check_arguments("{\"a\":"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_check_arguments(bad_utf8), MCPC_ERR_INVALID_UTF8);

    mcpc_result_t *r = NULL;
    mcpc_tool_list_t *l = NULL;
    CHECK_STATUS(mcpc_client_call_tool(NULL, "echo", NULL, NULL, &r), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_list_tools(NULL, NULL, &l), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_close(NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_timeout_ms(NULL, 5), MCPC_ERR_INVALID_ARG);
    CHECK(mcpc_result_json(NULL) == NULL);
    CHECK(mcpc_tool_list_len(NULL) == 0);
    CHECK(mcpc_tool_list_count(NULL) == 0);
    CHECK(mcpc_client_protocol_version(NULL) == NULL);
    mcpc_client_free(NULL);
    mcpc_result_free(NULL);
    mcpc_tool_list_free(NULL);
    mcpc_options_free(NULL);
    mcpc_cancel_free(NULL);
    mcpc_string_free(NULL);
    mcpc_cancel_trigger(NULL);
    CHECK(strcmp(mcpc_status_name(MCPC_ERR_TIMEOUT), "MCPC_ERR_TIMEOUT") == 0);
    CHECK(strcmp(mcpc_status_name(9999), "MCPC_UNKNOWN_STATUS") == 0);
    CHECK(strcmp(mcpc_version(), MCPC_VERSION) == 0);
    /* One number for the preprocessor: 0xMMmmpp. */
#if MCPC_VERSION_NUM >= 0x000100
    CHECK(MCPC_VERSION_NUM == ((MCPC_VERSION_MAJOR << 16) | (MCPC_VERSION_MINOR << 8) | MCPC_VERSION_PATCH));
#else
#error "MCPC_VERSION_NUM is missing, or older than 0.1.0"
#endif

    /* A successful call clears the last error. */
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_timeout_ms(o, 1000), MCPC_OK);
    CHECK(mcpc_last_error_message()[0] == 0);
    CHECK(mcpc_last_error_status() == MCPC_OK);
    mcpc_options_free(o);

    /* Bad per-call options. */
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_call_opts_t co = opts_timeout(-5);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", NULL, &co, &r), MCPC_ERR_INVALID_ARG);
    co = opts_timeout(100);
    co.struct_size = 4;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", NULL, &co, &r), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_call_tool(c, bad_utf8, NULL, NULL, &r), MCPC_ERR_INVALID_UTF8);
    CHECK_STATUS(mcpc_client_call_tool(c, NULL, NULL, NULL, &r), MCPC_ERR_INVALID_ARG);

    /* Double close, and calls after close. */
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{}", NULL, &r), MCPC_ERR_CLOSED);
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_ERR_CLOSED);
    close_and_check_cleanup(c);
}

#define THREADS 8
#define CALLS_PER_THREAD 200

struct worker {
    mcpc_client_t *client;
    int index;
    int ok;
};

static void *worker_main(void *p) {
    struct worker *w = p;
    for (int i = 0; i < CALLS_PER_THREAD; i++) {
        char args[128], want[64];
        snprintf(want, sizeof want, "t%d-c%d", w->index, i);
        snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
        mcpc_result_t *r = NULL;
        if (mcpc_client_call_tool(w->client, "echo", args, NULL, &r) == MCPC_OK &&
            strcmp(mcpc_result_text(r, NULL), want) == 0) {
            w->ok++;
        }
        mcpc_result_free(r);
    }
    return NULL;
}

static void test_many_threads_one_client(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    pthread_t th[THREADS];
    struct worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (struct worker){c, i, 0};
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    int total = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        total += w[i].ok;
    }
    CHECK(total == THREADS * CALLS_PER_THREAD);
    close_and_check_cleanup(c);
}

struct closer {
    mcpc_client_t *client;
    const char *log;
};

static void *close_when_call_arrives(void *p) {
    struct closer *cl = p;
    wait_for_file_text(cl->log, "\"name\":\"slow\"", 10000);
    mcpc_client_close(cl->client);
    return NULL;
}

static void test_close_while_call_in_flight(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    struct closer cl = {c, log_path};
    pthread_t th;
    pthread_create(&th, NULL, close_when_call_arrives, &cl);
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t o = opts_timeout(30000);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &o, &r), MCPC_ERR_CLOSED);
    CHECK(now_ms() - t0 < 20000);
    pthread_join(th, NULL);
    close_and_check_cleanup(c);
}

static void test_no_fd_leak(void) {
    int before = count_fds();
    for (int i = 0; i < 5; i++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
        if (!c) return;
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        close_and_check_cleanup(c);
    }
    CHECK(count_fds() == before);
}

static void test_environment_and_cwd(void) {
    STDIO_ONLY();
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_env(o, "MCPC_DEMO_FAULT", "bad-version"), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_env(o, "A=B", "x"), MCPC_ERR_INVALID_ARG);
    mcpc_client_t *c = NULL;
    /* The fault comes from the environment given to the child. */
    CHECK_STATUS(connect_demo(NULL, o, &c), MCPC_ERR_HANDSHAKE);
    CHECK_STATUS(mcpc_options_set_env(o, "MCPC_DEMO_FAULT", NULL), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_cwd(o, "/nonexistent-dir"), MCPC_OK);
    CHECK_STATUS(connect_demo(NULL, o, &c), MCPC_ERR_SPAWN);
    mcpc_options_free(o);
}

/* ---- hostile servers ---- */

static void test_bad_messages_fail_only_themselves(void) {
    ONLY_IN(mode != MODE_EXCHANGE, "a request/response host hands over the first line with the id as the response");
    /* Invalid UTF-8, a duplicate response, a response with a mistyped (string) id: each
     * is dropped on its own, and the call gets its real answer. */
    const char *faults[] = {"invalid-utf8", "dup-response", "string-id"};
    for (int i = 0; i < 3; i++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_demo(faults[i], NULL, &c), MCPC_OK);
        if (!c) continue;
        for (int k = 0; k < 2; k++) {
            mcpc_result_t *r = NULL;
            CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"real\"}", NULL, &r), MCPC_OK);
            CHECK(r && strcmp(mcpc_result_text(r, NULL), "real") == 0);
            mcpc_result_free(r);
        }
        close_and_check_cleanup(c);
    }
}

static void test_bad_result_fails_its_call(void) {
    /* A response whose result is not valid JSON fails its own call at once, with
     * MCPC_ERR_PROTOCOL, and the connection goes on. */
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("bad-result", NULL, &c), MCPC_OK);
    if (!c) return;
    for (int k = 0; k < 2; k++) {
        mcpc_result_t *r = NULL;
        mcpc_call_opts_t o = opts_timeout(30000);
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"bad\"}", &o, &r), MCPC_ERR_PROTOCOL);
        CHECK(r == NULL);
        CHECK(now_ms() - t0 < 5000);
        CHECK(strstr(mcpc_last_error_message(), "tools/call result is malformed") != NULL);
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"good\"}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "good") == 0);
        mcpc_result_free(r);
    }
    close_and_check_cleanup(c);
}

static void test_truncated_message_then_exit(void) {
    ONLY_IN(mode != MODE_EXCHANGE, "a request/response host hands over the truncated line as the response");
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("truncate-exit", NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t o = opts_timeout(30000);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &o, &r), MCPC_ERR_TRANSPORT);
    CHECK(now_ms() - t0 < 5000);
    if (mode == MODE_STDIO) {
        CHECK(strstr(mcpc_last_error_message(), "in the middle of a message") != NULL);
        CHECK(strstr(mcpc_last_error_message(), "status 4") != NULL);
    }
    close_and_check_cleanup(c);
}

static atomic_int flood_seen;

static void on_flood(void *ud, const char *method, const char *params) {
    (void)ud;
    (void)params;
    if (strcmp(method, "notifications/message") == 0) atomic_fetch_add(&flood_seen, 1);
}

static void test_notification_flood(void) {
    atomic_store(&flood_seen, 0);
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_notification_callback(o, on_flood, NULL, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("notification-flood", o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"after the flood\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "after the flood") == 0);
    mcpc_result_free(r);
    /* All delivered, in order, before the response. */
    CHECK(atomic_load(&flood_seen) == 20000);
    close_and_check_cleanup(c);
}

static void test_write_to_closed_pipe_is_an_error_not_sigpipe(void) {
    /* The server closes its stdin but lives on: the next request is written from this
     * thread straight into a pipe with no reader. SIGPIPE is at its default here, so
     * the process would die if mcpc let the signal through. */
    STDIO_ONLY();
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_grace("close-stdin", 100, 2000, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"last\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    mcpc_call_opts_t co = opts_timeout(5000);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &co, &r), MCPC_ERR_TRANSPORT);
    CHECK(strstr(mcpc_last_error_message(), "Broken pipe") != NULL);
    /* No SIGPIPE is left pending on this thread either. */
    sigset_t pending;
    sigpending(&pending);
    CHECK(!sigismember(&pending, SIGPIPE));
    close_and_check_cleanup(c);
}

static void test_server_that_stops_reading(void) {
    STDIO_ONLY();
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_grace("stop-reading", 200, 2000, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t co = opts_timeout(300);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &co, &r), MCPC_ERR_TIMEOUT);
    /* Big messages fill the pipe it no longer reads: calls still end at their deadline. */
    size_t big = 512 * 1024;
    char *args = malloc(big + 32);
    strcpy(args, "{\"text\":\"");
    memset(args + 9, 'y', big);
    strcpy(args + 9 + big, "\"}");
    for (int i = 0; i < 4; i++) {
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", args, &co, &r), MCPC_ERR_TIMEOUT);
        CHECK(now_ms() - t0 < 5000);
    }
    free(args);
    /* And close is bounded: stdin never drains, so SIGTERM ends it. */
    double t0 = now_ms();
    close_and_check_cleanup(c);
    CHECK(now_ms() - t0 < 10000);
}

/* ---- protocol revision 2026-07-28, and choosing between the generations ---- */

static int log_lines_with(const char *a, const char *b) {
    char *s = read_file(log_path);
    int n = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) n += strstr(line, a) && (!b || strstr(line, b));
    free(s);
    return n;
}

static void test_modern_server_is_spoken_to_in_2026(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_args(NULL, "--era=modern", NULL, &c), MCPC_OK);
    if (!c) return;
    CHECK(strcmp(mcpc_client_protocol_version(c), "2026-07-28") == 0);
    CHECK(strcmp(mcpc_client_negotiated_by(c), "discover") == 0);
    char *info = NULL;
    CHECK_STATUS(mcpc_client_server_info(c, &info), MCPC_OK);
    CHECK(info && strstr(info, "\"supportedVersions\""));
    mcpc_string_free(info);
    mcpc_tool_list_t *l = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
    CHECK(mcpc_tool_list_len(l) == 32);
    mcpc_tool_list_free(l);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"new\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "new") == 0);
    mcpc_result_free(r);
    /* structuredContent may be any JSON value in 2026-07-28. */
    CHECK_STATUS(mcpc_client_call_tool(c, "any_structured", NULL, NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_structured_json(r), "[1,2,3]") == 0);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_client_call_tool(c, "fail", "{\"message\":\"m\"}", NULL, &r), MCPC_ERR_TOOL);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_client_call_tool(c, "nope", "{}", NULL, &r), MCPC_ERR_RPC);
    /* No initialize; every request carries the version, capabilities and client info. */
    CHECK(log_lines_with("\"method\":\"initialize\"", NULL) == 0);
    CHECK(log_lines_with("\"method\":\"notifications/initialized\"", NULL) == 0);
    int requests = log_lines_with("\"jsonrpc\":\"2.0\",\"id\":", "\"method\"");
    CHECK(requests >= 10);
    CHECK(log_lines_with("\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"",
                         "\"io.modelcontextprotocol/clientCapabilities\":{},\"io.modelcontextprotocol/clientInfo\":{\"name\":\"mcpc\"") == requests);
    close_and_check_cleanup(c);
}

/* The extensions the host declares reach the server in both generations (in
 * initialize, and in every request's client capabilities under 2026-07-28), with their
 * settings as written; the server's come back as the same bytes it sent. */
static void test_extensions_declared_and_offered(void) {
    const char *eras[] = {NULL, "--era=modern"};
    const char *declared = "\"extensions\":{\"io.modelcontextprotocol/tasks\":{},\"dev.example/x\":{\"a\": [3]}}";
    for (int i = 0; i < 2; i++) {
        mcpc_options_t *o = mcpc_options_new();
        CHECK_STATUS(mcpc_options_add_extension(o, "io.modelcontextprotocol/tasks", NULL), MCPC_OK);
        CHECK_STATUS(mcpc_options_add_extension(o, "dev.example/x", "{\"a\":[1,2]}"), MCPC_OK);
        CHECK_STATUS(mcpc_options_add_extension(o, "dev.example/x", "{\"a\": [3]}"), MCPC_OK); /* replaces */
        CHECK_STATUS(mcpc_options_add_extension(o, "dev.example/y", "[1]"), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_options_add_extension(o, "dev.example/y", "7"), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_options_add_extension(o, "dev.example/y", "{"), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_options_add_extension(o, "no-slash", NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_options_add_extension(o, "a b/c", NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_options_add_extension(o, NULL, NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_options_add_extension(NULL, "a/b", NULL), MCPC_ERR_INVALID_ARG);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_demo_args(NULL, eras[i], o, &c), MCPC_OK);
        mcpc_options_free(o);
        if (!c) continue;
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        if (i == 0) {
            CHECK(log_lines_with("\"method\":\"initialize\"", declared) == 1);
        } else {
            int requests = log_lines_with("\"jsonrpc\":\"2.0\",\"id\":", "\"method\"");
            CHECK(requests >= 2);
            CHECK(log_lines_with("\"io.modelcontextprotocol/clientCapabilities\":{", declared) == requests);
        }
        CHECK(file_contains(log_path, "{\"event\":\"client-extensions\""));
        char *ext = NULL, *info = NULL;
        CHECK_STATUS(mcpc_client_server_extensions(c, &ext), MCPC_OK);
        CHECK_STATUS(mcpc_client_server_info(c, &info), MCPC_OK);
        CHECK(ext && strstr(ext, "\"dev.mcpc/demo\""));
        CHECK(ext && info && strstr(info, ext)); /* the bytes the server sent */
        mcpc_string_free(ext);
        mcpc_string_free(info);
        CHECK_STATUS(mcpc_client_server_extensions(c, NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_server_extensions(NULL, &ext), MCPC_ERR_INVALID_ARG);
        CHECK(ext == NULL);
        close_and_check_cleanup(c);
    }
}

static void test_dual_server_prefers_2026(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_args(NULL, "--era=dual", NULL, &c), MCPC_OK);
    if (!c) return;
    CHECK(strcmp(mcpc_client_protocol_version(c), "2026-07-28") == 0);
    CHECK(strcmp(mcpc_client_negotiated_by(c), "discover") == 0);
    close_and_check_cleanup(c);
    /* Legacy mode still uses initialize with it. */
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_negotiation(o, 7), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(connect_demo_args(NULL, "--era=dual", o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (!c) return;
    CHECK(strcmp(mcpc_client_protocol_version(c), "2025-11-25") == 0);
    CHECK(strcmp(mcpc_client_negotiated_by(c), "initialize") == 0);
    CHECK(log_lines_with("server/discover", NULL) == 0);
    close_and_check_cleanup(c);
}

static void test_legacy_server_falls_back(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    CHECK(strcmp(mcpc_client_protocol_version(c), "2025-11-25") == 0);
    CHECK(strcmp(mcpc_client_negotiated_by(c), "fallback") == 0);
    /* The probe came first, answered -32601; then initialize; later requests have no 2026 _meta. */
    CHECK(log_lines_with("\"method\":\"server/discover\"", NULL) == 1);
    CHECK(log_lines_with("\"method\":\"initialize\"", NULL) == 1);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK(log_lines_with("\"method\":\"tools/call\"", "io.modelcontextprotocol") == 0);
    close_and_check_cleanup(c);
}

static void test_pinned_versions(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_protocol_version(o, "2026-07-28"), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_args(NULL, "--era=modern", o, &c), MCPC_OK);
    if (c) {
        CHECK(strcmp(mcpc_client_negotiated_by(c), "pinned") == 0);
        close_and_check_cleanup(c);
    }
    /* Pinned to 2026-07-28, a legacy server is an error, never a fallback. */
    CHECK(connect_demo(NULL, o, &c) != MCPC_OK);
    CHECK(c == NULL);
    CHECK(log_lines_with("\"method\":\"initialize\"", NULL) == 0);
    CHECK(count_processes_with(log_path) == 0);
    /* Pinned to an older version, a dual server gets initialize with it. */
    CHECK_STATUS(mcpc_options_set_protocol_version(o, "2025-06-18"), MCPC_OK);
    CHECK_STATUS(connect_demo_args(NULL, "--era=dual", o, &c), MCPC_OK);
    if (c) {
        CHECK(strcmp(mcpc_client_protocol_version(c), "2025-06-18") == 0);
        CHECK(strcmp(mcpc_client_negotiated_by(c), "pinned") == 0);
        close_and_check_cleanup(c);
    }
    /* A modern-only server refuses initialize: a clear unsupported-version error. */
    CHECK_STATUS(mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY), MCPC_OK);
    CHECK_STATUS(connect_demo_args(NULL, "--era=modern", o, &c), MCPC_ERR_UNSUPPORTED_VERSION);
    CHECK(strstr(mcpc_last_error_message(), "2026-07-28") != NULL);
    CHECK(mcpc_last_error_rpc_code() == -32022);
    mcpc_options_free(o);
}

static void test_input_required_rounds(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_args(NULL, "--era=modern", NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "needs_state", NULL, NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "done after 3 rounds") == 0);
    mcpc_result_free(r);
    /* Three rounds, each a new request id, echoing the state exactly. */
    CHECK(log_lines_with("\"event\":\"mrtr\"", NULL) == 3);
    CHECK(log_lines_with("\"event\":\"mrtr\",\"requestState\":null", NULL) == 1);
    CHECK(log_lines_with("\"requestState\":\"state-1\"", "\"method\":\"tools/call\"") == 1);
    CHECK(log_lines_with("\"requestState\":\"state-2\"", "\"method\":\"tools/call\"") == 1);
    /* Bounded: a server that never completes is an error after 10 retries. */
    r = (mcpc_result_t *)1;
    CHECK_STATUS(mcpc_client_call_tool(c, "endless_state", NULL, NULL, &r), MCPC_ERR_INPUT_REQUIRED);
    CHECK(r == NULL);
    CHECK(log_lines_with("\"name\":\"endless_state\"", NULL) == 11);
    /* The client declares no capabilities; a server that asks for elicitation anyway
     * gets a decline, as from a user who gave nothing, and the call completes. */
    CHECK_STATUS(mcpc_client_call_tool(c, "wants_input", NULL, NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "no name") == 0);
    mcpc_result_free(r);
    CHECK(log_lines_with("\"inputResponses\":{\"q1\":{\"action\":\"decline\"}}", "\"requestState\":\"x\"") == 1);
    close_and_check_cleanup(c);
}

static void test_empty_string_cursor(void) {
    const char *eras[] = {"--era=modern", "--era=legacy"};
    for (int i = 0; i < 2; i++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_demo_args("empty-cursor", eras[i], NULL, &c), MCPC_OK);
        if (!c) continue;
        mcpc_tool_list_t *l = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
        CHECK(mcpc_tool_list_len(l) == (i == 0 ? 32 : 25));
        mcpc_tool_list_free(l);
        CHECK(log_lines_with("\"cursor\":\"\"", NULL) == 1);
        close_and_check_cleanup(c);
    }
}

static void test_modern_timeout_sends_cancel(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_args(NULL, "--era=modern", NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    mcpc_call_opts_t o = opts_timeout(300);
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":20000}", &o, &r), MCPC_ERR_TIMEOUT);
    CHECK(wait_for_file_text(log_path, "{\"event\":\"cancelled\"", 5000));
    CHECK(log_lines_with("notifications/cancelled", "\"reason\":\"timed out\"") == 1);
    close_and_check_cleanup(c);
}

static void test_probe_fallback_branches(void) {
    STDIO_ONLY();
    /* A server that dies on the probe is started again, once, and spoken to with initialize. */
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo("exit-on-discover", NULL, &c), MCPC_OK);
    if (c) {
        CHECK(strcmp(mcpc_client_negotiated_by(c), "fallback") == 0);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        close_and_check_cleanup(c);
    }
    /* A server that ignores the probe: silence on stdio means an older server. */
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_timeout_ms(o, 1500), MCPC_OK);
    double t0 = now_ms();
    CHECK_STATUS(connect_demo("silent-discover", o, &c), MCPC_OK);
    CHECK(now_ms() - t0 < 10000);
    mcpc_options_free(o);
    if (c) {
        CHECK(strcmp(mcpc_client_negotiated_by(c), "fallback") == 0);
        close_and_check_cleanup(c);
    }
}

/* Connects to the demo server of `era` (via MCPC_DEMO_ERA) with `fault` and `extra`,
 * a probe window of 300 ms and a connect timeout of 5 s; checks the version chosen. */
static void expect_negotiated(const char *era, const char *fault, const char *extra, const char *version,
                              const char *how) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_probe_window_ms(o, 300), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_timeout_ms(o, 5000), MCPC_OK);
    setenv("MCPC_DEMO_ERA", era, 1);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo_args(fault, extra, o, &c), MCPC_OK);
    unsetenv("MCPC_DEMO_ERA");
    mcpc_options_free(o);
    if (!c) {
        fprintf(stderr, "  era %s, fault %s, %s\n", era, fault ? fault : "none", extra);
        return;
    }
    if (strcmp(mcpc_client_protocol_version(c), version) != 0 || strcmp(mcpc_client_negotiated_by(c), how) != 0) {
        fprintf(stderr, "  era %s, %s: got %s by %s\n", era, extra, mcpc_client_protocol_version(c),
                mcpc_client_negotiated_by(c));
        CHECK(0);
    }
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static void test_negotiation_survives_slow_servers(void) {
    /* Servers of each generation that start reading late: after the probe window
     * initialize goes out too, and whatever answers first shows the generation. */
    const char *starts[] = {"--start-delay=0", "--start-delay=1000"};
    for (int i = 0; i < 2; i++) {
        expect_negotiated("legacy", NULL, starts[i], "2025-11-25", "fallback");
        expect_negotiated("legacy", "silent-discover", starts[i], "2025-11-25", "fallback");
        expect_negotiated("modern", NULL, starts[i], "2026-07-28", "discover");
        expect_negotiated("dual", NULL, starts[i], "2026-07-28", "discover");
    }
    /* The probe answered after initialize was refused with -32022 listing 2026-07-28. */
    expect_negotiated("modern", NULL, "--discover-delay=1000", "2026-07-28", "discover");
}

/* ---- tests of the seam itself ---- */

static void test_seam_send_failure(void) {
    ONLY_IN(mode != MODE_STDIO, "tests the caller-supplied transport");
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_result_t *r = NULL;
    atomic_store(&host->fail_sends, 1);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_ERR_TRANSPORT);
    CHECK(strstr(mcpc_last_error_message(), "returned 7") != NULL);
    /* The failure was that message's only: the connection goes on. */
    atomic_store(&host->fail_sends, 0);
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    close_and_check_cleanup(c);
}

static void test_seam_garbage_and_late_delivery(void) {
    ONLY_IN(mode != MODE_STDIO, "tests the caller-supplied transport");
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_demo(NULL, NULL, &c), MCPC_OK);
    if (!c) return;
    mcpc_transport_t *t = host->transport;
    const char *garbage = "not json";
    const char *unknown_id = "{\"id\":99999,\"result\":{}}";
    const char *both = "{\"id\":1,\"result\":{},\"error\":{\"code\":1,\"message\":\"x\"}}";
    CHECK_STATUS(mcpc_transport_deliver(t, garbage, strlen(garbage)), MCPC_ERR_PROTOCOL);
    CHECK_STATUS(mcpc_transport_deliver(t, unknown_id, strlen(unknown_id)), MCPC_OK);
    CHECK_STATUS(mcpc_transport_deliver(t, both, strlen(both)), MCPC_ERR_PROTOCOL);
    CHECK_STATUS(mcpc_transport_deliver(t, NULL, 3), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_transport_deliver(NULL, "{}", 2), MCPC_ERR_INVALID_ARG);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"fine\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    /* A transport serves one client. */
    mcpc_client_t *second = NULL;
    CHECK_STATUS(mcpc_client_connect_transport(t, NULL, &second), MCPC_ERR_INVALID_ARG);
    CHECK(second == NULL);
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    /* After close, deliveries are refused and the close callback ran once. */
    CHECK_STATUS(mcpc_transport_deliver(t, unknown_id, strlen(unknown_id)), MCPC_ERR_CLOSED);
    CHECK(atomic_load(&host->close_calls) == 1);
    close_and_check_cleanup(c);
}

static atomic_int unattached_frees;
static mcpc_client_t *c_unused;

static int32_t never_send(void *ud, const char *data, size_t len) {
    (void)ud;
    (void)data;
    (void)len;
    return 0;
}

static void count_free(void *ud) { atomic_fetch_add((atomic_int *)ud, 1); }

static void test_seam_caller_errors(void) {
    ONLY_IN(mode != MODE_STDIO, "tests the caller-supplied transport");
    mcpc_transport_t *t = (mcpc_transport_t *)1;
    atomic_store(&unattached_frees, 0);
    CHECK_STATUS(mcpc_transport_new(NULL, NULL, &unattached_frees, count_free, &t), MCPC_ERR_INVALID_ARG);
    CHECK(t == NULL);
    CHECK(atomic_load(&unattached_frees) == 1); /* freed even though the call failed */
    CHECK_STATUS(mcpc_transport_new(never_send, NULL, &unattached_frees, count_free, &t), MCPC_OK);
    /* Nothing attached yet: deliveries have nowhere to go. */
    CHECK_STATUS(mcpc_transport_deliver(t, "{}", 2), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_transport_end(t, "x"), MCPC_ERR_INVALID_ARG);
    mcpc_transport_free(t);
    CHECK(atomic_load(&unattached_frees) == 2);
    mcpc_transport_free(NULL);
    mcpc_exchange_fail(NULL, "x");
    CHECK_STATUS(mcpc_exchange_complete(NULL, NULL, 0), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_connect_transport(NULL, NULL, &c_unused), MCPC_ERR_INVALID_ARG);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    const char *m = getenv("MCPC_TEST_TRANSPORT");
    if (m && strcmp(m, "seam") == 0) mode = MODE_SEAM;
    else if (m && strcmp(m, "exchange") == 0) mode = MODE_EXCHANGE;
    else if (m && *m && strcmp(m, "stdio") != 0) {
        fprintf(stderr, "unknown MCPC_TEST_TRANSPORT %s\n", m);
        return 2;
    }
    fprintf(stderr, "transport: %s\n", mode == MODE_STDIO ? "stdio" : mode == MODE_SEAM ? "seam" : "exchange");
    /* A C host must not die of SIGPIPE when a server goes away: keep the default
     * disposition here on purpose. */
    signal(SIGPIPE, SIG_DFL);
    RUN(test_handshake);
    RUN(test_pinned_version_and_client_info);
    RUN(test_handshake_failures);
    RUN(test_spawn_failure);
    RUN(test_pagination);
    RUN(test_repeated_cursor);
    RUN(test_cursor_cycle);
    RUN(test_duplicate_names);
    RUN(test_page_limit);
    RUN(test_calls);
    RUN(test_generic_request);
    RUN(test_timeout);
    RUN(test_client_default_timeout);
    RUN(test_cancel_from_another_thread);
    RUN(test_progress);
    RUN(test_exit_during_call);
    RUN(test_close_stdout);
    RUN(test_garbage_and_bad_responses);
    RUN(test_malformed_response_fails_its_call_at_once);
    RUN(test_long_line);
    RUN(test_stderr_flood);
    RUN(test_server_requests_answered);
    RUN(test_notifications_and_reentry);
    RUN(test_notification_while_idle);
    RUN(test_stubborn_server_is_killed);
    RUN(test_sigterm_reaches_server_despite_host_mask);
    RUN(test_grandchild_is_killed);
    RUN(test_caller_errors);
    RUN(test_many_threads_one_client);
    RUN(test_close_while_call_in_flight);
    RUN(test_no_fd_leak);
    RUN(test_environment_and_cwd);
    RUN(test_bad_messages_fail_only_themselves);
    RUN(test_bad_result_fails_its_call);
    RUN(test_truncated_message_then_exit);
    RUN(test_notification_flood);
    RUN(test_write_to_closed_pipe_is_an_error_not_sigpipe);
    RUN(test_server_that_stops_reading);
    RUN(test_modern_server_is_spoken_to_in_2026);
    RUN(test_extensions_declared_and_offered);
    RUN(test_dual_server_prefers_2026);
    RUN(test_legacy_server_falls_back);
    RUN(test_pinned_versions);
    RUN(test_input_required_rounds);
    RUN(test_empty_string_cursor);
    RUN(test_modern_timeout_sends_cancel);
    RUN(test_probe_fallback_branches);
    RUN(test_negotiation_survives_slow_servers);
    RUN(test_seam_send_failure);
    RUN(test_seam_garbage_and_late_delivery);
    RUN(test_seam_caller_errors);
    return harness_finish();
}
