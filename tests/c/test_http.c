/* C tests of the Streamable HTTP transport through the public API, against the
 * loopback fixture (tests/fixtures/http_server.py) in JSON and SSE modes, over
 * http:// and https:// with a CA made at test time (tests/fixtures/make_certs.sh).
 * Closing line: "N passed, N failed, N skipped". */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "harness.h"
#include "http_fixture.h"

static char cert_dir[256];

static mcpc_status_t connect_to(struct fixture *f, mcpc_options_t *o, mcpc_client_t **c) {
    return mcpc_client_connect_http(f->url, o, c);
}

static int start(struct fixture *f, const char *mode, const char *fault) {
    const char *args[8] = {"--mode", mode, NULL};
    if (fault) {
        args[2] = "--fault";
        args[3] = fault;
        args[4] = NULL;
    }
    return fixture_start(f, args);
}

static mcpc_call_opts_t timeout_opts(int64_t ms) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = ms;
    return o;
}

/* The basic protocol over one reply mode: handshake, sessions, headers, pages, calls. */
static void protocol_over(const char *mode) {
    struct fixture f;
    if (start(&f, mode, NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        char *info = NULL;
        CHECK_STATUS(mcpc_client_server_info(c, &info), MCPC_OK);
        CHECK(info && strstr(info, "mcpc-http-fixture"));
        mcpc_string_free(info);
        mcpc_tool_list_t *l = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
        CHECK(mcpc_tool_list_len(l) == 25);
        mcpc_tool_list_free(l);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"over http\"}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "over http") == 0);
        mcpc_result_free(r);
        CHECK_STATUS(mcpc_client_call_tool(c, "add", "{\"a\":1,\"b\":2}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_structured_json(r), "{\"sum\":3}") == 0);
        mcpc_result_free(r);
        CHECK_STATUS(mcpc_client_call_tool(c, "fail", "{\"message\":\"no\"}", NULL, &r), MCPC_ERR_TOOL);
        CHECK(r && mcpc_result_is_error(r));
        mcpc_result_free(r);
        r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "nope", "{}", NULL, &r), MCPC_ERR_RPC);
        CHECK(mcpc_last_error_rpc_code() == -32602);
        CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
        mcpc_client_free(c);
    }
    /* initialize went without a session id or version header; everything after carried both. */
    const char *init_with_session[] = {"\"method\":\"initialize\"", "mcp-session-id", NULL};
    CHECK(log_count(&f, init_with_session) == 0);
    const char *created[] = {"\"event\":\"session-created\"", NULL};
    CHECK(log_count(&f, created) == 1);
    const char *posts[] = {"\"method\":\"POST\"", NULL};
    const char *posts_with_both[] = {"\"method\":\"POST\"", "\"mcp-session-id\"", "\"mcp-protocol-version\":\"2025-11-25\"", NULL};
    CHECK(log_count(&f, posts) >= 10);
    /* The version probe and initialize went without a session; everything else had both. */
    CHECK(log_count(&f, posts_with_both) == log_count(&f, posts) - 2);
    const char *probe[] = {"\"method\":\"server/discover\"", "\"mcp-protocol-version\":\"2026-07-28\"", "\"mcp-method\":\"server/discover\"", NULL};
    CHECK(log_count(&f, probe) == 1);
    const char *accept[] = {"\"method\":\"POST\"", "\"accept\":\"application/json, text/event-stream\"", "\"content-type\":\"application/json\"", NULL};
    CHECK(log_count(&f, accept) == log_count(&f, posts));
    /* DELETE on close, with the session id. */
    const char *del[] = {"\"method\":\"DELETE\"", "\"mcp-session-id\"", NULL};
    CHECK(log_count(&f, del) == 1);
    const char *deleted[] = {"\"event\":\"session-deleted\"", NULL};
    CHECK(log_count(&f, deleted) == 1);
    fixture_stop(&f);
}

static void test_protocol_json(void) { protocol_over("json"); }
static void test_protocol_sse(void) { protocol_over("sse"); }

static void timeout_and_cancel_over(const char *mode) {
    struct fixture f;
    if (start(&f, mode, NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        mcpc_call_opts_t o = timeout_opts(300);
        CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &o, &r), MCPC_ERR_TIMEOUT);
        CHECK(wait_for_file_text(f.log, "\"event\":\"cancelled\"", 5000));
        const char *cancel_posts[] = {"notifications/cancelled", "\"reason\":\"timed out\"", NULL};
        CHECK(log_count(&f, cancel_posts) == 1);
        /* Cancellation from another handle. */
        mcpc_cancel_t *cancel = mcpc_cancel_new();
        mcpc_cancel_trigger(cancel);
        o.cancel = cancel;
        o.timeout_ms = 30000;
        CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &o, &r), MCPC_ERR_CANCELLED);
        mcpc_cancel_free(cancel);
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"after\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

static void test_timeout_and_cancel_json(void) { timeout_and_cancel_over("json"); }
static void test_timeout_and_cancel_sse(void) { timeout_and_cancel_over("sse"); }

struct progress_count {
    atomic_int n;
};

static void on_progress(void *ud, double p, double total, const char *m) {
    (void)p;
    (void)total;
    (void)m;
    atomic_fetch_add(&((struct progress_count *)ud)->n, 1);
}

static void test_sse_progress_before_response(void) {
    struct fixture f;
    if (start(&f, "sse", NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        struct progress_count pc;
        atomic_store(&pc.n, 0);
        mcpc_call_opts_t o = timeout_opts(20000);
        o.on_progress = on_progress;
        o.progress_userdata = &pc;
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":200}", &o, &r), MCPC_OK);
        CHECK(atomic_load(&pc.n) == 4);
        mcpc_result_free(r);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

static void call_under_fault(const char *mode, const char *fault, mcpc_status_t want, const char *msg_part) {
    struct fixture f;
    if (start(&f, mode, fault) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        /* Room for valgrind on a busy machine: huge-sse hands over 6.5 MB of events. */
        mcpc_call_opts_t o = timeout_opts(30000);
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &o, &r), want);
        if (msg_part) CHECK(strstr(mcpc_last_error_message(), msg_part) != NULL);
        if (want == MCPC_OK) CHECK(r && strcmp(mcpc_result_text(r, NULL), "x") == 0);
        mcpc_result_free(r);
        /* Whatever happened to that call, the client goes on. */
        CHECK(mcpc_client_close(c) == MCPC_OK);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

static atomic_int cancel_close_done;

static void on_cancelled_call(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    (void)msg;
    if (st == MCPC_ERR_CANCELLED) atomic_fetch_add((atomic_int *)ud, 1);
    mcpc_result_free(r);
}

static void test_cancel_then_close_delivers_the_cancel(void) {
    /* Cancel, then close at once (as the CLI does on Ctrl-C): every cancel was
     * decided before the close, so the server sees every notifications/cancelled.
     * MCPC_CANCEL_CLOSE_RUNS sets how many times (1000 by default). */
    const char *env = getenv("MCPC_CANCEL_CLOSE_RUNS");
    int runs = env && *env ? atoi(env) : 1000;
    struct fixture f;
    if (start(&f, "json", NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY), MCPC_OK);
    atomic_store(&cancel_close_done, 0);
    int connected = 0;
    for (int i = 0; i < runs; i++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
        if (!c) break;
        connected++;
        mcpc_op_t *op = NULL;
        CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", NULL, on_cancelled_call,
                                                 &cancel_close_done, &op),
                     MCPC_OK);
        mcpc_op_cancel(op);
        CHECK(mcpc_client_close(c) == MCPC_OK);
        mcpc_op_free(op);
        mcpc_client_free(c);
    }
    mcpc_options_free(o);
    CHECK(atomic_load(&cancel_close_done) == connected);
    const char *cancels[] = {"\"method\":\"notifications/cancelled\"", NULL};
    int seen = log_count(&f, cancels);
    if (seen != connected) fprintf(stderr, "  %d of %d cancels reached the server\n", seen, connected);
    CHECK(seen == connected && connected == runs);
    fixture_stop(&f);
}

static void test_sse_stream_shapes(void) {
    call_under_fault("sse", "sse-priming", MCPC_OK, NULL);
    call_under_fault("sse", "split-sse", MCPC_OK, NULL);
    call_under_fault("sse", "garbage-sse", MCPC_OK, NULL);
    /* A malformed response to the call fails it; the valid one after it is late. */
    call_under_fault("sse", "malformed-sse", MCPC_ERR_PROTOCOL, "both result and error");
    call_under_fault("sse", "huge-sse", MCPC_OK, NULL);
}

static void test_sse_resume(void) {
    struct fixture f;
    if (start(&f, "sse", "sse-resume") != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"resumed\"}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "resumed") == 0);
        mcpc_result_free(r);
        const char *get[] = {"\"method\":\"GET\"", "\"last-event-id\":\"r1\"", NULL};
        CHECK(log_count(&f, get) == 1);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

static void test_endless_sse_times_out(void) {
    struct fixture f;
    if (start(&f, "sse", "endless-sse") != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        mcpc_call_opts_t o = timeout_opts(500);
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", &o, &r), MCPC_ERR_TIMEOUT);
        CHECK(now_ms() - t0 < 5000);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

static void test_http_error_statuses(void) {
    call_under_fault("json", "status-500", MCPC_ERR_HTTP, "500");
    call_under_fault("json", "json-error-400", MCPC_ERR_HTTP, "bad params");
    call_under_fault("json", "wrong-content-type", MCPC_ERR_HTTP, "text/plain");
    call_under_fault("json", "redirect-same-origin", MCPC_OK, NULL);
    call_under_fault("json", "redirect-cross-origin", MCPC_ERR_HTTP, "redirect");
}

/* Starts the fixture with a redirect `fault`, and makes one call with a bearer token
 * and a custom header, which the redirect makes fail with MCPC_ERR_HTTP whose message
 * names neither secret and says `must_say` (if not NULL). -1 if the fixture did not
 * start. */
static int redirected_call(struct fixture *f, const char *fault, const char *must_say) {
    if (start(f, "json", fault) != 0) {
        CHECK(0);
        return -1;
    }
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_bearer_token(o, "secret-token"), MCPC_OK);
    CHECK_STATUS(mcpc_options_add_header(o, "X-Api-Key", "secret-key"), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(f, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_ERR_HTTP);
        CHECK(strstr(mcpc_last_error_message(), "secret") == NULL);
        if (must_say) CHECK(strstr(mcpc_last_error_message(), must_say) != NULL);
        mcpc_client_free(c);
    }
    return 0;
}

static void test_cross_origin_redirect_keeps_credentials(void) {
    struct fixture f;
    if (redirected_call(&f, "redirect-cross-origin", NULL) != 0) return;
    /* The token and header went to the endpoint, and nothing went to the other origin. */
    const char *sent[] = {"\"path\":\"/mcp\"", "\"authorization\":\"Bearer secret-token\"", "\"x-api-key\":\"secret-key\"", NULL};
    CHECK(log_count(&f, sent) >= 2);
    const char *elsewhere[] = {"/mcp-elsewhere", NULL};
    CHECK(log_count(&f, elsewhere) == 0);
    fixture_stop(&f);
}

/* A 303 is followed with a GET (as browsers do): same session and credentials, no body
 * and no Content-Type, still accepting both reply types. The fixture answers that GET
 * with 405, which the call reports. */
static void test_see_other_redirect_becomes_get(void) {
    struct fixture f;
    if (redirected_call(&f, "redirect-see-other", "405") != 0) return;
    const char *get[] = {"\"method\":\"GET\"", "\"path\":\"/mcp-moved\"",
                         "\"authorization\":\"Bearer secret-token\"", "mcp-session-id",
                         "\"accept\":\"application/json, text/event-stream\"", NULL};
    CHECK(log_count(&f, get) == 1);
    const char *typed[] = {"\"path\":\"/mcp-moved\"", "content-type", NULL};
    CHECK(log_count(&f, typed) == 0);
    const char *posted[] = {"\"method\":\"POST\"", "\"path\":\"/mcp-moved\"", NULL};
    CHECK(log_count(&f, posted) == 0);
    fixture_stop(&f);
}

static void test_session_expiry_and_recovery(void) {
    struct fixture f;
    const char *args[] = {"--mode", "json", "--expire-after", "8", NULL};
    if (fixture_start(&f, args) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        /* A session lives for 8 POSTs after its initialize: initialized is POST 1, calls
         * take POSTs 2..8, and the 8th call finds the session gone. After the fresh
         * session's initialized, four more calls take its POSTs 2..5. */
        int ok = 0, expired = 0;
        for (int i = 0; i < 12; i++) {
            mcpc_result_t *r = NULL;
            mcpc_status_t st = mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r);
            ok += st == MCPC_OK;
            expired += st == MCPC_ERR_SESSION_EXPIRED;
            mcpc_result_free(r);
        }
        CHECK(expired == 1 && ok == 11);
        /* A fresh session: a second initialize, without the old session id. */
        const char *created[] = {"\"event\":\"session-created\"", NULL};
        CHECK(log_count(&f, created) == 2);
        const char *init_with_session[] = {"\"method\":\"initialize\"", "mcp-session-id", NULL};
        CHECK(log_count(&f, init_with_session) == 0);
        /* A listing that meets an expiry (its 4th page is POST 9) starts over once, on
         * a third session, from the first page: cursors belong to their session. */
        mcpc_tool_list_t *l = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
        CHECK(mcpc_tool_list_len(l) == 25);
        mcpc_tool_list_free(l);
        CHECK(log_count(&f, created) == 3);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

/* A fresh session hears again what the old one was told: the log level and the
 * subscriptions still in force. */
static void test_session_expiry_replays_state(void) {
    struct fixture f;
    const char *args[] = {"--mode", "json", "--expire-after", "4", NULL};
    if (fixture_start(&f, args) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (c) {
        /* initialized is POST 1 (a notification: it may still be on its way, so its
         * arrival is awaited); these take 2..4; the unsubscribe (POST 5) finds the
         * session gone, and is sent again (once) in the fresh one. */
        const char *initialized[] = {"\"method\":\"notifications/initialized\"", NULL};
        for (int i = 0; i < 500 && log_count(&f, initialized) == 0; i++) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
        CHECK(log_count(&f, initialized) == 1);
        CHECK_STATUS(mcpc_client_set_log_level(c, "info", NULL), MCPC_OK);
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://a", NULL), MCPC_OK);
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://b", NULL), MCPC_OK);
        CHECK_STATUS(mcpc_client_unsubscribe_resource(c, "res://b", NULL), MCPC_OK);
        const char *created[] = {"\"event\":\"session-created\"", NULL};
        CHECK(log_count(&f, created) == 2);
        const char *level[] = {"\"method\":\"logging/setLevel\"", NULL};
        const char *sub_a[] = {"\"method\":\"resources/subscribe\"", "res://a", NULL};
        const char *sub_b[] = {"\"method\":\"resources/subscribe\"", "res://b", NULL};
        const char *unsub[] = {"\"method\":\"resources/unsubscribe\"", NULL};
        CHECK(log_count(&f, level) == 2);
        CHECK(log_count(&f, sub_a) == 2);
        CHECK(log_count(&f, sub_b) == 1); /* unsubscribed before the fresh session */
        CHECK(log_count(&f, unsub) == 2);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

static void test_insecure_urls_refused(void) {
    const char *bad[] = {"http://example.com/mcp", "http://10.1.2.3:8080/mcp", "http://[fe80::1]/mcp", "ftp://127.0.0.1/mcp"};
    for (size_t i = 0; i < 4; i++) {
        mcpc_client_t *c = (mcpc_client_t *)1;
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_connect_http(bad[i], NULL, &c), MCPC_ERR_INSECURE_URL);
        CHECK(c == NULL);
        CHECK(now_ms() - t0 < 1000); /* refused before any connection */
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http("https://user:pw@127.0.0.1/mcp", NULL, &c), MCPC_ERR_INVALID_ARG);
    CHECK(strstr(mcpc_last_error_message(), "pw") == NULL);
    CHECK_STATUS(mcpc_client_connect_http("not a url", NULL, &c), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_connect_http(NULL, NULL, &c), MCPC_ERR_INVALID_ARG);
}

static int tls_start(struct fixture *f, const char *cert, const char *key) {
    char certp[300], keyp[300];
    snprintf(certp, sizeof certp, "%s/%s", cert_dir, cert);
    snprintf(keyp, sizeof keyp, "%s/%s", cert_dir, key);
    const char *args[] = {"--tls", certp, keyp, NULL};
    if (fixture_start(f, args) != 0) return -1;
    snprintf(f->url, sizeof f->url, "https://127.0.0.1:%d/mcp", f->port);
    return 0;
}

static void test_tls(void) {
    char ca[300];
    snprintf(ca, sizeof ca, "%s/ca.pem", cert_dir);
    struct fixture f;
    if (tls_start(&f, "server.pem", "server.key") != 0) {
        CHECK(0);
        return;
    }
    /* Not trusted without our CA. */
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_ERR_TLS);
    /* Trusted with it. */
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_add_ca_file(o, ca), MCPC_OK);
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"tls\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        mcpc_client_free(c);
    }
    /* The same name over "localhost" matches the certificate too. */
    snprintf(f.url, sizeof f.url, "https://localhost:%d/mcp", f.port);
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    mcpc_client_free(c);
    fixture_stop(&f);
    /* The right CA but the wrong name: the certificate is for 127.0.0.1 and localhost,
     * and the fixture answers on 127.0.0.2 (loopback too). */
    char certp[300], keyp[300];
    snprintf(certp, sizeof certp, "%s/server.pem", cert_dir);
    snprintf(keyp, sizeof keyp, "%s/server.key", cert_dir);
    const char *other_host[] = {"--host", "127.0.0.2", "--tls", certp, keyp, NULL};
    if (fixture_start(&f, other_host) == 0) {
        snprintf(f.url, sizeof f.url, "https://127.0.0.2:%d/mcp", f.port);
        CHECK_STATUS(connect_to(&f, o, &c), MCPC_ERR_TLS);
        CHECK(strstr(mcpc_last_error_message(), "127.0.0.2") != NULL);
        fixture_stop(&f);
    } else {
        CHECK(0);
    }
    /* A certificate from our CA that expired (valid only in 2020) is refused. */
    if (tls_start(&f, "expired.pem", "expired.key") == 0) {
        CHECK_STATUS(connect_to(&f, o, &c), MCPC_ERR_TLS);
        CHECK(strstr(mcpc_last_error_message(), "xpired") != NULL);
        fixture_stop(&f);
    } else {
        CHECK(0);
    }
    /* A self-signed certificate is refused even with our CA loaded. */
    if (tls_start(&f, "untrusted.pem", "untrusted.key") == 0) {
        CHECK_STATUS(connect_to(&f, o, &c), MCPC_ERR_TLS);
        fixture_stop(&f);
    }
    /* Bad CA input. */
    CHECK_STATUS(mcpc_options_add_ca_file(o, "/nonexistent.pem"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_add_ca_pem(o, "junk", 4), MCPC_ERR_INVALID_ARG);
    mcpc_options_free(o);
}

struct token_state {
    atomic_int calls;
    char last_challenge[512];
    int give_good_after_401;
};

static int32_t token_cb(void *ud, const char *www_auth, char *buf, size_t len) {
    struct token_state *s = ud;
    atomic_fetch_add(&s->calls, 1);
    if (www_auth) snprintf(s->last_challenge, sizeof s->last_challenge, "%s", www_auth);
    const char *token = (www_auth && s->give_good_after_401) ? "good-token" : "stale-token";
    snprintf(buf, len, "%s", token);
    return 0;
}

static void test_token_refresh_after_401(void) {
    struct fixture f;
    if (start(&f, "json", "auth") != 0) {
        CHECK(0);
        return;
    }
    struct token_state s = {0};
    s.give_good_after_401 = 1;
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_token_callback(o, token_cb, &s, NULL), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    mcpc_options_free(o);
    CHECK(atomic_load(&s.calls) == 2); /* the first token, then a fresh one after the 401 */
    CHECK(strstr(s.last_challenge, "invalid_token") != NULL);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        CHECK(atomic_load(&s.calls) == 2); /* the good token is kept */
        mcpc_client_free(c);
    }
    fixture_stop(&f);

    /* A token that stays bad: a second 401 is an auth error. */
    if (start(&f, "json", "auth") != 0) return;
    struct token_state bad = {0};
    o = mcpc_options_new();
    mcpc_options_set_token_callback(o, token_cb, &bad, NULL);
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_ERR_AUTH);
    CHECK(strstr(mcpc_last_error_message(), "stale-token") == NULL);
    mcpc_options_free(o);
    /* No callback, no token: 401 at once. */
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_ERR_AUTH);
    /* A fixed bearer token that is right works. */
    o = mcpc_options_new();
    mcpc_options_set_bearer_token(o, "good-token");
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    mcpc_client_free(c);
    mcpc_options_free(o);
    fixture_stop(&f);

    /* A 403 that asks for more scope is an authorization error... */
    if (start(&f, "json", "forbidden-scope") == 0) {
        CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_ERR_AUTH);
        fixture_stop(&f);
    }
    /* ...one with no challenge is the server's refusal, which its body's first line
     * explains: an HTTP error that says it, escaped, and nothing after that line. */
    if (start(&f, "json", "forbidden") == 0) {
        o = mcpc_options_new();
        mcpc_options_set_bearer_token(o, "secret-token");
        CHECK_STATUS(connect_to(&f, o, &c), MCPC_ERR_HTTP);
        mcpc_options_free(o);
        const char *m = mcpc_last_error_message();
        char want[64];
        snprintf(want, sizeof want, "Access is only allowed at localhost:%d", f.port);
        if (!strstr(m, want)) fprintf(stderr, "  %s\n", m);
        CHECK(strstr(m, "403") != NULL);
        CHECK(strstr(m, want) != NULL);
        CHECK(strchr(m, '\x1b') == NULL);
        CHECK(strstr(m, "not-this-line") == NULL);
        CHECK(strstr(m, "secret-token") == NULL);
        fixture_stop(&f);
    }
}

struct notes {
    atomic_int from_get;
};

static void on_note(void *ud, const char *method, const char *params) {
    struct notes *n = ud;
    if (strcmp(method, "notifications/message") == 0 && params && strstr(params, "from the GET stream")) {
        atomic_fetch_add(&n->from_get, 1);
    }
}

static void test_standalone_get_stream(void) {
    struct fixture f;
    if (start(&f, "json", "get-stream") != 0) {
        CHECK(0);
        return;
    }
    struct notes n;
    atomic_store(&n.from_get, 0);
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_standalone_stream(o, true), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_notification_callback(o, on_note, &n, NULL), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    mcpc_options_free(o);
    double t0 = now_ms();
    while (atomic_load(&n.from_get) == 0 && now_ms() - t0 < 10000) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    CHECK(atomic_load(&n.from_get) >= 1);
    mcpc_client_free(c); /* also stops the stream */
    fixture_stop(&f);

    /* 405 (the default fixture) is not an error. */
    if (start(&f, "json", NULL) != 0) return;
    o = mcpc_options_new();
    mcpc_options_set_standalone_stream(o, true);
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    mcpc_options_free(o);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    mcpc_client_free(c);
    fixture_stop(&f);
}

static void test_header_options(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_add_header(o, "Content-Type", "text/plain"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_add_header(o, "Mcp-Session-Id", "x"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_add_header(o, "Bad Name", "x"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_add_header(o, "X-Ok", "line\nbreak-secret"), MCPC_ERR_INVALID_ARG);
    CHECK(strstr(mcpc_last_error_message(), "secret") == NULL);
    CHECK_STATUS(mcpc_options_set_bearer_token(o, "a\nb"), MCPC_ERR_INVALID_ARG);
    mcpc_options_free(o);
}

static void test_many_threads_over_http(void) {
    struct fixture f;
    if (start(&f, "json", NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        int ok = 0;
        for (int i = 0; i < 50; i++) {
            char args[64], want[32];
            snprintf(want, sizeof want, "n%d", i);
            snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
            mcpc_result_t *r = NULL;
            if (mcpc_client_call_tool(c, "echo", args, NULL, &r) == MCPC_OK && strcmp(mcpc_result_text(r, NULL), want) == 0) ok++;
            mcpc_result_free(r);
        }
        CHECK(ok == 50);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
}

/* ---- 2026-07-28 over HTTP ---- */

static void modern_over(const char *mode) {
    struct fixture f;
    const char *args[] = {"--mode", mode, "--era", "modern", NULL};
    if (fixture_start(&f, args) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        CHECK(strcmp(mcpc_client_protocol_version(c), "2026-07-28") == 0);
        CHECK(strcmp(mcpc_client_negotiated_by(c), "discover") == 0);
        /* Tools with invalid x-mcp-header annotations are dropped: 32 served, 30 kept. */
        mcpc_tool_list_t *l = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
        CHECK(mcpc_tool_list_len(l) == 30);
        for (size_t i = 0; l && i < mcpc_tool_list_len(l); i++) {
            CHECK(strncmp(mcpc_tool_list_name(l, i), "bad_header_tool", 15) != 0);
        }
        mcpc_tool_list_free(l);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"modern\"}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "modern") == 0);
        mcpc_result_free(r);
        /* Annotated parameters go into Mcp-Param-* headers, encoded; the server checks them. */
        CHECK_STATUS(mcpc_client_call_tool(c, "header_tool",
                                           "{\"region\":\"eu-west\",\"priority\":5,\"verbose\":false,"
                                           "\"nested\":{\"zone\":\"Zürich\"},\"query\":\"q\"}",
                                           NULL, &r),
                     MCPC_OK);
        mcpc_result_free(r);
        const char *params[] = {"\"mcp-param-region\":\"eu-west\"", "\"mcp-param-priority\":\"5\"",
                                "\"mcp-param-verbose\":\"false\"", "\"mcp-param-zone\":\"=?base64?WsO8cmljaA==?=\"",
                                "\"mcp-name\":\"header_tool\"", NULL};
        CHECK(log_count(&f, params) == 1);
        const char *unannotated[] = {"mcp-param-query", NULL};
        CHECK(log_count(&f, unannotated) == 0);
        /* A generic request mirrors what it names as the typed calls do. */
        char *json = NULL;
        CHECK_STATUS(mcpc_client_request(c, "tools/call", "{\"name\":\"header_tool\",\"arguments\":{\"region\":\"generic\"}}",
                                         NULL, &json),
                     MCPC_OK);
        mcpc_string_free(json);
        const char *generic[] = {"\"mcp-param-region\":\"generic\"", "\"mcp-name\":\"header_tool\"", NULL};
        CHECK(log_count(&f, generic) == 1);
        json = NULL;
        mcpc_client_request(c, "resources/read", "{\"uri\":\"res://x\"}", NULL, &json); /* the fixture has none */
        mcpc_string_free(json);
        const char *read[] = {"\"mcp-name\":\"res://x\"", NULL};
        CHECK(log_count(&f, read) == 1);
        /* A null value is omitted. */
        CHECK_STATUS(mcpc_client_call_tool(c, "header_tool", "{\"region\":\"x\",\"verbose\":null}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        /* input_required rounds over HTTP. */
        CHECK_STATUS(mcpc_client_call_tool(c, "needs_state", NULL, NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "done after 3 rounds") == 0);
        mcpc_result_free(r);
        /* A timeout closes the reply stream: the cancel, with no notification POSTed. */
        mcpc_call_opts_t o = timeout_opts(300);
        CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":20000}", &o, &r), MCPC_ERR_TIMEOUT);
        CHECK(wait_for_file_text(f.log, "\"by\":\"disconnect\"", 5000));
        mcpc_client_free(c);
    }
    /* Every POST carried the version and method headers; no session, no GET, no DELETE. */
    const char *posts[] = {"\"method\":\"POST\"", NULL};
    const char *with_headers[] = {"\"method\":\"POST\"", "\"mcp-protocol-version\":\"2026-07-28\"", "\"mcp-method\":", NULL};
    CHECK(log_count(&f, posts) >= 8);
    CHECK(log_count(&f, with_headers) == log_count(&f, posts));
    const char *notes[] = {"notifications/", NULL};
    const char *sessions[] = {"mcp-session-id", NULL};
    const char *others[] = {"\"method\":\"DELETE\"", NULL};
    const char *gets[] = {"\"method\":\"GET\"", NULL};
    CHECK(log_count(&f, notes) == 0);
    CHECK(log_count(&f, sessions) == 0);
    CHECK(log_count(&f, others) == 0);
    CHECK(log_count(&f, gets) == 0);
    fixture_stop(&f);
}

static void test_modern_json(void) { modern_over("json"); }
static void test_modern_sse(void) { modern_over("sse"); }

static void test_modern_negotiation_over_http(void) {
    /* A dual server: 2026-07-28 by default, initialize with a session when asked. */
    struct fixture f;
    const char *args[] = {"--era", "dual", NULL};
    if (fixture_start(&f, args) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    CHECK(c && strcmp(mcpc_client_negotiated_by(c), "discover") == 0);
    mcpc_client_free(c);
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_OK);
    CHECK(c && strcmp(mcpc_client_negotiated_by(c), "initialize") == 0);
    mcpc_client_free(c);
    const char *deleted[] = {"\"event\":\"session-deleted\"", NULL};
    CHECK(log_count(&f, deleted) == 1);
    /* Pinned 2026-07-28 and a legacy mode against the modern-only server: clear errors. */
    fixture_stop(&f);
    const char *modern[] = {"--era", "modern", NULL};
    if (fixture_start(&f, modern) != 0) return;
    CHECK_STATUS(connect_to(&f, o, &c), MCPC_ERR_UNSUPPORTED_VERSION);
    CHECK(strstr(mcpc_last_error_message(), "2026-07-28") != NULL);
    mcpc_options_free(o);
    /* A call before any listing: the server asks for headers the client could not know
     * (-32020), so the client lists the tools and retries once, with them. */
    CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_OK);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "header_tool", "{\"region\":\"ap\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        const char *calls[] = {"\"name\":\"header_tool\"", NULL};
        const char *lists[] = {"\"method\":\"tools/list\"", NULL};
        CHECK(log_count(&f, calls) == 2);
        CHECK(log_count(&f, lists) >= 1);
        mcpc_client_free(c);
    }
    fixture_stop(&f);
    /* Auth, server errors and TLS on the probe are never taken for an older server. */
    const char *auth[] = {"--era", "dual", "--fault", "auth", NULL};
    if (fixture_start(&f, auth) == 0) {
        CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_ERR_AUTH);
        const char *inits[] = {"\"method\":\"initialize\"", NULL};
        CHECK(log_count(&f, inits) == 0);
        fixture_stop(&f);
    }
    const char *boom[] = {"--era", "dual", "--fault", "status-500", NULL};
    if (fixture_start(&f, boom) == 0) {
        CHECK_STATUS(connect_to(&f, NULL, &c), MCPC_ERR_HTTP);
        CHECK(strstr(mcpc_last_error_message(), "500") != NULL);
        const char *inits[] = {"\"method\":\"initialize\"", NULL};
        CHECK(log_count(&f, inits) == 0);
        fixture_stop(&f);
    }
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    snprintf(cert_dir, sizeof cert_dir, "/tmp/mcpc-certs-%d", (int)getpid());
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sh tests/fixtures/make_certs.sh %s >/dev/null 2>&1", cert_dir);
    int certs_ok = system(cmd) == 0;
    RUN(test_protocol_json);
    RUN(test_protocol_sse);
    RUN(test_timeout_and_cancel_json);
    RUN(test_timeout_and_cancel_sse);
    RUN(test_cancel_then_close_delivers_the_cancel);
    RUN(test_sse_progress_before_response);
    RUN(test_sse_stream_shapes);
    RUN(test_sse_resume);
    RUN(test_endless_sse_times_out);
    RUN(test_http_error_statuses);
    RUN(test_cross_origin_redirect_keeps_credentials);
    RUN(test_see_other_redirect_becomes_get);
    RUN(test_session_expiry_and_recovery);
    RUN(test_session_expiry_replays_state);
    RUN(test_insecure_urls_refused);
    if (certs_ok) {
        RUN(test_tls);
    } else {
        fprintf(stderr, "making test certificates failed\n");
        harness_failed++;
    }
    RUN(test_token_refresh_after_401);
    RUN(test_standalone_get_stream);
    RUN(test_header_options);
    RUN(test_many_threads_over_http);
    RUN(test_modern_json);
    RUN(test_modern_sse);
    RUN(test_modern_negotiation_over_http);
    snprintf(cmd, sizeof cmd, "rm -rf %s", cert_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cert_dir);
    return harness_finish();
}
