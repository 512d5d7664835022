/*
 * login.c - the browser login of `mcpc --oauth` (see login.h).
 *
 * The listener is opened before the login so that its port is known for the
 * redirect URI. It takes exactly one request, whatever it is: mcpc checks the
 * redirect's state and issuer, so a stray request fails the login rather than
 * letting a second one in.
 */
#include "login.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

/* The request line and headers of the redirect; a browser's fit easily. */
#define REQUEST_MAX 8192

struct login {
    int fd; /* the listener; -1 once its one request was taken */
    uint16_t port;
    int64_t timeout_ms;
    bool open_browser;
};

/* A pipe whose read end becomes readable on login_interrupt. */
static int g_wake[2] = {-1, -1};

bool login_init(void)
{
    if (pipe(g_wake) != 0)
        return false;
    for (int i = 0; i < 2; i++)
        fcntl(g_wake[i], F_SETFD, FD_CLOEXEC);
    fcntl(g_wake[1], F_SETFL, O_NONBLOCK);
    return true;
}

void login_interrupt(void)
{
    if (g_wake[1] >= 0) {
        ssize_t r = write(g_wake[1], "x", 1);
        (void)r; /* a full pipe is already readable */
    }
}

static int listen_loopback(uint16_t port, uint16_t *out_port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *out_port = ntohs(a.sin_port);
    return fd;
}

struct login *login_new(int64_t timeout_ms, bool open_browser, const char **why)
{
    struct login *l = calloc(1, sizeof *l);
    if (l == NULL) {
        *why = "out of memory";
        return NULL;
    }
    l->timeout_ms = timeout_ms;
    l->open_browser = open_browser;
    l->fd = listen_loopback(0, &l->port);
    if (l->fd < 0) {
        *why = strerror(errno);
        free(l);
        return NULL;
    }
    return l;
}

void login_free(struct login *l)
{
    if (l == NULL)
        return;
    if (l->fd >= 0)
        close(l->fd);
    free(l);
}

static void on_free(void *userdata)
{
    login_free(userdata);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits until `fd` is readable: 1, or 0 at the deadline, -1 when interrupted. */
static int wait_readable(int fd, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = g_wake[0], .events = POLLIN}};
        int n = poll(p, 2, left > 1000000 ? 1000000 : (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (p[1].revents & POLLIN))
            return -1;
        if (n > 0)
            return 1;
    }
}

/* Runs xdg-open on the URL, quietly; a machine without it just shows the URL. */
static pid_t open_browser(const char *url)
{
    char *copy = strdup(url);
    char prog[] = "xdg-open";
    char *argv[] = {prog, copy, NULL};
    pid_t pid = -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    sigemptyset(&none);
    if (copy == NULL)
        return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    /* This thread blocks SIGINT and SIGTERM; the browser must not inherit that. */
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    if (posix_spawnp(&pid, "xdg-open", &fa, &attr, argv, environ) != 0)
        pid = -1;
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    free(copy);
    return pid;
}

static void send_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = send(fd, s, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

static void answer(int fd, int code, const char *text)
{
    char page[512], head[256];
    int plen = snprintf(page, sizeof page,
                        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcpc</title></head>"
                        "<body><p>%s</p></body></html>\n",
                        text);
    int hlen = snprintf(head, sizeof head,
                        "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
                        "Content-Length: %d\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n",
                        code, code == 200 ? "OK" : "Bad Request", plen);
    send_all(fd, head, (size_t)hlen);
    send_all(fd, page, (size_t)plen);
}

/*
 * Reads one request from `conn` until its headers end (or REQUEST_MAX bytes) and
 * returns its target, malloc'd, when it is "GET /... HTTP/1.x" with a target of
 * visible ASCII; NULL otherwise. *interrupted says whether login_interrupt ended it.
 */
static char *read_target(int conn, int64_t deadline, bool *interrupted)
{
    char buf[REQUEST_MAX + 1];
    size_t got = 0;
    while (got < REQUEST_MAX) {
        int w = wait_readable(conn, deadline);
        if (w <= 0) {
            *interrupted = w < 0;
            return NULL;
        }
        ssize_t r = recv(conn, buf + got, REQUEST_MAX - got, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL)
            break;
    }
    buf[got] = '\0';
    if (strncmp(buf, "GET /", 5) != 0)
        return NULL;
    const char *t = buf + 4, *e = t;
    while ((unsigned char)*e > 0x20 && (unsigned char)*e < 0x7f)
        e++;
    if (strncmp(e, " HTTP/1.", 8) != 0)
        return NULL;
    return strndup(t, (size_t)(e - t));
}

/* Takes the one request of the login; returns its target or NULL (why says). */
static char *take_redirect(struct login *l, int64_t deadline, const char **why)
{
    int w = wait_readable(l->fd, deadline);
    if (w <= 0) {
        *why = w < 0 ? "interrupted" : "timed out waiting for the browser";
        return NULL;
    }
    int conn = accept(l->fd, NULL, NULL);
    close(l->fd);
    l->fd = -1;
    if (conn < 0) {
        *why = strerror(errno);
        return NULL;
    }
    bool interrupted = false;
    char *target = read_target(conn, deadline, &interrupted);
    if (target != NULL)
        answer(conn, 200, "Login received. You can close this window and return to mcpc.");
    else if (!interrupted)
        answer(conn, 400, "This is not a login redirect. mcpc stopped the login.");
    close(conn);
    *why = interrupted ? "interrupted" : "the browser's request was not a login redirect";
    return target;
}

static void on_authorize(void *userdata, mcpc_auth_request_t *req)
{
    struct login *l = userdata;
    const char *url = mcpc_auth_request_url(req);
    if (l->fd < 0) {
        /* A second login in one run (a step-up): the redirect URI names this port. */
        uint16_t port = 0;
        l->fd = listen_loopback(l->port, &port);
        if (l->fd < 0) {
            fprintf(stderr, "mcpc: cannot listen on 127.0.0.1:%u again for the login: %s\n",
                    (unsigned)l->port, strerror(errno));
            mcpc_auth_request_cancel(req);
            return;
        }
    }
    fputs("mcpc: to log in, open this URL in a browser:\n", stderr);
    put_sanitized(stderr, url);
    fputc('\n', stderr);
    pid_t browser = l->open_browser ? open_browser(url) : -1;

    const char *why = NULL;
    char *target = take_redirect(l, now_ms() + l->timeout_ms, &why);
    if (browser > 0)
        waitpid(browser, NULL, WNOHANG); /* xdg-open hands off and exits at once */
    if (target == NULL) {
        fprintf(stderr, "mcpc: login stopped: %s\n", why);
        mcpc_auth_request_cancel(req);
        return;
    }
    size_t len = strlen(target) + 32;
    char *back = malloc(len);
    if (back == NULL) {
        free(target);
        mcpc_auth_request_cancel(req);
        return;
    }
    snprintf(back, len, "http://127.0.0.1:%u%s", (unsigned)l->port, target);
    free(target);
    mcpc_auth_request_complete(req, back);
    free(back);
}

mcpc_status_t login_attach(struct login *l, mcpc_oauth_t *oauth)
{
    char uri[64];
    snprintf(uri, sizeof uri, "http://127.0.0.1:%u/callback", (unsigned)l->port);
    mcpc_status_t st = mcpc_oauth_set_redirect_uri(oauth, uri);
    if (st != MCPC_OK) {
        login_free(l);
        return st;
    }
    return mcpc_oauth_set_authorize_callback(oauth, on_authorize, l, on_free);
}
