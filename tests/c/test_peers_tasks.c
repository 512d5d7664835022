/* Tasks against servers no one here wrote, through the public C API and the CLI:
 *   - @modelcontextprotocol/server-everything, the one server of the tasks of
 *     2025-11-25 (`params.task`, `tasks/get`, `tasks/result`, the input it queues
 *     until `tasks/result`, status notifications), over stdio and Streamable HTTP,
 *     with its tool simulate-research-query (taskSupport "required", four stages of
 *     1 s);
 *   - FastMCP with fastmcp-tasks (tests/peers/tasks_server.py), the one server of the
 *     tasks extension of 2026-07-28 (`resultType: "task"`, `tasks/get` carrying the
 *     result and the input requests, `tasks/update`, `Mcp-Name`), over HTTP and stdio.
 * Followed to the end, input answered, cancelled, refused, and handed from one
 * process to another. How mcpc polls next to the reference client (ext-tasks) is
 * tests/peers/tasks_compare.py. The peers come from tests/peers/install.sh (see
 * test_peers.c); a missing peer is a failure. Closing line: "N passed, N failed,
 * N skipped". */
#define _GNU_SOURCE
#include "peers_fixture.h"

#define TASKS_EXT "io.modelcontextprotocol/tasks"
#define TASKS_SERVER "tests/peers/tasks_server.py"
#define RESEARCH "simulate-research-query"

/* ---- what a call's task and input handlers saw --------------------------- */

struct seen {
    pthread_mutex_t mu;
    char statuses[256]; /* "working,completed," */
    char reference[512]; /* the last reference */
    char task_id[128];
    mcpc_cancel_t *cancel_on_working; /* triggered at the first "working" */
};

#define SEEN_INIT {PTHREAD_MUTEX_INITIALIZER, "", "", "", NULL}

static int32_t on_task(void *ud, const char *reference, const char *status, const char *message) {
    (void)message;
    struct seen *s = ud;
    pthread_mutex_lock(&s->mu);
    strncat(s->statuses, status, sizeof s->statuses - strlen(s->statuses) - 2);
    strcat(s->statuses, ",");
    snprintf(s->reference, sizeof s->reference, "%s", reference);
    const char *id = strstr(reference, "\"taskId\":\"");
    if (id) {
        id += strlen("\"taskId\":\"");
        snprintf(s->task_id, sizeof s->task_id, "%.*s", (int)strcspn(id, "\""), id);
    }
    pthread_mutex_unlock(&s->mu);
    if (s->cancel_on_working && strcmp(status, "working") == 0) mcpc_cancel_trigger(s->cancel_on_working);
    return MCPC_TASK_FOLLOW;
}

static mcpc_call_opts_t task_opts(int mode, struct seen *s) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init_sized(&o, sizeof o);
    o.task_mode = mode;
    o.on_task = on_task;
    o.task_userdata = s;
    if (s->cancel_on_working) o.cancel = s->cancel_on_working;
    return o;
}

/* Every form elicitation is accepted with `answer`, and counted. */
struct asker {
    const char *answer;
    atomic_int asked;
};

static void on_elicit(void *ud, mcpc_input_t *input) {
    struct asker *a = ud;
    atomic_fetch_add(&a->asked, 1);
    if (mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, a->answer) != MCPC_OK)
        fprintf(stderr, "  answering %s: %s\n", mcpc_input_method(input), mcpc_last_error_message());
    mcpc_input_free(input);
}

/* Calls `tool`; gives its status and its first text (on MCPC_OK and MCPC_ERR_TOOL). */
static mcpc_status_t call_text(mcpc_client_t *c, const char *tool, const char *args, const mcpc_call_opts_t *o,
                               char *text, size_t cap) {
    mcpc_result_t *r = NULL;
    mcpc_status_t st = mcpc_client_call_tool(c, tool, args, o, &r);
    const char *t = r ? mcpc_result_text(r, NULL) : NULL;
    snprintf(text, cap, "%s", t ? t : "");
    if (st != MCPC_OK) fprintf(stderr, "  %s: %s: %s\n", tool, mcpc_status_name(st), mcpc_last_error_message());
    mcpc_result_free(r);
    return st;
}

static void check_has(const char *what, const char *text, const char *want) {
    if (!strstr(text, want)) {
        fprintf(stderr, "  %s: %.600s\n  want: %s\n", what, text, want);
        CHECK(0);
    }
}

/* The status of the task `task_id` as the server has it (`tasks/get`, sent by the
 * generic request), once it is `want` (within 3 s): true if it became that. */
static bool task_ends_as(mcpc_client_t *c, const char *task_id, const char *want, const char *also) {
    char params[256], needle[64];
    snprintf(params, sizeof params, "{\"taskId\":\"%s\"}", task_id);
    snprintf(needle, sizeof needle, "\"status\":\"%s\"", want);
    char *json = NULL;
    for (double end = now_ms() + 3000; now_ms() < end; sleep_ms(50)) {
        mcpc_string_free(json);
        json = NULL;
        if (mcpc_client_request(c, "tasks/get", params, NULL, &json) == MCPC_OK && strstr(json, needle) &&
            (!also || strstr(json, also)))
            break;
    }
    bool ok = json && strstr(json, needle) && (!also || strstr(json, also));
    if (!ok) fprintf(stderr, "  tasks/get %s: %s, want %s\n", task_id, json ? json : mcpc_last_error_message(), needle);
    mcpc_string_free(json);
    return ok;
}

/* ======================================================================== */
/* server-everything: the tasks of 2025-11-25                                */
/* ======================================================================== */

/* A closing client waits this long for server-everything to exit on stdin EOF,
 * which it does not once a task exists (its TTL timer keeps it up): then SIGTERM. */
#define EVERYTHING_CLOSE_GRACE_MS 200

struct research {
    mcpc_client_t *c;
    struct seen seen;
    char text[8192];
    mcpc_status_t st;
};

/* The input flow, on a thread of its own beside the plain one: `ambiguous` makes the
 * server ask which "python" is meant (only of a client that declares elicitation). */
static void *research_ambiguous(void *arg) {
    struct research *r = arg;
    mcpc_call_opts_t o = task_opts(MCPC_TASK_ALLOW, &r->seen);
    r->st = call_text(r->c, RESEARCH, "{\"topic\":\"python\",\"ambiguous\":true}", &o, r->text, sizeof r->text);
    return NULL;
}

static void everything_tasks(mcpc_client_t *c, struct asker *asker) {
    /* The tool requires a task, so the default (allow) asks for one. The input flow
     * runs at the same time, on its own task. */
    struct research amb = {.c = c, .seen = SEEN_INIT};
    pthread_t t;
    pthread_create(&t, NULL, research_ambiguous, &amb);
    struct seen plain = SEEN_INIT;
    mcpc_call_opts_t o = task_opts(MCPC_TASK_ALLOW, &plain);
    char text[8192];
    double t0 = now_ms();
    CHECK_STATUS(call_text(c, RESEARCH, "{\"topic\":\"rust\"}", &o, text, sizeof text), MCPC_OK);
    double took = now_ms() - t0;
    check_has("report", text, "# Research Report: rust");
    check_has("report", text, "Stage 4: Generating report");
    CHECK(strcmp(plain.statuses, "working,completed,") == 0);
    check_has("reference", plain.reference, "\"generation\":\"v1\"");
    check_has("reference", plain.reference, "\"originalOperation\":\"tools/call\"");
    CHECK(took >= 3500 && took < 9000); /* four stages of 1 s */
    pthread_join(t, NULL);

    /* The input: the status goes input_required, tasks/result brings the server's
     * queued elicitation, answered once, and the report says what was chosen.
     * tasks/result answers only at the task's end; the statuses the server notifies
     * meanwhile (working, completed) are not reported to the task callback. */
    CHECK_STATUS(amb.st, MCPC_OK);
    check_has("ambiguous report", amb.text, "# Research Report: python (snake)");
    CHECK(strncmp(amb.seen.statuses, "working,input_required,", 23) == 0);
    CHECK(atomic_load(&asker->asked) == 1);

    /* A cancel from the task callback: the call ends cancelled at once, and the task
     * is cancelled on the server (tasks/cancel), as tasks/get there says. */
    struct seen cancelled = SEEN_INIT;
    cancelled.cancel_on_working = mcpc_cancel_new();
    o = task_opts(MCPC_TASK_ALLOW, &cancelled);
    t0 = now_ms();
    CHECK_STATUS(call_text(c, RESEARCH, "{\"topic\":\"go\"}", &o, text, sizeof text), MCPC_ERR_CANCELLED);
    CHECK(now_ms() - t0 < 1000);
    CHECK(strcmp(cancelled.statuses, "working,") == 0);
    CHECK(cancelled.task_id[0] && task_ends_as(c, cancelled.task_id, "cancelled", "Client cancelled task execution."));
    mcpc_cancel_free(cancelled.cancel_on_working);

    /* Forbid: no task asked for, and the server says the tool requires one, as a
     * tool error. */
    struct seen forbid = SEEN_INIT;
    o = task_opts(MCPC_TASK_FORBID, &forbid);
    CHECK_STATUS(call_text(c, RESEARCH, "{\"topic\":\"c\"}", &o, text, sizeof text), MCPC_ERR_TOOL);
    check_has("forbid", text, "MCP error -32601: Tool simulate-research-query requires task augmentation");
    CHECK(forbid.statuses[0] == 0);

    /* Its other tools forbid tasks: require fails before anything is sent, prefer
     * runs the call as it is. */
    o = task_opts(MCPC_TASK_REQUIRE, &forbid);
    CHECK_STATUS(call_text(c, "echo", "{\"message\":\"x\"}", &o, text, sizeof text), MCPC_ERR_NOT_SUPPORTED);
    o = task_opts(MCPC_TASK_PREFER, &forbid);
    CHECK_STATUS(call_text(c, "echo", "{\"message\":\"x\"}", &o, text, sizeof text), MCPC_OK);
    CHECK(strcmp(text, "Echo: x") == 0 && forbid.statuses[0] == 0);
}

static mcpc_options_t *everything_options(struct asker *asker) {
    mcpc_options_t *o = options(20000);
    mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, asker, NULL);
    mcpc_options_set_close_grace_ms(o, EVERYTHING_CLOSE_GRACE_MS, 2000);
    return o;
}

static void test_everything_tasks_stdio(void) {
    const char *node = peer("MCPC_PEERS_NODE"), *ev = peer("MCPC_PEERS_EVERYTHING");
    if (!node || !ev) return;
    struct asker asker = {"{\"interpretation\":\"snake\"}", 0};
    mcpc_options_t *o = everything_options(&asker);
    const char *argv[] = {node, ev, "stdio"};
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 3, o, &c), MCPC_OK);
    if (c) {
        everything_tasks(c, &asker);
        /* Closing: the server outlives stdin EOF, and gets SIGTERM after the grace. */
        double t0 = now_ms();
        CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
        CHECK(now_ms() - t0 < EVERYTHING_CLOSE_GRACE_MS + 1500);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
}

static void test_everything_tasks_http(void) {
    struct server s;
    if (everything_http_start(&s, 0) != 0) {
        CHECK(0);
        return;
    }
    struct asker asker = {"{\"interpretation\":\"snake\"}", 0};
    mcpc_options_t *o = everything_options(&asker);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) everything_tasks(c, &asker);
    mcpc_client_free(c);
    mcpc_options_free(o);
    server_stop(&s);
}

/* ======================================================================== */
/* FastMCP + fastmcp-tasks: the tasks extension of 2026-07-28                */
/* ======================================================================== */

/* One server for the HTTP tests, started at the first and stopped at the end. */
static struct server fast;

static const char *fast_url(void) {
    if (fast.pid > 0) return fast.url;
    const char *py = peer("MCPC_PEERS_FASTMCP_PY");
    if (!py) return NULL;
    memset(&fast, 0, sizeof fast);
    tmp_path(fast.out, sizeof fast.out, "tasks-server.out");
    tmp_path(fast.err, sizeof fast.err, "tasks-server.err");
    tmp_path(fast.log, sizeof fast.log, "tasks-server.log");
    const char *argv[] = {py, TASKS_SERVER, "--port", "0", "--log", fast.log, NULL};
    /* It imports for 2-3 s before it prints its port; connections wait in its
     * backlog until it serves them. */
    return port_server_start(&fast, argv, "http", 30000) == 0 ? fast.url : NULL;
}

/* A client of the FastMCP server; `ext`: declare the tasks extension. */
static mcpc_client_t *fast_client(bool ext, struct asker *asker) {
    const char *url = fast_url();
    if (!url) {
        CHECK(0);
        return NULL;
    }
    mcpc_options_t *o = options(20000);
    if (ext) mcpc_options_add_extension(o, TASKS_EXT, NULL);
    if (asker) mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, asker, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(url, o, &c), MCPC_OK);
    mcpc_options_free(o);
    return c;
}

/* Lines of the server's request log for the task `id` with the JSON-RPC method. */
static int fast_logged(const char *method, const char *id) {
    char m[64], t[160];
    snprintf(m, sizeof m, "\"rpc\": \"%s\"", method);
    snprintf(t, sizeof t, "\"task\": \"%s\"", id);
    return LINES(fast.log, m, t);
}

/* The extension declared: slow_report becomes a task, polled at its 500 ms with
 * Mcp-Name set to the task id, and its result comes in the last tasks/get. */
static void test_fastmcp_http_follow(void) {
    mcpc_client_t *c = fast_client(true, NULL);
    if (!c) return;
    check_negotiation(c, "2026-07-28", "discover");
    struct seen s = SEEN_INIT;
    mcpc_call_opts_t o = task_opts(MCPC_TASK_ALLOW, &s);
    char text[512];
    double t0 = now_ms();
    CHECK_STATUS(call_text(c, "slow_report", "{\"topic\":\"rust\",\"seconds\":1}", &o, text, sizeof text), MCPC_OK);
    double took = now_ms() - t0;
    CHECK(strcmp(text, "report on rust after 1.0s") == 0);
    CHECK(strcmp(s.statuses, "working,completed,") == 0);
    check_has("reference", s.reference, "\"generation\":\"v2\"");
    int gets = fast_logged("tasks/get", s.task_id);
    char name[160];
    snprintf(name, sizeof name, "\"mcp_name\": \"%s\"", s.task_id);
    CHECK(LINES(fast.log, "\"rpc\": \"tasks/get\"", name) == gets);
    if (gets < 2 || gets > 4 || took > 3000) fprintf(stderr, "  %d polls in %.0f ms\n", gets, took);
    CHECK(gets >= 2 && gets <= 4 && took < 3000); /* 1 s at 500 ms: 3 polls, one more when late */
    /* Never a task: echo runs at once. */
    CHECK_STATUS(call_text(c, "echo", "{\"text\":\"plain\"}", &o, text, sizeof text), MCPC_OK);
    CHECK(strcmp(text, "plain") == 0);
    mcpc_client_free(c);
}

/* Without the extension, a tool that must be a task is refused (-32021, the
 * extension named as missing); require declares it on the request by itself. */
static void test_fastmcp_http_must_task(void) {
    mcpc_client_t *c = fast_client(false, NULL);
    if (!c) return;
    struct seen s = SEEN_INIT;
    mcpc_call_opts_t o = task_opts(MCPC_TASK_ALLOW, &s);
    char text[512];
    CHECK_STATUS(call_text(c, "must_task", "{\"n\":4}", &o, text, sizeof text), MCPC_ERR_MISSING_CAPABILITY);
    CHECK(mcpc_last_error_rpc_code() == -32021);
    check_has("error", mcpc_last_error_message(), TASKS_EXT);
    CHECK(s.statuses[0] == 0);
    /* An optional task tool runs at once without the extension. */
    CHECK_STATUS(call_text(c, "slow_report", "{\"topic\":\"now\",\"seconds\":0}", &o, text, sizeof text), MCPC_OK);
    CHECK(strcmp(text, "report on now after 0.0s") == 0 && s.statuses[0] == 0);
    o = task_opts(MCPC_TASK_REQUIRE, &s);
    CHECK_STATUS(call_text(c, "must_task", "{\"n\":4}", &o, text, sizeof text), MCPC_OK);
    CHECK(strcmp(text, "8") == 0);
    CHECK(strcmp(s.statuses, "working,completed,") == 0);
    mcpc_client_free(c);
}

/* The tool asks for input from inside its task: the input request in tasks/get goes
 * to the elicitation handler once, and its answer back in one tasks/update. */
static void test_fastmcp_http_input(void) {
    struct asker asker = {"{\"colour\":\"blue\"}", 0};
    mcpc_client_t *c = fast_client(true, &asker);
    if (!c) return;
    struct seen s = SEEN_INIT;
    mcpc_call_opts_t o = task_opts(MCPC_TASK_ALLOW, &s);
    char text[512];
    CHECK_STATUS(call_text(c, "ask_color", "{}", &o, text, sizeof text), MCPC_OK);
    CHECK(strcmp(text, "colour: blue (accept)") == 0);
    CHECK(strcmp(s.statuses, "working,input_required,completed,") == 0 ||
          strcmp(s.statuses, "input_required,completed,") == 0);
    CHECK(atomic_load(&asker.asked) == 1);
    CHECK(fast_logged("tasks/update", s.task_id) == 1);
    mcpc_client_free(c);
}

/* A cancel from the task callback: tasks/cancel for the task, no poll after it, and
 * the server has the task cancelled. */
static void test_fastmcp_http_cancel(void) {
    mcpc_client_t *c = fast_client(true, NULL);
    if (!c) return;
    struct seen s = SEEN_INIT;
    s.cancel_on_working = mcpc_cancel_new();
    mcpc_call_opts_t o = task_opts(MCPC_TASK_ALLOW, &s);
    char text[512];
    double t0 = now_ms();
    CHECK_STATUS(call_text(c, "slow_report", "{\"topic\":\"c\",\"seconds\":10}", &o, text, sizeof text),
                 MCPC_ERR_CANCELLED);
    CHECK(now_ms() - t0 < 1000);
    CHECK(s.task_id[0] && WAIT_LINES(1, fast.log, "\"rpc\": \"tasks/cancel\"", s.task_id) == 1);
    /* Longer than the poll interval: no tasks/get for the task after its tasks/cancel. */
    sleep_ms(700);
    char *log = read_file(fast.log);
    bool after_cancel = false;
    int polls_after = 0;
    for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, s.task_id)) continue;
        after_cancel |= strstr(line, "\"rpc\": \"tasks/cancel\"") != NULL;
        polls_after += after_cancel && strstr(line, "\"rpc\": \"tasks/get\"") != NULL;
    }
    free(log);
    CHECK(polls_after == 0);
    CHECK(task_ends_as(c, s.task_id, "cancelled", NULL));
    mcpc_cancel_free(s.cancel_on_working);
    mcpc_client_free(c);
}

/* A hand-off between processes: the CLI detaches from the task and prints its
 * reference; a second CLI process resumes it and prints the report. The first
 * neither cancels the task nor waits for it. */
static void test_fastmcp_http_handoff(void) {
    const char *url = fast_url();
    if (!url) {
        CHECK(0);
        return;
    }
    char *ref = NULL, *out = NULL;
    double t0 = now_ms();
    CHECK(cli(&ref, NULL, "--url", url, "--extension", TASKS_EXT, "--detach", "call", "slow_report",
              "{\"topic\":\"later\",\"seconds\":2}", NULL) == 0);
    CHECK(now_ms() - t0 < 1800);
    check_has("reference", ref, "\"generation\":\"v2\"");
    check_has("stderr", cli_err, "mcpc: task working");
    ref[strcspn(ref, "\n")] = 0;
    char endpoint[300];
    snprintf(endpoint, sizeof endpoint, "\"endpointId\":\"%s\"", url);
    check_has("reference", ref, endpoint);
    const char *id = strstr(ref, "\"taskId\":\"");
    char task[160] = "";
    if (id) snprintf(task, sizeof task, "%.*s", (int)strcspn(id + 10, "\""), id + 10);
    CHECK(task[0] && fast_logged("tasks/cancel", task) == 0);

    CHECK(cli(&out, NULL, "--url", url, "--extension", TASKS_EXT, "resume", ref, NULL) == 0);
    check_has("resumed", out, "\"text\":\"report on later after 2.0s\"");
    check_has("stderr", cli_err, "mcpc: task completed");
    CHECK(task[0] && fast_logged("tasks/cancel", task) == 0);
    /* A reference for another endpoint is refused before anything is sent. */
    free(out);
    CHECK(cli(&out, NULL, "--url", url, "--extension", TASKS_EXT, "resume",
              "{\"endpointId\":\"elsewhere\",\"generation\":\"v2\",\"taskId\":\"t\","
              "\"originalOperation\":\"tools/call\"}",
              NULL) != 0);
    check_has("stderr", cli_err, "MCPC_ERR_INVALID_ARG");
    free(out);
    free(ref);
    free(cli_err);
    cli_err = NULL;
}

/* Over stdio: the server takes 2-3 s to answer server/discover, which the connect
 * waits for; then a followed task and the input flow. */
static void test_fastmcp_stdio(void) {
    const char *py = peer("MCPC_PEERS_FASTMCP_PY");
    if (!py) return;
    struct asker asker = {"{\"colour\":\"green\"}", 0};
    mcpc_options_t *o = options(20000);
    mcpc_options_add_extension(o, TASKS_EXT, NULL);
    mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM, on_elicit, &asker, NULL);
    const char *argv[] = {py, TASKS_SERVER, "--stdio"};
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 3, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2026-07-28", "discover");
        struct seen s = SEEN_INIT;
        mcpc_call_opts_t co = task_opts(MCPC_TASK_ALLOW, &s);
        char text[512];
        CHECK_STATUS(call_text(c, "slow_report", "{\"topic\":\"pipes\",\"seconds\":1}", &co, text, sizeof text),
                     MCPC_OK);
        CHECK(strcmp(text, "report on pipes after 1.0s") == 0);
        CHECK(strcmp(s.statuses, "working,completed,") == 0);
        check_has("reference", s.reference, "\"endpointId\":\"stdio:");
        CHECK_STATUS(call_text(c, "ask_color", "{}", &co, text, sizeof text), MCPC_OK);
        CHECK(strcmp(text, "colour: green (accept)") == 0);
        CHECK(atomic_load(&asker.asked) == 1);
        CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    peers_tmpdir_make("peers-tasks");
    double t0 = now_ms();
    RUN_TIMED(test_everything_tasks_stdio);
    RUN_TIMED(test_everything_tasks_http);
    RUN_TIMED(test_fastmcp_http_follow);
    RUN_TIMED(test_fastmcp_http_must_task);
    RUN_TIMED(test_fastmcp_http_input);
    RUN_TIMED(test_fastmcp_http_cancel);
    RUN_TIMED(test_fastmcp_http_handoff);
    RUN_TIMED(test_fastmcp_stdio);
    server_stop(&fast);
    fprintf(stderr, "peer task tests took %.1f s\n", (now_ms() - t0) / 1000);
    peers_tmpdir_done();
    return harness_finish();
}
