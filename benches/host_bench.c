/* host_bench: what a catalog of N stdio servers costs the client process.
 *
 *   host_bench host|serial|alone N [--concurrency C] [--tools T] [--idle-ms MS] [--probe]
 *              [--setsid] [--label L] -- SERVER COMMAND...
 *
 * One measurement per process, so that its peak memory is its own (benches/host_run.py
 * runs them in turns and takes medians):
 *   host    mcpc_host_new, N servers added (mcpc_host_add_stdio, NULL options: the
 *           library's defaults), mcpc_host_set_concurrency(C) when given,
 *           mcpc_host_start, mcpc_host_tools: the time from the first to the last is
 *           `catalog_ms`.
 *   serial  the same servers as N single clients, connected one after another, each
 *           listing all its tools (mcpc_client_connect_stdio, mcpc_client_list_tools),
 *           the lists kept: what a program does without the host.
 *   alone   the servers' own start, the floor: N servers spawned together with stdin
 *           and stdout on /dev/null, each run to its exit (end of input), each in a
 *           session of its own with --setsid; `catalog_ms` is the time to the last exit.
 * Every run is checked: N*T tools, each server ready (host) or listed in full
 * (serial). A catalog short of tools is reported ("complete":false, exit status 3,
 * the host's status on stderr), any other failure fails the run (exit 1). Then the
 * process's VmHWM, VmRSS, threads and open descriptors (less those before the start),
 * again after --idle-ms of idling (VmRSS, CPU), and the time to close everything
 * (`close_ms`). With --probe, a thread samples threads and
 * descriptors every 0.5 ms during the start (itself not counted): the peaks, for a
 * run whose time is not used. One JSON line on stdout. A benchmark, not a test:
 * nothing here is judged against a limit.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_proc.h"
#include "mcpc.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* Open descriptors, less the one that reads the directory. */
static long open_fds(void) {
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return n - 1;
}

static long count_of(const char *s, const char *needle) {
    long n = 0;
    size_t nl = strlen(needle);
    for (const char *p = s; (p = strstr(p, needle)); p += nl) n++;
    return n;
}

static void fail(const char *what, mcpc_status_t st) {
    fprintf(stderr, "host_bench: %s: %s: %s\n", what, mcpc_status_name(st), mcpc_last_error_message());
    exit(1);
}

/* --probe: the peaks of threads and descriptors while the start runs. */
static atomic_int probe_stop;
static long probe_threads, probe_fds;

static void probe_sample(long own_threads) {
    long t = proc_status_kb("Threads") - own_threads, f = open_fds();
    if (t > probe_threads) probe_threads = t;
    if (f > probe_fds) probe_fds = f;
}

static void *probe_main(void *arg) {
    (void)arg;
    while (!atomic_load(&probe_stop)) {
        probe_sample(1); /* not counting this thread */
        struct timespec d = {0, 500000};
        nanosleep(&d, NULL);
    }
    return NULL;
}

static void usage(void) {
    fprintf(stderr, "usage: host_bench host|serial|alone N [--concurrency C] [--tools T] [--idle-ms MS] [--probe]\n"
                    "                  [--setsid] [--label L] -- SERVER COMMAND...\n");
    exit(2);
}

extern char **environ;

/* The floor: N servers started together, each run to its exit. */
static int run_alone(long n, char *const *sargv, int setsid, const char *label) {
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&attr);
    if (setsid) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    pid_t *pids = calloc((size_t)n, sizeof *pids);
    double t0 = now_ms();
    for (long k = 0; k < n; k++) {
        int e = posix_spawnp(&pids[k], sargv[0], &fa, &attr, sargv, environ);
        if (e) {
            fprintf(stderr, "host_bench: spawn %s: %s\n", sargv[0], strerror(e));
            return 1;
        }
    }
    for (long k = 0; k < n; k++) {
        int st;
        if (waitpid(pids[k], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
            fprintf(stderr, "host_bench: a server did not exit cleanly at the end of its input\n");
            return 1;
        }
    }
    printf("{\"bench\":\"host\",\"label\":\"%s\",\"mode\":\"alone\",\"setsid\":%s,\"servers\":%ld,"
           "\"catalog_ms\":%.2f,\"complete\":true}\n",
           label, setsid ? "true" : "false", n, now_ms() - t0);
    free(pids);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) usage();
    const char *mode = argv[1], *label = "";
    int serial = !strcmp(mode, "serial"), alone = !strcmp(mode, "alone");
    if (!serial && !alone && strcmp(mode, "host")) usage();
    long n = atol(argv[2]), conc = 0, tools = -1, idle_ms = 200;
    int probe = 0, setsid = 0, i = 3;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--concurrency") && i + 1 < argc)
            conc = atol(argv[++i]);
        else if (!strcmp(argv[i], "--tools") && i + 1 < argc)
            tools = atol(argv[++i]);
        else if (!strcmp(argv[i], "--idle-ms") && i + 1 < argc)
            idle_ms = atol(argv[++i]);
        else if (!strcmp(argv[i], "--label") && i + 1 < argc)
            label = argv[++i];
        else if (!strcmp(argv[i], "--probe"))
            probe = 1;
        else if (!strcmp(argv[i], "--setsid"))
            setsid = 1;
        else
            usage();
    }
    if (n < 1 || i + 1 >= argc) usage();
    if (alone) return run_alone(n, &argv[i + 1], setsid, label);
    const char *const *sargv = (const char *const *)&argv[i + 1];
    size_t sargc = (size_t)(argc - i - 1);
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }

    long rss_base = proc_status_kb("VmRSS"), threads_base = proc_status_kb("Threads"), fds_base = open_fds();
    pthread_t prober;
    if (probe && pthread_create(&prober, NULL, probe_main, NULL) != 0) usage();
    mcpc_host_t *host = NULL;
    mcpc_client_t **clients = NULL;
    mcpc_tool_list_t **lists = NULL;
    char *catalog = NULL;
    long listed = 0;
    double c0 = cpu_ms(), t0 = now_ms();
    if (serial) {
        clients = calloc((size_t)n, sizeof *clients);
        lists = calloc((size_t)n, sizeof *lists);
        for (long k = 0; k < n; k++) {
            mcpc_status_t st = mcpc_client_connect_stdio(sargv, sargc, NULL, &clients[k]);
            if (st != MCPC_OK) fail("connect", st);
            if ((st = mcpc_client_list_tools(clients[k], NULL, &lists[k])) != MCPC_OK) fail("list", st);
            listed += (long)mcpc_tool_list_count(lists[k]);
        }
    } else {
        mcpc_status_t st = mcpc_host_new(NULL, &host);
        if (st != MCPC_OK) fail("mcpc_host_new", st);
        if (conc > 0 && (st = mcpc_host_set_concurrency(host, (size_t)conc)) != MCPC_OK) fail("concurrency", st);
        for (long k = 0; k < n; k++) {
            char name[32];
            snprintf(name, sizeof name, "s%ld", k);
            if ((st = mcpc_host_add_stdio(host, name, sargv, sargc, NULL)) != MCPC_OK) fail("add", st);
        }
        if ((st = mcpc_host_start(host)) != MCPC_OK) fail("start", st);
        if ((st = mcpc_host_tools(host, &catalog)) != MCPC_OK) fail("tools", st);
    }
    double catalog_ms = now_ms() - t0, start_cpu_ms = cpu_ms() - c0;
    if (probe) {
        atomic_store(&probe_stop, 1);
        pthread_join(prober, NULL);
        probe_sample(0); /* a start too short for the sampler to have run */
    }
    int ok = tools < 0 || listed == n * tools;
    if (!serial) {
        listed = count_of(catalog, "\"server\":\"");
        char *status = NULL;
        mcpc_status_t st = mcpc_host_status(host, &status);
        if (st != MCPC_OK) fail("status", st);
        long ready = count_of(status, "\"state\":\"ready\"");
        ok = ready == n && (tools < 0 || listed == n * tools);
        if (!ok)
            fprintf(stderr, "host_bench: %ld of %ld servers ready, %ld tools in the catalog; status: %s\n", ready, n,
                    listed, status);
        mcpc_string_free(status);
    }
    if (!ok) fprintf(stderr, "host_bench: %ld tools, expected %ld\n", listed, tools >= 0 ? n * tools : listed);
    long hwm = proc_status_kb("VmHWM"), rss = proc_status_kb("VmRSS");
    long threads = proc_status_kb("Threads") - threads_base, fds = open_fds() - fds_base;
    double ic0 = cpu_ms();
    usleep((useconds_t)idle_ms * 1000);
    double idle_cpu_ms = cpu_ms() - ic0;
    long rss_idle = proc_status_kb("VmRSS"), threads_idle = proc_status_kb("Threads") - threads_base;
    long fds_idle = open_fds() - fds_base;
    double t2 = now_ms();
    if (serial) {
        for (long k = 0; k < n; k++) mcpc_tool_list_free(lists[k]), mcpc_client_free(clients[k]);
        free(lists);
        free(clients);
    } else {
        mcpc_string_free(catalog);
        mcpc_host_free(host);
    }
    double close_ms = now_ms() - t2;
    printf("{\"bench\":\"host\",\"label\":\"%s\",\"mode\":\"%s\",\"concurrency\":%ld,\"servers\":%ld,"
           "\"tools\":%ld,\"catalog_ms\":%.2f,\"start_cpu_ms\":%.2f,\"rss_base_kb\":%ld,\"hwm_kb\":%ld,"
           "\"rss_kb\":%ld,\"rss_idle_kb\":%ld,\"threads\":%ld,\"threads_idle\":%ld,\"fds\":%ld,"
           "\"fds_idle\":%ld,\"idle_ms\":%ld,\"idle_cpu_ms\":%.2f,\"close_ms\":%.2f",
           label, mode, serial ? 1 : conc, n, listed, catalog_ms, start_cpu_ms, rss_base, hwm, rss, rss_idle,
           threads, threads_idle, fds, fds_idle, idle_ms, idle_cpu_ms, close_ms);
    if (probe) printf(",\"threads_peak\":%ld,\"fds_peak\":%ld", probe_threads - threads_base, probe_fds - fds_base);
    printf(",\"complete\":%s}\n", ok ? "true" : "false");
    return ok ? 0 : 3;
}
