/*
 * help.c - what mcpc says of itself: --help, and the roff source of its man page
 * (mcpc --man, committed as cli/mcpc.1). Both are made from the same tables, the
 * options, commands and exit statuses of options.c, and the prose below, so the
 * two cannot say different things.
 */
#include <ctype.h>
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

static const char SUMMARY[] = "a command-line client for Model Context Protocol (MCP) servers";

/* The description: --help shows the first paragraph and the last, the man page all. */
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

/* ENVIRONMENT, FILES and EXAMPLES of the man page: a name, its placeholder (if
 * any) and what it is. */
struct entry {
    const char *name, *arg, *text;
};

static const struct entry ENVIRONMENT[] = {
    {"MCPC_CLIENT_SECRET", NULL,
     "the client secret of --client-id when --client-secret and --client-key are not given: "
     "it stays off the command line"},
    {"https_proxy, HTTPS_PROXY", NULL, "the proxy for https:// URLs, when --proxy is not given"},
    {"http_proxy, HTTP_PROXY", NULL, "the proxy for http:// URLs, when --proxy is not given"},
    {"all_proxy, ALL_PROXY", NULL, "the proxy for either, when the variable for the scheme is not set"},
    {"no_proxy, NO_PROXY", NULL,
     "hosts reached without the proxy, as --noproxy (which replaces it); loopback addresses "
     "always are"},
    {"PATH", NULL,
     "where the programs of --stdio, --assertion-command and --id-token-command are looked "
     "up. The server started by --stdio inherits mcpc's environment, with the env of its "
     "--config entry added"},
};

static const struct entry FILES[] = {
    {"--config", "FILE",
     "an MCP hosts' configuration: a JSON object whose \"mcpServers\" (or VS Code's "
     "\"servers\") maps names to {command, args, env, cwd} or {url, headers, type}"},
    {"--oauth-store", "FILE",
     "tokens and client registrations, a JSON object of strings, mode 0600; written as a new "
     "file renamed over the old one, so it is never left half written"},
};

static const struct entry EXAMPLES[] = {
    {"The tools of the demo server of mcpc's source tree, their names only:", NULL,
     "mcpc --stdio \"python3 demo/server.py\" tools | jq -r '.[].name'"},
    {"Call a tool with arguments:", NULL,
     "mcpc --stdio \"python3 demo/server.py\" call add '{\"a\":2,\"b\":3}'"},
    {"A server over HTTP that needs a login, its tokens kept for the next run:", NULL,
     "mcpc --oauth --oauth-store ~/.mcpc-tokens.json --url https://example.com/mcp tools"},
    {"A server of an MCP host's configuration:", NULL,
     "mcpc --config ~/.config/mcp.json --server files info"},
    {"Complete a prompt's argument:", NULL,
     "mcpc --stdio \"python3 demo/server.py\" complete prompt greet who al"},
};

static const char *const SEE_ALSO[] = {"jq(1)", "curl(1)", "xdg-open(1)"};

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

/* ---- the man page ---------------------------------------------------------------- */

/*
 * Writes text for roff: a backslash as \e, a control character at the start of
 * the line (. or ') behind \&, and the hyphens of an option (a word that starts
 * with "-") as \-, the minus sign that man pages use for options, so that they
 * can be searched and copied; other hyphens stay hyphens.
 */
static void put_roff(const char *s)
{
    bool option = false;
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '-' && !option && (p == s || strchr(" (\"[|,=", p[-1]) != NULL))
            option = true;
        else if (option && c != '-' && !isalnum(c) && c != '.' && c != '_')
            option = false;
        if (c == '\\')
            fputs("\\e", stdout);
        else if (c == '-' && option)
            fputs("\\-", stdout);
        else
            putchar(c);
    }
}

/* ".TP", the tag in bold ("-x, " before it for a short form), its placeholder in
 * italics, then the text. */
static void man_item(char short_name, const char *tag, const char *arg, const char *text)
{
    fputs(".TP\n", stdout);
    if (short_name != 0)
        printf("\\fB\\-%c\\fR, ", short_name);
    fputs("\\fB", stdout);
    put_roff(tag);
    fputs("\\fR", stdout);
    if (arg != NULL) {
        fputs(" \\fI", stdout);
        put_roff(arg);
        fputs("\\fR", stdout);
    }
    putchar('\n');
    put_roff(text);
    putchar('\n');
}

static void man_paragraph(const char *text)
{
    fputs(".PP\n", stdout);
    put_roff(text);
    putchar('\n');
}

static void man_entries(const char *heading, const struct entry *e, size_t n)
{
    printf(".SH %s\n", heading);
    for (size_t k = 0; k < n; k++)
        man_item(0, e[k].name, e[k].arg, e[k].text);
}

static void man_options(void)
{
    fputs(".SH OPTIONS\n", stdout);
    for (size_t s = 0; s < COUNT(SECTIONS); s++) {
        printf(".SS %s\n", SECTIONS[s].title);
        if (SECTIONS[s].note != NULL) {
            fputs(".PP\n", stdout);
            put_roff(SECTIONS[s].note);
            fputs(".\n", stdout);
        }
        for (size_t k = 0; k < N_OPTIONS; k++)
            if (OPTIONS[k].section == s)
                man_item(OPTIONS[k].short_name, OPTIONS[k].name, OPTIONS[k].arg, OPTIONS[k].help);
    }
}

int print_man(void)
{
    char label[96];
    fputs(".\\\" mcpc.1: made by `mcpc --man` from cli/options.c and cli/help.c; `make man` makes it again.\n",
          stdout);
    printf(".TH MCPC 1 \"\" \"mcpc %s\" \"User Commands\"\n", MCPC_VERSION);
    /* Neither hyphenated nor justified: an option split across lines cannot be
     * copied, and justified lines of long option names gape. */
    fputs(".nh\n.ad l\n", stdout);
    fputs(".SH NAME\nmcpc \\- ", stdout);
    put_roff(SUMMARY);
    fputs("\n.SH SYNOPSIS\n", stdout);
    fputs("\\fBmcpc\\fR [\\fIOPTIONS\\fR] \\fB\\-\\-stdio\\fR \\fI\"COMMAND [ARGS...]\"\\fR "
          "\\fICOMMAND\\fR [\\fIARGS\\fR...]\n.br\n"
          "\\fBmcpc\\fR [\\fIOPTIONS\\fR] \\fB\\-\\-url\\fR \\fIURL\\fR \\fICOMMAND\\fR [\\fIARGS\\fR...]\n.br\n"
          "\\fBmcpc\\fR [\\fIOPTIONS\\fR] \\fB\\-\\-config\\fR \\fIFILE\\fR \\fB\\-\\-server\\fR \\fINAME\\fR "
          "\\fICOMMAND\\fR [\\fIARGS\\fR...]\n.br\n"
          "\\fBmcpc \\-\\-help\\fR | \\fB\\-\\-version\\fR\n",
          stdout);
    fputs(".SH DESCRIPTION\n", stdout);
    for (size_t k = 0; k < N_DESCRIPTION; k++)
        man_paragraph(DESCRIPTION[k]);
    man_options();
    fputs(".SH COMMANDS\n", stdout);
    for (size_t k = 0; k < N_COMMANDS; k++)
        man_item(0, COMMANDS[k].name, COMMANDS[k].args, COMMANDS[k].help);
    fputs(".SH \"EXIT STATUS\"\n", stdout);
    for (size_t k = 0; k < N_EXITS; k++) {
        snprintf(label, sizeof label, "%d", EXITS[k].code);
        man_item(0, label, NULL, EXITS[k].help);
    }
    man_entries("ENVIRONMENT", ENVIRONMENT, COUNT(ENVIRONMENT));
    man_entries("FILES", FILES, COUNT(FILES));
    fputs(".SH EXAMPLES\n", stdout);
    for (size_t k = 0; k < COUNT(EXAMPLES); k++) {
        man_paragraph(EXAMPLES[k].name);
        fputs(".PP\n.RS\n.nf\n", stdout);
        put_roff(EXAMPLES[k].text);
        fputs("\n.fi\n.RE\n", stdout);
    }
    fputs(".SH \"SEE ALSO\"\n", stdout);
    for (size_t k = 0; k < COUNT(SEE_ALSO); k++) {
        const char *paren = strchr(SEE_ALSO[k], '(');
        printf(".BR %.*s %s%s\n", (int)(paren - SEE_ALSO[k]), SEE_ALSO[k], paren,
               k + 1 < COUNT(SEE_ALSO) ? "," : "");
    }
    fputs(".PP\nlibmcpc, the C library mcpc is built on: its header, mcpc.h, documents every call.\n", stdout);
    return fflush(stdout) == EOF ? EXIT_ERROR : EXIT_OK;
}
