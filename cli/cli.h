/* cli.h - what the files of the mcpc command line share: exit statuses, messages
 * and output (output.c), and text helpers (text.c). */
#ifndef MCPC_CLI_H
#define MCPC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mcpc.h"

/* The exit statuses; help.c describes each for --help and the man page. */
enum {
    EXIT_OK = 0,
    EXIT_USAGE = 1,
    EXIT_TOOL_ERROR = 2,
    EXIT_ERROR = 3, /* transport, protocol, handshake, JSON-RPC, anything else */
    EXIT_TIMEOUT = 4,
    EXIT_CANCELLED = 5,
};

#if defined(__MINGW32__)
/* mingw's C99 printf (__USE_MINGW_ANSI_STDIO), not msvcrt's, which lacks %zu. */
#define PRINTF_LIKE(f, a) __attribute__((format(gnu_printf, f, a)))
#elif defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* ---- output.c ---------------------------------------------------------------- */

/* Prints "mcpc: MESSAGE" and the --help hint; returns EXIT_USAGE. */
PRINTF_LIKE(1, 2)
int usage_error(const char *fmt, ...);

/* Writes text that may hold server-controlled bytes, escaping control characters. */
void put_sanitized(FILE *f, const char *s);

/* Reports the failure of the mcpc call that just returned `st`, as
 * "mcpc: STATUS_NAME: message"; before any other mcpc call on this thread. */
void report_status(mcpc_status_t st);

/* The exit status for an mcpc status. */
int exit_code_for(mcpc_status_t st);

/* Prints one JSON document and a newline on stdout; returns an exit status. */
int print_json(const char *json);

/* Prints `json` on success, else reports `st`; returns the exit status. */
int json_or_error(mcpc_status_t st, const char *json);

/* ---- text.c ------------------------------------------------------------------ */

/* A growing NUL-terminated string; {0} is empty. */
struct buf {
    char *p;
    size_t len, cap;
};

/* Appends `n` bytes of `s`; false when out of memory. */
bool buf_add(struct buf *b, const char *s, size_t n);

/* Appends `s` as a JSON string, quotes included; false when out of memory. */
bool buf_add_json_string(struct buf *b, const char *s);

/* A command line split into words: argv[argc] is NULL. */
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
