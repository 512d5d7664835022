/*
 * platform.h - what the command line asks of the system, in one place: one
 * implementation per platform, platform_posix.c (Linux and other POSIX systems)
 * and platform_win.c (Windows). The other files of cli/ are C11 plus this.
 */
#ifndef MCPC_CLI_PLATFORM_H
#define MCPC_CLI_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
/* Every open() of cli/ passes O_CLOEXEC, and each also wants binary mode, which
 * Windows does not give by default: both ride on that one flag. No FIFOs or
 * terminals hang an open() there. */
#undef O_CLOEXEC
#define O_CLOEXEC (_O_NOINHERIT | _O_BINARY)
#define O_NOCTTY 0
#define O_NONBLOCK 0
#define fsync(fd) _commit(fd)
char *strndup(const char *s, size_t n);
#endif

/* What ends a call from the keyboard or the system, for the usage text. */
#ifdef _WIN32
#define PLAT_INTERRUPTS "Ctrl-C or Ctrl-Break"
#else
#define PLAT_INTERRUPTS "SIGINT or SIGTERM"
#endif

/* Prepares the process: on Windows, UTF-8 on the console and binary stdout, so
 * the output is the same bytes as on Linux. Nothing on POSIX. */
void plat_init(void);

/* One byte of stdin, or EOF: getchar() on POSIX. On Windows a console is read as
 * UTF-16 (ReadConsoleW) and handed out as UTF-8 with "\n" line ends, which the
 * console's code page cannot do for every character; a pipe or file as getchar(). */
#ifdef _WIN32
int plat_getchar(void);
#else
static inline int plat_getchar(void)
{
    return getchar();
}
#endif

/* A monotonic clock in milliseconds. */
int64_t plat_now_ms(void);

/* ---- interrupts ---------------------------------------------------------------
 * SIGINT and SIGTERM on POSIX; Ctrl-C, Ctrl-Break and closing the console on
 * Windows. `on_interrupt` runs on a thread of the platform layer's (never in a
 * signal handler) for each one. Start before the first mcpc call (POSIX blocks the
 * signals, and the library's threads inherit that); false after printing why. */
bool plat_interrupts_start(void (*on_interrupt)(void));
void plat_interrupts_stop(void);
/* The first interrupt received (0 if none) and its name ("SIGINT", "Ctrl-C"). */
int plat_interrupt_received(void);
const char *plat_interrupt_name(int which);

/* ---- the loopback listener of the browser login --------------------------- */

typedef intptr_t plat_socket; /* -1: none */

/* Prepares plat_wake; call once before any thread starts. */
bool plat_wake_init(void);
/* Makes every plat_wait_readable, now or later, return -1. Any thread. */
void plat_wake(void);
/* A listener on 127.0.0.1:port (0: the system picks), its port in *out_port. */
plat_socket plat_listen_loopback(uint16_t port, uint16_t *out_port);
/* 1 when readable, 0 at the deadline (plat_now_ms), -1 once plat_wake was called. */
int plat_wait_readable(plat_socket s, int64_t deadline);
plat_socket plat_accept(plat_socket s);
/* As recv(2): bytes read, 0 at the end, -1 on error (-2: try again). */
ssize_t plat_recv(plat_socket s, char *buf, size_t len);
void plat_send_all(plat_socket s, const char *p, size_t len);
void plat_close_socket(plat_socket s);
/* The last socket error, described. */
const char *plat_socket_error(void);
/* Opens `url` in the user's browser, quietly (xdg-open; the shell's default on
 * Windows); without one the user has the URL. Returns what plat_browser_done takes. */
long plat_open_browser(const char *url);
/* Reaps what plat_open_browser started, if it ended (xdg-open hands off at once). */
void plat_browser_done(long browser);

/* ---- a command whose output is read (--assertion-command) -----------------
 * It runs with stdin empty, stdout to us, stderr the user's, in a process group
 * (POSIX) or job object (Windows) of its own, so a kill ends what it started too. */

struct plat_command;

/* Starts argv (NULL-terminated, argv[0] looked up in PATH); NULL after printing
 * "mcpc: OPTION: cannot run ...". */
struct plat_command *plat_command_start(const char *option, char *const *argv);
/* Reads its output into buf (at most cap bytes): the length, -1 when the deadline
 * passed, -2 when it printed more than cap. */
ssize_t plat_command_read(struct plat_command *c, char *buf, size_t cap, int64_t deadline);
/* Kills it and what it started. Any thread, also while another reads or waits. */
void plat_command_kill(struct plat_command *c);
/* Waits for it to end and frees it: NULL when it exited 0, else why not (in
 * `why`, `size` bytes). */
const char *plat_command_finish(struct plat_command *c, char *why, size_t size);

/* Clears memory that held a secret, in a way the compiler keeps. */
void plat_clear(void *p, size_t len);

/* ---- files -------------------------------------------------------------------- */

/* Whether the directory of `path` takes new files; else *why says. */
bool plat_dir_writable(const char *path, const char **why);
/* A new file beside `path`, readable and writable by this user only (0600; on
 * Windows a DACL with only the owner), open for writing; its name in *out_tmp
 * (malloc'd). NULL with *why set. */
FILE *plat_create_private(const char *path, char **out_tmp, const char **why);
/* Flushes f to the disk. */
bool plat_sync(FILE *f);
/* Renames tmp over path, replacing it. */
bool plat_replace(const char *tmp, const char *path);

/* The absolute path of directory `dir` for a file:// URI, with '/' separators
 * ("/home/a", or "/C:/Users/a" on Windows), malloc'd; NULL on failure. */
char *plat_abs_dir(const char *dir);
/* The bytes of such a path kept as they are in the URI; others are %-encoded. */
#ifdef _WIN32
#define PLAT_URI_PATH_SAFE "/-._~:"
#else
#define PLAT_URI_PATH_SAFE "/-._~"
#endif

#endif
