/*
 * login.c - the browser login of `mcpc --oauth` (see login.h).
 *
 * The listener is opened before the login so that its port is known for the
 * redirect URI. It takes exactly one request, whatever it is: mcpc checks the
 * redirect's state and issuer, so a stray request fails the login rather than
 * letting a second one in.
 */
#include "login.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "platform.h"

/* The request line and headers of the redirect; a browser's fit easily. */
#define REQUEST_MAX 8192

struct login {
    plat_socket fd; /* the listener; -1 once its one request was taken */
    uint16_t port;
    int64_t timeout_ms;
    bool open_browser;
};

bool login_init(void)
{
    return plat_wake_init();
}

void login_interrupt(void)
{
    plat_wake();
}

struct login *login_new(int64_t timeout_ms, bool open_browser, const char **why)
{
    struct login *l = calloc(1, sizeof *l);
    if (l == NULL) {
        *why = "out of memory";
        return NULL;
    }
    l->timeout_ms = timeout_ms;
    l->open_browser = open_browser;
    l->fd = plat_listen_loopback(0, &l->port);
    if (l->fd < 0) {
        *why = plat_socket_error();
        free(l);
        return NULL;
    }
    return l;
}

void login_free(struct login *l)
{
    if (l == NULL)
        return;
    if (l->fd >= 0)
        plat_close_socket(l->fd);
    free(l);
}

static void on_free(void *userdata)
{
    login_free(userdata);
}

static void answer(plat_socket fd, int code, const char *text)
{
    char page[512], head[256];
    int plen = snprintf(page, sizeof page,
                        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcpc</title></head>"
                        "<body><p>%s</p></body></html>\n",
                        text);
    int hlen = snprintf(head, sizeof head,
                        "HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\n"
                        "Content-Length: %d\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n",
                        code, code == 200 ? "OK" : "Bad Request", plen);
    plat_send_all(fd, head, (size_t)hlen);
    plat_send_all(fd, page, (size_t)plen);
}

/*
 * Reads one request from `conn` until its headers end (or REQUEST_MAX bytes) and
 * returns its target, malloc'd, when it is "GET /... HTTP/1.x" with a target of
 * visible ASCII; NULL otherwise. *interrupted says whether login_interrupt ended it.
 */
static char *read_target(plat_socket conn, int64_t deadline, bool *interrupted)
{
    char buf[REQUEST_MAX + 1];
    size_t got = 0;
    while (got < REQUEST_MAX) {
        int w = plat_wait_readable(conn, deadline);
        if (w <= 0) {
            *interrupted = w < 0;
            return NULL;
        }
        ssize_t r = plat_recv(conn, buf + got, REQUEST_MAX - got);
        if (r == -2)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        buf[got] = '\0';
        if (strstr(buf, "\r\n\r\n") != NULL)
            break;
    }
    buf[got] = '\0';
    if (strncmp(buf, "GET /", 5) != 0)
        return NULL;
    const char *t = buf + 4, *e = t;
    while ((unsigned char)*e > 0x20 && (unsigned char)*e < 0x7f)
        e++;
    if (strncmp(e, " HTTP/1.", 8) != 0)
        return NULL;
    return strndup(t, (size_t)(e - t));
}

/* Takes the one request of the login; returns its target or NULL (why says). */
static char *take_redirect(struct login *l, int64_t deadline, const char **why)
{
    int w = plat_wait_readable(l->fd, deadline);
    if (w <= 0) {
        *why = w < 0 ? "interrupted" : "timed out waiting for the browser";
        return NULL;
    }
    plat_socket conn = plat_accept(l->fd);
    if (conn < 0)
        *why = plat_socket_error(); /* before the close, which may change it */
    plat_close_socket(l->fd);
    l->fd = -1;
    if (conn < 0) {
        return NULL;
    }
    bool interrupted = false;
    char *target = read_target(conn, deadline, &interrupted);
    if (target != NULL)
        answer(conn, 200, "Login received. You can close this window and return to mcpc.");
    else if (!interrupted)
        answer(conn, 400, "This is not a login redirect. mcpc stopped the login.");
    plat_close_socket(conn);
    *why = interrupted ? "interrupted" : "the browser's request was not a login redirect";
    return target;
}

static void on_authorize(void *userdata, mcpc_auth_request_t *req)
{
    struct login *l = userdata;
    const char *url = mcpc_auth_request_url(req);
    if (l->fd < 0) {
        /* A second login in one run (a step-up): the redirect URI names this port. */
        uint16_t port = 0;
        l->fd = plat_listen_loopback(l->port, &port);
        if (l->fd < 0) {
            fprintf(stderr, "mcpc: cannot listen on 127.0.0.1:%u again for the login: %s\n",
                    (unsigned)l->port, plat_socket_error());
            mcpc_auth_request_cancel(req);
            return;
        }
    }
    fputs("mcpc: to log in, open this URL in a browser:\n", stderr);
    put_sanitized(stderr, url);
    fputc('\n', stderr);
    long browser = l->open_browser ? plat_open_browser(url) : -1;

    const char *why = NULL;
    char *target = take_redirect(l, plat_now_ms() + l->timeout_ms, &why);
    plat_browser_done(browser);
    if (target == NULL) {
        fprintf(stderr, "mcpc: login stopped: %s\n", why);
        mcpc_auth_request_cancel(req);
        return;
    }
    size_t len = strlen(target) + 32;
    char *back = malloc(len);
    if (back == NULL) {
        free(target);
        mcpc_auth_request_cancel(req);
        return;
    }
    snprintf(back, len, "http://127.0.0.1:%u%s", (unsigned)l->port, target);
    free(target);
    mcpc_auth_request_complete(req, back);
    free(back);
}

mcpc_status_t login_attach(struct login *l, mcpc_oauth_t *oauth)
{
    char uri[64];
    snprintf(uri, sizeof uri, "http://127.0.0.1:%u/callback", (unsigned)l->port);
    mcpc_status_t st = mcpc_oauth_set_redirect_uri(oauth, uri);
    if (st != MCPC_OK) {
        login_free(l);
        return st;
    }
    return mcpc_oauth_set_authorize_callback(oauth, on_authorize, l, on_free);
}
