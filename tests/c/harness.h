/* A small test harness for the C tests: the checks and runner of check.h, and the
 * POSIX helpers the tests share (files, processes, time). */
#ifndef MCPC_TEST_HARNESS_H
#define MCPC_TEST_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* Reads a whole file into a malloc'd NUL-terminated buffer ("" if missing). */
static inline char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        char *e = malloc(1);
        e[0] = 0;
        return e;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    buf[len] = 0;
    fclose(f);
    return buf;
}

static inline int file_contains(const char *path, const char *needle) {
    char *s = read_file(path);
    int found = strstr(s, needle) != NULL;
    free(s);
    return found;
}

/* Waits until `path` contains `needle`, observing the file: true if it did within
 * `limit_ms`. Used to wait for what another process does, never as a fixed delay. */
static inline int wait_for_file_text(const char *path, const char *needle, int limit_ms) {
    double end = now_ms() + limit_ms;
    while (now_ms() < end) {
        if (file_contains(path, needle)) {
            return 1;
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return file_contains(path, needle);
}

/* Number of processes whose command line contains `marker`. */
static inline int count_processes_with(const char *marker) {
    DIR *d = opendir("/proc");
    if (!d) {
        return -1;
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') {
            continue;
        }
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/cmdline", e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) {
            continue;
        }
        char buf[4096];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i++) {
            if (buf[i] == 0) {
                buf[i] = ' ';
            }
        }
        buf[n] = 0;
        if (strstr(buf, marker)) {
            count++;
        }
    }
    closedir(d);
    return count;
}

/* Number of this process's children that are zombies. */
static inline int count_zombie_children(void) {
    DIR *d = opendir("/proc");
    if (!d) {
        return -1;
    }
    int count = 0;
    struct dirent *e;
    int me = (int)getpid();
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') {
            continue;
        }
        char path[300];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) {
            continue;
        }
        char buf[1024];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *close_paren = strrchr(buf, ')');
        if (!close_paren) {
            continue;
        }
        char state = 0;
        int ppid = 0;
        if (sscanf(close_paren + 2, "%c %d", &state, &ppid) == 2 && ppid == me && state == 'Z') {
            count++;
        }
    }
    closedir(d);
    return count;
}

/* Number of open file descriptors of this process. */
static inline int count_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) {
        return -1;
    }
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] != '.') {
            count++;
        }
    }
    closedir(d);
    return count - 1; /* the directory stream's own fd */
}

extern char **environ;

/* Starts argv (NULL-terminated; argv[0] looked up in PATH) with its stdin and stdout
 * on pipes and no blocked signals. Gives the child's pid and this side's two pipe
 * ends (close-on-exec, so other children do not hold them). 0 on success. */
static inline int spawn_piped(const char *const *argv, pid_t *pid, int *to_child, int *from_child) {
    int in[2], out[2];
    if (pipe(in) != 0) return -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    int rc = posix_spawnp(pid, argv[0], &fa, &attr, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
        close(in[1]);
        close(out[0]);
        return -1;
    }
    fcntl(in[1], F_SETFD, FD_CLOEXEC);
    fcntl(out[0], F_SETFD, FD_CLOEXEC);
    *to_child = in[1];
    *from_child = out[0];
    return 0;
}

#endif
