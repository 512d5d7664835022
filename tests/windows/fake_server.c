/*
 * fake_server.c - a small MCP server for the Windows tests, built with mingw-w64
 * and run under Wine (or Windows). It speaks line-delimited JSON-RPC over stdio,
 * or Streamable HTTP on 127.0.0.1 (POST /mcp answered with JSON), and offers:
 *
 *   tools: echo {text}      its text back
 *          slow {ms, text}  the same, after ms milliseconds (other requests are
 *                           answered meanwhile: for cancel and close-in-flight tests)
 *          argv {}          its own command-line arguments, one text item each
 *                           (argv[1..], as the C runtime split them: the quoting test)
 *          fail {}          an error result (isError: true)
 *          exit {code}      answers, then exits with code (the server "dies")
 *          env {text}       the value of environment variable text ("" when unset)
 *          cwd {}           its working directory
 *          stderr {text}    writes text and a newline to stderr, answers "ok"
 *          ask {text}       asks the client for a name (elicitation/create, message
 *                           text) and answers with the client's reply, as JSON text
 *
 *   --pid-file=FILE          writes its process id to FILE at start
 *   --spawn-grandchild=FILE  starts a copy of itself that writes its process id to
 *                            FILE and sleeps until killed (the job-object test)
 *   --ignore-stdin-close     keeps running after stdin reaches its end
 *   --print=TEXT, --sleep=MS, --exit=CODE
 *                            in the order given, before serving: write TEXT to stdout,
 *                            sleep, exit (a stand-in for other commands mcpc runs)
 *   --log=FILE               appends the method of each request and notification it
 *                            gets to FILE, as it gets it
 *   --http=PORTFILE          serves HTTP on 127.0.0.1 at a port the system picks,
 *                            written to PORTFILE; never any other address
 *
 * Negotiation: server/discover gets -32601 (an older server), so the client falls
 * back to initialize, which is answered with the version asked for when this server
 * knows it, else 2025-06-18.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "bench_buf.h"
#include "json_lite.h"

static CRITICAL_SECTION g_out_lock; /* stdout lines are written whole, one at a time */
static HANDLE g_stdout;
static int g_argc;
static char **g_argv; /* UTF-8 copies of the wide arguments */
static const char *g_log; /* --log: where the methods received are noted */
static char g_asking[64];  /* the id of the ask call waiting for its elicitation, or "" */

static void die(const char *what)
{
    fprintf(stderr, "fake_server: %s (error %lu)\n", what, (unsigned long)GetLastError());
    exit(70);
}

static char *utf8_of(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    char *s = malloc(n > 0 ? (size_t)n : 1);
    if (s == NULL)
        die("out of memory");
    if (n <= 0)
        s[0] = '\0';
    else
        WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    return s;
}

static void write_file_text(const char *path, const char *text)
{
    /* Written to a temporary name and renamed, so a reader never sees half of it. */
    char tmp[MAX_PATH + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL)
        die("cannot write a marker file");
    fputs(text, f);
    fclose(f);
    if (!MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING))
        die("cannot rename a marker file");
}

static void write_pid(const char *path)
{
    char pid[32];
    snprintf(pid, sizeof pid, "%lu\n", (unsigned long)GetCurrentProcessId());
    write_file_text(path, pid);
}

/* ---------------------------------------------------------------------------- */
/* Messages                                                                      */
/* ---------------------------------------------------------------------------- */

static void put_s(buf_t *o, const char *s) { buf_put(o, s, strlen(s)); }
static void put_span(buf_t *o, jl_span v) { buf_put(o, v.s, (size_t)(v.e - v.s)); }

static void put_json_string(buf_t *o, const char *s, size_t len)
{
    buf_reserve(o, len * 6 + 2);
    o->p[o->len++] = '"';
    o->len += jl_escape(s, len, o->p + o->len);
    o->p[o->len++] = '"';
}

static void put_head(buf_t *o, jl_span id)
{
    put_s(o, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_span(o, id);
}

static void put_error(buf_t *o, jl_span id, int code, const char *msg)
{
    put_head(o, id);
    char tail[256];
    snprintf(tail, sizeof tail, ",\"error\":{\"code\":%d,\"message\":\"%s\"}}", code, msg);
    put_s(o, tail);
}

static void put_text_result(buf_t *o, jl_span id, jl_span text, int is_error)
{
    put_head(o, id);
    put_s(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
    put_span(o, text);
    put_s(o, is_error ? "}],\"isError\":true}}" : "}],\"isError\":false}}");
}

static const char TOOLS[] =
    "{\"tools\":["
    "{\"name\":\"echo\",\"description\":\"Returns its text.\",\"inputSchema\":{\"type\":\"object\","
    "\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}},"
    "{\"name\":\"slow\",\"description\":\"Returns its text after ms milliseconds.\",\"inputSchema\":"
    "{\"type\":\"object\",\"properties\":{\"ms\":{\"type\":\"integer\"},\"text\":{\"type\":\"string\"}}}},"
    "{\"name\":\"argv\",\"description\":\"Returns the server's command-line arguments.\","
    "\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"fail\",\"description\":\"Always an error result.\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"exit\",\"description\":\"Answers, then exits.\",\"inputSchema\":{\"type\":\"object\","
    "\"properties\":{\"code\":{\"type\":\"integer\"}}}},"
    "{\"name\":\"env\",\"description\":\"An environment variable.\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"cwd\",\"description\":\"The working directory.\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"stderr\",\"description\":\"Writes to stderr.\",\"inputSchema\":{\"type\":\"object\"}},"
    "{\"name\":\"ask\",\"description\":\"Asks the client for a name.\",\"inputSchema\":{\"type\":\"object\"}}"
    "]}";

/* What handling one message asks of the transport besides its reply. */
struct reply {
    buf_t out;        /* the response, no framing; empty for none */
    uint64_t delay_ms; /* send it after this long (the slow tool) */
    int exit_code;    /* >= 0: exit with it once the response went out */
};

static void handle(const char *s, const char *e, struct reply *r)
{
    static const char *const top_keys[] = {"jsonrpc", "id", "method", "params"};
    jl_span top[4];
    r->delay_ms = 0;
    r->exit_code = -1;
    const char *p = jl_ws(s, e);
    const char *end = jl_object(p, e, top_keys, 4, top);
    jl_span id = top[1], method = top[2], params = top[3];
    if (end == NULL || jl_ws(end, e) != e || !jl_eq(top[0], "2.0")) {
        put_s(&r->out, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"parse error\"}}");
        return;
    }
    if (method.s && g_log != NULL) {
        FILE *f = fopen(g_log, "ab");
        if (f != NULL) {
            fprintf(f, "%.*s\n", (int)(method.e - method.s), method.s);
            fclose(f);
        }
    }
    if (!method.s && jl_eq(id, "ask") && g_asking[0] != '\0') {
        /* The client's answer to the elicitation: the ask call's result. */
        static const char *const rkeys[] = {"result", "error"};
        jl_span rv[2];
        jl_object_trusted(p, end, rkeys, 2, rv);
        jl_span answer = rv[0].s ? rv[0] : rv[1];
        jl_span ask_id = {g_asking, g_asking + strlen(g_asking)};
        put_head(&r->out, ask_id);
        put_s(&r->out, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
        if (answer.s)
            put_json_string(&r->out, answer.s, (size_t)(answer.e - answer.s));
        else
            put_s(&r->out, "\"\"");
        put_s(&r->out, "}],\"isError\":false}}");
        g_asking[0] = '\0';
        return;
    }
    if (!method.s || !id.s)
        return; /* a response or a notification (initialized, cancelled): no answer */
    if (jl_eq(method, "initialize")) {
        static const char *const pkeys[] = {"protocolVersion"};
        static const char *const known[] = {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
        jl_span ver = {0};
        if (params.s && *params.s == '{')
            jl_object_trusted(params.s, params.e, pkeys, 1, &ver);
        const char *use = "2025-06-18";
        for (size_t i = 0; i < sizeof known / sizeof *known; i++)
            if (jl_eq(ver, known[i]))
                use = known[i];
        put_head(&r->out, id);
        put_s(&r->out, ",\"result\":{\"protocolVersion\":\"");
        put_s(&r->out, use);
        put_s(&r->out, "\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"fake_server\","
                       "\"version\":\"1.0.0\"}}}");
        return;
    }
    if (jl_eq(method, "ping")) {
        put_head(&r->out, id);
        put_s(&r->out, ",\"result\":{}}");
        return;
    }
    if (jl_eq(method, "tools/list")) {
        put_head(&r->out, id);
        put_s(&r->out, ",\"result\":");
        put_s(&r->out, TOOLS);
        put_s(&r->out, "}");
        return;
    }
    if (!jl_eq(method, "tools/call")) {
        put_error(&r->out, id, -32601, "method not found");
        return;
    }
    static const char *const pkeys[] = {"name", "arguments"};
    static const char *const akeys[] = {"text", "ms", "code"};
    jl_span pv[2], av[3] = {{0}};
    if (!params.s || !jl_object_trusted(params.s, params.e, pkeys, 2, pv) || !jl_is_string(pv[0])) {
        put_error(&r->out, id, -32602, "tools/call needs params.name");
        return;
    }
    if (pv[1].s && *pv[1].s == '{')
        jl_object_trusted(pv[1].s, pv[1].e, akeys, 3, av);
    uint64_t n = 0;
    if (jl_eq(pv[0], "echo") || jl_eq(pv[0], "slow")) {
        if (!jl_is_string(av[0])) {
            static const char none[] = "\"\"";
            av[0].s = none;
            av[0].e = none + 2;
        }
        if (jl_eq(pv[0], "slow"))
            r->delay_ms = jl_u64(av[1], &n) ? n : 1000;
        put_text_result(&r->out, id, av[0], 0);
    } else if (jl_eq(pv[0], "argv")) {
        put_head(&r->out, id);
        put_s(&r->out, ",\"result\":{\"content\":[");
        for (int i = 1; i < g_argc; i++) {
            put_s(&r->out, i > 1 ? ",{\"type\":\"text\",\"text\":" : "{\"type\":\"text\",\"text\":");
            put_json_string(&r->out, g_argv[i], strlen(g_argv[i]));
            put_s(&r->out, "}");
        }
        put_s(&r->out, "],\"isError\":false}}");
    } else if (jl_eq(pv[0], "fail")) {
        static const char text[] = "\"the fail tool always fails\"";
        put_text_result(&r->out, id, (jl_span){text, text + sizeof text - 1}, 1);
    } else if (jl_eq(pv[0], "exit")) {
        static const char text[] = "\"exiting\"";
        r->exit_code = jl_u64(av[2], &n) ? (int)n : 0;
        put_text_result(&r->out, id, (jl_span){text, text + sizeof text - 1}, 0);
    } else if (jl_eq(pv[0], "ask") && (size_t)(id.e - id.s) < sizeof g_asking) {
        memcpy(g_asking, id.s, (size_t)(id.e - id.s));
        g_asking[id.e - id.s] = '\0';
        put_s(&r->out, "{\"jsonrpc\":\"2.0\",\"id\":\"ask\",\"method\":\"elicitation/create\",\"params\":"
                       "{\"message\":");
        if (jl_is_string(av[0]))
            put_span(&r->out, av[0]);
        else
            put_s(&r->out, "\"Who are you?\"");
        put_s(&r->out, ",\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"name\":"
                       "{\"type\":\"string\",\"title\":\"Name\"}},\"required\":[\"name\"]}}}");
    } else if (jl_eq(pv[0], "env") || jl_eq(pv[0], "cwd") || jl_eq(pv[0], "stderr")) {
        char name[256] = "", value[32768] = "";
        if (jl_is_string(av[0]) && (size_t)(av[0].e - av[0].s) < sizeof name)
            name[jl_decode(av[0], name)] = '\0';
        if (jl_eq(pv[0], "env")) {
            DWORD n = GetEnvironmentVariableA(name, value, sizeof value);
            if (n == 0 || n >= sizeof value)
                value[0] = '\0';
        } else if (jl_eq(pv[0], "cwd")) {
            DWORD n = GetCurrentDirectoryA(sizeof value, value);
            if (n == 0 || n >= sizeof value)
                value[0] = '\0';
        } else {
            fprintf(stderr, "%s\n", name);
            fflush(stderr);
            strcpy(value, "ok");
        }
        put_head(&r->out, id);
        put_s(&r->out, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":");
        put_json_string(&r->out, value, strlen(value));
        put_s(&r->out, "}],\"isError\":false}}");
    } else {
        put_error(&r->out, id, -32602, "unknown tool");
    }
}

/* ---------------------------------------------------------------------------- */
/* stdio                                                                         */
/* ---------------------------------------------------------------------------- */

static void send_line(const char *p, size_t len)
{
    EnterCriticalSection(&g_out_lock);
    DWORD w;
    while (len > 0 && WriteFile(g_stdout, p, (DWORD)len, &w, NULL) && w > 0) {
        p += w;
        len -= w;
    }
    WriteFile(g_stdout, "\n", 1, &w, NULL);
    LeaveCriticalSection(&g_out_lock);
}

static DWORD WINAPI delayed_send(void *arg)
{
    struct reply *r = arg;
    Sleep((DWORD)r->delay_ms);
    send_line(r->out.p, r->out.len);
    buf_free(&r->out);
    free(r);
    return 0;
}

static void serve_stdio(int ignore_stdin_close)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    buf_t b = {0};
    for (;;) {
        buf_reserve(&b, 65536);
        DWORD got = 0;
        if (!ReadFile(in, b.p + b.len, (DWORD)(b.cap - b.len), &got, NULL) || got == 0)
            break;
        b.len += got;
        for (;;) {
            char *start = b.p + b.off, *nl = memchr(start, '\n', b.len - b.off);
            if (nl == NULL)
                break;
            char *line_end = nl > start && nl[-1] == '\r' ? nl - 1 : nl;
            if (line_end > start) {
                struct reply *r = calloc(1, sizeof *r);
                if (r == NULL)
                    die("out of memory");
                handle(start, line_end, r);
                if (r->delay_ms > 0) {
                    HANDLE t = CreateThread(NULL, 0, delayed_send, r, 0, NULL);
                    if (t == NULL)
                        die("CreateThread");
                    CloseHandle(t);
                    r = NULL;
                } else {
                    if (r->out.len > 0)
                        send_line(r->out.p, r->out.len);
                    if (r->exit_code >= 0)
                        ExitProcess((UINT)r->exit_code);
                    buf_free(&r->out);
                    free(r);
                }
            }
            buf_consume(&b, (size_t)(nl + 1 - start));
        }
    }
    if (ignore_stdin_close)
        for (;;)
            Sleep(INFINITE); /* only TerminateProcess (or the job) ends it */
}

/* ---------------------------------------------------------------------------- */
/* HTTP on 127.0.0.1                                                             */
/* ---------------------------------------------------------------------------- */

static void send_all(SOCKET c, const char *p, size_t len)
{
    while (len > 0) {
        int w = send(c, p, len > 0x40000000 ? 0x40000000 : (int)len, 0);
        if (w <= 0)
            return;
        p += w;
        len -= (size_t)w;
    }
}

static void respond(SOCKET c, int status, const char *reason, const char *body, size_t len)
{
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\n%sContent-Length: %u\r\n\r\n", status, reason,
                     len > 0 ? "Content-Type: application/json\r\n" : "", (unsigned)len);
    send_all(c, head, (size_t)n);
    send_all(c, body, len);
}

/* Reads more of the connection into b (kept NUL-terminated); false at its end. */
static int recv_more(SOCKET c, buf_t *b)
{
    buf_reserve(b, 65537);
    int got = recv(c, b->p + b->len, (int)(b->cap - b->len - 1), 0);
    if (got <= 0)
        return 0;
    b->len += (size_t)got;
    b->p[b->len] = '\0';
    return 1;
}

/* One connection, kept alive for as many requests as the client sends. */
static DWORD WINAPI http_conn(void *arg)
{
    SOCKET c = (SOCKET)(uintptr_t)arg;
    buf_t b = {0};
    for (;;) {
        char *hend;
        while ((hend = b.len > b.off ? strstr(b.p + b.off, "\r\n\r\n") : NULL) == NULL)
            if (!recv_more(c, &b))
                goto done;
        char *req = b.p + b.off;
        size_t body_len = 0;
        for (char *h = strstr(req, "\r\n"); h && h < hend; h = strstr(h + 2, "\r\n"))
            if (_strnicmp(h + 2, "Content-Length:", 15) == 0)
                body_len = strtoul(h + 17, NULL, 10);
        size_t head_len = (size_t)(hend + 4 - req);
        while (b.len - b.off < head_len + body_len)
            if (!recv_more(c, &b))
                goto done;
        req = b.p + b.off; /* the buffer may have moved */
        if (strncmp(req, "POST /mcp ", 10) != 0) {
            respond(c, 405, "Method Not Allowed", NULL, 0);
        } else {
            struct reply r = {0};
            handle(req + head_len, req + head_len + body_len, &r);
            if (r.delay_ms > 0)
                Sleep((DWORD)r.delay_ms);
            if (r.out.len > 0)
                respond(c, 200, "OK", r.out.p, r.out.len);
            else
                respond(c, 202, "Accepted", NULL, 0);
            buf_free(&r.out);
            if (r.exit_code >= 0)
                ExitProcess((UINT)r.exit_code);
        }
        buf_consume(&b, head_len + body_len);
    }
done:
    closesocket(c);
    buf_free(&b);
    return 0;
}

static void serve_http(const char *port_file)
{
    WSADATA wsa;
    if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0)
        die("WSAStartup");
    SOCKET l = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    if (l == INVALID_SOCKET)
        die("socket");
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only, never any other address */
    int len = sizeof a;
    if (bind(l, (struct sockaddr *)&a, sizeof a) != 0 || listen(l, 16) != 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) != 0)
        die("cannot listen on 127.0.0.1");
    char port[16];
    snprintf(port, sizeof port, "%u\n", (unsigned)ntohs(a.sin_port));
    write_file_text(port_file, port);
    for (;;) {
        SOCKET c = accept(l, NULL, NULL);
        if (c == INVALID_SOCKET)
            continue;
        HANDLE t = CreateThread(NULL, 0, http_conn, (void *)(uintptr_t)c, 0, NULL);
        if (t == NULL)
            closesocket(c);
        else
            CloseHandle(t);
    }
}

/* ---------------------------------------------------------------------------- */
/* The grandchild                                                                */
/* ---------------------------------------------------------------------------- */

static void spawn_grandchild(const char *marker)
{
    wchar_t self[MAX_PATH];
    if (GetModuleFileNameW(NULL, self, MAX_PATH) == 0)
        die("GetModuleFileNameW");
    wchar_t wmarker[MAX_PATH];
    MultiByteToWideChar(CP_UTF8, 0, marker, -1, wmarker, MAX_PATH);
    wchar_t cmd[3 * MAX_PATH];
    swprintf(cmd, sizeof cmd / sizeof *cmd, L"\"%ls\" --grandchild=\"%ls\"", self, wmarker);
    STARTUPINFOW si;
    PROCESS_INFORMATION pi;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    /* No inherited handles: the grandchild holds none of the client's pipes, so only
     * the job object (or nothing) ends it. */
    if (!CreateProcessW(self, cmd, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi))
        die("cannot start the grandchild");
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
}

int wmain(int argc, wchar_t **wargv)
{
    g_argc = argc;
    g_argv = calloc((size_t)argc + 1, sizeof *g_argv);
    if (g_argv == NULL)
        die("out of memory");
    for (int i = 0; i < argc; i++)
        g_argv[i] = utf8_of(wargv[i]);
    InitializeCriticalSection(&g_out_lock);
    g_stdout = GetStdHandle(STD_OUTPUT_HANDLE);

    int ignore_stdin_close = 0;
    const char *http_port_file = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = g_argv[i];
        if (strncmp(a, "--grandchild=", 13) == 0) {
            write_pid(a + 13);
            for (;;)
                Sleep(INFINITE);
        } else if (strncmp(a, "--pid-file=", 11) == 0) {
            write_pid(a + 11);
        } else if (strncmp(a, "--spawn-grandchild=", 19) == 0) {
            spawn_grandchild(a + 19);
        } else if (strcmp(a, "--ignore-stdin-close") == 0) {
            ignore_stdin_close = 1;
        } else if (strncmp(a, "--print=", 8) == 0) {
            DWORD w;
            WriteFile(g_stdout, a + 8, (DWORD)strlen(a + 8), &w, NULL);
        } else if (strncmp(a, "--sleep=", 8) == 0) {
            Sleep((DWORD)strtoul(a + 8, NULL, 10));
        } else if (strncmp(a, "--exit=", 7) == 0) {
            ExitProcess((UINT)strtoul(a + 7, NULL, 10));
        } else if (strncmp(a, "--log=", 6) == 0) {
            g_log = a + 6;
        } else if (strncmp(a, "--http=", 7) == 0) {
            http_port_file = a + 7;
        }
        /* Anything else is kept for the argv tool and otherwise ignored. */
    }
    if (http_port_file != NULL)
        serve_http(http_port_file);
    else
        serve_stdio(ignore_stdin_close);
    return 0;
}
