/*
 * test_windows.c - the Windows tests of libmcpc: stdio (CreateProcess, the job
 * object, .cmd shims and their quoting, the close grace periods), cancel and close
 * with calls in flight, the caller-supplied transport seam and HTTP on loopback,
 * all against tests/windows/fake_server.exe. Built with mingw-w64 and run under
 * Wine by `make test-windows`, or on Windows as it is.
 *
 * It runs from the test folder (build/windows/test/), where the fake server and
 * the .cmd shims it writes live. `test_windows.exe NAME` runs the tests whose name
 * contains NAME. Where Wine cannot do what Windows does, a test says so and skips.
 */
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The checks and the runner of the C tests (tests/c/check.h; harness.h's process
 * helpers are POSIX). */
#include "check.h"

static double now_ms(void)
{
    static LARGE_INTEGER freq;
    LARGE_INTEGER t;
    if (freq.QuadPart == 0)
        QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&t);
    return (double)t.QuadPart * 1000.0 / (double)freq.QuadPart;
}

/* ---------------------------------------------------------------------------- */
/* Paths and processes                                                           */
/* ---------------------------------------------------------------------------- */

static char g_dir[MAX_PATH];    /* the test folder, with a trailing backslash */
static char g_server[MAX_PATH]; /* fake_server.exe in it */

static void path_in_dir(char *out, size_t size, const char *name)
{
    snprintf(out, size, "%s%s", g_dir, name);
}

static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Waits until the file exists and holds a number and a newline: the pid (or port)
 * a fake server wrote (renamed into place whole). 0 when it did not within limit_ms. */
static unsigned long wait_number_file(const char *path, int limit_ms)
{
    double end = now_ms() + limit_ms;
    do {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            unsigned long n = 0;
            int got = fscanf(f, "%lu", &n);
            fclose(f);
            if (got == 1 && n != 0)
                return n;
        }
        Sleep(10);
    } while (now_ms() < end);
    return 0;
}

/* True when process `pid` has ended (or never was) within limit_ms. */
static bool process_gone(unsigned long pid, int limit_ms)
{
    HANDLE h = OpenProcess(SYNCHRONIZE, FALSE, (DWORD)pid);
    if (h == NULL)
        return true;
    bool gone = WaitForSingleObject(h, (DWORD)limit_ms) == WAIT_OBJECT_0;
    CloseHandle(h);
    return gone;
}

static void kill_pid(unsigned long pid)
{
    HANDLE h = OpenProcess(PROCESS_TERMINATE, FALSE, (DWORD)pid);
    if (h != NULL) {
        TerminateProcess(h, 99);
        CloseHandle(h);
    }
}

static mcpc_options_t *quick_options(void)
{
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 20000);
    return o;
}

static mcpc_client_t *connect_argv(const char *const *argv, size_t argc, const mcpc_options_t *opts)
{
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, argc, opts, &c), MCPC_OK);
    return c;
}

/* Calls echo and checks that its text comes back. */
static void check_echo(const mcpc_client_t *c, const char *text)
{
    char args[256];
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", args, NULL, &r), MCPC_OK);
    if (r != NULL) {
        const char *got = mcpc_result_text_at(r, 0, NULL);
        CHECK(got != NULL && strcmp(got, text) == 0);
        mcpc_result_free(r);
    }
}

/* ---------------------------------------------------------------------------- */
/* stdio                                                                         */
/* ---------------------------------------------------------------------------- */

static void test_stdio_list_and_call(void)
{
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, NULL);
    if (c == NULL)
        return;
    CHECK(mcpc_client_protocol_version(c) != NULL);
    mcpc_tool_list_t *list = NULL;
    CHECK_STATUS(mcpc_client_list_tools(c, NULL, &list), MCPC_OK);
    if (list != NULL) {
        bool echo = false;
        for (size_t i = 0; i < mcpc_tool_list_len(list); i++)
            echo = echo || strcmp(mcpc_tool_list_name(list, i), "echo") == 0;
        CHECK(echo);
        mcpc_tool_list_free(list);
    }
    check_echo(c, "hello from Windows");
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "fail", NULL, NULL, &r), MCPC_ERR_TOOL);
    CHECK(r != NULL && mcpc_result_is_error(r));
    mcpc_result_free(r);
    r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "no-such-tool", NULL, NULL, &r), MCPC_ERR_RPC);
    CHECK(r == NULL);
    mcpc_client_free(c);
}

static void test_stdio_missing_program(void)
{
    char path[MAX_PATH];
    path_in_dir(path, sizeof path, "no_such_server.exe");
    const char *argv[] = {path};
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 1, NULL, &c), MCPC_ERR_SPAWN);
    CHECK(c == NULL);
}

static void test_stdio_env_and_cwd(void)
{
    mcpc_options_t *o = quick_options();
    CHECK_STATUS(mcpc_options_set_env(o, "MCPC_WIN_TEST", "a value & more"), MCPC_OK);
    char cwd[MAX_PATH];
    snprintf(cwd, sizeof cwd, "%s", g_dir);
    cwd[strlen(cwd) - 1] = '\0'; /* no trailing backslash */
    CHECK_STATUS(mcpc_options_set_cwd(o, cwd), MCPC_OK);
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, o);
    mcpc_options_free(o);
    if (c == NULL)
        return;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "env", "{\"text\":\"MCPC_WIN_TEST\"}", NULL, &r), MCPC_OK);
    CHECK(r != NULL && strcmp(mcpc_result_text_at(r, 0, NULL), "a value & more") == 0);
    mcpc_result_free(r);
    r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "cwd", NULL, NULL, &r), MCPC_OK);
    CHECK(r != NULL && _stricmp(mcpc_result_text_at(r, 0, NULL), cwd) == 0);
    mcpc_result_free(r);
    mcpc_client_free(c);
}

static atomic_int g_stderr_lines;

static void on_stderr(void *userdata, const char *line, size_t len)
{
    (void)userdata;
    if (len >= 11 && memcmp(line, "from stderr", 11) == 0)
        atomic_fetch_add(&g_stderr_lines, 1);
}

static void test_stdio_stderr_drained(void)
{
    mcpc_options_t *o = quick_options();
    CHECK_STATUS(mcpc_options_set_stderr_callback(o, on_stderr, NULL, NULL), MCPC_OK);
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, o);
    mcpc_options_free(o);
    if (c == NULL)
        return;
    atomic_store(&g_stderr_lines, 0);
    for (int i = 0; i < 3; i++) {
        mcpc_result_t *r = NULL;
        CHECK_STATUS(mcpc_client_call_tool(c, "stderr", "{\"text\":\"from stderr\"}", NULL, &r), MCPC_OK);
        mcpc_result_free(r);
    }
    double end = now_ms() + 5000;
    while (atomic_load(&g_stderr_lines) < 3 && now_ms() < end)
        Sleep(10);
    CHECK(atomic_load(&g_stderr_lines) == 3);
    mcpc_client_free(c);
}

/* ---------------------------------------------------------------------------- */
/* .cmd shims and quoting                                                        */
/* ---------------------------------------------------------------------------- */

static char g_shim[MAX_PATH]; /* fake.cmd: @echo off, then the server with %* */

static bool write_shim(void)
{
    path_in_dir(g_shim, sizeof g_shim, "fake.cmd");
    return write_text(g_shim, "@echo off\r\n\"%~dp0fake_server.exe\" %*\r\n");
}

static void test_cmd_shim(void)
{
    CHECK(write_shim());
    const char *argv[] = {g_shim};
    mcpc_client_t *c = connect_argv(argv, 1, NULL);
    if (c == NULL)
        return;
    check_echo(c, "through a .cmd");
    mcpc_client_free(c);
}

/* Arguments that need quoting, for the program and for cmd.exe. */
static const char *const QUOTED[] = {
    "two words", "a\"quote", "x&y", "^caret", "a|b<c>d", "(paren)",
    "trailing\\", "back\\\"slash", "!bang!", "",
};
/* And those holding %, which cmd.exe would expand. */
static const char *const PERCENT[] = {"100%", "%PATH%", "50% off", "%%"};

/* Running under Wine, whose cmd.exe falls short of Windows' in places. */
static bool under_wine(void)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

/* Starts `program` with `args`, calls the argv tool and compares what arrived;
 * prints each difference and returns how many there were (-1: no answer). */
static int arguments_differ(const char *program, const char *const *args, size_t n)
{
    const char *argv[16];
    argv[0] = program;
    for (size_t i = 0; i < n && i < 15; i++)
        argv[1 + i] = args[i];
    mcpc_client_t *c = connect_argv(argv, 1 + n, NULL);
    if (c == NULL)
        return -1;
    int differ = -1;
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "argv", NULL, NULL, &r), MCPC_OK);
    if (r != NULL) {
        size_t got = mcpc_result_text_count(r);
        differ = 0;
        if (got != n) {
            fprintf(stderr, "  the server got %u arguments, want %u:\n", (unsigned)got, (unsigned)n);
            for (size_t i = 0; i < got; i++)
                fprintf(stderr, "    [%u] <%s>\n", (unsigned)i, mcpc_result_text_at(r, i, NULL));
            differ = (int)n;
        } else {
            for (size_t i = 0; i < n; i++) {
                const char *text = mcpc_result_text_at(r, i, NULL);
                if (text == NULL || strcmp(text, args[i]) != 0) {
                    fprintf(stderr, "  argument <%s> arrived as <%s>\n", args[i], text ? text : "(null)");
                    differ++;
                }
            }
        }
        mcpc_result_free(r);
    }
    mcpc_client_free(c);
    return differ;
}

#define N_OF(a) (sizeof a / sizeof *a)

static void test_quoting_exe(void)
{
    CHECK(arguments_differ(g_server, QUOTED, N_OF(QUOTED)) == 0);
    CHECK(arguments_differ(g_server, PERCENT, N_OF(PERCENT)) == 0);
}

static void test_quoting_cmd(void)
{
    CHECK(write_shim());
    CHECK(arguments_differ(g_shim, QUOTED, N_OF(QUOTED)) == 0);
}

/* Rust's std escapes % for cmd.exe as %%cd:~,% (a % and an empty substring of
 * %cd%). Wine's cmd.exe (8) expands that to % on its command line, as Windows'
 * does, but then drops the % where the batch file reads it (%* or %1). */
static void test_quoting_cmd_percent(void)
{
    CHECK(write_shim());
    int differ = arguments_differ(g_shim, PERCENT, N_OF(PERCENT));
    if (differ > 0 && under_wine())
        harness_skip("Wine's cmd.exe drops a % in a batch file's %* and %1, which Windows' keeps");
    else
        CHECK(differ == 0);
}

/* A .cmd argument that cannot be quoted safely for cmd.exe (a line break) is
 * refused before anything runs. */
static void test_cmd_refused_argument(void)
{
    CHECK(write_shim());
    const char *argv[] = {g_shim, "line\nbreak"};
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_stdio(argv, 2, NULL, &c), MCPC_ERR_SPAWN);
    CHECK(c == NULL);
}

/* A bare name is looked up in PATH with PATHEXT: fake_server finds the .exe, and
 * fakeshim finds fakeshim.cmd. */
static void test_path_and_pathext(void)
{
    char shim[MAX_PATH];
    path_in_dir(shim, sizeof shim, "fakeshim.cmd");
    CHECK(write_text(shim, "@echo off\r\n\"%~dp0fake_server.exe\" %*\r\n"));
    char old_path[32767], new_path[32767];
    DWORD n = GetEnvironmentVariableA("PATH", old_path, sizeof old_path);
    if (n >= sizeof old_path)
        n = 0;
    old_path[n] = '\0';
    snprintf(new_path, sizeof new_path, "%s;%s", g_dir, old_path);
    SetEnvironmentVariableA("PATH", new_path);
    const char *exe[] = {"fake_server"};
    mcpc_client_t *c = connect_argv(exe, 1, NULL);
    if (c != NULL) {
        check_echo(c, "found in PATH");
        mcpc_client_free(c);
    }
    const char *cmd[] = {"fakeshim"};
    c = connect_argv(cmd, 1, NULL);
    if (c != NULL) {
        check_echo(c, "found with PATHEXT");
        mcpc_client_free(c);
    }
    SetEnvironmentVariableA("PATH", old_path);
}

/* ---------------------------------------------------------------------------- */
/* Process lifetime: the job object and the close grace periods                  */
/* ---------------------------------------------------------------------------- */

/* The server starts a grandchild (holding none of its pipes); closing the client
 * ends the grandchild too. With `server_exits`, the server itself exits first. */
static void check_grandchild_ends(bool server_exits)
{
    char marker[MAX_PATH], arg[MAX_PATH + 32];
    path_in_dir(marker, sizeof marker, server_exits ? "grandchild-exit.pid" : "grandchild.pid");
    DeleteFileA(marker);
    snprintf(arg, sizeof arg, "--spawn-grandchild=%s", marker);
    mcpc_options_t *o = quick_options();
    mcpc_options_set_close_grace_ms(o, 500, 500);
    const char *argv[] = {g_server, arg};
    mcpc_client_t *c = connect_argv(argv, 2, o);
    mcpc_options_free(o);
    if (c == NULL)
        return;
    unsigned long pid = wait_number_file(marker, 10000);
    CHECK(pid != 0);
    if (server_exits) {
        mcpc_result_t *r = NULL;
        mcpc_status_t st = mcpc_client_call_tool(c, "exit", "{\"code\":0}", NULL, &r);
        CHECK(st == MCPC_OK || st == MCPC_ERR_TRANSPORT || st == MCPC_ERR_SERVER_EXITED);
        mcpc_result_free(r);
    } else {
        check_echo(c, "grandchild started");
    }
    CHECK(pid == 0 || !process_gone(pid, 0)); /* it lives while the client does */
    mcpc_client_free(c);
    if (pid != 0) {
        bool gone = process_gone(pid, 5000);
        CHECK(gone);
        if (!gone)
            kill_pid(pid); /* leave nothing behind */
    }
}

static void test_grandchild_killed_on_close(void) { check_grandchild_ends(false); }
static void test_grandchild_killed_after_server_exit(void) { check_grandchild_ends(true); }

/* A server that keeps running after its stdin closes is ended once the grace
 * periods pass, and the close takes about that long, not the default. */
static void test_ignores_stdin_close(void)
{
    char pidfile[MAX_PATH], arg[MAX_PATH + 16];
    path_in_dir(pidfile, sizeof pidfile, "stubborn.pid");
    DeleteFileA(pidfile);
    snprintf(arg, sizeof arg, "--pid-file=%s", pidfile);
    mcpc_options_t *o = quick_options();
    CHECK_STATUS(mcpc_options_set_close_grace_ms(o, 300, 300), MCPC_OK);
    const char *argv[] = {g_server, "--ignore-stdin-close", arg};
    mcpc_client_t *c = connect_argv(argv, 3, o);
    mcpc_options_free(o);
    if (c == NULL)
        return;
    unsigned long pid = wait_number_file(pidfile, 10000);
    CHECK(pid != 0);
    check_echo(c, "stubborn");
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    double took = now_ms() - t0;
    fprintf(stderr, "  close took %.0f ms (grace 300 + 300)\n", took);
    CHECK(took >= 250);  /* it waited for the server first */
    CHECK(took < 4000); /* and did not wait for ever */
    if (pid != 0) {
        bool gone = process_gone(pid, 2000);
        CHECK(gone);
        if (!gone)
            kill_pid(pid);
    }
    mcpc_client_free(c);
}

/* A well-behaved server exits when its stdin closes: no grace period is spent. */
static void test_close_is_quick_for_a_polite_server(void)
{
    mcpc_options_t *o = quick_options();
    mcpc_options_set_close_grace_ms(o, 3000, 3000);
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, o);
    mcpc_options_free(o);
    if (c == NULL)
        return;
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    double took = now_ms() - t0;
    fprintf(stderr, "  close took %.0f ms\n", took);
    CHECK(took < 2500);
    mcpc_client_free(c);
}

/* ---------------------------------------------------------------------------- */
/* Calls in flight: close and cancel                                             */
/* ---------------------------------------------------------------------------- */

struct done {
    atomic_int count;
    atomic_int status[16];
};

static void on_call_done(void *userdata, mcpc_status_t status, mcpc_result_t *result, const char *msg)
{
    (void)msg;
    struct done *d = userdata;
    int i = atomic_fetch_add(&d->count, 1);
    if (i < 16)
        atomic_store(&d->status[i], (int)status);
    mcpc_result_free(result);
}

static bool wait_count(atomic_int *n, int want, int limit_ms)
{
    double end = now_ms() + limit_ms;
    while (atomic_load(n) < want && now_ms() < end)
        Sleep(5);
    return atomic_load(n) >= want;
}

static void test_close_with_calls_in_flight(void)
{
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, NULL);
    if (c == NULL)
        return;
    static struct done d;
    memset(&d, 0, sizeof d);
    mcpc_op_t *ops[8] = {0};
    for (int i = 0; i < 8; i++)
        CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000,\"text\":\"late\"}", NULL,
                                                 on_call_done, &d, &ops[i]),
                     MCPC_OK);
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_close(c), MCPC_OK);
    /* The close completes every call before it returns. */
    CHECK(atomic_load(&d.count) == 8);
    CHECK(now_ms() - t0 < 10000);
    CHECK(wait_count(&d.count, 8, 5000));
    for (int i = 0; i < 8; i++) {
        CHECK(atomic_load(&d.status[i]) == MCPC_ERR_CLOSED);
        mcpc_op_free(ops[i]);
    }
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", "{\"text\":\"x\"}", NULL, &r), MCPC_ERR_CLOSED);
    mcpc_client_free(c);
}

/* mcpc_client_free alone, with calls in flight, neither hangs nor loses a callback. */
static void test_free_with_calls_in_flight(void)
{
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, NULL);
    if (c == NULL)
        return;
    static struct done d;
    memset(&d, 0, sizeof d);
    for (int i = 0; i < 4; i++)
        CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", NULL, on_call_done, &d, NULL),
                     MCPC_OK);
    double t0 = now_ms();
    mcpc_client_free(c);
    CHECK(now_ms() - t0 < 10000);
    CHECK(wait_count(&d.count, 4, 5000));
}

struct cancel_arg {
    const mcpc_cancel_t *cancel;
    int after_ms;
};

static DWORD WINAPI trigger_later(void *p)
{
    struct cancel_arg *a = p;
    Sleep((DWORD)a->after_ms);
    mcpc_cancel_trigger(a->cancel);
    return 0;
}

static void test_cancel(void)
{
    const char *argv[] = {g_server};
    mcpc_client_t *c = connect_argv(argv, 1, NULL);
    if (c == NULL)
        return;
    /* A blocking call, cancelled from another thread. */
    mcpc_cancel_t *cancel = mcpc_cancel_new();
    mcpc_call_opts_t opts;
    mcpc_call_opts_init(&opts);
    opts.cancel = cancel;
    struct cancel_arg a = {cancel, 200};
    HANDLE t = CreateThread(NULL, 0, trigger_later, &a, 0, NULL);
    mcpc_result_t *r = NULL;
    double t0 = now_ms();
    CHECK_STATUS(mcpc_client_call_tool(c, "slow", "{\"ms\":30000}", &opts, &r), MCPC_ERR_CANCELLED);
    CHECK(now_ms() - t0 < 5000);
    CHECK(r == NULL);
    WaitForSingleObject(t, INFINITE);
    CloseHandle(t);
    mcpc_cancel_free(cancel);

    /* An async call, cancelled through its op. */
    static struct done d;
    memset(&d, 0, sizeof d);
    mcpc_op_t *op = NULL;
    CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":30000}", NULL, on_call_done, &d, &op), MCPC_OK);
    mcpc_op_cancel(op);
    CHECK(wait_count(&d.count, 1, 5000));
    CHECK(atomic_load(&d.status[0]) == MCPC_ERR_CANCELLED);
    mcpc_op_free(op);

    /* The connection goes on. */
    check_echo(c, "after the cancels");
    mcpc_client_free(c);
}

/* ---------------------------------------------------------------------------- */
/* The caller-supplied transport seam: pipes to a server this program started    */
/* ---------------------------------------------------------------------------- */

struct seam {
    HANDLE process, to_server, from_server, reader;
    mcpc_transport_t *transport;
    atomic_int closes;
    CRITICAL_SECTION lock;
};

static int32_t seam_send(void *ud, const char *data, size_t len)
{
    struct seam *s = ud;
    EnterCriticalSection(&s->lock);
    DWORD w;
    bool ok = s->to_server != NULL && WriteFile(s->to_server, data, (DWORD)len, &w, NULL) && w == len &&
              WriteFile(s->to_server, "\n", 1, &w, NULL);
    LeaveCriticalSection(&s->lock);
    return ok ? 0 : 1;
}

static void seam_close(void *ud)
{
    struct seam *s = ud;
    atomic_fetch_add(&s->closes, 1);
    EnterCriticalSection(&s->lock);
    if (s->to_server != NULL)
        CloseHandle(s->to_server); /* the server sees its stdin end and exits */
    s->to_server = NULL;
    LeaveCriticalSection(&s->lock);
}

static DWORD WINAPI seam_reader(void *ud)
{
    struct seam *s = ud;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 131072;
            buf = realloc(buf, cap);
        }
        DWORD got = 0;
        if (!ReadFile(s->from_server, buf + len, (DWORD)(cap - len), &got, NULL) || got == 0)
            break;
        len += got;
        size_t start = 0;
        for (char *nl; (nl = memchr(buf + start, '\n', len - start)) != NULL; start = (size_t)(nl + 1 - buf))
            if (nl > buf + start)
                mcpc_transport_deliver(s->transport, buf + start, (size_t)(nl - (buf + start)));
        memmove(buf, buf + start, len - start);
        len -= start;
    }
    mcpc_transport_end(s->transport, "the server's stdout ended");
    free(buf);
    return 0;
}

static bool seam_start(struct seam *s)
{
    memset(s, 0, sizeof *s);
    InitializeCriticalSection(&s->lock);
    SECURITY_ATTRIBUTES sa = {sizeof sa, NULL, TRUE};
    HANDLE in_r, in_w, out_r, out_w;
    if (!CreatePipe(&in_r, &in_w, &sa, 0))
        return false;
    if (!CreatePipe(&out_r, &out_w, &sa, 0))
        return false;
    SetHandleInformation(in_w, HANDLE_FLAG_INHERIT, 0);
    SetHandleInformation(out_r, HANDLE_FLAG_INHERIT, 0);
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = in_r;
    si.hStdOutput = out_w;
    si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
    PROCESS_INFORMATION pi;
    char cmd[MAX_PATH + 4];
    snprintf(cmd, sizeof cmd, "\"%s\"", g_server);
    bool ok = CreateProcessA(g_server, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi);
    CloseHandle(in_r);
    CloseHandle(out_w);
    if (!ok)
        return false;
    CloseHandle(pi.hThread);
    s->process = pi.hProcess;
    s->to_server = in_w;
    s->from_server = out_r;
    return true;
}

static void test_seam(void)
{
    static struct seam s;
    if (!seam_start(&s)) {
        CHECK(!"could not start the server for the seam");
        return;
    }
    CHECK_STATUS(mcpc_transport_new(seam_send, seam_close, &s, NULL, &s.transport), MCPC_OK);
    s.reader = CreateThread(NULL, 0, seam_reader, &s, 0, NULL);
    mcpc_client_t *c = NULL;
    CHECK_STATUS(mcpc_client_connect_transport(s.transport, NULL, &c), MCPC_OK);
    if (c != NULL) {
        check_echo(c, "over the seam");
        mcpc_client_free(c);
    }
    CHECK(atomic_load(&s.closes) == (c != NULL ? 1 : atomic_load(&s.closes)));
    seam_close(&s); /* in case the client never attached */
    CHECK(WaitForSingleObject(s.process, 5000) == WAIT_OBJECT_0);
    WaitForSingleObject(s.reader, 5000);
    CloseHandle(s.reader);
    CloseHandle(s.from_server);
    CloseHandle(s.process);
    mcpc_transport_free(s.transport);
}

/* ---------------------------------------------------------------------------- */
/* Streamable HTTP on 127.0.0.1                                                  */
/* ---------------------------------------------------------------------------- */

static void test_http_loopback(void)
{
    char portfile[MAX_PATH], cmd[2 * MAX_PATH + 32];
    path_in_dir(portfile, sizeof portfile, "http.port");
    DeleteFileA(portfile);
    snprintf(cmd, sizeof cmd, "\"%s\" \"--http=%s\"", g_server, portfile);
    STARTUPINFOA si;
    memset(&si, 0, sizeof si);
    si.cb = sizeof si;
    PROCESS_INFORMATION pi;
    if (!CreateProcessA(g_server, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
        CHECK(!"could not start the HTTP server");
        return;
    }
    CloseHandle(pi.hThread);
    unsigned long port = wait_number_file(portfile, 10000);
    CHECK(port != 0);
    if (port != 0) {
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1:%lu/mcp", port);
        mcpc_options_t *o = quick_options();
        mcpc_options_set_proxy(o, "none"); /* loopback only, whatever the environment says */
        mcpc_client_t *c = NULL;
        CHECK_STATUS(mcpc_client_connect_http(url, o, &c), MCPC_OK);
        mcpc_options_free(o);
        if (c != NULL) {
            mcpc_tool_list_t *list = NULL;
            CHECK_STATUS(mcpc_client_list_tools(c, NULL, &list), MCPC_OK);
            CHECK(list != NULL && mcpc_tool_list_len(list) >= 5);
            mcpc_tool_list_free(list);
            check_echo(c, "over HTTP");
            static struct done d;
            memset(&d, 0, sizeof d);
            mcpc_op_t *op = NULL;
            CHECK_STATUS(mcpc_client_call_tool_async(c, "slow", "{\"ms\":20000}", NULL, on_call_done, &d, &op),
                         MCPC_OK);
            mcpc_op_cancel(op);
            CHECK(wait_count(&d.count, 1, 5000));
            CHECK(atomic_load(&d.status[0]) == MCPC_ERR_CANCELLED);
            mcpc_op_free(op);
            mcpc_client_free(c);
        }
    }
    TerminateProcess(pi.hProcess, 0);
    WaitForSingleObject(pi.hProcess, 5000);
    CloseHandle(pi.hProcess);
}

int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    DWORD n = GetModuleFileNameA(NULL, g_dir, sizeof g_dir);
    if (n == 0 || n >= sizeof g_dir) {
        fputs("test_windows: cannot find its own folder\n", stderr);
        return 2;
    }
    char *slash = strrchr(g_dir, '\\');
    if (slash == NULL)
        return 2;
    slash[1] = '\0';
    path_in_dir(g_server, sizeof g_server, "fake_server.exe");
    if (GetFileAttributesA(g_server) == INVALID_FILE_ATTRIBUTES) {
        fprintf(stderr, "test_windows: %s is missing\n", g_server);
        return 2;
    }
    fprintf(stderr, "libmcpc %s, tests in %s\n", mcpc_version(), g_dir);

    RUN(test_stdio_list_and_call);
    RUN(test_stdio_missing_program);
    RUN(test_stdio_env_and_cwd);
    RUN(test_stdio_stderr_drained);
    RUN(test_cmd_shim);
    RUN(test_quoting_exe);
    RUN(test_quoting_cmd);
    RUN(test_quoting_cmd_percent);
    RUN(test_cmd_refused_argument);
    RUN(test_path_and_pathext);
    RUN(test_grandchild_killed_on_close);
    RUN(test_grandchild_killed_after_server_exit);
    RUN(test_ignores_stdin_close);
    RUN(test_close_is_quick_for_a_polite_server);
    RUN(test_close_with_calls_in_flight);
    RUN(test_free_with_calls_in_flight);
    RUN(test_cancel);
    RUN(test_seam);
    RUN(test_http_loopback);

    return harness_finish();
}
