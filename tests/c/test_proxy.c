/* C tests of HTTP proxies: a real proxy (tinyproxy, started here on loopback, with and
 * without Basic authentication) in front of the loopback HTTP fixture, plain and TLS;
 * the explicit option, the no-proxy list, the environment's rule for loopback, a 407,
 * and hand-made proxies that refuse, drop or never answer the tunnel. Every address is loopback.
 * Run from the repository root; the closing line is "N passed, N failed, N skipped".
 * An argument runs only tests whose name contains it. MCPC_TINYPROXY names the
 * program (default: tinyproxy on PATH). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "http_fixture.h"
#include "proxy_fixture.h"

static char cert_dir[256];
static char ca_file[300];

/* The URL of a proxy that is not there: a loopback port nothing listens on. */
static void dead_proxy(char *url, size_t n) { snprintf(url, n, "http://127.0.0.1:%d", free_port()); }

static int tls_fixture(struct fixture *f) {
    char certp[300], keyp[300];
    snprintf(certp, sizeof certp, "%s/server.pem", cert_dir);
    snprintf(keyp, sizeof keyp, "%s/server.key", cert_dir);
    const char *args[] = {"--tls", certp, keyp, NULL};
    if (fixture_start(f, args) != 0) return -1;
    snprintf(f->url, sizeof f->url, "https://127.0.0.1:%d/mcp", f->port);
    return 0;
}

/* Options with the test CA and `proxy`. */
static mcpc_options_t *via(const char *proxy) {
    mcpc_options_t *o = mcpc_options_new();
    mcpc_options_set_timeout_ms(o, 15000);
    CHECK_STATUS(mcpc_options_add_ca_file(o, ca_file), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_proxy(o, proxy), MCPC_OK);
    return o;
}

/* Connects with `o` (freed here), calls echo, and returns the connect status. */
static mcpc_status_t echo_via(struct fixture *f, mcpc_options_t *o, const char *text) {
    mcpc_client_t *c = NULL;
    mcpc_status_t st = mcpc_client_connect_http(f->url, o, &c);
    mcpc_options_free(o);
    if (st != MCPC_OK) return st;
    char args[128];
    snprintf(args, sizeof args, "{\"text\":\"%s\"}", text);
    mcpc_result_t *r = NULL;
    CHECK_STATUS(mcpc_client_call_tool(c, "echo", args, NULL, &r), MCPC_OK);
    CHECK(r && strcmp(mcpc_result_text(r, NULL), text) == 0);
    mcpc_result_free(r);
    mcpc_client_free(c);
    return st;
}

static void test_https_through_a_tunnel(void) {
    struct proxy p;
    struct fixture f;
    if (proxy_start(&p, NULL) != 0 || tls_fixture(&f) != 0) {
        CHECK(0);
        proxy_stop(&p);
        return;
    }
    char url[64], connect_line[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", p.port);
    CHECK_STATUS(echo_via(&f, via(url), "tunnelled"), MCPC_OK);
    /* The proxy saw CONNECT to the endpoint and nothing of the requests inside. */
    snprintf(connect_line, sizeof connect_line, "CONNECT 127.0.0.1:%d HTTP/1.1", f.port);
    CHECK(proxy_log_has(&p, connect_line));
    CHECK(!proxy_log_has(&p, "POST"));
    CHECK(!proxy_log_has(&p, "/mcp"));
    const char *calls[] = {"\"method\":\"POST\"", "tunnelled", NULL};
    CHECK(log_count(&f, calls) >= 1);
    fixture_stop(&f);
    proxy_stop(&p);
}

static void test_http_in_absolute_form(void) {
    struct proxy p;
    struct fixture f;
    const char *sse[] = {"--mode", "sse", NULL};
    if (proxy_start(&p, "mcpc s3cret") != 0 || fixture_start(&f, sse) != 0) {
        CHECK(0);
        proxy_stop(&p);
        return;
    }
    char url[96], line[128];
    snprintf(url, sizeof url, "http://mcpc:s3cret@127.0.0.1:%d", p.port);
    CHECK_STATUS(echo_via(&f, via(url), "absolute"), MCPC_OK);
    /* Without the credentials the proxy answers the request itself: 407. */
    snprintf(url, sizeof url, "http://127.0.0.1:%d", p.port);
    CHECK_STATUS(echo_via(&f, via(url), "x"), MCPC_ERR_PROXY_AUTH);
    snprintf(line, sizeof line, "POST http://127.0.0.1:%d/mcp HTTP/1.1", f.port);
    CHECK(proxy_log_has(&p, line));
    /* The proxy's credentials stop at the proxy. */
    const char *leaked[] = {"proxy-authorization", NULL};
    CHECK(log_count(&f, leaked) == 0);
    fixture_stop(&f);
    proxy_stop(&p);
}

static void test_proxy_authentication(void) {
    struct proxy p;
    struct fixture f;
    if (proxy_start(&p, "mcpc s3cret") != 0 || tls_fixture(&f) != 0) {
        CHECK(0);
        proxy_stop(&p);
        return;
    }
    char bare[64], url[96];
    snprintf(bare, sizeof bare, "http://127.0.0.1:%d", p.port);
    /* No credentials: 407, its own status. */
    CHECK_STATUS(echo_via(&f, via(bare), "x"), MCPC_ERR_PROXY_AUTH);
    CHECK(strstr(mcpc_last_error_message(), "407") != NULL);
    /* Wrong ones: 407 too, and the password never shows. */
    snprintf(url, sizeof url, "http://mcpc:wrong-pw@127.0.0.1:%d", p.port);
    CHECK_STATUS(echo_via(&f, via(url), "x"), MCPC_ERR_PROXY_AUTH);
    CHECK(strstr(mcpc_last_error_message(), "wrong-pw") == NULL);
    /* From the URL, and from the option (which wins over the URL's). */
    snprintf(url, sizeof url, "http://mcpc:s3cret@127.0.0.1:%d", p.port);
    CHECK_STATUS(echo_via(&f, via(url), "from-url"), MCPC_OK);
    mcpc_options_t *o = via(bare);
    CHECK_STATUS(mcpc_options_set_proxy_credentials(o, "mcpc", "s3cret"), MCPC_OK);
    CHECK_STATUS(echo_via(&f, o, "from-option"), MCPC_OK);
    snprintf(url, sizeof url, "http://mcpc:wrong-pw@127.0.0.1:%d", p.port);
    o = via(url);
    CHECK_STATUS(mcpc_options_set_proxy_credentials(o, "mcpc", "s3cret"), MCPC_OK);
    CHECK_STATUS(echo_via(&f, o, "option-wins"), MCPC_OK);
    const char *leaked[] = {"proxy-authorization", NULL};
    CHECK(log_count(&f, leaked) == 0);
    fixture_stop(&f);
    proxy_stop(&p);
}

static void test_no_proxy_and_none(void) {
    struct fixture f;
    if (tls_fixture(&f) != 0) {
        CHECK(0);
        return;
    }
    char url[64];
    dead_proxy(url, sizeof url);
    /* The explicit proxy takes loopback too: unreachable, named in the message. */
    CHECK_STATUS(echo_via(&f, via(url), "x"), MCPC_ERR_TRANSPORT);
    CHECK(strstr(mcpc_last_error_message(), "proxy") != NULL);
    /* Its no-proxy list, in each of its forms, lets the endpoint through directly. */
    const char *lists[] = {"127.0.0.1", "example.com, 127.0.0.0/8", "*"};
    for (size_t i = 0; i < 3; i++) {
        mcpc_options_t *o = via(url);
        CHECK_STATUS(mcpc_options_set_no_proxy(o, lists[i]), MCPC_OK);
        CHECK_STATUS(echo_via(&f, o, "direct"), MCPC_OK);
    }
    /* "none" turns proxies off, also those of the environment. */
    setenv("HTTPS_PROXY", url, 1);
    CHECK_STATUS(echo_via(&f, via("none"), "none"), MCPC_OK);
    unsetenv("HTTPS_PROXY");
    fixture_stop(&f);
}

/* A proxy from the environment never takes a loopback endpoint, whatever the
 * variable; NO_PROXY is not needed for that. */
static void test_environment_spares_loopback(void) {
    struct fixture f;
    if (tls_fixture(&f) != 0) {
        CHECK(0);
        return;
    }
    char url[64];
    dead_proxy(url, sizeof url);
    const char *vars[] = {"HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"};
    for (size_t i = 0; i < 4; i++) {
        setenv(vars[i], url, 1);
        CHECK_STATUS(echo_via(&f, via(NULL), "env"), MCPC_OK);
        snprintf(f.url, sizeof f.url, "https://localhost:%d/mcp", f.port);
        CHECK_STATUS(echo_via(&f, via(NULL), "env-localhost"), MCPC_OK);
        snprintf(f.url, sizeof f.url, "https://127.0.0.1:%d/mcp", f.port);
        unsetenv(vars[i]);
    }
    /* An unusable proxy in the environment is an error when it is used, not before:
     * here it is not used. */
    setenv("HTTPS_PROXY", "socks5://127.0.0.1:1", 1);
    CHECK_STATUS(echo_via(&f, via(NULL), "unused"), MCPC_OK);
    unsetenv("HTTPS_PROXY");
    fixture_stop(&f);
}

/* A hand-made proxy: answers one CONNECT with `answer`, or closes the connection
 * without a word when it is NULL, or keeps it open without a word, until the client
 * closes it, when it is SILENT. */
static const char SILENT[] = "";

struct fake {
    int fd;
    int port;
    const char *answer;
    pthread_t thread;
};

static void *fake_run(void *arg) {
    struct fake *k = arg;
    int c = accept(k->fd, NULL, NULL);
    if (c < 0) return NULL;
    char buf[1024];
    size_t got = 0;
    while (got < sizeof buf - 1) {
        ssize_t n = read(c, buf + got, sizeof buf - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
        buf[got] = 0;
        if (strstr(buf, "\r\n\r\n")) break;
    }
    if (k->answer == SILENT)
        while (read(c, buf, sizeof buf) > 0) {
        }
    else if (k->answer && write(c, k->answer, strlen(k->answer)) < 0)
        perror("fake proxy write");
    close(c);
    return NULL;
}

static int fake_start(struct fake *k, const char *answer) {
    memset(k, 0, sizeof *k);
    k->answer = answer;
    k->fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (bind(k->fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(k->fd, 4) != 0 ||
        getsockname(k->fd, (struct sockaddr *)&a, &len) != 0)
        return -1;
    k->port = ntohs(a.sin_port);
    return pthread_create(&k->thread, NULL, fake_run, k);
}

static void fake_stop(struct fake *k) {
    pthread_join(k->thread, NULL);
    close(k->fd);
}

static void test_proxies_that_refuse(void) {
    struct fixture f;
    if (tls_fixture(&f) != 0) {
        CHECK(0);
        return;
    }
    struct {
        const char *answer;
        mcpc_status_t want;
        const char *msg;
    } cases[] = {
        {"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", MCPC_ERR_TRANSPORT, "refused the tunnel"},
        {"HTTP/1.1 407 Proxy Authentication Required\r\n\r\n", MCPC_ERR_PROXY_AUTH, "wants credentials"},
        {"SSH-2.0-nope\r\n\r\n", MCPC_ERR_TRANSPORT, "not an HTTP response"},
        {"HTTP/1.1 401 Unauthorized\r\n\r\n", MCPC_ERR_PROXY_AUTH, "wants credentials"},
        {NULL, MCPC_ERR_TRANSPORT, "closed the connection before answering"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct fake k;
        if (fake_start(&k, cases[i].answer) != 0) {
            CHECK(0);
            continue;
        }
        char url[64];
        snprintf(url, sizeof url, "127.0.0.1:%d", k.port); /* no scheme: http:// */
        CHECK_STATUS(echo_via(&f, via(url), "x"), cases[i].want);
        if (!strstr(mcpc_last_error_message(), cases[i].msg))
            fprintf(stderr, "  case %zu: %s\n", i, mcpc_last_error_message());
        CHECK(strstr(mcpc_last_error_message(), cases[i].msg) != NULL);
        fake_stop(&k);
    }
    fixture_stop(&f);
}

/* A proxy that takes the connection and never answers the CONNECT is a timeout, as a
 * server that never answers is, not a transport error. */
static void test_a_silent_proxy_times_out(void) {
    struct fixture f;
    if (tls_fixture(&f) != 0) {
        CHECK(0);
        return;
    }
    struct fake k;
    if (fake_start(&k, SILENT) != 0) {
        CHECK(0);
        fixture_stop(&f);
        return;
    }
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", k.port);
    mcpc_options_t *o = via(url);
    mcpc_options_set_timeout_ms(o, 1000);
    /* The connect timeout and the request's own race: either is a timeout. */
    CHECK_STATUS(echo_via(&f, o, "x"), MCPC_ERR_TIMEOUT);
    fake_stop(&k);
    fixture_stop(&f);
}

static void test_bad_settings(void) {
    mcpc_options_t *o = mcpc_options_new();
    CHECK_STATUS(mcpc_options_set_proxy(o, "socks5://127.0.0.1:1080"), MCPC_ERR_NOT_SUPPORTED);
    CHECK_STATUS(mcpc_options_set_proxy(o, "http://"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_proxy(o, "\xff"), MCPC_ERR_INVALID_UTF8);
    CHECK_STATUS(mcpc_options_set_proxy(NULL, "none"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_proxy(o, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_no_proxy(o, NULL), MCPC_OK);
    CHECK_STATUS(mcpc_options_set_proxy_credentials(o, "a:b", "c"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_proxy_credentials(o, "a", "c\n"), MCPC_ERR_INVALID_ARG);
    CHECK_STATUS(mcpc_options_set_proxy_credentials(o, NULL, NULL), MCPC_OK);
    mcpc_options_free(o);
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    /* The tests decide every proxy themselves. */
    const char *vars[] = {"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
                          "ALL_PROXY",   "all_proxy",   "NO_PROXY",   "no_proxy"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) unsetenv(vars[i]);
    snprintf(cert_dir, sizeof cert_dir, "/tmp/mcpc-proxy-certs-%d", (int)getpid());
    snprintf(ca_file, sizeof ca_file, "%s/ca.pem", cert_dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "sh tests/fixtures/make_certs.sh %s >/dev/null 2>&1", cert_dir);
    if (system(cmd) != 0) {
        fprintf(stderr, "cannot make the test certificates\n");
        return 1;
    }
    RUN(test_bad_settings);
    RUN(test_https_through_a_tunnel);
    RUN(test_http_in_absolute_form);
    RUN(test_proxy_authentication);
    RUN(test_no_proxy_and_none);
    RUN(test_environment_spares_loopback);
    RUN(test_proxies_that_refuse);
    RUN(test_a_silent_proxy_times_out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", cert_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", cert_dir);
    return harness_finish();
}
