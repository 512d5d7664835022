/*
 * config.c - one server of the configuration file MCP hosts share:
 *
 *   {"mcpServers": {"NAME": {"command": "npx", "args": ["-y", "server"],
 *                            "env": {"KEY": "value"}, "cwd": "/dir"},
 *                   "OTHER": {"url": "https://host/mcp", "headers": {"X-Key": "v"},
 *                             "type": "sse"}}}
 *
 * The file is the user's own: the library checks that it is one JSON object
 * (mcpc_check_arguments) before the scanner reads it.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "config.h"
#include "json_scan.h"

/* The whole file, NUL-terminated (malloc'd), or NULL. At most 4 MiB. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0 || len > (4u << 20))
            break;
        if (cap - len - 1 == 0) {
            char *more = realloc(buf, cap * 2);
            if (more == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = more;
            cap *= 2;
        }
    }
    int bad = ferror(f) || len > (4u << 20);
    fclose(f);
    if (buf == NULL || bad) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* `key` of `obj` as a string, or NULL when absent; *bad when it is not a string. */
static char *string_member(const char *obj, const char *key, int *bad)
{
    const char *v;
    size_t len;
    if (!js_get(obj, key, &v, &len))
        return NULL;
    char *s = js_string(v);
    if (s == NULL)
        *bad = 1;
    return s;
}

/* The members of the object `key` of `obj` as "K<sep>V" strings (values must be
 * strings). 0, or -1 when it is not an object of strings. */
static int pairs(const char *obj, const char *key, const char *sep, char ***out, size_t *n)
{
    const char *o;
    size_t olen;
    *out = NULL;
    *n = 0;
    if (!js_get(obj, key, &o, &olen))
        return 0;
    if (*o != '{')
        return -1;
    const char *k, *v;
    size_t klen, vlen;
    while (js_member(o, *n, &k, &klen, &v, &vlen)) {
        if (strcmp(sep, "=") == 0 && memchr(k, '=', klen) != NULL)
            return -1; /* an environment variable's name holds no '=' */
        char *value = js_string(v);
        if (value == NULL)
            return -1;
        char *kv = malloc(klen + strlen(sep) + strlen(value) + 1);
        char **grown = realloc(*out, (*n + 1) * sizeof **out);
        if (kv == NULL || grown == NULL) {
            free(kv);
            free(value);
            if (grown != NULL)
                *out = grown;
            return -1;
        }
        sprintf(kv, "%.*s%s%s", (int)klen, k, sep, value);
        free(value);
        *out = grown;
        (*out)[(*n)++] = kv;
    }
    return 0;
}

/* command and args into argv words (no shell: each element is one word). */
static int command_words(const char *entry, const char *command, struct words *w)
{
    size_t total = strlen(command) + 1, n = 1;
    const char *args = NULL, *v;
    size_t alen, vlen;
    if (js_get(entry, "args", &args, &alen)) {
        if (*args != '[')
            return -1;
        for (; js_index(args, n - 1, &v, &vlen); n++) {
            char *s = js_string(v);
            if (s == NULL)
                return -1;
            total += strlen(s) + 1;
            free(s);
        }
    }
    w->buf = malloc(total);
    w->argv = calloc(n + 1, sizeof *w->argv);
    if (w->buf == NULL || w->argv == NULL)
        return -1;
    char *p = w->buf;
    strcpy(p, command);
    w->argv[0] = p;
    p += strlen(command) + 1;
    for (size_t i = 1; i < n; i++) {
        js_index(args, i - 1, &v, &vlen);
        char *s = js_string(v);
        strcpy(p, s);
        w->argv[i] = p;
        p += strlen(s) + 1;
        free(s);
    }
    w->argc = n;
    return 0;
}

int server_config_load(const char *path, const char *name, struct server_config *out, const char **why)
{
    memset(out, 0, sizeof *out);
    char *text = slurp(path);
    if (text == NULL) {
        *why = errno == ENOENT ? "no such file" : "cannot be read (or is over 4 MiB)";
        return -1;
    }
    if (mcpc_check_arguments(text) != MCPC_OK) {
        *why = mcpc_last_error_message();
        free(text);
        return -1;
    }
    const char *servers, *entry;
    size_t slen, elen;
    if (!js_get(text, "mcpServers", &servers, &slen) && !js_get(text, "servers", &servers, &slen)) {
        *why = "it has no \"mcpServers\" (or \"servers\") object";
        free(text);
        return -1;
    }
    if (!js_get(servers, name, &entry, &elen) || *entry != '{') {
        *why = "it names no such server (or its entry is not an object)";
        free(text);
        return -1;
    }
    int bad = 0;
    char *command = string_member(entry, "command", &bad);
    out->url = string_member(entry, "url", &bad);
    out->cwd = string_member(entry, "cwd", &bad);
    char *type = string_member(entry, "type", &bad);
    out->sse = type != NULL && strcmp(type, "sse") == 0;
    free(type);
    if (!bad && pairs(entry, "env", "=", &out->env, &out->n_env) != 0)
        bad = 1;
    if (!bad && pairs(entry, "headers", ": ", &out->headers, &out->n_headers) != 0)
        bad = 1;
    if (!bad && command != NULL && command_words(entry, command, &out->argv) != 0)
        bad = 1;
    free(command);
    free(text);
    if (bad) {
        *why = "a member has the wrong type (command, url, cwd, type: strings; args: strings; "
               "env, headers: objects of strings), or a string holds \\u0000 or a lone surrogate, "
               "or an env name holds '='";
    } else if ((out->argv.argc == 0) == (out->url == NULL)) {
        *why = "the server needs exactly one of \"command\" and \"url\"";
        bad = 1;
    }
    if (bad) {
        server_config_free(out);
        return -1;
    }
    return 0;
}

void server_config_free(struct server_config *c)
{
    words_free(&c->argv);
    free(c->url);
    free(c->cwd);
    for (size_t i = 0; i < c->n_env; i++)
        free(c->env[i]);
    free(c->env);
    for (size_t i = 0; i < c->n_headers; i++)
        free(c->headers[i]);
    free(c->headers);
    memset(c, 0, sizeof *c);
}
