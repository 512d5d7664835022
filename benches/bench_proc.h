/* A field of /proc/self/status, shared by the harnesses: VmHWM and VmRSS in kB,
 * Threads as a count. Header-only. */
#ifndef BENCH_PROC_H
#define BENCH_PROC_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long proc_status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long v = -1;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

#endif
