/*
 * text.c - strings the files of cli/ build and split: a growing buffer, JSON
 * string escaping, and a command line split into words like a shell would,
 * without a shell (--stdio, --assertion-command).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Doubles the room when full, so appending stays linear. */
bool buf_add(struct buf *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (p == NULL)
            return false;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
    return true;
}

/* Appends `s` as a JSON string, quotes included. */
bool buf_add_json_string(struct buf *b, const char *s)
{
    bool ok = buf_add(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; ok && *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            ok = buf_add(b, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            ok = buf_add(b, esc, 6);
        } else {
            ok = buf_add(b, (const char *)p, 1);
        }
    }
    return ok && buf_add(b, "\"", 1);
}

void words_free(struct words *w)
{
    free(w->argv);
    free(w->buf);
    w->argv = NULL;
    w->buf = NULL;
    w->argc = 0;
}

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

/*
 * Splits `s` into words: unquoted blanks separate words; '...' is literal;
 * "..." is literal except for backslash before " \ $ `; a backslash outside quotes
 * takes the next character literally. Nothing is expanded. Returns NULL on success
 * or a description of the error.
 */
const char *split_command(const char *s, struct words *w)
{
    size_t len = strlen(s);
    const char *err = NULL;

    w->argc = 0;
    /* Words never take more room than the input (each separator or quote pair
     * pays for a NUL); a word uses at least one input byte plus a separator. */
    w->buf = malloc(len + 1);
    w->argv = malloc(sizeof *w->argv * (len / 2 + 2));
    if (w->buf == NULL || w->argv == NULL) {
        words_free(w);
        return "out of memory";
    }

    const char *p = s;
    char *o = w->buf;
    for (;;) {
        while (is_blank(*p))
            p++;
        if (*p == '\0')
            break;
        w->argv[w->argc++] = o;
        while (*p != '\0' && !is_blank(*p)) {
            char c = *p++;
            if (c == '\'') {
                while (*p != '\0' && *p != '\'')
                    *o++ = *p++;
                if (*p == '\0') {
                    err = "unterminated single quote";
                    goto fail;
                }
                p++;
            } else if (c == '"') {
                while (*p != '\0' && *p != '"') {
                    if (*p == '\\' && p[1] != '\0' && strchr("\"\\$`", p[1]) != NULL)
                        p++;
                    *o++ = *p++;
                }
                if (*p == '\0') {
                    err = "unterminated double quote";
                    goto fail;
                }
                p++;
            } else if (c == '\\') {
                if (*p == '\0') {
                    err = "backslash at the end";
                    goto fail;
                }
                *o++ = *p++;
            } else {
                *o++ = c;
            }
        }
        *o++ = '\0';
    }
    if (w->argc == 0) {
        err = "empty command";
        goto fail;
    }
    if (w->argv[0][0] == '\0') {
        err = "empty program name";
        goto fail;
    }
    w->argv[w->argc] = NULL;
    return NULL;

fail:
    words_free(w);
    return err;
}

