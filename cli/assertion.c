/*
 * assertion.c - the client key and assertion commands of `mcpc --oauth` (see
 * assertion.h).
 *
 * The command gets its own process group, so a timeout kills whatever it started
 * too; its stderr is the user's, its stdin /dev/null. What it prints is a secret:
 * it is never shown, and the buffers holding it are cleared.
 */
#define _GNU_SOURCE /* explicit_bzero */
#include "assertion.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A PEM key is a few hundred bytes; this bounds what is read. */
#define KEY_MAX 16384

char *client_key_read(const char *path, const char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        *why = strerror(errno);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode) || sb.st_size > KEY_MAX) {
        close(fd);
        *why = S_ISREG(sb.st_mode) ? "too large for a key" : "not a regular file";
        return NULL;
    }
    char *pem = calloc(1, (size_t)sb.st_size + 1);
    size_t got = 0;
    while (pem != NULL && got < (size_t)sb.st_size) {
        ssize_t r = read(fd, pem + got, (size_t)sb.st_size - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (pem == NULL) {
        *why = "out of memory";
        return NULL;
    }
    /* The library's own check, on scratch settings: the key is known good before
     * anything starts. */
    mcpc_oauth_t *scratch = mcpc_oauth_new();
    mcpc_status_t st = scratch ? mcpc_oauth_set_client_key(scratch, pem) : MCPC_ERR_INVALID_ARG;
    mcpc_oauth_free(scratch);
    if (st != MCPC_OK) {
        client_key_free(pem);
        *why = "not a PKCS#8 P-256 private key in PEM";
        return NULL;
    }
    return pem;
}

void client_key_free(char *pem)
{
    if (pem == NULL)
        return;
    explicit_bzero(pem, strlen(pem));
    free(pem);
}

/* The command running now (its process group), and whether a signal ended the wait. */
static atomic_int g_running;
static atomic_bool g_interrupted;

void assertion_interrupt(void)
{
    atomic_store(&g_interrupted, true);
    int pid = atomic_load(&g_running);
    if (pid > 0)
        kill(-pid, SIGKILL);
}

struct assertion_command {
    const char *option;
    char **argv; /* NULL-terminated copies */
    int64_t timeout_ms;
};

static void command_free(void *userdata)
{
    struct assertion_command *c = userdata;
    if (c == NULL)
        return;
    for (char **a = c->argv; a != NULL && *a != NULL; a++)
        free(*a);
    free(c->argv);
    free(c);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static pid_t spawn(const struct assertion_command *c, int out_fd)
{
    pid_t pid = -1;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    /* mcpc's threads block SIGINT and SIGTERM; the command must not inherit that. */
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    int err = posix_spawnp(&pid, c->argv[0], &fa, &attr, c->argv, environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        fprintf(stderr, "mcpc: %s: cannot run '%s': %s\n", c->option, c->argv[0], strerror(err));
        return -1;
    }
    return pid;
}

/* Reads the command's output into buf (at most cap bytes): its length, or -1 when
 * the deadline passed (-2 when it printed more than cap). */
static ssize_t read_output(int fd, char *buf, size_t cap, int64_t deadline)
{
    size_t got = 0;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, left > 1000000 ? 1000000 : (int)left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            continue;
        char *dst = got < cap ? buf + got : buf; /* past cap: read on to see the end, keep nothing */
        size_t room = got < cap ? cap - got : cap;
        ssize_t r = read(fd, dst, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return got > cap ? -2 : (ssize_t)got;
        got += (size_t)r;
    }
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int32_t run_command(void *userdata, char *buf, size_t buf_len)
{
    const struct assertion_command *c = userdata;
    int fds[2];
    if (buf_len < 2 || atomic_load(&g_interrupted) || pipe2(fds, O_CLOEXEC) != 0)
        return 1;
    pid_t pid = spawn(c, fds[1]);
    close(fds[1]);
    if (pid < 0) {
        close(fds[0]);
        return 1;
    }
    atomic_store(&g_running, (int)pid);
    if (atomic_load(&g_interrupted)) /* the signal came while it started */
        kill(-pid, SIGKILL);
    ssize_t len = read_output(fds[0], buf, buf_len - 1, now_ms() + c->timeout_ms);
    close(fds[0]);
    if (len == -1)
        kill(-pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    atomic_store(&g_running, 0);
    const char *why = NULL;
    char code[48];
    if (atomic_load(&g_interrupted)) {
        why = "was interrupted";
    } else if (len == -1) {
        snprintf(code, sizeof code, "gave no answer within %lld ms", (long long)c->timeout_ms);
        why = code;
    } else if (len == -2) {
        why = "printed more than an assertion can be";
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFEXITED(status))
            snprintf(code, sizeof code, "exited with status %d", WEXITSTATUS(status));
        else
            snprintf(code, sizeof code, "was killed by signal %d", WTERMSIG(status));
        why = code;
    }
    size_t start = 0, end = len > 0 ? (size_t)len : 0;
    while (start < end && is_space(buf[start]))
        start++;
    while (end > start && is_space(buf[end - 1]))
        end--;
    if (why == NULL && start == end)
        why = "printed nothing";
    if (why != NULL) {
        explicit_bzero(buf, buf_len);
        fprintf(stderr, "mcpc: %s: the command %s\n", c->option, why);
        return 1;
    }
    memmove(buf, buf + start, end - start);
    explicit_bzero(buf + (end - start), buf_len - (end - start));
    return 0;
}

struct assertion_command *assertion_command_new(const char *option, char *const *argv, size_t argc, int64_t timeout_ms)
{
    struct assertion_command *c = calloc(1, sizeof *c);
    if (c == NULL || (c->argv = calloc(argc + 1, sizeof *c->argv)) == NULL) {
        free(c);
        return NULL;
    }
    c->option = option;
    c->timeout_ms = timeout_ms;
    for (size_t k = 0; k < argc; k++) {
        if ((c->argv[k] = strdup(argv[k])) == NULL) {
            command_free(c);
            return NULL;
        }
    }
    return c;
}

mcpc_status_t assertion_attach(struct assertion_command *c, mcpc_oauth_t *oauth)
{
    return mcpc_oauth_set_assertion_callback(oauth, run_command, c, command_free);
}
