/*
 * platform_win.c - platform.h on Windows: a console control handler for Ctrl-C,
 * Ctrl-Break and closing the console; Winsock for the login's loopback listener;
 * a job object per assertion command; owner-only files for the credential store.
 * Strings are the process's code page, which mcpc.exe's manifest makes UTF-8
 * (Windows 10 1903 and later).
 */
#define WIN32_LEAN_AND_MEAN
#define _CRT_RAND_S /* rand_s, for the temporary file's name */
#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <objbase.h>
#include <sddl.h>
#include <shellapi.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

char *strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *d = malloc(len + 1);
    if (d != NULL) {
        memcpy(d, s, len);
        d[len] = '\0';
    }
    return d;
}

static UINT g_old_in_cp, g_old_out_cp;

/* The console's code pages belong to the console, not to us: put them back. */
static void restore_console(void)
{
    if (g_old_in_cp != 0)
        SetConsoleCP(g_old_in_cp);
    if (g_old_out_cp != 0)
        SetConsoleOutputCP(g_old_out_cp);
}

void plat_init(void)
{
    g_old_in_cp = GetConsoleCP();
    g_old_out_cp = GetConsoleOutputCP();
    if (g_old_in_cp != 0 || g_old_out_cp != 0) {
        SetConsoleCP(CP_UTF8);
        SetConsoleOutputCP(CP_UTF8);
        atexit(restore_console);
    }
    /* "\n" stays "\n": stdout is the same bytes as on Linux, for jq and for diff. */
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
}

/* The UTF-8 of the console line being handed out, byte by byte. */
static char g_line[4 * 1024 + 8];
static size_t g_line_len, g_line_pos;

int plat_getchar(void)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    DWORD mode;
    if (!GetConsoleMode(in, &mode))
        return getchar(); /* a pipe or a file: stdin's text mode drops the \r */
    while (g_line_pos == g_line_len) {
        wchar_t w[1024];
        DWORD got = 0;
        /* Ctrl-C ends the read with nothing (it cancels the call too): the end of input. */
        if (!ReadConsoleW(in, w, sizeof w / sizeof *w, &got, NULL) || got == 0)
            return EOF;
        if (w[0] == 0x1a) /* Ctrl-Z at the start of a line: the console's end of input */
            return EOF;
        DWORD kept = 0;
        for (DWORD i = 0; i < got; i++)
            if (w[i] != L'\r')
                w[kept++] = w[i];
        int n = WideCharToMultiByte(CP_UTF8, 0, w, (int)kept, g_line, (int)sizeof g_line, NULL, NULL);
        g_line_len = n > 0 ? (size_t)n : 0;
        g_line_pos = 0;
    }
    return (unsigned char)g_line[g_line_pos++];
}

int64_t plat_now_ms(void)
{
    return (int64_t)GetTickCount64();
}

void plat_clear(void *p, size_t len)
{
    SecureZeroMemory(p, len);
}

/* ---- interrupts: a console control handler ----------------------------------------- */

enum { INT_CTRL_C = 1, INT_CTRL_BREAK = 2, INT_CLOSE = 3 };

static atomic_int g_interrupt; /* the first one received, 0 if none */
static void (*g_on_interrupt)(void);
static HANDLE g_stopped;         /* set by plat_interrupts_stop: the cleanup is done */
static atomic_bool g_stopping;   /* no handler may call on_interrupt any more */
static atomic_int g_in_handlers; /* handlers between their check of g_stopping and done */

/* Windows runs this on a thread it starts for each event, so calling into mcpc here
 * is as safe as from the POSIX signal thread. */
static BOOL WINAPI ctrl_handler(DWORD type)
{
    int which = type == CTRL_C_EVENT       ? INT_CTRL_C
                : type == CTRL_BREAK_EVENT ? INT_CTRL_BREAK
                                           : INT_CLOSE;
    atomic_fetch_add(&g_in_handlers, 1);
    if (!atomic_load(&g_stopping)) {
        int none = 0;
        atomic_compare_exchange_strong(&g_interrupt, &none, which);
        g_on_interrupt();
    }
    atomic_fetch_sub(&g_in_handlers, 1);
    if (which == INT_CLOSE)
        /* The process ends when this returns (Windows allows about 5 s): give main
         * the time to close the server first. */
        WaitForSingleObject(g_stopped, 4000);
    return TRUE;
}

bool plat_interrupts_start(void (*on_interrupt)(void))
{
    g_on_interrupt = on_interrupt;
    g_stopped = CreateEventW(NULL, TRUE, FALSE, NULL);
    if (g_stopped == NULL || !SetConsoleCtrlHandler(ctrl_handler, TRUE)) {
        fprintf(stderr, "mcpc: cannot handle Ctrl-C: error %lu\n", (unsigned long)GetLastError());
        return false;
    }
    return true;
}

/* Removing the handler does not wait for one already running: wait here, so that
 * nothing it uses (the cancel handle) is freed under it. */
void plat_interrupts_stop(void)
{
    atomic_store(&g_stopping, true);
    SetConsoleCtrlHandler(ctrl_handler, FALSE);
    while (atomic_load(&g_in_handlers) > 0)
        Sleep(1);
    SetEvent(g_stopped);
}

int plat_interrupt_received(void)
{
    return atomic_load(&g_interrupt);
}

const char *plat_interrupt_name(int which)
{
    return which == INT_CTRL_C       ? "Ctrl-C"
           : which == INT_CTRL_BREAK ? "Ctrl-Break"
           : which == INT_CLOSE      ? "closing the console"
                                     : "an interrupt";
}

/* ---- the login's listener ----------------------------------------------------------- */

static atomic_bool g_woken;

bool plat_wake_init(void)
{
    WSADATA wsa;
    return WSAStartup(MAKEWORD(2, 2), &wsa) == 0;
}

void plat_wake(void)
{
    atomic_store(&g_woken, true);
}

static void set_blocking(SOCKET s, bool blocking)
{
    u_long nb = blocking ? 0 : 1;
    ioctlsocket(s, FIONBIO, &nb);
}

plat_socket plat_listen_loopback(uint16_t port, uint16_t *out_port)
{
    /* Not inherited: a server mcpc starts must not hold the listener. */
    SOCKET s = WSASocketW(AF_INET, SOCK_STREAM, IPPROTO_TCP, NULL, 0, WSA_FLAG_NO_HANDLE_INHERIT);
    if (s == INVALID_SOCKET)
        return -1;
    set_blocking(s, false);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    int len = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 4) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        int e = WSAGetLastError();
        closesocket(s);
        WSASetLastError(e);
        return -1;
    }
    *out_port = ntohs(a.sin_port);
    return (plat_socket)s;
}

/* WSAPoll cannot wait on an event too, so it waits in slices and looks at the
 * wake flag between them: an interrupt is seen within 100 ms. */
int plat_wait_readable(plat_socket s, int64_t deadline)
{
    for (;;) {
        if (atomic_load(&g_woken))
            return -1;
        int64_t left = deadline - plat_now_ms();
        if (left <= 0)
            return 0;
        WSAPOLLFD p = {.fd = (SOCKET)s, .events = POLLRDNORM};
        int n = WSAPoll(&p, 1, left > 100 ? 100 : (INT)left);
        if (n < 0)
            return -1;
        if (n > 0)
            return atomic_load(&g_woken) ? -1 : 1;
    }
}

plat_socket plat_accept(plat_socket s)
{
    SOCKET c = accept((SOCKET)s, NULL, NULL);
    if (c == INVALID_SOCKET)
        return -1;
    /* Accepted sockets inherit the listener's non-blocking mode; the request is
     * read after plat_wait_readable, and the short answer is sent blocking. */
    SetHandleInformation((HANDLE)c, HANDLE_FLAG_INHERIT, 0);
    set_blocking(c, true);
    return (plat_socket)c;
}

ssize_t plat_recv(plat_socket s, char *buf, size_t len)
{
    int r = recv((SOCKET)s, buf, len > INT_MAX ? INT_MAX : (int)len, 0);
    if (r == SOCKET_ERROR)
        return WSAGetLastError() == WSAEWOULDBLOCK || WSAGetLastError() == WSAEINTR ? -2 : -1;
    return r;
}

void plat_send_all(plat_socket s, const char *p, size_t len)
{
    while (len > 0) {
        int w = send((SOCKET)s, p, len > INT_MAX ? INT_MAX : (int)len, 0);
        if (w <= 0)
            return;
        p += w;
        len -= (size_t)w;
    }
}

void plat_close_socket(plat_socket s)
{
    closesocket((SOCKET)s);
}

const char *plat_socket_error(void)
{
    static _Thread_local char msg[256];
    DWORD e = (DWORD)WSAGetLastError();
    if (FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, e, 0, msg,
                       sizeof msg, NULL) == 0)
        snprintf(msg, sizeof msg, "socket error %lu", (unsigned long)e);
    for (size_t n = strlen(msg); n > 0 && (msg[n - 1] == '\r' || msg[n - 1] == '\n' || msg[n - 1] == '.'); n--)
        msg[n - 1] = '\0';
    return msg;
}

long plat_open_browser(const char *url)
{
    /* The shell opens anything it is given, programs included: only web URLs. */
    if (_strnicmp(url, "https://", 8) != 0 && _strnicmp(url, "http://", 7) != 0)
        return -1;
    /* Some URL handlers are COM objects; this thread is mcpc's, so it is left as found. */
    HRESULT com = CoInitializeEx(NULL, COINIT_APARTMENTTHREADED | COINIT_DISABLE_OLE1DDE);
    ShellExecuteA(NULL, "open", url, NULL, NULL, SW_SHOWNORMAL);
    if (SUCCEEDED(com))
        CoUninitialize();
    return -1; /* nothing to reap */
}

void plat_browser_done(long browser)
{
    (void)browser;
}

/* ---- assertion commands: a job object each ----------------------------------------- */

struct plat_command {
    HANDLE job, process, out; /* out: the read end of its stdout */
};

/* Appends one argument quoted the way the C runtime's parser (and
 * CommandLineToArgvW) splits it back. */
static bool add_arg(char **cmd, size_t *len, size_t *cap, const char *arg, bool program)
{
    size_t need = *len + 2 * strlen(arg) + 4;
    if (need > *cap) {
        char *p = realloc(*cmd, need * 2);
        if (p == NULL)
            return false;
        *cmd = p;
        *cap = need * 2;
    }
    char *d = *cmd + *len;
    if (*len > 0)
        *d++ = ' ';
    bool quote = *arg == '\0' || strpbrk(arg, " \t\n\v\"") != NULL;
    if (quote)
        *d++ = '"';
    size_t slashes = 0;
    for (const char *p = arg; *p; p++) {
        if (*p == '\\' && !program) {
            slashes++;
        } else if (*p == '"') {
            for (size_t i = 0; i < slashes + 1; i++)
                *d++ = '\\';
            slashes = 0;
        } else {
            slashes = 0;
        }
        *d++ = *p;
    }
    if (quote) {
        for (size_t i = 0; i < slashes; i++)
            *d++ = '\\';
        *d++ = '"';
    }
    *d = '\0';
    *len = (size_t)(d - *cmd);
    return true;
}

static bool is_batch(const char *program)
{
    size_t n = strlen(program);
    return n >= 4 && (_stricmp(program + n - 4, ".bat") == 0 || _stricmp(program + n - 4, ".cmd") == 0);
}

struct plat_command *plat_command_start(const char *option, char *const *argv)
{
    /* cmd.exe would parse the arguments of a batch file again, by other rules: an
     * argument could become a command (CVE-2024-24576). None runs here. */
    if (is_batch(argv[0]) || strchr(argv[0], '"') != NULL) {
        fprintf(stderr, "mcpc: %s: cannot run '%s': batch files and quotes in the program name are "
                        "not supported\n", option, argv[0]);
        return NULL;
    }
    char *cmd = NULL;
    size_t len = 0, cap = 0;
    for (char *const *a = argv; *a != NULL; a++)
        if (!add_arg(&cmd, &len, &cap, *a, a == argv)) {
            free(cmd);
            return NULL;
        }
    struct plat_command *c = calloc(1, sizeof *c);
    SECURITY_ATTRIBUTES inherit = {sizeof inherit, NULL, TRUE};
    HANDLE out_w = NULL, in = INVALID_HANDLE_VALUE, err = NULL;
    bool ok = c != NULL && CreatePipe(&c->out, &out_w, &inherit, 0) &&
              SetHandleInformation(c->out, HANDLE_FLAG_INHERIT, 0);
    if (ok) {
        in = CreateFileA("NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &inherit, OPEN_EXISTING, 0, NULL);
        ok = in != INVALID_HANDLE_VALUE &&
             DuplicateHandle(GetCurrentProcess(), GetStdHandle(STD_ERROR_HANDLE), GetCurrentProcess(), &err, 0,
                             TRUE, DUPLICATE_SAME_ACCESS);
        if (!ok)
            err = NULL; /* no stderr of our own (a GUI parent): the command gets none */
        ok = in != INVALID_HANDLE_VALUE;
    }
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits;
    memset(&limits, 0, sizeof limits);
    limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    ok = ok && (c->job = CreateJobObjectW(NULL, NULL)) != NULL &&
         SetInformationJobObject(c->job, JobObjectExtendedLimitInformation, &limits, sizeof limits);
    PROCESS_INFORMATION pi;
    memset(&pi, 0, sizeof pi);
    DWORD spawn_error = 0;
    if (ok) {
        STARTUPINFOEXA si;
        memset(&si, 0, sizeof si);
        si.StartupInfo.cb = sizeof si;
        si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
        si.StartupInfo.hStdInput = in;
        si.StartupInfo.hStdOutput = out_w;
        si.StartupInfo.hStdError = err;
        /* It inherits these three handles only: the library starts servers from its
         * own threads meanwhile, and their pipes must not leak into the command. */
        HANDLE inherit_list[3] = {in, out_w, err};
        DWORD n_inherit = err != NULL ? 3 : 2;
        _Alignas(16) char attrs[256]; /* one attribute needs about 48 bytes */
        SIZE_T attrs_size = sizeof attrs;
        si.lpAttributeList = (LPPROC_THREAD_ATTRIBUTE_LIST)attrs;
        DWORD flags = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP;
        if (InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0, &attrs_size) &&
            UpdateProcThreadAttribute(si.lpAttributeList, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit_list,
                                      n_inherit * sizeof(HANDLE), NULL, NULL))
            flags |= EXTENDED_STARTUPINFO_PRESENT;
        else
            si.lpAttributeList = NULL;
        /* Suspended until it is in the job, so nothing it starts escapes. Its own
         * process group: a Ctrl-C meant for mcpc is not its to handle. */
        BOOL started = CreateProcessA(NULL, cmd, NULL, NULL, TRUE, flags, NULL, NULL, &si.StartupInfo, &pi);
        if (si.lpAttributeList != NULL)
            DeleteProcThreadAttributeList(si.lpAttributeList);
        if (started) {
            if (!AssignProcessToJobObject(c->job, pi.hProcess)) {
                spawn_error = GetLastError();
                TerminateProcess(pi.hProcess, 1);
                WaitForSingleObject(pi.hProcess, INFINITE);
                CloseHandle(pi.hThread);
                CloseHandle(pi.hProcess);
                ok = false;
            } else {
                ResumeThread(pi.hThread);
                CloseHandle(pi.hThread);
                c->process = pi.hProcess;
            }
        } else {
            spawn_error = GetLastError();
            ok = false;
        }
    }
    free(cmd);
    if (out_w != NULL)
        CloseHandle(out_w);
    if (in != INVALID_HANDLE_VALUE)
        CloseHandle(in);
    if (err != NULL)
        CloseHandle(err);
    if (!ok) {
        if (spawn_error != 0) {
            char msg[256];
            if (FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, spawn_error, 0,
                               msg, sizeof msg, NULL) == 0)
                snprintf(msg, sizeof msg, "error %lu", (unsigned long)spawn_error);
            for (size_t n = strlen(msg); n > 0 && (msg[n - 1] == '\r' || msg[n - 1] == '\n'); n--)
                msg[n - 1] = '\0';
            fprintf(stderr, "mcpc: %s: cannot run '%s': %s\n", option, argv[0], msg);
        }
        if (c != NULL) {
            if (c->out != NULL)
                CloseHandle(c->out);
            if (c->job != NULL)
                CloseHandle(c->job);
            free(c);
        }
        return NULL;
    }
    return c;
}

/* Anonymous pipes have no timed read: it looks at what is there (PeekNamedPipe)
 * every few milliseconds, and reads only that, so a read never blocks. */
ssize_t plat_command_read(struct plat_command *c, char *buf, size_t cap, int64_t deadline)
{
    size_t got = 0;
    for (;;) {
        int64_t left = deadline - plat_now_ms();
        if (left <= 0)
            return -1;
        DWORD avail = 0;
        if (!PeekNamedPipe(c->out, NULL, 0, NULL, &avail, NULL)) /* broken: every writer is gone */
            return got > cap ? -2 : (ssize_t)got;
        if (avail == 0) {
            Sleep(left > 10 ? 10 : (DWORD)left);
            continue;
        }
        char *dst = got < cap ? buf + got : buf; /* past cap: read on to see the end, keep nothing */
        size_t room = got < cap ? cap - got : cap;
        DWORD r = 0;
        if (!ReadFile(c->out, dst, (DWORD)(room < avail ? room : avail), &r, NULL) || r == 0)
            return got > cap ? -2 : (ssize_t)got;
        got += r;
    }
}

void plat_command_kill(struct plat_command *c)
{
    TerminateJobObject(c->job, 1);
}

const char *plat_command_finish(struct plat_command *c, char *why, size_t size)
{
    CloseHandle(c->out);
    WaitForSingleObject(c->process, INFINITE);
    DWORD code = 1;
    GetExitCodeProcess(c->process, &code);
    CloseHandle(c->process);
    CloseHandle(c->job); /* kills what it left running, as the POSIX group kill does on timeout */
    free(c);
    if (code == 0)
        return NULL;
    snprintf(why, size, "exited with status %lu", (unsigned long)code);
    return why;
}

/* ---- files ----------------------------------------------------------------------------- */

static const char *last_separator(const char *path)
{
    const char *a = strrchr(path, '/'), *b = strrchr(path, '\\');
    return a > b ? a : b;
}

bool plat_dir_writable(const char *path, const char **why)
{
    const char *sep = last_separator(path);
    /* "C:\store.json" and "\store.json": the separator is part of the directory. */
    bool root = sep != NULL && (sep == path || (sep == path + 2 && path[1] == ':'));
    char *dir = sep == NULL ? strdup(".") : strndup(path, (size_t)(sep - path) + (root ? 1 : 0));
    if (dir == NULL) {
        *why = "out of memory";
        return false;
    }
    /* Windows decides by ACLs, which only an attempt tells: a save that fails says so. */
    DWORD attr = GetFileAttributesA(dir);
    free(dir);
    if (attr == INVALID_FILE_ATTRIBUTES || !(attr & FILE_ATTRIBUTE_DIRECTORY)) {
        *why = "its directory does not exist";
        return false;
    }
    return true;
}

/* A security descriptor giving this user, and no one else, full access. */
static PSECURITY_DESCRIPTOR owner_only(void)
{
    HANDLE token;
    if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token))
        return NULL;
    union {
        TOKEN_USER user;
        char bytes[256];
    } info;
    DWORD n = 0;
    char *sid = NULL;
    PSECURITY_DESCRIPTOR sd = NULL;
    if (GetTokenInformation(token, TokenUser, &info, sizeof info, &n) &&
        ConvertSidToStringSidA(info.user.User.Sid, &sid)) {
        char sddl[256];
        /* D:P - a protected DACL (nothing inherited from the directory). */
        snprintf(sddl, sizeof sddl, "D:P(A;;FA;;;%s)", sid);
        if (!ConvertStringSecurityDescriptorToSecurityDescriptorA(sddl, SDDL_REVISION_1, &sd, NULL))
            sd = NULL;
        LocalFree(sid);
    }
    CloseHandle(token);
    return sd;
}

static void set_errno_from(DWORD e)
{
    errno = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND ? ENOENT
            : e == ERROR_ACCESS_DENIED || e == ERROR_SHARING_VIOLATION ? EACCES
            : e == ERROR_FILE_EXISTS || e == ERROR_ALREADY_EXISTS ? EEXIST
                                                                 : EIO;
}

FILE *plat_create_private(const char *path, char **out_tmp, const char **why)
{
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 16);
    PSECURITY_DESCRIPTOR sd = owner_only();
    if (tmp == NULL || sd == NULL) {
        *why = tmp == NULL ? "out of memory" : "cannot make an owner-only file";
        free(tmp);
        LocalFree(sd);
        return NULL;
    }
    SECURITY_ATTRIBUTES sa = {sizeof sa, sd, FALSE};
    HANDLE h = INVALID_HANDLE_VALUE;
    for (int tries = 0; tries < 16 && h == INVALID_HANDLE_VALUE; tries++) {
        unsigned r = 0;
        rand_s(&r);
        snprintf(tmp, plen + 16, "%s.%06x", path, r & 0xffffff);
        h = CreateFileA(tmp, GENERIC_WRITE, 0, &sa, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
        if (h == INVALID_HANDLE_VALUE && GetLastError() != ERROR_FILE_EXISTS)
            break;
    }
    LocalFree(sd);
    if (h == INVALID_HANDLE_VALUE) {
        set_errno_from(GetLastError());
        *why = strerror(errno);
        free(tmp);
        return NULL;
    }
    int fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY);
    FILE *f = fd < 0 ? NULL : _fdopen(fd, "wb");
    if (f == NULL) {
        *why = strerror(errno);
        if (fd >= 0)
            _close(fd);
        else
            CloseHandle(h);
        DeleteFileA(tmp);
        free(tmp);
        return NULL;
    }
    *out_tmp = tmp;
    return f;
}

bool plat_sync(FILE *f)
{
    return fflush(f) == 0 && _commit(_fileno(f)) == 0;
}

bool plat_replace(const char *tmp, const char *path)
{
    if (MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        return true;
    set_errno_from(GetLastError());
    return false;
}

char *plat_abs_dir(const char *dir)
{
    DWORD n = GetFullPathNameA(dir, 0, NULL, NULL);
    char *full = n ? malloc(n) : NULL;
    char *uri = full ? malloc((size_t)n + 2) : NULL;
    if (uri == NULL || GetFullPathNameA(dir, n, full, NULL) == 0) {
        free(full);
        free(uri);
        return NULL;
    }
    /* C:\Users\a becomes /C:/Users/a, as file:///C:/Users/a wants it. */
    char *d = uri;
    if (full[0] != '\\' && full[0] != '/')
        *d++ = '/';
    for (const char *p = full; *p; p++)
        *d++ = *p == '\\' ? '/' : *p;
    if (d - uri > 4 && d[-1] == '/') /* no trailing separator, except at a drive's root */
        d--;
    *d = '\0';
    free(full);
    return uri;
}
