/* The completion queue of the Lua binding (bindings/lua/mcpc.lua): the C side of mcpc/queue.lua.
 *
 * mcpc calls its callbacks on its own threads, and a LuaJIT callback must never run
 * on a thread other than its Lua state's. So the binding passes these C functions as
 * the callbacks: each copies what it was given into an event, appends it to one
 * process-wide queue and writes a byte to a pipe; the Lua side pops the events on its
 * own thread, when it waits (mcpcl_pop with a timeout) or when its event loop sees the
 * pipe readable (mcpcl_fd). The callback's userdata is the Lua side's id for the
 * operation, an integer, so nothing here is allocated per call.
 *
 * The host layer's calls block (mcpc_host_start, mcpc_host_call_tool,
 * mcpc_host_read_resource); mcpcl_host_*_async run one on a detached thread and queue
 * its result the same way, so an editor's loop never waits for a server. The host's
 * handle must outlive them: the Lua side counts its calls in flight and frees the host
 * only once all were delivered. The function to call is passed in (the address LuaJIT
 * resolved in libmcpc), so this library needs libmcpc neither to link nor to load.
 *
 * Build: cc -shared -fPIC -O2 -pthread -Iinclude bindings/lua/mcpc_lua.c -o libmcpc_lua.so
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mcpc.h"

/* What an event carries; mcpc_lua_event_t.kind. */
enum {
    MCPCL_CONNECT = 1, /* ptr: mcpc_client_t * (owned) */
    MCPCL_LIST = 2,    /* ptr: mcpc_tool_list_t * (owned) */
    MCPCL_CALL = 3,    /* ptr: mcpc_result_t * (owned) */
    MCPCL_REQUEST = 4, /* ptr: char * JSON (owned; mcpc_string_free) */
    MCPCL_INPUT = 5,   /* ptr: mcpc_input_t * (owned) */
    MCPCL_HOST = 6,    /* event, state; server, text: copies */
    MCPCL_CONTENTS = 7, /* ptr: mcpc_contents_t * (owned) */
    MCPCL_STATUS = 8,  /* status only */
    MCPCL_SEND = 9,    /* text: a copy of the message a Lua transport is to send */
    MCPCL_CLOSE = 10,  /* a Lua transport's channel is to close */
    MCPCL_FREE = 11,   /* a handler's userdata_free: no call for its id follows */
    MCPCL_AUTHORIZE = 12, /* ptr: mcpc_auth_request_t * (owned: complete or cancel it) */
};

typedef struct mcpc_lua_event_t {
    int32_t kind;
    int32_t status;
    int64_t id;
    void *ptr;
    char *text; /* the error message, or a host event's detail; NULL for none */
    char *server;
    int32_t event;
    int32_t state;
    struct mcpc_lua_event_t *next;
} mcpc_lua_event_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static mcpc_lua_event_t *head, *tail;
static int pipe_fds[2] = {-1, -1};

static void make_pipe(void) {
    if (pipe(pipe_fds) != 0) {
        pipe_fds[0] = pipe_fds[1] = -1;
        return;
    }
    for (int i = 0; i < 2; i++) {
        fcntl(pipe_fds[i], F_SETFD, FD_CLOEXEC);
        fcntl(pipe_fds[i], F_SETFL, fcntl(pipe_fds[i], F_GETFL) | O_NONBLOCK);
    }
}

static pthread_once_t pipe_once = PTHREAD_ONCE_INIT;

/* The pipe's read end: readable while events wait. -1 if no pipe could be made
 * (mcpcl_pop with a timeout still works). */
int mcpcl_fd(void) {
    pthread_once(&pipe_once, make_pipe);
    return pipe_fds[0];
}

static char *copy(const char *s) { return s ? strdup(s) : NULL; }

static void enqueue(mcpc_lua_event_t *ev) {
    pthread_once(&pipe_once, make_pipe);
    pthread_mutex_lock(&lock);
    if (tail) tail->next = ev; else head = ev;
    tail = ev;
    pthread_cond_signal(&ready);
    pthread_mutex_unlock(&lock);
    /* One byte per event; a full pipe is still readable, and the reader drains the
     * queue, so a lost byte loses no event. */
    if (pipe_fds[1] >= 0) {
        char b = 1;
        ssize_t r = write(pipe_fds[1], &b, 1);
        (void)r;
    }
}

static void push(int32_t kind, void *userdata, int32_t status, void *ptr, const char *text) {
    mcpc_lua_event_t *ev = calloc(1, sizeof *ev);
    if (!ev) abort(); /* an owned pointer would leak and its waiter hang */
    ev->kind = kind;
    ev->id = (int64_t)(intptr_t)userdata;
    ev->status = status;
    ev->ptr = ptr;
    ev->text = text && *text ? copy(text) : NULL;
    enqueue(ev);
}

void mcpcl_on_connect(void *ud, mcpc_status_t st, mcpc_client_t *c, const char *err) {
    push(MCPCL_CONNECT, ud, st, c, err);
}
void mcpcl_on_list(void *ud, mcpc_status_t st, mcpc_tool_list_t *l, const char *err) {
    push(MCPCL_LIST, ud, st, l, err);
}
void mcpcl_on_call(void *ud, mcpc_status_t st, mcpc_result_t *r, const char *err) {
    push(MCPCL_CALL, ud, st, r, err);
}
void mcpcl_on_request(void *ud, mcpc_status_t st, char *json, const char *err) {
    push(MCPCL_REQUEST, ud, st, json, err);
}
/* A Lua transport's send: queued, so it succeeds at once; the Lua side writes it out. */
int32_t mcpcl_on_send(void *ud, const char *data, size_t len) {
    mcpc_lua_event_t *ev = calloc(1, sizeof *ev);
    char *text = malloc(len + 1);
    if (!ev || !text) {
        free(ev);
        free(text);
        return 1; /* fails this message only (MCPC_ERR_TRANSPORT) */
    }
    memcpy(text, data, len);
    text[len] = '\0'; /* one JSON object: no NUL inside */
    ev->kind = MCPCL_SEND;
    ev->id = (int64_t)(intptr_t)ud;
    ev->text = text;
    enqueue(ev);
    return 0;
}
void mcpcl_on_close(void *ud) { push(MCPCL_CLOSE, ud, MCPC_OK, NULL, NULL); }

/* Every handler's userdata_free: mcpc runs it after the handler's last call, so this
 * event comes after every other of its id, and the Lua side can forget the handler. */
void mcpcl_on_free(void *ud) { push(MCPCL_FREE, ud, MCPC_OK, NULL, NULL); }

void mcpcl_on_input(void *ud, mcpc_input_t *input) { push(MCPCL_INPUT, ud, MCPC_OK, input, NULL); }

/* A login: returns at once, and the Lua side completes or cancels it from poll. */
void mcpcl_on_authorize(void *ud, mcpc_auth_request_t *request) {
    push(MCPCL_AUTHORIZE, ud, MCPC_OK, request, NULL);
}

void mcpcl_on_host_event(void *ud, mcpc_host_event_t event, const char *server,
                         mcpc_server_state_t state, const char *detail) {
    mcpc_lua_event_t *ev = calloc(1, sizeof *ev);
    if (!ev) return; /* a report carries nothing owned: dropping it leaks nothing */
    ev->kind = MCPCL_HOST;
    ev->id = (int64_t)(intptr_t)ud;
    ev->event = event;
    ev->state = state;
    ev->server = copy(server);
    ev->text = copy(detail);
    enqueue(ev);
}

/* Takes the oldest event into *out (the caller frees its strings with
 * mcpcl_event_clear), waiting up to timeout_ms (0: not at all, negative: forever).
 * Returns 1 with an event, 0 without. */
int mcpcl_pop(mcpc_lua_event_t *out, int64_t timeout_ms) {
    pthread_once(&pipe_once, make_pipe);
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    if (timeout_ms > 0) {
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (timeout_ms % 1000) * 1000000;
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
    }
    pthread_mutex_lock(&lock);
    while (!head && timeout_ms != 0) {
        int rc = timeout_ms < 0 ? pthread_cond_wait(&ready, &lock)
                                : pthread_cond_timedwait(&ready, &lock, &deadline);
        if (rc == ETIMEDOUT) break;
    }
    mcpc_lua_event_t *ev = head;
    if (ev) {
        head = ev->next;
        if (!head) tail = NULL;
    }
    pthread_mutex_unlock(&lock);
    if (!ev) return 0;
    if (pipe_fds[0] >= 0) {
        char b;
        ssize_t r = read(pipe_fds[0], &b, 1);
        (void)r;
    }
    *out = *ev;
    out->next = NULL;
    free(ev);
    return 1;
}

void mcpcl_event_clear(mcpc_lua_event_t *ev) {
    free(ev->text);
    free(ev->server);
    ev->text = ev->server = NULL;
}

/* ---- the host layer's blocking calls, on a thread of their own ---- */

typedef mcpc_status_t (*host_start_fn)(const mcpc_host_t *);
typedef mcpc_status_t (*host_call_fn)(const mcpc_host_t *, const char *, const char *,
                                      const mcpc_call_opts_t *, mcpc_result_t **);
typedef mcpc_status_t (*host_read_fn)(const mcpc_host_t *, const char *, const mcpc_call_opts_t *,
                                      mcpc_contents_t **);
typedef const char *(*last_error_fn)(void);

typedef struct {
    int32_t kind;
    void *fn;
    last_error_fn last_error;
    const mcpc_host_t *host;
    char *a, *b;
    void *userdata;
} job_t;

static void job_free(job_t *job) {
    free(job->a);
    free(job->b);
    free(job);
}

static void *run_job(void *arg) {
    job_t *job = arg;
    mcpc_status_t st;
    void *out = NULL;
    switch (job->kind) {
    case MCPCL_CALL:
        st = ((host_call_fn)job->fn)(job->host, job->a, job->b, NULL, (mcpc_result_t **)&out);
        break;
    case MCPCL_CONTENTS:
        st = ((host_read_fn)job->fn)(job->host, job->a, NULL, (mcpc_contents_t **)&out);
        break;
    default:
        st = ((host_start_fn)job->fn)(job->host);
        break;
    }
    /* the message is this thread's: read it before anything else calls mcpc here */
    push(job->kind, job->userdata, st, out, st == MCPC_OK ? NULL : job->last_error());
    job_free(job);
    return NULL;
}

static int spawn(int32_t kind, void *fn, void *last_error, const mcpc_host_t *host,
                 const char *a, const char *b, void *userdata) {
    job_t *job = calloc(1, sizeof *job);
    if (!job) return ENOMEM;
    job->kind = kind;
    job->fn = fn;
    job->last_error = (last_error_fn)last_error;
    job->host = host;
    job->a = copy(a);
    job->b = copy(b);
    job->userdata = userdata;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t t;
    int rc = pthread_create(&t, &attr, run_job, job);
    pthread_attr_destroy(&attr);
    if (rc != 0) job_free(job);
    return rc;
}

/* Each returns 0 once the thread runs (the result comes as an event of the same
 * kind: MCPCL_STATUS, MCPCL_CALL, MCPCL_CONTENTS), else an errno value and no event.
 * `fn` is mcpc_host_start, mcpc_host_call_tool or mcpc_host_read_resource, and
 * `last_error` mcpc_last_error_message. The strings are copied. */
int mcpcl_host_start_async(void *fn, void *last_error, const mcpc_host_t *host, void *userdata) {
    return spawn(MCPCL_STATUS, fn, last_error, host, NULL, NULL, userdata);
}
int mcpcl_host_call_tool_async(void *fn, void *last_error, const mcpc_host_t *host,
                               const char *qualified, const char *arguments_json, void *userdata) {
    return spawn(MCPCL_CALL, fn, last_error, host, qualified, arguments_json, userdata);
}
int mcpcl_host_read_resource_async(void *fn, void *last_error, const mcpc_host_t *host,
                                   const char *uri, void *userdata) {
    return spawn(MCPCL_CONTENTS, fn, last_error, host, uri, NULL, userdata);
}
