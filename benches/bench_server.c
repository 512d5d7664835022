/* bench_server: a fast MCP server for the benchmarks, single process, single thread.
 *
 *   bench_server stdio [--tools N] [--page-size N] [--start-delay MS]
 *       line-delimited JSON-RPC on stdin/stdout; exits when stdin closes.
 *   bench_server http --port P [--sse] [--tools N] [--page-size N] [--start-delay MS]
 *       Streamable HTTP on 127.0.0.1:P (0: any free port), HTTP/1.1 keep-alive (and
 *       pipelining), many connections at once (epoll). Prints "PORT n" when listening,
 *       exits when its stdin closes. Replies are JSON (Content-Length), or with --sse
 *       an SSE stream in chunked encoding holding one `message` event.
 *
 * Methods: initialize (echoes the requested protocolVersion; over HTTP gives an
 * Mcp-Session-Id, which every later POST must carry, else 400), notifications (202
 * over HTTP, nothing over stdio), ping, tools/list (BENCH_TOOLS or --tools tools,
 * default 1000, in pages of 50 or --page-size with cursors), tools/call of `echo` (returns its
 * `text` argument as one text block, re-emitted with its JSON escaping as received,
 * which is a correct encoding of the same string) and `stats` (this process's CPU
 * seconds so far, so a client can show the server is not the bottleneck), and
 * resources/read of `bench://text` (BENCH_READ_BYTES of text, default 1 MiB, the
 * echo's kind of text) and `bench://blob` (the same bytes in base64), both made
 * once from benches/bench_data.h. Anything else with an id gets a JSON-RPC error.
 * Requests are validated as JSON while parsed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_buf.h"
#include "bench_data.h"
#include "json_lite.h"


static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_server: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void buf_puts(buf_t *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_printf(buf_t *b, const char *fmt, ...) {
    va_list ap;
    buf_reserve(b, 256);
    va_start(ap, fmt);
    int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) die("vsnprintf");
    if ((size_t)n >= b->cap - b->len) {
        buf_reserve(b, (size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
    }
    b->len += (size_t)n;
}

/* ---- the MCP part ---- */

static int n_tools = 1000, page_size = 50;
static char **pages;      /* pages[i]: the JSON of `tools` entries i*page_size.. (no brackets) */
static int n_pages;
static unsigned long session_counter;

static void build_pages(void) {
    n_pages = (n_tools + page_size - 1) / page_size;
    pages = calloc((size_t)(n_pages ? n_pages : 1), sizeof *pages);
    for (int pg = 0; pg < n_pages; pg++) {
        buf_t b = {0};
        for (int i = pg * page_size; i < n_tools && i < (pg + 1) * page_size; i++) {
            if (i > pg * page_size) buf_puts(&b, ",");
            if (i == 0)
                buf_puts(&b, "{\"name\":\"echo\",\"description\":\"Returns its text argument.\","
                             "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":"
                             "{\"type\":\"string\"}},\"required\":[\"text\"]}}");
            else if (i == 1)
                buf_puts(&b, "{\"name\":\"stats\",\"description\":\"The server's CPU seconds.\","
                             "\"inputSchema\":{\"type\":\"object\",\"properties\":{}}}");
            else
                buf_printf(&b,
                           "{\"name\":\"tool_%04d\",\"description\":\"Benchmark tool number %d, "
                           "which does nothing useful.\",\"inputSchema\":{\"type\":\"object\","
                           "\"properties\":{\"x\":{\"type\":\"integer\",\"description\":\"any "
                           "number\"}}}}",
                           i, i);
        }
        buf_put(&b, "", 1);
        pages[pg] = b.p;
    }
}

static double cpu_seconds(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

/* The results of resources/read, made on first use: {"contents":[...]} */
static buf_t read_text, read_blob;

static size_t read_bytes(void) {
    const char *env = getenv("BENCH_READ_BYTES");
    return env && *env ? (size_t)strtoul(env, NULL, 10) : (size_t)1 << 20;
}

static const buf_t *read_result(int blob) {
    buf_t *b = blob ? &read_blob : &read_text;
    if (b->len) return b;
    size_t n = read_bytes();
    char *raw = malloc(n + 1);
    if (!raw) die("out of memory");
    bench_text_fill(raw, n);
    if (blob) {
        buf_puts(b, "{\"contents\":[{\"uri\":\"bench://blob\",\"mimeType\":"
                    "\"application/octet-stream\",\"blob\":\"");
        buf_reserve(b, 4 * ((n + 2) / 3) + 8);
        b->len += bench_b64_encode((unsigned char *)raw, n, b->p + b->len);
    } else {
        buf_puts(b, "{\"contents\":[{\"uri\":\"bench://text\",\"mimeType\":\"text/plain\","
                    "\"text\":\"");
        buf_reserve(b, 6 * n + 8);
        b->len += jl_escape(raw, n, b->p + b->len);
    }
    buf_puts(b, "\"}]}");
    free(raw);
    return b;
}

static void put_error(buf_t *o, jl_span id, int code, const char *msg) {
    buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
    buf_put(o, id.s, (size_t)(id.e - id.s));
    buf_printf(o, ",\"error\":{\"code\":%d,\"message\":\"%s\"}}", code, msg);
}

typedef enum { R_NONE, R_REPLY, R_INIT, R_BAD } reply_kind;

/* Handles one JSON-RPC message (s..e). Appends the response JSON (no framing) to o
 * and says what it was. */
static reply_kind handle_message(const char *s, const char *e, buf_t *o) {
    static const char *const top_keys[] = {"jsonrpc", "id", "method", "params"};
    jl_span top[4];
    const char *p = jl_ws(s, e);
    const char *end = jl_object(p, e, top_keys, 4, top);
    if (!end || jl_ws(end, e) != e) return R_BAD;
    if (!jl_eq(top[0], "2.0")) return R_BAD;
    jl_span id = top[1], method = top[2], params = top[3];
    if (!method.s) return R_NONE; /* a response to a server request: none are sent */
    if (!jl_is_string(method)) return R_BAD;
    if (!id.s) return R_NONE; /* a notification: initialized, cancelled, ... */

    if (jl_eq(method, "tools/call")) {
        static const char *const pkeys[] = {"name", "arguments"};
        jl_span pv[2];
        if (!params.s || !jl_object_trusted(params.s, params.e, pkeys, 2, pv) || !jl_is_string(pv[0])) {
            put_error(o, id, -32602, "tools/call needs params.name");
            return R_REPLY;
        }
        if (jl_eq(pv[0], "echo")) {
            static const char *const akeys[] = {"text"};
            jl_span text;
            if (!pv[1].s || *pv[1].s != '{' || !jl_object_trusted(pv[1].s, pv[1].e, akeys, 1, &text) ||
                !jl_is_string(text)) {
                put_error(o, id, -32602, "echo needs a string argument text");
                return R_REPLY;
            }
            size_t idl = (size_t)(id.e - id.s), tl = (size_t)(text.e - text.s);
            static const char a[] = "{\"jsonrpc\":\"2.0\",\"id\":";
            static const char b[] = ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":";
            static const char c[] = "}],\"isError\":false}}";
            buf_reserve(o, sizeof a + sizeof b + sizeof c + idl + tl);
            char *d = o->p + o->len;
            memcpy(d, a, sizeof a - 1), d += sizeof a - 1;
            memcpy(d, id.s, idl), d += idl;
            memcpy(d, b, sizeof b - 1), d += sizeof b - 1;
            memcpy(d, text.s, tl), d += tl;
            memcpy(d, c, sizeof c - 1), d += sizeof c - 1;
            o->len = (size_t)(d - o->p);
            return R_REPLY;
        }
        if (jl_eq(pv[0], "stats")) {
            buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
            buf_put(o, id.s, (size_t)(id.e - id.s));
            buf_printf(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"%.6f\"}]}}",
                       cpu_seconds());
            return R_REPLY;
        }
        buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
        buf_put(o, id.s, (size_t)(id.e - id.s));
        buf_puts(o, ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"this benchmark tool "
                    "does nothing\"}],\"isError\":true}}");
        return R_REPLY;
    }
    if (jl_eq(method, "tools/list")) {
        int start = 0;
        static const char *const pkeys[] = {"cursor"};
        jl_span cur = {0};
        if (params.s && *params.s == '{' && jl_object_trusted(params.s, params.e, pkeys, 1, &cur) &&
            cur.s && *cur.s == '"') {
            /* cursors are "p<page>" */
            if (cur.e - cur.s < 4 || cur.s[1] != 'p') {
                put_error(o, id, -32602, "bad cursor");
                return R_REPLY;
            }
            start = atoi(cur.s + 2);
            if (start <= 0 || start >= n_pages) {
                put_error(o, id, -32602, "bad cursor");
                return R_REPLY;
            }
        }
        buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
        buf_put(o, id.s, (size_t)(id.e - id.s));
        buf_puts(o, ",\"result\":{\"tools\":[");
        if (n_pages > 0) buf_puts(o, pages[start]);
        if (start + 1 < n_pages)
            buf_printf(o, "],\"nextCursor\":\"p%d\"}}", start + 1);
        else
            buf_puts(o, "]}}");
        return R_REPLY;
    }
    if (jl_eq(method, "initialize")) {
        static const char *const pkeys[] = {"protocolVersion"};
        jl_span ver = {0};
        if (params.s && *params.s == '{') jl_object_trusted(params.s, params.e, pkeys, 1, &ver);
        buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
        buf_put(o, id.s, (size_t)(id.e - id.s));
        buf_puts(o, ",\"result\":{\"protocolVersion\":");
        if (jl_is_string(ver))
            buf_put(o, ver.s, (size_t)(ver.e - ver.s));
        else
            buf_puts(o, "\"2025-11-25\"");
        buf_puts(o, ",\"capabilities\":{\"tools\":{\"listChanged\":false},\"resources\":{}},\"serverInfo\":"
                    "{\"name\":\"bench_server\",\"version\":\"1.0.0\"}}}");
        return R_INIT;
    }
    if (jl_eq(method, "resources/read")) {
        static const char *const pkeys[] = {"uri"};
        jl_span uri = {0};
        int blob = 0;
        if (params.s && *params.s == '{') jl_object_trusted(params.s, params.e, pkeys, 1, &uri);
        if (jl_eq(uri, "bench://blob"))
            blob = 1;
        else if (!jl_eq(uri, "bench://text")) {
            put_error(o, id, -32002, "resource not found");
            return R_REPLY;
        }
        const buf_t *r = read_result(blob);
        buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
        buf_put(o, id.s, (size_t)(id.e - id.s));
        buf_puts(o, ",\"result\":");
        buf_put(o, r->p, r->len);
        buf_puts(o, "}");
        return R_REPLY;
    }
    if (jl_eq(method, "ping")) {
        buf_puts(o, "{\"jsonrpc\":\"2.0\",\"id\":");
        buf_put(o, id.s, (size_t)(id.e - id.s));
        buf_puts(o, ",\"result\":{}}");
        return R_REPLY;
    }
    put_error(o, id, -32601, "method not found");
    return R_REPLY;
}

/* ---- stdio mode ---- */

static int write_some(int fd, buf_t *o) {
    while (o->off < o->len) {
        ssize_t n = write(fd, o->p + o->off, o->len - o->off);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return 0;
            return -1;
        }
        buf_consume(o, (size_t)n);
    }
    return 0;
}

static int run_stdio(void) {
    buf_t in = {0}, out = {0};
    fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    fcntl(1, F_SETFL, fcntl(1, F_GETFL) | O_NONBLOCK);
    size_t scanned = 0; /* bytes of `in` (past off) known to hold no newline */
    int eof = 0;
    for (;;) {
        /* Read while output is not piling up (a client that writes without reading
         * must not make us buffer without bound). */
        int want_in = !eof && out.len - out.off < (64u << 20);
        struct pollfd pf[2] = {{0, want_in ? POLLIN : 0, 0},
                               {1, out.len > out.off ? POLLOUT : 0, 0}};
        if (!want_in && out.len == out.off) break;
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR) continue;
            die("poll: %s", strerror(errno));
        }
        if (pf[1].revents & (POLLERR | POLLHUP)) return 0;
        if (pf[1].revents & POLLOUT) {
            if (write_some(1, &out) < 0) return 0;
        }
        if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            for (;;) {
                buf_reserve(&in, 256 * 1024);
                ssize_t n = read(0, in.p + in.len, in.cap - in.len);
                if (n < 0) {
                    if (errno == EINTR) continue;
                    if (errno == EAGAIN) break;
                    eof = 1;
                    break;
                }
                if (n == 0) {
                    eof = 1;
                    break;
                }
                in.len += (size_t)n;
                if (in.cap - in.len > 0) break; /* short read: drained for now */
            }
            /* Handle every complete line. */
            for (;;) {
                char *base = in.p + in.off;
                size_t avail = in.len - in.off;
                char *nl = memchr(base + scanned, '\n', avail - scanned);
                if (!nl) {
                    scanned = avail;
                    break;
                }
                const char *le = nl;
                if (le > base && le[-1] == '\r') le--;
                if (le > base) {
                    size_t before = out.len;
                    reply_kind k = handle_message(base, le, &out);
                    if (k == R_BAD) {
                        out.len = before;
                        fprintf(stderr, "bench_server: malformed message dropped\n");
                    } else if (out.len > before) {
                        buf_put(&out, "\n", 1);
                    }
                }
                buf_consume(&in, (size_t)(nl + 1 - base));
                scanned = 0;
            }
            if (write_some(1, &out) < 0) return 0;
        }
        if (eof && out.len == out.off) break;
    }
    return 0;
}

/* ---- HTTP mode ---- */

typedef struct {
    int fd;
    buf_t in, out;
    int want_out; /* EPOLLOUT registered */
    int closing;  /* close once out is written */
} conn_t;

static int sse_mode;
static buf_t scratch;

static void respond(conn_t *c, int status, const char *reason, const char *extra_headers,
                    const char *ctype, const char *body, size_t blen) {
    buf_printf(&c->out, "HTTP/1.1 %d %s\r\n%s", status, reason, extra_headers);
    if (ctype && !strcmp(ctype, "text/event-stream")) {
        /* One event, then the end of the stream, in chunked encoding. */
        static const char pre[] = "event: message\ndata: ";
        size_t total = sizeof pre - 1 + blen + 2;
        buf_printf(&c->out,
                   "Content-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n%zx\r\n",
                   total);
        buf_reserve(&c->out, total + 16);
        buf_put(&c->out, pre, sizeof pre - 1);
        buf_put(&c->out, body, blen);
        buf_put(&c->out, "\n\n\r\n0\r\n\r\n", 9);
    } else if (ctype) {
        buf_printf(&c->out, "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n", ctype, blen);
        buf_put(&c->out, body, blen);
    } else {
        buf_printf(&c->out, "Content-Length: %zu\r\n\r\n", blen);
        buf_put(&c->out, body, blen);
    }
}

static const char *find_header(const char *h, const char *he, const char *name, size_t *vlen) {
    size_t nl = strlen(name);
    const char *p = h;
    while (p < he) {
        const char *eol = memmem(p, (size_t)(he - p), "\r\n", 2);
        if (!eol) eol = he;
        if ((size_t)(eol - p) > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
            const char *v = p + nl + 1;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            const char *ve = eol;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t')) ve--;
            *vlen = (size_t)(ve - v);
            return v;
        }
        p = eol + 2;
    }
    return NULL;
}

/* Handles every complete request in c->in. Returns -1 to drop the connection. */
static int http_process(conn_t *c) {
    for (;;) {
        char *base = c->in.p + c->in.off;
        size_t avail = c->in.len - c->in.off;
        if (avail == 0) return 0;
        char *hend = memmem(base, avail, "\r\n\r\n", 4);
        if (!hend) return avail > 65536 ? -1 : 0;
        const char *line_end = memmem(base, (size_t)(hend - base) + 2, "\r\n", 2);
        const char *hs = line_end + 2, *he = hend + 2;
        size_t vlen = 0;
        size_t clen = 0;
        const char *v = find_header(hs, he, "Content-Length", &vlen);
        if (v) clen = strtoull(v, NULL, 10);
        if (find_header(hs, he, "Transfer-Encoding", &vlen)) {
            respond(c, 411, "Length Required", "Connection: close\r\n", NULL, "", 0);
            c->closing = 1;
            return 0;
        }
        size_t hlen = (size_t)(hend + 4 - base);
        if (avail < hlen + clen) {
            buf_reserve(&c->in, hlen + clen - avail);
            return 0;
        }
        const char *body = base + hlen;
        int close_after = 0;
        v = find_header(hs, he, "Connection", &vlen);
        if (v && vlen == 5 && !strncasecmp(v, "close", 5)) close_after = 1;

        if (!strncmp(base, "POST ", 5)) {
            size_t sl = 0;
            const char *sid = find_header(hs, he, "Mcp-Session-Id", &sl);
            scratch.len = scratch.off = 0;
            reply_kind k = handle_message(body, body + clen, &scratch);
            if (k == R_BAD) {
                static const char err[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
                                          "-32700,\"message\":\"parse error\"}}";
                respond(c, 400, "Bad Request", "", "application/json", err, sizeof err - 1);
            } else if (k != R_INIT && !sid) {
                static const char err[] = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":"
                                          "-32600,\"message\":\"missing Mcp-Session-Id\"}}";
                respond(c, 400, "Bad Request", "", "application/json", err, sizeof err - 1);
            } else if (k == R_NONE) {
                respond(c, 202, "Accepted", "", NULL, "", 0);
            } else {
                char hdr[96] = "";
                if (k == R_INIT)
                    snprintf(hdr, sizeof hdr, "Mcp-Session-Id: bench-%lu\r\n", ++session_counter);
                respond(c, 200, "OK", hdr, sse_mode ? "text/event-stream" : "application/json",
                        scratch.p, scratch.len);
            }
        } else if (!strncmp(base, "DELETE ", 7)) {
            respond(c, 200, "OK", "", NULL, "", 0);
        } else {
            respond(c, 405, "Method Not Allowed", "Allow: POST, DELETE\r\n", NULL, "", 0);
        }
        buf_consume(&c->in, hlen + clen);
        if (close_after) {
            c->closing = 1;
            return 0;
        }
    }
}

static void conn_close(int ep, conn_t *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    buf_free(&c->in);
    buf_free(&c->out);
    free(c);
}

/* Writes what it can; returns -1 when the connection is done. */
static int conn_flush(int ep, conn_t *c) {
    while (c->out.off < c->out.len) {
        ssize_t n = send(c->fd, c->out.p + c->out.off, c->out.len - c->out.off, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) break;
            return -1;
        }
        buf_consume(&c->out, (size_t)n);
    }
    int pending = c->out.off < c->out.len;
    if (!pending && c->closing) return -1;
    if (pending != c->want_out) {
        struct epoll_event ev = {.events = EPOLLIN | (pending ? EPOLLOUT : 0), .data.ptr = c};
        epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
        c->want_out = pending;
    }
    /* Shrink big buffers once idle so a 16 MiB message does not pin memory. */
    if (!pending && c->out.cap > (4u << 20)) buf_free(&c->out);
    return 0;
}

static int run_http(int port) {
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (ls < 0) die("socket: %s", strerror(errno));
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0) die("bind: %s", strerror(errno));
    if (listen(ls, 4096) < 0) die("listen: %s", strerror(errno));
    socklen_t sl = sizeof sa;
    getsockname(ls, (struct sockaddr *)&sa, &sl);
    printf("PORT %d\n", ntohs(sa.sin_port));
    fflush(stdout);

    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ls, &ev);
    static int stdin_tag;
    ev.data.ptr = &stdin_tag;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev) < 0) {
        /* stdin is a file or /dev/null: no way to tell us to stop but a signal */
    }
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            die("epoll_wait: %s", strerror(errno));
        }
        for (int i = 0; i < n; i++) {
            void *tag = evs[i].data.ptr;
            if (tag == NULL) {
                for (;;) {
                    int fd = accept4(ls, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd < 0) break;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conn_t *c = calloc(1, sizeof *c);
                    c->fd = fd;
                    struct epoll_event cev = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
                }
                continue;
            }
            if (tag == &stdin_tag) {
                char tmp[256];
                ssize_t r = read(0, tmp, sizeof tmp);
                if (r <= 0) return 0; /* stdin closed: stop */
                continue;
            }
            conn_t *c = tag;
            if (evs[i].events & EPOLLOUT) {
                if (conn_flush(ep, c) < 0) {
                    conn_close(ep, c);
                    continue;
                }
            }
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                int dead = 0;
                for (;;) {
                    buf_reserve(&c->in, 64 * 1024);
                    ssize_t r = recv(c->fd, c->in.p + c->in.len, c->in.cap - c->in.len, 0);
                    if (r < 0) {
                        if (errno == EINTR) continue;
                        if (errno != EAGAIN) dead = 1;
                        break;
                    }
                    if (r == 0) {
                        dead = 1;
                        break;
                    }
                    c->in.len += (size_t)r;
                    if (c->in.len < c->in.cap) break;
                }
                if (!c->closing && http_process(c) < 0) dead = 1;
                if (!dead && conn_flush(ep, c) < 0) dead = 1;
                if (dead) {
                    conn_close(ep, c);
                    continue;
                }
                if (c->in.len == 0 && c->in.cap > (4u << 20)) buf_free(&c->in);
            }
        }
    }
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    const char *env = getenv("BENCH_TOOLS");
    if (env) n_tools = atoi(env);
    if (argc < 2) die("usage: bench_server stdio|http [--port P] [--sse] [--tools N] [--page-size N] [--start-delay MS]");
    int port = 0, start_delay_ms = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--sse"))
            sse_mode = 1;
        else if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--tools") && i + 1 < argc)
            n_tools = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--page-size") && i + 1 < argc)
            page_size = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--start-delay") && i + 1 < argc)
            start_delay_ms = atoi(argv[++i]);
        else
            die("unknown argument %s", argv[i]);
    }
    if (n_tools < 0) n_tools = 0;
    if (page_size < 1) die("--page-size must be at least 1");
    if (start_delay_ms > 0) {
        struct timespec d = {start_delay_ms / 1000, (long)(start_delay_ms % 1000) * 1000000};
        while (nanosleep(&d, &d) < 0 && errno == EINTR) {
        }
    }
    build_pages();
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (!strcmp(argv[1], "stdio")) return run_stdio();
    if (!strcmp(argv[1], "http")) return run_http(port);
    die("unknown mode %s", argv[1]);
}
