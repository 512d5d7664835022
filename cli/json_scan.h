/* A tiny read-only JSON scanner for the CLI's --config and the conformance client:
 * finds a member of an object or an element of an array and hands back the exact
 * text of its value (a pointer into the document and a length), so that values can
 * be passed on to mcpc verbatim. It validates only as much as it needs to skip
 * values: a document is checked whole by the library (mcpc_check_arguments) or comes
 * from mcpc, which parsed it already. */
#ifndef MCPC_JSON_SCAN_H
#define MCPC_JSON_SCAN_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline const char *js_ws(const char *p) {
    while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* Skips one JSON string starting at the opening quote; returns the text after it. */
static inline const char *js_skip_string(const char *p) {
    if (!p || *p != '"') return NULL;
    for (p++; *p; p++) {
        if (*p == '\\') {
            if (!p[1]) return NULL;
            p++;
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Skips one JSON value (after leading whitespace); returns the text after it, or NULL. */
static inline const char *js_skip(const char *p) {
    p = js_ws(p);
    if (!p || !*p) return NULL;
    if (*p == '"') return js_skip_string(p);
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        p = js_ws(p + 1);
        if (p && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                p = js_skip_string(js_ws(p));
                p = js_ws(p);
                if (!p || *p != ':') return NULL;
                p++;
            }
            p = js_ws(js_skip(p));
            if (!p) return NULL;
            if (*p == ',') {
                p++;
                continue;
            }
            return *p == close ? p + 1 : NULL;
        }
    }
    /* number, true, false, null */
    const char *s = p;
    while (*p && strchr("+-.0123456789eEtrufalsn", *p)) p++;
    return p > s ? p : NULL;
}

/* Finds member `key` of the object `obj` (keys compared as raw text, no escapes).
 * On success points *val at its value text and *len at its length. */
static inline int js_get(const char *obj, const char *key, const char **val, size_t *len) {
    const char *p = js_ws(obj);
    if (!p || *p != '{') return 0;
    p = js_ws(p + 1);
    if (*p == '}') return 0;
    size_t klen = strlen(key);
    for (;;) {
        p = js_ws(p);
        const char *kend = js_skip_string(p);
        if (!kend) return 0;
        int match = (size_t)(kend - p - 2) == klen && memcmp(p + 1, key, klen) == 0;
        p = js_ws(kend);
        if (*p != ':') return 0;
        const char *v = js_ws(p + 1);
        const char *end = js_skip(v);
        if (!end) return 0;
        if (match) {
            *val = v;
            *len = (size_t)(end - v);
            return 1;
        }
        p = js_ws(end);
        if (*p != ',') return 0;
        p++;
    }
}

/* Member number `index` of the object `obj`: its key text (without quotes, escapes
 * undecoded) and its value text. */
static inline int js_member(const char *obj, size_t index, const char **key, size_t *klen, const char **val,
                            size_t *len) {
    const char *p = js_ws(obj);
    if (!p || *p != '{') return 0;
    p = js_ws(p + 1);
    if (*p == '}') return 0;
    for (size_t i = 0;; i++) {
        p = js_ws(p);
        const char *kend = js_skip_string(p);
        if (!kend) return 0;
        const char *k = p + 1;
        size_t kl = (size_t)(kend - p - 2);
        p = js_ws(kend);
        if (*p != ':') return 0;
        const char *v = js_ws(p + 1);
        const char *end = js_skip(v);
        if (!end) return 0;
        if (i == index) {
            *key = k;
            *klen = kl;
            *val = v;
            *len = (size_t)(end - v);
            return 1;
        }
        p = js_ws(end);
        if (*p != ',') return 0;
        p++;
    }
}

/* Element `index` of the array `arr`. */
static inline int js_index(const char *arr, size_t index, const char **val, size_t *len) {
    const char *p = js_ws(arr);
    if (!p || *p != '[') return 0;
    p = js_ws(p + 1);
    if (*p == ']') return 0;
    for (size_t i = 0;; i++) {
        const char *v = js_ws(p);
        const char *end = js_skip(v);
        if (!end) return 0;
        if (i == index) {
            *val = v;
            *len = (size_t)(end - v);
            return 1;
        }
        p = js_ws(end);
        if (*p != ',') return 0;
        p++;
    }
}

/* A malloc'd NUL-terminated copy of `len` bytes at `s`. */
static inline char *js_dup(const char *s, size_t len) {
    char *out = malloc(len + 1);
    if (!out) abort();
    memcpy(out, s, len);
    out[len] = 0;
    return out;
}

/* Decodes the JSON string value at `val` into a malloc'd UTF-8 string (NULL if it is
 * not a string, or holds \u0000 or a lone surrogate, which a C string cannot carry).
 * \uXXXX escapes, surrogate pairs included, become UTF-8. */
static inline char *js_string(const char *val) {
    val = js_ws(val);
    const char *end = js_skip_string(val);
    if (!end) return NULL;
    char *out = malloc((size_t)(end - val) + 1);
    if (!out) abort();
    size_t n = 0;
    for (const char *p = val + 1; p < end - 1; p++) {
        if (*p != '\\') {
            out[n++] = *p;
            continue;
        }
        p++;
        switch (*p) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u': {
            unsigned cp = (unsigned)strtoul((char[]){p[1], p[2], p[3], p[4], 0}, NULL, 16);
            p += 4;
            unsigned lo = 0;
            if (cp >= 0xD800 && cp < 0xDC00 && p[1] == '\\' && p[2] == 'u')
                lo = (unsigned)strtoul((char[]){p[3], p[4], p[5], p[6], 0}, NULL, 16);
            if (cp == 0 || (cp >= 0xD800 && cp < 0xE000 && (cp >= 0xDC00 || lo < 0xDC00 || lo >= 0xE000))) {
                free(out);
                return NULL;
            }
            if (lo) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xC0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                out[n++] = (char)(0xE0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[n++] = (char)(0xF0 | (cp >> 18));
                out[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default: out[n++] = *p; break; /* \" \\ \/ */
        }
    }
    out[n] = 0;
    return out;
}

/* Member `key` of `obj` as a decoded string (malloc'd), or NULL. */
static inline char *js_get_string(const char *obj, const char *key) {
    const char *v;
    size_t len;
    return js_get(obj, key, &v, &len) ? js_string(v) : NULL;
}

/* Member `key` of `obj` as a malloc'd copy of its JSON text, or NULL. */
static inline char *js_get_raw(const char *obj, const char *key) {
    const char *v;
    size_t len;
    return js_get(obj, key, &v, &len) ? js_dup(v, len) : NULL;
}

#endif
