/* task_follow: what following a task costs the client between polls.
 *
 *   task_follow SECONDS POLL_MS ERA [SERVER COMMAND...]
 *
 * One process, one connected client (the demo server with --tasks in ERA: legacy
 * for the tasks of 2025-11-25, modern for the tasks extension), two phases of
 * SECONDS each, run in turn:
 *   idle   the client connected, nothing asked: the main thread sleeps;
 *   task   one call of task_report that the server makes a task of SECONDS, asking
 *          to be polled every POLL_MS; the call follows it to its end;
 *   calls  as many plain calls (echo) as the task took polls, one every POLL_MS:
 *          what the polls cost as requests of their own, with nothing in between.
 * For each phase: the process's CPU time (user + system, all threads, getrusage)
 * and its context switches (voluntary and not: every wake-up of any thread), and,
 * for the task, the number of tasks/get the server received (from its log). One
 * JSON line per phase on stdout. The server's own CPU is not counted (it is another
 * process). A benchmark, not a test: nothing here is judged against a limit.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mcpc.h"

struct sample {
    double cpu_ms;
    long switches;
    double wall_ms;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct sample take(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    struct sample s = {
        .cpu_ms = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3,
        .switches = ru.ru_nvcsw + ru.ru_nivcsw,
        .wall_ms = now_ms(),
    };
    return s;
}

static int count_lines(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

static void print(const char *phase, const char *era, int seconds, int poll_ms, struct sample a, struct sample b,
                  int polls) {
    printf("{\"bench\":\"task_follow\",\"phase\":\"%s\",\"era\":\"%s\",\"seconds\":%d,\"poll_ms\":%d,"
           "\"wall_ms\":%.0f,\"cpu_ms\":%.2f,\"switches\":%ld,\"polls\":%d}\n",
           phase, era, seconds, poll_ms, b.wall_ms - a.wall_ms, b.cpu_ms - a.cpu_ms, b.switches - a.switches, polls);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: task_follow SECONDS POLL_MS legacy|modern [SERVER COMMAND...]\n");
        return 2;
    }
    int seconds = atoi(argv[1]), poll_ms = atoi(argv[2]);
    const char *era = argv[3];
    char log_path[64], era_flag[32];
    snprintf(log_path, sizeof log_path, "/tmp/task-follow-%d.log", (int)getpid());
    snprintf(era_flag, sizeof era_flag, "--era=%s", era);
    const char *def[] = {"python3", "demo/server.py", "--tasks", era_flag, "--log", log_path};
    const char **sargv = def;
    size_t sargc = 6;
    if (argc > 4) {
        sargv = (const char **)&argv[4];
        sargc = (size_t)(argc - 4);
    }
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, (int64_t)(seconds + 30) * 1000);
    mcpc_options_add_extension(o, "io.modelcontextprotocol/tasks", NULL);
    mcpc_client_t *c = NULL;
    if (mcpc_client_connect_stdio(sargv, sargc, o, &c) != MCPC_OK) {
        fprintf(stderr, "task_follow: connect: %s\n", mcpc_last_error_message());
        return 1;
    }
    mcpc_options_free(o);

    struct sample a = take();
    sleep((unsigned)seconds);
    struct sample b = take();
    print("idle", era, seconds, poll_ms, a, b, 0);

    mcpc_call_opts_t opts;
    mcpc_call_opts_init_sized(&opts, sizeof opts);
    opts.task_mode = MCPC_TASK_PREFER;
    char args[160];
    snprintf(args, sizeof args, "{\"topic\":\"bench\",\"ms\":%d,\"poll_ms\":%d}", seconds * 1000, poll_ms);
    int before = count_lines(log_path, "\"method\":\"tasks/get\"");
    mcpc_result_t *r = NULL;
    a = take();
    mcpc_status_t st = mcpc_client_call_tool(c, "task_report", args, &opts, &r);
    b = take();
    if (st != MCPC_OK || strcmp(mcpc_result_text(r, NULL), "report on bench") != 0) {
        fprintf(stderr, "task_follow: call: %s\n", mcpc_last_error_message());
        return 1;
    }
    mcpc_result_free(r);
    int polls = count_lines(log_path, "\"method\":\"tasks/get\"") - before;
    print("task", era, seconds, poll_ms, a, b, before < 0 ? -1 : polls);

    a = take();
    for (int i = 0; i < polls; i++) {
        usleep((useconds_t)poll_ms * 1000);
        if (mcpc_client_call_tool(c, "echo", "{\"text\":\"poll\"}", NULL, &r) != MCPC_OK) {
            fprintf(stderr, "task_follow: echo: %s\n", mcpc_last_error_message());
            return 1;
        }
        mcpc_result_free(r);
    }
    b = take();
    print("calls", era, seconds, poll_ms, a, b, polls);
    mcpc_client_free(c);
    unlink(log_path);
    return 0;
}
