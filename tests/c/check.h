/* The checks and the test runner of the C tests, on any platform: TEST() functions,
 * CHECK() assertions that record a failure and go on, and a closing line
 * "N passed, N failed, N skipped". tests/c/harness.h adds the POSIX helpers;
 * tests/windows/test_windows.c uses this alone. */
#ifndef MCPC_TEST_CHECK_H
#define MCPC_TEST_CHECK_H

#include <stdio.h>
#include <string.h>

#include "mcpc.h"

static int harness_failures_in_test;
static int harness_passed;
static int harness_failed;
static int harness_skipped;
static const char *harness_skip_reason;

/* Marks the running test as skipped (it checked nothing in this configuration). */
static inline void harness_skip(const char *why) { harness_skip_reason = why; }

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "  CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            fprintf(stderr, "  last mcpc error: %s: %s\n",                           \
                    mcpc_status_name((int32_t)mcpc_last_error_status()),             \
                    mcpc_last_error_message());                                      \
            harness_failures_in_test++;                                              \
        }                                                                            \
    } while (0)

#define CHECK_STATUS(expr, want)                                                     \
    do {                                                                             \
        mcpc_status_t got_ = (expr);                                                 \
        if (got_ != (want)) {                                                        \
            fprintf(stderr, "  CHECK_STATUS failed at %s:%d: %s gave %s, want %s (%s)\n", \
                    __FILE__, __LINE__, #expr, mcpc_status_name((int32_t)got_),      \
                    mcpc_status_name((int32_t)(want)), mcpc_last_error_message());   \
            harness_failures_in_test++;                                              \
        }                                                                            \
    } while (0)

typedef void (*test_fn)(void);

static void run_test(const char *name, test_fn fn, const char *only) {
    if (only && !strstr(name, only)) {
        return;
    }
    harness_failures_in_test = 0;
    harness_skip_reason = NULL;
    fprintf(stderr, "test %s ...\n", name);
    fn();
    if (harness_skip_reason && harness_failures_in_test == 0) {
        harness_skipped++;
        fprintf(stderr, "test %s ... skipped (%s)\n", name, harness_skip_reason);
    } else if (harness_failures_in_test == 0) {
        harness_passed++;
        fprintf(stderr, "test %s ... ok\n", name);
    } else {
        harness_failed++;
        fprintf(stderr, "test %s ... FAILED\n", name);
    }
}

#define RUN(fn) run_test(#fn, fn, only)

static int harness_finish(void) {
    printf("%d passed, %d failed, %d skipped\n", harness_passed, harness_failed, harness_skipped);
    return harness_failed == 0 ? 0 : 1;
}

#endif
