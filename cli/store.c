/*
 * store.c - the JSON file behind `mcpc --oauth-store FILE` (see store.h).
 *
 * The values are mcpc's JSON texts holding tokens and client secrets, so the file
 * is only ever written as a fresh 0600 file renamed over the old one: a crash
 * leaves the old or the new store, never half of one, and never a readable one.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"

/* A store larger than this is not one mcpc wrote. */
#define STORE_MAX_BYTES (16u << 20)

struct entry {
    char *key;
    char *value;
};

struct store {
    char *path;
    pthread_mutex_t lock; /* the library never overlaps calls; this is cheap insurance */
    struct entry *entries;
    size_t n, cap;
};

/* ---- parsing: one JSON object of strings --------------------------------- */

struct parser {
    const char *p, *end;
};

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static char *put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xc0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xe0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (char)(0xf0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3f));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (char)(0x80 | (cp & 0x3f));
    }
    return o;
}

/* Parses a JSON string at ps->p into a malloc'd C string; NULL when malformed
 * (or holding a NUL, which no key or value may). */
static char *parse_string(struct parser *ps)
{
    if (ps->p >= ps->end || *ps->p != '"')
        return NULL;
    ps->p++;
    /* Escapes never decode to more bytes than they take. */
    char *out = malloc((size_t)(ps->end - ps->p) + 1);
    if (out == NULL)
        return NULL;
    char *o = out;
    while (ps->p < ps->end && *ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p++;
        if (c < 0x20)
            goto bad;
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        if (ps->p >= ps->end)
            goto bad;
        char e = *ps->p++;
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e != '\0' && simple != NULL) {
            *o++ = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            continue;
        }
        unsigned cp, lo;
        if (e != 'u' || ps->end - ps->p < 4 || hex4(ps->p, &cp) != 0)
            goto bad;
        ps->p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
            if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' || hex4(ps->p + 2, &lo) != 0 ||
                lo < 0xdc00 || lo > 0xdfff)
                goto bad;
            ps->p += 6;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if ((cp >= 0xdc00 && cp <= 0xdfff) || cp == 0) {
            goto bad;
        }
        o = put_utf8(o, cp);
    }
    if (ps->p >= ps->end)
        goto bad;
    ps->p++;
    *o = '\0';
    return out;
bad:
    free(out);
    return NULL;
}

/* ---- the entries ---------------------------------------------------------- */

static struct entry *find(struct store *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->entries[i].key, key) == 0)
            return &s->entries[i];
    return NULL;
}

/* Sets key to value (both taken over); false when out of memory (both freed). */
static bool put(struct store *s, char *key, char *value)
{
    struct entry *e = find(s, key);
    if (e != NULL) {
        free(key);
        free(e->value);
        e->value = value;
        return true;
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct entry *grown = realloc(s->entries, cap * sizeof *grown);
        if (grown == NULL) {
            free(key);
            free(value);
            return false;
        }
        s->entries = grown;
        s->cap = cap;
    }
    s->entries[s->n].key = key;
    s->entries[s->n].value = value;
    s->n++;
    return true;
}

static void del(struct store *s, const char *key)
{
    struct entry *e = find(s, key);
    if (e == NULL)
        return;
    free(e->key);
    free(e->value);
    *e = s->entries[--s->n];
}

static const char *parse_store(struct store *s, const char *text, size_t len)
{
    struct parser ps = {text, text + len};
    skip_ws(&ps);
    if (ps.p >= ps.end || *ps.p++ != '{')
        return "not a JSON object";
    skip_ws(&ps);
    if (ps.p < ps.end && *ps.p == '}') {
        ps.p++;
    } else {
        for (;;) {
            skip_ws(&ps);
            char *key = parse_string(&ps);
            if (key == NULL)
                return "a key is not a valid JSON string";
            skip_ws(&ps);
            if (ps.p >= ps.end || *ps.p++ != ':') {
                free(key);
                return "a key has no ':'";
            }
            skip_ws(&ps);
            char *value = parse_string(&ps);
            if (value == NULL) {
                free(key);
                return "a value is not a valid JSON string";
            }
            if (!put(s, key, value))
                return "out of memory";
            skip_ws(&ps);
            if (ps.p < ps.end && *ps.p == ',') {
                ps.p++;
                continue;
            }
            if (ps.p < ps.end && *ps.p == '}') {
                ps.p++;
                break;
            }
            return "expected ',' or '}'";
        }
    }
    skip_ws(&ps);
    return ps.p == ps.end ? NULL : "text after the object";
}

/* Reads the whole file; NULL with errno set (ENOENT: no store yet). */
static char *read_file(const char *path, size_t *len, const char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        *why = strerror(errno);
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
    } else if ((uintmax_t)st.st_size > STORE_MAX_BYTES) {
        *why = "larger than 16 MiB";
    } else if ((buf = malloc((size_t)st.st_size + 1)) == NULL) {
        *why = "out of memory";
    } else {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        buf[got] = '\0';
        *len = got;
    }
    close(fd);
    return buf;
}

struct store *store_open(const char *path, const char **why)
{
    struct store *s = calloc(1, sizeof *s);
    if (s == NULL || (s->path = strdup(path)) == NULL) {
        free(s);
        *why = "out of memory";
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    /* Saving replaces the file through its directory: find out now, not after a login. */
    if (!plat_dir_writable(path, why)) {
        store_free(s);
        return NULL;
    }
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return s; /* created at the first save */
    size_t len = 0;
    char *text = read_file(path, &len, why);
    if (text == NULL) {
        store_free(s);
        return NULL;
    }
    *why = parse_store(s, text, len);
    free(text);
    if (*why != NULL) {
        store_free(s);
        return NULL;
    }
    return s;
}

void store_free(struct store *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->entries[i].key);
        free(s->entries[i].value);
    }
    free(s->entries);
    free(s->path);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- writing -------------------------------------------------------------- */

static void write_string(FILE *f, const char *str)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)str; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Writes the store to a fresh 0600 file beside it (owner-only on Windows) and
 * renames that over it. */
static bool write_store(struct store *s, const char **why)
{
    char *tmp = NULL;
    FILE *f = plat_create_private(s->path, &tmp, why);
    if (f == NULL)
        return false;
    fputs("{\n", f);
    for (size_t i = 0; i < s->n; i++) {
        fputs("  ", f);
        write_string(f, s->entries[i].key);
        fputs(": ", f);
        write_string(f, s->entries[i].value);
        fputs(i + 1 < s->n ? ",\n" : "\n", f);
    }
    fputs("}\n", f);
    bool ok = plat_sync(f);
    if (!ok)
        *why = strerror(errno);
    if (fclose(f) != 0 && ok) {
        *why = strerror(errno);
        ok = false;
    }
    if (ok && !plat_replace(tmp, s->path)) {
        *why = strerror(errno);
        ok = false;
    }
    if (!ok)
        unlink(tmp);
    free(tmp);
    return ok;
}

/* ---- the mcpc callbacks ---------------------------------------------------- */

static int32_t on_load(void *userdata, const char *key, char *buf, size_t buf_len)
{
    struct store *s = userdata;
    int32_t rc = 1;
    pthread_mutex_lock(&s->lock);
    struct entry *e = find(s, key);
    if (e != NULL && strlen(e->value) < buf_len) {
        memcpy(buf, e->value, strlen(e->value) + 1);
        rc = 0;
    }
    pthread_mutex_unlock(&s->lock);
    return rc;
}

static void on_save(void *userdata, const char *key, const char *value)
{
    struct store *s = userdata;
    const char *why = NULL;
    pthread_mutex_lock(&s->lock);
    if (value == NULL) {
        del(s, key);
    } else {
        char *k = strdup(key), *v = strdup(value);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            why = "out of memory";
        } else if (!put(s, k, v)) {
            why = "out of memory";
        }
    }
    if (why == NULL)
        write_store(s, &why);
    pthread_mutex_unlock(&s->lock);
    /* The credentials still work for this run; the next one logs in again. */
    if (why != NULL)
        fprintf(stderr, "mcpc: cannot save credentials to %s: %s\n", s->path, why);
}

static void on_free(void *userdata)
{
    store_free(userdata);
}

mcpc_status_t store_attach(struct store *s, mcpc_oauth_t *oauth)
{
    return mcpc_oauth_set_store(oauth, on_load, on_save, s, on_free);
}
