/*
 * help.c - what mcpc says of itself: --help, made from the tables of options.c
 * (options, commands, exit statuses) and the prose below, so that an option's
 * help is written once, beside the option itself.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "mcpc.h"

#include "options.h"
#include "platform.h"

/* --help: text wrapped at this width, descriptions starting at this column. */
#define HELP_WIDTH 79
#define HELP_COLUMN 26

/* The option sections, in enum opt_section's order: a title, and what applies to
 * all of the section's options (--help puts it in parentheses). */
static const struct {
    const char *title;
    const char *note;
} SECTIONS[] = {
    [SEC_SERVER] = {"Server", "exactly one of --stdio, --url, or --config with --server"},
    [SEC_CLIENT] = {"Options", NULL},
    [SEC_AUTH] = {"Authorization", "OAuth 2.1, --url only"},
    [SEC_INFO] = {"Help", NULL},
};

/* The description: --help shows the first paragraph and the last. */
static const char *const DESCRIPTION[] = {
    "mcpc starts a Model Context Protocol (MCP) server (--stdio) or reaches one over HTTP "
    "(--url), runs one command on it and prints the result. stdout gets exactly one JSON "
    "document and a newline, so it can be piped into jq; messages go to stderr, and the exit "
    "status says what happened.",
    "Before anything starts, mcpc checks what it can: the options, the URL, and that the "
    "arguments of call and prompt are a JSON object. A call in flight is cancelled by " PLAT_INTERRUPTS
    ": the server is told (notifications/cancelled) and mcpc exits 5.",
    "Options may also be written --name=value, and may follow the command; \"--\" ends the "
    "options. An option that takes a value may be given once, except --header and --roots, "
    "which repeat.",
};
#define N_DESCRIPTION (sizeof DESCRIPTION / sizeof DESCRIPTION[0])

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- --help ---------------------------------------------------------------------- */

/* Writes `text` wrapped at HELP_WIDTH: the cursor is at column `col`, and each
 * further line starts at column `indent`. */
static void put_wrapped(const char *text, size_t col, size_t indent)
{
    const char *p = text;
    bool first = true;
    while (*p) {
        size_t word = strcspn(p, " ");
        if (!first && col + 1 + word > HELP_WIDTH) {
            printf("\n%*s", (int)indent, "");
            col = indent;
        } else if (!first) {
            putchar(' ');
            col++;
        }
        printf("%.*s", (int)word, p);
        col += word;
        first = false;
        p += word;
        while (*p == ' ')
            p++;
    }
    putchar('\n');
}

/* "  LABEL" then its text at `column`, or on the next line when LABEL is too wide. */
static void put_item(const char *label, const char *text, int column)
{
    int n = printf("  %s", label);
    if (n + 1 > column)
        printf("\n%*s", column, "");
    else
        printf("%*s", column - n, "");
    put_wrapped(text, (size_t)column, (size_t)column);
}

/* "-h, --help" or "--timeout MS", into out. */
static const char *option_label(const struct cli_option *o, char *out, size_t size)
{
    char shrt[8] = "";
    if (o->short_name != 0)
        snprintf(shrt, sizeof shrt, "-%c, ", o->short_name);
    snprintf(out, size, "%s%s%s%s", shrt, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    return out;
}

/* "call NAME [ARGS_JSON]", into out. */
static const char *command_label(const struct cli_command *c, char *out, size_t size)
{
    snprintf(out, size, "%s%s%s", c->name, c->args ? " " : "", c->args ? c->args : "");
    return out;
}

int print_help(void)
{
    char label[96];
    fputs("Usage: mcpc [OPTIONS] COMMAND [ARGS...]\n\n", stdout);
    put_wrapped(DESCRIPTION[0], 0, 0);
    fputs("\nCommands:\n", stdout);
    for (size_t k = 0; k < N_COMMANDS; k++)
        put_item(command_label(&COMMANDS[k], label, sizeof label), COMMANDS[k].help, HELP_COLUMN);
    for (size_t s = 0; s < COUNT(SECTIONS); s++) {
        if (SECTIONS[s].note)
            printf("\n%s (%s):\n", SECTIONS[s].title, SECTIONS[s].note);
        else
            printf("\n%s:\n", SECTIONS[s].title);
        for (size_t k = 0; k < N_OPTIONS; k++)
            if (OPTIONS[k].section == s)
                put_item(option_label(&OPTIONS[k], label, sizeof label), OPTIONS[k].help, HELP_COLUMN);
    }
    putchar('\n');
    put_wrapped(DESCRIPTION[N_DESCRIPTION - 1], 0, 0);
    fputs("\nExit status:\n", stdout);
    for (size_t k = 0; k < N_EXITS; k++) {
        snprintf(label, sizeof label, "%d", EXITS[k].code);
        put_item(label, EXITS[k].help, 6);
    }
    return fflush(stdout) == EOF ? EXIT_ERROR : EXIT_OK;
}
