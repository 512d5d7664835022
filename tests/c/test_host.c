/* C tests of the host (many servers behind one mcpc_host_t) against demo servers:
 * a configuration file read, servers started together, the failed ones (a start
 * that never finishes, a command that does not exist) leaving the rest running, the
 * catalog under qualified names with a collision renamed and reported, include and
 * exclude lists, calls routed by qualified name, a server that dies mid-call losing
 * only its own tools, prompts, the host's name format, required servers, variables
 * and the host's resolver. */
#define _GNU_SOURCE
#include <pthread.h>

#include "harness.h"

static char cfg_path[128];

/* What the event callback saw. */
struct seen {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int settled;
    int catalog_changes;
    int failed_crash;
    int ready;
    int failed;
    int disabled;
    char last_detail[512];
    mcpc_host_t *host;
    mcpc_status_t nested_start, nested_status, nested_load;
    int idle;
};

static void on_event(void *ud, mcpc_host_event_t ev, const char *server, mcpc_server_state_t state,
                     const char *detail) {
    struct seen *s = ud;
    pthread_mutex_lock(&s->mu);
    if (ev == MCPC_HOST_SETTLED) {
        s->settled++;
        /* A blocking host call would wait on this report; reading the host does not. */
        char *json = NULL;
        s->nested_status = mcpc_host_status(s->host, &json);
        mcpc_string_free(json);
        s->nested_start = mcpc_host_start(s->host);
        /* A call that reports from inside the report: no wait on itself. */
        s->nested_load = mcpc_host_load_catalog(s->host, "{\"tools\":[]}", NULL);
        snprintf(s->last_detail, sizeof s->last_detail, "%s", detail ? detail : "");
    } else if (ev == MCPC_HOST_CATALOG_CHANGED) {
        s->catalog_changes++;
    } else if (ev == MCPC_HOST_SERVER_STATE) {
        if (state == MCPC_SERVER_READY) s->ready++;
        if (state == MCPC_SERVER_FAILED) s->failed++;
        if (state == MCPC_SERVER_DISABLED) s->disabled++;
        if (state == MCPC_SERVER_IDLE) s->idle++;
        if (state == MCPC_SERVER_FAILED && server && strcmp(server, "crash") == 0) s->failed_crash++;
    }
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void write_config(const char *text) {
    snprintf(cfg_path, sizeof cfg_path, "/tmp/mcpc-host-%d.json", (int)getpid());
    FILE *f = fopen(cfg_path, "w");
    fputs(text, f);
    fclose(f);
}

static mcpc_host_t *new_host(struct seen *s) {
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    mcpc_host_t *h = NULL;
    CHECK_STATUS(mcpc_host_new(o, &h), MCPC_OK);
    mcpc_options_free(o);
    if (s) {
        pthread_mutex_init(&s->mu, NULL);
        pthread_cond_init(&s->cv, NULL);
        s->host = h;
        CHECK_STATUS(mcpc_host_set_event_callback(h, on_event, s, NULL), MCPC_OK);
    }
    return h;
}

static void test_start_catalog_and_routing(void) {
    write_config("{\"mcpServers\": {"
                 " \"a\": {\"command\": \"python3\", \"args\": [\"demo/server.py\"], \"excludeTools\": [\"fail\"]},"
                 " \"x.y\": {\"command\": \"python3\", \"args\": [\"demo/server.py\"], \"includeTools\": [\"echo\"]},"
                 " \"x_y\": {\"command\": \"python3\", \"args\": [\"demo/server.py\", \"--era=modern\"],"
                 "           \"includeTools\": [\"echo\", \"add\"]},"
                 " \"never\": {\"command\": \"python3\", \"args\": [\"demo/server.py\", \"--start-delay\", \"60000\"],"
                 "            \"startupTimeout\": 1500},"
                 " \"missing\": {\"command\": \"/nonexistent/mcpc-no-such-server\"},"
                 " \"off\": {\"command\": \"${MCPC_HOST_TEST_UNSET}\", \"disabled\": true}}}");
    struct seen s = {0};
    mcpc_host_t *h = new_host(&s);
    size_t added = 0;
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, &added), MCPC_OK);
    CHECK(added == 6);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    /* Together: the slow one's 1.5 s bounds the start, not the sum of the starts. */
    CHECK(now_ms() - t0 < 15000);
    pthread_mutex_lock(&s.mu);
    CHECK(s.settled == 1 && s.ready == 3 && s.failed == 2 && s.disabled == 1);
    CHECK(strstr(s.last_detail, "\"ready\":3") != NULL);
    CHECK_STATUS(s.nested_status, MCPC_OK);
    CHECK_STATUS(s.nested_start, MCPC_ERR_WOULD_DEADLOCK);
    CHECK_STATUS(s.nested_load, MCPC_OK);
    pthread_mutex_unlock(&s.mu);

    char *tools = NULL;
    CHECK_STATUS(mcpc_host_tools(h, &tools), MCPC_OK);
    if (tools) {
        CHECK(strstr(tools, "\"name\":\"a__echo\"") != NULL);
        CHECK(strstr(tools, "\"name\":\"a__slow\"") != NULL);
        CHECK(strstr(tools, "\"name\":\"a__fail\"") == NULL); /* excluded */
        CHECK(strstr(tools, "\"name\":\"x_y__add\"") != NULL);
        CHECK(strstr(tools, "x_y__echo_") != NULL); /* the later of the two, renamed */
        CHECK(strstr(tools, "\"collisions\":[{\"kept\":\"x.y\",\"name\":\"x_y__echo\",\"renamed\":\"x_y\"") != NULL);
        CHECK(strstr(tools, "never__") == NULL && strstr(tools, "missing__") == NULL);
        mcpc_string_free(tools);
    }
    char *st = NULL;
    CHECK_STATUS(mcpc_host_status(h, &st), MCPC_OK);
    if (st) {
        CHECK(strstr(st, "\"name\":\"never\",\"state\":\"failed\"") != NULL);
        CHECK(strstr(st, "MCPC_ERR_TIMEOUT") != NULL);
        CHECK(strstr(st, "MCPC_ERR_SPAWN") != NULL);
        CHECK(strstr(st, "\"name\":\"off\",\"state\":\"disabled\"") != NULL);
        mcpc_string_free(st);
    }

    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_host_call_tool(h, "a__echo", "{\"text\":\"routed\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "routed") == 0);
    mcpc_result_free(r);
    r = NULL;
    CHECK_STATUS(mcpc_host_call_tool(h, "a__fail", "{}", NULL, &r), MCPC_ERR_UNKNOWN_NAME);
    CHECK(r == NULL);
    CHECK_STATUS(mcpc_host_call_tool(h, "never__echo", "{}", NULL, &r), MCPC_ERR_UNKNOWN_NAME);
    CHECK_STATUS(mcpc_host_call_tool(h, NULL, "{}", NULL, &r), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_call_tool(h, "a__echo", "[1]", NULL, &r), MCPC_ERR_INVALID_ARG);

    CHECK_STATUS(mcpc_host_remove(h, "a"), MCPC_OK);
    CHECK_STATUS(mcpc_host_remove(h, "a"), MCPC_ERR_UNKNOWN_NAME);
    CHECK_STATUS(mcpc_host_call_tool(h, "a__echo", "{}", NULL, &r), MCPC_ERR_UNKNOWN_NAME);
    CHECK_STATUS(mcpc_host_call_tool(h, "x_y__add", "{\"a\":2,\"b\":3}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    mcpc_host_free(h);
}

/* One call on another thread. */
struct bg_call {
    mcpc_host_t *h;
    const char *name, *args;
    mcpc_status_t status;
};

static void *call_in_background(void *arg) {
    struct bg_call *c = arg;
    mcpc_result_t *r = NULL;
    c->status = mcpc_host_call_tool(c->h, c->name, c->args, NULL, &r);
    mcpc_result_free(r);
    return NULL;
}

static void test_a_dead_server_loses_only_its_tools(void) {
    struct seen s = {0};
    mcpc_host_t *h = new_host(&s);
    const char *crash[] = {"python3", "demo/server.py", "--fault", "exit-on-crash"};
    const char *calm[] = {"python3", "demo/server.py"};
    CHECK_STATUS(mcpc_host_add_stdio(h, "crash", crash, 4, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_stdio(h, "calm", calm, 2, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_stdio(h, "calm", calm, 2, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    struct bg_call sc = {h, "calm__slow", "{\"ms\":800}", MCPC_ERR_PANIC};
    pthread_t t;
    pthread_create(&t, NULL, call_in_background, &sc);
    mcpc_result_t *r = NULL;
    mcpc_status_t got = mcpc_host_call_tool(h, "crash__echo", "{\"text\":\"crash\"}", NULL, &r);
    CHECK(got == MCPC_ERR_SERVER_EXITED || got == MCPC_ERR_TRANSPORT);
    CHECK(r == NULL);
    pthread_join(t, NULL);
    CHECK_STATUS(sc.status, MCPC_OK);
    /* The host learns of the death from the connection itself. */
    pthread_mutex_lock(&s.mu);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    while (s.failed_crash == 0 && pthread_cond_timedwait(&s.cv, &s.mu, &until) == 0) {
    }
    CHECK(s.failed_crash == 1);
    pthread_mutex_unlock(&s.mu);
    char *tools = NULL;
    CHECK_STATUS(mcpc_host_tools(h, &tools), MCPC_OK);
    CHECK(tools && strstr(tools, "crash__") == NULL && strstr(tools, "calm__echo") != NULL);
    mcpc_string_free(tools);
    CHECK_STATUS(mcpc_host_call_tool(h, "crash__echo", "{}", NULL, &r), MCPC_ERR_UNKNOWN_NAME);
    CHECK_STATUS(mcpc_host_call_tool(h, "calm__echo", "{\"text\":\"still\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    mcpc_host_free(h);
}

/* Counts the lines of `path` holding `needle`. */
static int count_lines_with(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

static void test_list_changed_storm_refreshes_once(void) {
    struct seen s = {0};
    mcpc_host_t *h = new_host(&s);
    char log[128];
    snprintf(log, sizeof log, "/tmp/mcpc-host-grow-%d.log", (int)getpid());
    unlink(log);
    const char *grow[] = {"python3", "demo/server.py", "--fault", "grow", "--page-size", "100", "--log", log};
    CHECK_STATUS(mcpc_host_add_stdio(h, "g", grow, 8, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    int before = count_lines_with(log, "\"tools/list\"");
    mcpc_result_t *r = NULL;
    /* The server adds a tool, then says so a thousand times. */
    CHECK_STATUS(mcpc_host_call_tool(h, "g__echo", "{\"text\":\"grow\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    char *tools = NULL;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&s.mu);
    for (;;) {
        mcpc_string_free(tools);
        tools = NULL;
        mcpc_host_tools(h, &tools);
        if ((tools && strstr(tools, "\"g__grown_0\"")) || pthread_cond_timedwait(&s.cv, &s.mu, &until) != 0) break;
    }
    pthread_mutex_unlock(&s.mu);
    CHECK(tools && strstr(tools, "\"g__grown_0\"") != NULL);
    mcpc_string_free(tools);
    mcpc_host_free(h);
    /* Coalesced: a few listings, not a thousand. */
    int after = count_lines_with(log, "\"tools/list\"");
    CHECK(before >= 1 && after > before && after - before <= 3);
    if (after - before > 3) fprintf(stderr, "  listings after the storm: %d\n", after - before);
    unlink(log);
}

static char asked_by[64];

/* Records which of the host's servers asks, and declines. */
static void on_elicit(void *ud, mcpc_input_t *input) {
    (void)ud;
    const char *who = mcpc_input_host_server(input);
    snprintf(asked_by, sizeof asked_by, "%s", who ? who : "(none)");
    mcpc_input_elicit(input, MCPC_ELICIT_DECLINE, NULL);
    mcpc_input_free(input);
}

static void test_input_requests_name_their_server(void) {
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    CHECK_STATUS(mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, NULL, NULL), MCPC_OK);
    mcpc_host_t *h = NULL;
    CHECK_STATUS(mcpc_host_new(o, &h), MCPC_OK);
    mcpc_options_free(o);
    const char *legacy[] = {"python3", "tests/fixtures/input_server.py", "--era", "legacy"};
    const char *modern[] = {"python3", "tests/fixtures/input_server.py", "--era", "modern"};
    CHECK_STATUS(mcpc_host_add_stdio(h, "old", legacy, 4, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_stdio(h, "new", modern, 4, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    const char *names[] = {"old__form", "new__form"}, *want[] = {"old", "new"};
    for (int i = 0; i < 2; i++) {
        asked_by[0] = '\0';
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_host_call_tool(h, names[i], "{}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
        CHECK(strcmp(asked_by, want[i]) == 0);
    }
    mcpc_host_free(h);
    /* Outside a host, no host name. */
    o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, NULL, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(legacy, 4, o, &c), MCPC_OK);
    mcpc_options_free(o);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "form", "{}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    CHECK(strcmp(asked_by, "(none)") == 0);
    mcpc_client_free(c);
    CHECK(mcpc_input_host_server(NULL) == NULL);
}

static void test_hostile_servers(void) {
    write_config("{\"mcpServers\": {"
                 " \"big\": {\"command\": \"python3\", \"args\": [\"demo/server.py\", \"--extra-tools\", \"10000\","
                 "           \"--page-size\", \"1000\"]},"
                 " \"dies\": {\"command\": \"python3\", \"args\": [\"-c\", \"import sys; sys.stderr.write('no key\\\\n'); sys.exit(3)\"]},"
                 " \"flood\": {\"command\": \"python3\", \"args\": [\"demo/server.py\", \"--fault\", \"notification-flood\"]},"
                 " \"calm\": {\"command\": \"python3\", \"args\": [\"demo/server.py\"]}}}");
    mcpc_host_t *h = new_host(NULL);
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    char *st = NULL;
    CHECK_STATUS(mcpc_host_status(h, &st), MCPC_OK);
    /* A server that exits while it starts fails alone. */
    CHECK(st && strstr(st, "\"name\":\"dies\",\"state\":\"failed\"") != NULL);
    CHECK(st && strstr(st, "\"stderr\":[\"no key\"") != NULL); /* its last words, for the user */
    CHECK(st && strstr(st, "\"name\":\"big\",\"state\":\"ready\",\"tools\":10005") != NULL);
    mcpc_string_free(st);
    char *tools = NULL;
    CHECK_STATUS(mcpc_host_tools(h, &tools), MCPC_OK);
    CHECK(tools && strstr(tools, "\"big__item_9999\"") != NULL && strstr(tools, "\"calm__echo\"") != NULL);
    mcpc_string_free(tools);
    /* A flood of notifications during one server's call holds up no other's. */
    struct bg_call fc = {h, "flood__echo", "{\"text\":\"x\"}", MCPC_ERR_PANIC};
    pthread_t t;
    pthread_create(&t, NULL, call_in_background, &fc);
    for (int i = 0; i < 20; i++) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_host_call_tool(h, "calm__echo", "{\"text\":\"y\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
    }
    pthread_join(t, NULL);
    CHECK_STATUS(fc.status, MCPC_OK);
    mcpc_host_free(h);
}

static void test_lazy_start_from_a_saved_catalog(void) {
    char log_a[128], cfg[512];
    snprintf(log_a, sizeof log_a, "/tmp/mcpc-host-lazy-%d.log", (int)getpid());
    snprintf(cfg, sizeof cfg,
             "{\"mcpServers\": {\"a\": {\"command\": \"python3\", \"args\": [\"demo/server.py\", \"--log\", \"%s\"]},"
             " \"b\": {\"command\": \"python3\", \"args\": [\"demo/server.py\"], \"includeTools\": [\"add\"]}}}",
             log_a);
    write_config(cfg);
    /* An earlier run: the catalog it saved. */
    mcpc_host_t *h = new_host(NULL);
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    char *saved = NULL;
    CHECK_STATUS(mcpc_host_tools(h, &saved), MCPC_OK);
    mcpc_host_free(h);
    unlink(log_a);
    if (!saved) return;

    /* This run: the saved catalog is whole at once, and no server runs until its first call. */
    struct seen s = {0};
    h = new_host(&s);
    CHECK_STATUS(mcpc_host_set_lazy(h, 1), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_OK);
    size_t taken = 0;
    CHECK_STATUS(mcpc_host_load_catalog(h, saved, &taken), MCPC_OK);
    CHECK(taken == 26); /* what the catalog held: a's 25 tools and b's add */
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    pthread_mutex_lock(&s.mu);
    CHECK(s.idle == 2 && s.ready == 0);
    pthread_mutex_unlock(&s.mu);
    char *now = NULL;
    CHECK_STATUS(mcpc_host_tools(h, &now), MCPC_OK);
    CHECK(now && strcmp(now, saved) == 0);
    mcpc_string_free(now);
    CHECK(access(log_a, F_OK) != 0); /* a never started */
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_host_call_tool(h, "a__echo", "{\"text\":\"woke\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "woke") == 0);
    mcpc_result_free(r);
    char *st = NULL;
    CHECK_STATUS(mcpc_host_status(h, &st), MCPC_OK);
    CHECK(st && strstr(st, "\"name\":\"a\",\"state\":\"ready\"") && strstr(st, "\"name\":\"b\",\"state\":\"idle\""));
    mcpc_string_free(st);
    CHECK_STATUS(mcpc_host_load_catalog(h, "[1]", NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_load_catalog(h, "{\"tools\":[{\"server\":\"b\",\"tool\":{}}]}", NULL), MCPC_ERR_INVALID_ARG);
    mcpc_host_free(h);
    mcpc_string_free(saved);
    unlink(log_a);
}

static void test_close_ends_calls_and_later_ones(void) {
    mcpc_host_t *h = new_host(NULL);
    const char *calm[] = {"python3", "demo/server.py"};
    CHECK_STATUS(mcpc_host_add_stdio(h, "calm", calm, 2, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    struct bg_call slow = {h, "calm__slow", "{\"ms\":10000}", MCPC_ERR_PANIC};
    pthread_t t;
    pthread_create(&t, NULL, call_in_background, &slow);
    CHECK_STATUS(mcpc_host_close(h), MCPC_OK);
    pthread_join(t, NULL);
    CHECK_STATUS(slow.status, MCPC_ERR_CLOSED);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_host_call_tool(h, "calm__echo", "{\"text\":\"x\"}", NULL, &r), MCPC_ERR_CLOSED);
    CHECK_STATUS(mcpc_host_add_stdio(h, "more", calm, 2, NULL), MCPC_ERR_CLOSED);
    CHECK_STATUS(mcpc_host_start(h), MCPC_ERR_CLOSED);
    CHECK_STATUS(mcpc_host_close(h), MCPC_OK);
    mcpc_host_free(h);
}

static void test_resources_routed_by_uri(void) {
    mcpc_host_t *h = new_host(NULL);
    const char *apps[] = {"python3", "demo/server.py", "--apps"};
    const char *apps2[] = {"python3", "demo/server.py", "--apps", "--era=modern"};
    const char *plain[] = {"python3", "demo/server.py"};
    CHECK_STATUS(mcpc_host_add_stdio(h, "apps", apps, 3, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_stdio(h, "apps2", apps2, 4, NULL), MCPC_OK); /* the same URIs */
    CHECK_STATUS(mcpc_host_add_stdio(h, "plain", plain, 2, NULL), MCPC_OK); /* declares no resources */
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    char *json = NULL;
    CHECK_STATUS(mcpc_host_resources(h, &json), MCPC_OK);
    CHECK(json && strstr(json, "{\"uri\":\"ui://demo/clock.html\",\"server\":\"apps\",\"resource\":{") != NULL);
    CHECK(json && strstr(json, "{\"dropped\":\"apps2\",\"kept\":\"apps\",\"uri\":\"ui://demo/clock.html\"}") != NULL);
    CHECK(json && strstr(json, "\"server\":\"plain\"") == NULL);
    if (json && !strstr(json, "\"server\":\"apps\"")) fprintf(stderr, "  resources: %.300s\n", json);
    mcpc_string_free(json);
    mcpc_contents_t *c = NULL;
    CHECK_STATUS(mcpc_host_read_resource(h, "ui://demo/clock.html", NULL, &c), MCPC_OK);
    CHECK(c && mcpc_contents_count(c) == 1);
    mcpc_contents_free(c);
    c = NULL;
    CHECK_STATUS(mcpc_host_read_resource(h, "res://nobody", NULL, &c), MCPC_ERR_UNKNOWN_NAME);
    CHECK(c == NULL);
    CHECK_STATUS(mcpc_host_read_resource(h, NULL, NULL, &c), MCPC_ERR_INVALID_ARG);
    mcpc_host_free(h);
}

/* Prompts under qualified names, got from their server; the host's own name format
 * for tools and prompts, and the collisions a format without {server} makes. */
static void test_prompts_and_name_format(void) {
    struct seen s = {0};
    mcpc_host_t *h = new_host(&s);
    const char *legacy[] = {"python3", "demo/server.py"};
    const char *modern[] = {"python3", "demo/server.py", "--era=modern"};
    CHECK_STATUS(mcpc_host_add_stdio(h, "a", legacy, 2, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_stdio(h, "b", modern, 3, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_set_name_format(h, "a.{name}"), MCPC_ERR_INVALID_ARG);
    CHECK(strstr(mcpc_last_error_message(), "[A-Za-z0-9_-]") != NULL);
    CHECK_STATUS(mcpc_host_set_name_format(h, "{server}"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_set_name_format(h, "mcp__{server}__{name}"), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);

    char *json = NULL;
    CHECK_STATUS(mcpc_host_prompts(h, &json), MCPC_OK);
    CHECK(json && strstr(json, "{\"name\":\"mcp__a__greet\",\"server\":\"a\",\"prompt\":{\"name\":\"greet\"") != NULL);
    CHECK(json && strstr(json, "\"name\":\"mcp__b__greet\"") != NULL);
    CHECK(json && strstr(json, "\"collisions\":[]") != NULL);
    mcpc_string_free(json);
    json = NULL;
    CHECK_STATUS(mcpc_host_tools(h, &json), MCPC_OK);
    CHECK(json && strstr(json, "\"name\":\"mcp__b__echo\"") != NULL);
    mcpc_string_free(json);
    json = NULL;
    CHECK_STATUS(mcpc_host_get_prompt(h, "mcp__b__greet", "{\"who\":\"C\"}", NULL, &json), MCPC_OK);
    CHECK(json && strstr(json, "Say hello to C.") != NULL);
    mcpc_string_free(json);
    json = NULL;
    CHECK_STATUS(mcpc_host_get_prompt(h, "a__greet", NULL, NULL, &json), MCPC_ERR_UNKNOWN_NAME);
    CHECK(json == NULL && strstr(mcpc_last_error_message(), "no prompt named") != NULL);
    CHECK_STATUS(mcpc_host_get_prompt(h, NULL, NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_get_prompt(h, "mcp__a__greet", "[]", NULL, &json), MCPC_ERR_INVALID_ARG);

    /* Bare names: the second server's tools and prompt are renamed, and listed. */
    pthread_mutex_lock(&s.mu);
    int changes = s.catalog_changes;
    pthread_mutex_unlock(&s.mu);
    CHECK_STATUS(mcpc_host_set_name_format(h, "{name}"), MCPC_OK);
    pthread_mutex_lock(&s.mu);
    CHECK(s.catalog_changes == changes + 1);
    pthread_mutex_unlock(&s.mu);
    CHECK_STATUS(mcpc_host_prompts(h, &json), MCPC_OK);
    CHECK(json && strstr(json, "{\"name\":\"greet\",\"server\":\"a\"") != NULL);
    CHECK(json && strstr(json, "\"kept\":\"a\",\"name\":\"greet\",\"renamed\":\"b\",\"renamedTo\":\"greet_") != NULL);
    mcpc_string_free(json);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_host_call_tool(h, "echo", "{\"text\":\"bare\"}", NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "bare") == 0);
    mcpc_result_free(r);
    CHECK_STATUS(mcpc_host_set_name_format(h, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_get_prompt(h, "a__greet", NULL, NULL, &json), MCPC_OK);
    mcpc_string_free(json);
    CHECK_STATUS(mcpc_host_prompts(NULL, &json), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_set_name_format(NULL, NULL), MCPC_ERR_INVALID_ARG);
    mcpc_host_free(h);
}

static void test_required_server(void) {
    mcpc_host_t *h = new_host(NULL);
    write_config("{\"mcpServers\": {\"ok\": {\"command\": \"python3\", \"args\": [\"demo/server.py\"]},"
                 " \"must\": {\"command\": \"/nonexistent/mcpc-no-such-server\", \"required\": true}}}");
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_ERR_SPAWN);
    CHECK(strstr(mcpc_last_error_message(), "required server \"must\"") != NULL);
    mcpc_host_free(h);
}

static int resolve(void *ud, const char *kind, const char *ref, const char *prompt, char *buf, size_t len) {
    (void)ud;
    if (strcmp(kind, "input") == 0 && strcmp(ref, "tok") == 0 && prompt && strcmp(prompt, "The token") == 0) {
        snprintf(buf, len, "%s", "s3cr3t-from-resolver");
        return 0;
    }
    return 1;
}

static void test_variables_and_resolver(void) {
    mcpc_host_t *h = new_host(NULL);
    CHECK_STATUS(mcpc_host_set_resolver(h, resolve, NULL, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_set_variable(h, "workspaceFolder", "demo"), MCPC_OK);
    /* An unresolved variable: refused, naming the file, the server and the field. */
    write_config("{\"mcpServers\": {\"a\": {\"command\": \"python3\", \"args\": [\"${MCPC_HOST_TEST_UNSET}\"]}}}");
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_ERR_CONFIG);
    CHECK(strstr(mcpc_last_error_message(), cfg_path) != NULL);
    CHECK(strstr(mcpc_last_error_message(), "server \"a\": field \"args\" ${MCPC_HOST_TEST_UNSET} is not set") != NULL);
    /* A secret the resolver gave appears in no message, even where the server's
     * description is refused for another field. */
    write_config("{\"servers\": {\"h\": {\"type\": \"http\", \"url\": \"http://127.0.0.1:9/mcp\","
                 " \"headers\": {\"Authorization\": \"Bearer ${input:tok}\"}, \"timeout\": \"soon\"}},"
                 " \"inputs\": [{\"id\": \"tok\", \"description\": \"The token\", \"password\": true}]}");
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_ERR_CONFIG);
    CHECK(strstr(mcpc_last_error_message(), "s3cr3t") == NULL);
    CHECK(strstr(mcpc_last_error_message(), "field \"timeout\"") != NULL);
    /* Host variables, and VS Code's form. */
    write_config("{\"servers\": {\"w\": {\"type\": \"stdio\", \"command\": \"python3\","
                 " \"args\": [\"${workspaceFolder}/server.py\"]}}}");
    CHECK_STATUS(mcpc_host_add_config(h, cfg_path, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_host_call_tool(h, "w__echo", "{\"text\":\"ws\"}", NULL, &r), MCPC_OK);
    mcpc_result_free(r);
    mcpc_host_free(h);
}

static void test_bad_arguments(void) {
    mcpc_host_t *h = NULL;
    CHECK_STATUS(mcpc_host_new(NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_new(NULL, &h), MCPC_OK);
    CHECK_STATUS(mcpc_host_add_config(h, "/nonexistent/mcpc.json", NULL), MCPC_ERR_CONFIG);
    CHECK_STATUS(mcpc_host_add_config(NULL, cfg_path, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_add_stdio(h, "", (const char *[]){"x"}, 1, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_add_stdio(h, "n", NULL, 0, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_set_concurrency(h, 0), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_set_env_policy(h, 7, NULL, 0), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_set_env_policy(h, MCPC_ENV_ALLOW, (const char *[]){"PATH"}, 1), MCPC_OK);
    CHECK_STATUS(mcpc_host_set_event_callback(h, NULL, NULL, NULL), MCPC_OK); /* none: removed */
    CHECK_STATUS(mcpc_host_set_resolver(h, NULL, NULL, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_host_tools(NULL, NULL), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_host_remove(h, "nobody"), MCPC_ERR_UNKNOWN_NAME);
    /* An empty host starts, and settles at once. */
    CHECK_STATUS(mcpc_host_start(h), MCPC_OK);
    CHECK(strcmp(mcpc_status_name(MCPC_ERR_CONFIG), "MCPC_ERR_CONFIG") == 0);
    mcpc_host_free(h);
    mcpc_host_free(NULL);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_start_catalog_and_routing);
    RUN(test_a_dead_server_loses_only_its_tools);
    RUN(test_list_changed_storm_refreshes_once);
    RUN(test_input_requests_name_their_server);
    RUN(test_hostile_servers);
    RUN(test_lazy_start_from_a_saved_catalog);
    RUN(test_close_ends_calls_and_later_ones);
    RUN(test_resources_routed_by_uri);
    RUN(test_prompts_and_name_format);
    RUN(test_required_server);
    RUN(test_variables_and_resolver);
    RUN(test_bad_arguments);
    unlink(cfg_path);
    return harness_finish();
}
