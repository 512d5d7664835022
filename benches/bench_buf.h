/* A growable byte buffer with a consumed front, shared by the benchmark server and
 * the harness. Header-only: every function is static. Out of memory ends the
 * process (these are benchmark programs). */
#ifndef BENCH_BUF_H
#define BENCH_BUF_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *p;
    size_t len, cap, off; /* off: bytes already consumed from the front */
} buf_t;

/* Room for `extra` more bytes: the consumed front is dropped first, and the buffer
 * only grows when that is not enough. */
static void buf_reserve(buf_t *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    if (b->off > 0) {
        memmove(b->p, b->p + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
        if (b->len + extra <= b->cap) return;
    }
    size_t cap = b->cap ? b->cap : 16384;
    while (cap < b->len + extra) cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) {
        fputs("out of memory\n", stderr);
        exit(2);
    }
    b->cap = cap;
}

static void buf_put(buf_t *b, const void *d, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->len, d, n);
    b->len += n;
}

static void buf_consume(buf_t *b, size_t n) {
    b->off += n;
    if (b->off == b->len) b->off = b->len = 0;
}

static void buf_free(buf_t *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

#endif
