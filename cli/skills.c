/*
 * skills.c - the skills commands: the listing, and one skill's SKILL.md or another of
 * its files, read through the library's verification (size, sha256 digest, and for a
 * SKILL.md its frontmatter against the listing's). A file is printed as it is, only
 * once verified; a verification failure prints nothing of it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpc.h"

#include "client.h"
#include "json_scan.h"

/* The SKILL.md URI of the listed skill called `name` (its frontmatter's name);
 * malloc'd, or NULL. */
static char *skill_uri(const char *listing, const char *name)
{
    const char *entry = NULL, *fm = NULL;
    size_t len = 0;
    for (size_t i = 0; js_index(listing, i, &entry, &len); i++) {
        if (!js_get(entry, "frontmatter", &fm, &len))
            continue;
        char *n = js_get_string(fm, "name");
        bool match = n != NULL && strcmp(n, name) == 0;
        free(n);
        if (match)
            return js_get_string(entry, "uri");
    }
    return NULL;
}

/* Prints a verified file's first content: text as it is, a blob's bytes. */
static int print_file(const mcpc_contents_t *contents)
{
    size_t len = 0;
    const char *text = mcpc_contents_text(contents, 0, &len);
    const void *data = text;
    if (text == NULL)
        data = mcpc_contents_blob(contents, 0, &len);
    if (data == NULL || fwrite(data, 1, len, stdout) != len || fflush(stdout) == EOF) {
        fputs("mcpc: cannot write the file to stdout\n", stderr);
        return EXIT_ERROR;
    }
    return EXIT_OK;
}

int cmd_skills(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts)
{
    char *json = NULL; /* owned: mcpc_string_free */
    mcpc_status_t st = mcpc_client_list_skills(client, call_opts, &json);
    int code = json_or_error(st, json);
    mcpc_string_free(json);
    return code;
}

int cmd_skill(const mcpc_client_t *client, const mcpc_call_opts_t *call_opts, const char *name,
              const char *file)
{
    char *listing = NULL;
    mcpc_status_t st = mcpc_client_list_skills(client, call_opts, &listing);
    if (st != MCPC_OK) {
        report_status(st);
        return exit_code_for(st);
    }
    char *uri = skill_uri(listing, name);
    mcpc_string_free(listing);
    if (uri == NULL) {
        fprintf(stderr, "mcpc: no skill named '%s' is listed\n", name);
        return EXIT_ERROR;
    }
    if (file != NULL) {
        /* A file of the skill, by its path within the skill's directory. */
        size_t root_len = strlen(uri) - strlen("/SKILL.md");
        char *path = malloc(root_len + 1 + strlen(file) + 1);
        if (path == NULL) {
            free(uri);
            fputs("mcpc: out of memory\n", stderr);
            return EXIT_ERROR;
        }
        sprintf(path, "%.*s/%s", (int)root_len, uri, file);
        free(uri);
        uri = path;
    }
    mcpc_contents_t *contents = NULL;
    st = mcpc_client_read_skill_file(client, uri, call_opts, &contents);
    free(uri);
    int code = st == MCPC_OK ? print_file(contents) : (report_status(st), exit_code_for(st));
    mcpc_contents_free(contents);
    return code;
}
