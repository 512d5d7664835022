/* mcpc_options_set_restart: a stdio server that dies is started again, a bounded
 * number of times, and what was in flight says it may be sent again. The demo
 * server's "exit-on-crash" fault exits on an echo of "crash" and answers an echo
 * of "pid" with its process id. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mcpc.h>

#include "harness.h"

static char log_path[128];
static int conn_counter;

static const char *env_or(const char *name, const char *fallback) {
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

/* Connects to the crashing demo server, started again at most `max` times after
 * `backoff_ms`; `era` NULL or an --era= argument. */
static mcpc_status_t connect_crashy(uint32_t max, int64_t backoff_ms, const char *era, mcpc_client_t **out) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-restart-%d-%d.log", (int)getpid(), ++conn_counter);
    unlink(log_path);
    const char *argv[7];
    size_t argc = 0;
    argv[argc++] = env_or("MCPC_PYTHON", "python3");
    argv[argc++] = env_or("MCPC_DEMO_SERVER", "demo/server.py");
    argv[argc++] = "--log";
    argv[argc++] = log_path;
    argv[argc++] = "--fault=exit-on-crash";
    if (era) argv[argc++] = era;
    mcpc_options_t *o = mcpc_options_new();
    if (max > 0) CHECK_STATUS(mcpc_options_set_restart(o, max, backoff_ms), MCPC_OK);
    mcpc_status_t st = mcpc_client_connect_stdio(argv, argc, o, out);
    mcpc_options_free(o);
    return st;
}

/* An echo of `text`: its status, and the text of the result (copied into `buf`). */
static mcpc_status_t echo(mcpc_client_t *c, const char *text, char *buf, size_t len) {
    char args[64];
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = 30000;
    mcpc_result_t *r = NULL;
    mcpc_status_t st = mcpc_client_call_tool(c, "echo", args, &o, &r);
    buf[0] = '\0';
    if (st == MCPC_OK) snprintf(buf, len, "%s", mcpc_result_text(r, NULL));
    mcpc_result_free(r);
    return st;
}

/* Connects through `sh -c SCRIPT sh LOG PYTHON SERVER`: the script decides, by a
 * marker file, what the first start and every later start run. */
static mcpc_status_t connect_script(const char *script, uint32_t max, int64_t backoff_ms, mcpc_client_t **out) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-restart-%d-%d.log", (int)getpid(), ++conn_counter);
    unlink(log_path);
    char marker[160];
    snprintf(marker, sizeof marker, "%s.started", log_path);
    unlink(marker);
    const char *argv[] = {"sh", "-c", script, "sh", log_path, env_or("MCPC_PYTHON", "python3"),
                          env_or("MCPC_DEMO_SERVER", "demo/server.py")};
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_restart(o, max, backoff_ms), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_close_grace_ms(o, 200, 200), MCPC_OK);
    mcpc_status_t st = mcpc_client_connect_stdio(argv, 7, o, out);
    mcpc_options_free(o);
    return st;
}

/* The first start is the crashing demo server; later starts run `later`. */
#define FIRST_THEN(later)                                                                \
    "if [ -e \"$1.started\" ]; then " later "; fi; touch \"$1.started\"; "                  \
    "exec \"$2\" \"$3\" --log \"$1\" --fault=exit-on-crash"

/* Closes and frees the client; no server process (the first or a restarted one)
 * and no zombie is left. */
static void close_and_check_cleanup(mcpc_client_t *c) {
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
    CHECK(count_processes_with(log_path) == 0);
    CHECK(count_zombie_children() == 0);
    char marker[160];
    snprintf(marker, sizeof marker, "%s.started", log_path);
    unlink(marker);
    unlink(log_path);
}

static void restarted_in(const char *era) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_crashy(2, 50, era, &c), MCPC_OK);
    if (!c) return;
    const char *version = mcpc_client_protocol_version(c);
    char first[32], second[32], buf[64];
    CHECK_STATUS(echo(c, "pid", first, sizeof first), MCPC_OK);
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_SERVER_EXITED);
    CHECK(strstr(mcpc_last_error_message(), "started again") != NULL);
    /* The next call waits for the new process, which negotiated again. */
    CHECK_STATUS(echo(c, "pid", second, sizeof second), MCPC_OK);
    CHECK(first[0] != '\0' && second[0] != '\0' && strcmp(first, second) != 0);
    CHECK(strcmp(mcpc_client_protocol_version(c), version) == 0);
    /* Both processes were asked the protocol: the log (shared by the two) holds two handshakes. */
    char *log = read_file(log_path);
    int handshakes = 0;
    for (const char *p = log; p && (p = strstr(p, era ? "\"server/discover\"" : "\"initialize\"")) != NULL; p++)
        handshakes++;
    CHECK(handshakes >= 2);
    free(log);
    CHECK_STATUS(echo(c, "still here", buf, sizeof buf), MCPC_OK);
    CHECK(strcmp(buf, "still here") == 0);
    close_and_check_cleanup(c);
}

static void test_a_dead_server_is_started_again(void) { restarted_in(NULL); }

static void test_a_dead_modern_server_is_started_again(void) { restarted_in("--era=modern"); }

static void test_restarts_run_out(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_crashy(1, 20, NULL, &c), MCPC_OK);
    if (!c) return;
    char buf[64];
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_SERVER_EXITED);
    CHECK_STATUS(echo(c, "pid", buf, sizeof buf), MCPC_OK);
    /* The last restart is spent: this death is final, with its own cause. */
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_TRANSPORT);
    CHECK(strstr(mcpc_last_error_message(), "status 3") != NULL);
    double t0 = now_ms();
    CHECK_STATUS(echo(c, "pid", buf, sizeof buf), MCPC_ERR_TRANSPORT);
    CHECK(now_ms() - t0 < 1000);
    close_and_check_cleanup(c);
}

static void test_off_by_default(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_crashy(0, 0, NULL, &c), MCPC_OK);
    if (!c) return;
    char buf[64];
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_TRANSPORT);
    CHECK_STATUS(echo(c, "pid", buf, sizeof buf), MCPC_ERR_TRANSPORT);
    close_and_check_cleanup(c);
}

struct done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int finished;
    mcpc_status_t status;
};

static void on_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    (void)msg;
    struct done *d = ud;
    mcpc_result_free(r);
    pthread_mutex_lock(&d->lock);
    d->status = st;
    d->finished = 1;
    pthread_cond_signal(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

static void test_an_async_call_in_flight_fails_as_server_exited(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_crashy(1, 20, NULL, &c), MCPC_OK);
    if (!c) return;
    struct done d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPC_OK};
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", "{\"text\":\"crash\"}", NULL, on_done, &d, NULL), MCPC_OK);
    pthread_mutex_lock(&d.lock);
    while (!d.finished) pthread_cond_wait(&d.cond, &d.lock);
    pthread_mutex_unlock(&d.lock);
    CHECK_STATUS(d.status, MCPC_ERR_SERVER_EXITED);
    char buf[64];
    CHECK_STATUS(echo(c, "after", buf, sizeof buf), MCPC_OK);
    close_and_check_cleanup(c);
}

static void test_close_while_waiting_to_restart(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_crashy(3, 60000, NULL, &c), MCPC_OK);
    if (!c) return;
    char buf[64];
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_SERVER_EXITED);
    /* The restart waits a minute: close ends the wait, and starts nothing; what
     * follows is closed, not "may be sent again". */
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    CHECK(now_ms() - t0 < 5000);
    CHECK_STATUS(echo(c, "pid", buf, sizeof buf), MCPC_ERR_CLOSED);
    close_and_check_cleanup(c);
}

static void test_restarts_that_fail_to_start_end_with_the_cause(void) {
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_script(FIRST_THEN("exit 7"), 2, 20, &c), MCPC_OK);
    if (!c) return;
    char buf[64];
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_SERVER_EXITED);
    /* Both restarts fail to start: the call waits for them, then has the final cause. */
    CHECK_STATUS(echo(c, "pid", buf, sizeof buf), MCPC_ERR_TRANSPORT);
    CHECK(strstr(mcpc_last_error_message(), "the most allowed") != NULL);
    CHECK_STATUS(echo(c, "pid", buf, sizeof buf), MCPC_ERR_TRANSPORT);
    close_and_check_cleanup(c);
}

static void test_close_during_a_restarts_handshake_reaps_it(void) {
    mcpc_client_t *c = NULL;
    /* Later starts never answer: the restart waits in its handshake. */
    CHECK_STATUS(connect_script(FIRST_THEN("exec \"$2\" -c 'import time; time.sleep(300)' \"$1\""), 2, 20, &c),
                 MCPC_OK);
    if (!c) return;
    char buf[64];
    CHECK_STATUS(echo(c, "crash", buf, sizeof buf), MCPC_ERR_SERVER_EXITED);
    /* A short call: its wait ends while the restart is in its handshake. */
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = 500;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"pid\"}", &o, &r), MCPC_ERR_SERVER_EXITED);
    CHECK(count_processes_with(log_path) == 1);
    close_and_check_cleanup(c);
}

static void test_bad_settings(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_restart(o, 3, 0), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_restart(o, 0, 100), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_restart(NULL, 3, 100), MCPC_ERR_INVALID_ARG);
    mcpc_options_free(o);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_a_dead_server_is_started_again);
    RUN(test_a_dead_modern_server_is_started_again);
    RUN(test_restarts_run_out);
    RUN(test_off_by_default);
    RUN(test_an_async_call_in_flight_fails_as_server_exited);
    RUN(test_close_while_waiting_to_restart);
    RUN(test_restarts_that_fail_to_start_end_with_the_cause);
    RUN(test_close_during_a_restarts_handshake_reaps_it);
    RUN(test_bad_settings);
    return harness_finish();
}
