/* C tests of reading resources, getting prompts and completions against
 * tests/fixtures/input_server.py, in both protocol generations, hostile answers
 * among them. Run from the repository root; the closing line is
 * "N passed, N failed, N skipped". An argument runs only tests whose name contains it. */
#define _GNU_SOURCE
#include <pthread.h>

#include "harness.h"

static const char *ERAS[] = {"modern", "legacy"};

/* Connects to the fixture in `era` with `o` (freed here; NULL: defaults). */
static mcpc_client_t *connect_with(const char *era, mcpc_options_t *o) {
    char flag[32];
    snprintf(flag, sizeof flag, "--era=%s", era);
    const char *argv[] = {"python3", "tests/fixtures/input_server.py", flag};
    if (!o) o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 3, o, &c), MCPC_OK);
    mcpc_options_free(o);
    return c;
}

static mcpc_client_t *connect_era(const char *era) { return connect_with(era, NULL); }

static int has(const char *text, const char *needle) {
    if (!text || !strstr(text, needle)) {
        fprintf(stderr, "  %s: does not hold %s\n", text ? text : "(null)", needle);
        return 0;
    }
    return 1;
}

static void test_read_text_and_blob(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_era(ERAS[e]);
        if (!c) continue;
        mcpc_contents_t *r = NULL;
        CHECK_STATUS(mcpc_client_read_resource(c, "res://1", NULL, &r), MCPC_OK);
        CHECK(mcpc_contents_count(r) == 1);
        size_t len = 99;
        CHECK(strcmp(mcpc_contents_text(r, 0, &len), "one") == 0 && len == 3);
        CHECK(strcmp(mcpc_contents_uri(r, 0), "res://1") == 0);
        CHECK(strcmp(mcpc_contents_mime_type(r, 0), "text/plain") == 0);
        CHECK(strcmp(mcpc_contents_meta_json(r, 0), "{\"k\":1}") == 0);
        CHECK(mcpc_contents_blob(r, 0, &len) == NULL && len == 0);
        CHECK(mcpc_contents_uri(r, 1) == NULL && mcpc_contents_text(r, 1, NULL) == NULL);
        CHECK(has(mcpc_contents_json(r), "\"contents\""));
        mcpc_contents_free(r);

        /* Several contents: a blob decoded to its 256 bytes, then a text. */
        r = NULL;
        CHECK_STATUS(mcpc_client_read_resource(c, "res://two", NULL, &r), MCPC_OK);
        CHECK(mcpc_contents_count(r) == 2);
        const uint8_t *b = mcpc_contents_blob(r, 0, &len);
        int ok = b != NULL && len == 256;
        for (size_t i = 0; ok && i < 256; i++) ok = b[i] == (uint8_t)i;
        CHECK(ok);
        CHECK(mcpc_contents_text(r, 0, NULL) == NULL && mcpc_contents_meta_json(r, 0) == NULL);
        CHECK(strcmp(mcpc_contents_text(r, 1, NULL), "second") == 0);
        CHECK(strcmp(mcpc_contents_uri(r, 1), "res://two#2") == 0 && mcpc_contents_mime_type(r, 1) == NULL);
        mcpc_contents_free(r);

        /* A text holding a NUL is handed out whole, by its length. */
        r = NULL;
        CHECK_STATUS(mcpc_client_read_resource(c, "res://nul", NULL, &r), MCPC_OK);
        const char *t = mcpc_contents_text(r, 0, &len);
        CHECK(t && len == 3 && memcmp(t, "a\0b", 3) == 0);
        mcpc_contents_free(r);
        mcpc_client_free(c);
    }
}

static void test_read_refusals(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_era(ERAS[e]);
        if (!c) continue;
        struct {
            const char *uri;
            mcpc_status_t want;
            const char *msg;
        } cases[] = {
            {"res://notb64", MCPC_ERR_PROTOCOL, "not base64"},
            {"res://none", MCPC_ERR_PROTOCOL, "no contents"},
            {"res://both", MCPC_ERR_PROTOCOL, "both text and blob"},
            {"res://missing", MCPC_ERR_RPC, "Resource not found"},
            {"", MCPC_ERR_INVALID_ARG, "empty"},
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            mcpc_contents_t *r = (mcpc_contents_t *)1;
            CHECK_STATUS(mcpc_client_read_resource(c, cases[i].uri, NULL, &r), cases[i].want);
            CHECK(r == NULL);
            CHECK(has(mcpc_last_error_message(), cases[i].msg));
        }
        mcpc_contents_t *r = NULL;
        CHECK_STATUS(mcpc_client_read_resource(c, "res://missing", NULL, &r), MCPC_ERR_RPC);
        CHECK(mcpc_last_error_rpc_code() == -32002);
        /* The client goes on after each. */
        CHECK_STATUS(mcpc_client_read_resource(c, "res://1", NULL, &r), MCPC_OK);
        mcpc_contents_free(r);
        CHECK_STATUS(mcpc_client_read_resource(c, NULL, NULL, &r), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_read_resource(c, "res://1", NULL, NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_read_resource(NULL, "res://1", NULL, &r), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_read_resource(c, "\xff", NULL, &r), MCPC_ERR_INVALID_UTF8);
        mcpc_client_free(c);
    }
    CHECK(mcpc_contents_count(NULL) == 0 && mcpc_contents_json(NULL) == NULL);
    mcpc_contents_free(NULL);
}

static void test_prompt_keeps_every_content_type(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_era(ERAS[e]);
        if (!c) continue;
        char *json = NULL;
        CHECK_STATUS(mcpc_client_get_prompt(c, "greet", "{\"who\":\"ada\"}", NULL, &json), MCPC_OK);
        CHECK(has(json, "\"hello ada\""));
        CHECK(has(json, "\"type\": \"image\"") && has(json, "\"type\": \"audio\""));
        CHECK(has(json, "\"type\": \"resource_link\"") && has(json, "\"type\": \"resource\""));
        CHECK(has(json, "\"description\": \"a greeting\""));
        mcpc_string_free(json);
        json = NULL;
        CHECK_STATUS(mcpc_client_get_prompt(c, "greet", NULL, NULL, &json), MCPC_OK);
        CHECK(has(json, "hello nobody"));
        mcpc_string_free(json);

        json = (char *)1;
        CHECK_STATUS(mcpc_client_get_prompt(c, "bad", NULL, NULL, &json), MCPC_ERR_PROTOCOL);
        CHECK(json == NULL && has(mcpc_last_error_message(), "messages[0] has no string role"));
        CHECK_STATUS(mcpc_client_get_prompt(c, "nope", NULL, NULL, &json), MCPC_ERR_RPC);
        CHECK(mcpc_last_error_rpc_code() == -32602);
        CHECK_STATUS(mcpc_client_get_prompt(c, "greet", "{\"who\":1}", NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK(has(mcpc_last_error_message(), "\"who\" is not a string"));
        CHECK_STATUS(mcpc_client_get_prompt(c, "greet", "[]", NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_get_prompt(c, "", NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
        mcpc_client_free(c);
    }
}

static void test_completion(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_era(ERAS[e]);
        if (!c) continue;
        char *json = NULL;
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "who", "al", NULL, NULL, &json), MCPC_OK);
        CHECK(has(json, "[\"alice\", \"albert\"]") && has(json, "\"hasMore\": false"));
        mcpc_string_free(json);
        json = NULL;
        CHECK_STATUS(
            mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "who", "", "{\"lang\":\"en\"}", NULL, &json),
            MCPC_OK);
        CHECK(has(json, "\"bob\"") && has(json, "ctx={\\\"lang\\\": \\\"en\\\"}"));
        mcpc_string_free(json);

        json = (char *)1;
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_RESOURCE, "res://{id}", "id", "", NULL, NULL, &json),
                     MCPC_ERR_PROTOCOL);
        CHECK(json == NULL && has(mcpc_last_error_message(), "more than 100"));
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_RESOURCE, "res://x", "id", "", NULL, NULL, &json),
                     MCPC_ERR_RPC);
        CHECK_STATUS(mcpc_client_complete(c, 7, "greet", "who", "", NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "", "", NULL, NULL, &json),
                     MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "who", NULL, NULL, NULL, &json),
                     MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "who", "", "{\"a\":[]}", NULL, &json),
                     MCPC_ERR_INVALID_ARG);
        /* Still usable. */
        CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "who", "b", NULL, NULL, &json), MCPC_OK);
        mcpc_string_free(json);
        mcpc_client_free(c);
    }
}

static void test_after_close(void) {
    mcpc_client_t *c = connect_era("modern");
    if (!c) return;
    CHECK(mcpc_client_close(c) == MCPC_OK);
    mcpc_contents_t *r = NULL;
    char *json = NULL;
    CHECK_STATUS(mcpc_client_read_resource(c, "res://1", NULL, &r), MCPC_ERR_CLOSED);
    CHECK_STATUS(mcpc_client_get_prompt(c, "greet", NULL, NULL, &json), MCPC_ERR_CLOSED);
    CHECK_STATUS(mcpc_client_complete(c, MCPC_COMPLETE_PROMPT, "greet", "who", "", NULL, NULL, &json),
                 MCPC_ERR_CLOSED);
    mcpc_client_free(c);
}

/* What the log and notification callbacks got. */
struct logs {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int n;
    char text[512];
    int others;
};

static void on_log(void *ud, const char *level, const char *logger, const char *data) {
    struct logs *l = ud;
    pthread_mutex_lock(&l->lock);
    size_t used = strlen(l->text);
    snprintf(l->text + used, sizeof l->text - used, "%s/%s/%s;", level, logger ? logger : "-", data);
    l->n++;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

static void on_other(void *ud, const char *method, const char *params) {
    struct logs *l = ud;
    (void)params;
    pthread_mutex_lock(&l->lock);
    if (strcmp(method, "notifications/message") == 0) l->others++;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

/* Calls "log", waits (bounded) until `want` messages and the level-less one came,
 * and returns what the log callback got (reset for the next call). */
static void logged(mcpc_client_t *c, struct logs *l, int want, const char *want_text) {
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "log", NULL, NULL, &r), MCPC_OK);
    char expect[32];
    snprintf(expect, sizeof expect, "logged %d", want);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), expect) == 0);
    mcpc_result_free(r);
    /* The notifications came before the response, but may reach their callbacks
     * after it (on the transport's thread). */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&l->lock);
    while ((l->n < want || l->others < 1) && pthread_cond_timedwait(&l->cond, &l->lock, &until) == 0) {
    }
    CHECK(l->n == want && l->others == 1);
    if (strcmp(l->text, want_text) != 0) fprintf(stderr, "  got %s, want %s\n", l->text, want_text);
    CHECK(strcmp(l->text, want_text) == 0);
    l->n = 0;
    l->others = 0;
    l->text[0] = 0;
    pthread_mutex_unlock(&l->lock);
}

static void test_logging(void) {
    for (int e = 0; e < 2; e++) {
        struct logs l;
        memset(&l, 0, sizeof l);
        pthread_mutex_init(&l.lock, NULL);
        pthread_cond_init(&l.cond, NULL);
        mcpc_options_t *o = mcpc_options_new();
        CHECK_STATUS(mcpc_options_set_log_level(o, "info"), MCPC_OK);
        CHECK_STATUS(mcpc_options_set_log_callback(o, on_log, &l, NULL), MCPC_OK);
        CHECK_STATUS(mcpc_options_set_notification_callback(o, on_other, &l, NULL), MCPC_OK);
        CHECK_STATUS(mcpc_options_set_log_level(o, "loud"), MCPC_ERR_INVALID_ARG);
        mcpc_client_t *c = connect_with(ERAS[e], o);
        if (!c) continue;
        logged(c, &l, 2, "info/-/\"two\";error/-/{\"n\": 3};");
        CHECK_STATUS(mcpc_client_set_log_level(c, "debug", NULL), MCPC_OK);
        logged(c, &l, 3, "debug/fx/{\"n\": 1};info/-/\"two\";error/-/{\"n\": 3};");
        CHECK_STATUS(mcpc_client_set_log_level(c, "error", NULL), MCPC_OK);
        logged(c, &l, 1, "error/-/{\"n\": 3};");
        CHECK_STATUS(mcpc_client_set_log_level(c, "verbose", NULL), MCPC_ERR_INVALID_ARG);
        /* NULL turns the log off under 2026-07-28; before it, nothing can. */
        CHECK_STATUS(mcpc_client_set_log_level(c, NULL, NULL), MCPC_OK);
        if (e == 0)
            logged(c, &l, 0, "");
        else
            logged(c, &l, 1, "error/-/{\"n\": 3};");
        mcpc_client_free(c);
        /* No level asked for: no log. */
        c = connect_era(ERAS[e]);
        if (c) {
            mcpc_result_t *r = NULL;
            CHECK_STATUS(mcpc_client_call_tool(c, "log", NULL, NULL, &r), MCPC_OK);
            CHECK(r && strcmp(mcpc_result_text(r, NULL), "logged 0") == 0);
            mcpc_result_free(r);
            mcpc_client_free(c);
        }
    }
    CHECK_STATUS(mcpc_client_set_log_level(NULL, "info", NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_log_callback(NULL, on_log, NULL, NULL), MCPC_ERR_INVALID_ARG);
}

struct updates {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char last[256];
};

static void on_update(void *ud, const char *method, const char *params) {
    struct updates *u = ud;
    pthread_mutex_lock(&u->lock);
    if (strcmp(method, "notifications/resources/updated") == 0)
        snprintf(u->last, sizeof u->last, "%s", params ? params : "");
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
}

static void on_changed(void *ud, const char *method, const char *params) {
    struct updates *u = ud;
    (void)params;
    pthread_mutex_lock(&u->lock);
    if (strcmp(method, "notifications/tools/list_changed") == 0) snprintf(u->last, sizeof u->last, "%s", method);
    pthread_cond_broadcast(&u->cond);
    pthread_mutex_unlock(&u->lock);
}

static void test_subscriptions(void) {
    struct updates u;
    memset(&u, 0, sizeof u);
    pthread_mutex_init(&u.lock, NULL);
    pthread_cond_init(&u.cond, NULL);
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_notification_callback(o, on_update, &u, NULL), MCPC_OK);
    mcpc_client_t *c = connect_with("legacy", o);
    if (c) {
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "res://1", NULL), MCPC_OK);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 10;
        pthread_mutex_lock(&u.lock);
        while (!u.last[0] && pthread_cond_timedwait(&u.cond, &u.lock, &until) == 0) {
        }
        CHECK(strstr(u.last, "res://1") != NULL);
        pthread_mutex_unlock(&u.lock);
        CHECK_STATUS(mcpc_client_unsubscribe_resource(c, "res://1", NULL), MCPC_OK);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "seen", NULL, NULL, &r), MCPC_OK);
        CHECK(r && strstr(mcpc_result_text(r, NULL), "resources/unsubscribe res://1") != NULL);
        mcpc_result_free(r);
        CHECK_STATUS(mcpc_client_subscribe_resource(c, "", NULL), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_subscribe_resource(c, NULL, NULL), MCPC_ERR_INVALID_ARG);
        mcpc_client_free(c);
    }
    /* Under 2026-07-28 they go through subscriptions/listen: tests/c/test_listen.c. */
    CHECK_STATUS(mcpc_client_unsubscribe_resource(NULL, "res://1", NULL), MCPC_ERR_INVALID_ARG);
}

struct async_out {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    mcpc_status_t status;
    mcpc_result_t *result;
};

static void on_async(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    struct async_out *o = ud;
    (void)msg;
    pthread_mutex_lock(&o->lock);
    o->status = st;
    o->result = r;
    o->done = 1;
    pthread_cond_broadcast(&o->cond);
    pthread_mutex_unlock(&o->lock);
}

static void test_output_schemas(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_options_t *o = mcpc_options_new();
        CHECK_STATUS(mcpc_options_set_validate_output(o, true), MCPC_OK);
        mcpc_client_t *c = connect_with(ERAS[e], o);
        if (!c) continue;
        mcpc_result_t *r = NULL;
        /* Not listed yet: not checked. */
        CHECK_STATUS(mcpc_client_call_tool(c, "misshaped", NULL, NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        mcpc_tool_list_t *tools = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &tools), MCPC_OK);
        mcpc_tool_list_free(tools);
        CHECK_STATUS(mcpc_client_call_tool(c, "shaped", NULL, NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "misshaped", NULL, NULL, &r), MCPC_ERR_OUTPUT_SCHEMA);
        CHECK(r != NULL && strstr(mcpc_result_structured_json(r), "one") != NULL); /* still handed out */
        CHECK(strstr(mcpc_last_error_message(), "/n") != NULL);
        mcpc_result_free(r);
        r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "unshaped", NULL, NULL, &r), MCPC_ERR_OUTPUT_SCHEMA);
        CHECK(strstr(mcpc_last_error_message(), "no structuredContent") != NULL);
        mcpc_result_free(r);
        r = NULL;
        /* An isError result is never checked; a schema that needs fetching is not used. */
        CHECK_STATUS(mcpc_client_call_tool(c, "failing", NULL, NULL, &r), MCPC_ERR_TOOL);
        mcpc_result_free(r);
        r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "remote", NULL, NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        /* The asynchronous form checks too. */
        struct async_out out = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, MCPC_OK, NULL};
        CHECK_STATUS(mcpc_client_call_tool_async(c, "misshaped", NULL, NULL, on_async, &out, NULL), MCPC_OK);
        pthread_mutex_lock(&out.lock);
        while (!out.done) pthread_cond_wait(&out.cond, &out.lock);
        pthread_mutex_unlock(&out.lock);
        CHECK(out.status == MCPC_ERR_OUTPUT_SCHEMA && out.result != NULL);
        mcpc_result_free(out.result);
        mcpc_client_free(c);
    }
    /* Off (the default): nothing is checked. */
    mcpc_client_t *c = connect_era("legacy");
    if (c) {
        mcpc_tool_list_t *tools = NULL;
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &tools), MCPC_OK);
        mcpc_tool_list_free(tools);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "misshaped", NULL, NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        mcpc_client_free(c);
    }
    CHECK_STATUS(mcpc_options_set_validate_output(NULL, true), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_client_forget_lists(NULL), MCPC_ERR_INVALID_ARG);
}

/* The server's count of tools/list and resources/list requests. */
static int server_lists(mcpc_client_t *c) {
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "lists", NULL, NULL, &r), MCPC_OK);
    int n = r ? atoi(mcpc_result_text(r, NULL)) : -1;
    mcpc_result_free(r);
    return n;
}

static void list_tools(mcpc_client_t *c, const mcpc_call_opts_t *o) {
    mcpc_tool_list_t *tools = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, o, &tools), MCPC_OK);
    CHECK(mcpc_tool_list_len(tools) > 5);
    mcpc_tool_list_free(tools);
}

static void test_lists_are_kept(void) {
    for (int e = 0; e < 2; e++) {
        struct updates u;
        memset(&u, 0, sizeof u);
        pthread_mutex_init(&u.lock, NULL);
        pthread_cond_init(&u.cond, NULL);
        mcpc_options_t *o = mcpc_options_new();
        CHECK_STATUS(mcpc_options_set_notification_callback(o, on_changed, &u, NULL), MCPC_OK);
        mcpc_client_t *c = connect_with(ERAS[e], o);
        if (!c) continue;
        /* Kept: under 2026-07-28 for the ttlMs given, before it while listChanged holds. */
        list_tools(c, NULL);
        list_tools(c, NULL);
        CHECK(server_lists(c) == 1);
        char *json = NULL;
        for (int i = 0; i < 2; i++) {
            CHECK_STATUS(mcpc_client_list_resources(c, NULL, &json), MCPC_OK);
            CHECK(json && strstr(json, "res://2") != NULL);
            mcpc_string_free(json);
        }
        int after = server_lists(c);
        /* Two pages: kept under 2026-07-28; before it resources declare no listChanged. */
        CHECK(after == (e == 0 ? 3 : 5));
        /* The host may ask for fresh lists. */
        CHECK_STATUS(mcpc_client_forget_lists(c), MCPC_OK);
        list_tools(c, NULL);
        CHECK(server_lists(c) == after + 1);
        if (e == 1) {
            /* list_changed drops the kept list. */
            mcpc_result_t *r = NULL;
            CHECK_STATUS(mcpc_client_call_tool(c, "change", NULL, NULL, &r), MCPC_OK);
            mcpc_result_free(r);
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += 10;
            pthread_mutex_lock(&u.lock);
            while (!u.last[0] && pthread_cond_timedwait(&u.cond, &u.lock, &until) == 0) {
            }
            pthread_mutex_unlock(&u.lock);
            list_tools(c, NULL);
            CHECK(server_lists(c) == after + 2);
            list_tools(c, NULL);
            CHECK(server_lists(c) == after + 2);
        }
        mcpc_client_free(c);
    }
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_read_text_and_blob);
    RUN(test_read_refusals);
    RUN(test_prompt_keeps_every_content_type);
    RUN(test_completion);
    RUN(test_after_close);
    RUN(test_logging);
    RUN(test_subscriptions);
    RUN(test_output_schemas);
    RUN(test_lists_are_kept);
    return harness_finish();
}
