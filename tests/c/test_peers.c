/* mcpc against MCP software no one here wrote, through the public C API and the CLI:
 *   - @modelcontextprotocol/server-everything (the TypeScript reference server),
 *     over stdio and Streamable HTTP;
 *   - a server on the Python `mcp` package (tests/peers/py_server.py), 2.x (which
 *     speaks 2026-07-28 as well as the older revisions) and 1.x, over stdio, HTTP,
 *     HTTPS with a test CA, stateless and JSON-response modes, with pagination.
 * Each quirk in which these servers differ is a test of its own (see the "quirk"
 * comments). The peers come from tests/peers/install.sh; the test reads where they
 * are from the MCPC_PEERS_* variables of its peers.env. A missing peer is a failure.
 * Closing line: "N passed, N failed, N skipped". */
#define _GNU_SOURCE
#include "peers_fixture.h"

#define PY_SERVER "tests/peers/py_server.py"

/* py_server.py over HTTP with the Python at MCPC_PEERS_<py_var>, `args` NULL-terminated
 * extra arguments; `port` 0 lets the server choose (it prints "PORT n"). */
static int py_http_start(struct server *s, const char *py_var, int port, const char *const *args) {
    const char *py = peer(py_var);
    if (!py) return -1;
    memset(s, 0, sizeof *s);
    tmp_path(s->out, sizeof s->out, "py.out");
    tmp_path(s->err, sizeof s->err, "py.err");
    tmp_path(s->log, sizeof s->log, "py.log");
    char port_arg[16];
    snprintf(port_arg, sizeof port_arg, "%d", port);
    const char *argv[32] = {py, PY_SERVER, "--http", "--port", port_arg, "--log", s->log};
    size_t n = 7;
    for (size_t i = 0; args && args[i] && n < 30; i++) argv[n++] = args[i];
    argv[n] = NULL;
    const char *scheme = "http";
    for (size_t i = 0; args && args[i]; i++) {
        if (strcmp(args[i], "--certfile") == 0) scheme = "https";
    }
    return port_server_start(s, argv, scheme, 20000);
}

/* Progress of one call. Once `returned` is set, any further callback is a bug: the
 * progress userdata need only live until the call returns. */
struct progress {
    pthread_mutex_t mu;
    int count;
    double last, total;
    bool increasing;
    const mcpc_cancel_t *cancel_at; /* trigger this on the first progress */
    atomic_bool returned;
    atomic_int late;
};

#define PROGRESS_INIT {PTHREAD_MUTEX_INITIALIZER, 0, -1, 0, true, NULL, false, 0}

static void on_progress(void *ud, double progress, double total, const char *message) {
    (void)message;
    struct progress *p = ud;
    if (atomic_load(&p->returned)) atomic_fetch_add(&p->late, 1);
    pthread_mutex_lock(&p->mu);
    if (progress <= p->last) p->increasing = false;
    p->last = progress;
    p->total = total;
    p->count++;
    pthread_mutex_unlock(&p->mu);
    if (p->cancel_at) mcpc_cancel_trigger(p->cancel_at);
}

static mcpc_call_opts_t progress_opts(struct progress *p, int64_t timeout_ms) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = timeout_ms;
    o.on_progress = on_progress;
    o.progress_userdata = p;
    return o;
}

/* ---- call helpers ------------------------------------------------------- */

/* Calls a tool; on MCPC_OK or MCPC_ERR_TOOL gives the result. */
static mcpc_status_t call(mcpc_client_t *c, const char *tool, const char *args, const mcpc_call_opts_t *o,
                          mcpc_result_t **r) {
    *r = NULL;
    return mcpc_client_call_tool(c, tool, args, o, r);
}

/* Calls a tool expecting MCPC_OK and text equal to `want_text` (NULL: any). */
static void call_ok(mcpc_client_t *c, const char *tool, const char *args, const char *want_text) {
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, tool, args, NULL, &r), MCPC_OK);
    if (r && want_text && strcmp(mcpc_result_text(r, NULL), want_text) != 0) {
        fprintf(stderr, "  %s: text %s, want %s\n", tool, mcpc_result_text(r, NULL), want_text);
        CHECK(0);
    }
    mcpc_result_free(r);
}

static bool list_has(const mcpc_tool_list_t *l, const char *name) {
    for (size_t i = 0; i < mcpc_tool_list_len(l); i++) {
        if (strcmp(mcpc_tool_list_name(l, i), name) == 0) return true;
    }
    return false;
}


/* ======================================================================== */
/* server-everything                                                         */
/* ======================================================================== */

static mcpc_status_t everything_stdio(mcpc_options_t *o, mcpc_client_t **c) {
    const char *node = peer("MCPC_PEERS_NODE"), *ev = peer("MCPC_PEERS_EVERYTHING");
    *c = NULL;
    if (!node || !ev) return MCPC_ERR_SPAWN;
    const char *argv[] = {node, ev, "stdio"};
    return mcpc_client_connect_stdio(argv, 3, o, c);
}

/* What every transport to server-everything must show: the handshake (it does not
 * speak 2026-07-28, so auto negotiation falls back to initialize), its 13 tools
 * in one page, text, structured content, and isError results. */
static void everything_basics(mcpc_client_t *c, struct lines *notes, bool stdio) {
    check_negotiation(c, "2025-11-25", "fallback");
    char *info = NULL;
    CHECK_STATUS(mcpc_client_server_info(c, &info), MCPC_OK);
    CHECK(info && strstr(info, "\"name\":\"mcp-servers/everything\""));
    mcpc_string_free(info);

    /* server-everything registers one of its tools when it handles
     * notifications/initialized, which it does after its 202 to that notification
     * is on the wire: a client quick enough lists 12 tools first. Nothing tells a
     * client without the standalone stream when it has (list_changed goes there),
     * so the listing is repeated for up to 5 s until the tool is there. */
    mcpc_tool_list_t *l = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
    for (int tries = 0; mcpc_tool_list_len(l) == 12 && tries < 250; tries++) {
        mcpc_tool_list_free(l);
        l = NULL;
        sleep_ms(20);
        CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
    }
    if (mcpc_tool_list_len(l) != 13) {
        char *all = NULL;
        mcpc_tool_list_to_json(l, &all);
        fprintf(stderr, "  %zu tools: %.2000s\n", mcpc_tool_list_len(l), all ? all : "");
        mcpc_string_free(all);
        CHECK(0);
    }
    CHECK(list_has(l, "echo") && list_has(l, "get-sum") && list_has(l, "get-structured-content") &&
          list_has(l, "trigger-long-running-operation") && list_has(l, "get-tiny-image"));
    mcpc_tool_list_free(l);

    call_ok(c, "echo", "{\"message\":\"hi from mcpc\"}", "Echo: hi from mcpc");
    call_ok(c, "get-sum", "{\"a\":1,\"b\":2}", "The sum of 1 and 2 is 3.");

    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "get-structured-content", "{\"location\":\"Chicago\"}", NULL, &r), MCPC_OK);
    const char *sc = mcpc_result_structured_json(r);
    CHECK(sc && strstr(sc, "\"temperature\":") && strstr(sc, "\"conditions\":") && strstr(sc, "\"humidity\":"));
    /* The text block carries the same JSON as the structured content. */
    CHECK(sc && r && strcmp(mcpc_result_text(r, NULL), sc) == 0);
    mcpc_result_free(r);

    /* Mixed content: text, an image, text; the text accessors see only the text. */
    CHECK_STATUS(call(c, "get-tiny-image", NULL, NULL, &r), MCPC_OK);
    CHECK(r && mcpc_result_text_count(r) == 2 && strstr(mcpc_result_json(r), "\"type\":\"image\""));
    mcpc_result_free(r);

    /* Quirk: bad arguments come back as a result with isError (TS SDK), not as a
     * JSON-RPC error: MCPC_ERR_TOOL with the result handed out. */
    CHECK_STATUS(call(c, "echo", "{}", NULL, &r), MCPC_ERR_TOOL);
    CHECK(r && mcpc_result_is_error(r) && strstr(mcpc_result_text(r, NULL), "-32602"));
    mcpc_result_free(r);
    /* ...and so does an unknown tool. */
    CHECK_STATUS(call(c, "no-such-tool", "{}", NULL, &r), MCPC_ERR_TOOL);
    CHECK(r && mcpc_result_is_error(r) && strstr(mcpc_result_text(r, NULL), "no-such-tool"));
    mcpc_result_free(r);

    /* Quirk: it announces notifications/tools/list_changed right after initialized
     * (over HTTP that goes to the standalone GET stream, which is off by default). */
    if (stdio) CHECK(wait_lines(notes, "notifications/tools/list_changed", 1, 3000));
}

/* Progress from trigger-long-running-operation: one notification per step. */
static void everything_progress(mcpc_client_t *c) {
    struct progress p = PROGRESS_INIT;
    mcpc_call_opts_t o = progress_opts(&p, 20000);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "trigger-long-running-operation", "{\"duration\":1,\"steps\":4}", &o, &r), MCPC_OK);
    atomic_store(&p.returned, true);
    CHECK(p.count == 4 && p.last == 4 && p.total == 4 && p.increasing);
    CHECK(r && strstr(mcpc_result_text(r, NULL), "Long running operation completed"));
    mcpc_result_free(r);
}

/* Quirk: server-everything never stops a cancelled operation; it goes on sending
 * progress for the cancelled call's token, and no response. Those must reach neither
 * the cancelled call's progress callback nor break later calls. */
static void everything_cancel(mcpc_client_t *c, struct lines *notes) {
    mcpc_cancel_t *cancel = mcpc_cancel_new();
    struct progress p = PROGRESS_INIT;
    p.cancel_at = cancel;
    mcpc_call_opts_t o = progress_opts(&p, 20000);
    o.cancel = cancel;
    mcpc_result_t *r = NULL;
    double t0 = now_ms();
    CHECK_STATUS(call(c, "trigger-long-running-operation", "{\"duration\":2,\"steps\":4}", &o, &r), MCPC_ERR_CANCELLED);
    atomic_store(&p.returned, true);
    double took = now_ms() - t0;
    CHECK(r == NULL);
    CHECK(took < 1500); /* the first progress comes after 0.5 s; the cancel follows at once */
    CHECK(p.count == 1);
    int notes_before = lines_count_with(notes, "notifications/progress");
    /* While stale progress keeps coming, the client works on. */
    call_ok(c, "echo", "{\"message\":\"after cancel\"}", "Echo: after cancel");
    sleep_ms(1800); /* the operation would have run to its end: 3 more steps */
    CHECK(atomic_load(&p.late) == 0);
    call_ok(c, "get-sum", "{\"a\":20,\"b\":22}", "The sum of 20 and 22 is 42.");
    /* Stale progress is dropped, not handed to the notification callback. */
    CHECK(lines_count_with(notes, "notifications/progress") == notes_before);
    mcpc_cancel_free(cancel);
}

/* A timeout on the slow tool returns in time; the client works on. */
static void everything_timeout(mcpc_client_t *c) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = 700;
    mcpc_result_t *r = NULL;
    double t0 = now_ms();
    CHECK_STATUS(call(c, "trigger-long-running-operation", "{\"duration\":3,\"steps\":3}", &o, &r), MCPC_ERR_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 650 && took < 2000);
    CHECK(strstr(mcpc_last_error_message(), "timed out after"));
    call_ok(c, "echo", "{\"message\":\"after timeout\"}", "Echo: after timeout");
}

/* Progress restarts the timeout (under a total limit) with a real server: steps
 * come every 0.25 s, the timeout is 0.8 s, the operation takes 2 s. */
static void everything_progress_timeout(mcpc_client_t *c) {
    struct progress p = PROGRESS_INIT;
    mcpc_call_opts_t o = progress_opts(&p, 800);
    o.reset_timeout_on_progress = true;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "trigger-long-running-operation", "{\"duration\":2,\"steps\":8}", &o, &r), MCPC_OK);
    atomic_store(&p.returned, true);
    if (p.count != 8 || !p.increasing) fprintf(stderr, "  %d progress callbacks, want 8 increasing\n", p.count);
    CHECK(p.count == 8 && p.increasing);
    mcpc_result_free(r);

    struct progress q = PROGRESS_INIT;
    o = progress_opts(&q, 800);
    o.reset_timeout_on_progress = true;
    o.max_total_ms = 1200;
    double t0 = now_ms();
    CHECK_STATUS(call(c, "trigger-long-running-operation", "{\"duration\":3,\"steps\":12}", &o, &r), MCPC_ERR_TIMEOUT);
    atomic_store(&q.returned, true);
    double took = now_ms() - t0;
    CHECK(took >= 1150 && took < 2500);
    CHECK(q.count >= 3);
}

static void test_everything_stdio(void) {
    struct lines notes = LINES_INIT;
    mcpc_options_t *o = options(20000);
    mcpc_options_set_notification_callback(o, on_notification, &notes, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(everything_stdio(o, &c), MCPC_OK);
    if (c) {
        everything_basics(c, &notes, true);
        /* Notifications outside any request reach the notification callback. */
        call_ok(c, "toggle-simulated-logging", NULL, NULL);
        /* The server logs periodically; the GET stream may open just after the first
         * message went out (and was dropped for want of a stream), so allow a few. */
        CHECK(wait_lines(&notes, "notifications/message", 1, 15000));
        call_ok(c, "toggle-simulated-logging", NULL, NULL); /* off again */
        everything_progress(c);
        everything_cancel(c, &notes);
        everything_timeout(c);
        everything_progress_timeout(c);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    lines_free(&notes);
}

/* Input for the server: answers every elicitation form with a name (the rest left
 * to the schema's defaults), URL elicitation with a decline, sampling with "Paris",
 * roots with /tmp. Counts what it was asked, by kind. */
static atomic_int input_asked[5];

static void on_everything_input(void *ud, mcpc_input_t *input) {
    (void)ud;
    int kind = mcpc_input_kind(input);
    atomic_fetch_add(&input_asked[kind], 1);
    mcpc_status_t st = MCPC_OK;
    if (kind == MCPC_INPUT_ELICIT_FORM) {
        st = mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, "{\"name\":\"Ada\"}");
    } else if (kind == MCPC_INPUT_ELICIT_URL) {
        st = mcpc_input_elicit(input, MCPC_ELICIT_DECLINE, NULL);
    } else if (kind == MCPC_INPUT_SAMPLING) {
        st = mcpc_input_complete(input, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Paris\"},"
                                        "\"model\":\"test-model\",\"stopReason\":\"endTurn\"}");
    } else if (kind == MCPC_INPUT_ROOTS) {
        st = mcpc_input_complete(input, "{\"roots\":[{\"uri\":\"file:///tmp\",\"name\":\"tmp\"}]}");
    }
    if (st != MCPC_OK) fprintf(stderr, "  answering %s: %s\n", mcpc_input_method(input), mcpc_last_error_message());
    mcpc_input_free(input);
}

struct atomic_wait {
    atomic_int *v;
    int at_least;
};

static bool atomic_reached(void *arg) {
    struct atomic_wait *w = arg;
    return atomic_load(w->v) >= w->at_least;
}

static bool wait_until_atomic_at_least(atomic_int *v, int at_least, int limit_ms) {
    struct atomic_wait w = {v, at_least};
    return wait_until(atomic_reached, &w, limit_ms);
}

/* Calls `tool` expecting MCPC_OK and text holding `want`. */
static void call_has(mcpc_client_t *c, const char *tool, const char *args, const char *want) {
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, tool, args, NULL, &r), MCPC_OK);
    if (!r || !strstr(mcpc_result_text(r, NULL), want)) {
        fprintf(stderr, "  %s: text %.1500s, want %s\n", tool, r ? mcpc_result_text(r, NULL) : "(none)", want);
        CHECK(0);
    }
    mcpc_result_free(r);
}

/* server-everything's elicitation, sampling and roots tools, over stdio and HTTP:
 * it registers them only for a client that declares the capabilities. */
static void test_everything_input(void) {
    for (int http = 0; http < 2; http++) {
        for (int k = 0; k < 5; k++) atomic_store(&input_asked[k], 0);
        struct server s;
        if (http && everything_http_start(&s, 0) != 0) {
            CHECK(0);
            return;
        }
        struct lines notes = LINES_INIT;
        mcpc_options_t *o = options(20000);
        mcpc_options_set_notification_callback(o, on_notification, &notes, NULL);
        mcpc_options_set_elicitation_handler(o, MCPC_ELICIT_MODE_FORM | MCPC_ELICIT_MODE_URL, on_everything_input,
                                             NULL, NULL);
        mcpc_options_set_sampling_handler(o, 0, on_everything_input, NULL, NULL);
        mcpc_options_set_roots_handler(o, on_everything_input, NULL, NULL);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(http ? mcpc_client_connect_http(s.url, o, &c) : everything_stdio(o, &c), MCPC_OK);
        /* It registers its conditional tools once it has handled initialized; as in
         * everything_basics, the listing is repeated until they are there. */
        bool listed = false;
        for (int tries = 0; c && !listed && tries < 250; tries++) {
            mcpc_tool_list_t *l = NULL;
            CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
            listed = list_has(l, "trigger-elicitation-request") && list_has(l, "trigger-sampling-request") &&
                     list_has(l, "get-roots-list");
            mcpc_tool_list_free(l);
            if (!listed) sleep_ms(20);
        }
        if (listed) {
            call_has(c, "trigger-elicitation-request", "{}", "\"name\": \"Ada\"");
            call_has(c, "trigger-sampling-request", "{\"prompt\":\"capital of France?\",\"maxTokens\":10}",
                     "Paris");
            call_has(c, "get-roots-list", "{}", "file:///tmp");
            CHECK_STATUS(mcpc_client_roots_changed(c), MCPC_OK);
            /* Its other listings, all pages. */
            char *json = NULL;
            CHECK_STATUS(mcpc_client_list_prompts(c, NULL, &json), MCPC_OK);
            CHECK(json && strstr(json, "\"name\":\"simple-prompt\"") && strstr(json, "\"name\":\"args-prompt\""));
            mcpc_string_free(json);
            json = NULL;
            CHECK_STATUS(mcpc_client_list_resources(c, NULL, &json), MCPC_OK);
            CHECK(json && strstr(json, "\"uri\":"));
            mcpc_string_free(json);
            json = NULL;
            CHECK_STATUS(mcpc_client_list_resource_templates(c, NULL, &json), MCPC_OK);
            CHECK(json && strstr(json, "\"uriTemplate\":"));
            mcpc_string_free(json);
            CHECK(atomic_load(&input_asked[MCPC_INPUT_ELICIT_FORM]) == 1);
            CHECK(atomic_load(&input_asked[MCPC_INPUT_SAMPLING]) == 1);
            /* It asks for the roots after initialized, and again after the change. */
            CHECK(wait_until_atomic_at_least(&input_asked[MCPC_INPUT_ROOTS], 2, 5000));
        } else {
            fprintf(stderr, "  the input tools were never listed\n");
            CHECK(0);
        }
        mcpc_client_free(c);
        mcpc_options_free(o);
        lines_free(&notes);
        if (http) server_stop(&s);
    }
}

/* The session id server-everything logged last ("Session initialized with ID: X"). */
static char *everything_session(struct server *s) {
    char *out = read_file(s->out), *id = NULL;
    const char *key = "Session initialized with ID: ";
    for (char *p = out; (p = strstr(p, key)) != NULL; p += strlen(key)) {
        free(id);
        id = strndup(p + strlen(key), strcspn(p + strlen(key), "\n"));
    }
    free(out);
    return id;
}

static void test_everything_http(void) {
    struct server s;
    if (everything_http_start(&s, 0) != 0) {
        CHECK(0);
        return;
    }
    struct lines notes = LINES_INIT;
    mcpc_options_t *o = options(20000);
    mcpc_options_set_notification_callback(o, on_notification, &notes, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    char *session = everything_session(&s);
    CHECK(session && strlen(session) == 36);
    if (c) {
        everything_basics(c, &notes, false);
        everything_progress(c);
        everything_cancel(c, &notes);
        everything_timeout(c);
        everything_progress_timeout(c);
    }
    /* Close sends DELETE with the session id; the server logs the termination. */
    mcpc_client_free(c);
    if (session) {
        char want[128];
        snprintf(want, sizeof want, "Received session termination request for session %s", session);
        CHECK(wait_for_file_text(s.out, want, 3000));
    }
    free(session);
    mcpc_options_free(o);
    lines_free(&notes);
    server_stop(&s);
}

/* Quirk: server-everything answers a request with a session id it does not know
 * (after a restart, or after DELETE) with 400 "No valid session ID provided", not
 * the 404 of the spec. mcpc cannot tell that from any other bad request: it reports
 * MCPC_ERR_HTTP naming the status, never hangs, and a new client gets a new session. */
static void test_everything_http_unknown_session_400(void) {
    struct server s;
    if (everything_http_start(&s, 0) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(10000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    call_ok(c, "echo", "{\"message\":\"before\"}", "Echo: before");
    int port = s.port;
    server_stop(&s); /* the server forgets every session */
    if (everything_http_start(&s, port) != 0) {
        CHECK(0);
        mcpc_client_free(c);
        mcpc_options_free(o);
        return;
    }
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "echo", "{\"message\":\"after restart\"}", NULL, &r), MCPC_ERR_HTTP);
    CHECK(strstr(mcpc_last_error_message(), "400"));
    mcpc_client_free(c);
    c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) call_ok(c, "echo", "{\"message\":\"new client\"}", "Echo: new client");
    mcpc_client_free(c);
    mcpc_options_free(o);
    server_stop(&s);
}

/* A reply stream that ended after its response is complete: nothing may resume it.
 * server-everything gives every SSE event an id (it keeps an event store), so a
 * resumption shows in its log as a GET; and as its store replays the events of every
 * stream after the given id (quirk), a needless resumption re-delivers old messages. */
static void test_everything_http_complete_reply_not_resumed(void) {
    struct server s;
    if (everything_http_start(&s, 0) != 0) {
        CHECK(0);
        return;
    }
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, NULL, &c), MCPC_OK);
    if (c) call_ok(c, "get-sum", "{\"a\":2,\"b\":2}", "The sum of 2 and 2 is 4.");
    sleep_ms(1500); /* past the default SSE retry delay */
    CHECK(LINES(s.out, "Received MCP GET request") == 0);
    CHECK(LINES(s.out, "Client reconnecting with Last-Event-ID") == 0);
    mcpc_client_free(c);
    server_stop(&s);
}

/* Over HTTP, notifications outside any request need the standalone GET stream:
 * server-everything's simulated logging arrives there. */
static void test_everything_http_standalone_stream(void) {
    struct server s;
    if (everything_http_start(&s, 0) != 0) {
        CHECK(0);
        return;
    }
    struct lines notes = LINES_INIT;
    mcpc_options_t *o = options(10000);
    mcpc_options_set_notification_callback(o, on_notification, &notes, NULL);
    CHECK_STATUS(mcpc_options_set_standalone_stream(o, true), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) {
        call_ok(c, "toggle-simulated-logging", NULL, NULL);
        /* The server logs periodically; the GET stream may open just after the first
         * message went out (and was dropped for want of a stream), so allow a few. */
        CHECK(wait_lines(&notes, "notifications/message", 1, 15000));
        CHECK(lines_count_with(&notes, "\"level\":") >= 1);
    }
    double t0 = now_ms();
    mcpc_client_free(c); /* with the GET stream open: bounded */
    CHECK(now_ms() - t0 < 3000);
    mcpc_options_free(o);
    lines_free(&notes);
    server_stop(&s);
}

/* ======================================================================== */
/* Python mcp                                                                */
/* ======================================================================== */

/* py_server.py over stdio, on the Python of MCPC_PEERS_<py_var>. */
static mcpc_status_t py_stdio(const char *py_var, const char *const *args, mcpc_options_t *o, mcpc_client_t **c) {
    const char *py = peer(py_var);
    *c = NULL;
    if (!py) return MCPC_ERR_SPAWN;
    const char *argv[16] = {py, PY_SERVER};
    size_t n = 2;
    for (size_t i = 0; args && args[i] && n < 15; i++) argv[n++] = args[i];
    return mcpc_client_connect_stdio(argv, n, o, c);
}

/* The four tools, as every Python server must show them. `v2` selects the fail
 * text: mcp 2.x hides the exception's message, 1.x shows it. */
static void py_basics(mcpc_client_t *c, bool v2) {
    mcpc_tool_list_t *l = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
    CHECK(mcpc_tool_list_len(l) == 4 && list_has(l, "echo") && list_has(l, "add") && list_has(l, "fail") &&
          list_has(l, "sleep"));
    mcpc_tool_list_free(l);
    call_ok(c, "echo", "{\"text\":\"h\\u00e9llo\"}", "h\xc3\xa9llo");
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "add", "{\"a\":2,\"b\":3}", NULL, &r), MCPC_OK);
    CHECK(r && mcpc_result_structured_json(r) &&
          strcmp(mcpc_result_structured_json(r), "{\"a\":2,\"b\":3,\"sum\":5}") == 0);
    mcpc_result_free(r);
    CHECK_STATUS(call(c, "fail", "{\"message\":\"boom\"}", NULL, &r), MCPC_ERR_TOOL);
    CHECK(r && mcpc_result_is_error(r) &&
          strcmp(mcpc_result_text(r, NULL), v2 ? "Error executing tool fail" : "Error executing tool fail: boom") == 0);
    mcpc_result_free(r);
    CHECK_STATUS(call(c, "nope", "{}", NULL, &r), MCPC_ERR_TOOL);
    CHECK(r && strstr(mcpc_result_text(r, NULL), "Unknown tool"));
    mcpc_result_free(r);

    struct progress p = PROGRESS_INIT;
    mcpc_call_opts_t o = progress_opts(&p, 20000);
    CHECK_STATUS(call(c, "sleep", "{\"seconds\":1}", &o, &r), MCPC_OK);
    atomic_store(&p.returned, true);
    CHECK(p.count == 4 && p.last == 4 && p.total == 4 && p.increasing);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), "slept 1.0s") == 0);
    mcpc_result_free(r);
}

/* Cancel `sleep` after its first progress; the server must stop the tool (it writes
 * "sleep interrupted" to stderr, read through `stderr_lines`, or its stderr file
 * when NULL), and the next call on the same client must get its own answer. */
static void py_cancel(mcpc_client_t *c, struct lines *stderr_lines, const char *stderr_file) {
    mcpc_cancel_t *cancel = mcpc_cancel_new();
    struct progress p = PROGRESS_INIT;
    p.cancel_at = cancel;
    mcpc_call_opts_t o = progress_opts(&p, 20000);
    o.cancel = cancel;
    mcpc_result_t *r = NULL;
    double t0 = now_ms();
    CHECK_STATUS(call(c, "sleep", "{\"seconds\":5}", &o, &r), MCPC_ERR_CANCELLED);
    atomic_store(&p.returned, true);
    CHECK(now_ms() - t0 < 2000);
    CHECK(p.count == 1);
    /* At once, before any late answer for the cancelled id could be mistaken for it. */
    call_ok(c, "echo", "{\"text\":\"next\"}", "next");
    if (stderr_lines) {
        CHECK(wait_lines(stderr_lines, "sleep interrupted", 1, 3000));
    } else {
        CHECK(wait_for_file_text(stderr_file, "sleep interrupted", 3000));
    }
    call_ok(c, "echo", "{\"text\":\"still fine\"}", "still fine");
    CHECK(atomic_load(&p.late) == 0);
    mcpc_cancel_free(cancel);
}

static void py_timeout(mcpc_client_t *c) {
    mcpc_call_opts_t o;
    mcpc_call_opts_init(&o);
    o.timeout_ms = 600;
    mcpc_result_t *r = NULL;
    double t0 = now_ms();
    CHECK_STATUS(call(c, "sleep", "{\"seconds\":5}", &o, &r), MCPC_ERR_TIMEOUT);
    double took = now_ms() - t0;
    CHECK(took >= 550 && took < 2000);
    call_ok(c, "add", "{\"a\":1,\"b\":1}", NULL);
}

/* A page-size-7 server with 20 extra tools: 24 tools in 4 pages, in order. */
static void py_pages(mcpc_client_t *c) {
    mcpc_tool_list_t *l = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_OK);
    CHECK(mcpc_tool_list_len(l) == 24);
    CHECK(l && strcmp(mcpc_tool_list_name(l, 0), "echo") == 0 &&
          strcmp(mcpc_tool_list_name(l, 23), "filler_20") == 0);
    mcpc_tool_list_free(l);
}

static const char *const PAGED[] = {"--extra-tools", "20", "--page-size", "7", NULL};

static void test_py2_stdio_modern(void) {
    struct lines err = LINES_INIT;
    mcpc_options_t *o = options(20000);
    mcpc_options_set_stderr_callback(o, on_stderr, &err, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(py_stdio("MCPC_PEERS_PY", NULL, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2026-07-28", "discover");
        char *info = NULL;
        CHECK_STATUS(mcpc_client_server_info(c, &info), MCPC_OK);
        CHECK(info && strstr(info, "\"supportedVersions\":[\"2026-07-28\"]") && strstr(info, "mcpc-peer-py"));
        mcpc_string_free(info);
        py_basics(c, true);
        py_cancel(c, &err, NULL);
        py_timeout(c);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    lines_free(&err);
}

static void test_py2_stdio_legacy(void) {
    struct lines err = LINES_INIT;
    mcpc_options_t *o = options(20000);
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    mcpc_options_set_stderr_callback(o, on_stderr, &err, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(py_stdio("MCPC_PEERS_PY", NULL, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2025-11-25", "initialize");
        py_basics(c, true);
        /* Quirk: mcp 2.x stops a cancelled tool and sends no response at all. */
        py_cancel(c, &err, NULL);
        py_timeout(c);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    lines_free(&err);
}

static void test_py2_stdio_pages(void) {
    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(py_stdio("MCPC_PEERS_PY", PAGED, o, &c), MCPC_OK);
    if (c) py_pages(c);
    mcpc_client_free(c);
    /* The page guard, against a real server. */
    mcpc_options_set_max_pages(o, 3);
    CHECK_STATUS(py_stdio("MCPC_PEERS_PY", PAGED, o, &c), MCPC_OK);
    mcpc_tool_list_t *l = NULL;
    if (c) CHECK_STATUS(mcpc_client_list_tools(c, NULL, &l), MCPC_ERR_TOO_MANY_PAGES);
    mcpc_client_free(c);
    mcpc_options_free(o);
}

/* HTTP, 2026-07-28: no session, no initialize, Mcp-Method and Mcp-Name headers. */
static void test_py2_http_modern(void) {
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, PAGED) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2026-07-28", "discover");
        py_pages(c);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(call(c, "add", "{\"a\":40,\"b\":2}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_structured_json(r), "{\"a\":40,\"b\":2,\"sum\":42}") == 0);
        mcpc_result_free(r);
        call_ok(c, "echo", "{\"text\":\"modern\"}", "modern");
        CHECK_STATUS(call(c, "fail", "{}", NULL, &r), MCPC_ERR_TOOL);
        mcpc_result_free(r);
        struct progress p = PROGRESS_INIT;
        mcpc_call_opts_t po = progress_opts(&p, 20000);
        CHECK_STATUS(call(c, "sleep", "{\"seconds\":0.5}", &po, &r), MCPC_OK);
        atomic_store(&p.returned, true);
        CHECK(p.count == 2 && p.total == 2);
        mcpc_result_free(r);
        /* Over HTTP a 2026-07-28 cancel is the end of the request's exchange. */
        py_cancel(c, NULL, s.err);
        py_timeout(c);
    }
    mcpc_client_free(c);
    /* On the wire: every POST under 2026-07-28 names its method, calls name their
     * tool, no request carries a session, and nothing is sent to close. */
    CHECK(LINES(s.log, "\"rpc\": \"server/discover\"", "\"mcp_method\": \"server/discover\"",
                "\"version\": \"2026-07-28\"") == 1);
    CHECK(LINES(s.log, "\"rpc\": \"tools/list\"", "\"mcp_method\": \"tools/list\"") == 4);
    CHECK(LINES(s.log, "\"rpc\": \"tools/call\"", "\"mcp_method\": \"tools/call\"", "\"mcp_name\": \"add\"") == 2);
    /* The timed-out call: the client left before any answer; the tool was stopped. */
    CHECK(WAIT_LINES(1, s.log, "\"mcp_name\": \"sleep\"", "\"status\": null") == 1);
    CHECK(WAIT_LINES(2, s.err, "sleep interrupted") == 2);
    CHECK(LINES(s.log, "\"rpc\": \"initialize\"") == 0);
    CHECK(LINES(s.log, "\"session\": null") == LINES(s.log, "\"http\": "));
    CHECK(LINES(s.log, "\"http\": \"DELETE\"") == 0);
    mcpc_options_free(o);
    server_stop(&s);
}

/* HTTP, forced 2025-11-25: a session from initialize on every request, the
 * cancelled notification on cancel, DELETE on close. */
static void test_py2_http_legacy(void) {
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, PAGED) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(20000);
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2025-11-25", "initialize");
        py_pages(c);
        call_ok(c, "echo", "{\"text\":\"legacy\"}", "legacy");
        py_cancel(c, NULL, s.err);
        CHECK(WAIT_LINES(1, s.log, "\"rpc\": \"notifications/cancelled\"", "\"status\": 202") == 1);
        py_timeout(c);
        CHECK(WAIT_LINES(2, s.log, "\"rpc\": \"notifications/cancelled\"", "\"status\": 202") == 2);
    }
    mcpc_client_free(c);
    CHECK(wait_for_file_text(s.log, "\"http\": \"DELETE\", \"status\": 200", 3000));
    CHECK(LINES(s.log, "\"rpc\": \"server/discover\"") == 0);
    CHECK(LINES(s.log, "\"rpc\": \"initialize\"", "\"session\": null", "\"status\": 200") == 1);
    /* Every later request carries the session and the version. */
    int all = LINES(s.log, "\"http\": ");
    CHECK(LINES(s.log, "\"version\": \"2025-11-25\"") == all - 1);
    CHECK(LINES(s.log, "\"session\": null") == 1);
    mcpc_options_free(o);
    server_stop(&s);
}

/* Quirk (the spec's behaviour, unlike server-everything): the Python server answers
 * an unknown session with 404. mcpc reports MCPC_ERR_SESSION_EXPIRED for that call,
 * starts a fresh session before returning, and the next call works. */
static void py_http_session_expired_404(const char *py_var, const char *error_id) {
    struct server s;
    if (py_http_start(&s, py_var, 0, NULL) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(20000);
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) call_ok(c, "echo", "{\"text\":\"one\"}", "one");
    int port = s.port;
    server_stop(&s);
    if (py_http_start(&s, py_var, port, NULL) != 0) {
        CHECK(0);
    } else if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(call(c, "echo", "{\"text\":\"two\"}", NULL, &r), MCPC_ERR_SESSION_EXPIRED);
        call_ok(c, "echo", "{\"text\":\"three\"}", "three");
        CHECK(LINES(s.log, "\"rpc\": \"tools/call\"", "\"status\": 404", "Session not found", error_id) == 1);
        CHECK(LINES(s.log, "\"rpc\": \"initialize\"", "\"status\": 200") == 1);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    server_stop(&s);
}

static void test_py2_http_session_expired_404(void) {
    py_http_session_expired_404("MCPC_PEERS_PY", "\\\"id\\\":null");
}

/* Quirk: 1.x error bodies carry "id":"server-error", an id no request used (2.x: null). */
static void test_py1_http_session_expired_404(void) {
    py_http_session_expired_404("MCPC_PEERS_PY_V1", "\\\"id\\\":\\\"server-error\\\"");
}

/* The test CA's files: the server's certificate and key, and the CA. */
struct tls_files {
    char cert[300], key[300], ca[300];
};

static bool tls_files(struct tls_files *f) {
    const char *tls = peer("MCPC_PEERS_TLS");
    if (!tls) return false;
    snprintf(f->cert, sizeof f->cert, "%s/server.pem", tls);
    snprintf(f->key, sizeof f->key, "%s/server.key", tls);
    snprintf(f->ca, sizeof f->ca, "%s/ca.pem", tls);
    return true;
}

/* HTTPS on loopback with the test CA given to mcpc; refused without it. */
static void test_py2_https(void) {
    struct tls_files f;
    if (!tls_files(&f)) return;
    const char *cert = f.cert, *key = f.key, *ca = f.ca;
    const char *args[] = {"--certfile", cert, "--keyfile", key, NULL};
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, args) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_ERR_TLS);
    CHECK_STATUS(mcpc_options_add_ca_file(o, ca), MCPC_OK);
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2026-07-28", "discover");
        call_ok(c, "echo", "{\"text\":\"over tls\"}", "over tls");
    }
    mcpc_client_free(c);
    c = NULL;
    /* The certificate names localhost too; and the legacy revision works over TLS. */
    char url[128];
    snprintf(url, sizeof url, "https://localhost:%d/mcp", s.port);
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    CHECK_STATUS(mcpc_client_connect_http(url, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2025-11-25", "initialize");
        mcpc_result_t *r = NULL;
        CHECK_STATUS(call(c, "add", "{\"a\":1,\"b\":2}", NULL, &r), MCPC_OK);
        CHECK(r && strstr(mcpc_result_structured_json(r), "\"sum\":3"));
        mcpc_result_free(r);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    server_stop(&s);
}

/* ---- HTTP/2 (hypercorn) ------------------------------------------------ */

/* Calls in flight, each with its expected text; counts what completed right. */
struct h2_calls {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, ok, cancelled;
};

struct h2_call {
    struct h2_calls *all;
    char want[32];
};

static void on_h2_done(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *msg) {
    (void)msg;
    struct h2_call *call = ud;
    struct h2_calls *all = call->all;
    bool ok = st == MCPC_OK && r && strcmp(mcpc_result_text(r, NULL), call->want) == 0;
    mcpc_result_free(r);
    pthread_mutex_lock(&all->mu);
    all->done++;
    all->ok += ok;
    all->cancelled += st == MCPC_ERR_CANCELLED;
    pthread_cond_broadcast(&all->cv);
    pthread_mutex_unlock(&all->mu);
}

static bool h2_wait(struct h2_calls *all, int n, int limit_ms) {
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += limit_ms / 1000;
    pthread_mutex_lock(&all->mu);
    while (all->done < n) {
        if (pthread_cond_timedwait(&all->cv, &all->mu, &end) != 0) break;
    }
    bool got = all->done >= n;
    pthread_mutex_unlock(&all->mu);
    return got;
}

/* The distinct client ports (connections) of the log's lines holding `needle`, and
 * whether every such line says HTTP version `version`. */
static int log_connections(const char *log, const char *needle, const char *version, bool *all_version) {
    char *text = read_file(log);
    int ports[256], n = 0;
    *all_version = true;
    char want[32];
    snprintf(want, sizeof want, "\"http_version\": \"%s\"", version);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strstr(line, needle)) continue;
        *all_version &= strstr(line, want) != NULL;
        const char *p = strstr(line, "\"client_port\": ");
        int port = p ? atoi(p + strlen("\"client_port\": ")) : -1;
        bool seen = false;
        for (int i = 0; i < n; i++) seen |= ports[i] == port;
        if (!seen && n < 256) ports[n++] = port;
    }
    free(text);
    return n;
}

/* Starts an echo of "<what> <i>" whose completion counts in `all`. */
static void h2_echo_async(mcpc_client_t *c, struct h2_call *call, struct h2_calls *all, const char *what, int i) {
    call->all = all;
    snprintf(call->want, sizeof call->want, "%s %d", what, i);
    char args[64];
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", call->want);
    CHECK_STATUS(mcpc_client_call_tool_async(c, "echo", args, NULL, on_h2_done, call, NULL), MCPC_OK);
}

/* 64 echo calls in flight at once, and a sleep among them that is cancelled: the
 * cancelled call ends at once, the others complete with their own results. */
static void h2_calls_in_flight(mcpc_client_t *c, const char *stderr_file) {
    struct h2_calls all = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    static struct h2_call calls[65];
    mcpc_op_t *sleeping = NULL;
    calls[64].all = &all;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "sleep", "{\"seconds\":20}", NULL, on_h2_done, &calls[64], &sleeping),
                 MCPC_OK);
    CHECK(wait_for_file_text(stderr_file, "sleep started", 10000));
    for (int i = 0; i < 64; i++) {
        h2_echo_async(c, &calls[i], &all, "call", i);
        if (i == 31 && sleeping) mcpc_op_cancel(sleeping); /* while the others are in flight */
    }
    CHECK(h2_wait(&all, 65, 20000));
    CHECK(all.ok == 64);
    CHECK(all.cancelled == 1);
    CHECK(wait_for_file_text(stderr_file, "sleep interrupted", 5000));
    mcpc_op_free(sleeping);
    call_ok(c, "echo", "{\"text\":\"after\"}", "after");
}

struct h2_seq {
    mcpc_client_t *c;
    int id, ok;
};

static void *h2_seq_thread(void *arg) {
    struct h2_seq *t = arg;
    for (int i = 0; i < 40; i++) {
        char args[64], want[32];
        snprintf(want, sizeof want, "t%d-%d", t->id, i);
        snprintf(args, sizeof args, "{\"text\":\"%s\"}", want);
        mcpc_result_t *r = NULL;
        if (call(t->c, "echo", args, NULL, &r) == MCPC_OK && strcmp(mcpc_result_text(r, NULL), want) == 0) t->ok++;
        mcpc_result_free(r);
    }
    return NULL;
}

/* A blocked caller's thread drives the connection itself while it waits; the
 * connection's task takes it back when the wait ends, however it ends. Calls in
 * flight on the task complete beside blocking calls, after a blocking call that
 * timed out mid-wait, and while four threads call at once (one drives, the others
 * are woken by it). */
static void h2_blocking_beside_async(mcpc_client_t *c, const char *stderr_file) {
    struct h2_calls all = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};
    static struct h2_call calls[17];
    calls[16].all = &all;
    snprintf(calls[16].want, sizeof calls[16].want, "slept 1.0s");
    CHECK_STATUS(mcpc_client_call_tool_async(c, "sleep", "{\"seconds\":1.0}", NULL, on_h2_done, &calls[16], NULL),
                 MCPC_OK);
    CHECK(wait_for_file_text(stderr_file, "sleep started (1.0s)", 10000));
    for (int i = 0; i < 20; i++) call_ok(c, "echo", "{\"text\":\"seq\"}", "seq");
    mcpc_call_opts_t short_wait;
    mcpc_call_opts_init(&short_wait);
    short_wait.timeout_ms = 300;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "sleep", "{\"seconds\":20}", &short_wait, &r), MCPC_ERR_TIMEOUT);
    mcpc_result_free(r);
    for (int i = 0; i < 16; i++) {
        h2_echo_async(c, &calls[i], &all, "async", i);
    }
    CHECK(h2_wait(&all, 17, 20000));
    CHECK(all.ok == 17);
    struct h2_seq t[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        t[i] = (struct h2_seq){c, i, 0};
        pthread_create(&th[i], NULL, h2_seq_thread, &t[i]);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(t[i].ok == 40);
    }
}

/* A 1.5 MiB result (over 16 times HTTP/2's default window of 64 KiB), and a 1 MiB
 * argument echoed back: each many times the server's window and its largest frame,
 * so both go in many DATA frames (the argument's gathered into fewer writes). */
static void h2_large_bodies(mcpc_client_t *c) {
    mcpc_result_t *r = NULL;
    CHECK_STATUS(call(c, "big", "{\"size\":1572864}", NULL, &r), MCPC_OK);
    size_t len = 0;
    const char *text = r ? mcpc_result_text(r, &len) : "";
    CHECK(len == 1572864);
    CHECK(len == 1572864 && text[0] == 'a' && text[25] == 'z' && text[len - 1] == 'a' + (char)((len - 1) % 26));
    mcpc_result_free(r);
    size_t n = (size_t)1 << 20;
    char *want = malloc(n + 1), *args = malloc(n + 16);
    if (!want || !args) {
        CHECK(0);
        free(want);
        free(args);
        return;
    }
    for (size_t i = 0; i < n; i++) want[i] = (char)('a' + i % 26);
    want[n] = 0;
    snprintf(args, n + 16, "{\"text\":\"%s\"}", want);
    r = NULL;
    CHECK_STATUS(call(c, "echo", args, NULL, &r), MCPC_OK);
    text = r ? mcpc_result_text(r, &len) : "";
    if (r && (len != n || memcmp(text, want, n) != 0)) {
        fprintf(stderr, "  echo of 1 MiB: %zu bytes back, or not the same\n", len);
        CHECK(0);
    }
    mcpc_result_free(r);
    free(want);
    free(args);
}

/* HTTP/2 through a proxy's CONNECT tunnel (tinyproxy): ALPN and TLS end to end with
 * the origin, every call on HTTP/2. */
static void h2_through_tunnel(const struct server *s, const char *ca) {
    struct proxy p;
    if (proxy_start(&p, NULL) != 0) {
        CHECK(0);
        return;
    }
    char proxy_url[64];
    snprintf(proxy_url, sizeof proxy_url, "http://127.0.0.1:%d", p.port);
    int before = LINES(s->log, "\"http_version\": \"2\"", "\"rpc\": \"tools/call\"");
    mcpc_options_t *o = options(20000);
    mcpc_options_add_ca_file(o, ca);
    CHECK_STATUS(mcpc_options_set_proxy(o, proxy_url), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s->url, o, &c), MCPC_OK);
    if (c) {
        call_ok(c, "echo", "{\"text\":\"tunnelled\"}", "tunnelled");
        h2_large_bodies(c);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    CHECK(proxy_log_has(&p, "CONNECT 127.0.0.1:"));
    CHECK(LINES(s->log, "\"http_version\": \"2\"", "\"rpc\": \"tools/call\"") == before + 3);
    proxy_stop(&p);
}

/* The standalone GET stream over HTTP/2 (the older revision, which has it): a
 * notification outside any request comes on it, and calls beside it share its
 * connection, which none of them parks while the stream is open. `o` is left as
 * it came. */
static void h2_standalone_stream(const struct server *s, mcpc_options_t *o) {
    struct lines notes = LINES_INIT;
    const char *get = "\"http\": \"GET\", \"status\": 200";
    int gets = LINES(s->log, get, "\"http_version\": \"2\"");
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    mcpc_options_set_notification_callback(o, on_notification, &notes, NULL);
    CHECK_STATUS(mcpc_options_set_standalone_stream(o, true), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s->url, o, &c), MCPC_OK);
    if (c) {
        /* The stream is open once the server has answered its GET. */
        CHECK(WAIT_LINES(gets + 1, s->log, get, "\"http_version\": \"2\"") == gets + 1);
        for (int i = 0; i < 20; i++) call_ok(c, "echo", "{\"text\":\"beside\"}", "beside");
        call_ok(c, "announce", NULL, "announced");
        CHECK(wait_lines(&notes, "notifications/tools/list_changed", 1, 10000));
        for (int i = 0; i < 5; i++) call_ok(c, "echo", "{\"text\":\"after\"}", "after");
    }
    double t0 = now_ms();
    mcpc_client_free(c); /* with the GET stream open: bounded */
    CHECK(now_ms() - t0 < 3000);
    CHECK(lines_count_with(&notes, "notifications/tools/list_changed") == 1);
    mcpc_options_set_notification_callback(o, NULL, NULL, NULL);
    CHECK_STATUS(mcpc_options_set_standalone_stream(o, false), MCPC_OK);
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_AUTO);
    lines_free(&notes);
}

/* HTTP/2 against hypercorn: by ALPN over TLS (the default), and with prior
 * knowledge over plain TCP; every call of a client on one connection, a cancel
 * that ends only its own call, a result beyond the default windows. HTTP/1.1 when
 * asked for, and against a server without HTTP/2 (uvicorn, test_py2_https). */
static void test_py2_http2(void) {
    struct tls_files f;
    if (!tls_files(&f)) return;
    const char *cert = f.cert, *key = f.key, *ca = f.ca;
    for (int plain = 0; plain < 2; plain++) {
        const char *tls_args[] = {"--hypercorn", "--big", "--announce", "--certfile", cert, "--keyfile", key, NULL};
        const char *plain_args[] = {"--hypercorn", "--big", "--announce", NULL};
        struct server s;
        if (py_http_start(&s, "MCPC_PEERS_PY", 0, plain ? plain_args : tls_args) != 0) {
            CHECK(0);
            return;
        }
        mcpc_options_t *o = options(20000);
        mcpc_options_add_ca_file(o, ca);
        if (plain) CHECK_STATUS(mcpc_options_set_http_version(o, MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE), MCPC_OK);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
        if (c) {
            check_negotiation(c, "2026-07-28", "discover");
            h2_calls_in_flight(c, s.err);
            h2_blocking_beside_async(c, s.err);
            h2_large_bodies(c);
        }
        mcpc_client_free(c);
        bool h2 = false;
        CHECK(log_connections(s.log, "\"rpc\": \"tools/call\"", "2", &h2) == 1);
        CHECK(h2);
        /* The older revision over HTTP/2 too: a session, SSE replies, the cancel. */
        mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
        c = NULL;
        CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
        if (c) {
            check_negotiation(c, "2025-11-25", "initialize");
            py_cancel(c, NULL, s.err);
            h2_large_bodies(c);
        }
        mcpc_client_free(c);
        h2_standalone_stream(&s, o);
        /* HTTP/1.1 when asked for; hypercorn speaks both. */
        mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_AUTO);
        CHECK_STATUS(mcpc_options_set_http_version(o, MCPC_HTTP_VERSION_1_1), MCPC_OK);
        c = NULL;
        CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
        if (c) call_ok(c, "echo", "{\"text\":\"over 1.1\"}", "over 1.1");
        mcpc_client_free(c);
        CHECK(LINES(s.log, "\"http_version\": \"1.1\"", "\"rpc\": \"tools/call\"") == 1);
        CHECK(LINES(s.log, "\"http_version\": \"2\"", "\"rpc\": \"tools/call\"") >= 64 + 2 + 1);
        if (!plain) h2_through_tunnel(&s, ca);
        mcpc_options_free(o);
        server_stop(&s);
    }
}

/* Against a server without HTTP/2: ALPN falls back to HTTP/1.1, and prior knowledge
 * over TLS (h2 the only protocol offered) fails to connect. */
static void test_py2_http2_fallback(void) {
    struct tls_files f;
    if (!tls_files(&f)) return;
    const char *cert = f.cert, *key = f.key, *ca = f.ca;
    const char *args[] = {"--big", "--certfile", cert, "--keyfile", key, NULL};
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, args) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(20000);
    mcpc_options_add_ca_file(o, ca);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) {
        h2_calls_in_flight(c, s.err);
        h2_large_bodies(c);
    }
    mcpc_client_free(c);
    CHECK(LINES(s.log, "\"http_version\": \"1.1\"", "\"rpc\": \"tools/call\"") >= 66);
    CHECK(LINES(s.log, "\"http_version\": \"2\"") == 0);
    CHECK_STATUS(mcpc_options_set_http_version(o, MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE), MCPC_OK);
    c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_ERR_TRANSPORT);
    CHECK(strstr(mcpc_last_error_message(), "HTTP/2") != NULL);
    mcpc_client_free(c);
    mcpc_options_free(o);
    server_stop(&s);
}

/* Stateless mode: no session id at all; close sends no DELETE (nothing to end). */
static void test_py2_http_stateless(void) {
    const char *args[] = {"--stateless", NULL};
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, args) != 0) {
        CHECK(0);
        return;
    }
    for (int legacy = 0; legacy < 2; legacy++) {
        mcpc_options_t *o = options(20000);
        if (legacy) mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
        if (c) {
            check_negotiation(c, legacy ? "2025-11-25" : "2026-07-28", legacy ? "initialize" : "discover");
            py_basics(c, true);
        }
        mcpc_client_free(c);
        mcpc_options_free(o);
    }
    CHECK(LINES(s.log, "\"session\": null") == LINES(s.log, "\"http\": "));
    CHECK(LINES(s.log, "\"http\": \"DELETE\"") == 0);

    /* Quirk: a stateless server answers the standalone GET with a 200 SSE stream that
     * never sends anything; calls go on beside it and close is still bounded. */
    mcpc_options_t *o = options(20000);
    mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
    mcpc_options_set_standalone_stream(o, true);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) call_ok(c, "echo", "{\"text\":\"beside the stream\"}", "beside the stream");
    CHECK(wait_for_file_text(s.log, "\"http\": \"GET\", \"status\": 200", 3000));
    double t0 = now_ms();
    mcpc_client_free(c);
    CHECK(now_ms() - t0 < 3000);
    mcpc_options_free(o);
    server_stop(&s);
}

/* JSON-response mode: application/json replies, so no progress can come. */
static void test_py2_http_json_response(void) {
    const char *args[] = {"--json-response", NULL};
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, args) != 0) {
        CHECK(0);
        return;
    }
    for (int legacy = 0; legacy < 2; legacy++) {
        mcpc_options_t *o = options(20000);
        if (legacy) mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY);
        mcpc_client_t *c = NULL;
        CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
        if (c) {
            call_ok(c, "echo", "{\"text\":\"json\"}", "json");
            mcpc_result_t *r = NULL;
            CHECK_STATUS(call(c, "add", "{\"a\":2,\"b\":2}", NULL, &r), MCPC_OK);
            CHECK(r && strstr(mcpc_result_structured_json(r), "\"sum\":4"));
            mcpc_result_free(r);
            struct progress p = PROGRESS_INIT;
            mcpc_call_opts_t po = progress_opts(&p, 20000);
            CHECK_STATUS(call(c, "sleep", "{\"seconds\":0.5}", &po, &r), MCPC_OK);
            atomic_store(&p.returned, true);
            CHECK(p.count == 0);
            mcpc_result_free(r);
        }
        mcpc_client_free(c);
        mcpc_options_free(o);
    }
    server_stop(&s);
}

/* ---- Python mcp 1.x ---------------------------------------------------- */

/* mcp 1.x knows nothing of 2026-07-28: auto negotiation falls back to initialize.
 * Quirk: its cancellation answers the cancelled id with an error
 * ({"code":0,"message":"Request cancelled"}); mcpc drops it. */
/* A sleep with progress (two notifications), then py_cancel and py_timeout. */
static void py_progress_cancel_timeout(mcpc_client_t *c, const char *stderr_file) {
    mcpc_result_t *r = NULL;
    struct progress p = PROGRESS_INIT;
    mcpc_call_opts_t po = progress_opts(&p, 20000);
    CHECK_STATUS(call(c, "sleep", "{\"seconds\":0.5}", &po, &r), MCPC_OK);
    atomic_store(&p.returned, true);
    CHECK(p.count == 2);
    mcpc_result_free(r);
    py_cancel(c, NULL, stderr_file);
    py_timeout(c);
}

/* The HTTP+SSE transport of 2024-11-05 (mcp 1.x's sse_app): found by the fallback
 * from Streamable HTTP, with progress, cancellation and timeouts over it. */
static void test_py1_http_sse(void) {
    struct server s;
    const char *const sse[] = {"--sse", NULL};
    if (py_http_start(&s, "MCPC_PEERS_PY_V1", 0, sse) != 0) {
        CHECK(0);
        return;
    }
    snprintf(s.url, sizeof s.url, "http://127.0.0.1:%d/sse", s.port);
    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (c) {
        check_negotiation(c, "2025-11-25", "initialize");
        mcpc_result_t *r = NULL;
        CHECK_STATUS(call(c, "echo", "{\"text\":\"over sse\"}", NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "over sse") == 0);
        mcpc_result_free(r);
        py_progress_cancel_timeout(c, s.err);
    }
    mcpc_client_free(c);
    server_stop(&s);
}

/* server-everything's sse mode, pinned to the old transport. */
static void test_everything_sse(void) {
    const char *node = peer("MCPC_PEERS_NODE"), *ev = peer("MCPC_PEERS_EVERYTHING");
    if (!node || !ev) {
        CHECK(0);
        return;
    }
    struct server s;
    memset(&s, 0, sizeof s);
    s.port = free_port();
    tmp_path(s.out, sizeof s.out, "everything-sse.out");
    tmp_path(s.err, sizeof s.err, "everything-sse.err");
    char env[32];
    snprintf(env, sizeof env, "PORT=%d", s.port);
    const char *argv[] = {node, ev, "sse", NULL};
    s.pid = spawn_logged(argv, s.out, s.err, env);
    double end = now_ms() + 20000;
    while (s.pid > 0 && !port_open(s.port) && now_ms() < end) sleep_ms(20);
    snprintf(s.url, sizeof s.url, "http://127.0.0.1:%d/sse", s.port);
    mcpc_options_t *o = options(20000);
    CHECK_STATUS(mcpc_options_set_http_transport(o, MCPC_HTTP_SSE), MCPC_OK);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    mcpc_options_free(o);
    if (c) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(call(c, "echo", "{\"message\":\"hi\"}", NULL, &r), MCPC_OK);
        CHECK(r && strstr(mcpc_result_text(r, NULL), "hi") != NULL);
        mcpc_result_free(r);
        char *json = NULL;
        CHECK_STATUS(mcpc_client_list_resources(c, NULL, &json), MCPC_OK);
        mcpc_string_free(json);
    }
    mcpc_client_free(c);
    server_stop(&s);
}

static void test_py1_stdio(void) {
    struct lines err = LINES_INIT;
    mcpc_options_t *o = options(20000);
    mcpc_options_set_stderr_callback(o, on_stderr, &err, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(py_stdio("MCPC_PEERS_PY_V1", NULL, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2025-11-25", "fallback");
        py_basics(c, false);
        py_cancel(c, &err, NULL);
        py_timeout(c);
        /* Quirk: it logs every request to stderr ("Processing request of type ...");
         * the callback sees each line. */
        CHECK(lines_count_with(&err, "Processing request of type CallToolRequest") >= 8);
    }
    mcpc_client_free(c);
    mcpc_options_free(o);
    lines_free(&err);
}

/* Quirk: with stderr discarded (the default), 1.x's per-request logging must never
 * fill the pipe (64 KiB) and block the server: 1000 calls write ~130 KB to stderr. */
static void test_py1_stdio_stderr_flood(void) {
    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(py_stdio("MCPC_PEERS_PY_V1", NULL, o, &c), MCPC_OK);
    double t0 = now_ms();
    int ok = 0;
    for (int i = 0; c && i < 1000; i++) {
        mcpc_result_t *r = NULL;
        if (call(c, "add", "{\"a\":1,\"b\":1}", NULL, &r) == MCPC_OK) ok++;
        mcpc_result_free(r);
        if (now_ms() - t0 > 60000) break;
    }
    CHECK(ok == 1000);
    fprintf(stderr, "  1000 calls in %.0f ms\n", now_ms() - t0);
    mcpc_client_free(c);
    mcpc_options_free(o);
}

static void test_py1_http(void) {
    struct server s;
    if (py_http_start(&s, "MCPC_PEERS_PY_V1", 0, PAGED) != 0) {
        CHECK(0);
        return;
    }
    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_http(s.url, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2025-11-25", "fallback");
        py_pages(c);
        mcpc_result_t *r = NULL;
        CHECK_STATUS(call(c, "fail", "{\"message\":\"boom\"}", NULL, &r), MCPC_ERR_TOOL);
        CHECK(r && strcmp(mcpc_result_text(r, NULL), "Error executing tool fail: boom") == 0);
        mcpc_result_free(r);
        py_progress_cancel_timeout(c, s.err);
    }
    mcpc_client_free(c);
    /* The probe meets an older server: server/discover is refused with 400, then
     * initialize; DELETE on close. */
    CHECK(LINES(s.log, "\"rpc\": \"server/discover\"", "\"status\": 400", "server-error") == 1);
    CHECK(LINES(s.log, "\"rpc\": \"initialize\"", "\"status\": 200") == 1);
    CHECK(wait_for_file_text(s.log, "\"http\": \"DELETE\", \"status\": 200", 3000));
    mcpc_options_free(o);
    server_stop(&s);
}

/* ---- the caller-supplied transport, relaying to a real server ---------- */

/* The host's side of a stream transport over pipes to a child: every line the server
 * writes is kept (to check what it sent) and delivered to mcpc. */
struct relay {
    pid_t pid;
    int to_child;
    FILE *from_child;
    mcpc_transport_t *t;
    pthread_t reader;
    struct lines seen;
};

static int32_t relay_send(void *ud, const char *data, size_t len) {
    struct relay *r = ud;
    if (write(r->to_child, data, len) != (ssize_t)len || write(r->to_child, "\n", 1) != 1) return 1;
    return 0;
}

static void relay_close(void *ud) {
    struct relay *r = ud;
    close(r->to_child);
}

static void *relay_read(void *arg) {
    struct relay *r = arg;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, r->from_child)) > 0) {
        lines_add(&r->seen, line, (size_t)n - 1);
        mcpc_transport_deliver(r->t, line, (size_t)n - 1);
    }
    mcpc_transport_end(r->t, "the server closed its stdout");
    free(line);
    return NULL;
}

/* Quirk, seen on the wire: mcp 1.x answers a cancelled request with an error
 * ({"code":0,"message":"Request cancelled"}) for its id. Relayed through the
 * caller-supplied transport, the test sees that line arrive, and mcpc drops it. */
static void test_py1_seam_cancel_error_reply(void) {
    const char *py = peer("MCPC_PEERS_PY_V1");
    if (!py) return;
    struct relay r = {0};
    r.seen = (struct lines)LINES_INIT;
    char err[256];
    tmp_path(err, sizeof err, "py1-seam.err");
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) {
        CHECK(0);
        return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    const char *argv[] = {py, PY_SERVER, NULL};
    int rc = posix_spawnp(&r.pid, py, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        CHECK(0);
        close(in[1]);
        close(out[0]);
        return;
    }
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    r.to_child = in[1];
    r.from_child = fdopen(out[0], "r");
    CHECK_STATUS(mcpc_transport_new(relay_send, relay_close, &r, NULL, &r.t), MCPC_OK);
    pthread_create(&r.reader, NULL, relay_read, &r);

    mcpc_options_t *o = options(20000);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_transport(r.t, o, &c), MCPC_OK);
    if (c) {
        check_negotiation(c, "2025-11-25", "fallback");
        call_ok(c, "echo", "{\"text\":\"over the seam\"}", "over the seam");
        py_cancel(c, NULL, err);
        CHECK(wait_lines(&r.seen, "\"message\":\"Request cancelled\"", 1, 3000));
    }
    mcpc_client_free(c); /* closes the child's stdin: it exits */
    int status = 0;
    waitpid(r.pid, &status, 0);
    pthread_join(r.reader, NULL);
    fclose(r.from_child);
    mcpc_transport_free(r.t);
    mcpc_options_free(o);
    lines_free(&r.seen);
}

/* ======================================================================== */
/* The mcpc CLI                                                              */
/* ======================================================================== */

static void test_cli(void) {
    const char *node = peer("MCPC_PEERS_NODE"), *ev = peer("MCPC_PEERS_EVERYTHING");
    const char *py = peer("MCPC_PEERS_PY"), *py1 = peer("MCPC_PEERS_PY_V1"), *tls = peer("MCPC_PEERS_TLS");
    if (!node || !ev || !py || !py1 || !tls) return;
    char ev_cmd[600], py_cmd[600], py1_cmd[600], ca[300], cert[300], key[300];
    snprintf(ev_cmd, sizeof ev_cmd, "'%s' '%s' stdio", node, ev);
    snprintf(py_cmd, sizeof py_cmd, "'%s' %s", py, PY_SERVER);
    snprintf(py1_cmd, sizeof py1_cmd, "'%s' %s", py1, PY_SERVER);
    snprintf(ca, sizeof ca, "%s/ca.pem", tls);
    snprintf(cert, sizeof cert, "%s/server.pem", tls);
    snprintf(key, sizeof key, "%s/server.key", tls);
    char *out = NULL;

    /* server-everything over stdio: all tools; an isError call exits 2. */
    CHECK(cli(&out, NULL, "--stdio", ev_cmd, "tools", NULL) == 0);
    CHECK(strstr(out, "\"name\":\"trigger-long-running-operation\"") && out[0] == '[');
    free(out);
    CHECK(cli(&out, NULL, "--stdio", ev_cmd, "call", "echo", "{}", NULL) == 2);
    CHECK(strstr(out, "\"isError\":true"));
    free(out);

    /* Python 2.x: info says how the version was chosen; --legacy forces initialize;
     * 1.x falls back. */
    CHECK(cli(&out, NULL, "--stdio", py_cmd, "info", NULL) == 0);
    CHECK(strstr(out, "{\"mcpc\":{\"protocolVersion\":\"2026-07-28\",\"negotiatedBy\":\"discover\"}"));
    free(out);
    CHECK(cli(&out, NULL, "--legacy", "--stdio", py_cmd, "info", NULL) == 0);
    CHECK(strstr(out, "{\"mcpc\":{\"protocolVersion\":\"2025-11-25\",\"negotiatedBy\":\"initialize\"}"));
    free(out);
    CHECK(cli(&out, NULL, "--stdio", py1_cmd, "call", "add", "{\"a\":2,\"b\":3}", NULL) == 0);
    CHECK(strstr(out, "\"structuredContent\":{\"a\":2,\"b\":3,\"sum\":5}"));
    free(out);
    /* The timeout covers the connect too: server-everything starts fast, so that it
     * is the call that times out. */
    CHECK(cli(&out, NULL, "--timeout", "3000", "--stdio", ev_cmd, "call", "trigger-long-running-operation",
              "{\"duration\":20,\"steps\":2}", NULL) == 4);
    CHECK(strstr(cli_err, "tools/call \"trigger-long-running-operation\": timed out after"));
    free(out);
    /* Ctrl-C cancels the call in flight: exit 5, at once. The tool announces itself
     * on stderr, which --stderr lets through. */
    CHECK(cli(&out, "sleep started", "--stderr", "--stdio", py_cmd, "call", "sleep", "{\"seconds\":20}", NULL) == 5);
    CHECK(strstr(cli_err, "tools/call \"sleep\": cancelled"));
    CHECK(strstr(cli_err, "sleep interrupted"));
    free(out);

    /* server-everything over HTTP: structured content. */
    struct server s;
    if (everything_http_start(&s, 0) == 0) {
        CHECK(cli(&out, NULL, "--url", s.url, "call", "get-structured-content", "{\"location\":\"Los Angeles\"}", NULL) ==
              0);
        CHECK(strstr(out, "\"structuredContent\":{\"temperature\":"));
        free(out);
        server_stop(&s);
    } else {
        CHECK(0);
    }

    /* HTTPS: trusted with --cacert, refused (exit 3) without. */
    const char *args[] = {"--certfile", cert, "--keyfile", key, NULL};
    if (py_http_start(&s, "MCPC_PEERS_PY", 0, args) == 0) {
        CHECK(cli(&out, NULL, "--cacert", ca, "--url", s.url, "call", "add", "{\"a\":20,\"b\":22}", NULL) == 0);
        CHECK(strstr(out, "\"sum\":42"));
        free(out);
        CHECK(cli(&out, NULL, "--url", s.url, "tools", NULL) == 3);
        CHECK(strstr(cli_err, "MCPC_ERR_TLS"));
        free(out);
        server_stop(&s);
    } else {
        CHECK(0);
    }
    free(cli_err);
    cli_err = NULL;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    peers_tmpdir_make("peers-test");
    double t0 = now_ms();
    RUN_TIMED(test_everything_stdio);
    RUN_TIMED(test_everything_http);
    RUN_TIMED(test_everything_input);
    RUN_TIMED(test_everything_http_unknown_session_400);
    RUN_TIMED(test_everything_http_complete_reply_not_resumed);
    RUN_TIMED(test_everything_http_standalone_stream);
    RUN_TIMED(test_py2_stdio_modern);
    RUN_TIMED(test_py2_stdio_legacy);
    RUN_TIMED(test_py2_stdio_pages);
    RUN_TIMED(test_py2_http_modern);
    RUN_TIMED(test_py2_http_legacy);
    RUN_TIMED(test_py2_http_session_expired_404);
    RUN_TIMED(test_py2_https);
    RUN_TIMED(test_py2_http2);
    RUN_TIMED(test_py2_http2_fallback);
    RUN_TIMED(test_py2_http_stateless);
    RUN_TIMED(test_py2_http_json_response);
    RUN_TIMED(test_py1_stdio);
    RUN_TIMED(test_py1_stdio_stderr_flood);
    RUN_TIMED(test_py1_http);
    RUN_TIMED(test_py1_http_session_expired_404);
    RUN_TIMED(test_py1_http_sse);
    RUN_TIMED(test_everything_sse);
    RUN_TIMED(test_py1_seam_cancel_error_reply);
    RUN_TIMED(test_cli);

    fprintf(stderr, "peer tests took %.1f s\n", (now_ms() - t0) / 1000);
    peers_tmpdir_done();
    return harness_finish();
}
