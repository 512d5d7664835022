/* Starts and stops the loopback HTTP fixture (tests/fixtures/http_server.py): a
 * child process that prints "PORT n" once listening and exits when its stdin closes. */
#ifndef MCPC_TEST_HTTP_FIXTURE_H
#define MCPC_TEST_HTTP_FIXTURE_H

#include <spawn.h>
#include <sys/wait.h>

#include "harness.h"

extern char **environ;

struct fixture {
    pid_t pid;
    int stdin_fd;
    int port;
    char log[256];
    char url[128];
};

/* `args` is a NULL-terminated list of extra fixture arguments. */
static int fixture_start(struct fixture *f, const char *const *args) {
    static int counter;
    memset(f, 0, sizeof *f);
    snprintf(f->log, sizeof f->log, "/tmp/mcpc-http-%d-%d.log", (int)getpid(), ++counter);
    unlink(f->log);
    const char *argv[40];
    size_t n = 0;
    const char *py = getenv("MCPC_PYTHON");
    argv[n++] = py && *py ? py : "python3";
    argv[n++] = "tests/fixtures/http_server.py";
    argv[n++] = "--log";
    argv[n++] = f->log;
    for (size_t i = 0; args && args[i] && n < 38; i++) argv[n++] = args[i];
    argv[n] = NULL;
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    int rc = posix_spawnp(&f->pid, argv[0], &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        return -1;
    }
    f->stdin_fd = in[1];
    FILE *o = fdopen(out[0], "r");
    char line[128];
    if (o && fgets(line, sizeof line, o) && sscanf(line, "PORT %d", &f->port) == 1) {
        fclose(o);
        snprintf(f->url, sizeof f->url, "http://127.0.0.1:%d/mcp", f->port);
        return 0;
    }
    if (o) fclose(o);
    fprintf(stderr, "  the HTTP fixture did not start\n");
    close(f->stdin_fd);
    waitpid(f->pid, NULL, 0);
    return -1;
}

static void fixture_stop(struct fixture *f) {
    if (f->pid <= 0) return;
    close(f->stdin_fd);
    int status = 0;
    waitpid(f->pid, &status, 0);
    f->pid = 0;
    unlink(f->log);
}

/* Counts the log lines that contain every one of the NULL-terminated needles. */
static int log_count(struct fixture *f, const char *const *needles) {
    char *s = read_file(f->log);
    int count = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        int all = 1;
        for (size_t i = 0; needles[i]; i++) all &= strstr(line, needles[i]) != NULL;
        count += all;
    }
    free(s);
    return count;
}

#endif
