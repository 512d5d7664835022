/* A host for the caller-supplied transport seam, written the way an embedding
 * application would: it owns the channel (pipes to a server process it started
 * itself) and gives mcpc callbacks. Two forms: a stream (send each message, deliver
 * each line read back) and request/response (each message is an exchange, completed
 * when its response line arrives, with the lines that came before it). */
#ifndef MCPC_TEST_SEAM_HOST_H
#define MCPC_TEST_SEAM_HOST_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "harness.h"

#define SEAM_MAX_PENDING 4096

struct seam_host {
    pid_t pid;
    int to_server;
    FILE *from_server;
    pthread_t reader;
    mcpc_transport_t *transport;
    int exchange_mode;
    atomic_int send_calls;
    atomic_int close_calls;
    atomic_int userdata_frees;
    atomic_int fail_sends; /* when set, send callbacks report failure */
    pthread_mutex_t lock;
    long pending_id[SEAM_MAX_PENDING];
    mcpc_exchange_t *pending_ex[SEAM_MAX_PENDING];
    char *early; /* exchange mode: lines read before the response they precede */
    size_t early_len;
};

static int seam_write_line(struct seam_host *h, const char *data, size_t len) {
    char *buf = malloc(len + 1);
    memcpy(buf, data, len);
    buf[len] = '\n';
    size_t off = 0;
    int rc = 0;
    while (off < len + 1) {
        ssize_t n = write(h->to_server, buf + off, len + 1 - off);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            rc = -1;
            break;
        }
        off += (size_t)n;
    }
    free(buf);
    return rc;
}

static int32_t seam_send(void *ud, const char *data, size_t len) {
    struct seam_host *h = ud;
    atomic_fetch_add(&h->send_calls, 1);
    if (atomic_load(&h->fail_sends)) return 7;
    return seam_write_line(h, data, len) == 0 ? 0 : 1;
}

/* Our request ids are integers: `"id":N` right after `"jsonrpc":"2.0",`. */
static long seam_request_id(const char *data) {
    const char *p = strstr(data, "\"id\":");
    return p ? strtol(p + 5, NULL, 10) : -1;
}

static int32_t seam_request(void *ud, mcpc_exchange_t *ex, const char *data, size_t len) {
    struct seam_host *h = ud;
    atomic_fetch_add(&h->send_calls, 1);
    if (atomic_load(&h->fail_sends)) return 7;
    if (!mcpc_exchange_expects_response(ex)) {
        if (seam_write_line(h, data, len) != 0) return 1;
        mcpc_exchange_complete(ex, NULL, 0);
        return 0;
    }
    char *copy = strndup(data, len);
    long id = seam_request_id(copy);
    free(copy);
    pthread_mutex_lock(&h->lock);
    int slot = -1;
    for (int i = 0; i < SEAM_MAX_PENDING; i++) {
        if (h->pending_ex[i] == NULL) {
            slot = i;
            break;
        }
    }
    if (slot >= 0) {
        h->pending_id[slot] = id;
        h->pending_ex[slot] = ex;
    }
    pthread_mutex_unlock(&h->lock);
    if (slot < 0) return 2;
    if (seam_write_line(h, data, len) != 0) {
        /* The exchange is registered: fail it ourselves, then report success so
         * that mcpc does not reclaim it a second time. */
        pthread_mutex_lock(&h->lock);
        mcpc_exchange_t *mine = h->pending_ex[slot];
        h->pending_ex[slot] = NULL;
        pthread_mutex_unlock(&h->lock);
        if (mine) mcpc_exchange_fail(mine, "write to the server failed");
    }
    return 0;
}

static void seam_close(void *ud) {
    struct seam_host *h = ud;
    atomic_fetch_add(&h->close_calls, 1);
    close(h->to_server);
    h->to_server = -1;
}

static void seam_userdata_free(void *ud) {
    struct seam_host *h = ud;
    atomic_fetch_add(&h->userdata_frees, 1);
}

/* A response has "result" or "error" before any "method" (a result may hold
 * "method" inside it, as an input request does; a request or notification has its
 * own "method" first). Good enough for the servers these tests run. */
static int seam_is_response(const char *line) {
    const char *m = strstr(line, "\"method\"");
    const char *r = strstr(line, "\"result\"");
    const char *e = strstr(line, "\"error\"");
    const char *first = r && (!e || r < e) ? r : e;
    return first && (!m || first < m);
}

static void seam_exchange_line(struct seam_host *h, const char *line, size_t len) {
    if (seam_is_response(line)) {
        long id = seam_request_id(line);
        pthread_mutex_lock(&h->lock);
        mcpc_exchange_t *ex = NULL;
        for (int i = 0; i < SEAM_MAX_PENDING; i++) {
            if (h->pending_ex[i] && h->pending_id[i] == id) {
                ex = h->pending_ex[i];
                h->pending_ex[i] = NULL;
                break;
            }
        }
        char *body = malloc(h->early_len + len + 1);
        memcpy(body, h->early ? h->early : "", h->early_len);
        memcpy(body + h->early_len, line, len);
        size_t body_len = h->early_len + len;
        free(h->early);
        h->early = NULL;
        h->early_len = 0;
        pthread_mutex_unlock(&h->lock);
        if (ex) {
            mcpc_exchange_complete(ex, body, body_len);
        } else {
            /* A response to nothing pending (or a bad one): deliver it as is. */
            mcpc_transport_deliver(h->transport, body, body_len);
        }
        free(body);
    } else {
        pthread_mutex_lock(&h->lock);
        h->early = realloc(h->early, h->early_len + len + 1);
        memcpy(h->early + h->early_len, line, len);
        h->early[h->early_len + len] = '\n';
        h->early_len += len + 1;
        pthread_mutex_unlock(&h->lock);
    }
}

static void *seam_reader(void *p) {
    struct seam_host *h = p;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, h->from_server)) > 0) {
        size_t len = (size_t)n;
        if (line[len - 1] == '\n') line[--len] = 0;
        if (len == 0) continue;
        if (h->exchange_mode) {
            seam_exchange_line(h, line, len);
        } else {
            mcpc_transport_deliver(h->transport, line, len);
        }
    }
    free(line);
    mcpc_transport_end(h->transport, "the server closed its stdout");
    /* Exchanges still open can no longer complete. */
    pthread_mutex_lock(&h->lock);
    for (int i = 0; i < SEAM_MAX_PENDING; i++) {
        if (h->pending_ex[i]) {
            mcpc_exchange_fail(h->pending_ex[i], "the server went away");
            h->pending_ex[i] = NULL;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

/* Starts the server `argv` on pipes and makes a transport over them. */
static struct seam_host *seam_start(const char *const *argv, int exchange_mode) {
    struct seam_host *h = calloc(1, sizeof *h);
    h->exchange_mode = exchange_mode;
    pthread_mutex_init(&h->lock, NULL);
    int from_server;
    if (spawn_piped(argv, &h->pid, &h->to_server, &from_server) != 0) {
        free(h);
        return NULL;
    }
    h->from_server = fdopen(from_server, "r");
    mcpc_status_t st = exchange_mode
        ? mcpc_transport_new_request(seam_request, seam_close, h, seam_userdata_free, &h->transport)
        : mcpc_transport_new(seam_send, seam_close, h, seam_userdata_free, &h->transport);
    if (st != MCPC_OK) {
        fprintf(stderr, "transport_new: %s\n", mcpc_last_error_message());
    }
    pthread_create(&h->reader, NULL, seam_reader, h);
    return h;
}

/* After the client is freed: reaps the server, stops the reader, drops the host's
 * handle, and checks that the close callback and userdata_free each ran once. */
static void seam_stop(struct seam_host *h) {
    int attached = atomic_load(&h->close_calls) > 0;
    if (!attached && h->to_server >= 0) {
        close(h->to_server);
        h->to_server = -1;
    }
    /* The server sees EOF and exits; then the reader sees EOF too. */
    int status = 0;
    waitpid(h->pid, &status, 0);
    pthread_join(h->reader, NULL);
    fclose(h->from_server);
    mcpc_transport_free(h->transport);
    CHECK(atomic_load(&h->close_calls) <= 1);
    CHECK(atomic_load(&h->userdata_frees) == 1);
    free(h->early);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

#endif
