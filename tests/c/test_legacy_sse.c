/* C tests of the HTTP+SSE transport of 2024-11-05 against
 * tests/fixtures/legacy_sse_server.py: the fallback from Streamable HTTP, the pinned
 * modes, cancellation, close, and servers that break the transport's rules. Run from
 * the repository root; the closing line is "N passed, N failed, N skipped". An
 * argument runs only tests whose name contains it. */
#define _GNU_SOURCE
#include <sys/wait.h>

#include "harness.h"

struct legacy {
    pid_t pid;
    int stdin_fd;
    int port;
    char url[96];
    char log[128];
};

static int legacy_start(struct legacy *s, const char *fault) {
    static int counter;
    memset(s, 0, sizeof *s);
    snprintf(s->log, sizeof s->log, "/tmp/mcpc-legacy-%d-%d.log", (int)getpid(), ++counter);
    unlink(s->log);
    const char *argv[] = {"python3", "tests/fixtures/legacy_sse_server.py", "--log", s->log, "--fault",
                          fault ? fault : "", NULL};
    int from;
    if (spawn_piped(argv, &s->pid, &s->stdin_fd, &from) != 0) return -1;
    FILE *o = fdopen(from, "r");
    char line[64];
    int ok = o && fgets(line, sizeof line, o) && sscanf(line, "PORT %d", &s->port) == 1;
    if (o) fclose(o);
    if (!ok) {
        close(s->stdin_fd);
        waitpid(s->pid, NULL, 0);
        return -1;
    }
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/sse", s->port);
    return 0;
}

static void legacy_stop(struct legacy *s) {
    close(s->stdin_fd);
    waitpid(s->pid, NULL, 0);
    unlink(s->log);
}

static mcpc_status_t connect_mode(struct legacy *s, int mode, int64_t timeout_ms, mcpc_client_t **c) {
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, timeout_ms);
    CHECK_STATUS(mcpc_options_set_http_transport(o, mode), MCPC_OK);
    mcpc_status_t st = mcpc_client_connect_http(s->url, o, c);
    mcpc_options_free(o);
    return st;
}

static void echo(mcpc_client_t *c, const char *text) {
    char args[96];
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", args, NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), text) == 0);
    mcpc_result_free(r);
}

static void test_auto_falls_back(void) {
    struct legacy s;
    if (legacy_start(&s, NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_mode(&s, MCPC_HTTP_AUTO, 10000, &c), MCPC_OK);
    if (c) {
        CHECK(strcmp(mcpc_client_protocol_version(c), "2024-11-05") == 0);
        echo(c, "after the fallback");
        mcpc_tool_list_t *tools = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &tools), MCPC_OK);
        CHECK(mcpc_tool_list_len(tools) == 2);
        mcpc_tool_list_free(tools);
        mcpc_client_free(c);
    }
    /* Streamable HTTP went first, and was refused. */
    CHECK(file_contains(s.log, "\"method\": \"POST\", \"path\": \"/sse\""));
    legacy_stop(&s);
}

static void test_pinned_modes(void) {
    struct legacy s;
    if (legacy_start(&s, NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_mode(&s, MCPC_HTTP_SSE, 10000, &c), MCPC_OK);
    if (c) {
        echo(c, "pinned");
        mcpc_client_free(c);
    }
    /* Pinned to the old transport, no Streamable HTTP POST was tried. */
    CHECK(!file_contains(s.log, "\"path\": \"/sse\", \"body\": \"{"));
    c = NULL;
    CHECK_STATUS(connect_mode(&s, MCPC_HTTP_STREAMABLE, 10000, &c), MCPC_ERR_HANDSHAKE);
    CHECK(strstr(mcpc_last_error_message(), "405") != NULL);
    CHECK(c == NULL);
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_http_transport(o, 3), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_http_transport(NULL, MCPC_HTTP_SSE), MCPC_ERR_INVALID_ARG);
    mcpc_options_free(o);
    legacy_stop(&s);
}

static void drop_result(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    (void)ud;
    (void)st;
    (void)msg;
    mcpc_result_free(r);
}

static void test_cancel_and_close(void) {
    struct legacy s;
    if (legacy_start(&s, NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_mode(&s, MCPC_HTTP_SSE, 10000, &c), MCPC_OK);
    if (c) {
        mcpc_call_opts_t o;
        mcpc_call_opts_init(&o);
        o.timeout_ms = 300;
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":20000}", &o, &r), MCPC_ERR_TIMEOUT);
        /* The client goes on, and the server heard of the cancel. */
        echo(c, "still here");
        CHECK(file_contains(s.log, "notifications/cancelled"));
        /* Close right after another cancel: it still goes out. */
        mcpc_op_t *op = NULL;
        CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":20000}", NULL, drop_result, NULL, &op), MCPC_OK);
        mcpc_op_cancel(op);
        CHECK(mcpc_client_close(c) == MCPC_OK);
        mcpc_op_free(op);
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{}", NULL, &r), MCPC_ERR_CLOSED);
        mcpc_client_free(c);
        char *log = read_file(s.log);
        int cancels = 0;
        for (char *p = log; (p = strstr(p, "notifications/cancelled")) != NULL; p++) cancels++;
        CHECK(cancels == 2);
        free(log);
    }
    legacy_stop(&s);
}

static void test_servers_that_break_the_rules(void) {
    struct {
        const char *fault;
        mcpc_status_t want;
        const char *msg;
    } cases[] = {
        {"cross-origin", MCPC_ERR_HANDSHAKE, "another origin"},
        {"not-sse", MCPC_ERR_HANDSHAKE, "not an event stream"},
        {"end-stream", MCPC_ERR_TRANSPORT, "ended the event stream"},
        {"post-500", MCPC_ERR_HANDSHAKE, "500"},
        {"no-endpoint", MCPC_ERR_TIMEOUT, "timed out"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct legacy s;
        if (legacy_start(&s, cases[i].fault) != 0) {
            CHECK(0);
            continue;
        }
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_mode(&s, MCPC_HTTP_SSE, 1500, &c), cases[i].want);
        if (!strstr(mcpc_last_error_message(), cases[i].msg))
            fprintf(stderr, "  %s: %s\n", cases[i].fault, mcpc_last_error_message());
        CHECK(strstr(mcpc_last_error_message(), cases[i].msg) != NULL);
        CHECK(c == NULL);
        /* A cross-origin endpoint is never posted to. */
        if (strcmp(cases[i].fault, "cross-origin") == 0) CHECK(!file_contains(s.log, "\"method\": \"POST\""));
        legacy_stop(&s);
    }
}

/* A stream that never names its endpoint: the connect ends at its timeout, not after
 * close's grace for messages queued to an endpoint that will never be known. */
static void test_no_endpoint_keeps_the_timeout(void) {
    struct legacy s;
    if (legacy_start(&s, "no-endpoint") != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    /* Once unmeasured: the first connect also starts the library (slow under valgrind). */
    CHECK_STATUS(connect_mode(&s, MCPC_HTTP_SSE, 300, &c), MCPC_ERR_TIMEOUT);
    double t0 = now_ms();
    CHECK_STATUS(connect_mode(&s, MCPC_HTTP_SSE, 300, &c), MCPC_ERR_TIMEOUT);
    double took = now_ms() - t0;
    if (took >= 1500) fprintf(stderr, "  took %.0f ms\n", took);
    CHECK(took < 1500);
    CHECK(c == NULL);
    legacy_stop(&s);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_auto_falls_back);
    RUN(test_pinned_modes);
    RUN(test_cancel_and_close);
    RUN(test_servers_that_break_the_rules);
    RUN(test_no_endpoint_keeps_the_timeout);
    return harness_finish();
}
