/* tinyproxy on loopback for the C tests (test_proxy.c, test_peers.c): started on a
 * free port with its own configuration and log, with or without Basic
 * authentication, and stopped with everything it wrote. MCPC_TINYPROXY names the
 * program (default: tinyproxy on PATH). Needs harness.h. */
#ifndef MCPC_TEST_PROXY_FIXTURE_H
#define MCPC_TEST_PROXY_FIXTURE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "harness.h"

struct proxy {
    pid_t pid;
    int port;
    char dir[128];
    char log[200];
};

/* A port nothing listens on right now. */
static inline int free_port(void) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        if (s >= 0) close(s);
        return -1;
    }
    close(s);
    return ntohs(a.sin_port);
}

static inline int can_connect(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    if (s >= 0) close(s);
    return ok;
}

/* Starts tinyproxy on a free loopback port; `auth` ("user pass") turns on Basic
 * authentication. Waits until it accepts connections (bounded). */
static inline int proxy_start(struct proxy *p, const char *auth) {
    static int counter;
    memset(p, 0, sizeof *p);
    snprintf(p->dir, sizeof p->dir, "/tmp/mcpc-proxy-%d-%d", (int)getpid(), ++counter);
    mkdir(p->dir, 0700);
    snprintf(p->log, sizeof p->log, "%s/proxy.log", p->dir);
    p->port = free_port();
    char conf[200];
    snprintf(conf, sizeof conf, "%s/tinyproxy.conf", p->dir);
    FILE *f = fopen(conf, "w");
    if (!f || p->port <= 0) return -1;
    fprintf(f, "Port %d\nListen 127.0.0.1\nTimeout 30\nLogFile \"%s\"\nLogLevel Info\nMaxClients 100\n", p->port,
            p->log);
    if (auth) fprintf(f, "BasicAuth %s\n", auth);
    fclose(f);
    const char *prog = getenv("MCPC_TINYPROXY");
    const char *argv[] = {prog && *prog ? prog : "tinyproxy", "-d", "-c", conf, NULL};
    int to, from;
    if (spawn_piped(argv, &p->pid, &to, &from) != 0) return -1;
    close(to);
    close(from);
    for (int i = 0; i < 500 && !can_connect(p->port); i++) {
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (!can_connect(p->port)) {
        fprintf(stderr, "  tinyproxy did not start\n");
        return -1;
    }
    return 0;
}

static inline void proxy_stop(struct proxy *p) {
    if (p->pid > 0) {
        kill(p->pid, SIGTERM);
        waitpid(p->pid, NULL, 0);
    }
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf %s", p->dir);
    if (system(cmd) != 0) fprintf(stderr, "  could not remove %s\n", p->dir);
}

static inline int proxy_log_has(struct proxy *p, const char *needle) { return file_contains(p->log, needle); }

#endif
