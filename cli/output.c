/*
 * output.c - what mcpc prints: one JSON document on stdout, and on stderr usage
 * errors and failed calls, with the exit status each one means.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcpc.h"

#include "cli.h"

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("mcpc: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\nTry 'mcpc --help' for more information.\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

/*
 * A JSON-RPC error message ends up in mcpc_last_error_message, so the server
 * controls these bytes: C0 controls, DEL and UTF-8-encoded C1 controls are
 * written as escapes, never to the terminal.
 */
void put_sanitized(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    for (; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\x%02x", *p);
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            fprintf(f, "\\u%04x", p[1]);
            p++;
        } else {
            fputc(*p, f);
        }
    }
}

/* The borrowed message is only valid until the next mcpc call on this thread:
 * that is also why the (static) status name is fetched before it, not after. */
void report_status(mcpc_status_t st)
{
    const char *name = mcpc_status_name((int32_t)st);
    const char *msg = mcpc_last_error_message();
    fprintf(stderr, "mcpc: %s: ", name);
    put_sanitized(stderr, msg);
    fputc('\n', stderr);
}

int exit_code_for(mcpc_status_t st)
{
    switch (st) {
    case MCPC_OK:
        return EXIT_OK;
    case MCPC_ERR_INVALID_ARG:
    case MCPC_ERR_INVALID_UTF8:
        return EXIT_USAGE;
    case MCPC_ERR_TOOL:
        return EXIT_TOOL_ERROR;
    case MCPC_ERR_TIMEOUT:
        return EXIT_TIMEOUT;
    case MCPC_ERR_CANCELLED:
    case MCPC_ERR_LOGIN_CANCELLED:
        return EXIT_CANCELLED;
    default:
        return EXIT_ERROR;
    }
}

int print_json(const char *json)
{
    if (json == NULL) {
        fputs("mcpc: internal error: the library returned no JSON\n", stderr);
        return EXIT_ERROR;
    }
    if (fputs(json, stdout) == EOF || fputc('\n', stdout) == EOF || fflush(stdout) == EOF) {
        fprintf(stderr, "mcpc: cannot write to stdout: %s\n", strerror(errno));
        return EXIT_ERROR;
    }
    return EXIT_OK;
}

int json_or_error(mcpc_status_t st, const char *json)
{
    if (st != MCPC_OK) {
        report_status(st);
        return exit_code_for(st);
    }
    return print_json(json);
}
