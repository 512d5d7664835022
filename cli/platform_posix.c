/*
 * platform_posix.c - platform.h on Linux and other POSIX systems: signals taken
 * by sigwait() on a thread of our own, a pipe to wake the login's poll(), a
 * process group per assertion command, mkstemp's 0600 files.
 */
#define _GNU_SOURCE /* explicit_bzero, pipe2 */
#include "platform.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

void plat_init(void) {}

int64_t plat_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void plat_clear(void *p, size_t len)
{
    explicit_bzero(p, len);
}

/* ---- interrupts: SIGINT/SIGTERM via sigwait() on our own thread ---------------- */

static atomic_int g_signal;        /* the first SIGINT/SIGTERM received, 0 if none */
static atomic_bool g_stop_waiting; /* main asks the signal thread to end */
static sigset_t g_set;             /* SIGINT, SIGTERM: blocked in every thread */
static pthread_t g_thread;
static void (*g_on_interrupt)(void);

static void *signal_thread(void *arg)
{
    (void)arg;
    for (;;) {
        int sig = 0;
        if (sigwait(&g_set, &sig) != 0)
            continue;
        if (atomic_load(&g_stop_waiting))
            break;
        int none = 0;
        atomic_compare_exchange_strong(&g_signal, &none, sig);
        g_on_interrupt();
    }
    return NULL;
}

bool plat_interrupts_start(void (*on_interrupt)(void))
{
    /*
     * Block SIGINT and SIGTERM before the first mcpc call: the library starts its
     * threads on demand, and they inherit this mask, so the signals can only be
     * taken by sigwait() in our signal thread. (The server process must not keep
     * this mask; clearing it in the child is the library's job, not ours.)
     */
    g_on_interrupt = on_interrupt;
    sigemptyset(&g_set);
    sigaddset(&g_set, SIGINT);
    sigaddset(&g_set, SIGTERM);
    int err = pthread_sigmask(SIG_BLOCK, &g_set, NULL);
    if (err != 0) {
        fprintf(stderr, "mcpc: pthread_sigmask: %s\n", strerror(err));
        return false;
    }
    err = pthread_create(&g_thread, NULL, signal_thread, NULL);
    if (err != 0) {
        fprintf(stderr, "mcpc: cannot start the signal thread: %s\n", strerror(err));
        return false;
    }
    return true;
}

/* Wakes the signal thread with a signal it is waiting for and joins it. */
void plat_interrupts_stop(void)
{
    atomic_store(&g_stop_waiting, true);
    pthread_kill(g_thread, SIGTERM);
    pthread_join(g_thread, NULL);
}

int plat_interrupt_received(void)
{
    return atomic_load(&g_signal);
}

const char *plat_interrupt_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* ---- the login's listener ------------------------------------------------------ */

/* A pipe whose read end becomes readable on plat_wake. */
static int g_wake[2] = {-1, -1};

bool plat_wake_init(void)
{
    if (pipe(g_wake) != 0)
        return false;
    for (int i = 0; i < 2; i++)
        fcntl(g_wake[i], F_SETFD, FD_CLOEXEC);
    fcntl(g_wake[1], F_SETFL, O_NONBLOCK);
    return true;
}

void plat_wake(void)
{
    if (g_wake[1] >= 0) {
        ssize_t r = write(g_wake[1], "x", 1);
        (void)r; /* a full pipe is already readable */
    }
}

plat_socket plat_listen_loopback(uint16_t port, uint16_t *out_port)
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

int plat_wait_readable(plat_socket s, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - plat_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p[2] = {{.fd = (int)s, .events = POLLIN}, {.fd = g_wake[0], .events = POLLIN}};
        int n = poll(p, 2, left > 1000000 ? 1000000 : (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 || (p[1].revents & POLLIN))
            return -1;
        if (n > 0)
            return 1;
    }
}

plat_socket plat_accept(plat_socket s)
{
    return accept((int)s, NULL, NULL);
}

ssize_t plat_recv(plat_socket s, char *buf, size_t len)
{
    ssize_t r = recv((int)s, buf, len, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return -2;
    return r < 0 ? -1 : r;
}

void plat_send_all(plat_socket s, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = send((int)s, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        p += w;
        len -= (size_t)w;
    }
}

void plat_close_socket(plat_socket s)
{
    close((int)s);
}

const char *plat_socket_error(void)
{
    return strerror(errno);
}

/* Runs xdg-open on the URL, quietly; a machine without it just shows the URL. */
long plat_open_browser(const char *url)
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

void plat_browser_done(long browser)
{
    if (browser > 0)
        waitpid((pid_t)browser, NULL, WNOHANG); /* xdg-open hands off and exits at once */
}

/* ---- assertion commands: a process group each ------------------------------------ */

struct plat_command {
    pid_t pid;
    int fd; /* the read end of its stdout */
};

struct plat_command *plat_command_start(const char *option, char *const *argv)
{
    struct plat_command *c = malloc(sizeof *c);
    int fds[2];
    if (c == NULL)
        return NULL;
    if (pipe2(fds, O_CLOEXEC) != 0) {
        free(c);
        return NULL;
    }
    pid_t pid = -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    /* mcpc's threads block SIGINT and SIGTERM; the command must not inherit that. */
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    int err = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err != 0) {
        fprintf(stderr, "mcpc: %s: cannot run '%s': %s\n", option, argv[0], strerror(err));
        close(fds[0]);
        free(c);
        return NULL;
    }
    c->pid = pid;
    c->fd = fds[0];
    return c;
}

ssize_t plat_command_read(struct plat_command *c, char *buf, size_t cap, int64_t deadline)
{
    size_t got = 0;
    for (;;) {
        int64_t left = deadline - plat_now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int n = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            continue;
        char *dst = got < cap ? buf + got : buf; /* past cap: read on to see the end, keep nothing */
        size_t room = got < cap ? cap - got : cap;
        ssize_t r = read(c->fd, dst, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return got > cap ? -2 : (ssize_t)got;
        got += (size_t)r;
    }
}

void plat_command_kill(struct plat_command *c)
{
    kill(-c->pid, SIGKILL);
}

const char *plat_command_finish(struct plat_command *c, char *why, size_t size)
{
    close(c->fd);
    int status = 0;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR) {
    }
    free(c);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return NULL;
    if (WIFEXITED(status))
        snprintf(why, size, "exited with status %d", WEXITSTATUS(status));
    else
        snprintf(why, size, "was killed by signal %d", WTERMSIG(status));
    return why;
}

/* ---- files ------------------------------------------------------------------------- */

bool plat_dir_writable(const char *path, const char **why)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash == NULL ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (dir == NULL) {
        *why = "out of memory";
        return false;
    }
    bool ok = access(dir, W_OK | X_OK) == 0;
    if (!ok)
        *why = errno == ENOENT ? "its directory does not exist" : "its directory is not writable";
    free(dir);
    return ok;
}

FILE *plat_create_private(const char *path, char **out_tmp, const char **why)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 8);
    if (tmp == NULL) {
        *why = "out of memory";
        return NULL;
    }
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".XXXXXX", 8);
    int fd = mkstemp(tmp); /* mode 0600 */
    if (fd < 0) {
        *why = strerror(errno);
        free(tmp);
        return NULL;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        *why = strerror(errno);
        close(fd);
        unlink(tmp);
        free(tmp);
        return NULL;
    }
    *out_tmp = tmp;
    return f;
}

bool plat_sync(FILE *f)
{
    return fflush(f) == 0 && fsync(fileno(f)) == 0;
}

bool plat_replace(const char *tmp, const char *path)
{
    return rename(tmp, path) == 0;
}

char *plat_abs_dir(const char *dir)
{
    return realpath(dir, NULL);
}
