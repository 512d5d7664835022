/* A minimal JSON scanner shared by the benchmark server and the raw-floor client.
 *
 * It validates structure (objects, arrays, strings with their escapes, numbers,
 * literals) while walking, finds the members it is asked for, and decodes and
 * encodes strings. It never builds a tree: the raw floor does the least work a
 * correct client must do (find the message's end, its id, the fields it needs).
 * Header-only, static functions.
 */
#ifndef BENCH_JSON_LITE_H
#define BENCH_JSON_LITE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define JL_MAX_DEPTH 64

/* 1 for bytes that end the fast scan of a string body: '"', '\\' and controls. */
static const unsigned char jl_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1 /* '"' */, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 /* '\\' */, 0, 0, 0,
};

/* The first byte in [p, e) that is '"', '\\' or a control character (e if none):
 * eight bytes at a time (SWAR; the lowest flagged byte is always exact). */
static inline const char *jl_scan_stop(const char *p, const char *e) {
    const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
    while (e - p >= 8) {
        uint64_t x, q, b;
        memcpy(&x, p, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        uint64_t t = (((q - ones) & ~q) | ((b - ones) & ~b) | ((x - ones * 0x20) & ~x)) & highs;
        if (t) return p + (__builtin_ctzll(t) >> 3);
        p += 8;
    }
    while (p < e && !jl_stop[(unsigned char)*p]) p++;
    return p;
}

static inline const char *jl_ws(const char *p, const char *e) {
    while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static inline int jl_hex(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* p at '"'. Returns the position after the closing quote, or NULL. *has_esc is set
 * when the body holds escapes (so it must be decoded). */
static inline const char *jl_string(const char *p, const char *e, int *has_esc) {
    if (p >= e || *p != '"') return NULL;
    p++;
    int esc = 0;
    for (;;) {
        p = jl_scan_stop(p, e);
        if (p >= e) return NULL;
        if (*p == '"') break;
        if (*p != '\\') return NULL; /* a raw control character */
        esc = 1;
        if (++p >= e) return NULL;
        switch (*p) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            p++;
            break;
        case 'u':
            if (e - p < 5) return NULL;
            for (int i = 1; i <= 4; i++)
                if (jl_hex(p[i]) < 0) return NULL;
            p += 5;
            break;
        default:
            return NULL;
        }
    }
    if (has_esc) *has_esc = esc;
    return p + 1;
}

/* The end of a string already validated (inside a span a validating walk passed):
 * finds the closing quote with memchr, skipping escaped quotes. */
static inline const char *jl_string_trusted(const char *p, const char *e) {
    p++;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(e - p));
        if (!q) return NULL;
        const char *b = q;
        while (b > p && b[-1] == '\\') b--;
        if (((q - b) & 1) == 0) return q + 1;
        p = q + 1;
    }
}

static inline const char *jl_str(const char *p, const char *e, int tr) {
    if (!tr) return jl_string(p, e, NULL);
    return (p < e && *p == '"') ? jl_string_trusted(p, e) : NULL;
}

static inline const char *jl_number(const char *p, const char *e) {
    const char *s = p;
    if (p < e && *p == '-') p++;
    if (p >= e) return NULL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < e && *p >= '0' && *p <= '9') p++;
    } else {
        return NULL;
    }
    if (p < e && *p == '.') {
        p++;
        if (p >= e || *p < '0' || *p > '9') return NULL;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        if (p >= e || *p < '0' || *p > '9') return NULL;
        while (p < e && *p >= '0' && *p <= '9') p++;
    }
    return p > s ? p : NULL;
}

static inline const char *jl_value(const char *p, const char *e, int depth, int tr);

/* p at '{' or '['. */
static inline const char *jl_container(const char *p, const char *e, int depth, int tr) {
    if (depth > JL_MAX_DEPTH) return NULL;
    char close = *p == '{' ? '}' : ']';
    int obj = *p == '{';
    p = jl_ws(p + 1, e);
    if (p < e && *p == close) return p + 1;
    for (;;) {
        if (obj) {
            p = jl_str(p, e, tr);
            if (!p) return NULL;
            p = jl_ws(p, e);
            if (p >= e || *p != ':') return NULL;
            p = jl_ws(p + 1, e);
        }
        p = jl_value(p, e, depth + 1, tr);
        if (!p) return NULL;
        p = jl_ws(p, e);
        if (p >= e) return NULL;
        if (*p == close) return p + 1;
        if (*p != ',') return NULL;
        p = jl_ws(p + 1, e);
    }
}

/* Skips one value starting at p (no leading whitespace). Returns its end or NULL. */
static inline const char *jl_value(const char *p, const char *e, int depth, int tr) {
    if (p >= e) return NULL;
    switch (*p) {
    case '{': case '[': return jl_container(p, e, depth, tr);
    case '"': return jl_str(p, e, tr);
    case 't': return (e - p >= 4 && !memcmp(p, "true", 4)) ? p + 4 : NULL;
    case 'f': return (e - p >= 5 && !memcmp(p, "false", 5)) ? p + 5 : NULL;
    case 'n': return (e - p >= 4 && !memcmp(p, "null", 4)) ? p + 4 : NULL;
    default: return jl_number(p, e);
    }
}

typedef struct {
    const char *s, *e; /* the value's span, NULL when absent */
} jl_span;

/* Walks the object at p (which must be '{'), validating it unless tr (a span a
 * validating walk already passed), and records the spans of the members named in
 * keys[0..n) (keys compared as written, without escapes). Returns the end of the
 * object or NULL. */
static inline const char *jl_object_x(const char *p, const char *e, const char *const *keys,
                                      int n, jl_span *out, int tr) {
    for (int i = 0; i < n; i++) out[i].s = out[i].e = NULL;
    if (p >= e || *p != '{') return NULL;
    p = jl_ws(p + 1, e);
    if (p < e && *p == '}') return p + 1;
    for (;;) {
        const char *ks = p;
        p = jl_str(p, e, tr);
        if (!p) return NULL;
        const char *ke = p;
        p = jl_ws(p, e);
        if (p >= e || *p != ':') return NULL;
        p = jl_ws(p + 1, e);
        const char *vs = p;
        p = jl_value(p, e, 1, tr);
        if (!p) return NULL;
        size_t klen = (size_t)(ke - ks - 2);
        for (int i = 0; i < n; i++) {
            if (strlen(keys[i]) == klen && !memcmp(ks + 1, keys[i], klen)) {
                out[i].s = vs;
                out[i].e = p;
            }
        }
        p = jl_ws(p, e);
        if (p >= e) return NULL;
        if (*p == '}') return p + 1;
        if (*p != ',') return NULL;
        p = jl_ws(p + 1, e);
    }
}

static inline const char *jl_object(const char *p, const char *e, const char *const *keys,
                                    int n, jl_span *out) {
    return jl_object_x(p, e, keys, n, out, 0);
}

static inline const char *jl_object_trusted(const char *p, const char *e,
                                            const char *const *keys, int n, jl_span *out) {
    return jl_object_x(p, e, keys, n, out, 1);
}

static inline int jl_is_string(jl_span v) { return v.s && *v.s == '"'; }

/* True when span v is the string literal lit (no escapes). */
static inline int jl_eq(jl_span v, const char *lit) {
    size_t n = strlen(lit);
    return v.s && (size_t)(v.e - v.s) == n + 2 && v.s[0] == '"' && !memcmp(v.s + 1, lit, n);
}

static inline char *jl_put_utf8(char *d, uint32_t cp) {
    if (cp < 0x80) {
        *d++ = (char)cp;
    } else if (cp < 0x800) {
        *d++ = (char)(0xC0 | (cp >> 6));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *d++ = (char)(0xE0 | (cp >> 12));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *d++ = (char)(0xF0 | (cp >> 18));
        *d++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *d++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *d++ = (char)(0x80 | (cp & 0x3F));
    }
    return d;
}

/* Decodes the body of a validated string span (v.s at '"') into dst (room for
 * v.e - v.s bytes). Returns the decoded length. */
static inline size_t jl_decode(jl_span v, char *dst) {
    const char *p = v.s + 1, *e = v.e - 1;
    char *d = dst;
    while (p < e) {
        const char *q = memchr(p, '\\', (size_t)(e - p));
        if (!q) q = e;
        memcpy(d, p, (size_t)(q - p));
        d += q - p;
        if (q >= e) break;
        q++;
        switch (*q++) {
        case '"': *d++ = '"'; break;
        case '\\': *d++ = '\\'; break;
        case '/': *d++ = '/'; break;
        case 'b': *d++ = '\b'; break;
        case 'f': *d++ = '\f'; break;
        case 'n': *d++ = '\n'; break;
        case 'r': *d++ = '\r'; break;
        case 't': *d++ = '\t'; break;
        default: { /* 'u' */
            uint32_t cp = (uint32_t)(jl_hex(q[0]) << 12 | jl_hex(q[1]) << 8 | jl_hex(q[2]) << 4 |
                                     jl_hex(q[3]));
            q += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && e - q >= 6 && q[0] == '\\' && q[1] == 'u') {
                uint32_t lo = (uint32_t)(jl_hex(q[2]) << 12 | jl_hex(q[3]) << 8 |
                                         jl_hex(q[4]) << 4 | jl_hex(q[5]));
                if (lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    q += 6;
                } else {
                    cp = 0xFFFD;
                }
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD;
            }
            d = jl_put_utf8(d, cp);
        }
        }
        p = q;
    }
    return (size_t)(d - dst);
}

/* Writes src as a JSON string body (no quotes) into dst, which needs room for
 * 6 * len bytes at worst. Returns the length written. */
static inline size_t jl_escape(const char *src, size_t len, char *dst) {
    static const char hex[] = "0123456789abcdef";
    char *d = dst;
    const char *p = src, *e = src + len;
    while (p < e) {
        const char *q = jl_scan_stop(p, e);
        memcpy(d, p, (size_t)(q - p));
        d += q - p;
        if (q >= e) break;
        unsigned char c = (unsigned char)*q++;
        *d++ = '\\';
        switch (c) {
        case '"': *d++ = '"'; break;
        case '\\': *d++ = '\\'; break;
        case '\n': *d++ = 'n'; break;
        case '\r': *d++ = 'r'; break;
        case '\t': *d++ = 't'; break;
        case '\b': *d++ = 'b'; break;
        case '\f': *d++ = 'f'; break;
        default:
            *d++ = 'u'; *d++ = '0'; *d++ = '0';
            *d++ = hex[c >> 4]; *d++ = hex[c & 15];
        }
        p = q;
    }
    return (size_t)(d - dst);
}

/* Parses a non-negative integer span (a JSON-RPC id as the harness sends it). */
static inline int jl_u64(jl_span v, uint64_t *out) {
    if (!v.s || v.s == v.e) return 0;
    uint64_t n = 0;
    for (const char *p = v.s; p < v.e; p++) {
        if (*p < '0' || *p > '9') return 0;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    *out = n;
    return 1;
}

#endif
