/* cli.h - what the files of the mcpc command line share. */
#ifndef MCPC_CLI_H
#define MCPC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Writes text that may hold server-controlled bytes, escaping control characters
 * (mcpc.c). */
void put_sanitized(FILE *f, const char *s);

/* A growing NUL-terminated string (mcpc.c); {0} is empty. */
struct buf {
    char *p;
    size_t len, cap;
};

/* Appends `n` bytes of `s`; false when out of memory. */
bool buf_add(struct buf *b, const char *s, size_t n);

/* Appends `s` as a JSON string, quotes included; false when out of memory. */
bool buf_add_json_string(struct buf *b, const char *s);

/* A command line split into words (mcpc.c): argv[argc] is NULL. */
struct words {
    char *buf;   /* all words, each NUL-terminated */
    char **argv; /* argc pointers into buf, then NULL */
    size_t argc;
};

/* Splits `s` into words like a shell does (quotes, backslash), expanding nothing.
 * Returns NULL on success or a description of the error. */
const char *split_command(const char *s, struct words *w);

/* Frees the words; they are empty afterwards. */
void words_free(struct words *w);

#endif
