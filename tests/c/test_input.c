/* C tests of input for the server (elicitation, sampling, roots) against
 * tests/fixtures/input_server.py, in both protocol generations: under 2026-07-28 the
 * requests come as input_required rounds, before it as the server's own requests.
 * Run from the repository root; the closing line is "N passed, N failed, N skipped".
 * An argument runs only tests whose name contains it. */
#define _GNU_SOURCE
#include <pthread.h>

#include "harness.h"

static const char *ERAS[] = {"modern", "legacy"};

/* What a handler does with the request it gets. */
enum script { ANSWER, KEEP, DROP };

struct host {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    enum script script;
    const char *answer; /* a result (mcpc_input_complete), or NULL: accept with `content` */
    const char *content;
    int calls;
    int kind;
    int bad_status;    /* what a wrong answer first returned (0: none tried) */
    int second_status; /* what answering again returned */
    int finished;      /* handlers that returned */
    char server[64];
    char message[64];
    char url[64];
    int had_schema;
    mcpc_input_t *kept;
};

static struct host host_new(enum script s) {
    struct host h;
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    h.script = s;
    return h;
}

static void copy(char *dst, const char *src) {
    snprintf(dst, 64, "%s", src ? src : "(null)");
}

static void on_input(void *userdata, mcpc_input_t *input) {
    struct host *h = userdata;
    pthread_mutex_lock(&h->lock);
    h->calls++;
    h->kind = mcpc_input_kind(input);
    copy(h->server, mcpc_input_server(input));
    copy(h->message, mcpc_input_message(input));
    copy(h->url, mcpc_input_url(input));
    h->had_schema = mcpc_input_schema_json(input) != NULL;
    if (h->script == KEEP) {
        h->kept = input;
        pthread_cond_broadcast(&h->cond);
        pthread_mutex_unlock(&h->lock);
        return;
    }
    pthread_mutex_unlock(&h->lock);
    if (h->script == DROP) {
        mcpc_input_free(input);
        return;
    }
    int bad = 0;
    if (h->kind == MCPC_INPUT_ELICIT_FORM) bad = mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, "{\"name\":5}");
    mcpc_status_t st = h->answer ? mcpc_input_complete(input, h->answer)
                                 : mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, h->content);
    if (st != MCPC_OK) fprintf(stderr, "  answering: %s\n", mcpc_last_error_message());
    int second = mcpc_input_elicit(input, MCPC_ELICIT_DECLINE, NULL);
    mcpc_input_free(input);
    pthread_mutex_lock(&h->lock);
    h->bad_status = bad;
    h->second_status = second;
    h->finished++;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

/* Waits until `n` handlers have returned: a call may return before its handler does. */
static void wait_finished(struct host *h, int n) {
    pthread_mutex_lock(&h->lock);
    while (h->finished < n) pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static void free_nothing(void *p) { (void)p; }

/* Connects to the fixture in `era`; `h` (may be NULL) handles every kind. */
static mcpc_status_t connect_era(const char *era, struct host *h, int64_t timeout_ms, mcpc_client_t **out) {
    char flag[32];
    snprintf(flag, sizeof flag, "--era=%s", era);
    const char *argv[] = {"python3", "tests/fixtures/input_server.py", flag};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, timeout_ms);
    if (h) {
        CHECK_STATUS(mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM | MCPC_ELICIT_MODE_URL, on_input,
                                                          h, free_nothing),
                     MCPC_OK);
        CHECK_STATUS(mcpc_options_set_sampling_handler(o, MCPC_SAMPLING_TOOLS, on_input, h, NULL), MCPC_OK);
        CHECK_STATUS(mcpc_options_set_roots_handler(o, on_input, h, NULL), MCPC_OK);
    }
    mcpc_status_t st = mcpc_client_connect_stdio(argv, 3, o, out);
    mcpc_options_free(o);
    return st;
}

/* Calls `tool` and returns its text (owned; NULL on failure), with the status. */
static char *call_text(mcpc_client_t *c, const char *tool, mcpc_status_t *st) {
    mcpc_result_t *r = NULL;
    *st = mcpc_client_call_tool(c, tool, NULL, NULL, &r);
    char *text = r ? strdup(mcpc_result_text(r, NULL)) : NULL;
    mcpc_result_free(r);
    return text;
}

static int contains(const char *text, const char *needle) {
    if (!text || !strstr(text, needle)) {
        fprintf(stderr, "  %s: does not hold %s\n", text ? text : "(null)", needle);
        return 0;
    }
    return 1;
}

static void test_capabilities_are_the_handlers(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(ANSWER);
        for (int with = 0; with < 2; with++) {
            mcpc_client_t *c = NULL;
            CHECK_STATUS(connect_era(ERAS[e], with ? &h : NULL, 10000, &c), MCPC_OK);
            mcpc_status_t st;
            char *t = call_text(c, "caps", &st);
            CHECK_STATUS(st, MCPC_OK);
            if (!with) {
                CHECK(t && strcmp(t, "{}") == 0);
            } else {
                CHECK(contains(t, "\"elicitation\": {\"form\": {}, \"url\": {}}"));
                CHECK(contains(t, "\"sampling\": {\"tools\": {}}"));
                CHECK(contains(t, e == 0 ? "\"roots\": {}" : "\"roots\": {\"listChanged\": true}"));
            }
            free(t);
            mcpc_client_free(c);
        }
    }
}

static void test_form_elicitation_checked_and_defaults(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(ANSWER);
        h.content = "{\"name\":\"Ann\"}";
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        mcpc_status_t st;
        char *t = call_text(c, "form", &st);
        CHECK_STATUS(st, MCPC_OK);
        /* The default of the field left out was filled in. */
        CHECK(contains(t, "\"action\": \"accept\", \"content\": {\"age\": 7, \"name\": \"Ann\"}"));
        free(t);
        wait_finished(&h, 1);
        CHECK(h.calls == 1 && h.kind == MCPC_INPUT_ELICIT_FORM && h.had_schema);
        CHECK(strcmp(h.server, "input-server") == 0 && strcmp(h.message, "Who are you?") == 0);
        CHECK(h.bad_status == MCPC_ERR_INPUT_INVALID);
        CHECK(h.second_status == MCPC_ERR_ALREADY_COMPLETED);
        mcpc_client_free(c);
    }
}

static void test_url_elicitation_shows_the_url(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(ANSWER);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        mcpc_status_t st;
        char *t = call_text(c, "url", &st);
        CHECK_STATUS(st, MCPC_OK);
        CHECK(contains(t, "{\"action\": \"accept\"}"));
        free(t);
        CHECK(h.kind == MCPC_INPUT_ELICIT_URL && strcmp(h.url, "https://example.com/consent") == 0);
        CHECK(!h.had_schema);
        mcpc_client_free(c);
    }
}

static void test_schema_not_an_object(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(ANSWER);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        mcpc_status_t st;
        char *t = call_text(c, "bad_schema", &st);
        if (e == 0) {
            CHECK_STATUS(st, MCPC_ERR_PROTOCOL);
            CHECK(strstr(mcpc_last_error_message(), "not an object") != NULL);
        } else {
            CHECK_STATUS(st, MCPC_OK); /* the server got -32602 and says so */
            CHECK(contains(t, "-32602") && contains(t, "not an object"));
        }
        free(t);
        CHECK(h.calls == 0);
        mcpc_client_free(c);
    }
}

static void test_sampling_with_and_without_handler(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], NULL, 10000, &c), MCPC_OK);
        mcpc_status_t st;
        char *t = call_text(c, "sampling", &st);
        if (e == 0) {
            CHECK_STATUS(st, MCPC_ERR_INPUT_REQUIRED);
            CHECK(strstr(mcpc_last_error_message(), "sampling/createMessage") != NULL);
        } else {
            CHECK_STATUS(st, MCPC_OK);
            CHECK(contains(t, "-32601"));
        }
        free(t);
        mcpc_client_free(c);

        struct host h = host_new(ANSWER);
        h.answer = "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paris\"},\"model\":\"m\"}";
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        t = call_text(c, "sampling", &st);
        CHECK_STATUS(st, MCPC_OK);
        CHECK(contains(t, "Paris") && h.kind == MCPC_INPUT_SAMPLING);
        free(t);
        mcpc_client_free(c);
    }
}

static void test_roots_and_their_changes(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], NULL, 10000, &c), MCPC_OK);
        CHECK_STATUS(mcpc_client_roots_changed(c), MCPC_ERR_NOT_SUPPORTED);
        mcpc_client_free(c);

        struct host h = host_new(ANSWER);
        h.answer = "{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}";
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        mcpc_status_t st;
        char *t = call_text(c, "roots", &st);
        CHECK_STATUS(st, MCPC_OK);
        CHECK(contains(t, "file:///tmp") && h.kind == MCPC_INPUT_ROOTS);
        free(t);
        CHECK_STATUS(mcpc_client_roots_changed(c), MCPC_OK);
        t = call_text(c, "seen", &st); /* stdio keeps order: the notification came first */
        CHECK(e == 0 ? !strstr(t ? t : "", "roots") : contains(t, "notifications/roots/list_changed"));
        free(t);
        mcpc_client_free(c);
    }
    CHECK_STATUS(mcpc_client_roots_changed(NULL), MCPC_ERR_INVALID_ARG);
}

static void test_round_after_round_is_bounded(void) {
    struct host h = host_new(ANSWER);
    h.content = "{\"name\":\"Ann\"}";
    mcpc_client_t *c = NULL;
    CHECK_STATUS(connect_era("modern", &h, 10000, &c), MCPC_OK);
    mcpc_status_t st;
    char *t = call_text(c, "endless", &st);
    CHECK_STATUS(st, MCPC_ERR_INPUT_REQUIRED);
    CHECK(t == NULL);
    /* Ten rounds answered; the eleventh request for input is the error. */
    CHECK(h.calls == 10);
    /* One round may ask for at most 64 inputs; the host is asked for none. */
    int before = h.calls;
    t = call_text(c, "wide", &st);
    CHECK_STATUS(st, MCPC_ERR_PROTOCOL);
    CHECK(t == NULL && h.calls == before);
    mcpc_client_free(c);
}

static void wait_kept(struct host *h) {
    pthread_mutex_lock(&h->lock);
    while (!h->kept) pthread_cond_wait(&h->cond, &h->lock);
    pthread_mutex_unlock(&h->lock);
}

static void test_never_completed_ends_at_the_timeout(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(KEEP);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], &h, 600, &c), MCPC_OK);
        mcpc_call_opts_t opts;
        mcpc_call_opts_init(&opts);
        opts.timeout_ms = e == 0 ? 600 : 10000;
        mcpc_result_t *r = NULL;
        mcpc_status_t st = mcpc_client_call_tool(c, "form", NULL, &opts, &r);
        if (e == 0) {
            CHECK_STATUS(st, MCPC_ERR_TIMEOUT);
        } else {
            /* The client's timeout ended the request: the server got an error. */
            CHECK_STATUS(st, MCPC_OK);
            CHECK(r && contains(mcpc_result_text(r, NULL), "timed out"));
        }
        mcpc_result_free(r);
        wait_kept(&h);
        CHECK_STATUS(mcpc_input_elicit(h.kept, MCPC_ELICIT_ACCEPT, "{\"name\":\"late\"}"), MCPC_ERR_TIMEOUT);
        mcpc_input_free(h.kept);
        mcpc_client_free(c);
    }
}

struct done {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int finished;
    mcpc_status_t status;
};

static void on_done(void *userdata, mcpc_status_t status, mcpc_result_t *result, const char *message) {
    (void)message;
    struct done *d = userdata;
    mcpc_result_free(result);
    pthread_mutex_lock(&d->lock);
    d->finished = 1;
    d->status = status;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

static void test_free_client_with_handles_outstanding(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(KEEP);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        struct done d = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPC_OK};
        CHECK_STATUS(mcpc_client_call_tool_async(c, "form", NULL, NULL, on_done, &d, NULL), MCPC_OK);
        wait_kept(&h);
        mcpc_client_free(c); /* completes the call */
        CHECK(d.finished && d.status != MCPC_OK);
        CHECK_STATUS(mcpc_input_elicit(h.kept, MCPC_ELICIT_ACCEPT, "{\"name\":\"x\"}"), MCPC_ERR_CLOSED);
        CHECK(mcpc_input_kind(h.kept) == MCPC_INPUT_ELICIT_FORM);
        mcpc_input_free(h.kept);
    }
}

static void test_freed_unanswered_is_refused(void) {
    for (int e = 0; e < 2; e++) {
        struct host h = host_new(DROP);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], &h, 10000, &c), MCPC_OK);
        mcpc_status_t st;
        char *t = call_text(c, "form", &st);
        if (e == 0) {
            CHECK_STATUS(st, MCPC_ERR_INPUT_REQUIRED);
            CHECK(strstr(mcpc_last_error_message(), "refused") != NULL);
        } else {
            CHECK_STATUS(st, MCPC_OK);
            CHECK(contains(t, "\"code\": -1"));
        }
        free(t);
        mcpc_client_free(c);
    }
}

/* The listings other than tools, with the tool listing's guards, in both eras. */
static void test_listings_are_guarded(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = NULL;
        CHECK_STATUS(connect_era(ERAS[e], NULL, 10000, &c), MCPC_OK);
        char *json = NULL;
        CHECK_STATUS(mcpc_client_list_resources(c, NULL, &json), MCPC_OK);
        CHECK(json && strcmp(json, "[{\"uri\": \"res://1\", \"name\": \"one\"},{\"uri\": \"res://2\", \"name\": \"two\"}]") == 0);
        mcpc_string_free(json);
        json = (char *)1;
        CHECK_STATUS(mcpc_client_list_resource_templates(c, NULL, &json), MCPC_ERR_CURSOR_REPEATED);
        CHECK(json == NULL);
        CHECK_STATUS(mcpc_client_list_prompts(c, NULL, &json), MCPC_ERR_DUPLICATE_TOOL);
        CHECK(strstr(mcpc_last_error_message(), "prompts/list") != NULL);
        CHECK_STATUS(mcpc_client_list_prompts(c, NULL, NULL), MCPC_ERR_INVALID_ARG);
        mcpc_client_free(c);
    }
    /* The page limit holds too. */
    const char *argv[] = {"python3", "tests/fixtures/input_server.py", "--era=modern"};
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_max_pages(o, 1);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 3, o, &c), MCPC_OK);
    mcpc_options_free(o);
    char *json = NULL;
    CHECK_STATUS(mcpc_client_list_resources(c, NULL, &json), MCPC_ERR_TOO_MANY_PAGES);
    mcpc_client_free(c);
    CHECK_STATUS(mcpc_client_list_resources(NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
}

static void test_bad_arguments(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_elicitation_handler(o, 0, on_input, NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_elicitation_handler(o, 8, on_input, NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_sampling_handler(o, 0, NULL, NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_roots_handler(NULL, on_input, NULL, NULL), MCPC_ERR_INVALID_ARG);
    mcpc_options_free(o);
    CHECK_STATUS(mcpc_input_complete(NULL, "{}"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_input_elicit(NULL, MCPC_ELICIT_ACCEPT, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_input_fail(NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK(mcpc_input_kind(NULL) == 0 && mcpc_input_server(NULL) == NULL);
    mcpc_input_free(NULL);
}

#define RUN(fn) run_test(#fn, fn, only)

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_bad_arguments);
    RUN(test_capabilities_are_the_handlers);
    RUN(test_form_elicitation_checked_and_defaults);
    RUN(test_url_elicitation_shows_the_url);
    RUN(test_schema_not_an_object);
    RUN(test_sampling_with_and_without_handler);
    RUN(test_roots_and_their_changes);
    RUN(test_round_after_round_is_bounded);
    RUN(test_never_completed_ends_at_the_timeout);
    RUN(test_free_client_with_handles_outstanding);
    RUN(test_freed_unanswered_is_refused);
    RUN(test_listings_are_guarded);
    return harness_finish();
}
