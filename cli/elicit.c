/*
 * elicit.c - a server's elicitation answered on this terminal: prompts on stderr,
 * answers from stdin, one request at a time so that prompts never interleave.
 *
 * --elicit asks a form field by field: each property of the requested schema (a flat
 * object of string, number, integer, boolean and enum-array properties, already
 * checked by the library) with its title, description, choices, default and whether
 * it is required. An empty answer takes the default or leaves an optional field out;
 * a value that does not fit is asked for again; `!decline` declines, `!cancel` or the
 * end of input cancels, and `!!` starts a text that itself begins with `!`.
 * --elicit-json reads the whole form as one JSON object on one line, for scripts.
 * A URL is shown in full and consent asked (y/N); mcpc never opens it.
 *
 * The library checks the assembled answer against the schema again and fills in the
 * defaults; the checks here only let a wrong field be asked for again on its own.
 * Everything shown comes from the server, so it goes out through put_sanitized.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcpc.h"

#include "cli.h"
#include "elicit.h"
#include "json_scan.h"
#include "platform.h"

static pthread_mutex_t g_elicit_lock = PTHREAD_MUTEX_INITIALIZER;

/* Reads one line from stdin without its newline; NULL at end of input. */
static char *read_answer(void)
{
    struct buf b = {0};
    int c;
    while ((c = plat_getchar()) != EOF && c != '\n') {
        char ch = (char)c;
        if (!buf_add(&b, &ch, 1)) {
            free(b.p);
            return NULL;
        }
    }
    if (c == EOF && b.p == NULL)
        return NULL;
    return b.p ? b.p : strdup("");
}

/* ------------------------------------------------------------------------- */
/* The form's fields, read from the requested schema                          */
/* ------------------------------------------------------------------------- */

enum kind { K_TEXT, K_NUMBER, K_INTEGER, K_BOOL, K_CHOICES /* an array of choices */ };

struct choice {
    char *json;  /* the value as the schema writes it (a JSON string) */
    char *value; /* decoded; NULL when it holds \u0000 (then chosen by number only) */
    char *title; /* decoded, or NULL */
};

struct field {
    const char *key; /* the property name as JSON text, without its quotes (into the schema) */
    size_t key_len;
    char *name; /* decoded, for the prompt */
    char *title, *description, *format;
    const char *def; /* the default's JSON text (into the schema), or NULL */
    size_t def_len;
    enum kind kind;
    bool required;
    /* minimum/maximum, minLength/maxLength or minItems/maxItems */
    bool has_lo, has_hi;
    double lo, hi;
    struct choice *choices;
    size_t n_choices;
};

static void field_free(struct field *f)
{
    free(f->name);
    free(f->title);
    free(f->description);
    free(f->format);
    for (size_t i = 0; i < f->n_choices; i++) {
        free(f->choices[i].json);
        free(f->choices[i].value);
        free(f->choices[i].title);
    }
    free(f->choices);
}

/* A number member of `obj` into *out; false when absent. */
static bool get_number(const char *obj, const char *key, double *out)
{
    const char *v;
    size_t len;
    if (!js_get(obj, key, &v, &len))
        return false;
    char *end;
    *out = strtod(v, &end);
    return end != v;
}

static bool add_choice(struct field *f, const char *json, size_t len, char *title)
{
    struct choice *c = realloc(f->choices, (f->n_choices + 1) * sizeof *c);
    if (c == NULL) {
        free(title);
        return false;
    }
    f->choices = c;
    c[f->n_choices].json = js_dup(json, len);
    c[f->n_choices].value = js_string(json);
    c[f->n_choices].title = title;
    f->n_choices++;
    return true;
}

/* The choices of `schema`: its `enum` (titled by the older `enumNames`, if any), or the
 * `const` and `title` of each option in `options_key` (oneOf for one, anyOf for many). */
static bool read_choices(const char *schema, const char *options_key, struct field *f)
{
    const char *list, *names = NULL, *v;
    size_t len, vlen;
    if (js_get(schema, "enum", &list, &len)) {
        if (!js_get(schema, "enumNames", &names, &len))
            names = NULL;
        for (size_t i = 0; js_index(list, i, &v, &vlen); i++) {
            const char *t;
            size_t tlen;
            char *title = names && js_index(names, i, &t, &tlen) ? js_string(t) : NULL;
            if (!add_choice(f, v, vlen, title))
                return false;
        }
    } else if (js_get(schema, options_key, &list, &len)) {
        const char *opt;
        size_t olen;
        for (size_t i = 0; js_index(list, i, &opt, &olen); i++)
            if (js_get(opt, "const", &v, &vlen) && !add_choice(f, v, vlen, js_get_string(opt, "title")))
                return false;
    }
    return true;
}

/* Reads property `index` of the schema into *f: 1, or 0 when there is none, or -1 when
 * out of memory. *f is for field_free in every case. */
static int read_field(const char *schema, size_t index, struct field *f)
{
    const char *props, *prop, *required, *v;
    size_t len, plen, rlen, vlen;
    memset(f, 0, sizeof *f);
    if (!js_get(schema, "properties", &props, &len) ||
        !js_member(props, index, &f->key, &f->key_len, &prop, &plen))
        return 0;
    f->name = js_string(f->key - 1);
    if (f->name == NULL)
        f->name = js_dup(f->key, f->key_len);
    f->title = js_get_string(prop, "title");
    f->description = js_get_string(prop, "description");
    f->format = js_get_string(prop, "format");
    if (js_get(prop, "default", &v, &vlen)) {
        f->def = v;
        f->def_len = vlen;
    }
    if (js_get(schema, "required", &required, &rlen))
        for (size_t i = 0; !f->required && js_index(required, i, &v, &vlen); i++)
            f->required = vlen == f->key_len + 2 && memcmp(v + 1, f->key, f->key_len) == 0;
    char *type = js_get_string(prop, "type");
    const char *lo = "minimum", *hi = "maximum";
    bool ok = true;
    if (type == NULL || strcmp(type, "string") == 0) {
        f->kind = K_TEXT;
        lo = "minLength";
        hi = "maxLength";
        ok = read_choices(prop, "oneOf", f);
    } else if (strcmp(type, "number") == 0 || strcmp(type, "integer") == 0) {
        f->kind = type[0] == 'n' ? K_NUMBER : K_INTEGER;
    } else if (strcmp(type, "boolean") == 0) {
        f->kind = K_BOOL;
    } else {
        const char *items;
        f->kind = K_CHOICES;
        lo = "minItems";
        hi = "maxItems";
        ok = js_get(prop, "items", &items, &len) && read_choices(items, "anyOf", f);
    }
    free(type);
    f->has_lo = get_number(prop, lo, &f->lo);
    f->has_hi = get_number(prop, hi, &f->hi);
    return ok ? 1 : -1;
}

/* ------------------------------------------------------------------------- */
/* One field asked                                                            */
/* ------------------------------------------------------------------------- */

/* The number of code points in valid UTF-8 `s`, or -1 when it is not valid UTF-8. */
static long utf8_length(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    long n = 0;
    while (*p) {
        int more = *p < 0x80 ? 0 : (*p & 0xe0) == 0xc0 ? 1 : (*p & 0xf0) == 0xe0 ? 2 : (*p & 0xf8) == 0xf0 ? 3 : -1;
        if (more < 0 || (more == 1 && *p < 0xc2))
            return -1;
        for (int i = 1; i <= more; i++)
            if ((p[i] & 0xc0) != 0x80)
                return -1;
        p += more + 1;
        n++;
    }
    return n;
}

static bool is_date(const char *s)
{
    for (int i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? s[i] != '-' : !isdigit((unsigned char)s[i]))
            return false;
    return true;
}

/* The formats the library checks, by the same shapes (see src/client/input/schema.rs). */
static bool format_ok(const char *format, const char *s)
{
    if (format == NULL)
        return true;
    if (strcmp(format, "email") == 0) {
        const char *at = strchr(s, '@');
        for (const char *p = s; *p; p++)
            if (isspace((unsigned char)*p))
                return false;
        return at != NULL && at != s && strchr(at + 1, '.') != NULL;
    }
    if (strcmp(format, "uri") == 0) {
        const char *colon = strchr(s, ':');
        if (colon == NULL || !isalpha((unsigned char)s[0]))
            return false;
        for (const char *p = s; p < colon; p++)
            if (!isalnum((unsigned char)*p) && !strchr("+.-", *p))
                return false;
        return true;
    }
    if (strcmp(format, "date") == 0)
        return strlen(s) == 10 && is_date(s);
    if (strcmp(format, "date-time") == 0)
        return strlen(s) > 11 && is_date(s) && (s[10] == 'T' || s[10] == 't');
    return true;
}

/* A JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; an integer has neither
 * fraction nor exponent. */
static bool json_number(const char *s, bool integer)
{
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (isdigit((unsigned char)*s))
        while (isdigit((unsigned char)*s))
            s++;
    else
        return false;
    if (integer)
        return *s == '\0';
    if (*s == '.') {
        if (!isdigit((unsigned char)*++s))
            return false;
        while (isdigit((unsigned char)*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        if (*++s == '+' || *s == '-')
            s++;
        if (!isdigit((unsigned char)*s))
            return false;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s == '\0';
}

/* Which choice `text` names: its number (from 1), its value, or its title (any case). */
static const struct choice *find_choice(const struct field *f, const char *text)
{
    char *end;
    unsigned long n = strtoul(text, &end, 10);
    if (isdigit((unsigned char)*text) && *end == '\0' && n >= 1 && n <= f->n_choices)
        return &f->choices[n - 1];
    for (size_t i = 0; i < f->n_choices; i++)
        if (f->choices[i].value && strcmp(f->choices[i].value, text) == 0)
            return &f->choices[i];
    for (size_t i = 0; i < f->n_choices; i++)
        if (f->choices[i].title && strcasecmp(f->choices[i].title, text) == 0)
            return &f->choices[i];
    return NULL;
}

/* Appends the JSON value `text` stands for to *out; NULL, or why it does not fit. */
static const char *field_value(const struct field *f, const char *text, struct buf *out)
{
    bool ok = true;
    switch (f->kind) {
    case K_TEXT: {
        if (f->n_choices > 0) {
            const struct choice *c = find_choice(f, text);
            if (c == NULL)
                return "not one of the choices (give its number or its value)";
            ok = buf_add(out, c->json, strlen(c->json));
            break;
        }
        long n = utf8_length(text);
        if (n < 0)
            return "not valid UTF-8";
        if ((f->has_lo && n < f->lo) || (f->has_hi && n > f->hi))
            return "its length is outside the allowed range";
        if (!format_ok(f->format, text))
            return "not of the asked format";
        ok = buf_add_json_string(out, text);
        break;
    }
    case K_NUMBER:
    case K_INTEGER: {
        if (!json_number(text, f->kind == K_INTEGER))
            return f->kind == K_INTEGER ? "not a whole number" : "not a number";
        double x = strtod(text, NULL);
        if ((f->has_lo && x < f->lo) || (f->has_hi && x > f->hi))
            return "outside the allowed range";
        ok = buf_add(out, text, strlen(text));
        break;
    }
    case K_BOOL:
        if (strcasecmp(text, "y") == 0 || strcasecmp(text, "yes") == 0 || strcmp(text, "true") == 0)
            ok = buf_add(out, "true", 4);
        else if (strcasecmp(text, "n") == 0 || strcasecmp(text, "no") == 0 || strcmp(text, "false") == 0)
            ok = buf_add(out, "false", 5);
        else
            return "answer y or n";
        break;
    case K_CHOICES: {
        size_t count = 0, start = out->len;
        ok = buf_add(out, "[", 1);
        const char *p = strcmp(text, "!none") == 0 ? "" : text;
        while (ok && *p) {
            size_t n = strcspn(p, ",");
            char *item = js_dup(p, n);
            char *s = item, *e = item + n;
            while (*s == ' ')
                s++;
            while (e > s && e[-1] == ' ')
                *--e = '\0';
            const struct choice *c = find_choice(f, s);
            free(item);
            if (c == NULL) {
                out->len = start;
                return "not a list of the choices (their numbers or values, comma-separated)";
            }
            ok = (count == 0 || buf_add(out, ",", 1)) && buf_add(out, c->json, strlen(c->json));
            count++;
            p += n + (p[n] == ',');
        }
        if ((f->has_lo && count < f->lo) || (f->has_hi && count > f->hi)) {
            out->len = start;
            return "the number of choices is outside the allowed range";
        }
        ok = ok && buf_add(out, "]", 1);
        break;
    }
    }
    return ok ? NULL : "out of memory";
}

/* The field's heading: its name (or title and name), what it takes, its description
 * and its choices. */
static void show_field(const struct field *f)
{
    static const char *const WHAT[] = {"text", "number", "whole number", "y or n",
                                       "any of the choices, comma-separated (!none: none)"};
    fputc('\n', stderr);
    if (f->title != NULL) {
        put_sanitized(stderr, f->title);
        fputs(" [", stderr);
        put_sanitized(stderr, f->name);
        fputc(']', stderr);
    } else {
        put_sanitized(stderr, f->name);
    }
    fputs(" (", stderr);
    if (f->kind == K_TEXT && f->n_choices > 0) {
        fputs("one of the choices", stderr);
    } else {
        fputs(WHAT[f->kind], stderr);
        if (f->kind == K_TEXT && f->format != NULL) {
            fputs(", format ", stderr);
            put_sanitized(stderr, f->format);
        }
    }
    const char *unit = f->kind == K_TEXT ? " character" : f->kind == K_CHOICES ? " choice" : "";
    double last = f->has_hi ? f->hi : f->lo;
    const char *plural = *unit && last != 1 ? "s" : "";
    if (f->has_lo && f->has_hi)
        fprintf(stderr, ", %g to %g%s%s", f->lo, f->hi, unit, plural);
    else if (f->has_lo)
        fprintf(stderr, ", at least %g%s%s", f->lo, unit, plural);
    else if (f->has_hi)
        fprintf(stderr, ", at most %g%s%s", f->hi, unit, plural);
    fputs(f->required ? ", required" : ", optional", stderr);
    if (f->def != NULL) {
        char *d = js_dup(f->def, f->def_len);
        fputs(", default ", stderr);
        put_sanitized(stderr, d);
        free(d);
    }
    fputs(")\n", stderr);
    if (f->description != NULL) {
        fputs("  ", stderr);
        put_sanitized(stderr, f->description);
        fputc('\n', stderr);
    }
    for (size_t i = 0; i < f->n_choices; i++) {
        const struct choice *c = &f->choices[i];
        fprintf(stderr, "  %zu) ", i + 1);
        put_sanitized(stderr, c->title ? c->title : c->value ? c->value : c->json);
        if (c->title && c->value && strcmp(c->title, c->value) != 0) {
            fputs(" [", stderr);
            put_sanitized(stderr, c->value);
            fputc(']', stderr);
        }
        fputc('\n', stderr);
    }
}

enum answer { A_VALUE, A_SKIP, A_DECLINE, A_CANCEL, A_FAILED };

/* Asks one field until it gets a value that fits, a skip, or a decline or cancel. */
static enum answer ask_field(const struct field *f, struct buf *out)
{
    show_field(f);
    for (;;) {
        put_sanitized(stderr, f->name);
        fputs("> ", stderr);
        fflush(stderr);
        char *line = read_answer();
        if (line == NULL || strcmp(line, "!cancel") == 0) {
            free(line);
            return A_CANCEL;
        }
        if (strcmp(line, "!decline") == 0) {
            free(line);
            return A_DECLINE;
        }
        const char *why = NULL;
        if (line[0] == '\0') {
            if (f->def != NULL || !f->required) {
                free(line);
                return A_SKIP;
            }
            why = "this field is required and has no default";
        } else if (line[0] == '!' && line[1] != '!' && !(f->kind == K_CHOICES && strcmp(line, "!none") == 0)) {
            why = "unknown command (!decline, !cancel; !! starts a text that begins with !)";
        } else {
            why = field_value(f, line[0] == '!' && line[1] == '!' ? line + 1 : line, out);
        }
        free(line);
        if (why == NULL)
            return A_VALUE;
        if (strcmp(why, "out of memory") == 0)
            return A_FAILED;
        fprintf(stderr, "mcpc: %s; again (or !decline, !cancel):\n", why);
    }
}

/* ------------------------------------------------------------------------- */
/* The handlers                                                               */
/* ------------------------------------------------------------------------- */

/* Shows who asks, and what: with --config alone, the file's name for the server
 * first, since the name a server gives itself may be anything. */
static void show_request(const mcpc_input_t *input)
{
    fputs("mcpc: ", stderr);
    const char *configured = mcpc_input_host_server(input);
    if (configured != NULL) {
        fputs("server ", stderr);
        put_sanitized(stderr, configured);
        fputs(" (", stderr);
        put_sanitized(stderr, mcpc_input_server(input));
        fputc(')', stderr);
    } else {
        put_sanitized(stderr, mcpc_input_server(input));
    }
    fputs(" asks: ", stderr);
    put_sanitized(stderr, mcpc_input_message(input));
    fputc('\n', stderr);
}

/* A URL elicitation: consent to the URL shown (mcpc never opens it). */
static mcpc_status_t answer_url(const mcpc_input_t *input)
{
    fputs("mcpc: it asks you to open this URL (mcpc does not open it):\n  ", stderr);
    put_sanitized(stderr, mcpc_input_url(input));
    fputs("\nConsent? [y/N] ", stderr);
    fflush(stderr);
    char *line = read_answer();
    /* End of input dismisses the question (cancel); a "no" declines. */
    int action = line == NULL ? MCPC_ELICIT_CANCEL
                 : (strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0) ? MCPC_ELICIT_ACCEPT
                                                                               : MCPC_ELICIT_DECLINE;
    free(line);
    return mcpc_input_elicit(input, action, NULL);
}

/* A form, field by field; the library's own check failing asks the form again. */
static mcpc_status_t answer_fields(const mcpc_input_t *input)
{
    const char *schema = mcpc_input_schema_json(input);
    fputs("mcpc: answer each field; an empty answer takes the default or leaves an optional "
          "field out; !decline declines, !cancel (or the end of input) cancels\n",
          stderr);
    for (;;) {
        struct buf content = {0};
        enum answer a = buf_add(&content, "{", 1) ? A_SKIP : A_FAILED;
        size_t given = 0;
        for (size_t i = 0; a == A_VALUE || a == A_SKIP; i++) {
            struct field f;
            int r = read_field(schema, i, &f);
            size_t start = content.len;
            if (r == 0) {
                field_free(&f);
                break;
            }
            bool key = r > 0 && (given == 0 || buf_add(&content, ",", 1)) && buf_add(&content, "\"", 1) &&
                       buf_add(&content, f.key, f.key_len) && buf_add(&content, "\":", 2);
            a = key ? ask_field(&f, &content) : A_FAILED;
            if (a == A_VALUE)
                given++;
            else
                content.len = start; /* a field left out leaves nothing behind */
            field_free(&f);
        }
        if ((a == A_VALUE || a == A_SKIP) && !buf_add(&content, "}", 1))
            a = A_FAILED;
        mcpc_status_t st;
        if (a == A_DECLINE)
            st = mcpc_input_elicit(input, MCPC_ELICIT_DECLINE, NULL);
        else if (a == A_CANCEL || a == A_FAILED)
            st = mcpc_input_elicit(input, MCPC_ELICIT_CANCEL, NULL);
        else
            st = mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, content.p);
        free(content.p);
        if (a == A_FAILED)
            fputs("mcpc: out of memory: the form is cancelled\n", stderr);
        if (st != MCPC_ERR_INPUT_INVALID)
            return st;
        fputs("mcpc: ", stderr);
        put_sanitized(stderr, mcpc_last_error_message());
        fputs("; the form again:\n", stderr);
    }
}

/* A form as one JSON object on one line (empty: the defaults). */
static mcpc_status_t answer_json_line(const mcpc_input_t *input)
{
    fputs("mcpc: the form's schema: ", stderr);
    put_sanitized(stderr, mcpc_input_schema_json(input));
    fputc('\n', stderr);
    for (;;) {
        fputs("Answer as one JSON object (empty: the defaults; !decline; !cancel): ", stderr);
        fflush(stderr);
        char *line = read_answer();
        mcpc_status_t st;
        if (line == NULL || strcmp(line, "!cancel") == 0)
            st = mcpc_input_elicit(input, MCPC_ELICIT_CANCEL, NULL);
        else if (strcmp(line, "!decline") == 0)
            st = mcpc_input_elicit(input, MCPC_ELICIT_DECLINE, NULL);
        else
            st = mcpc_input_elicit(input, MCPC_ELICIT_ACCEPT, *line ? line : NULL);
        free(line);
        if (st != MCPC_ERR_INPUT_INVALID && st != MCPC_ERR_INVALID_ARG && st != MCPC_ERR_INVALID_UTF8)
            return st;
        fputs("mcpc: ", stderr);
        put_sanitized(stderr, mcpc_last_error_message()); /* ask again */
        fputc('\n', stderr);
    }
}

static void answer(mcpc_input_t *input, bool by_field)
{
    pthread_mutex_lock(&g_elicit_lock);
    show_request(input);
    mcpc_status_t st;
    if (mcpc_input_kind(input) == MCPC_INPUT_ELICIT_URL)
        st = answer_url(input);
    else
        st = by_field ? answer_fields(input) : answer_json_line(input);
    /* MCPC_ERR_CLOSED: the client closed, or the call ended, while the user
     * answered; nobody is left to tell. */
    if (st != MCPC_OK && st != MCPC_ERR_CLOSED) {
        fputs("mcpc: elicitation: ", stderr);
        put_sanitized(stderr, mcpc_last_error_message());
        fputc('\n', stderr);
    }
    mcpc_input_free(input);
    pthread_mutex_unlock(&g_elicit_lock);
}

void elicit_by_field(void *userdata, mcpc_input_t *input)
{
    (void)userdata;
    answer(input, true);
}

void elicit_json_line(void *userdata, mcpc_input_t *input)
{
    (void)userdata;
    answer(input, false);
}
