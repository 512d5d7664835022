/* C tests of the skills extension against the demo server (demo/skills.py), in both
 * protocol generations: the listing, a skill's entry, its files read only once
 * verified, its directories; and each way a hostile server breaks a skill (a digest
 * or size that does not match, a file larger than stated, a frontmatter that differs
 * from the listing's, a listing naming a file outside its skill, dynamic files),
 * where nothing unverified is handed out and nothing unlisted is fetched. */
#define _GNU_SOURCE
#include "harness.h"

static const char *ERAS[] = {"--era=legacy", "--era=modern"};
static const char *SKILL = "skill://demo-greeting/SKILL.md";
static const char *NAMES = "skill://demo-greeting/references/names.md";
static char log_path[128];

static mcpc_client_t *connect_demo(const char *era, const char *fault) {
    snprintf(log_path, sizeof log_path, "/tmp/mcpc-skills-%d.log", (int)getpid());
    unlink(log_path);
    const char *argv[7] = {"python3", "demo/server.py", era, "--log", log_path};
    size_t argc = 5;
    if (fault) {
        argv[argc++] = "--fault";
        argv[argc++] = fault;
    }
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    mcpc_options_add_extension(o, "io.modelcontextprotocol/skills", NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, argc, o, &c), MCPC_OK);
    mcpc_options_free(o);
    return c;
}

/* How many requests of `method` the server received (its log has every line). */
static int requests(const char *method, const char *uri) {
    char *s = read_file(log_path);
    int n = 0;
    char want[128];
    snprintf(want, sizeof want, "\"method\":\"%s\"", method);
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) n += strstr(line, want) && (!uri || strstr(line, uri));
    free(s);
    return n;
}

static void close_client(mcpc_client_t *c) {
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    mcpc_client_free(c);
}

static void test_list_get_read_verified(void) {
    for (int e = 0; e < 2; e++) {
        mcpc_client_t *c = connect_demo(ERAS[e], NULL);
        if (!c) continue;
        /* Nothing is fetched ahead of need, and nothing unlisted is fetched at all. */
        mcpc_contents_t *r = NULL;
        CHECK_STATUS(mcpc_client_read_skill_file(c, SKILL, NULL, &r), MCPC_ERR_INTEGRITY);
        CHECK(r == NULL && requests("resources/read", NULL) == 0);
        char *json = NULL;
        CHECK_STATUS(mcpc_client_list_skills(c, NULL, &json), MCPC_OK);
        CHECK(json && strstr(json, "\"uri\":\"skill://demo-greeting/SKILL.md\""));
        CHECK(json && strstr(json, "\"digest\":\"sha256:"));
        mcpc_string_free(json);
        CHECK(requests("skills/list", NULL) == 1 && requests("resources/read", NULL) == 0);

        CHECK_STATUS(mcpc_client_read_skill_file(c, SKILL, NULL, &r), MCPC_OK);
        size_t len = 0;
        const char *text = r ? mcpc_contents_text(r, 0, &len) : NULL;
        CHECK(text && strstr(text, "name: demo-greeting") && len == strlen(text));
        mcpc_contents_free(r);
        r = NULL;
        CHECK_STATUS(mcpc_client_read_skill_file(c, NAMES, NULL, &r), MCPC_OK);
        CHECK(r && strcmp(mcpc_contents_text(r, 0, NULL), "Ada\nGrace\n") == 0);
        mcpc_contents_free(r);
        r = NULL;
        /* A file the listing does not name: refused, never asked for. */
        CHECK_STATUS(mcpc_client_read_skill_file(c, "skill://demo-greeting/scripts/run.sh", NULL, &r),
                     MCPC_ERR_INTEGRITY);
        CHECK(requests("resources/read", "scripts/run.sh") == 0);

        /* skills/get refreshes; an unknown skill is the server's -32602. */
        CHECK_STATUS(mcpc_client_get_skill(c, SKILL, NULL, &json), MCPC_OK);
        CHECK(json && strstr(json, "\"frontmatter\""));
        mcpc_string_free(json);
        json = NULL;
        CHECK_STATUS(mcpc_client_get_skill(c, "skill://nope/SKILL.md", NULL, &json), MCPC_ERR_RPC);
        CHECK(json == NULL && mcpc_last_error_rpc_code() == -32602);

        /* The server declared directoryRead; a directory outside every skill is refused. */
        CHECK_STATUS(mcpc_client_read_skill_directory(c, "skill://demo-greeting", NULL, &json), MCPC_OK);
        CHECK(json && strstr(json, "inode/directory"));
        mcpc_string_free(json);
        json = NULL;
        CHECK_STATUS(mcpc_client_read_skill_directory(c, "skill://elsewhere", NULL, &json), MCPC_ERR_INTEGRITY);

        CHECK_STATUS(mcpc_client_list_skills(NULL, NULL, &json), MCPC_ERR_INVALID_ARG);
        CHECK_STATUS(mcpc_client_read_skill_file(c, NULL, NULL, &r), MCPC_ERR_INVALID_ARG);
        close_client(c);
    }
}

/* Each fault: the listing, then a load of the skill as a host does it (SKILL.md, then
 * its other files only if SKILL.md passed). */
static void test_hostile_servers(void) {
    static const struct {
        const char *fault;
        mcpc_status_t skill_md; /* the read of SKILL.md */
        const char *why;
    } CASES[] = {
        {"skill-bad-digest", MCPC_ERR_INTEGRITY, "digest"},
        {"skill-bad-size", MCPC_ERR_INTEGRITY, "bytes where the listing says"},
        {"skill-bad-frontmatter", MCPC_ERR_INTEGRITY, "frontmatter differs"},
        {"skill-dynamic", MCPC_ERR_INTEGRITY, "dynamic"},
    };
    for (int e = 0; e < 2; e++) {
        for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
            mcpc_client_t *c = connect_demo(ERAS[e], CASES[k].fault);
            if (!c) continue;
            char *json = NULL;
            CHECK_STATUS(mcpc_client_list_skills(c, NULL, &json), MCPC_OK);
            mcpc_string_free(json);
            mcpc_contents_t *r = NULL;
            CHECK_STATUS(mcpc_client_read_skill_file(c, SKILL, NULL, &r), CASES[k].skill_md);
            CHECK(r == NULL);
            if (!strstr(mcpc_last_error_message(), CASES[k].why))
                fprintf(stderr, "  %s: %s\n", CASES[k].fault, mcpc_last_error_message());
            CHECK(strstr(mcpc_last_error_message(), CASES[k].why) != NULL);
            CHECK(requests("resources/read", "names.md") == 0);
            close_client(c);
        }
        /* A listing that names a file outside its skill: the entry is left out, and
         * none of its files can be read. */
        mcpc_client_t *c = connect_demo(ERAS[e], "skill-outside");
        if (!c) continue;
        char *json = NULL;
        CHECK_STATUS(mcpc_client_list_skills(c, NULL, &json), MCPC_OK);
        CHECK(json && strcmp(json, "[]") == 0);
        mcpc_string_free(json);
        mcpc_contents_t *r = NULL;
        CHECK_STATUS(mcpc_client_read_skill_file(c, SKILL, NULL, &r), MCPC_ERR_INTEGRITY);
        CHECK_STATUS(mcpc_client_get_skill(c, SKILL, NULL, &json), MCPC_ERR_PROTOCOL);
        CHECK(requests("resources/read", NULL) == 0);
        close_client(c);
    }
}

/* A server that offers no skills extension is never asked. */
static void test_not_offered(void) {
    const char *argv[] = {"python3", "tests/fixtures/input_server.py"};
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 2, NULL, &c), MCPC_OK);
    if (!c) return;
    char *json = NULL;
    CHECK_STATUS(mcpc_client_list_skills(c, NULL, &json), MCPC_ERR_NOT_SUPPORTED);
    CHECK(json == NULL);
    close_client(c);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    RUN(test_list_get_read_verified);
    RUN(test_hostile_servers);
    RUN(test_not_offered);
    unlink(log_path);
    return harness_finish();
}
