/* Starts and stops the loopback HTTP fixture (tests/fixtures/http_server.py): a
 * child process that prints "PORT n" once listening and exits when its stdin closes. */
#ifndef MCPC_TEST_HTTP_FIXTURE_H
#define MCPC_TEST_HTTP_FIXTURE_H

#include <sys/wait.h>

#include "harness.h"

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
    int from_child;
    if (spawn_piped(argv, &f->pid, &f->stdin_fd, &from_child) != 0) return -1;
    FILE *o = fdopen(from_child, "r");
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
