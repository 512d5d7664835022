/* The payload the benchmark server and the harness both make, byte for byte the
 * same, so a client can check what it read: the text of W4's echo and of both
 * resources (W5's as text, W6's as a blob in base64: the decoder's work does not
 * depend on the bytes, and one copy in the harness serves every check), and base64
 * both ways. Header-only:
 * every function is static inline. */
#ifndef BENCH_DATA_H
#define BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

/* `len` bytes of ASCII text with a line end every 72 bytes, as text has: it
 * travels escaped as \n. */
static inline void bench_text_fill(char *p, size_t len) {
    static const char alphabet[] =
        "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:!?-+*/()";
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        p[i] = (i % 72 == 71) ? '\n' : alphabet[x % (sizeof alphabet - 1)];
    }
}

static const char bench_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Standard base64 with padding into dst (room for 4 * ((len + 2) / 3) bytes);
 * returns the length written. */
static inline size_t bench_b64_encode(const unsigned char *src, size_t len, char *dst) {
    char *d = dst;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8 | src[i + 2];
        *d++ = bench_b64[v >> 18], *d++ = bench_b64[(v >> 12) & 63];
        *d++ = bench_b64[(v >> 6) & 63], *d++ = bench_b64[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)src[i] << 16;
        *d++ = bench_b64[v >> 18], *d++ = bench_b64[(v >> 12) & 63], *d++ = '=', *d++ = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)src[i] << 16 | (uint32_t)src[i + 1] << 8;
        *d++ = bench_b64[v >> 18], *d++ = bench_b64[(v >> 12) & 63];
        *d++ = bench_b64[(v >> 6) & 63], *d++ = '=';
    }
    return (size_t)(d - dst);
}

/* Decodes standard base64 with padding (every character checked) into dst (room for
 * 3 * len / 4 bytes); returns the length, or (size_t)-1 if it is not base64. */
static inline size_t bench_b64_decode(const char *src, size_t len, unsigned char *dst) {
    static signed char val[256];
    if (!val[0]) { /* made once: -1 everywhere but the alphabet */
        for (int c = 0; c < 256; c++) val[c] = -1;
        for (int k = 0; k < 64; k++) val[(unsigned char)bench_b64[k]] = (signed char)k;
    }
    if (len % 4) return (size_t)-1;
    size_t pad = len && src[len - 1] == '=' ? (src[len - 2] == '=' ? 2 : 1) : 0;
    unsigned char *d = dst;
    for (size_t i = 0; i < len; i += 4) {
        int last = i + 4 == len;
        int a = val[(unsigned char)src[i]], b = val[(unsigned char)src[i + 1]];
        int c = last && pad == 2 ? 0 : val[(unsigned char)src[i + 2]];
        int e = last && pad >= 1 ? 0 : val[(unsigned char)src[i + 3]];
        if ((a | b | c | e) < 0) return (size_t)-1;
        uint32_t v = (uint32_t)a << 18 | (uint32_t)b << 12 | (uint32_t)c << 6 | (uint32_t)e;
        *d++ = (unsigned char)(v >> 16);
        if (!(last && pad == 2)) *d++ = (unsigned char)(v >> 8);
        if (!(last && pad >= 1)) *d++ = (unsigned char)v;
    }
    return (size_t)(d - dst);
}

#endif
