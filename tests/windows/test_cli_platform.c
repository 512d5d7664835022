/*
 * test_cli_platform.c - the Windows side of the command line's platform layer
 * (cli/platform_win.c), tested where the CLI tests cannot reach it under Wine (no
 * OAuth server here): the assertion command (output, exit status, deadline, the
 * job object ending what it started), the credential store's owner-only file and
 * its replacement, --roots' paths, and the login listener's wait and wake.
 * Built with platform_win.c and run under Wine by make test-windows, from the test
 * folder that holds fake_server.exe.
 */
#define WIN32_LEAN_AND_MEAN
#include <winsock2.h>
#include <windows.h>
#include <aclapi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform.h"

static int failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "  CHECK failed at line %d: %s\n", __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

static char g_dir[MAX_PATH], g_server[MAX_PATH];

/* Runs the fake server with `args` as an assertion command would be run. */
static ssize_t run(char *const *args, char *buf, size_t cap, int64_t limit_ms, const char **why, char *status,
                   size_t status_size)
{
    char *argv[8];
    size_t n = 0;
    argv[n++] = g_server;
    for (; args[n - 1] != NULL && n < 7; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct plat_command *c = plat_command_start("--assertion-command", argv);
    if (c == NULL)
        return -3;
    ssize_t len = plat_command_read(c, buf, cap, plat_now_ms() + limit_ms);
    if (len == -1)
        plat_command_kill(c);
    *why = plat_command_finish(c, status, status_size);
    return len;
}

static void test_command(void)
{
    char buf[64], status[48];
    const char *why = NULL;
    char *print[] = {"--print=a token", "--exit=0", NULL};
    ssize_t len = run(print, buf, sizeof buf - 1, 10000, &why, status, sizeof status);
    CHECK(len == 7 && memcmp(buf, "a token", 7) == 0);
    CHECK(why == NULL);

    char *fails[] = {"--print=x", "--exit=3", NULL};
    len = run(fails, buf, sizeof buf - 1, 10000, &why, status, sizeof status);
    CHECK(len == 1);
    CHECK(why != NULL && strcmp(why, "exited with status 3") == 0);

    char *big[] = {"--print=0123456789abcdef", "--exit=0", NULL};
    len = run(big, buf, 8, 10000, &why, status, sizeof status);
    CHECK(len == -2);

    /* Past the deadline it is killed, and so is what it started (the job). */
    char marker[MAX_PATH + 32], arg[MAX_PATH + 64];
    snprintf(marker, sizeof marker, "%scommand-grandchild.pid", g_dir);
    DeleteFileA(marker);
    snprintf(arg, sizeof arg, "--spawn-grandchild=%s", marker);
    char *hangs[] = {arg, "--sleep=60000", NULL};
    int64_t t0 = plat_now_ms();
    len = run(hangs, buf, sizeof buf - 1, 1000, &why, status, sizeof status);
    CHECK(len == -1);
    CHECK(plat_now_ms() - t0 < 10000);
    unsigned long pid = 0;
    FILE *f = fopen(marker, "rb");
    if (f != NULL) {
        if (fscanf(f, "%lu", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    CHECK(pid != 0);
    HANDLE h = pid ? OpenProcess(SYNCHRONIZE | PROCESS_TERMINATE, FALSE, (DWORD)pid) : NULL;
    if (h != NULL) {
        bool gone = WaitForSingleObject(h, 5000) == WAIT_OBJECT_0;
        CHECK(gone);
        if (!gone)
            TerminateProcess(h, 1);
        CloseHandle(h);
    }

    /* Batch files are refused: cmd.exe would parse the arguments again. */
    char *argv_cmd[] = {"C:\\x\\token.cmd", "a&b", NULL};
    CHECK(plat_command_start("--assertion-command", argv_cmd) == NULL);
}

static bool under_wine(void)
{
    HMODULE ntdll = GetModuleHandleA("ntdll.dll");
    return ntdll != NULL && GetProcAddress(ntdll, "wine_get_version") != NULL;
}

/* On Windows the DACL is protected and has one entry, this user's. Wine keeps no
 * ACLs on a Unix file system: it makes the DACL up from the file's mode, so there
 * only "no entry for Everyone" (no access for other users) can be checked. */
static void check_owner_only(const char *path)
{
    PACL dacl = NULL;
    PSECURITY_DESCRIPTOR sd = NULL;
    DWORD rc = GetNamedSecurityInfoA(path, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl, NULL,
                                     &sd);
    CHECK(rc == ERROR_SUCCESS && dacl != NULL);
    if (rc != ERROR_SUCCESS || dacl == NULL)
        return;
    union {
        TOKEN_USER user;
        char bytes[256];
    } me;
    HANDLE token;
    DWORD n = 0;
    CHECK(OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token));
    CHECK(GetTokenInformation(token, TokenUser, &me, sizeof me, &n));
    CloseHandle(token);
    SID_IDENTIFIER_AUTHORITY world_auth = {SECURITY_WORLD_SID_AUTHORITY};
    PSID world = NULL;
    AllocateAndInitializeSid(&world_auth, 1, SECURITY_WORLD_RID, 0, 0, 0, 0, 0, 0, 0, &world);
    int mine = 0, others = 0, everyone = 0;
    for (DWORD i = 0; i < dacl->AceCount; i++) {
        ACCESS_ALLOWED_ACE *ace = NULL;
        if (!GetAce(dacl, i, (void **)&ace) || ace->Header.AceType != ACCESS_ALLOWED_ACE_TYPE)
            continue;
        PSID sid = (PSID)&ace->SidStart;
        if (EqualSid(sid, me.user.User.Sid))
            mine++;
        else if (EqualSid(sid, world))
            everyone++;
        else
            others++;
    }
    FreeSid(world);
    SECURITY_DESCRIPTOR_CONTROL control = 0;
    DWORD revision = 0;
    GetSecurityDescriptorControl(sd, &control, &revision);
    LocalFree(sd);
    CHECK(everyone == 0);
    if (under_wine()) {
        fprintf(stderr, "  skipped the DACL's exact check: Wine makes it up from the file's mode\n");
        return;
    }
    CHECK(mine == 1 && others == 0 && dacl->AceCount == 1);
    CHECK(control & SE_DACL_PROTECTED);
}

static void test_private_file(void)
{
    char path[MAX_PATH + 32];
    snprintf(path, sizeof path, "%sstore.json", g_dir);
    const char *why = NULL;
    CHECK(plat_dir_writable(path, &why));
    CHECK(!plat_dir_writable("Z:\\no\\such\\dir\\store.json", &why));
    for (int round = 0; round < 2; round++) { /* the second replaces the first */
        char *tmp = NULL;
        FILE *f = plat_create_private(path, &tmp, &why);
        CHECK(f != NULL);
        if (f == NULL)
            return;
        fprintf(f, "{\n  \"round\": \"%d\"\n}\n", round);
        CHECK(plat_sync(f));
        CHECK(fclose(f) == 0);
        CHECK(plat_replace(tmp, path));
        free(tmp);
    }
    char text[64] = "";
    FILE *f = fopen(path, "rb");
    if (f != NULL) {
        text[fread(text, 1, sizeof text - 1, f)] = '\0';
        fclose(f);
    }
    CHECK(strcmp(text, "{\n  \"round\": \"1\"\n}\n") == 0); /* binary: no \r */

    check_owner_only(path);
    DeleteFileA(path);
}

static void test_abs_dir(void)
{
    char *p = plat_abs_dir("C:\\Windows\\");
    CHECK(p != NULL && strcmp(p, "/C:/Windows") == 0);
    free(p);
    p = plat_abs_dir("C:\\");
    CHECK(p != NULL && strcmp(p, "/C:/") == 0);
    free(p);
}

static DWORD WINAPI connect_later(void *arg)
{
    uint16_t port = *(uint16_t *)arg;
    Sleep(200);
    SOCKET s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
        const char req[] = "GET /callback?code=1 HTTP/1.1\r\n\r\n";
        send(s, req, sizeof req - 1, 0);
        char buf[512];
        while (recv(s, buf, sizeof buf, 0) > 0) {
        }
    }
    closesocket(s);
    return 0;
}

static void test_listener(void)
{
    CHECK(plat_wake_init());
    uint16_t port = 0;
    plat_socket l = plat_listen_loopback(0, &port);
    CHECK(l >= 0 && port != 0);
    if (l < 0)
        return;
    /* Nothing comes: the deadline. */
    CHECK(plat_wait_readable(l, plat_now_ms() + 200) == 0);
    /* A client connects and sends a request. */
    HANDLE t = CreateThread(NULL, 0, connect_later, &port, 0, NULL);
    CHECK(plat_wait_readable(l, plat_now_ms() + 10000) == 1);
    plat_socket c = plat_accept(l);
    CHECK(c >= 0);
    char buf[256] = "";
    size_t got = 0;
    while (c >= 0 && got < sizeof buf - 1 && !memchr(buf, '\n', got)) {
        if (plat_wait_readable(c, plat_now_ms() + 5000) != 1)
            break;
        ssize_t r = plat_recv(c, buf + got, sizeof buf - 1 - got);
        if (r == -2)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    CHECK(strstr(buf, "GET /callback?code=1 ") == buf);
    if (c >= 0) {
        plat_send_all(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38);
        plat_close_socket(c);
    }
    WaitForSingleObject(t, 5000);
    CloseHandle(t);
    /* A wake ends the wait at once, and every later one. */
    plat_wake();
    int64_t t0 = plat_now_ms();
    CHECK(plat_wait_readable(l, plat_now_ms() + 10000) == -1);
    CHECK(plat_now_ms() - t0 < 1000);
    plat_close_socket(l);
}

int main(void)
{
    DWORD n = GetModuleFileNameA(NULL, g_dir, sizeof g_dir);
    char *slash = n ? strrchr(g_dir, '\\') : NULL;
    if (slash == NULL)
        return 2;
    slash[1] = '\0';
    snprintf(g_server, sizeof g_server, "%sfake_server.exe", g_dir);
    plat_init();
    test_command();
    test_private_file();
    test_abs_dir();
    test_listener();
    printf("test_cli_platform: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
