/* What the peer tests share (tests/c/test_peers.c, test_peers_tasks.c): where the
 * peers are (the MCPC_PEERS_* variables of the peers.env tests/peers/install.sh
 * writes), a temporary folder for logs, server processes in process groups of
 * their own, line counts in logs, recorded callbacks and the CLI run as a process. */
#ifndef MCPC_TEST_PEERS_FIXTURE_H
#define MCPC_TEST_PEERS_FIXTURE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "harness.h"
#include "proxy_fixture.h"

/* ---- the peers ---------------------------------------------------------- */

/* The value of a MCPC_PEERS_* variable; a missing one fails the running test. */
static inline const char *peer(const char *var) {
    const char *v = getenv(var);
    if (!v || !*v) {
        fprintf(stderr, "  %s is not set: install the peers (tests/peers/install.sh) and source their peers.env\n",
                var);
        harness_failures_in_test++;
        return NULL;
    }
    return v;
}

static char tmpdir[256];

static inline void tmp_path(char *out, size_t n, const char *name) {
    static int counter;
    snprintf(out, n, "%s/%d-%s", tmpdir, ++counter, name);
}

static inline void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits until `cond(arg)` holds, polling; true if it did within `limit_ms`. */
static inline bool wait_until(bool (*cond)(void *), void *arg, int limit_ms) {
    double end = now_ms() + limit_ms;
    while (now_ms() < end) {
        if (cond(arg)) return true;
        sleep_ms(10);
    }
    return cond(arg);
}

/* ---- server processes --------------------------------------------------- */

struct server {
    pid_t pid;
    int port;
    char url[128];
    char out[256]; /* its stdout */
    char err[256]; /* its stderr */
    char log[256]; /* its request log (py_server.py, tasks_server.py: --log) */
};

/* Starts argv (NULL-terminated) in its own process group, stdin from /dev/null,
 * stdout and stderr to files, with `extra_env` ("NAME=value" or NULL) added. */
static inline pid_t spawn_logged(const char *const *argv, const char *out, const char *err, const char *extra_env) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 2, sizeof *env);
    memcpy(env, environ, n * sizeof *env);
    env[n] = (char *)extra_env;
    pid_t pid = -1;
    if (posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv, env) != 0) pid = -1;
    free(env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return pid;
}

/* Stops a process group: SIGTERM, then SIGKILL after 3 s; always reaps. */
static inline int stop_pid(pid_t pid) {
    if (pid <= 0) return -1;
    kill(-pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 300; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
        sleep_ms(10);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    return status;
}

static inline void server_stop(struct server *s) {
    stop_pid(s->pid);
    s->pid = 0;
}

static inline bool port_open(int port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

/* server-everything over Streamable HTTP on `port` (0: a free one). Its stdout (a
 * line per request, session ids) goes to s->out. */
static inline int everything_http_start(struct server *s, int port) {
    const char *node = peer("MCPC_PEERS_NODE"), *ev = peer("MCPC_PEERS_EVERYTHING");
    if (!node || !ev) return -1;
    memset(s, 0, sizeof *s);
    s->port = port ? port : free_port();
    tmp_path(s->out, sizeof s->out, "everything.out");
    tmp_path(s->err, sizeof s->err, "everything.err");
    char env[32];
    snprintf(env, sizeof env, "PORT=%d", s->port);
    const char *argv[] = {node, ev, "streamableHttp", NULL};
    s->pid = spawn_logged(argv, s->out, s->err, env);
    /* Its "listening" line reaches a file only at exit: watch the port instead. */
    double end = now_ms() + 20000;
    while (s->pid > 0 && !port_open(s->port) && now_ms() < end) sleep_ms(20);
    if (s->pid <= 0 || !port_open(s->port)) {
        fprintf(stderr, "  server-everything did not start on port %d\n", s->port);
        server_stop(s);
        return -1;
    }
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%d/mcp", s->port);
    return 0;
}


/* Number of lines of `path` holding every one of the NULL-terminated needles. */
static inline int vcount_lines(const char *path, va_list ap) {
    const char *needles[8];
    size_t k = 0;
    const char *x;
    while ((x = va_arg(ap, const char *)) != NULL && k < 8) needles[k++] = x;
    char *s = read_file(path);
    int count = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        bool all = true;
        for (size_t i = 0; i < k; i++) all &= strstr(line, needles[i]) != NULL;
        count += all;
    }
    free(s);
    return count;
}

static inline int count_lines(const char *path, ...) {
    va_list ap;
    va_start(ap, path);
    int n = vcount_lines(path, ap);
    va_end(ap);
    return n;
}

/* count_lines once it reaches `want` (what another process writes may come a little
 * later), or after 3 s whatever it is then. */
static inline int wait_count_lines(int want, const char *path, ...) {
    double end = now_ms() + 3000;
    for (;;) {
        va_list ap;
        va_start(ap, path);
        int n = vcount_lines(path, ap);
        va_end(ap);
        if (n >= want || now_ms() >= end) return n;
        sleep_ms(10);
    }
}
#define LINES(path, ...) count_lines(path, __VA_ARGS__, (const char *)NULL)
#define WAIT_LINES(want, path, ...) wait_count_lines(want, path, __VA_ARGS__, (const char *)NULL)

/* ---- callbacks that record -------------------------------------------- */

/* Collected text lines (stderr lines, notification methods), thread-safe. */
struct lines {
    pthread_mutex_t mu;
    char *buf;
    size_t len;
    int count;
};

static inline void lines_add(struct lines *l, const char *s, size_t n) {
    pthread_mutex_lock(&l->mu);
    l->buf = realloc(l->buf, l->len + n + 2);
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    l->buf[l->len++] = '\n';
    l->buf[l->len] = 0;
    l->count++;
    pthread_mutex_unlock(&l->mu);
}

static inline int lines_count_with(struct lines *l, const char *needle) {
    pthread_mutex_lock(&l->mu);
    int count = 0;
    for (const char *p = l->buf; p && (p = strstr(p, needle)) != NULL; p += strlen(needle)) count++;
    pthread_mutex_unlock(&l->mu);
    return count;
}

static inline void lines_free(struct lines *l) {
    free(l->buf);
    l->buf = NULL;
}

#define LINES_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0}

static inline void on_stderr(void *ud, const char *line, size_t len) { lines_add(ud, line, len); }

static inline void on_notification(void *ud, const char *method, const char *params) {
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%s %s", method, params ? params : "");
    lines_add(ud, buf, (size_t)(n < (int)sizeof buf ? n : (int)sizeof buf - 1));
}

struct lines_wait {
    struct lines *l;
    const char *needle;
    int at_least;
};

static inline bool lines_have(void *arg) {
    struct lines_wait *w = arg;
    return lines_count_with(w->l, w->needle) >= w->at_least;
}

static inline bool wait_lines(struct lines *l, const char *needle, int at_least, int limit_ms) {
    struct lines_wait w = {l, needle, at_least};
    return wait_until(lines_have, &w, limit_ms);
}

/* ---- clients, tests and the CLI ----------------------------------------- */

/* Client options with a timeout, named as the peer tests' client. */
static inline mcpc_options_t *options(int64_t timeout_ms) {
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, timeout_ms);
    mcpc_options_set_client_info(o, "mcpc-peer-tests", mcpc_version());
    return o;
}

/* Runs the CLI with `args` (NULL-terminated); gives its exit code (-1 if it did not
 * exit within 30 s), its stdout and its stderr (both malloc'd). With `sigint_when`,
 * sends SIGINT once its stderr holds that text. */
static inline int cli_run(char **out, char **err_out, const char *sigint_when, ...) {
    const char *mcpc = getenv("MCPC");
    if (!mcpc || !*mcpc) mcpc = "build/debug/mcpc";
    const char *argv[32] = {mcpc};
    size_t n = 1;
    va_list ap;
    va_start(ap, sigint_when);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && n < 31) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    char o[256], e[256];
    tmp_path(o, sizeof o, "cli.out");
    tmp_path(e, sizeof e, "cli.err");
    pid_t pid = spawn_logged(argv, o, e, NULL);
    int status = 0, code = -1;
    double t0 = now_ms();
    bool sent = false;
    while (now_ms() - t0 < 30000) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            break;
        }
        if (sigint_when && !sent && file_contains(e, sigint_when)) {
            kill(pid, SIGINT);
            sent = true;
        }
        sleep_ms(10);
    }
    if (code == -1) stop_pid(pid);
    *out = read_file(o);
    *err_out = read_file(e);
    fprintf(stderr, "  mcpc %s ... -> exit %d %.*s\n", argv[1], code, (int)strcspn(*err_out, "\n"), *err_out);
    return code;
}

static char *cli_err; /* the last run's stderr */
#define cli(out, sigint_when, ...) (free(cli_err), cli_run(out, &cli_err, sigint_when, __VA_ARGS__))

/* The protocol version the client negotiated, and how. */
static inline void check_negotiation(mcpc_client_t *c, const char *version, const char *how) {
    const char *v = mcpc_client_protocol_version(c), *h = mcpc_client_negotiated_by(c);
    if (!v || !h || strcmp(v, version) != 0 || strcmp(h, how) != 0) {
        fprintf(stderr, "  negotiated %s by %s, want %s by %s\n", v ? v : "(null)", h ? h : "(null)", version, how);
        CHECK(0);
    }
}

/* RUN, with the time each test took (`only` as for RUN). */
#define RUN_TIMED(fn)                                                  \
    do {                                                               \
        double t_ = now_ms();                                          \
        RUN(fn);                                                       \
        if (!only || strstr(#fn, only))                                \
            fprintf(stderr, "  (%s: %.1f s)\n", #fn, (now_ms() - t_) / 1000); \
    } while (0)

/* A server that prints "PORT n" on its stdout once it listens: `argv` started with
 * its stdout and stderr in s->out and s->err (set by the caller); waits up to
 * `limit_ms` for the line, and sets s->port and s->url (`scheme`://127.0.0.1:n/mcp). */
static inline int port_server_start(struct server *s, const char *const *argv, const char *scheme, int limit_ms) {
    s->pid = spawn_logged(argv, s->out, s->err, NULL);
    if (s->pid <= 0 || !wait_for_file_text(s->out, "PORT ", limit_ms)) {
        fprintf(stderr, "  %s did not start (its stderr: %s)\n", argv[1], s->err);
        server_stop(s);
        return -1;
    }
    char *o = read_file(s->out);
    sscanf(strstr(o, "PORT "), "PORT %d", &s->port);
    free(o);
    snprintf(s->url, sizeof s->url, "%s://127.0.0.1:%d/mcp", scheme, s->port);
    return 0;
}

/* The folder of a test program's logs: made at its start, removed at its end when
 * every test passed (kept, and named, when one failed). */
static inline void peers_tmpdir_make(const char *program) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/mcpc-%s-%d", program, (int)getpid());
    mkdir(tmpdir, 0700);
}

static inline void peers_tmpdir_done(void) {
    if (harness_failed == 0) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    } else {
        fprintf(stderr, "logs kept in %s\n", tmpdir);
    }
}

#endif
