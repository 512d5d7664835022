/* C tests of resource subscriptions under 2026-07-28 (subscriptions/listen) against
 * tests/fixtures/input_server.py --era=modern: the set carried by one listen, an
 * acknowledgement that leaves a URI out, a listen ended by the server and sent
 * again, a notification of a subscription not in force, and closing while
 * listening; and against tests/fixtures/http_server.py, a listen stream that drops
 * and is sent again. Run from the repository root; the closing line is
 * "N passed, N failed, N skipped". An argument runs only tests whose name contains it. */
#define _GNU_SOURCE
#include <pthread.h>

#include "harness.h"
#include "http_fixture.h"

/* The resources/updated notifications received: their URIs, in order. */
struct updates {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int count;
    char uris[4096];
};

static void on_update(void *ud, const char *method, const char *params) {
    struct updates *u = ud;
    if (strcmp(method, "notifications/resources/updated") != 0 || !params) return;
    pthread_mutex_lock(&u->lock);
    const char *uri = strstr(params, "res://");
    size_t used = strlen(u->uris);
    int len = uri ? (int)strcspn(uri, "\"") : 0;
    if (uri && len < 32 && used + 34 < sizeof u->uris) snprintf(u->uris + used, sizeof u->uris - used, "%.*s ", len, uri);
    u->count++;
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
}

/* Waits (10 s at most) until `count` notifications came; true when they did. */
static int wait_updates(struct updates *u, int count) {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&u->lock);
    while (u->count < count && pthread_cond_timedwait(&u->cond, &u->lock, &until) == 0) {
    }
    int ok = u->count >= count;
    pthread_mutex_unlock(&u->lock);
    if (!ok) fprintf(stderr, "  got %d notifications, want %d: %s\n", u->count, count, u->uris);
    return ok;
}

/* Options whose notification callback fills `u`. */
static mcpc_options_t *options_for(struct updates *u) {
    memset(u, 0, sizeof *u);
    pthread_mutex_init(&u->lock, NULL);
    pthread_cond_init(&u->cond, NULL);
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    CHECK_STATUS(mcpc_options_set_notification_callback(o, on_update, u, NULL), MCPC_OK);
    return o;
}

static mcpc_client_t *connect_modern(struct updates *u) {
    const char *argv[] = {"python3", "tests/fixtures/input_server.py", "--era=modern"};
    mcpc_options_t *o = options_for(u);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 3, o, &c), MCPC_OK);
    mcpc_options_free(o);
    return c;
}

static void done(mcpc_client_t *c, struct updates *u) {
    mcpc_client_free(c);
    pthread_mutex_destroy(&u->lock);
    pthread_cond_destroy(&u->cond);
}

/* The text of tool `name`'s result holds `want`. */
static int tool_says(mcpc_client_t *c, const char *name, const char *want) {
    mcpc_result_t *r = NULL;
    mcpc_status_t st = mcpc_client_call_tool(c, name, NULL, NULL, &r);
    const char *text = st == MCPC_OK ? mcpc_result_text(r, NULL) : NULL;
    int ok = text && strstr(text, want);
    if (!ok) fprintf(stderr, "  %s: %s, want %s\n", name, text ? text : mcpc_status_name((int32_t)st), want);
    mcpc_result_free(r);
    return ok;
}

/* One listen carries the whole set; a change sends a new one and ends the old. */
static void test_listen_carries_the_set(void) {
    struct updates u;
    mcpc_client_t *c = connect_modern(&u);
    if (!c) return;
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
    CHECK(wait_updates(&u, 1) && strstr(u.uris, "res://1"));
    CHECK(tool_says(c, "listens", "\"opened\": 1"));
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://2", NULL), MCPC_OK);
    CHECK(tool_says(c, "listens", "[\"res://1\", \"res://2\"]}, \"opened\": 2"));
    CHECK(tool_says(c, "seen", "notifications/cancelled"));
    /* Already subscribed: nothing is sent. */
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
    CHECK(tool_says(c, "listens", "\"opened\": 2"));
    CHECK_STATUS(mcpc_client_unsubscribe_resource(c, "res://1", NULL), MCPC_OK);
    CHECK(tool_says(c, "listens", "[\"res://2\"]}, \"opened\": 3"));
    /* The last one out ends the listen; one never subscribed changes nothing. */
    CHECK_STATUS(mcpc_client_unsubscribe_resource(c, "res://2", NULL), MCPC_OK);
    CHECK_STATUS(mcpc_client_unsubscribe_resource(c, "res://9", NULL), MCPC_OK);
    CHECK(tool_says(c, "listens", "{\"open\": {}, \"opened\": 3}"));
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "", NULL), MCPC_ERR_INVALID_ARG);
    done(c, &u);
}

/* An acknowledgement that leaves out the URI asked for is a clear status, and the
 * set keeps only what was acknowledged. */
static void test_listen_not_acknowledged(void) {
    struct updates u;
    mcpc_client_t *c = connect_modern(&u);
    if (!c) return;
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://refused", NULL), MCPC_ERR_NOT_SUPPORTED);
    CHECK(strstr(mcpc_last_error_message(), "did not acknowledge") != NULL);
    CHECK(tool_says(c, "listens", "{\"open\": {}, \"opened\": 1}"));
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://refused-2", NULL), MCPC_ERR_NOT_SUPPORTED);
    CHECK(tool_says(c, "listens", "[\"res://1\"]}, \"opened\": 3"));
    done(c, &u);
}

/* A listen the server ends (its response, or notifications/cancelled) is sent
 * again, and its notifications go on; one of a subscription not in force is dropped. */
static void test_listen_sent_again(void) {
    struct updates u;
    mcpc_client_t *c = connect_modern(&u);
    if (!c) return;
    CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
    CHECK(wait_updates(&u, 1));
    CHECK(tool_says(c, "stale", "stale"));
    CHECK(tool_says(c, "end_listens", "ended"));
    CHECK(wait_updates(&u, 2));
    CHECK(tool_says(c, "cancel_listens", "ended"));
    CHECK(wait_updates(&u, 3));
    CHECK(tool_says(c, "listens", "[\"res://1\"]}, \"opened\": 3"));
    pthread_mutex_lock(&u.lock);
    CHECK(strstr(u.uris, "res://stale") == NULL);
    CHECK(u.count == 3);
    pthread_mutex_unlock(&u.lock);
    done(c, &u);
}

/* Closing while a listen is open, or while one waits to be sent again, ends at once
 * (valgrind and ASan see to the leaks). */
static void test_listen_close(void) {
    for (int waiting = 0; waiting < 2; waiting++) {
        struct updates u;
        mcpc_client_t *c = connect_modern(&u);
        if (!c) return;
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://2", NULL), MCPC_OK);
        if (waiting) CHECK(tool_says(c, "end_listens", "ended"));
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://3", NULL), MCPC_ERR_CLOSED);
        done(c, &u);
        CHECK(now_ms() - t0 < 5000);
    }
}

/* Waits (5 s at most) until the fixture's log has `count` lines with `needle`. */
static int wait_log(struct fixture *f, const char *needle, int count) {
    const char *needles[] = {needle, NULL};
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500; i++) {
        if (log_count(f, needles) >= count) return 1;
        nanosleep(&tick, NULL);
    }
    fprintf(stderr, "  the fixture's log has fewer than %d lines with %s\n", count, needle);
    return 0;
}

/* Over HTTP a listen is a POST whose SSE stream stays open: one that drops without
 * a response is sent again, and unsubscribing closes it. */
static void test_listen_over_http(void) {
    struct fixture f;
    const char *args[] = {"--era", "modern", "--fault", "listen-drop", NULL};
    if (fixture_start(&f, args) != 0) {
        CHECK(0);
        return;
    }
    struct updates u;
    mcpc_options_t *o = options_for(&u);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(f.url, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (c) {
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
        CHECK(wait_updates(&u, 2));
        CHECK(wait_log(&f, "\"event\":\"listen\"", 2));
        CHECK_STATUS(mcpc_client_unsubscribe_resource(c, "res://1", NULL), MCPC_OK);
        CHECK(wait_log(&f, "\"event\":\"listen-closed\"", 1));
        const char *listens[] = {"\"event\":\"listen\"", NULL};
        CHECK(log_count(&f, listens) == 2);
        done(c, &u);
    }
    fixture_stop(&f);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_listen_carries_the_set);
    RUN(test_listen_not_acknowledged);
    RUN(test_listen_sent_again);
    RUN(test_listen_close);
    RUN(test_listen_over_http);
    return harness_finish();
}
