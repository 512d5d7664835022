/*
 * assertion.c - the client key and assertion commands of `mcpc --oauth` (see
 * assertion.h).
 *
 * The command gets its own process group (a job object on Windows: platform.h), so
 * a timeout kills whatever it started too; its stderr is the user's, its stdin empty. What it prints is a secret:
 * it is never shown, and the buffers holding it are cleared.
 */
#include "assertion.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "platform.h"

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
    plat_clear(pem, strlen(pem));
    free(pem);
}

/* The command running now, and whether a signal ended the wait. The lock keeps a
 * kill from the signal thread off a command that is being freed. */
static pthread_mutex_t g_running_lock = PTHREAD_MUTEX_INITIALIZER;
static struct plat_command *g_running;
static atomic_bool g_interrupted;

static void set_running(struct plat_command *c)
{
    pthread_mutex_lock(&g_running_lock);
    g_running = c;
    pthread_mutex_unlock(&g_running_lock);
}

void assertion_interrupt(void)
{
    atomic_store(&g_interrupted, true);
    pthread_mutex_lock(&g_running_lock);
    if (g_running != NULL)
        plat_command_kill(g_running);
    pthread_mutex_unlock(&g_running_lock);
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

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int32_t run_command(void *userdata, char *buf, size_t buf_len)
{
    const struct assertion_command *c = userdata;
    if (buf_len < 2 || atomic_load(&g_interrupted))
        return 1;
    struct plat_command *cmd = plat_command_start(c->option, c->argv);
    if (cmd == NULL)
        return 1;
    set_running(cmd);
    if (atomic_load(&g_interrupted)) /* the signal came while it started */
        plat_command_kill(cmd);
    ssize_t len = plat_command_read(cmd, buf, buf_len - 1, plat_now_ms() + c->timeout_ms);
    if (len == -1)
        plat_command_kill(cmd);
    set_running(NULL);
    char status[48];
    const char *exit_why = plat_command_finish(cmd, status, sizeof status);
    const char *why = NULL;
    char code[48];
    if (atomic_load(&g_interrupted)) {
        why = "was interrupted";
    } else if (len == -1) {
        snprintf(code, sizeof code, "gave no answer within %lld ms", (long long)c->timeout_ms);
        why = code;
    } else if (len == -2) {
        why = "printed more than an assertion can be";
    } else if (exit_why != NULL) {
        why = exit_why;
    }
    size_t start = 0, end = len > 0 ? (size_t)len : 0;
    while (start < end && is_space(buf[start]))
        start++;
    while (end > start && is_space(buf[end - 1]))
        end--;
    if (why == NULL && start == end)
        why = "printed nothing";
    if (why != NULL) {
        plat_clear(buf, buf_len);
        fprintf(stderr, "mcpc: %s: the command %s\n", c->option, why);
        return 1;
    }
    memmove(buf, buf + start, end - start);
    plat_clear(buf + (end - start), buf_len - (end - start));
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
