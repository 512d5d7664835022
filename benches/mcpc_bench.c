/* mcpc_bench: the same MCP workloads through libmcpc's public C API and through a
 * raw floor (a minimal hand-written client with no library), against the same
 * server, in one run, interleaved in blocks, so every figure has its floor beside it.
 *
 *   mcpc_bench stdio "SERVER COMMAND" [--client mcpc|raw|both] [--mode M] [--label L]
 *   mcpc_bench http URL               [--client mcpc|raw|both] [--mode M] [--label L]
 *
 * Modes: std (default: init, warm-up, W1..W6, one JSON line per client), inflight
 * (1..1024 calls in flight), clients (1..100 clients in one process), sizes (echo
 * of 32 B .. 16 MiB). Curve modes print one JSON line per client and point.
 *
 * BENCH_BASE_HTTP=1.1 (or 2) makes the second client mcpc too, speaking that HTTP
 * version (its lines say "client":"base"): mcpc's HTTP versions side by side, in one
 * run, interleaved as mcpc and the floor are.
 *
 * Each client runs in its own forked child (forked before any mcpc call), so peak
 * RSS (VmHWM) and CPU (getrusage) are that client's own. The parent only sequences
 * the blocks and never touches libmcpc. See benches/README.md.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_buf.h"
#include "bench_data.h"
#include "bench_proc.h"
#include "json_lite.h"
#include "mcpc.h"

extern char **environ;

/* ------------------------------------------------------------------ basics */

static const char *g_who = "mcpc_bench";

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", g_who);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory");
    return p;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
           ru.ru_stime.tv_usec / 1e6;
}

static long env_long(const char *name, long def) {
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 0) die("%s must be a non-negative integer", name);
    return n;
}

/* Parses "1,2,4" into out (at most max values). */
static int env_list(const char *name, const char *def, long *out, int max) {
    const char *v = getenv(name);
    if (!v || !*v) v = def;
    int n = 0;
    while (*v && n < max) {
        char *end;
        long x = strtol(v, &end, 10);
        if (end == v || x <= 0) die("%s: bad list", name);
        out[n++] = x;
        v = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') die("%s: bad list", name);
    }
    return n;
}

/* ------------------------------------------------------------------ config */

static long W1_N, W2_N, W2_CONC, W3_REPS, TOOLS, W4_REPS, W4_BYTES, WARMUP, BLOCKS, INIT_REPS,
    IDLE_MS, CURVE_N, W2_BOTH, W5_REPS, W6_REPS, READ_BYTES;

typedef enum { T_STDIO, T_HTTP } transport_kind;
static transport_kind g_kind;
static char **g_argv;
static int g_argc;
static const char *g_url;
static char g_host_hdr[128], g_path[512];
static struct sockaddr_in g_addr;
/* BENCH_PROXY: an HTTP proxy on loopback that both clients go through (the raw
 * floor asks it in absolute form, as mcpc does for an http:// origin) */
static char g_proxy[160];
static const char *g_label;
static size_t g_max_message; /* 0: mcpc's default */

/* One payload of the echo tool: the text, and mcpc's arguments JSON (the escaped
 * text inside it is what the raw client sends). */
typedef struct {
    char *text;
    size_t len;
    char *args; /* {"text":"..."} NUL-terminated */
    size_t args_len;
    size_t esc_len; /* the escaped text, at args + 9 */
} payload_t;

static void payload_make(payload_t *pl, size_t len) {
    pl->len = len;
    pl->text = xmalloc(len + 1);
    if (len == 32)
        memcpy(pl->text, "bench echo text 0123456789abcdef", 32);
    else
        bench_text_fill(pl->text, len);
    pl->text[len] = 0;
    /* escaped into a scratch buffer of the worst case, then kept only inside args:
     * both clients send those bytes, and the scratch would be 1 MB of every client's RSS */
    char *esc = xmalloc(len * 6 + 1);
    pl->esc_len = jl_escape(pl->text, len, esc);
    pl->args_len = pl->esc_len + 11;
    pl->args = xmalloc(pl->args_len + 1);
    memcpy(pl->args, "{\"text\":\"", 9);
    memcpy(pl->args + 9, esc, pl->esc_len);
    memcpy(pl->args + 9 + pl->esc_len, "\"}", 3);
    free(esc);
}

static void payload_free(payload_t *pl) {
    free(pl->text);
    free(pl->args);
    memset(pl, 0, sizeof *pl);
}

/* ---------------------------------------------------------- tool name set */

/* An open-addressing set of (pointer, length) names: both clients check their
 * listing with it, so the check costs them the same. */
typedef struct {
    const char **p;
    size_t *l;
    size_t cap, n;
} nameset_t;

static void nameset_init(nameset_t *s, size_t expect) {
    s->cap = 16;
    while (s->cap < expect * 2) s->cap *= 2;
    s->p = calloc(s->cap, sizeof *s->p);
    s->l = calloc(s->cap, sizeof *s->l);
    s->n = 0;
}

static void nameset_free(nameset_t *s) {
    free(s->p);
    free(s->l);
}

/* 1 when added, 0 when already present. */
static int nameset_add(nameset_t *s, const char *name, size_t len) {
    /* more names than the set was made for (twice BENCH_TOOLS): a listing that is
     * wrong either way, and a full set would probe forever */
    if (s->n + 1 > s->cap / 2) return 0;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
    size_t i = (size_t)h & (s->cap - 1);
    while (s->p[i]) {
        if (s->l[i] == len && !memcmp(s->p[i], name, len)) return 0;
        i = (i + 1) & (s->cap - 1);
    }
    s->p[i] = name;
    s->l[i] = len;
    s->n++;
    return 1;
}

/* ------------------------------------------------------------- raw client */

/* One channel of the raw client: a TCP connection (HTTP) or the pipe pair of a
 * stdio server (line framing). */
typedef struct raw raw_t;
typedef struct {
    raw_t *owner;
    int rfd, wfd;
    int http;
    buf_t in, out;
    size_t scanned; /* line mode: bytes of `in` known to hold no newline */
    /* HTTP response being read */
    int hdr_done;
    size_t hdr_len, clen;
    int status, chunked, sse;
    buf_t body, sse_data; /* when a body or an event must be put together */
    long inflight;
} rconn_t;

struct raw {
    pid_t pid;          /* stdio server */
    rconn_t *conns;     /* conns[0]: the main channel; more for HTTP concurrency */
    int nconns, capconns;
    char session[256];  /* HTTP: "Mcp-Session-Id: ...\r\nMCP-Protocol-Version: ...\r\n" */
    uint64_t next_id;
    char *scratch;      /* decode room */
    size_t scratch_cap;
    buf_t arena;        /* the last listing: tool JSONs and names */
};

static char *raw_scratch(raw_t *r, size_t n) {
    if (n > r->scratch_cap) {
        free(r->scratch);
        r->scratch_cap = n + 4096;
        r->scratch = xmalloc(r->scratch_cap);
    }
    return r->scratch;
}

static int tcp_connect(void) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (connect(fd, (struct sockaddr *)&g_addr, sizeof g_addr) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void rconn_init(rconn_t *c, raw_t *owner, int rfd, int wfd, int http) {
    memset(c, 0, sizeof *c);
    c->owner = owner;
    c->rfd = rfd;
    c->wfd = wfd;
    c->http = http;
}

static void rconn_free(rconn_t *c) {
    if (c->rfd >= 0) close(c->rfd);
    if (c->wfd >= 0 && c->wfd != c->rfd) close(c->wfd);
    buf_free(&c->in);
    buf_free(&c->out);
    buf_free(&c->body);
    buf_free(&c->sse_data);
}

static rconn_t *raw_add_conn(raw_t *r) {
    if (r->nconns == r->capconns) {
        r->capconns = r->capconns ? r->capconns * 2 : 4;
        r->conns = realloc(r->conns, (size_t)r->capconns * sizeof *r->conns);
        /* owners point at raw_t, not at the array, so moving is fine */
    }
    int fd = tcp_connect();
    if (fd < 0) return NULL;
    rconn_t *c = &r->conns[r->nconns++];
    rconn_init(c, r, fd, fd, 1);
    return c;
}

/* Frame a request body for the wire: the HTTP head (or nothing for stdio) goes to
 * head, and the tail ("\n" for stdio) to tail. */
static size_t frame_head(const rconn_t *c, char *head, size_t cap, size_t body_len) {
    if (!c->http) return 0;
    int n = snprintf(head, cap,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n%s\r\n",
                     g_path, g_host_hdr, body_len, c->owner->session);
    return (size_t)n;
}

static int write_all_v(int fd, struct iovec *iov, int cnt) {
    while (cnt > 0) {
        ssize_t n = writev(fd, iov, cnt);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        while (cnt > 0 && (size_t)n >= iov->iov_len) {
            n -= (ssize_t)iov->iov_len;
            iov++, cnt--;
        }
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    return 0;
}

/* Sends one message made of body pieces, blocking. */
static int rconn_send(rconn_t *c, const char *const *piece, const size_t *plen, int npieces) {
    char head[1024];
    size_t blen = 0;
    for (int i = 0; i < npieces; i++) blen += plen[i];
    size_t hl = frame_head(c, head, sizeof head, blen);
    struct iovec iov[8];
    int k = 0;
    if (hl) iov[k].iov_base = head, iov[k++].iov_len = hl;
    for (int i = 0; i < npieces; i++) iov[k].iov_base = (void *)piece[i], iov[k++].iov_len = plen[i];
    if (!c->http) iov[k].iov_base = "\n", iov[k++].iov_len = 1;
    return write_all_v(c->wfd, iov, k);
}

/* Appends one framed message to the connection's out buffer (non-blocking path). */
static void rconn_queue(rconn_t *c, const char *const *piece, const size_t *plen, int npieces) {
    char head[1024];
    size_t blen = 0;
    for (int i = 0; i < npieces; i++) blen += plen[i];
    size_t hl = frame_head(c, head, sizeof head, blen);
    buf_reserve(&c->out, hl + blen + 1);
    buf_put(&c->out, head, hl);
    for (int i = 0; i < npieces; i++) buf_put(&c->out, piece[i], plen[i]);
    if (!c->http) buf_put(&c->out, "\n", 1);
}

/* Writes what can go without blocking (fd is non-blocking). -1 on error. */
static int rconn_flush(rconn_t *c) {
    while (c->out.off < c->out.len) {
        ssize_t n = write(c->wfd, c->out.p + c->out.off, c->out.len - c->out.off);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return 0;
            return -1;
        }
        buf_consume(&c->out, (size_t)n);
    }
    return 0;
}

/* Reads once into `in`. Returns bytes read, 0 at EOF, -1 on error, -2 on EAGAIN. */
static ssize_t rconn_fill(rconn_t *c, size_t want) {
    buf_reserve(&c->in, want < 65536 ? 65536 : want);
    for (;;) {
        ssize_t n = read(c->rfd, c->in.p + c->in.len, c->in.cap - c->in.len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno == EAGAIN ? -2 : -1;
        c->in.len += (size_t)n;
        return n;
    }
}

static int find_hdr(const char *h, const char *he, const char *name, const char **v,
                    size_t *vlen) {
    size_t nl = strlen(name);
    const char *p = h;
    while (p < he) {
        const char *eol = memmem(p, (size_t)(he - p), "\r\n", 2);
        if (!eol) eol = he;
        if ((size_t)(eol - p) > nl && p[nl] == ':' && !strncasecmp(p, name, nl)) {
            const char *s = p + nl + 1;
            while (s < eol && *s == ' ') s++;
            *v = s;
            *vlen = (size_t)(eol - s);
            return 1;
        }
        p = eol + 2;
    }
    return 0;
}

/* From an SSE body, the data of the first event that is a JSON-RPC response (has
 * an id and no method). 1 found, 0 none. */
static int sse_response(rconn_t *c, const char *s, const char *e, const char **ms,
                        const char **me) {
    const char *p = s;
    const char *d1s = NULL, *d1e = NULL;
    int ndata = 0;
    c->sse_data.len = c->sse_data.off = 0;
    while (p <= e) {
        const char *eol = p < e ? memchr(p, '\n', (size_t)(e - p)) : NULL;
        const char *le = eol ? eol : e;
        const char *lt = (le > p && le[-1] == '\r') ? le - 1 : le;
        if (lt == p) { /* blank line: dispatch */
            if (ndata > 0) {
                const char *xs = d1s, *xe = d1e;
                if (ndata > 1) xs = c->sse_data.p, xe = c->sse_data.p + c->sse_data.len;
                static const char *const k[] = {"id", "method"};
                jl_span v[2];
                const char *q = jl_ws(xs, xe);
                if (jl_object_trusted(q, xe, k, 2, v) && v[0].s && !v[1].s) {
                    *ms = xs, *me = xe;
                    return 1;
                }
            }
            ndata = 0;
            c->sse_data.len = c->sse_data.off = 0;
        } else if (lt - p >= 5 && !memcmp(p, "data:", 5)) {
            const char *ds = p + 5;
            if (ds < lt && *ds == ' ') ds++;
            if (ndata == 0) {
                d1s = ds, d1e = lt;
            } else {
                if (ndata == 1) buf_put(&c->sse_data, d1s, (size_t)(d1e - d1s));
                buf_put(&c->sse_data, "\n", 1);
                buf_put(&c->sse_data, ds, (size_t)(lt - ds));
            }
            ndata++;
        }
        if (!eol) break;
        p = eol + 1;
    }
    return 0;
}

/* Takes one complete message from `in` if there is one: 1 (with *ms..*me the
 * JSON-RPC message, or ms NULL for an HTTP reply with no message, such as 202),
 * 0 when more bytes are needed, -1 on a protocol error. The span stays valid
 * until the next call on c. */
static int rconn_take(rconn_t *c, const char **ms, const char **me) {
    *ms = *me = NULL;
    if (!c->http) {
        char *base = c->in.p + c->in.off;
        size_t avail = c->in.len - c->in.off;
        if (avail == c->scanned) return 0;
        char *nl = memchr(base + c->scanned, '\n', avail - c->scanned);
        if (!nl) {
            c->scanned = avail;
            return 0;
        }
        *ms = base;
        *me = nl;
        buf_consume(&c->in, (size_t)(nl + 1 - base));
        c->scanned = 0;
        return 1;
    }
    char *base = c->in.p + c->in.off;
    size_t avail = c->in.len - c->in.off;
    if (avail == 0) return 0;
    if (!c->hdr_done) {
        char *he = memmem(base, avail, "\r\n\r\n", 4);
        if (!he) return 0;
        if (avail < 12 || memcmp(base, "HTTP/1.1 ", 9)) return -1;
        c->status = atoi(base + 9);
        c->hdr_len = (size_t)(he + 4 - base);
        const char *v;
        size_t vl;
        c->chunked = find_hdr(base, he + 2, "Transfer-Encoding", &v, &vl) && vl >= 7 &&
                     !strncasecmp(v, "chunked", 7);
        c->clen = 0;
        if (!c->chunked) {
            if (!find_hdr(base, he + 2, "Content-Length", &v, &vl)) return -1;
            c->clen = strtoull(v, NULL, 10);
        }
        c->sse = find_hdr(base, he + 2, "Content-Type", &v, &vl) && vl >= 17 &&
                 !strncasecmp(v, "text/event-stream", 17);
        if (c->owner->session[0] == 0 && find_hdr(base, he + 2, "Mcp-Session-Id", &v, &vl)) {
            snprintf(c->owner->session, sizeof c->owner->session,
                     "Mcp-Session-Id: %.*s\r\nMCP-Protocol-Version: 2025-11-25\r\n", (int)vl, v);
        }
        c->hdr_done = 1;
    }
    const char *bs, *be;
    size_t total;
    if (!c->chunked) {
        if (avail < c->hdr_len + c->clen) return 0;
        bs = base + c->hdr_len;
        be = bs + c->clen;
        total = c->hdr_len + c->clen;
    } else {
        /* walk the chunks; one data chunk is used in place, more are put together */
        const char *p = base + c->hdr_len, *e = base + avail;
        const char *one_s = NULL, *one_e = NULL;
        int nchunks = 0;
        c->body.len = c->body.off = 0;
        for (;;) {
            const char *le = memmem(p, (size_t)(e - p), "\r\n", 2);
            if (!le) return 0;
            size_t sz = strtoull(p, NULL, 16);
            const char *ds = le + 2;
            if (sz == 0) {
                /* no trailers expected: the final CRLF */
                if (e - ds < 2) return 0;
                if (memcmp(ds, "\r\n", 2)) return -1;
                total = (size_t)(ds + 2 - base);
                break;
            }
            if ((size_t)(e - ds) < sz + 2) {
                buf_reserve(&c->in, sz + 2 - (size_t)(e - ds));
                return 0;
            }
            if (nchunks == 0) {
                one_s = ds, one_e = ds + sz;
            } else {
                if (nchunks == 1) buf_put(&c->body, one_s, (size_t)(one_e - one_s));
                buf_put(&c->body, ds, sz);
            }
            nchunks++;
            p = ds + sz + 2;
        }
        if (nchunks <= 1) {
            bs = one_s ? one_s : base, be = one_s ? one_e : base;
        } else {
            bs = c->body.p, be = c->body.p + c->body.len;
        }
    }
    int status = c->status;
    int sse = c->sse;
    c->hdr_done = 0;
    /* The span points into `in`, consumed but not overwritten until the next fill. */
    buf_consume(&c->in, total);
    if (status == 202) return 1;
    if (status != 200) {
        fprintf(stderr, "%s: HTTP %d: %.*s\n", g_who, status, (int)(be - bs), bs);
        return -1;
    }
    if (!sse) {
        *ms = bs, *me = be;
        return 1;
    }
    return sse_response(c, bs, be, ms, me) ? 1 : -1;
}

/* Blocking: waits for the next message on c. */
static int rconn_recv(rconn_t *c, const char **ms, const char **me) {
    for (;;) {
        int r = rconn_take(c, ms, me);
        if (r != 0) return r;
        size_t want = 65536;
        if (c->http && c->hdr_done && !c->chunked) {
            size_t need = c->hdr_len + c->clen, have = c->in.len - c->in.off;
            if (need > have) want = need - have;
        }
        ssize_t n = rconn_fill(c, want);
        if (n <= 0) return -1;
    }
}

/* Parses a response: its id and result. -1 if it is an error or malformed. */
static int parse_response(const char *s, const char *e, uint64_t *id, jl_span *result) {
    static const char *const k[] = {"jsonrpc", "id", "result", "error"};
    jl_span v[4];
    const char *p = jl_ws(s, e);
    const char *end = jl_object(p, e, k, 4, v);
    if (!end || !jl_eq(v[0], "2.0")) return -1;
    if (v[3].s) {
        fprintf(stderr, "%s: JSON-RPC error: %.*s\n", g_who, (int)(v[3].e - v[3].s), v[3].s);
        return -1;
    }
    if (!v[2].s || !jl_u64(v[1], id)) return -1;
    *result = v[2];
    return 0;
}

/* The single text block of a tool result, decoded into the raw client's scratch. */
static int result_text(raw_t *r, jl_span result, const char **text, size_t *len) {
    static const char *const k[] = {"content", "isError"};
    jl_span v[2];
    if (!jl_object_trusted(result.s, result.e, k, 2, v) || !v[0].s || *v[0].s != '[') return -1;
    if (v[1].s && !(v[1].e - v[1].s == 5 && !memcmp(v[1].s, "false", 5))) return -1;
    const char *p = jl_ws(v[0].s + 1, v[0].e);
    static const char *const bk[] = {"type", "text"};
    jl_span b[2];
    const char *end = jl_object_trusted(p, v[0].e, bk, 2, b);
    if (!end || !jl_eq(b[0], "text") || !jl_is_string(b[1])) return -1;
    if (*jl_ws(end, v[0].e) != ']') return -1; /* one block */
    char *d = raw_scratch(r, (size_t)(b[1].e - b[1].s));
    *len = jl_decode(b[1], d);
    *text = d;
    return 0;
}

static int check_echo_raw(raw_t *r, jl_span result, const payload_t *pl) {
    const char *t;
    size_t tl;
    if (result_text(r, result, &t, &tl) < 0) return -1;
    if (tl != pl->len || memcmp(t, pl->text, tl)) {
        fprintf(stderr, "%s: raw: echo came back different (%zu bytes, sent %zu)\n", g_who, tl,
                pl->len);
        return -1;
    }
    return 0;
}

/* A blocking request on conns[0]: the body is pieces; returns the result span. */
static int raw_request(raw_t *r, const char *const *piece, const size_t *plen, int n,
                       uint64_t id, jl_span *result) {
    rconn_t *c = &r->conns[0];
    if (rconn_send(c, piece, plen, n) < 0) return -1;
    for (;;) {
        const char *ms, *me;
        if (rconn_recv(c, &ms, &me) < 0) return -1;
        if (!ms) return -1; /* 202 to a request */
        uint64_t got;
        if (parse_response(ms, me, &got, result) < 0) return -1;
        if (got == id) return 0;
        /* a late response to something else: not expected here */
        return -1;
    }
}

static int raw_notify(raw_t *r, const char *json) {
    rconn_t *c = &r->conns[0];
    size_t l = strlen(json);
    if (rconn_send(c, &json, &l, 1) < 0) return -1;
    if (c->http) { /* read the 202 */
        const char *ms, *me;
        if (rconn_recv(c, &ms, &me) < 0 || ms) return -1;
    }
    return 0;
}

static int raw_handshake(raw_t *r) {
    char body[512];
    uint64_t id = r->next_id++;
    int n = snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"initialize\",\"params\":{"
                     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                     "\"name\":\"raw-floor\",\"version\":\"1.0.0\"}}}",
                     (unsigned long long)id);
    const char *p = body;
    size_t l = (size_t)n;
    jl_span result;
    if (raw_request(r, &p, &l, 1, id, &result) < 0) return -1;
    static const char *const k[] = {"protocolVersion"};
    jl_span v;
    if (!jl_object_trusted(result.s, result.e, k, 1, &v) || !jl_is_string(v)) return -1;
    return raw_notify(r, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
}

static raw_t *raw_connect(void) {
    raw_t *r = calloc(1, sizeof *r);
    r->next_id = 1;
    if (g_kind == T_STDIO) {
        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        posix_spawnattr_t at;
        posix_spawnattr_init(&at);
        posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
        posix_spawnattr_setpgroup(&at, 0);
        int e = posix_spawnp(&r->pid, g_argv[0], &fa, &at, g_argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&at);
        close(in[0]);
        close(out[1]);
        if (e) {
            fprintf(stderr, "%s: cannot start %s: %s\n", g_who, g_argv[0], strerror(e));
            close(in[1]);
            close(out[0]);
            free(r);
            return NULL;
        }
        r->capconns = 1;
        r->nconns = 1;
        r->conns = calloc(1, sizeof *r->conns);
        rconn_init(&r->conns[0], r, out[0], in[1], 0);
    } else {
        if (!raw_add_conn(r)) {
            fprintf(stderr, "%s: cannot connect: %s\n", g_who, strerror(errno));
            free(r);
            return NULL;
        }
    }
    if (raw_handshake(r) < 0) {
        fprintf(stderr, "%s: raw handshake failed\n", g_who);
        return NULL;
    }
    return r;
}

static void raw_close(raw_t *r) {
    if (!r) return;
    for (int i = 0; i < r->nconns; i++) rconn_free(&r->conns[i]);
    if (r->pid > 0) {
        int st;
        waitpid(r->pid, &st, 0);
    }
    free(r->conns);
    free(r->scratch);
    buf_free(&r->arena);
    free(r);
}

/* The body of an echo call, in pieces around the escaped text. */
static int echo_pieces(uint64_t id, const payload_t *pl, char *pre, size_t precap,
                       const char **piece, size_t *plen) {
    int n = snprintf(pre, precap,
                     "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"echo\",\"arguments\":{\"text\":\"",
                     (unsigned long long)id);
    piece[0] = pre, plen[0] = (size_t)n;
    piece[1] = pl->args + 9, plen[1] = pl->esc_len;
    piece[2] = "\"}}}", plen[2] = 4;
    return 3;
}

static int raw_call(raw_t *r, const payload_t *pl) {
    char pre[256];
    const char *piece[3];
    size_t plen[3];
    uint64_t id = r->next_id++;
    int n = echo_pieces(id, pl, pre, sizeof pre, piece, plen);
    jl_span result;
    if (raw_request(r, piece, plen, n, id, &result) < 0) return -1;
    return check_echo_raw(r, result, pl);
}

/* What a resource read must give: the text resource's text (W5), whose bytes the
 * blob resource holds too (W6), as bench_server makes them. */
typedef struct {
    const char *text;
    size_t len;
    char *own; /* the text, when it is not W4's payload */
} reads_t;

static int read_differs(const char *who, int blob, size_t got, size_t want) {
    fprintf(stderr, "%s: %s: the %s resource came back different (%zu bytes, expected %zu)\n",
            g_who, who, blob ? "blob" : "text", got, want);
    return -1;
}

/* resources/read of bench://text or bench://blob: the one entry's text decoded, or
 * its blob decoded from base64 (after its JSON escapes, if it has any), and compared. */
static int raw_read(raw_t *r, const reads_t *want, int blob) {
    char body[256];
    uint64_t id = r->next_id++;
    int n = snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"resources/read\",\"params\":{"
                     "\"uri\":\"bench://%s\"}}",
                     (unsigned long long)id, blob ? "blob" : "text");
    const char *p = body;
    size_t l = (size_t)n;
    jl_span result;
    if (raw_request(r, &p, &l, 1, id, &result) < 0) return -1;
    static const char *const k[] = {"contents"};
    jl_span contents;
    if (!jl_object_trusted(result.s, result.e, k, 1, &contents) || !contents.s || *contents.s != '[')
        return -1;
    static const char *const ck[] = {"uri", "text", "blob"};
    jl_span c[3];
    const char *q = jl_ws(contents.s + 1, contents.e);
    const char *end = jl_object_trusted(q, contents.e, ck, 3, c);
    if (!end || *jl_ws(end, contents.e) != ']' || !jl_is_string(c[0])) return -1; /* one entry */
    jl_span v = c[blob ? 2 : 1];
    if (!jl_is_string(v) || c[blob ? 1 : 2].s) return -1;
    size_t vl = (size_t)(v.e - v.s);
    if (!blob) {
        char *d = raw_scratch(r, vl);
        size_t got = jl_decode(v, d);
        if (got != want->len || memcmp(d, want->text, got)) return read_differs("raw", 0, got, want->len);
        return 0;
    }
    const char *b64 = v.s + 1;
    size_t b64_len = vl - 2;
    int escaped = memchr(b64, '\\', b64_len) != NULL;
    unsigned char *d = (unsigned char *)raw_scratch(r, escaped ? vl * 2 : vl);
    if (escaped) { /* unescaped after the room for the bytes */
        char *u = (char *)d + vl;
        b64_len = jl_decode(v, u);
        b64 = u;
    }
    size_t got = bench_b64_decode(b64, b64_len, d);
    if (got != want->len || memcmp(d, want->text, got)) return read_differs("raw", 1, got, want->len);
    return 0;
}

static int raw_list(raw_t *r, long expect) {
    char cursor[256] = "";
    nameset_t set;
    nameset_init(&set, (size_t)expect);
    r->arena.len = r->arena.off = 0;
    /* names and tool JSONs are kept (as a client keeps its listing): offsets into
     * the arena, resolved once the arena stops growing */
    size_t *noff = xmalloc(sizeof(size_t) * 2 * (size_t)(expect + 64));
    size_t ntools = 0, capt = (size_t)expect + 64;
    int rc = -1, pages = 0;
    for (;;) {
        char body[512];
        uint64_t id = r->next_id++;
        int n;
        if (cursor[0])
            n = snprintf(body, sizeof body,
                         "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/list\",\"params\":"
                         "{\"cursor\":\"%s\"}}",
                         (unsigned long long)id, cursor);
        else
            n = snprintf(body, sizeof body,
                         "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/list\"}",
                         (unsigned long long)id);
        const char *p = body;
        size_t l = (size_t)n;
        jl_span result;
        if (raw_request(r, &p, &l, 1, id, &result) < 0) goto out;
        if (++pages > 1000) goto out;
        static const char *const k[] = {"tools", "nextCursor"};
        jl_span v[2];
        if (!jl_object_trusted(result.s, result.e, k, 2, v) || !v[0].s || *v[0].s != '[') goto out;
        const char *q = jl_ws(v[0].s + 1, v[0].e);
        if (*q != ']') {
            for (;;) {
                static const char *const tk[] = {"name"};
                jl_span name;
                const char *te = jl_object_trusted(q, v[0].e, tk, 1, &name);
                if (!te || !jl_is_string(name)) goto out;
                if (ntools == capt) {
                    capt *= 2;
                    noff = realloc(noff, sizeof(size_t) * 2 * capt);
                }
                /* the tool's JSON, then its decoded name, NUL-terminated */
                buf_put(&r->arena, q, (size_t)(te - q));
                buf_put(&r->arena, "", 1);
                buf_reserve(&r->arena, (size_t)(name.e - name.s) + 1);
                size_t nl = jl_decode(name, r->arena.p + r->arena.len);
                noff[2 * ntools] = r->arena.len;
                noff[2 * ntools + 1] = nl;
                r->arena.len += nl;
                buf_put(&r->arena, "", 1);
                ntools++;
                q = jl_ws(te, v[0].e);
                if (*q == ']') break;
                if (*q != ',') goto out;
                q = jl_ws(q + 1, v[0].e);
            }
        }
        if (!v[1].s || (v[1].e - v[1].s == 4 && !memcmp(v[1].s, "null", 4))) break;
        if (!jl_is_string(v[1]) || v[1].e - v[1].s > (long)sizeof cursor / 2) goto out;
        char dec[256];
        size_t dl = jl_decode(v[1], dec);
        size_t el = jl_escape(dec, dl < 40 ? dl : 40, cursor);
        cursor[el] = 0;
    }
    for (size_t i = 0; i < ntools; i++) {
        if (!nameset_add(&set, r->arena.p + noff[2 * i], noff[2 * i + 1])) {
            fprintf(stderr, "%s: raw: a duplicate tool, or more tools than BENCH_TOOLS\n", g_who);
            goto out;
        }
    }
    if ((long)set.n != expect) {
        fprintf(stderr, "%s: raw: listed %zu distinct tools, expected %ld\n", g_who, set.n, expect);
        goto out;
    }
    rc = 0;
out:
    free(noff);
    nameset_free(&set);
    return rc;
}

static double raw_server_cpu(raw_t *r) {
    char body[256];
    uint64_t id = r->next_id++;
    int n = snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"stats\",\"arguments\":{}}}",
                     (unsigned long long)id);
    const char *p = body;
    size_t l = (size_t)n;
    jl_span result;
    const char *t;
    size_t tl;
    if (raw_request(r, &p, &l, 1, id, &result) < 0 || result_text(r, result, &t, &tl) < 0)
        return -1;
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.*s", (int)tl, t);
    return atof(tmp);
}

/* n echo calls with `depth` in flight on each of the channels chans[0..nch): one
 * thread, non-blocking I/O and epoll. The stdio floor uses one pipe with all calls
 * pipelined on it; the HTTP floor one keep-alive connection per call in flight
 * (what HTTP/1.1 without pipelining needs), or with depth > 1 pipelining. */
typedef struct {
    raw_t *r;
    uint64_t base;
    long next;
    unsigned char *pending;
} owner_t;

static void set_nonblock(int fd, int on) {
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* When set, every request is written at once with its own write(), as a simple
 * client would; otherwise requests queued while handling one read go out in one. */
static int g_raw_unbatched;

static void inflight_send(rconn_t *c, owner_t *o, const payload_t *pl) {
    char pre[256];
    const char *piece[3];
    size_t plen[3];
    uint64_t id = o->base + (uint64_t)o->next;
    o->pending[o->next++] = 1;
    echo_pieces(id, pl, pre, sizeof pre, piece, plen);
    rconn_queue(c, piece, plen, 3);
    c->inflight++;
    if (g_raw_unbatched) rconn_flush(c); /* an error shows at the next flush */
}

static int raw_inflight(rconn_t **chans, int nch, int depth, long n, const payload_t *pl) {
    long started = 0, done = 0;
    owner_t *ow = calloc((size_t)nch, sizeof *ow);
    int *oidx = xmalloc(sizeof(int) * (size_t)nch);
    int now = 0, rc = -1;
    int ep = epoll_create1(EPOLL_CLOEXEC);
    int *wreg = calloc((size_t)nch, sizeof(int)); /* write interest registered */
    for (int i = 0; i < nch; i++) {
        raw_t *r = chans[i]->owner;
        int j;
        for (j = 0; j < now; j++)
            if (ow[j].r == r) break;
        if (j == now) {
            ow[now].r = r;
            ow[now].base = r->next_id;
            ow[now].pending = calloc((size_t)n + 1, 1);
            r->next_id += (uint64_t)n + 1;
            now++;
        }
        oidx[i] = j;
        set_nonblock(chans[i]->rfd, 1);
        if (chans[i]->wfd != chans[i]->rfd) set_nonblock(chans[i]->wfd, 1);
        chans[i]->inflight = 0;
        /* data.u64: channel index * 2 (+1 for a separate write end) */
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)i * 2};
        epoll_ctl(ep, EPOLL_CTL_ADD, chans[i]->rfd, &ev);
    }
    for (int i = 0; i < nch; i++) {
        while (chans[i]->inflight < depth && started < n) {
            inflight_send(chans[i], &ow[oidx[i]], pl);
            started++;
        }
        if (rconn_flush(chans[i]) < 0) goto out;
    }
    struct epoll_event evs[256];
    while (done < n) {
        /* ask for writability where output is stuck */
        for (int i = 0; i < nch; i++) {
            rconn_t *c = chans[i];
            int want = c->out.len > c->out.off;
            if (want == wreg[i]) continue;
            if (c->wfd == c->rfd) {
                struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0),
                                         .data.u64 = (uint64_t)i * 2};
                epoll_ctl(ep, EPOLL_CTL_MOD, c->rfd, &ev);
            } else {
                struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = (uint64_t)i * 2 + 1};
                epoll_ctl(ep, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, c->wfd, &ev);
            }
            wreg[i] = want;
        }
        int ne = epoll_wait(ep, evs, 256, 30000);
        if (ne < 0 && errno == EINTR) continue;
        if (ne <= 0) {
            fprintf(stderr, "%s: raw: stalled (%ld of %ld done)\n", g_who, done, n);
            goto out;
        }
        for (int e = 0; e < ne; e++) {
            int i = (int)(evs[e].data.u64 / 2);
            rconn_t *c = chans[i];
            if (evs[e].events & EPOLLOUT)
                if (rconn_flush(c) < 0) goto out;
            if ((evs[e].data.u64 & 1) || !(evs[e].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                continue;
            for (;;) {
                size_t want = 65536;
                if (c->http && c->hdr_done && !c->chunked) {
                    size_t need = c->hdr_len + c->clen, have = c->in.len - c->in.off;
                    if (need > have) want = need - have;
                }
                ssize_t got = rconn_fill(c, want);
                if (got == -2) break;
                if (got <= 0) {
                    fprintf(stderr, "%s: raw: channel closed\n", g_who);
                    goto out;
                }
                if (c->in.len < c->in.cap) break;
            }
            owner_t *o = &ow[oidx[i]];
            for (;;) {
                const char *ms, *me;
                int t = rconn_take(c, &ms, &me);
                if (t == 0) break;
                if (t < 0 || !ms) goto out;
                uint64_t id;
                jl_span result;
                if (parse_response(ms, me, &id, &result) < 0) goto out;
                if (id < o->base || id - o->base >= (uint64_t)n + 1 || !o->pending[id - o->base]) {
                    fprintf(stderr, "%s: raw: unexpected id %llu\n", g_who, (unsigned long long)id);
                    goto out;
                }
                o->pending[id - o->base] = 0;
                if (check_echo_raw(c->owner, result, pl) < 0) goto out;
                c->inflight--;
                done++;
                if (started < n) {
                    inflight_send(c, o, pl);
                    started++;
                }
            }
            if (rconn_flush(c) < 0) goto out;
        }
    }
    rc = 0;
out:
    for (int i = 0; i < nch; i++) {
        set_nonblock(chans[i]->rfd, 0);
        if (chans[i]->wfd != chans[i]->rfd) set_nonblock(chans[i]->wfd, 0);
    }
    close(ep);
    for (int j = 0; j < now; j++) free(ow[j].pending);
    free(ow);
    free(oidx);
    free(wreg);
    return rc;
}

/* W2 for one raw client: `conc` in flight. stdio: all on the one pipe, writes
 * batched (variant 1: one write per request). HTTP: a connection per call in flight
 * (variant 1: HTTP/1.1 pipelining, one connection carrying them all). */
static int raw_w2(raw_t *r, long n, int conc, int variant, const payload_t *pl) {
    if (g_kind == T_STDIO || variant == 1) {
        rconn_t *c = &r->conns[0];
        g_raw_unbatched = g_kind == T_STDIO && variant == 1;
        int rc = raw_inflight(&c, 1, conc, n, pl);
        g_raw_unbatched = 0;
        return rc;
    }
    while (r->nconns < conc)
        if (!raw_add_conn(r)) {
            fprintf(stderr, "%s: raw: cannot open connection %d: %s\n", g_who, r->nconns + 1,
                    strerror(errno));
            return -1;
        }
    rconn_t **ch = xmalloc(sizeof *ch * (size_t)conc);
    for (int i = 0; i < conc; i++) ch[i] = &r->conns[i];
    int rc = raw_inflight(ch, conc, 1, n, pl);
    free(ch);
    return rc;
}

/* ------------------------------------------------------------ mcpc client */

static mcpc_options_t *mcpc_opts(void) {
    mcpc_options_t *o = mcpc_options_new();
    if (!o) die("mcpc_options_new failed");
    const char *neg = getenv("BENCH_MCPC_NEGOTIATION");
    if (neg && *neg && strcmp(neg, "auto")) {
        mcpc_status_t st = !strcmp(neg, "legacy")
                               ? mcpc_options_set_negotiation(o, MCPC_NEGOTIATE_LEGACY)
                               : mcpc_options_set_protocol_version(o, neg);
        if (st != MCPC_OK) die("BENCH_MCPC_NEGOTIATION=%s: %s", neg, mcpc_last_error_message());
    }
    /* BENCH_MCPC_HTTP: 1.1 or 2 (HTTP/2 with prior knowledge; the raw floor speaks
     * HTTP/1.1 either way) */
    const char *hv = getenv("BENCH_MCPC_HTTP");
    if (hv && *hv) {
        int32_t v = !strcmp(hv, "2") ? MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE
                    : !strcmp(hv, "1.1") ? MCPC_HTTP_VERSION_1_1
                                         : -1;
        if (v < 0) die("BENCH_MCPC_HTTP=%s: 1.1 or 2", hv);
        if (mcpc_options_set_http_version(o, v) != MCPC_OK)
            die("mcpc_options_set_http_version: %s", mcpc_last_error_message());
    }
    if (g_proxy[0] && mcpc_options_set_proxy(o, g_proxy) != MCPC_OK)
        die("mcpc_options_set_proxy: %s", mcpc_last_error_message());
    if (g_max_message && mcpc_options_set_max_message_size(o, g_max_message) != MCPC_OK)
        die("mcpc_options_set_max_message_size: %s", mcpc_last_error_message());
    return o;
}

static mcpc_client_t *mc_connect(void) {
    mcpc_options_t *o = mcpc_opts();
    mcpc_client_t *c = NULL;
    mcpc_status_t st;
    if (g_kind == T_STDIO)
        st = mcpc_client_connect_stdio((const char *const *)g_argv, (size_t)g_argc, o, &c);
    else
        st = mcpc_client_connect_http(g_url, o, &c);
    mcpc_options_free(o);
    if (st != MCPC_OK) {
        fprintf(stderr, "%s: mcpc connect: %s: %s\n", g_who, mcpc_status_name(st),
                mcpc_last_error_message());
        return NULL;
    }
    return c;
}

static int mc_check_result(mcpc_status_t st, mcpc_result_t *res, const payload_t *pl,
                           const char *err) {
    if (st != MCPC_OK) {
        fprintf(stderr, "%s: mcpc call: %s: %s\n", g_who, mcpc_status_name(st), err);
        mcpc_result_free(res);
        return -1;
    }
    size_t tl = 0;
    const char *t = mcpc_result_text(res, &tl);
    int ok = t && tl == pl->len && !memcmp(t, pl->text, tl);
    mcpc_result_free(res);
    if (!ok) {
        fprintf(stderr, "%s: mcpc: echo came back different (%zu bytes, sent %zu)\n", g_who, tl,
                pl->len);
        return -1;
    }
    return 0;
}

static int mc_call(mcpc_client_t *c, const payload_t *pl) {
    mcpc_result_t *res = NULL;
    mcpc_status_t st = mcpc_client_call_tool(c, "echo", pl->args, NULL, &res);
    return mc_check_result(st, res, pl, st == MCPC_OK ? "" : mcpc_last_error_message());
}

static int mc_read(mcpc_client_t *c, const reads_t *want, int blob) {
    mcpc_contents_t *contents = NULL;
    mcpc_status_t st =
        mcpc_client_read_resource(c, blob ? "bench://blob" : "bench://text", NULL, &contents);
    if (st != MCPC_OK) {
        fprintf(stderr, "%s: mcpc read: %s: %s\n", g_who, mcpc_status_name(st),
                mcpc_last_error_message());
        return -1;
    }
    size_t got = 0;
    const void *p = NULL;
    if (mcpc_contents_count(contents) == 1)
        p = blob ? (const void *)mcpc_contents_blob(contents, 0, &got)
                 : (const void *)mcpc_contents_text(contents, 0, &got);
    int ok = p && got == want->len && !memcmp(p, want->text, got);
    mcpc_contents_free(contents);
    return ok ? 0 : read_differs("mcpc", blob, got, want->len);
}

static int mc_list(mcpc_client_t *c, long expect) {
    mcpc_tool_list_t *list = NULL;
    mcpc_status_t st = mcpc_client_list_tools(c, NULL, &list);
    if (st != MCPC_OK) {
        fprintf(stderr, "%s: mcpc list: %s: %s\n", g_who, mcpc_status_name(st),
                mcpc_last_error_message());
        return -1;
    }
    nameset_t set;
    nameset_init(&set, (size_t)expect);
    size_t n = mcpc_tool_list_len(list);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = mcpc_tool_list_name(list, i);
        if (!name || !nameset_add(&set, name, strlen(name))) {
            fprintf(stderr, "%s: mcpc: a duplicate tool, or more tools than BENCH_TOOLS\n", g_who);
            rc = -1;
            break;
        }
    }
    if (rc == 0 && (long)set.n != expect) {
        fprintf(stderr, "%s: mcpc: listed %zu distinct tools, expected %ld\n", g_who, set.n,
                expect);
        rc = -1;
    }
    nameset_free(&set);
    mcpc_tool_list_free(list);
    return rc;
}

static double mc_server_cpu(mcpc_client_t *c) {
    mcpc_result_t *res = NULL;
    if (mcpc_client_call_tool(c, "stats", "{}", NULL, &res) != MCPC_OK) {
        mcpc_result_free(res);
        return -1;
    }
    double v = atof(mcpc_result_text(res, NULL));
    mcpc_result_free(res);
    return v;
}

/* Async chains: each completion checks its result and starts the next call on the
 * same client, so `per_client` calls stay in flight on each client. */
typedef struct {
    const payload_t *pl;
    long n;
    atomic_long started, done;
    atomic_int err;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
} chain_t;

typedef struct {
    chain_t *ch;
    mcpc_client_t *client;
} chain_link_t;

static void chain_finish_check(chain_t *ch, long d) {
    if (d == ch->n || (atomic_load(&ch->err) && d == atomic_load(&ch->started))) {
        pthread_mutex_lock(&ch->mu);
        ch->finished = 1;
        pthread_cond_signal(&ch->cv);
        pthread_mutex_unlock(&ch->mu);
    }
}

static void chain_done(void *ud, mcpc_status_t st, mcpc_result_t *res, const char *err);

static void chain_start(chain_link_t *l) {
    chain_t *ch = l->ch;
    if (atomic_load(&ch->err)) return;
    long s = atomic_fetch_add(&ch->started, 1);
    if (s >= ch->n) {
        atomic_fetch_sub(&ch->started, 1);
        return;
    }
    mcpc_status_t st =
        mcpc_client_call_tool_async(l->client, "echo", ch->pl->args, NULL, chain_done, l, NULL);
    if (st != MCPC_OK) {
        fprintf(stderr, "%s: mcpc_client_call_tool_async: %s: %s\n", g_who, mcpc_status_name(st),
                mcpc_last_error_message());
        atomic_store(&ch->err, 1);
        chain_finish_check(ch, atomic_fetch_add(&ch->done, 1) + 1);
    }
}

static void chain_done(void *ud, mcpc_status_t st, mcpc_result_t *res, const char *err) {
    chain_link_t *l = ud;
    chain_t *ch = l->ch;
    if (mc_check_result(st, res, ch->pl, err) < 0) atomic_store(&ch->err, 1);
    chain_start(l);
    chain_finish_check(ch, atomic_fetch_add(&ch->done, 1) + 1);
}

static int mc_inflight_async(mcpc_client_t **clients, int nclients, int per_client, long n,
                             const payload_t *pl) {
    chain_t ch;
    memset(&ch, 0, sizeof ch);
    ch.pl = pl;
    ch.n = n;
    pthread_mutex_init(&ch.mu, NULL);
    pthread_cond_init(&ch.cv, NULL);
    size_t nl = (size_t)nclients * (size_t)per_client;
    chain_link_t *links = xmalloc(sizeof *links * nl);
    for (size_t i = 0; i < nl; i++) links[i].ch = &ch, links[i].client = clients[i % (size_t)nclients];
    for (size_t i = 0; i < nl; i++) chain_start(&links[i]);
    pthread_mutex_lock(&ch.mu);
    while (!ch.finished) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&ch.cv, &ch.mu, &ts);
        long d = atomic_load(&ch.done), s = atomic_load(&ch.started);
        if (d == n || (atomic_load(&ch.err) && d == s)) ch.finished = 1;
    }
    pthread_mutex_unlock(&ch.mu);
    free(links);
    pthread_mutex_destroy(&ch.mu);
    pthread_cond_destroy(&ch.cv);
    return atomic_load(&ch.err) ? -1 : 0;
}

/* The other way to keep calls in flight: `conc` threads making blocking calls. */
typedef struct {
    mcpc_client_t *client;
    const payload_t *pl;
    long n;
    atomic_long next;
    atomic_int err;
    pthread_barrier_t go;
} threads_t;

static void *thread_main(void *arg) {
    threads_t *t = arg;
    pthread_barrier_wait(&t->go);
    for (;;) {
        long i = atomic_fetch_add(&t->next, 1);
        if (i >= t->n || atomic_load(&t->err)) break;
        if (mc_call(t->client, t->pl) < 0) atomic_store(&t->err, 1);
    }
    return NULL;
}

/* Returns the seconds the calls took (threads started before the clock). */
static double mc_inflight_threads(mcpc_client_t *c, int conc, long n, const payload_t *pl) {
    threads_t t;
    memset(&t, 0, sizeof t);
    t.client = c, t.pl = pl, t.n = n;
    pthread_barrier_init(&t.go, NULL, (unsigned)conc + 1);
    pthread_t *th = xmalloc(sizeof *th * (size_t)conc);
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 256 * 1024);
    for (int i = 0; i < conc; i++)
        if (pthread_create(&th[i], &at, thread_main, &t)) die("pthread_create");
    pthread_attr_destroy(&at);
    pthread_barrier_wait(&t.go);
    uint64_t t0 = now_ns();
    for (int i = 0; i < conc; i++) pthread_join(th[i], NULL);
    double s = (double)(now_ns() - t0) / 1e9;
    free(th);
    pthread_barrier_destroy(&t.go);
    return atomic_load(&t.err) ? -1 : s;
}

/* ------------------------------------------------------- one client, generic */

typedef struct {
    int is_mcpc;
    mcpc_client_t *mc;
    raw_t *raw;
} client_t;

static int cl_connect(client_t *c) {
    if (c->is_mcpc) return (c->mc = mc_connect()) ? 0 : -1;
    return (c->raw = raw_connect()) ? 0 : -1;
}

static void cl_close(client_t *c) {
    if (c->is_mcpc) {
        mcpc_client_free(c->mc);
        c->mc = NULL;
    } else {
        raw_close(c->raw);
        c->raw = NULL;
    }
}

static int cl_call(client_t *c, const payload_t *pl) {
    return c->is_mcpc ? mc_call(c->mc, pl) : raw_call(c->raw, pl);
}

static int cl_read(client_t *c, const reads_t *want, int blob) {
    return c->is_mcpc ? mc_read(c->mc, want, blob) : raw_read(c->raw, want, blob);
}

static int cl_list(client_t *c) {
    return c->is_mcpc ? mc_list(c->mc, TOOLS) : raw_list(c->raw, TOOLS);
}

static double cl_server_cpu(client_t *c) {
    return c->is_mcpc ? mc_server_cpu(c->mc) : raw_server_cpu(c->raw);
}

/* variant: mcpc 0 async, 1 threads; raw 0 the floor, 1 the other way (raw_w2).
 * Returns seconds. */
static double cl_inflight(client_t *c, int variant, int conc, long n, const payload_t *pl) {
    uint64_t t0 = now_ns();
    if (c->is_mcpc) {
        if (variant == 1) return mc_inflight_threads(c->mc, conc, n, pl);
        if (mc_inflight_async(&c->mc, 1, conc, n, pl) < 0) return -1;
    } else {
        if (raw_w2(c->raw, n, conc, variant, pl) < 0) return -1;
    }
    return (double)(now_ns() - t0) / 1e9;
}

/* ---------------------------------------------- the child: runs one client */

enum {
    OP_INIT = 1,
    OP_WARMUP,
    OP_W1,
    OP_W2,
    OP_W3,
    OP_W4,
    OP_IDLE,
    OP_REPORT,
    OP_CURVE_INFLIGHT,
    OP_CURVE_SIZE,
    OP_CURVE_CLIENTS,
    OP_W5,
    OP_W6,
};

typedef struct {
    int op, variant;
    long n, arg;
} cmd_t;

typedef struct {
    client_t cl;
    payload_t small, big;
    double wall;       /* active seconds */
    double init_ms[64];
    int n_init;
    double *lat_us;    /* W1 latencies */
    long n_lat;
    double w1_s;
    long w2_calls[3];
    double w2_s[3], w2_srv[3];
    double w1_srv;
    long w3_reps;
    double w3_s;
    long w4_reps;
    double w4_s;
    reads_t reads;
    long w5_reps, w6_reps;
    double w5_s, w6_s;
    double idle_cpu_ms, idle_ms;
    long rss_base_kb; /* VmRSS before the client did anything (harness, payloads) */
} child_t;

/* Voluntary context switches of the whole process so far: each is a thread going
 * to sleep. Calls in flight that make many (a few per 100 calls) ran with the
 * client and the server on different CPUs, waking each other across them; few,
 * with both on one CPU, taking turns. */
static long sleeps_so_far(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_nvcsw;
}

/* Blocks per point of the in-flight curve (its rate is the median block's). */
#define CURVE_BLOCKS 3

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *sorted, long n, double p) {
    if (n == 0) return 0;
    long i = (long)ceil(p / 100.0 * (double)n) - 1;
    if (i < 0) i = 0;
    if (i >= n) i = n - 1;
    return sorted[i];
}

/* Set in the child that stands for the floor when BENCH_BASE_HTTP asks for mcpc there. */
static int g_is_base;

static const char *client_name(const child_t *ch) {
    return g_is_base ? "base" : ch->cl.is_mcpc ? "mcpc" : "raw";
}

static void print_head(const child_t *ch, const char *curve) {
    if (curve)
        printf("{\"curve\":\"%s\",\"client\":\"%s\",\"transport\":\"%s\"", curve, client_name(ch),
               g_label);
    else
        printf("{\"client\":\"%s\",\"transport\":\"%s\"", client_name(ch), g_label);
}

static void report_std(child_t *ch) {
    double rss = (double)proc_status_kb("VmHWM");
    double cpu = cpu_s();
    qsort(ch->lat_us, (size_t)ch->n_lat, sizeof(double), cmp_double);
    double sum = 0;
    for (long i = 0; i < ch->n_lat; i++) sum += ch->lat_us[i];
    double init_sorted[64];
    memcpy(init_sorted, ch->init_ms, sizeof(double) * (size_t)ch->n_init);
    qsort(init_sorted, (size_t)ch->n_init, sizeof(double), cmp_double);
    print_head(ch, NULL);
    printf(",\"init_ms\":%.3f,\"init_first_ms\":%.3f", pct(init_sorted, ch->n_init, 50),
           ch->init_ms[0]);
    printf(",\"w1_n\":%ld,\"w1_calls_s\":%.1f,\"w1_mean_us\":%.2f,\"w1_p50_us\":%.2f,"
           "\"w1_p99_us\":%.2f",
           ch->n_lat, ch->w1_s > 0 ? (double)ch->n_lat / ch->w1_s : 0,
           ch->n_lat ? sum / (double)ch->n_lat : 0, pct(ch->lat_us, ch->n_lat, 50),
           pct(ch->lat_us, ch->n_lat, 99));
    double rate[3];
    for (int v = 0; v < 3; v++) rate[v] = ch->w2_s[v] > 0 ? (double)ch->w2_calls[v] / ch->w2_s[v] : 0;
    int best = rate[1] > rate[0] && ch->cl.is_mcpc ? 1 : 0;
    const char *mode = ch->cl.is_mcpc ? (best ? "threads" : "async")
                                      : (g_kind == T_STDIO ? "one-pipe-batched" : "conn-per-call");
    printf(",\"w2_n\":%ld,\"w2_conc\":%ld,\"w2_calls_s\":%.1f,\"w2_mode\":\"%s\"", ch->w2_calls[best],
           W2_CONC, rate[best], mode);
    if (ch->cl.is_mcpc)
        printf(",\"w2_async_calls_s\":%.1f,\"w2_threads_calls_s\":%.1f", rate[0], rate[1]);
    else if (g_kind == T_HTTP)
        printf(",\"w2_pipelined_calls_s\":%.1f", rate[1]);
    else
        printf(",\"w2_unbatched_calls_s\":%.1f", rate[1]);
    printf(",\"w3_reps\":%ld,\"w3_ms_per_list\":%.3f", ch->w3_reps,
           ch->w3_reps ? ch->w3_s * 1e3 / (double)ch->w3_reps : 0);
    double mib = (double)W4_BYTES * (double)ch->w4_reps / (1024.0 * 1024.0);
    printf(",\"w4_reps\":%ld,\"w4_bytes\":%ld,\"w4_mib_s\":%.1f,\"w4_ms_per_call\":%.3f", ch->w4_reps,
           W4_BYTES, ch->w4_s > 0 ? mib / ch->w4_s : 0,
           ch->w4_reps ? ch->w4_s * 1e3 / (double)ch->w4_reps : 0);
    for (int blob = 0; blob < 2; blob++) {
        long reps = blob ? ch->w6_reps : ch->w5_reps;
        double s = blob ? ch->w6_s : ch->w5_s;
        double rmib = (double)READ_BYTES * (double)reps / (1024.0 * 1024.0);
        printf(",\"w%d_reps\":%ld,\"w%d_bytes\":%ld,\"w%d_mib_s\":%.1f,\"w%d_ms_per_read\":%.3f",
               5 + blob, reps, 5 + blob, READ_BYTES, 5 + blob, s > 0 ? rmib / s : 0, 5 + blob,
               reps ? s * 1e3 / (double)reps : 0);
    }
    printf(",\"rss_kb\":%.0f,\"rss_base_kb\":%ld,\"cpu_s\":%.3f,\"wall_s\":%.3f", rss,
           ch->rss_base_kb, cpu, ch->wall);
    printf(",\"idle_ms\":%.0f,\"idle_cpu_ms\":%.3f", ch->idle_ms, ch->idle_cpu_ms);
    printf(",\"srv_cpu_w1_pct\":%.1f,\"srv_cpu_w2_pct\":%.1f}\n",
           ch->w1_s > 0 && ch->w1_srv >= 0 ? 100 * ch->w1_srv / ch->w1_s : -1,
           ch->w2_s[best] > 0 && ch->w2_srv[best] >= 0 ? 100 * ch->w2_srv[best] / ch->w2_s[best]
                                                      : -1);
    fflush(stdout);
}

/* Server CPU seconds around a block, outside its timing. */
static double srv_begin(child_t *ch) { return cl_server_cpu(&ch->cl); }
static void srv_end(child_t *ch, double before, double *acc) {
    double after = cl_server_cpu(&ch->cl);
    if (before < 0 || after < 0 || *acc < 0)
        *acc = -1;
    else
        *acc += after - before;
}

#define CHECK(x)                                                                              \
    do {                                                                                      \
        if ((x) < 0) return -1;                                                               \
    } while (0)

static int child_op(child_t *ch, const cmd_t *cmd) {
    client_t *cl = &ch->cl;
    uint64_t t0;
    switch (cmd->op) {
    case OP_INIT: {
        /* connect INIT_REPS times (each timed, closing all but the last) */
        for (long i = 0; i < cmd->n; i++) {
            t0 = now_ns();
            CHECK(cl_connect(cl));
            double s = (double)(now_ns() - t0) / 1e9;
            ch->wall += s;
            if (ch->n_init < 64) ch->init_ms[ch->n_init++] = s * 1e3;
            if (i + 1 < cmd->n) cl_close(cl);
        }
        return 0;
    }
    case OP_WARMUP: {
        t0 = now_ns();
        for (long i = 0; i < cmd->n; i++) CHECK(cl_call(cl, &ch->small));
        /* also open whatever the concurrent workload needs (HTTP connections) */
        long wn = W2_CONC * 4 > cmd->n ? W2_CONC * 4 : cmd->n;
        if (W2_CONC > 0) {
            CHECK(cl_inflight(cl, 0, (int)W2_CONC, wn, &ch->small));
            if (W2_BOTH) CHECK(cl_inflight(cl, 1, (int)W2_CONC, wn, &ch->small));
        }
        CHECK(cl_list(cl));
        if (W4_REPS > 0) CHECK(cl_call(cl, &ch->big));
        if (W5_REPS > 0) CHECK(cl_read(cl, &ch->reads, 0));
        if (W6_REPS > 0) CHECK(cl_read(cl, &ch->reads, 1));
        ch->wall += (double)(now_ns() - t0) / 1e9;
        return 0;
    }
    case OP_W1: {
        double srv = srv_begin(ch);
        uint64_t b0 = now_ns();
        for (long i = 0; i < cmd->n; i++) {
            t0 = now_ns();
            CHECK(cl_call(cl, &ch->small));
            ch->lat_us[ch->n_lat++] = (double)(now_ns() - t0) / 1e3;
        }
        double s = (double)(now_ns() - b0) / 1e9;
        ch->w1_s += s, ch->wall += s;
        srv_end(ch, srv, &ch->w1_srv);
        return 0;
    }
    case OP_W2: {
        double srv = srv_begin(ch);
        double s = cl_inflight(cl, cmd->variant, (int)W2_CONC, cmd->n, &ch->small);
        CHECK(s);
        ch->w2_s[cmd->variant] += s, ch->wall += s;
        ch->w2_calls[cmd->variant] += cmd->n;
        srv_end(ch, srv, &ch->w2_srv[cmd->variant]);
        return 0;
    }
    case OP_W3:
        t0 = now_ns();
        for (long i = 0; i < cmd->n; i++) CHECK(cl_list(cl));
        {
            double s = (double)(now_ns() - t0) / 1e9;
            ch->w3_s += s, ch->wall += s, ch->w3_reps += cmd->n;
        }
        return 0;
    case OP_W4:
        t0 = now_ns();
        for (long i = 0; i < cmd->n; i++) CHECK(cl_call(cl, &ch->big));
        {
            double s = (double)(now_ns() - t0) / 1e9;
            ch->w4_s += s, ch->wall += s, ch->w4_reps += cmd->n;
        }
        return 0;
    case OP_W5:
    case OP_W6: {
        int blob = cmd->op == OP_W6;
        t0 = now_ns();
        for (long i = 0; i < cmd->n; i++) CHECK(cl_read(cl, &ch->reads, blob));
        double s = (double)(now_ns() - t0) / 1e9;
        ch->wall += s;
        if (blob)
            ch->w6_s += s, ch->w6_reps += cmd->n;
        else
            ch->w5_s += s, ch->w5_reps += cmd->n;
        return 0;
    }
    case OP_IDLE: {
        double c0 = cpu_s();
        usleep((useconds_t)cmd->n * 1000);
        ch->idle_cpu_ms += (cpu_s() - c0) * 1e3;
        ch->idle_ms += (double)cmd->n;
        return 0;
    }
    case OP_REPORT:
        report_std(ch);
        return 0;
    case OP_CURVE_INFLIGHT: {
        /* One block of a point (variant: its index); the last reports the point:
         * the median block's rate, and the CPU per call over all its blocks. */
        static double rates[CURVE_BLOCKS], cpu;
        static long calls, sleeps;
        if (cmd->variant == 0) cpu = 0, calls = 0, sleeps = 0;
        double c0 = cpu_s();
        long v0 = sleeps_so_far();
        double s = cl_inflight(cl, 0, (int)cmd->arg, cmd->n, &ch->small);
        CHECK(s);
        cpu += cpu_s() - c0, calls += cmd->n, sleeps += sleeps_so_far() - v0;
        rates[cmd->variant] = (double)cmd->n / s;
        if (cmd->variant < CURVE_BLOCKS - 1) return 0;
        qsort(rates, CURVE_BLOCKS, sizeof(double), cmp_double);
        print_head(ch, "inflight");
        printf(",\"conc\":%ld,\"n\":%ld,\"calls_s\":%.1f,\"cpu_us_per_call\":%.3f,"
               "\"sleeps_per_100\":%.2f,\"rss_kb\":%ld}\n",
               cmd->arg, calls, rates[CURVE_BLOCKS / 2], cpu * 1e6 / (double)calls,
               100.0 * (double)sleeps / (double)calls, proc_status_kb("VmHWM"));
        fflush(stdout);
        return 0;
    }
    case OP_CURVE_SIZE: {
        payload_t pl;
        payload_make(&pl, (size_t)cmd->arg);
        CHECK(cl_call(cl, &pl)); /* warm */
        double c0 = cpu_s();
        t0 = now_ns();
        for (long i = 0; i < cmd->n; i++) CHECK(cl_call(cl, &pl));
        double s = (double)(now_ns() - t0) / 1e9;
        double cpu = cpu_s() - c0;
        print_head(ch, "sizes");
        printf(",\"bytes\":%ld,\"reps\":%ld,\"us_per_call\":%.2f,\"mib_s\":%.2f,"
               "\"cpu_us_per_call\":%.2f,\"rss_kb\":%ld,\"vmrss_kb\":%ld}\n",
               cmd->arg, cmd->n, s * 1e6 / (double)cmd->n,
               (double)cmd->arg * (double)cmd->n / 1048576.0 / s, cpu * 1e6 / (double)cmd->n,
               proc_status_kb("VmHWM"), proc_status_kb("VmRSS"));
        fflush(stdout);
        payload_free(&pl);
        return 0;
    }
    case OP_CURVE_CLIENTS: {
        /* cmd->arg clients in this process, one call in flight on each */
        int k = (int)cmd->arg;
        long rss0 = proc_status_kb("VmRSS");
        client_t *cs = calloc((size_t)k, sizeof *cs);
        t0 = now_ns();
        for (int i = 0; i < k; i++) {
            cs[i].is_mcpc = cl->is_mcpc;
            CHECK(cl_connect(&cs[i]));
        }
        double init_s = (double)(now_ns() - t0) / 1e9;
        long rss1 = proc_status_kb("VmRSS");
        double c0 = cpu_s();
        t0 = now_ns();
        if (cl->is_mcpc) {
            mcpc_client_t **mcs = xmalloc(sizeof *mcs * (size_t)k);
            for (int i = 0; i < k; i++) mcs[i] = cs[i].mc;
            int r = mc_inflight_async(mcs, k, 1, cmd->n, &ch->small);
            free(mcs);
            CHECK(r);
        } else {
            rconn_t **chans = xmalloc(sizeof *chans * (size_t)k);
            for (int i = 0; i < k; i++) chans[i] = &cs[i].raw->conns[0];
            int r = raw_inflight(chans, k, 1, cmd->n, &ch->small);
            free(chans);
            CHECK(r);
        }
        double s = (double)(now_ns() - t0) / 1e9;
        double cpu = cpu_s() - c0;
        double ic0 = cpu_s();
        usleep((useconds_t)IDLE_MS * 1000);
        double idle = (cpu_s() - ic0) * 1e3;
        print_head(ch, "clients");
        printf(",\"clients\":%d,\"init_ms_total\":%.2f,\"n\":%ld,\"calls_s\":%.1f,"
               "\"cpu_us_per_call\":%.3f,\"rss_base_kb\":%ld,\"rss_connected_kb\":%ld,"
               "\"rss_per_client_kb\":%.1f,\"rss_kb\":%ld,\"idle_ms\":%ld,\"idle_cpu_ms\":%.3f}\n",
               k, init_s * 1e3, cmd->n, (double)cmd->n / s, cpu * 1e6 / (double)cmd->n, rss0, rss1,
               (double)(rss1 - rss0) / k, proc_status_kb("VmHWM"), IDLE_MS, idle);
        fflush(stdout);
        for (int i = 0; i < k; i++) cl_close(&cs[i]);
        free(cs);
        return 0;
    }
    }
    return -1;
}

static void child_main(int is_mcpc, int cmd_fd, int ack_fd) {
    const char *base = getenv("BENCH_BASE_HTTP");
    if (!is_mcpc && base && *base) {
        if (setenv("BENCH_MCPC_HTTP", base, 1) != 0) die("setenv: %s", strerror(errno));
        is_mcpc = 1;
        g_is_base = 1;
    }
    g_who = g_is_base ? "mcpc_bench[base]" : is_mcpc ? "mcpc_bench[mcpc]" : "mcpc_bench[raw]";
    child_t ch;
    memset(&ch, 0, sizeof ch);
    ch.cl.is_mcpc = is_mcpc;
    payload_make(&ch.small, 32);
    if (W4_REPS > 0) payload_make(&ch.big, (size_t)W4_BYTES);
    ch.reads.len = (size_t)READ_BYTES;
    if (W5_REPS > 0 || W6_REPS > 0) {
        /* W4's payload when it is the same size: no second copy in every client's RSS */
        if (W4_REPS > 0 && READ_BYTES == W4_BYTES) {
            ch.reads.text = ch.big.text;
        } else {
            ch.reads.own = xmalloc(ch.reads.len + 1);
            bench_text_fill(ch.reads.own, ch.reads.len);
            ch.reads.text = ch.reads.own;
        }
    }
    ch.lat_us = xmalloc(sizeof(double) * (size_t)(W1_N + 1));
    memset(ch.lat_us, 0, sizeof(double) * (size_t)(W1_N + 1));
    ch.rss_base_kb = proc_status_kb("VmRSS");
    for (;;) {
        cmd_t cmd;
        ssize_t n = read(cmd_fd, &cmd, sizeof cmd);
        if (n != sizeof cmd) break; /* parent is done */
        char ok = child_op(&ch, &cmd) == 0 ? 1 : 0;
        if (write(ack_fd, &ok, 1) != 1 || !ok) break;
    }
    if (ch.cl.mc || ch.cl.raw) cl_close(&ch.cl);
    payload_free(&ch.small);
    payload_free(&ch.big);
    free(ch.reads.own);
    free(ch.lat_us);
    fflush(stdout);
    exit(0);
}

/* ---------------------------------------------------------- the parent */

typedef struct {
    pid_t pid;
    int cmd_fd, ack_fd;
    int is_mcpc;
} kid_t;

static kid_t g_kids[2];
static int g_nkids;

static kid_t kid_spawn(int is_mcpc) {
    int c[2], a[2];
    if (pipe2(c, O_CLOEXEC) < 0 || pipe2(a, O_CLOEXEC) < 0) die("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) die("fork: %s", strerror(errno));
    if (pid == 0) {
        close(c[1]);
        close(a[0]);
        /* the other client's pipes are not ours: its EOF must not wait on us */
        for (int i = 0; i < g_nkids; i++) close(g_kids[i].cmd_fd), close(g_kids[i].ack_fd);
        child_main(is_mcpc, c[0], a[1]);
    }
    close(c[0]);
    close(a[1]);
    return (kid_t){pid, c[1], a[0], is_mcpc};
}

static void kids_abort(void) {
    for (int i = 0; i < g_nkids; i++) {
        if (g_kids[i].pid > 0) {
            kill(g_kids[i].pid, SIGTERM);
            waitpid(g_kids[i].pid, NULL, 0);
            g_kids[i].pid = 0;
        }
    }
}

static void kid_do(kid_t *k, int op, int variant, long n, long arg) {
    cmd_t cmd = {op, variant, n, arg};
    char ok = 0;
    if (write(k->cmd_fd, &cmd, sizeof cmd) != sizeof cmd || read(k->ack_fd, &ok, 1) != 1 || !ok) {
        fprintf(stderr, "mcpc_bench: the %s client failed (op %d)\n", k->is_mcpc ? "mcpc" : "raw",
                op);
        kids_abort();
        exit(1);
    }
}

static void kids_finish(void) {
    for (int i = 0; i < g_nkids; i++) close(g_kids[i].cmd_fd);
    for (int i = 0; i < g_nkids; i++) {
        close(g_kids[i].ack_fd);
        int st;
        waitpid(g_kids[i].pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) die("a client child failed");
        g_kids[i].pid = 0;
    }
    g_nkids = 0;
}

static int g_want_mcpc = 1, g_want_raw = 1;

/* Starts the clients' processes: mcpc's first, or the floor's first with BENCH_FIRST=raw.
 * The order is a parameter because it is not neutral: over sequential HTTP calls, the
 * process started first had its calls split across the CPUs from the server more often
 * (ten runs each way: mcpc first, its p50 was the split one in 5 and the floor's in 0;
 * the floor first, mcpc's in 1 and the floor's in 2). run.py alternates it. The first
 * started also goes first in each even round of blocks. */
static void kids_start(void) {
    const char *first = getenv("BENCH_FIRST");
    int raw_first = first && !strcmp(first, "raw");
    g_nkids = 0;
    if (raw_first && g_want_raw) g_kids[g_nkids++] = kid_spawn(0);
    if (g_want_mcpc) g_kids[g_nkids++] = kid_spawn(1);
    if (!raw_first && g_want_raw) g_kids[g_nkids++] = kid_spawn(0);
}

/* Runs op on every client, in alternating order by round (ABBA...). */
static void all_do(int round, int op, int variant, long n, long arg) {
    for (int j = 0; j < g_nkids; j++) {
        int i = (round % 2) ? g_nkids - 1 - j : j;
        kid_do(&g_kids[i], op, variant, n, arg);
    }
}

/* Splits total into BLOCKS parts: part r. */
static long part(long total, long blocks, long r) {
    return total / blocks + (r < total % blocks ? 1 : 0);
}

static void run_std(void) {
    kids_start();
    all_do(0, OP_INIT, 0, INIT_REPS > 0 ? INIT_REPS : 1, 0);
    all_do(1, OP_WARMUP, 0, WARMUP, 0);
    long B = BLOCKS > 0 ? BLOCKS : 1;
    for (long r = 0; r < B; r++)
        if (part(W1_N, B, r)) all_do((int)r, OP_W1, 0, part(W1_N, B, r), 0);
    for (long r = 0; r < B && W2_CONC > 0; r++) {
        long n = part(W2_N, B, r);
        if (!n) continue;
        /* mcpc: async chains, then blocking threads; raw: the floor, then the other
         * way (stdio: a write per request; HTTP: pipelining on one connection) */
        for (int j = 0; j < g_nkids; j++) {
            int i = (r % 2) ? g_nkids - 1 - j : j;
            kid_do(&g_kids[i], OP_W2, 0, n, 0);
        }
        for (int j = 0; j < g_nkids && W2_BOTH; j++) {
            int i = (r % 2) ? j : g_nkids - 1 - j;
            kid_do(&g_kids[i], OP_W2, 1, n, 0);
        }
    }
    for (long r = 0; r < B; r++)
        if (part(W3_REPS, B, r)) all_do((int)r, OP_W3, 0, part(W3_REPS, B, r), 0);
    for (long r = 0; r < B; r++)
        if (part(W4_REPS, B, r)) all_do((int)r, OP_W4, 0, part(W4_REPS, B, r), 0);
    for (long r = 0; r < B; r++)
        if (part(W5_REPS, B, r)) all_do((int)r, OP_W5, 0, part(W5_REPS, B, r), 0);
    for (long r = 0; r < B; r++)
        if (part(W6_REPS, B, r)) all_do((int)r, OP_W6, 0, part(W6_REPS, B, r), 0);
    if (IDLE_MS > 0) all_do(0, OP_IDLE, 0, IDLE_MS, 0);
    for (int i = 0; i < g_nkids; i++) kid_do(&g_kids[i], OP_REPORT, 0, 0, 0);
    kids_finish();
}

static void run_inflight(void) {
    long concs[32];
    int nc = env_list("BENCH_CURVE_CONCS", "1,2,4,8,16,32,64,128,256,512,1024", concs, 32);
    kids_start();
    all_do(0, OP_INIT, 0, 1, 0);
    all_do(1, OP_WARMUP, 0, WARMUP, 0);
    /* Each point in blocks, the clients taking turns: one block of 10,000 calls
     * lasts 5 ms over stdio, where one hiccup of the machine halved a point. */
    for (int i = 0; i < nc; i++) {
        long n = CURVE_N < concs[i] * 4 ? concs[i] * 4 : CURVE_N;
        for (int b = 0; b < CURVE_BLOCKS; b++) all_do(i + b, OP_CURVE_INFLIGHT, b, n, concs[i]);
    }
    kids_finish();
}

static void run_sizes(void) {
    long sizes[32];
    int ns = env_list("BENCH_CURVE_SIZES", "32,1024,32768,262144,1048576,4194304,16777216", sizes,
                      32);
    long budget = env_long("BENCH_CURVE_BYTES", 64l << 20);
    long maxsz = 0;
    for (int i = 0; i < ns; i++)
        if (sizes[i] > maxsz) maxsz = sizes[i];
    /* room for the escaped text and the envelope */
    if ((size_t)maxsz * 2 + (1u << 20) > (16u << 20)) g_max_message = (size_t)maxsz * 2 + (1u << 20);
    kids_start();
    all_do(0, OP_INIT, 0, 1, 0);
    for (int i = 0; i < ns; i++) {
        long reps = budget / sizes[i];
        if (reps < 3) reps = 3;
        if (reps > 2000) reps = 2000;
        if (CURVE_N < reps) reps = CURVE_N < 3 ? 3 : CURVE_N;
        all_do(i, OP_CURVE_SIZE, 0, reps, sizes[i]);
    }
    kids_finish();
}

static void run_clients(void) {
    long ks[32];
    int nk = env_list("BENCH_CURVE_CLIENTS", "1,2,5,10,20,50,100", ks, 32);
    for (int i = 0; i < nk; i++) {
        /* fresh processes for each point, so RSS is that many clients' own */
        kids_start();
        long n = CURVE_N < ks[i] * 4 ? ks[i] * 4 : CURVE_N;
        all_do(i, OP_CURVE_CLIENTS, 0, n, ks[i]);
        kids_finish();
    }
}

/* Splits a command line like a shell would for plain words and quotes. */
static char **split_command(const char *s, int *argc) {
    size_t cap = 8;
    char **v = xmalloc(sizeof(char *) * cap);
    int n = 0;
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        char *w = xmalloc(strlen(p) + 1), *d = w;
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                while (*p && *p != q) *d++ = *p++;
                if (*p) p++;
            } else {
                *d++ = *p++;
            }
        }
        *d = 0;
        if ((size_t)n + 2 > cap) v = realloc(v, sizeof(char *) * (cap *= 2));
        v[n++] = w;
    }
    v[n] = NULL;
    *argc = n;
    return v;
}

static void parse_url(const char *url) {
    const char *p = url;
    if (strncmp(p, "http://", 7)) die("the raw floor speaks plain http:// on loopback only");
    p += 7;
    const char *slash = strchr(p, '/');
    size_t hl = slash ? (size_t)(slash - p) : strlen(p);
    if (hl >= sizeof g_host_hdr) die("bad URL");
    memcpy(g_host_hdr, p, hl);
    g_host_hdr[hl] = 0;
    snprintf(g_path, sizeof g_path, "%s", slash ? slash : "/");
    char host[128];
    snprintf(host, sizeof host, "%s", g_host_hdr);
    char *colon = strrchr(host, ':');
    int port = 80;
    if (colon) {
        port = atoi(colon + 1);
        *colon = 0;
    }
    if (!strcmp(host, "localhost")) snprintf(host, sizeof host, "127.0.0.1");
    const char *proxy = getenv("BENCH_PROXY");
    if (proxy && *proxy) {
        /* host:port of the proxy; requests name the whole URL */
        snprintf(g_proxy, sizeof g_proxy, "http://%s", proxy);
        snprintf(g_path, sizeof g_path, "%s", url);
        snprintf(host, sizeof host, "%s", proxy);
        colon = strrchr(host, ':');
        if (!colon) die("BENCH_PROXY=%s: host:port", proxy);
        port = atoi(colon + 1);
        *colon = 0;
    }
    memset(&g_addr, 0, sizeof g_addr);
    g_addr.sin_family = AF_INET;
    g_addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &g_addr.sin_addr) != 1) die("the URL's host must be IPv4 loopback");
}

static void usage(void) {
    fprintf(stderr,
            "usage: mcpc_bench stdio \"SERVER COMMAND\" | http URL\n"
            "         [--client mcpc|raw|both] [--mode std|inflight|clients|sizes] [--label L]\n");
    exit(1);
}

int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN);
    if (argc < 3) usage();
    const char *mode = "std";
    g_label = argv[1];
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--client") && i + 1 < argc) {
            const char *c = argv[++i];
            g_want_mcpc = !strcmp(c, "mcpc") || !strcmp(c, "both");
            g_want_raw = !strcmp(c, "raw") || !strcmp(c, "both");
            if (!g_want_mcpc && !g_want_raw) usage();
        } else if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            mode = argv[++i];
        } else if (!strcmp(argv[i], "--label") && i + 1 < argc) {
            g_label = argv[++i];
        } else {
            usage();
        }
    }
    if (!strcmp(argv[1], "stdio")) {
        g_kind = T_STDIO;
        g_argv = split_command(argv[2], &g_argc);
        if (g_argc == 0) usage();
    } else if (!strcmp(argv[1], "http")) {
        g_kind = T_HTTP;
        g_url = argv[2];
        parse_url(g_url);
    } else {
        usage();
    }
    W1_N = env_long("BENCH_W1_N", 5000);
    W2_N = env_long("BENCH_W2_N", 20000);
    W2_CONC = env_long("BENCH_W2_CONC", 64);
    W3_REPS = env_long("BENCH_W3_REPS", 20);
    TOOLS = env_long("BENCH_TOOLS", 1000);
    W4_REPS = env_long("BENCH_W4_REPS", 50);
    W4_BYTES = env_long("BENCH_W4_BYTES", 1l << 20);
    W5_REPS = env_long("BENCH_W5_REPS", 50);
    W6_REPS = env_long("BENCH_W6_REPS", 50);
    /* bench_server reads the same variable for the size of its two resources */
    READ_BYTES = env_long("BENCH_READ_BYTES", 1l << 20);
    WARMUP = env_long("BENCH_WARMUP", 200);
    BLOCKS = env_long("BENCH_BLOCKS", 5);
    INIT_REPS = env_long("BENCH_INIT_REPS", 5);
    IDLE_MS = env_long("BENCH_IDLE_MS", 500);
    CURVE_N = env_long("BENCH_CURVE_N", 10000);
    /* 1: W2 also runs mcpc's blocking-threads way and the raw floor's other way */
    W2_BOTH = env_long("BENCH_W2_BOTH", 1);
    if (INIT_REPS > 64) INIT_REPS = 64;
    if ((size_t)W4_BYTES * 2 + (1u << 20) > (16u << 20))
        g_max_message = (size_t)W4_BYTES * 2 + (1u << 20);
    if ((size_t)READ_BYTES * 2 + (1u << 20) > (16u << 20) &&
        (size_t)READ_BYTES * 2 + (1u << 20) > g_max_message)
        g_max_message = (size_t)READ_BYTES * 2 + (1u << 20);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (!strcmp(mode, "std"))
        run_std();
    else if (!strcmp(mode, "inflight"))
        run_inflight();
    else if (!strcmp(mode, "sizes"))
        run_sizes();
    else if (!strcmp(mode, "clients"))
        run_clients();
    else
        usage();
    return 0;
}
