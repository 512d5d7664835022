/*
 * mcpc: a Model Context Protocol client library.
 * Generated from the Rust sources by cbindgen (build.rs). Do not edit by hand.
 *
 * Rules for every function (details in each comment):
 * - Fallible functions return mcpc_status_t; on failure mcpc_last_error_message()
 *   says what went wrong, on the calling thread.
 * - Out-pointers are set to NULL/0 on entry and written on success.
 * - `char *` results are owned: free them with mcpc_string_free. `const char *` results
 *   are borrowed, valid as each comment says.
 * - Every _free function accepts NULL.
 */

#ifndef MCPC_H
#define MCPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

/* ===== Errors ===== */
/* Status codes, the calling thread's last error, freeing strings, the version. */

/**
 * The version of this header; mcpc_version() gives the library's.
 * MCPC_VERSION_NUM is 0xMMmmpp (major, minor, patch; two hex digits each), for
 * `#if MCPC_VERSION_NUM >= 0x000200` checks.
 */
#define MCPC_VERSION_MAJOR 0
#define MCPC_VERSION_MINOR 1
#define MCPC_VERSION_PATCH 0
#define MCPC_VERSION_NUM 0x000100
#define MCPC_VERSION "0.1.0"

/**
 * Status of an mcpc call. `MCPC_OK` is success; every other value is an error
 * whose message is available from `mcpc_last_error_message()` (blocking calls)
 * or passed to the completion callback (asynchronous calls).
 *
 * The numeric values are stable and are never renumbered; new codes are only added.
 */
typedef enum {
  /**
   * Success.
   */
  MCPC_OK = 0,
  /**
   * A required argument was NULL, out of range or malformed (for example JSON that does not parse).
   */
  MCPC_ERR_INVALID_ARG = 1,
  /**
   * A string argument was not valid UTF-8.
   */
  MCPC_ERR_INVALID_UTF8 = 2,
  /**
   * A Rust panic was caught at the C boundary; the message says where. The handle stays usable.
   */
  MCPC_ERR_PANIC = 3,
  /**
   * The transport failed: the server process exited, a pipe broke, a connection failed.
   */
  MCPC_ERR_TRANSPORT = 4,
  /**
   * The server broke the protocol (malformed message, message over the size limit, bad result shape).
   */
  MCPC_ERR_PROTOCOL = 5,
  /**
   * The initialize handshake failed (error reply, unsupported or empty protocol version).
   */
  MCPC_ERR_HANDSHAKE = 6,
  /**
   * The server answered with a JSON-RPC error; `mcpc_last_error_rpc_code()` gives its code.
   */
  MCPC_ERR_RPC = 7,
  /**
   * The tool ran and reported failure (`isError: true`); the result is still handed out.
   */
  MCPC_ERR_TOOL = 8,
  /**
   * The request did not complete within its timeout; `notifications/cancelled` was sent.
   */
  MCPC_ERR_TIMEOUT = 9,
  /**
   * The request was cancelled by the caller; `notifications/cancelled` was sent.
   */
  MCPC_ERR_CANCELLED = 10,
  /**
   * The client was closed, or its connection had already failed before this call.
   */
  MCPC_ERR_CLOSED = 11,
  /**
   * A listing returned a cursor already seen in it (a loop).
   */
  MCPC_ERR_CURSOR_REPEATED = 12,
  /**
   * `tools/list` returned the same tool name twice (or another listing the same
   * resource URI, template or prompt name).
   */
  MCPC_ERR_DUPLICATE_TOOL = 13,
  /**
   * A listing needed more pages than the configured maximum.
   */
  MCPC_ERR_TOO_MANY_PAGES = 14,
  /**
   * A message from the server exceeded the maximum message size.
   */
  MCPC_ERR_MESSAGE_TOO_LARGE = 15,
  /**
   * The server process could not be started.
   */
  MCPC_ERR_SPAWN = 16,
  /**
   * A blocking mcpc call was made from an mcpc callback or library thread, where it would deadlock.
   */
  MCPC_ERR_WOULD_DEADLOCK = 17,
  /**
   * A URL was refused by policy before any connection was made (for example `http://` to a non-loopback host).
   */
  MCPC_ERR_INSECURE_URL = 18,
  /**
   * TLS failed (certificate not trusted, wrong host, handshake failure).
   */
  MCPC_ERR_TLS = 19,
  /**
   * The HTTP server answered with an unexpected status or content type.
   */
  MCPC_ERR_HTTP = 20,
  /**
   * Authentication failed (401/403 after the token callback had its chance).
   */
  MCPC_ERR_AUTH = 21,
  /**
   * The HTTP session expired (404 on a request that carried a session id).
   */
  MCPC_ERR_SESSION_EXPIRED = 22,
  /**
   * The server does not support any protocol version this client speaks.
   */
  MCPC_ERR_UNSUPPORTED_VERSION = 23,
  /**
   * The operation is not supported by this transport or protocol version.
   */
  MCPC_ERR_NOT_SUPPORTED = 24,
  /**
   * The server found the request's HTTP headers inconsistent with its body (-32020).
   */
  MCPC_ERR_HEADER_MISMATCH = 25,
  /**
   * The server requires client capabilities this client does not have (-32021).
   */
  MCPC_ERR_MISSING_CAPABILITY = 26,
  /**
   * The server asked for input this client cannot give (elicitation, sampling,
   * roots), or kept asking past the round limit.
   */
  MCPC_ERR_INPUT_REQUIRED = 27,
  /**
   * Authorization needs a login that cannot happen now: headless mode with no
   * usable stored credentials, or no way to open the authorization URL.
   */
  MCPC_ERR_LOGIN_REQUIRED = 28,
  /**
   * The host cancelled the login (`mcpc_auth_request_cancel`), or the user
   * denied access at the authorization server.
   */
  MCPC_ERR_LOGIN_CANCELLED = 29,
  /**
   * The authorization server (or the server's authorization metadata) failed
   * or broke the OAuth rules: an error response, a wrong issuer, no PKCE S256,
   * a malformed or oversized answer. The message says which.
   */
  MCPC_ERR_AUTH_SERVER = 30,
  /**
   * The stdio server exited (or its connection failed) while the request was in
   * flight, and mcpc_options_set_restart is on: mcpc starts the server again, and
   * the request may be sent again (it may or may not have run). Also a request made
   * while the server is being started again, from a call that does not wait for it.
   */
  MCPC_ERR_SERVER_EXITED = 31,
  /**
   * An input request handle (`mcpc_input_t`) was completed a second time; the first
   * answer stands.
   */
  MCPC_ERR_ALREADY_COMPLETED = 32,
  /**
   * The host's answer to a server's input request does not fit what was asked (an
   * elicitation's content against its requested schema, a malformed result). Nothing
   * was sent; the request stays open for a corrected answer.
   */
  MCPC_ERR_INPUT_INVALID = 33,
  /**
   * The HTTP proxy wants credentials, or refused those given (407). Other proxy
   * failures (not reached, a tunnel refused) are MCPC_ERR_TRANSPORT naming the proxy.
   */
  MCPC_ERR_PROXY_AUTH = 34,
  /**
   * The tool's result does not fit its `outputSchema` (checked only when
   * mcpc_options_set_validate_output asks for it); the result is still handed out.
   */
  MCPC_ERR_OUTPUT_SCHEMA = 35,
  /**
   * A skill's file failed verification: its size or sha256 digest is not the one
   * the skill's listing gives, its frontmatter differs from the listing's, or no
   * listed skill names it (refused before anything was sent). Its content is not
   * handed out.
   */
  MCPC_ERR_INTEGRITY = 36,
  /**
   * The call stopped following its task because the task callback asked it to
   * (`MCPC_TASK_DETACH`): the task runs on on the server, and the reference the
   * callback was given resumes it (mcpc_client_resume_task).
   */
  MCPC_ERR_TASK_DETACHED = 37,
  /**
   * A configuration file or value is malformed, or names a variable that has no
   * value; the message names the file, the server and the field, never a value.
   */
  MCPC_ERR_CONFIG = 38,
  /**
   * No server, or no tool in the host's catalog, has that name.
   */
  MCPC_ERR_UNKNOWN_NAME = 39,
} mcpc_status_t;

/**
 * The message of the last error on this thread: what failed and why, naming its
 * context (for example `tools/call "slow": timed out after 5000 ms`). "" when the last
 * mcpc call on this thread succeeded. Never NULL.
 * Ownership: borrowed; valid until the next call on this thread of an mcpc function
 * that returns mcpc_status_t (each of those clears it on entry and sets it on
 * failure). Accessors that return no status (mcpc_result_*, mcpc_tool_list_* other
 * than _to_json, mcpc_status_name, mcpc_last_error_*, the _free functions) leave it alone,
 * so after MCPC_ERR_TOOL the message and the result can be read in any order.
 * Threads: per thread; each thread sees its own last error.
 */
const char *mcpc_last_error_message(void);

/**
 * The status of the last error on this thread (MCPC_OK when the last call succeeded).
 */
mcpc_status_t mcpc_last_error_status(void);

/**
 * The JSON-RPC error code of the last error on this thread when it was MCPC_ERR_RPC
 * (or a handshake refused with a JSON-RPC error); 0 otherwise.
 */
int64_t mcpc_last_error_rpc_code(void);

/**
 * The name of a status value, such as "MCPC_ERR_TIMEOUT"; "MCPC_UNKNOWN_STATUS" for a
 * value this library does not define. Never NULL.
 * Ownership: static; never free it.
 * Threads: any thread.
 */
const char *mcpc_status_name(int32_t status);

/**
 * Frees a string that mcpc handed out as owned (`char *`). NULL is a no-op.
 * Never pass it a borrowed (`const char *`) string, and never free mcpc strings with free().
 *
 * # Safety
 * `s` is NULL or an owned string from mcpc, freed only once.
 */
void mcpc_string_free(char *s);

/**
 * This library's version, "MAJOR.MINOR.PATCH"; equals the MCPC_VERSION macros of the
 * header it was built with. Ownership: static; never free it. Threads: any thread.
 */
const char *mcpc_version(void);

/* ===== Options ===== */
/* Client settings: made once, read by each connect function. */

/**
 * stderr of a stdio server is read and discarded (the default).
 */
#define MCPC_STDERR_DISCARD 0

/**
 * stderr of a stdio server goes to this process's stderr.
 */
#define MCPC_STDERR_INHERIT 1

/**
 * Negotiation mode: probe with `server/discover`, use 2026-07-28 when the server
 * speaks it and fall back to `initialize` for older servers (the default).
 */
#define MCPC_NEGOTIATE_AUTO 0

/**
 * Negotiation mode: `initialize` only (2024-11-05 to 2025-11-25), never a probe.
 */
#define MCPC_NEGOTIATE_LEGACY 1

/**
 * HTTP transport mode: Streamable HTTP, and when its POST is answered 400, 404 or 405
 * without a JSON-RPC error body, the HTTP+SSE transport of 2024-11-05 (the default).
 */
#define MCPC_HTTP_AUTO 0

/**
 * HTTP transport mode: Streamable HTTP only.
 */
#define MCPC_HTTP_STREAMABLE 1

/**
 * HTTP transport mode: the HTTP+SSE transport of 2024-11-05 only (the URL is its
 * event stream's, such as `https://host/sse`).
 */
#define MCPC_HTTP_SSE 2

/**
 * HTTP version: HTTP/2 for `https://` endpoints whose server offers it (ALPN),
 * else HTTP/1.1; HTTP/1.1 for `http://` ones (the default).
 */
#define MCPC_HTTP_VERSION_AUTO 0

/**
 * HTTP version: HTTP/1.1 only, as curl's `--http1.1`.
 */
#define MCPC_HTTP_VERSION_1_1 1

/**
 * HTTP version: HTTP/2 only, as curl's `--http2-prior-knowledge`: over plain TCP
 * from the first byte for `http://` (h2c), and for `https://` with `h2` the only
 * protocol offered by ALPN (a server that does not agree is MCPC_ERR_TRANSPORT).
 */
#define MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE 2

/**
 * Client settings: a builder. Make it with mcpc_options_new, set what you need,
 * pass it to a connect function (which copies it; the same options may make many
 * clients), and free it with mcpc_options_free.
 * Threads: not thread-safe; use one options object from one thread at a time.
 */
typedef struct mcpc_options_t mcpc_options_t;

/**
 * Frees callback userdata. Runs exactly once, on whichever thread drops the
 * last reference (a caller thread or an mcpc thread).
 */
typedef void (*mcpc_free_cb)(void *userdata);

/**
 * Receives one log message of the server (`notifications/message`): its level
 * ("debug", "info", "notice", "warning", "error", "critical", "alert" or
 * "emergency", or another string a server sent), its logger (NULL when none) and
 * its data as JSON (any JSON value), all NUL-terminated, borrowed for the call, and
 * untrusted server data. Runs on an mcpc thread; calls for one client never overlap.
 * It must not block for long; blocking mcpc calls from it return
 * MCPC_ERR_WOULD_DEADLOCK.
 */
typedef void (*mcpc_log_cb)(void *userdata,
                            const char *level,
                            const char *logger,
                            const char *data_json);

/**
 * Receives one line the server wrote to stderr: `line` (not NUL-terminated, may
 * hold any bytes) of `len` bytes, borrowed for the duration of the call.
 * Runs on an mcpc thread; calls for one client never overlap. It must not block
 * for long, and blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
 */
typedef void (*mcpc_stderr_cb)(void *userdata,
                               const char *line,
                               size_t len);

/**
 * Receives a server notification the client does not handle itself, such as
 * `notifications/message` or `notifications/tools/list_changed`: its method and its
 * params as JSON (NULL when absent), both NUL-terminated and borrowed for the
 * duration of the call. Runs on an mcpc thread; calls for one client never overlap.
 * It must not block for long; blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
 */
typedef void (*mcpc_notification_cb)(void *userdata,
                                     const char *method,
                                     const char *params_json);

/**
 * Gives mcpc the current bearer token for HTTP: write it NUL-terminated into `buf`
 * (`buf_len` bytes, 8192) and return 0, or return nonzero for "no token".
 * `www_authenticate` is NULL when mcpc asks for the first token, and the server's
 * `WWW-Authenticate` header (or "") after a 401, when the host may refresh it; a
 * second 401 for the same request is MCPC_ERR_AUTH. Runs on an mcpc blocking-pool
 * thread, so it may block (an OAuth refresh); calls never overlap for one client.
 * Blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
 */
typedef int32_t (*mcpc_token_cb)(void *userdata,
                                 const char *www_authenticate,
                                 char *buf,
                                 size_t buf_len);

/**
 * Makes an options object with the defaults: timeout 60000 ms, the newest
 * protocol version, client info "mcpc" and this library's version, at most 1000
 * pages per listing, messages up to 16 MiB, stderr discarded, close grace 2000 ms
 * then 2000 ms after SIGTERM.
 * Ownership: the caller owns it; free with mcpc_options_free.
 * Threads: any thread.
 * Errors: none (NULL only if allocation panicked).
 */
mcpc_options_t *mcpc_options_new(void);

/**
 * Frees an options object. NULL is a no-op. Clients made from it are not affected.
 *
 * # Safety
 * `opts` is NULL or a live options object, freed only once.
 */
void mcpc_options_free(mcpc_options_t *opts);

/**
 * Declares the extension `id` (such as "io.modelcontextprotocol/tasks") with its
 * settings, `settings_json`: a JSON object, or NULL for `{}`. The client sends it in
 * `capabilities.extensions`: in `initialize` before 2026-07-28, and under 2026-07-28
 * in every request's client capabilities. A server offers an extension's tools and
 * methods only to a client that declared it. Declaring an id again replaces its
 * settings. The settings are sent as written.
 * Ownership: the strings are copied. Threads: as any options setter (one thread at a
 * time per options object).
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or id; an id not of the form
 * `prefix/name`, printable and without spaces; settings that are not a JSON object),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_add_extension(mcpc_options_t *opts,
                                         const char *id,
                                         const char *settings_json);

/**
 * The server log level to ask for when connecting: "debug", "info", "notice",
 * "warning", "error", "critical", "alert" or "emergency" (messages at that level and
 * above); NULL (the default) asks for none. Before 2026-07-28 it is sent as
 * `logging/setLevel` right after `initialize`, when the server declares `logging`
 * (a failure there does not fail the connect); under 2026-07-28 it rides in every
 * request's `_meta`, and without it the server sends no log.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, not a level), MCPC_ERR_INVALID_UTF8.
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object; `level` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_log_level(mcpc_options_t *opts,
                                         const char *level);

/**
 * Hands the server's log messages (`notifications/message` with a string `level`
 * and `data`) to `cb` (see mcpc_log_cb) instead of the notification callback.
 * `userdata_free` (may be NULL) runs exactly once, when the options and every client
 * made from them are freed; it also runs if this call fails.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
 * `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_options_set_log_callback(mcpc_options_t *opts,
                                            mcpc_log_cb cb,
                                            void *userdata,
                                            mcpc_free_cb userdata_free);

/**
 * Sets the default timeout, in milliseconds, for connecting (the handshake), for each
 * whole tool listing and for each call. A call may override it.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or `timeout_ms` not positive).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_timeout_ms(mcpc_options_t *opts,
                                          int64_t timeout_ms);

/**
 * Sets how long, in milliseconds, the `server/discover` probe of the default
 * negotiation waits for an answer over stdio or the caller-supplied stream transport
 * before it also sends `initialize` (10000 by default). The connect timeout still
 * bounds the whole handshake. HTTP servers always answer, so HTTP ignores it.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or `window_ms` not positive).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_probe_window_ms(mcpc_options_t *opts,
                                               int64_t window_ms);

/**
 * Sets the `clientInfo` sent in the handshake. Both strings are copied.
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_client_info(mcpc_options_t *opts,
                                           const char *name,
                                           const char *version);

/**
 * Pins the protocol version: "2026-07-28" (the stateless revision: no `initialize`,
 * `server/discover` instead), or one asked for in `initialize`: "2025-11-25",
 * "2025-06-18", "2025-03-26", "2024-11-05". A pinned client never falls back to
 * another version. NULL unpins (back to MCPC_NEGOTIATE_AUTO).
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, or a version this library does not speak),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; `version` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_protocol_version(mcpc_options_t *opts,
                                                const char *version);

/**
 * Chooses how the protocol version is negotiated: MCPC_NEGOTIATE_AUTO (the default)
 * or MCPC_NEGOTIATE_LEGACY. Clears a pinned version. In auto mode the fallback to
 * `initialize` happens only on answers that show an older server (a JSON-RPC error to
 * the probe, HTTP 400/404/405 without a 2026-07-28 error, on stdio silence or a server
 * that exits on the probe, which is restarted once); 401/403, 5xx, TLS errors and HTTP
 * timeouts fail the connect instead. The outcome holds for the client's lifetime.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or an unknown mode).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_negotiation(mcpc_options_t *opts,
                                           int32_t mode);

/**
 * Sets the most pages one tool listing follows before failing with MCPC_ERR_TOO_MANY_PAGES.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or 0).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_max_pages(mcpc_options_t *opts,
                                         size_t max_pages);

/**
 * Sets the largest message accepted from the server, in bytes (default 16 MiB).
 * A longer message fails the connection with MCPC_ERR_MESSAGE_TOO_LARGE.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or below 1024).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_max_message_size(mcpc_options_t *opts,
                                                size_t bytes);

/**
 * Sets (or with `value` NULL, removes) a variable in a stdio server's environment.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or name, empty name or one with '='),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_env(mcpc_options_t *opts,
                                   const char *name,
                                   const char *value);

/**
 * Starts a stdio server from an empty environment instead of this process's;
 * variables set with mcpc_options_set_env still apply.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_clear_env(mcpc_options_t *opts);

/**
 * Sets the working directory of a stdio server (NULL: this process's).
 * Errors: MCPC_ERR_INVALID_ARG (NULL options), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; `dir` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_cwd(mcpc_options_t *opts,
                                   const char *dir);

/**
 * Chooses what happens to a stdio server's stderr: MCPC_STDERR_DISCARD (default)
 * or MCPC_STDERR_INHERIT. Replaces any stderr callback.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or an unknown mode).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_stderr(mcpc_options_t *opts,
                                      int32_t mode);

/**
 * Hands each line a stdio server writes to stderr to `cb`. `userdata_free` (may be
 * NULL) runs exactly once, when the options and every client made from them are freed,
 * on whichever thread frees the last one; it also runs if this call fails.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
 *
 * # Safety
 * `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
 * `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_options_set_stderr_callback(mcpc_options_t *opts,
                                               mcpc_stderr_cb cb,
                                               void *userdata,
                                               mcpc_free_cb userdata_free);

/**
 * Hands server notifications the client does not handle itself to `cb` (see
 * mcpc_notification_cb). `userdata_free` (may be NULL) runs exactly once, when the
 * options and every client made from them are freed; it also runs if this call fails.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
 *
 * # Safety
 * `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
 * `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_options_set_notification_callback(mcpc_options_t *opts,
                                                     mcpc_notification_cb cb,
                                                     void *userdata,
                                                     mcpc_free_cb userdata_free);

/**
 * Adds a header to every HTTP request (for example an API key). Header names the
 * transport sets itself (Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version,
 * Last-Event-ID, Host, Content-Length) are refused. Headers never follow a redirect to
 * another origin (such redirects are refused).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an invalid or reserved name, a value with
 * control characters; the message never repeats the value), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_add_header(mcpc_options_t *opts,
                                      const char *name,
                                      const char *value);

/**
 * Chooses the HTTP transport mcpc_client_connect_http uses: MCPC_HTTP_AUTO (the
 * default), MCPC_HTTP_STREAMABLE or MCPC_HTTP_SSE. Over the HTTP+SSE transport the
 * version is agreed by `initialize` (2024-11-05 to 2025-11-25) unless one is pinned;
 * a GET opens the event stream, whose `endpoint` event names where messages are
 * POSTed (the same origin only, else MCPC_ERR_PROTOCOL); headers, the bearer token
 * (or the token callback's first token), CAs and proxies apply as for Streamable
 * HTTP; OAuth does not (it needs Streamable HTTP).
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, an unknown mode).
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_http_transport(mcpc_options_t *opts,
                                              int32_t mode);

/**
 * Chooses the HTTP versions mcpc_client_connect_http may speak:
 * MCPC_HTTP_VERSION_AUTO (the default), MCPC_HTTP_VERSION_1_1 or
 * MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE. Over HTTP/2 one connection per endpoint
 * carries every request at once, and a cancelled request resets only its own
 * stream. An `http://` endpoint reached through a proxy is asked in HTTP/1.1's
 * absolute form, so prior knowledge there fails to connect with
 * MCPC_ERR_NOT_SUPPORTED. Authorization servers (OAuth) are reached over HTTP/1.1.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, an unknown version).
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_http_version(mcpc_options_t *opts,
                                            int32_t version);

/**
 * Sends `Authorization: Bearer <token>` on every HTTP request (NULL clears it). For
 * tokens that change, use mcpc_options_set_token_callback instead.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, a token with control characters),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; `token` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_bearer_token(mcpc_options_t *opts,
                                            const char *token);

/**
 * Sets the token callback (see mcpc_token_cb); it takes precedence over a fixed
 * bearer token once it has given one. `userdata_free` (may be NULL) runs exactly once,
 * when the options and every client made from them are freed (also if this fails).
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
 *
 * # Safety
 * `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
 * `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_options_set_token_callback(mcpc_options_t *opts,
                                              mcpc_token_cb cb,
                                              void *userdata,
                                              mcpc_free_cb userdata_free);

/**
 * Trusts the CA certificates in `pem` (`len` bytes of PEM) for HTTPS, in addition to
 * the system's roots. Certificates are always verified; this is how a test or private
 * CA is trusted.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, no certificate in the PEM, a malformed one).
 *
 * # Safety
 * `opts` is NULL or a live options object; `pem` is NULL or `len` readable bytes.
 */
mcpc_status_t mcpc_options_add_ca_pem(mcpc_options_t *opts,
                                      const char *pem,
                                      size_t len);

/**
 * As mcpc_options_add_ca_pem, reading the PEM from the file at `path` now.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, unreadable file, no certificate), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `opts` is NULL or a live options object; `path` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_add_ca_file(mcpc_options_t *opts,
                                       const char *path);

/**
 * Opens the optional standalone GET stream after connecting over HTTP, so server
 * notifications sent outside any request reach the notification callback (405 from
 * the server means it offers none: not an error). Off by default. The stream
 * reconnects with backoff, honouring `retry` and sending `Last-Event-ID`.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_standalone_stream(mcpc_options_t *opts,
                                                 bool enabled);

/**
 * Checks each tool result's `structuredContent` against the `outputSchema` its tool
 * had in the client's last mcpc_client_list_tools (JSON Schema draft 2020-12 unless
 * the schema names another; no `$ref` outside the schema is fetched, and a schema
 * that needs one, or does not compile, leaves its tool unchecked). A result that does
 * not fit, or has no `structuredContent` though its tool has a schema, is
 * MCPC_ERR_OUTPUT_SCHEMA with the result still handed out, as for MCPC_ERR_TOOL; an
 * `isError` result is never checked; a tool not listed yet is not checked. Off by
 * default.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_validate_output(mcpc_options_t *opts,
                                               bool enabled);

/**
 * Sets how long a stdio server has to exit after its stdin is closed
 * (`close_grace_ms`) and then after SIGTERM (`term_grace_ms`) before SIGKILL.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or a value not positive).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_close_grace_ms(mcpc_options_t *opts,
                                              int64_t close_grace_ms,
                                              int64_t term_grace_ms);

/**
 * Starts a stdio server again when it exits or its connection fails (off by
 * default; stdio only): at most `max_restarts` times in the client's life, the
 * first after `backoff_ms`, each next one after twice the wait before it (at most
 * 30 s). Requests in flight when the server died fail with MCPC_ERR_SERVER_EXITED
 * (they may be sent again); the new process negotiates the protocol again;
 * blocking calls made meanwhile wait for it within their timeout, and asynchronous
 * ones fail with MCPC_ERR_SERVER_EXITED. The options' log level is asked for again;
 * a level set later (mcpc_client_set_log_level), resource subscriptions, kept lists
 * and the output schemas of the last listing are not carried over. Once the
 * restarts run out a failed connection stays failed (MCPC_ERR_TRANSPORT, with the
 * cause); once the client is closed, calls fail with MCPC_ERR_CLOSED.
 * `max_restarts` 0 turns it off.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or `backoff_ms` not positive).
 *
 * # Safety
 * `opts` is NULL or a live options object.
 */
mcpc_status_t mcpc_options_set_restart(mcpc_options_t *opts,
                                       uint32_t max_restarts,
                                       int64_t backoff_ms);

/**
 * Chooses the HTTP proxy, overriding the environment: a URL (`http://HOST:PORT`,
 * `https://HOST:PORT`, or `HOST:PORT` meaning `http://`; the port defaults to 1080
 * for `http://` and 443 for `https://`; credentials in the URL are sent with Basic
 * authentication) that every HTTP endpoint outside mcpc_options_set_no_proxy's list
 * is reached through, loopback ones too; "none" or "" for no proxy at all; NULL
 * (the default) to follow the environment like curl: `https_proxy` for `https://`
 * endpoints, `http_proxy` for `http://` ones, then `all_proxy`, each also upper
 * case, with `no_proxy`; a loopback endpoint never goes through a proxy from the
 * environment. An `https://` endpoint goes through a `CONNECT` tunnel with TLS end
 * to end to it; an `http://` one is asked in absolute form. The proxy's
 * credentials never go to the endpoint. Authorization servers are reached the same
 * way. The URL is checked here; the environment's when connecting.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, not a proxy URL),
 * MCPC_ERR_NOT_SUPPORTED (a scheme other than http and https, such as socks5),
 * MCPC_ERR_INVALID_UTF8.
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object; `proxy` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_proxy(mcpc_options_t *opts,
                                     const char *proxy);

/**
 * The hosts that are reached directly, not through the proxy: a list in curl's
 * `NO_PROXY` syntax (host names, which match their subdomains too, with or without
 * a leading dot; IP addresses; CIDR ranges such as 10.0.0.0/8; `*` for every host),
 * separated by commas or spaces. It replaces the environment's `no_proxy`. NULL
 * goes back to the environment's.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options), MCPC_ERR_INVALID_UTF8.
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object; `list` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_options_set_no_proxy(mcpc_options_t *opts,
                                        const char *list);

/**
 * The user name and password for the proxy (Basic authentication), overriding
 * any in the proxy's URL, whichever proxy is chosen. NULL `user` clears them.
 * They are sent only to the proxy, never to the endpoint, and never appear in
 * messages.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options, a user name holding ':', control
 * characters), MCPC_ERR_INVALID_UTF8.
 * Threads: the thread that owns `opts`.
 *
 * # Safety
 * `opts` is NULL or a live options object; `user` and `password` are NULL or
 * NUL-terminated.
 */
mcpc_status_t mcpc_options_set_proxy_credentials(mcpc_options_t *opts,
                                                 const char *user,
                                                 const char *password);

/* ===== Connecting ===== */
/* Starting a client over stdio or HTTP, what the server said of itself, closing. */

/**
 * A connected MCP client. Thread-safe: any number of threads may call it at once,
 * and their requests are multiplexed over its one connection.
 */
typedef struct mcpc_client_t mcpc_client_t;

/**
 * Starts a server as a child process and connects to it over stdio: spawns
 * `argv[0]` (looked up in PATH when it has no slash) with `argv[1..argc]`, runs the
 * initialize handshake, and sends notifications/initialized. Blocks until the client is
 * ready or the options' timeout passes. The child runs in its own process group and
 * belongs to the client: mcpc_client_close stops and reaps it and its group.
 * Ownership: `argv` and `opts` are read during the call only (`opts` may be NULL for
 * the defaults). On success `*out_client` is owned by the caller; free it with
 * mcpc_client_free. On failure `*out_client` is NULL and no process is left.
 * Threads: any thread except mcpc's own (from an mcpc callback it returns
 * MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, argc 0), MCPC_ERR_INVALID_UTF8, MCPC_ERR_SPAWN,
 * MCPC_ERR_HANDSHAKE, MCPC_ERR_TIMEOUT, MCPC_ERR_TRANSPORT, MCPC_ERR_MESSAGE_TOO_LARGE,
 * MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `argv` is NULL or holds `argc` NUL-terminated strings; `opts` is NULL or live;
 * `out_client` is NULL or writable.
 */
mcpc_status_t mcpc_client_connect_stdio(const char *const *argv,
                                        size_t argc,
                                        const mcpc_options_t *opts,
                                        mcpc_client_t **out_client);

/**
 * Connects to a Streamable HTTP endpoint and runs the initialize handshake. `url`
 * must be `https://`, or `http://` on a loopback host (127.0.0.0/8, ::1, localhost);
 * anything else is refused with MCPC_ERR_INSECURE_URL before any connection is made,
 * and a URL with credentials in it is refused with MCPC_ERR_INVALID_ARG. TLS is
 * always verified: the system's roots plus any CA given in the options. Headers, the
 * bearer token and the token callback come from the options. Redirects are followed
 * only within the endpoint's origin, never from https to http. A server that refuses
 * Streamable HTTP's POST (400, 404 or 405 without a JSON-RPC error body) is tried as
 * the HTTP+SSE transport of 2024-11-05 (see mcpc_options_set_http_transport). Proxies
 * as mcpc_options_set_proxy says.
 * Ownership and threads: as mcpc_client_connect_stdio.
 * Errors: MCPC_ERR_INVALID_ARG, MCPC_ERR_INVALID_UTF8, MCPC_ERR_INSECURE_URL,
 * MCPC_ERR_TLS, MCPC_ERR_TRANSPORT, MCPC_ERR_HTTP, MCPC_ERR_AUTH, MCPC_ERR_PROXY_AUTH,
 * MCPC_ERR_HANDSHAKE, MCPC_ERR_PROTOCOL (the old transport's endpoint on another
 * origin), MCPC_ERR_TIMEOUT, MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `url` is NULL or NUL-terminated; `opts` is NULL or live; `out_client` is NULL or writable.
 */
mcpc_status_t mcpc_client_connect_http(const char *url,
                                       const mcpc_options_t *opts,
                                       mcpc_client_t **out_client);

/**
 * Checks an endpoint URL as mcpc_client_connect_http would, without connecting:
 * `https://` to any host, `http://` only to loopback, no credentials in the URL.
 * Ownership: `url` is read during the call. Threads: any thread.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, not a URL, credentials in it, no host),
 * MCPC_ERR_INVALID_UTF8, MCPC_ERR_INSECURE_URL (plain http:// to a host that is not
 * loopback, or another scheme).
 *
 * # Safety
 * `url` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_check_url(const char *url);

/**
 * The server's initialize result as JSON (`protocolVersion`, `capabilities`,
 * `serverInfo`, `instructions`), or under 2026-07-28 its `server/discover` result
 * (`supportedVersions`, `capabilities`, `_meta` with the server info, `instructions`),
 * as the server sent it.
 * Ownership: on success `*out_json` is owned by the caller; free with mcpc_string_free.
 * Threads: any thread, concurrently.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `client` is NULL or live; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_server_info(const mcpc_client_t *client,
                                      char **out_json);

/**
 * The extensions the server offers: its `capabilities.extensions` (in its
 * `initialize` result, or under 2026-07-28 its `server/discover` result), exactly as
 * the server sent it, an object of extension ids and their settings. `*out_json` is
 * NULL (with MCPC_OK) when the server declared none. It is server data: check what
 * you read of it.
 * Ownership: on success `*out_json`, when not NULL, is owned by the caller; free with
 * mcpc_string_free.
 * Threads: any thread, concurrently.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `client` is NULL or live; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_server_extensions(const mcpc_client_t *client,
                                            char **out_json);

/**
 * The protocol version in use, such as "2025-11-25". NULL if `client` is NULL.
 * Ownership: borrowed; valid until mcpc_client_free. Threads: any thread.
 *
 * # Safety
 * `client` is NULL or live.
 */
const char *mcpc_client_protocol_version(const mcpc_client_t *client);

/**
 * How the protocol version in use was chosen: "discover" (auto mode: the server's
 * `server/discover` listed 2026-07-28), "fallback" (auto mode: the probe showed an older
 * server, and `initialize` chose the version), "initialize" (legacy mode), or "pinned".
 * NULL if `client` is NULL.
 * Ownership: borrowed; valid until mcpc_client_free. Threads: any thread.
 *
 * # Safety
 * `client` is NULL or live.
 */
const char *mcpc_client_negotiated_by(const mcpc_client_t *client);

/**
 * Closes the client: every call in flight returns MCPC_ERR_CLOSED, and the
 * transport shuts down (for stdio: stdin closed, then after the close grace SIGTERM
 * to the process group, then SIGKILL; the child is always reaped). Bounded by the
 * options' close grace periods. Idempotent; later calls fail with MCPC_ERR_CLOSED.
 * The handle stays valid until mcpc_client_free.
 * Threads: any thread, also while other threads are in calls on this client; not
 * from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK; use mcpc_client_free there).
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `client` is NULL or live.
 */
mcpc_status_t mcpc_client_close(const mcpc_client_t *client);

/**
 * Closes the client (as mcpc_client_close) and frees it. NULL is a no-op. Called from
 * an mcpc callback it does not block: the close finishes on an mcpc thread.
 * Threads: any thread, once no other thread is using the handle.
 *
 * # Safety
 * `client` is NULL or live, freed only once, with no call on it still running.
 */
void mcpc_client_free(mcpc_client_t *client);

/* ===== Calls ===== */
/* Listing and calling tools, resources and prompts, with per-call settings and cancellation handles. */

/**
 * mcpc_client_complete's reference: a prompt, by name (`ref/prompt`).
 */
#define MCPC_COMPLETE_PROMPT 0

/**
 * mcpc_client_complete's reference: a resource template, by its URI template
 * (`ref/resource`).
 */
#define MCPC_COMPLETE_RESOURCE 1

/**
 * `mcpc_call_opts_t.task_mode`: a task only where one is needed (a tool that
 * requires one; under 2026-07-28, as the host declared the tasks extension).
 */
#define MCPC_TASK_ALLOW 0

/**
 * `mcpc_call_opts_t.task_mode`: never a task.
 */
#define MCPC_TASK_FORBID 1

/**
 * `mcpc_call_opts_t.task_mode`: a task wherever the tool or the server allows one.
 */
#define MCPC_TASK_PREFER 2

/**
 * `mcpc_call_opts_t.task_mode`: a task, or MCPC_ERR_NOT_SUPPORTED before anything
 * is sent when the server (or, under 2025-11-25, the tool) cannot run one.
 */
#define MCPC_TASK_REQUIRE 3

/**
 * What an mcpc_task_cb returns: go on following the task.
 */
#define MCPC_TASK_FOLLOW 0

/**
 * What an mcpc_task_cb returns: stop following the task and leave it running on the
 * server; the call ends with MCPC_ERR_TASK_DETACHED, and the reference the callback
 * was given resumes it (mcpc_client_resume_task). Ignored for a terminal status.
 */
#define MCPC_TASK_DETACH 1

/**
 * A bit of mcpc_tool_list_ui_visibility: the model may see and call the tool (a host
 * leaves a tool without it out of the model's tool list).
 */
#define MCPC_UI_MODEL 1

/**
 * A bit of mcpc_tool_list_ui_visibility: the tool's view may call it (through the
 * host, on the same server).
 */
#define MCPC_UI_APP 2

/**
 * A cancellation handle. Pass it in `mcpc_call_opts_t.cancel`; trigger it from
 * any thread to make the calls that carry it return `MCPC_ERR_CANCELLED` at once.
 * Once triggered it stays triggered; make a new one for the next call.
 */
typedef struct mcpc_cancel_t mcpc_cancel_t;

/**
 * The contents of a resource read: one or more entries, each text or a blob.
 * Immutable: any thread may read it, also concurrently. What it hands out is
 * borrowed and lives until mcpc_contents_free.
 */
typedef struct mcpc_contents_t mcpc_contents_t;

/**
 * The result of a tool call. Immutable: any thread may read it, also concurrently.
 * Strings it hands out are borrowed and live until mcpc_result_free.
 */
typedef struct mcpc_result_t mcpc_result_t;

/**
 * A list of tools, in the order the server listed them. Immutable: any thread may
 * read it. Strings it hands out are borrowed and live until mcpc_tool_list_free.
 */
typedef struct mcpc_tool_list_t mcpc_tool_list_t;

/**
 * A view of MCP Apps, fetched and checked, with the policy to render it under.
 * Immutable: any thread may read it. What it hands out is borrowed and lives until
 * mcpc_ui_view_free.
 */
typedef struct mcpc_ui_view_t mcpc_ui_view_t;

/**
 * Receives progress for a call: `progress` (increasing), `total` (negative when the
 * server gave none) and `message` (NUL-terminated, NULL when absent, borrowed for the
 * duration of the call). Runs on an mcpc thread; calls for one request never overlap.
 * It must not block for long; blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
 */
typedef void (*mcpc_progress_cb)(void *userdata,
                                 double progress,
                                 double total,
                                 const char *message);

/**
 * Receives each status change of the task a call became: when the server creates it
 * and whenever its status changes. `reference_json` is the task's reference (a JSON
 * object: `endpointId`, `generation` "v1" or "v2", `taskId`, `originalOperation`),
 * to keep for mcpc_client_resume_task; `status` is one of "working",
 * "input_required", "completed", "failed", "cancelled"; `message` the server's
 * status message or NULL. All three are borrowed for the duration of the callback.
 * Returns MCPC_TASK_FOLLOW or MCPC_TASK_DETACH.
 * Threads: runs on the thread that follows the task (the caller's own during a
 * blocking call, an mcpc thread otherwise); calls for one call never overlap. It
 * must not block for long; blocking mcpc calls from it return
 * MCPC_ERR_WOULD_DEADLOCK.
 */
typedef int32_t (*mcpc_task_cb)(void *userdata,
                                const char *reference_json,
                                const char *status,
                                const char *message);

/**
 * Per-call settings. Initialise with `mcpc_call_opts_init_sized(&opts, sizeof opts)`,
 * then set what you need; NULL in place of the struct means all defaults. The struct
 * is read during the call only; the caller keeps ownership.
 *
 * The struct grows at its end, never in between: a later version of mcpc may add
 * fields after the last one. `struct_size` says how much of it the caller knows.
 * Fields past it read as their defaults, so a program built against an older header
 * keeps working with a newer library; a program built against a newer header works
 * with an older library as long as it leaves the fields that library does not know
 * at their defaults (zero), else the call fails with MCPC_ERR_INVALID_ARG.
 */
typedef struct {
  /**
   * The size of the struct as the caller's header defines it: set by
   * mcpc_call_opts_init_sized. The smallest accepted is the first version's (56
   * bytes on 64-bit platforms), which mcpc_call_opts_init writes.
   */
  uint32_t struct_size;
  /**
   * Timeout in milliseconds; 0 means the client's default. Negative is invalid.
   */
  int64_t timeout_ms;
  /**
   * Cancellation handle (may be NULL); triggering it from any thread cancels the call.
   */
  const mcpc_cancel_t *cancel;
  /**
   * Progress callback (may be NULL). Asking for progress adds a progress token to the request.
   */
  mcpc_progress_cb on_progress;
  /**
   * Passed to `on_progress`; must stay valid until the call returns.
   */
  void *progress_userdata;
  /**
   * When true, each progress notification restarts the timeout...
   */
  bool reset_timeout_on_progress;
  /**
   * ...but never past this many milliseconds in total (0: no total limit).
   */
  int64_t max_total_ms;
  /**
   * Whether the call may run as a task: MCPC_TASK_ALLOW (0, the default),
   * MCPC_TASK_FORBID, MCPC_TASK_PREFER or MCPC_TASK_REQUIRE (see docs/client.md, Tasks).
   */
  int32_t task_mode;
  /**
   * How long following a task may take in all, in milliseconds from the start of
   * the call; 0: the call's timeout covers the task too. Each request to the
   * server keeps the call's timeout. Negative is invalid.
   */
  int64_t task_timeout_ms;
  /**
   * Task callback (may be NULL): each status change of the call's task, with the
   * task's reference.
   */
  mcpc_task_cb on_task;
  /**
   * Passed to `on_task`; must stay valid until the call completes.
   */
  void *task_userdata;
} mcpc_call_opts_t;

/**
 * Lists all the server's tools, following `nextCursor` page by page. Fails with
 * MCPC_ERR_CURSOR_REPEATED when a cursor repeats one already seen in this listing,
 * MCPC_ERR_DUPLICATE_TOOL when a tool name appears twice, MCPC_ERR_TOO_MANY_PAGES past
 * the configured page limit; each message names the cursor or tool. The timeout
 * covers the whole listing. A list the client keeps (its `ttlMs` under 2026-07-28;
 * before it, until `list_changed`, where the server declared `listChanged` and such
 * notifications reach the client) is handed out again without asking the server;
 * mcpc_client_forget_lists drops it.
 * Ownership: `opts` is read during the call (NULL: defaults). On success `*out_list`
 * is owned by the caller; free with mcpc_tool_list_free.
 * Threads: any thread, concurrently with other calls on the same client; not from
 * mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG, MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_RPC,
 * MCPC_ERR_PROTOCOL, MCPC_ERR_TRANSPORT, MCPC_ERR_CLOSED, the three listing errors above.
 *
 * # Safety
 * `client` is NULL or live; `opts` is NULL or initialised; `out_list` is NULL or writable.
 */
mcpc_status_t mcpc_client_list_tools(const mcpc_client_t *client,
                                     const mcpc_call_opts_t *opts,
                                     mcpc_tool_list_t **out_list);

/**
 * Calls tool `name` with `arguments_json` (a JSON object, or NULL for none) and
 * waits for its result. On MCPC_OK and on MCPC_ERR_TOOL (the tool ran and reported
 * failure with `isError: true`) `*out_result` holds the result, whose text says what
 * went wrong; so it does on MCPC_ERR_OUTPUT_SCHEMA (see
 * mcpc_options_set_validate_output). A JSON-RPC error (for example an unknown tool) is MCPC_ERR_RPC with its
 * code in mcpc_last_error_rpc_code(). On timeout or cancel the server is sent
 * `notifications/cancelled` and a late response is dropped; a local cancel does not
 * prove that the server stopped the work.
 * Ownership: the strings and `opts` are read during the call. `*out_result` is owned
 * by the caller (free with mcpc_result_free); it is NULL on any other status.
 * Threads: any thread, concurrently with other calls on the same client; not from
 * mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, arguments not a JSON object), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_TOOL, MCPC_ERR_OUTPUT_SCHEMA, MCPC_ERR_RPC, MCPC_ERR_TIMEOUT,
 * MCPC_ERR_CANCELLED, MCPC_ERR_PROTOCOL, MCPC_ERR_TRANSPORT, MCPC_ERR_MESSAGE_TOO_LARGE,
 * MCPC_ERR_CLOSED.
 *
 * # Safety
 * `client` is NULL or live; strings are NULL or NUL-terminated; `opts` is NULL or
 * initialised; `out_result` is NULL or writable.
 */
mcpc_status_t mcpc_client_call_tool(const mcpc_client_t *client,
                                    const char *name,
                                    const char *arguments_json,
                                    const mcpc_call_opts_t *opts,
                                    mcpc_result_t **out_result);

/**
 * Checks a tool call's arguments as mcpc_client_call_tool would, without a client:
 * a JSON object, or NULL (or JSON `null`) for none.
 * Ownership: `arguments_json` is read during the call. Threads: any thread.
 * Errors: MCPC_ERR_INVALID_ARG (not JSON, or JSON that is not an object),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `arguments_json` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_check_arguments(const char *arguments_json);

/**
 * Lists every resource (`resources/list`, following `nextCursor`) as one JSON array
 * of the resources as the server sent them (`uri`, `name`, `mimeType`, `_meta`...).
 * The call options' timeout covers the whole listing. A kept list is handed out
 * again as for mcpc_client_list_tools.
 * Ownership: on success `*out_json` is the caller's; free it with mcpc_string_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_CURSOR_REPEATED, MCPC_ERR_DUPLICATE_TOOL
 * (a URI twice), MCPC_ERR_TOO_MANY_PAGES, MCPC_ERR_RPC (-32601: the server has no
 * resources), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED, MCPC_ERR_PROTOCOL.
 *
 * # Safety
 * `client` is NULL or live; `opts` is NULL or an initialised mcpc_call_opts_t;
 * `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_list_resources(const mcpc_client_t *client,
                                         const mcpc_call_opts_t *opts,
                                         char **out_json);

/**
 * Lists every resource template (`resources/templates/list`) as one JSON array; a
 * `uriTemplate` twice is MCPC_ERR_DUPLICATE_TOOL. Otherwise as
 * mcpc_client_list_resources.
 *
 * # Safety
 * As for mcpc_client_list_resources.
 */
mcpc_status_t mcpc_client_list_resource_templates(const mcpc_client_t *client,
                                                  const mcpc_call_opts_t *opts,
                                                  char **out_json);

/**
 * Lists every prompt (`prompts/list`) as one JSON array (`name`, `description`,
 * `arguments`...); a name twice is MCPC_ERR_DUPLICATE_TOOL. Otherwise as
 * mcpc_client_list_resources.
 *
 * # Safety
 * As for mcpc_client_list_resources.
 */
mcpc_status_t mcpc_client_list_prompts(const mcpc_client_t *client,
                                       const mcpc_call_opts_t *opts,
                                       char **out_json);

/**
 * Drops the lists the client keeps between listings (tools, resources, resource
 * templates, prompts), so that the next listing of each asks the server. A list is
 * kept under 2026-07-28 for the `ttlMs` the server gave, and before it while the
 * server declared `listChanged` for it and sent no `list_changed` notification since.
 * Threads: any thread, also from mcpc callbacks.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `client` is NULL or live.
 */
mcpc_status_t mcpc_client_forget_lists(const mcpc_client_t *client);

/**
 * Lists the server's skills (`skills/list`, every page): a JSON array of the entries
 * as the server sent them (`uri`, `frontmatter`, `resources`), each checked first
 * (its name, description, files within the skill with a sha256 digest and a size,
 * the extension's limits); an entry that fails is left out (and logged), as it must
 * not be loaded. The listing is kept for its `ttlMs` (mcpc_client_forget_lists drops
 * it). Nothing is fetched but the listing. The entries listed are held, so that
 * their files can be read (mcpc_client_read_skill_file).
 * Ownership: `opts` is read during the call; on success `*out_json` is the caller's:
 * free it with mcpc_string_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_NOT_SUPPORTED (the server offers no
 * skills extension), MCPC_ERR_PROTOCOL, MCPC_ERR_RPC, MCPC_ERR_CURSOR_REPEATED,
 * MCPC_ERR_TOO_MANY_PAGES, MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED.
 *
 * # Safety
 * `client` is NULL or live; `opts` is NULL or initialised; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_list_skills(const mcpc_client_t *client,
                                      const mcpc_call_opts_t *opts,
                                      char **out_json);

/**
 * Gets the entry of the skill whose `SKILL.md` is `uri` (`skills/get`), listed or
 * not: the entry as the server sent it, checked as a listing's are, and held in place
 * of what was held for it (the way to refresh a skill after a verification failure).
 * Ownership: as mcpc_client_list_skills.
 * Threads: as mcpc_client_list_skills.
 * Errors: as mcpc_client_list_skills, and MCPC_ERR_INVALID_UTF8; MCPC_ERR_RPC
 * (-32602) for a skill the server does not have; MCPC_ERR_PROTOCOL for an entry that
 * fails its checks or names another skill.
 *
 * # Safety
 * As mcpc_client_list_skills; `uri` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_client_get_skill(const mcpc_client_t *client,
                                    const char *uri,
                                    const mcpc_call_opts_t *opts,
                                    char **out_json);

/**
 * Reads the file `uri` of a skill listed (or got) before, and hands it out only once
 * it is verified: its size and its sha256 digest are those of the skill's entry, and
 * for the skill's `SKILL.md` its YAML frontmatter equals the entry's, field by field.
 * A file no held entry lists is refused before anything is sent, as is any file of a
 * skill whose files are `"dynamic"` (they cannot be verified).
 * Ownership: `uri` and `opts` are read during the call; on success `*out_contents` is
 * the caller's: free it with mcpc_contents_free.
 * Threads: as mcpc_client_list_skills.
 * Errors: MCPC_ERR_INTEGRITY (any verification failure; nothing is handed out),
 * MCPC_ERR_NOT_SUPPORTED (no skills extension), and those of mcpc_client_read_resource.
 *
 * # Safety
 * As mcpc_client_get_skill; `out_contents` is NULL or writable.
 */
mcpc_status_t mcpc_client_read_skill_file(const mcpc_client_t *client,
                                          const char *uri,
                                          const mcpc_call_opts_t *opts,
                                          mcpc_contents_t **out_contents);

/**
 * Lists the directory `uri` of a held skill (`resources/directory/read`, every page):
 * a JSON array of its direct children as the server sent them (subdirectories have
 * `mimeType` "inode/directory"). Only when the server declared `directoryRead`; what
 * it lists is not added to the skill's files (get the skill again for that).
 * Ownership: as mcpc_client_list_skills.
 * Threads: as mcpc_client_list_skills.
 * Errors: MCPC_ERR_NOT_SUPPORTED (no skills extension, or no `directoryRead`),
 * MCPC_ERR_INTEGRITY (`uri` is in no held skill), and those of mcpc_client_list_skills.
 *
 * # Safety
 * As mcpc_client_get_skill.
 */
mcpc_status_t mcpc_client_read_skill_directory(const mcpc_client_t *client,
                                               const char *uri,
                                               const mcpc_call_opts_t *opts,
                                               char **out_json);

/**
 * Reads the resource `uri` (`resources/read`). Each entry of the result is text or a
 * blob; a blob is decoded from base64 and handed out with its length. The call
 * options apply as for mcpc_client_call_tool (timeout, cancel handle, progress).
 * Ownership: `uri` and `opts` are read during the call; on success `*out_contents`
 * is the caller's: free it with mcpc_contents_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an empty URI), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_RPC (a JSON-RPC error, such as -32002 for an unknown resource; its code
 * from mcpc_last_error_rpc_code), MCPC_ERR_PROTOCOL (no `contents`, an entry with
 * neither or both of text and blob, a blob that is not base64), MCPC_ERR_TIMEOUT,
 * MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED, MCPC_ERR_INPUT_REQUIRED.
 *
 * # Safety
 * `client` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or an
 * initialised mcpc_call_opts_t; `out_contents` is NULL or writable.
 */
mcpc_status_t mcpc_client_read_resource(const mcpc_client_t *client,
                                        const char *uri,
                                        const mcpc_call_opts_t *opts,
                                        mcpc_contents_t **out_contents);

/**
 * Subscribes to changes of the resource `uri`: the server then sends
 * `notifications/resources/updated` with its `uri`, which reach the notification
 * callback (mcpc_options_set_notification_callback); read the resource again to see
 * what changed. Before 2026-07-28 this is `resources/subscribe`. Under it the client
 * keeps one `subscriptions/listen` open carrying every subscribed URI (and, with a
 * notification callback, the `list_changed` kinds): a change sends it anew and waits
 * for the server's acknowledgement; a listen the server ends or drops is sent again
 * with a backoff (100 ms doubling to 30 s) until mcpc_client_close. Subscribing to a
 * URI already subscribed sends nothing. The call options apply as for
 * mcpc_client_call_tool (the timeout bounds the wait for the acknowledgement).
 * Threads: any thread, concurrently (changes go one at a time); not from mcpc
 * callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an empty URI), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_NOT_SUPPORTED (under 2026-07-28: the acknowledgement left `uri` out, so it
 * is not subscribed), MCPC_ERR_RPC (the server refused; -32601 when it offers no
 * subscriptions), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED.
 *
 * # Safety
 * `client` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or an
 * initialised mcpc_call_opts_t.
 */
mcpc_status_t mcpc_client_subscribe_resource(const mcpc_client_t *client,
                                             const char *uri,
                                             const mcpc_call_opts_t *opts);

/**
 * Ends a subscription of mcpc_client_subscribe_resource: `resources/unsubscribe`
 * before 2026-07-28; under it the listen is sent anew without `uri` (the last URI out
 * ends it, and a URI not subscribed sends nothing). Otherwise as
 * mcpc_client_subscribe_resource.
 *
 * # Safety
 * As for mcpc_client_subscribe_resource.
 */
mcpc_status_t mcpc_client_unsubscribe_resource(const mcpc_client_t *client,
                                               const char *uri,
                                               const mcpc_call_opts_t *opts);

/**
 * Gets the prompt `name` (`prompts/get`) with `arguments_json` (a JSON object whose
 * values are strings; NULL for none). `*out_json` is the `GetPromptResult` as the
 * server sent it: `description` and every message with its content of any type
 * (text, image, audio, resource links, embedded resources) verbatim; mcpc checks
 * that each message has a `role` and a typed `content`. The call options apply as
 * for mcpc_client_call_tool.
 * Ownership: the strings and `opts` are read during the call; on success
 * `*out_json` is the caller's: free it with mcpc_string_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an empty name, arguments that are not an object
 * of strings), MCPC_ERR_INVALID_UTF8, MCPC_ERR_RPC (a JSON-RPC error, such as -32602
 * for an unknown prompt), MCPC_ERR_PROTOCOL (no `messages`, a malformed message),
 * MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED, MCPC_ERR_INPUT_REQUIRED.
 *
 * # Safety
 * `client` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or
 * an initialised mcpc_call_opts_t; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_get_prompt(const mcpc_client_t *client,
                                     const char *name,
                                     const char *arguments_json,
                                     const mcpc_call_opts_t *opts,
                                     char **out_json);

/**
 * Asks for completions of the argument `argument` whose value so far is `value`
 * (`completion/complete`), for the prompt named `reference` (`kind`
 * MCPC_COMPLETE_PROMPT) or the resource template `reference` (MCPC_COMPLETE_RESOURCE).
 * `context_json` holds the arguments already chosen (a JSON object of strings; NULL
 * for none). `*out_json` is the `CompleteResult` as the server sent it; mcpc checks
 * that `completion.values` holds at most 100 strings and that `total` and `hasMore`
 * have their types. The call options apply as for mcpc_client_call_tool.
 * Ownership: the strings and `opts` are read during the call; on success
 * `*out_json` is the caller's: free it with mcpc_string_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an unknown `kind`, an empty reference or
 * argument name, a context that is not an object of strings), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_RPC (a JSON-RPC error; -32601 when the server has no completions),
 * MCPC_ERR_PROTOCOL (a malformed completion), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED,
 * MCPC_ERR_CLOSED, MCPC_ERR_INPUT_REQUIRED.
 *
 * # Safety
 * `client` is NULL or live; the strings are NULL or NUL-terminated (`value` may be
 * empty); `opts` is NULL or an initialised mcpc_call_opts_t; `out_json` is NULL or
 * writable.
 */
mcpc_status_t mcpc_client_complete(const mcpc_client_t *client,
                                   int32_t kind,
                                   const char *reference,
                                   const char *argument,
                                   const char *value,
                                   const char *context_json,
                                   const mcpc_call_opts_t *opts,
                                   char **out_json);

/**
 * Changes the server log level of a connected client (see
 * mcpc_options_set_log_level for the levels). Before 2026-07-28 this sends
 * `logging/setLevel` and waits for its answer (NULL sends nothing: that revision
 * cannot turn the log off); under 2026-07-28 the level (or, for NULL, none) rides on
 * every later request, and nothing is sent now. The call options apply as for
 * mcpc_client_call_tool.
 * Threads: any thread; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL client, not a level), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_RPC (the server refused it, -32601 when it has no log), MCPC_ERR_TIMEOUT,
 * MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED.
 *
 * # Safety
 * `client` is NULL or live; `level` is NULL or NUL-terminated; `opts` is NULL or an
 * initialised mcpc_call_opts_t.
 */
mcpc_status_t mcpc_client_set_log_level(const mcpc_client_t *client,
                                        const char *level,
                                        const mcpc_call_opts_t *opts);

/**
 * Sends the request `method` with `params_json` (a JSON object; NULL for none) and
 * waits for its result, as mcpc_client_call_tool does: the call options' timeout,
 * cancel handle and progress callback apply; under 2026-07-28 the client's `_meta`
 * envelope is added to the params (members the caller set in `_meta` are kept) and
 * `input_required` rounds are answered (by the input handlers, see
 * mcpc_options_set_elicitation_handler); over HTTP the `Mcp-Name` header mirrors the
 * `name` of `tools/call` and `prompts/get` and the `uri` of `resources/read`, and a
 * tool call's annotated arguments go into `Mcp-Param-*` as for mcpc_client_call_tool.
 * `initialize`, `server/discover` and
 * `notifications/initialized` belong to the session and are refused.
 * Ownership: the strings and `opts` are read during the call. On success
 * `*out_result_json` is the result as the server sent it, owned by the caller: free
 * it with mcpc_string_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an empty or session method, params not a JSON
 * object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_RPC (a JSON-RPC error; its code from
 * mcpc_last_error_rpc_code), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED,
 * MCPC_ERR_PROTOCOL, MCPC_ERR_INPUT_REQUIRED, MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `client` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or
 * an initialised mcpc_call_opts_t; `out_result_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_request(const mcpc_client_t *client,
                                  const char *method,
                                  const char *params_json,
                                  const mcpc_call_opts_t *opts,
                                  char **out_result_json);

/**
 * Sends the notification `method` with `params_json` (a JSON object; NULL for none).
 * Returns once it is queued; under 2026-07-28 the client's `_meta` envelope is added.
 * Threads: any thread, also from mcpc callbacks.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, an empty or session method, params not a JSON
 * object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_CLOSED.
 *
 * # Safety
 * `client` is NULL or live; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_client_notify(const mcpc_client_t *client,
                                 const char *method,
                                 const char *params_json);

/**
 * Follows a task to its end from its reference (the JSON an mcpc_task_cb was
 * given, kept by the host), from this client: a task another call detached from,
 * or one started by an earlier process. The outcome is the original request's: on
 * success `*out_result_json` is its result as the server sent it (for a tool call,
 * a CallToolResult). The call options apply as to any call: the timeout, the
 * cancel handle (which also cancels the task on the server), `task_timeout_ms` and
 * the task callback.
 * Ownership: the strings and `opts` are read during the call; `*out_result_json` is
 * owned by the caller: free it with mcpc_string_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, a malformed reference, one naming another
 * endpoint, or a generation other than the session's: "v1" needs a session before
 * 2026-07-28, "v2" one of 2026-07-28), MCPC_ERR_INVALID_UTF8, MCPC_ERR_RPC (the
 * server does not know the task, or the task failed with an error), MCPC_ERR_TIMEOUT,
 * MCPC_ERR_CANCELLED (also: the task was cancelled on the server), MCPC_ERR_CLOSED,
 * MCPC_ERR_PROTOCOL, MCPC_ERR_TASK_DETACHED, MCPC_ERR_MISSING_CAPABILITY,
 * MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `client` is NULL or live; `reference_json` is NULL or NUL-terminated; `opts` is
 * NULL or an initialised mcpc_call_opts_t; `out_result_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_resume_task(const mcpc_client_t *client,
                                      const char *reference_json,
                                      const mcpc_call_opts_t *opts,
                                      char **out_result_json);

/**
 * Fetches the view `uri` (`resources/read` of a `ui://` URI) and builds its policy:
 * the read must hold one content of MIME type `text/html;profile=mcp-app`, its text
 * or decoded blob UTF-8 HTML of at most 8 MiB. The view's `_meta.ui` is the read
 * content's, else the `resources/list` entry's for `uri` (listed only then, and only
 * if the server lists it). From it, the Content-Security-Policy (the specification's
 * restrictive default when it declares no `csp`) and the frame's `allow` attribute;
 * each declared CSP source must be an origin (`http`, `https`, `ws`, `wss`; a host
 * whose first label may be `*`; a port): anything else, which could widen or break
 * out of the policy, refuses the view. The call options apply as for any call.
 * Ownership: `uri` and `opts` are read during the call; on success `*out_view` is the
 * caller's: free it with mcpc_ui_view_free.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, a URI not `ui://`), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_PROTOCOL (not one content, another MIME type, not UTF-8, a refused CSP
 * source or domain), MCPC_ERR_MESSAGE_TOO_LARGE (over 8 MiB), MCPC_ERR_RPC, and those
 * of mcpc_client_read_resource.
 *
 * # Safety
 * `client` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or an
 * initialised mcpc_call_opts_t; `out_view` is NULL or writable.
 */
mcpc_status_t mcpc_client_read_ui_view(const mcpc_client_t *client,
                                       const char *uri,
                                       const mcpc_call_opts_t *opts,
                                       mcpc_ui_view_t **out_view);

/**
 * Relays one JSON-RPC message of a view (`message_json`, as the view sent it) to the
 * client's server, and gives the reply to hand back to the view. Only what a view
 * may ask goes to the server: `tools/call` of a tool this server lists with an `app`
 * visibility (mcpc_tool_list_ui_visibility; the tools are listed first when no list
 * is kept), `resources/read`, `ping`, and the notification `notifications/message`.
 * Any other request is answered with a JSON-RPC error (-32601; -32602 for a tool the
 * view may not call) that never reaches the server. A request the server fails, or
 * that times out or is cancelled, is answered with a JSON-RPC error too (the
 * server's code, else -32603). The call options apply to the relayed request as to
 * any call: timeout, cancel handle, task preference.
 * On MCPC_OK `*out_reply_json` is the reply (a JSON-RPC response with the view's
 * id), owned by the caller (free with mcpc_string_free), or NULL for a notification
 * passed on.
 * Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL; a message that is not one JSON-RPC request or
 * notification: not JSON, a batch, a response, a bad id, over 1 MiB),
 * MCPC_ERR_INVALID_UTF8, MCPC_ERR_NOT_SUPPORTED (a message whose method starts with `ui/`, which is the
 * host's own to answer, or a notification that is not relayed), MCPC_ERR_CLOSED.
 *
 * # Safety
 * `client` is NULL or live; `message_json` is NULL or NUL-terminated; `opts` is NULL
 * or an initialised mcpc_call_opts_t; `out_reply_json` is NULL or writable.
 */
mcpc_status_t mcpc_client_relay_ui(const mcpc_client_t *client,
                                   const char *message_json,
                                   const mcpc_call_opts_t *opts,
                                   char **out_reply_json);

/**
 * Fills `opts` with the defaults as the struct's first version has them (client
 * timeout, no cancel, no progress) and sets `struct_size` to that version's size.
 * Fields added to the struct later are left as they are, and read as their defaults:
 * a program that sets one must initialise with mcpc_call_opts_init_sized instead.
 * Does nothing for NULL.
 * Threads: any thread.
 *
 * # Safety
 * `opts` is NULL or points to writable memory for the struct's first version.
 */
void mcpc_call_opts_init(mcpc_call_opts_t *opts);

/**
 * Fills the caller's `size` bytes at `opts` with the defaults (client timeout, no
 * cancel, no progress; every field this library does not know zeroed) and sets
 * `struct_size` to `size`. Pass `sizeof` of the struct as your header defines it:
 * `mcpc_call_opts_init_sized(&opts, sizeof opts)`.
 * Ownership: `opts` stays the caller's.
 * Threads: any thread.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or `size` smaller than the struct's first
 * version or larger than any version could be).
 *
 * # Safety
 * `opts` is NULL or points to `size` writable bytes.
 */
mcpc_status_t mcpc_call_opts_init_sized(mcpc_call_opts_t *opts,
                                        size_t size);

/**
 * Makes a cancellation handle.
 * Ownership: the caller owns it; free with mcpc_cancel_free once no call uses it.
 * Threads: any thread.
 * Errors: none (returns NULL only if allocation panicked).
 */
mcpc_cancel_t *mcpc_cancel_new(void);

/**
 * Triggers the handle: every call using it sends `notifications/cancelled` for its
 * request and returns MCPC_ERR_CANCELLED. A local cancel does not prove that the
 * server stopped the work. Idempotent; NULL is ignored.
 * Threads: any thread, concurrently with the call it cancels; also from mcpc callbacks.
 *
 * # Safety
 * `cancel` is NULL or a live handle from mcpc_cancel_new.
 */
void mcpc_cancel_trigger(const mcpc_cancel_t *cancel);

/**
 * True once the handle was triggered. NULL gives false.
 * Threads: any thread.
 *
 * # Safety
 * `cancel` is NULL or a live handle from mcpc_cancel_new.
 */
bool mcpc_cancel_is_triggered(const mcpc_cancel_t *cancel);

/**
 * Frees the handle. NULL is a no-op. Calls still using it keep their own reference,
 * so freeing does not cancel them.
 * Threads: any thread.
 *
 * # Safety
 * `cancel` is NULL or a live handle from mcpc_cancel_new, freed only once.
 */
void mcpc_cancel_free(mcpc_cancel_t *cancel);

/* ===== Results ===== */
/* Reading a tool list, a tool result and a resource's contents. */

/**
 * The `ui://` URI of the view of tool `index` (its `_meta.ui.resourceUri`, else the
 * older `_meta["ui/resourceUri"]`), or NULL when it has none, `list` is NULL or
 * `index` is out of range. A URI of another scheme counts as none.
 * Ownership: borrowed; valid until mcpc_tool_list_free.
 * Threads: any thread; the list is read-only.
 *
 * # Safety
 * `list` is NULL or a live tool list.
 */
const char *mcpc_tool_list_ui_uri(const mcpc_tool_list_t *list,
                                  size_t index);

/**
 * Who may see and call tool `index`: MCPC_UI_MODEL and MCPC_UI_APP bits, from its
 * `_meta.ui.visibility` (both when it gives none). 0 when `list` is NULL or `index`
 * is out of range, and for a tool whose visibility names neither.
 * Threads: any thread; the list is read-only.
 *
 * # Safety
 * `list` is NULL or a live tool list.
 */
uint32_t mcpc_tool_list_ui_visibility(const mcpc_tool_list_t *list,
                                      size_t index);

/**
 * The number of tools (0 for NULL).
 * Threads: any thread; the list is read-only.
 *
 * # Safety
 * `list` is NULL or a live tool list.
 */
size_t mcpc_tool_list_count(const mcpc_tool_list_t *list);

/**
 * The number of tools: an alias of mcpc_tool_list_count (every count is `_count`),
 * kept until 1.0.
 *
 * # Safety
 * `list` is NULL or a live tool list.
 */
size_t mcpc_tool_list_len(const mcpc_tool_list_t *list);

/**
 * The name of tool `index`, or NULL if `list` is NULL or `index` is out of range.
 * Ownership: borrowed; valid until mcpc_tool_list_free.
 *
 * # Safety
 * `list` is NULL or a live tool list.
 */
const char *mcpc_tool_list_name(const mcpc_tool_list_t *list,
                                size_t index);

/**
 * Tool `index` as JSON, exactly as the server sent it (its `inputSchema` is the
 * model-facing parameter schema, unchanged), or NULL if `list` is NULL or `index` is
 * out of range. Ownership: borrowed; valid until mcpc_tool_list_free.
 *
 * # Safety
 * `list` is NULL or a live tool list.
 */
const char *mcpc_tool_list_json(const mcpc_tool_list_t *list,
                                size_t index);

/**
 * All tools as one JSON array, each as the server sent it.
 * Ownership: on success `*out_json` is owned by the caller; free with mcpc_string_free.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `list` is NULL or a live tool list; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_tool_list_to_json(const mcpc_tool_list_t *list,
                                     char **out_json);

/**
 * Frees a tool list. NULL is a no-op.
 *
 * # Safety
 * `list` is NULL or a live tool list, freed only once.
 */
void mcpc_tool_list_free(mcpc_tool_list_t *list);

/**
 * The view's HTML document (NUL-terminated; its length in bytes in `*out_len` if
 * `out_len` is not NULL), or NULL for NULL. It is the server's: render it only under
 * mcpc_ui_view_csp, in a sandboxed frame. Ownership: borrowed; valid until
 * mcpc_ui_view_free.
 *
 * # Safety
 * `view` is NULL or live; `out_len` is NULL or writable.
 */
const char *mcpc_ui_view_html(const mcpc_ui_view_t *view,
                              size_t *out_len);

/**
 * The Content-Security-Policy to render the view under (for a
 * `Content-Security-Policy` header or `<meta http-equiv>`), or NULL for NULL.
 * Ownership: borrowed; valid until mcpc_ui_view_free.
 *
 * # Safety
 * `view` is NULL or live.
 */
const char *mcpc_ui_view_csp(const mcpc_ui_view_t *view);

/**
 * The frame's `allow` attribute for the permissions the view asks for (such as
 * "microphone; clipboard-write"); "" when it asks for none (leave the attribute out);
 * NULL for NULL. A host may grant less. Ownership: borrowed; valid until
 * mcpc_ui_view_free.
 *
 * # Safety
 * `view` is NULL or live.
 */
const char *mcpc_ui_view_allow(const mcpc_ui_view_t *view);

/**
 * The dedicated origin the view asks for (`domain`, a host name), or NULL when it
 * asks for none (or for NULL). Its format is the host's to define and check.
 * Ownership: borrowed; valid until mcpc_ui_view_free.
 *
 * # Safety
 * `view` is NULL or live.
 */
const char *mcpc_ui_view_domain(const mcpc_ui_view_t *view);

/**
 * The view's `prefersBorder`: 1 (a border and background), 0 (none), -1 when it gives
 * none or for NULL.
 *
 * # Safety
 * `view` is NULL or live.
 */
int32_t mcpc_ui_view_prefers_border(const mcpc_ui_view_t *view);

/**
 * The view's `_meta.ui` the policy was built from, as JSON (`null` when it has
 * none), or NULL for NULL. It is the server's: check what you read. Ownership:
 * borrowed; valid until mcpc_ui_view_free.
 *
 * # Safety
 * `view` is NULL or live.
 */
const char *mcpc_ui_view_meta_json(const mcpc_ui_view_t *view);

/**
 * Frees `view` and everything it handed out. NULL is a no-op.
 * Threads: any thread, once no other thread reads it.
 *
 * # Safety
 * `view` is NULL or live, and is not used afterwards.
 */
void mcpc_ui_view_free(mcpc_ui_view_t *view);

/**
 * The whole `CallToolResult` as the server sent it (NUL-terminated JSON; content
 * blocks of every type are kept). NULL if `result` is NULL.
 * Ownership: borrowed; valid until mcpc_result_free.
 *
 * # Safety
 * `result` is NULL or a live result.
 */
const char *mcpc_result_json(const mcpc_result_t *result);

/**
 * The result's `structuredContent` as JSON, or NULL when it has none (or `result` is NULL).
 * Ownership: borrowed; valid until mcpc_result_free.
 *
 * # Safety
 * `result` is NULL or a live result.
 */
const char *mcpc_result_structured_json(const mcpc_result_t *result);

/**
 * The text blocks of the result joined with "\n" ("" when there are none). The text
 * is NUL-terminated, and may also hold NUL bytes of its own, so its length in bytes
 * is stored in `*out_len` when `out_len` is not NULL. NULL if `result` is NULL.
 * Ownership: borrowed; valid until mcpc_result_free. The text is untrusted server data.
 *
 * # Safety
 * `result` is NULL or a live result; `out_len` is NULL or writable.
 */
const char *mcpc_result_text(const mcpc_result_t *result,
                             size_t *out_len);

/**
 * The number of text blocks in the result (0 for NULL).
 *
 * # Safety
 * `result` is NULL or a live result.
 */
size_t mcpc_result_text_count(const mcpc_result_t *result);

/**
 * Text block `index` (in content order, counting text blocks only), NUL-terminated,
 * with its length in `*out_len` when `out_len` is not NULL. NULL if `result` is NULL
 * or `index` is out of range.
 * Ownership: borrowed; valid until mcpc_result_free.
 *
 * # Safety
 * `result` is NULL or a live result; `out_len` is NULL or writable.
 */
const char *mcpc_result_text_at(const mcpc_result_t *result,
                                size_t index,
                                size_t *out_len);

/**
 * True when the tool reported failure (`isError: true`). False for NULL.
 *
 * # Safety
 * `result` is NULL or a live result.
 */
bool mcpc_result_is_error(const mcpc_result_t *result);

/**
 * Frees a result. NULL is a no-op.
 * Threads: any thread, once no other thread reads the result.
 *
 * # Safety
 * `result` is NULL or a live result, freed only once.
 */
void mcpc_result_free(mcpc_result_t *result);

/**
 * The number of entries in `contents` (0 if NULL).
 * Threads: any thread.
 *
 * # Safety
 * `contents` is NULL or live.
 */
size_t mcpc_contents_count(const mcpc_contents_t *contents);

/**
 * The `uri` of entry `index`; NULL if `contents` is NULL or `index` out of range.
 * Ownership: borrowed; valid until mcpc_contents_free.
 *
 * # Safety
 * `contents` is NULL or live.
 */
const char *mcpc_contents_uri(const mcpc_contents_t *contents,
                              size_t index);

/**
 * The `mimeType` of entry `index`; NULL if it has none, `contents` is NULL or
 * `index` is out of range.
 * Ownership: borrowed; valid until mcpc_contents_free.
 *
 * # Safety
 * `contents` is NULL or live.
 */
const char *mcpc_contents_mime_type(const mcpc_contents_t *contents,
                                    size_t index);

/**
 * The `text` of entry `index` (NUL-terminated; its length in bytes, without the
 * NUL, in `*out_len` if `out_len` is not NULL: a text may hold NUL bytes). NULL (and length 0) if the entry is
 * a blob, `contents` is NULL or `index` is out of range.
 * Ownership: borrowed; valid until mcpc_contents_free.
 *
 * # Safety
 * `contents` is NULL or live; `out_len` is NULL or writable.
 */
const char *mcpc_contents_text(const mcpc_contents_t *contents,
                               size_t index,
                               size_t *out_len);

/**
 * The decoded bytes of the blob of entry `index` (its length in `*out_len` if
 * `out_len` is not NULL; an empty blob gives a non-NULL pointer and length 0).
 * NULL (and length 0) if the entry is text, `contents` is NULL or `index` is out
 * of range.
 * Ownership: borrowed; valid until mcpc_contents_free.
 *
 * # Safety
 * `contents` is NULL or live; `out_len` is NULL or writable.
 */
const uint8_t *mcpc_contents_blob(const mcpc_contents_t *contents,
                                  size_t index,
                                  size_t *out_len);

/**
 * The `_meta` of entry `index` as JSON; NULL if it has none, `contents` is NULL or
 * `index` is out of range.
 * Ownership: borrowed; valid until mcpc_contents_free.
 *
 * # Safety
 * `contents` is NULL or live.
 */
const char *mcpc_contents_meta_json(const mcpc_contents_t *contents,
                                    size_t index);

/**
 * The whole `ReadResourceResult` as the server sent it (blobs still in base64);
 * NULL if `contents` is NULL.
 * Ownership: borrowed; valid until mcpc_contents_free.
 *
 * # Safety
 * `contents` is NULL or live.
 */
const char *mcpc_contents_json(const mcpc_contents_t *contents);

/**
 * Frees `contents` and everything it handed out. NULL is a no-op.
 * Threads: any thread, once no other thread reads it.
 *
 * # Safety
 * `contents` is NULL or live, and is not used afterwards.
 */
void mcpc_contents_free(mcpc_contents_t *contents);

/* ===== Asynchronous calls ===== */
/* The _async functions, which complete through a callback, and their op handles. */

/**
 * An asynchronous operation started by an `_async` function. Its completion
 * callback runs exactly once, whether or not the handle is still held.
 * Thread-safe: cancel it from any thread; free it with mcpc_op_free.
 */
typedef struct mcpc_op_t mcpc_op_t;

/**
 * Completes mcpc_client_connect_stdio_async or mcpc_client_connect_transport_async:
 * on MCPC_OK `client` is the new client, owned by the callee (free it with
 * mcpc_client_free, from any thread); otherwise it is NULL and `error_message` says
 * why (also in mcpc_last_error_* during the call). `error_message` is borrowed for the
 * call ("" on success). Runs exactly once, on an mcpc thread.
 */
typedef void (*mcpc_connect_done_cb)(void *userdata,
                                     mcpc_status_t status,
                                     mcpc_client_t *client,
                                     const char *error_message);

/**
 * Completes mcpc_client_list_tools_async: on MCPC_OK `list` is owned by the callee
 * (free with mcpc_tool_list_free); otherwise NULL. Otherwise as mcpc_connect_done_cb.
 */
typedef void (*mcpc_list_done_cb)(void *userdata,
                                  mcpc_status_t status,
                                  mcpc_tool_list_t *list,
                                  const char *error_message);

/**
 * Completes mcpc_client_call_tool_async: on MCPC_OK, MCPC_ERR_TOOL and
 * MCPC_ERR_OUTPUT_SCHEMA `result` is owned by the callee (free with
 * mcpc_result_free); otherwise NULL. Otherwise as
 * mcpc_connect_done_cb.
 */
typedef void (*mcpc_call_done_cb)(void *userdata,
                                  mcpc_status_t status,
                                  mcpc_result_t *result,
                                  const char *error_message);

/**
 * Completes mcpc_client_request_async: on MCPC_OK `result_json` is the result, owned
 * by the callee (free with mcpc_string_free); otherwise NULL. Otherwise as
 * mcpc_connect_done_cb.
 */
typedef void (*mcpc_request_done_cb)(void *userdata,
                                     mcpc_status_t status,
                                     char *result_json,
                                     const char *error_message);

/**
 * Starts mcpc_client_connect_stdio without blocking: returns at once, and `on_done`
 * gets the client (or the error) exactly once, on an mcpc thread. Cancelling the op
 * stops the handshake and shuts the server down (`initialize` itself is never sent
 * `notifications/cancelled`).
 * Ownership: `argv` and `opts` are read during this call. `*out_op` (when `out_op` is
 * not NULL) is owned by the caller; free it with mcpc_op_free.
 * Threads: any thread, also from mcpc callbacks.
 * Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, argc 0, NULL
 * on_done), MCPC_ERR_INVALID_UTF8. Later errors go to `on_done`, as for
 * mcpc_client_connect_stdio.
 *
 * # Safety
 * As mcpc_client_connect_stdio; `userdata` is passed to `on_done` untouched.
 */
mcpc_status_t mcpc_client_connect_stdio_async(const char *const *argv,
                                              size_t argc,
                                              const mcpc_options_t *opts,
                                              mcpc_connect_done_cb on_done,
                                              void *userdata,
                                              mcpc_op_t **out_op);

/**
 * Starts mcpc_client_connect_http without blocking; as mcpc_client_connect_stdio_async
 * otherwise. URL policy errors are returned here, with no callback.
 *
 * # Safety
 * As mcpc_client_connect_http; `userdata` is passed to `on_done` untouched.
 */
mcpc_status_t mcpc_client_connect_http_async(const char *url,
                                             const mcpc_options_t *opts,
                                             mcpc_connect_done_cb on_done,
                                             void *userdata,
                                             mcpc_op_t **out_op);

/**
 * Starts mcpc_client_list_tools without blocking: returns at once, and `on_done` gets
 * the list (or the error) exactly once, on an mcpc thread. A cancel from `opts.cancel`
 * or mcpc_op_cancel stops it with MCPC_ERR_CANCELLED. Closing the client completes it
 * (MCPC_ERR_CLOSED) before the close returns.
 * Ownership: `opts` is read during this call; its progress userdata must stay valid
 * until `on_done` runs. `*out_op` (when not NULL) is owned by the caller.
 * Threads: any thread, also from mcpc callbacks.
 * Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG, MCPC_ERR_CLOSED.
 *
 * # Safety
 * As mcpc_client_list_tools; `userdata` is passed to `on_done` untouched.
 */
mcpc_status_t mcpc_client_list_tools_async(const mcpc_client_t *client,
                                           const mcpc_call_opts_t *opts,
                                           mcpc_list_done_cb on_done,
                                           void *userdata,
                                           mcpc_op_t **out_op);

/**
 * Starts mcpc_client_call_tool without blocking: returns at once, and `on_done` gets
 * the result (or the error) exactly once, on an mcpc thread. A cancel from
 * `opts.cancel` or mcpc_op_cancel sends `notifications/cancelled` and completes with
 * MCPC_ERR_CANCELLED, even when the response races the cancel. Closing the client
 * completes it (MCPC_ERR_CLOSED) before the close returns.
 * Ownership: `name`, `arguments_json` and `opts` are read during this call; the
 * progress userdata must stay valid until `on_done` runs. `*out_op` (when not NULL)
 * is owned by the caller; free it with mcpc_op_free.
 * Threads: any thread, also from mcpc callbacks.
 * Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, arguments not
 * a JSON object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_CLOSED.
 *
 * # Safety
 * As mcpc_client_call_tool; `userdata` is passed to `on_done` untouched.
 */
mcpc_status_t mcpc_client_call_tool_async(const mcpc_client_t *client,
                                          const char *name,
                                          const char *arguments_json,
                                          const mcpc_call_opts_t *opts,
                                          mcpc_call_done_cb on_done,
                                          void *userdata,
                                          mcpc_op_t **out_op);

/**
 * Starts mcpc_client_request without blocking; `on_done` gets the result exactly
 * once, on an mcpc thread. Cancelling the op sends `notifications/cancelled`.
 * Ownership: the strings and `opts` are read during this call; the progress
 * userdata must stay valid until `on_done` runs. `*out_op` (when not NULL) is owned
 * by the caller; free it with mcpc_op_free.
 * Threads: any thread, also from mcpc callbacks.
 * Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, NULL on_done,
 * an empty or session method, params not a JSON object), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_CLOSED. Later errors go to `on_done`, as for mcpc_client_request.
 *
 * # Safety
 * As mcpc_client_request; `userdata` is passed to `on_done` untouched.
 */
mcpc_status_t mcpc_client_request_async(const mcpc_client_t *client,
                                        const char *method,
                                        const char *params_json,
                                        const mcpc_call_opts_t *opts,
                                        mcpc_request_done_cb on_done,
                                        void *userdata,
                                        mcpc_op_t **out_op);

/**
 * Cancels the operation: its completion reports MCPC_ERR_CANCELLED, unless it had
 * already completed, and the server is sent `notifications/cancelled` for a request
 * still in flight. A local cancel does not prove that the server stopped the work.
 * Idempotent; NULL is ignored.
 * Threads: any thread, also from inside mcpc callbacks (including the op's own).
 *
 * # Safety
 * `op` is NULL or a live handle.
 */
void mcpc_op_cancel(const mcpc_op_t *op);

/**
 * True once the operation has completed or been cancelled (its callback has run or
 * is about to). False for NULL.
 * Threads: any thread.
 *
 * # Safety
 * `op` is NULL or a live handle.
 */
bool mcpc_op_is_finished(const mcpc_op_t *op);

/**
 * Frees the handle. It does not cancel: the operation runs on and its callback still
 * runs exactly once. NULL is a no-op.
 * Threads: any thread, also from inside the op's own callback.
 *
 * # Safety
 * `op` is NULL or a live handle, freed only once.
 */
void mcpc_op_free(mcpc_op_t *op);

/* ===== Transport seam ===== */
/* A transport whose channel the host owns, in stream or request/response form. */

/**
 * One outgoing message of a request/response transport, waiting for the host to
 * complete it (mcpc_exchange_complete) or fail it (mcpc_exchange_fail), exactly once,
 * from any thread.
 */
typedef struct mcpc_exchange_t mcpc_exchange_t;

/**
 * A transport whose channel the host owns. Make it with mcpc_transport_new (stream
 * form) or mcpc_transport_new_request (request/response form), connect a client over
 * it with mcpc_client_connect_transport, push what the server sends with
 * mcpc_transport_deliver, and free the host's handle with mcpc_transport_free.
 * Thread-safe: deliver from any thread.
 */
typedef struct mcpc_transport_t mcpc_transport_t;

/**
 * Sends one outgoing JSON-RPC message (`data`, `len` bytes, one compact JSON object
 * with no line end and no NUL terminator) on the host's channel. Returns 0 on
 * success; any other value fails the message (its request returns
 * MCPC_ERR_TRANSPORT), not the connection.
 * Runs on an mcpc blocking-pool thread, never a runtime worker; calls for one
 * transport never overlap and come in send order. `data` is borrowed for the call.
 * It may call mcpc_transport_deliver (also for the response to this very message);
 * blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
 */
typedef int32_t (*mcpc_transport_send_cb)(void *userdata,
                                          const char *data,
                                          size_t len);

/**
 * Closes the host's channel. Runs exactly once, when the client closes (after every
 * queued message went out), on an mcpc blocking-pool thread; never if the transport
 * is freed without having been attached to a client.
 */
typedef void (*mcpc_transport_close_cb)(void *userdata);

/**
 * Hands one outgoing JSON-RPC message to a request/response host: `exchange` is owned
 * by the host from here on and must be completed or failed exactly once, from any
 * thread, now or later. Messages that expect no response (notifications, answers to
 * server requests; mcpc_exchange_expects_response says which) are completed with no
 * body. Returns 0 on success; any other value fails the message, and then the host
 * must not touch `exchange` (mcpc reclaims it).
 * Threads and reentrancy: as for mcpc_transport_send_cb.
 */
typedef int32_t (*mcpc_transport_request_cb)(void *userdata,
                                             mcpc_exchange_t *exchange,
                                             const char *data,
                                             size_t len);

/**
 * Makes a stream transport: `send` gets each outgoing message, and the host delivers
 * every incoming message with mcpc_transport_deliver. `close` (may be NULL) closes the
 * channel. `userdata_free` (may be NULL) runs exactly once, when both the host's handle
 * and the client are done with the transport (also if this call fails).
 * Ownership: on success `*out_transport` is the host's handle; free it with
 * mcpc_transport_free (a client connected over it keeps the transport alive).
 * Threads: any thread.
 * Errors: MCPC_ERR_INVALID_ARG (NULL `send` or `out_transport`).
 *
 * # Safety
 * The callbacks may be called with `userdata` from mcpc threads until `userdata_free` runs.
 */
mcpc_status_t mcpc_transport_new(mcpc_transport_send_cb send,
                                 mcpc_transport_close_cb close,
                                 void *userdata,
                                 mcpc_free_cb userdata_free,
                                 mcpc_transport_t **out_transport);

/**
 * Makes a request/response transport: `request` gets each outgoing message as an
 * exchange, which the host completes with the response body (mcpc_exchange_complete)
 * from any thread. Otherwise as mcpc_transport_new. mcpc_transport_deliver works too,
 * for messages that arrive outside any exchange.
 * Errors: MCPC_ERR_INVALID_ARG (NULL `request` or `out_transport`).
 *
 * # Safety
 * The callbacks may be called with `userdata` from mcpc threads until `userdata_free` runs.
 */
mcpc_status_t mcpc_transport_new_request(mcpc_transport_request_cb request,
                                         mcpc_transport_close_cb close,
                                         void *userdata,
                                         mcpc_free_cb userdata_free,
                                         mcpc_transport_t **out_transport);

/**
 * Delivers one message from the server: exactly one JSON-RPC message of `len` bytes
 * (no framing; need not be NUL-terminated). It is routed on the calling thread before
 * this returns: a response completes its call, and notification and progress
 * callbacks run on this thread. Deliveries may come from several threads at once.
 * A message over the client's size limit fails the connection.
 * Ownership: `data` is read during the call only.
 * Threads: any thread, also from inside the send callback.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or no client attached yet), MCPC_ERR_CLOSED (the
 * client closed the transport), MCPC_ERR_PROTOCOL (not a JSON-RPC message: dropped, the
 * connection goes on), MCPC_ERR_MESSAGE_TOO_LARGE. A response whose envelope is sound
 * but whose result is not valid JSON is routed (MCPC_OK): its call fails with
 * MCPC_ERR_PROTOCOL.
 *
 * # Safety
 * `transport` is NULL or live; `data` is NULL or `len` readable bytes.
 */
mcpc_status_t mcpc_transport_deliver(const mcpc_transport_t *transport,
                                     const char *data,
                                     size_t len);

/**
 * Signals that the host's channel ended (the server went away): every call in flight
 * and every later call fails with MCPC_ERR_TRANSPORT naming `reason` (may be NULL).
 * Threads: any thread.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, or no client attached), MCPC_ERR_CLOSED,
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `transport` is NULL or live; `reason` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_transport_end(const mcpc_transport_t *transport,
                                 const char *reason);

/**
 * Frees the host's handle. NULL is a no-op. A client connected over the transport
 * keeps using it; deliveries need the handle, so free it once the client is closed.
 * Threads: any thread, once no other thread uses the handle.
 *
 * # Safety
 * `transport` is NULL or live, freed only once.
 */
void mcpc_transport_free(mcpc_transport_t *transport);

/**
 * Connects over a caller-supplied transport (see mcpc_transport_new): runs the
 * initialize handshake through the host's callbacks and waits for it. The host
 * delivers the server's messages with mcpc_transport_deliver, from its own threads,
 * also while this call blocks. A transport serves one client.
 * Ownership: `transport` stays the host's (free it with mcpc_transport_free when
 * done delivering); the client holds its own reference. `opts` is read during the
 * call (NULL: defaults). On success `*out_client` is owned by the caller.
 * Threads: any thread except mcpc's own and the host's delivering thread (a blocking
 * call from an mcpc callback returns MCPC_ERR_WOULD_DEADLOCK).
 * Errors: MCPC_ERR_INVALID_ARG (NULL, transport already attached), MCPC_ERR_HANDSHAKE,
 * MCPC_ERR_TIMEOUT, MCPC_ERR_TRANSPORT, MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `transport` is NULL or live; `opts` is NULL or live; `out_client` is NULL or writable.
 */
mcpc_status_t mcpc_client_connect_transport(const mcpc_transport_t *transport,
                                            const mcpc_options_t *opts,
                                            mcpc_client_t **out_client);

/**
 * Starts mcpc_client_connect_transport without blocking; as
 * mcpc_client_connect_stdio_async otherwise.
 * Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL transport or
 * on_done).
 *
 * # Safety
 * As mcpc_client_connect_transport; `userdata` is passed to `on_done` untouched.
 */
mcpc_status_t mcpc_client_connect_transport_async(const mcpc_transport_t *transport,
                                                  const mcpc_options_t *opts,
                                                  mcpc_connect_done_cb on_done,
                                                  void *userdata,
                                                  mcpc_op_t **out_op);

/**
 * True when the exchange carries a request, whose response the body must hold;
 * false for notifications and answers to server requests (complete them with no body).
 *
 * # Safety
 * `exchange` is NULL or live.
 */
bool mcpc_exchange_expects_response(const mcpc_exchange_t *exchange);

/**
 * Completes an exchange with the response body: zero or more JSON-RPC messages, one
 * per line (server notifications may come before the response); `body` may be NULL
 * with `len` 0. Consumes `exchange`, whatever the result. A request whose response is
 * not in the body fails with MCPC_ERR_PROTOCOL.
 * Threads: any thread, also from inside the request callback.
 * Errors: MCPC_ERR_INVALID_ARG (NULL exchange), MCPC_ERR_CLOSED (the client closed),
 * MCPC_ERR_PROTOCOL (a message in the body was not JSON-RPC; the others were routed),
 * MCPC_ERR_MESSAGE_TOO_LARGE.
 *
 * # Safety
 * `exchange` is NULL or live (it is consumed); `body` is NULL or `len` readable bytes.
 */
mcpc_status_t mcpc_exchange_complete(mcpc_exchange_t *exchange,
                                     const char *body,
                                     size_t len);

/**
 * Fails an exchange: its request returns MCPC_ERR_TRANSPORT naming `reason` (may be
 * NULL). Consumes `exchange`. NULL is a no-op.
 * Threads: any thread.
 *
 * # Safety
 * `exchange` is NULL or live (it is consumed); `reason` is NULL or NUL-terminated.
 */
void mcpc_exchange_fail(mcpc_exchange_t *exchange,
                        const char *reason);

/* ===== Authorization ===== */
/* OAuth for HTTP endpoints: the settings, the host's login and store callbacks. */

/**
 * The grant: a user logs in (authorization code with PKCE), the default.
 */
#define MCPC_OAUTH_AUTHORIZATION_CODE 0

/**
 * The grant: no user; the client authenticates with its id and secret (or key).
 */
#define MCPC_OAUTH_CLIENT_CREDENTIALS 1

/**
 * The grant: no user; a JWT assertion from the host is exchanged for the token
 * (RFC 7523): a workload's identity token, or with mcpc_oauth_set_identity_provider
 * an enterprise ID token, exchanged for an ID-JAG first.
 */
#define MCPC_OAUTH_JWT_BEARER 2

/**
 * The most bytes a signature may take: a DER ECDSA P-256 signature.
 */
#define MCPC_SIGNATURE_MAX 72

/**
 * One login in progress: the authorization URL to show the user. The host
 * completes it exactly once, from any thread, now or later, with
 * mcpc_auth_request_complete or mcpc_auth_request_cancel; either frees it. A
 * login the host never completes ends with the request's timeout (the handle
 * must still be completed or cancelled to free it).
 */
typedef struct mcpc_auth_request_t mcpc_auth_request_t;

/**
 * Authorization settings for HTTP endpoints: a builder. Make it with
 * mcpc_oauth_new, set what applies, attach it with mcpc_options_set_oauth (which
 * copies it), and free it with mcpc_oauth_free.
 * Threads: not thread-safe; use one object from one thread at a time.
 */
typedef struct mcpc_oauth_t mcpc_oauth_t;

/**
 * Gives a fresh assertion for MCPC_OAUTH_JWT_BEARER: write it NUL-terminated into
 * `buf` (`buf_len` bytes, 65536) and return 0, or return nonzero for none (the
 * request then fails with MCPC_ERR_LOGIN_REQUIRED). Runs on an mcpc blocking-pool
 * thread before each token request that needs one; it may block (run a command).
 */
typedef int32_t (*mcpc_assertion_cb)(void *userdata,
                                     char *buf,
                                     size_t buf_len);

/**
 * Shows a login to the user: open `mcpc_auth_request_url(request)` in a browser,
 * then hand back the URL the authorization server redirected to with
 * mcpc_auth_request_complete (or give up with mcpc_auth_request_cancel). The host
 * owns `request` until it completes it. Runs on an mcpc blocking-pool thread; it
 * may block (until the redirect arrives) or return at once and complete later
 * from any thread. Blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
 */
typedef void (*mcpc_authorize_cb)(void *userdata,
                                  mcpc_auth_request_t *request);

/**
 * Loads the stored value of `key` (NUL-terminated): write it NUL-terminated into
 * `buf` (`buf_len` bytes, 65536) and return 0, or return nonzero when there is
 * none. Values are JSON holding secrets (tokens, client secrets): keep them
 * private. Runs on an mcpc thread; calls for one client never overlap.
 */
typedef int32_t (*mcpc_store_load_cb)(void *userdata,
                                      const char *key,
                                      char *buf,
                                      size_t buf_len);

/**
 * Stores `value` under `key` (both NUL-terminated, borrowed for the call); a NULL
 * `value` deletes the key. Runs on an mcpc thread; calls for one client never overlap.
 */
typedef void (*mcpc_store_save_cb)(void *userdata,
                                   const char *key,
                                   const char *value);

/**
 * Signs `data` (`data_len` bytes, borrowed for the call) for ES256: ECDSA with
 * P-256 over the SHA-256 of `data` (the callback hashes). Write the signature into
 * `signature` (room for `*signature_len` bytes, MCPC_SIGNATURE_MAX), raw (r then
 * s, 32 bytes each) or DER, set `*signature_len` to its length and return 0; or
 * return nonzero when it cannot sign (the request then fails with
 * MCPC_ERR_AUTH). mcpc checks every signature against the public key given with
 * the callback before it sends one. Runs on an mcpc blocking-pool thread and may
 * block (a hardware token); a request waiting for it is still bounded by its
 * timeout. Calls may overlap, from different threads.
 */
typedef int32_t (*mcpc_sign_cb)(void *userdata,
                                const uint8_t *data,
                                size_t data_len,
                                uint8_t *signature,
                                size_t *signature_len);

/**
 * Makes authorization settings with the defaults: the authorization code grant,
 * client name "mcpc", no client id (registration is used where the server offers
 * it), no callbacks, not headless.
 * Ownership: the caller owns it; free with mcpc_oauth_free. Threads: any thread.
 * Errors: none (NULL only if allocation panicked).
 */
mcpc_oauth_t *mcpc_oauth_new(void);

/**
 * Frees authorization settings. NULL is a no-op; options it was attached to keep
 * their copy.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object, freed only once.
 */
void mcpc_oauth_free(mcpc_oauth_t *oauth);

/**
 * Sets a pre-registered client: its id, and its secret (NULL for a public
 * client). Both are copied; the secret never appears in messages or logs.
 * Errors: MCPC_ERR_INVALID_ARG (NULL object or id, an empty id), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_client(mcpc_oauth_t *oauth,
                                    const char *client_id,
                                    const char *client_secret);

/**
 * Sets the redirect URI of logins (for example `http://127.0.0.1:PORT/callback`,
 * where the host receives the redirect); NULL clears it. Needed by the
 * authorization code grant. Errors: MCPC_ERR_INVALID_ARG (NULL object, not a
 * URL), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `uri` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_redirect_uri(mcpc_oauth_t *oauth,
                                          const char *uri);

/**
 * Sets the URL of the client's ID metadata document, used as its client id where
 * the authorization server supports client ID metadata documents (instead of
 * registration); NULL clears it. Errors: MCPC_ERR_INVALID_ARG (NULL object, not a
 * URL), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `url` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_client_metadata_url(mcpc_oauth_t *oauth,
                                                 const char *url);

/**
 * Sets the scope to ask for (space-separated) when neither the server's challenge
 * nor its metadata names one; NULL clears it.
 * Errors: MCPC_ERR_INVALID_ARG (NULL object), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `scope` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_scope(mcpc_oauth_t *oauth,
                                   const char *scope);

/**
 * Sets the grant: MCPC_OAUTH_AUTHORIZATION_CODE (the default),
 * MCPC_OAUTH_CLIENT_CREDENTIALS (which needs mcpc_oauth_set_client with a secret,
 * or mcpc_oauth_set_client_key) or MCPC_OAUTH_JWT_BEARER (which needs an assertion).
 * Errors: MCPC_ERR_INVALID_ARG (NULL object, an unknown grant).
 *
 * # Safety
 * `oauth` is NULL or a live oauth object.
 */
mcpc_status_t mcpc_oauth_set_grant(mcpc_oauth_t *oauth,
                                   int32_t grant);

/**
 * Headless mode (`headless` nonzero): never log in; use stored or refreshed
 * credentials only, and fail with MCPC_ERR_LOGIN_REQUIRED when a login is needed.
 * Errors: MCPC_ERR_INVALID_ARG (NULL object).
 *
 * # Safety
 * `oauth` is NULL or a live oauth object.
 */
mcpc_status_t mcpc_oauth_set_headless(mcpc_oauth_t *oauth,
                                      int32_t headless);

/**
 * Authenticates the client with `private_key_jwt` (RFC 7523): `pem` is its PKCS#8
 * P-256 private key (ES256), copied; NULL clears it. Assertions are signed for the
 * authorization server's issuer and live five minutes. The key never appears in
 * messages. Errors: MCPC_ERR_INVALID_ARG (NULL object, not such a key),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `pem` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_client_key(mcpc_oauth_t *oauth,
                                        const char *pem);

/**
 * Sets a fixed assertion (a JWT, copied) for MCPC_OAUTH_JWT_BEARER; NULL clears it.
 * For assertions that expire, use mcpc_oauth_set_assertion_callback.
 * Errors: MCPC_ERR_INVALID_ARG (NULL object, an empty assertion), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `jwt` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_assertion(mcpc_oauth_t *oauth,
                                       const char *jwt);

/**
 * Sets the assertion callback (see mcpc_assertion_cb) for MCPC_OAUTH_JWT_BEARER.
 * `userdata_free` (may be NULL) runs exactly once, when the settings and everything
 * made from them are freed (also if this fails).
 * Errors: MCPC_ERR_INVALID_ARG (NULL object or `cb`).
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `cb` may be called from mcpc threads
 * with `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_oauth_set_assertion_callback(mcpc_oauth_t *oauth,
                                                mcpc_assertion_cb cb,
                                                void *userdata,
                                                mcpc_free_cb userdata_free);

/**
 * With MCPC_OAUTH_JWT_BEARER: the assertion is an ID token of the enterprise
 * identity provider whose token endpoint is `token_endpoint` (where this client is
 * `client_id`); mcpc exchanges it there (RFC 8693) for an ID-JAG naming the MCP
 * server's authorization server and resource, then presents that. NULL
 * `token_endpoint` clears it. Errors: MCPC_ERR_INVALID_ARG (NULL object, not a
 * URL, NULL client_id), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_identity_provider(mcpc_oauth_t *oauth,
                                               const char *token_endpoint,
                                               const char *client_id);

/**
 * DPoP (RFC 9449), on by default: when the authorization server accepts ES256
 * proofs, tokens are bound to the client's key and every request carries a fresh
 * proof; otherwise bearer tokens are used. `enabled` zero turns it off.
 * Errors: MCPC_ERR_INVALID_ARG (NULL object).
 *
 * # Safety
 * `oauth` is NULL or a live oauth object.
 */
mcpc_status_t mcpc_oauth_set_dpop(mcpc_oauth_t *oauth,
                                  int32_t enabled);

/**
 * Uses the host's DPoP key (PKCS#8 P-256 PEM, copied) instead of a fresh key per
 * client, so that a stored DPoP-bound token stays usable; NULL goes back to a
 * fresh key. Errors: MCPC_ERR_INVALID_ARG (NULL object, not such a key),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `pem` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_oauth_set_dpop_key(mcpc_oauth_t *oauth,
                                      const char *pem);

/**
 * Sets the login callback (see mcpc_authorize_cb). Without one, a needed login is
 * MCPC_ERR_LOGIN_REQUIRED. `userdata_free` (may be NULL) runs exactly once, when
 * the settings and everything made from them are freed (also if this fails).
 * Errors: MCPC_ERR_INVALID_ARG (NULL object or `cb`).
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `cb` may be called from mcpc threads
 * with `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_oauth_set_authorize_callback(mcpc_oauth_t *oauth,
                                                mcpc_authorize_cb cb,
                                                void *userdata,
                                                mcpc_free_cb userdata_free);

/**
 * Sets the credential store (see mcpc_store_load_cb and mcpc_store_save_cb):
 * tokens are kept under a key naming the server, registrations under one naming
 * the issuer. `userdata_free` (may be NULL) runs exactly once, when the settings
 * and everything made from them are freed (also if this fails).
 * Errors: MCPC_ERR_INVALID_ARG (NULL object, `load` or `save`).
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; the callbacks may be called from mcpc
 * threads with `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_oauth_set_store(mcpc_oauth_t *oauth,
                                   mcpc_store_load_cb load,
                                   mcpc_store_save_cb save,
                                   void *userdata,
                                   mcpc_free_cb userdata_free);

/**
 * Signs DPoP proofs with the host's key: `public_key_pem` is its P-256 public
 * key (`BEGIN PUBLIC KEY`, copied), `sign` signs with the private key (see
 * mcpc_sign_cb). Replaces mcpc_oauth_set_dpop_key; DPoP stays subject to
 * mcpc_oauth_set_dpop. `userdata_free` (may be NULL) runs exactly once, when
 * the settings and every client made from them are freed (also if this fails).
 * Threads: as the settings object. Errors: MCPC_ERR_INVALID_ARG (NULL object,
 * `public_key_pem` or `sign`; not a P-256 public key), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `oauth` is NULL or a live oauth object; `public_key_pem` is NULL or
 * NUL-terminated; `sign` may be called from mcpc threads with `userdata` until
 * `userdata_free` runs.
 */
mcpc_status_t mcpc_oauth_set_dpop_signer(mcpc_oauth_t *oauth,
                                         const char *public_key_pem,
                                         mcpc_sign_cb sign,
                                         void *userdata,
                                         mcpc_free_cb userdata_free);

/**
 * Authenticates the client with `private_key_jwt`, its assertions signed by the
 * host's key: `public_key_pem` is the P-256 public key (`BEGIN PUBLIC KEY`,
 * copied) registered for the client, `sign` signs (see mcpc_sign_cb). Replaces
 * mcpc_oauth_set_client_key. `userdata_free` (may be NULL) runs exactly once, when
 * the settings and every client made from them are freed (also if this fails).
 * Threads: as the settings object. Errors: MCPC_ERR_INVALID_ARG (NULL object,
 * `public_key_pem` or `sign`; not a P-256 public key), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * As mcpc_oauth_set_dpop_signer.
 */
mcpc_status_t mcpc_oauth_set_client_signer(mcpc_oauth_t *oauth,
                                           const char *public_key_pem,
                                           mcpc_sign_cb sign,
                                           void *userdata,
                                           mcpc_free_cb userdata_free);

/**
 * Uses OAuth for HTTP endpoints of clients made from `opts` (a copy of `oauth`
 * is taken; NULL turns OAuth off). It replaces a bearer token or token callback.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options).
 *
 * # Safety
 * `opts` is NULL or a live options object; `oauth` is NULL or a live oauth object.
 */
mcpc_status_t mcpc_options_set_oauth(mcpc_options_t *opts,
                                     const mcpc_oauth_t *oauth);

/**
 * The authorization URL of a login, NUL-terminated; owned by `request` (valid
 * until it is completed or cancelled). NULL for a NULL request.
 * Threads: any thread.
 *
 * # Safety
 * `request` is NULL or a live login handle.
 */
const char *mcpc_auth_request_url(const mcpc_auth_request_t *request);

/**
 * Completes a login with the URL the authorization server redirected to (its
 * query holds `code`, `state` and `iss`, which mcpc checks). Frees `request`,
 * also on error. Threads: any thread, exactly once per request.
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8 (the login then ends
 * as cancelled).
 *
 * # Safety
 * `request` is NULL or a live login handle, not used after this call.
 */
mcpc_status_t mcpc_auth_request_complete(mcpc_auth_request_t *request,
                                         const char *redirect_url);

/**
 * Cancels a login: the request that needed it fails with MCPC_ERR_LOGIN_CANCELLED.
 * Frees `request`. Threads: any thread, exactly once per request.
 * Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `request` is NULL or a live login handle, not used after this call.
 */
mcpc_status_t mcpc_auth_request_cancel(mcpc_auth_request_t *request);

/* ===== Input for the server ===== */
/* Handlers for the server's elicitation, sampling and roots requests, and answering them. */

/**
 * Kind of input request: an `elicitation/create` in form mode (fill in the schema
 * of mcpc_input_schema_json).
 */
#define MCPC_INPUT_ELICIT_FORM 1

/**
 * Kind of input request: an `elicitation/create` in URL mode (show the server and the
 * URL of mcpc_input_url; accepting means the user consented to open it).
 */
#define MCPC_INPUT_ELICIT_URL 2

/**
 * Kind of input request: `sampling/createMessage`.
 */
#define MCPC_INPUT_SAMPLING 3

/**
 * Kind of input request: `roots/list`.
 */
#define MCPC_INPUT_ROOTS 4

/**
 * Elicitation mode flag for mcpc_options_set_elicitation_handler: form mode.
 */
#define MCPC_ELICIT_MODE_FORM 1

/**
 * Elicitation mode flag for mcpc_options_set_elicitation_handler: URL mode.
 */
#define MCPC_ELICIT_MODE_URL 2

/**
 * Elicitation answer: the user submitted (a form's content) or consented (a URL).
 */
#define MCPC_ELICIT_ACCEPT 1

/**
 * Elicitation answer: the user explicitly declined.
 */
#define MCPC_ELICIT_DECLINE 2

/**
 * Elicitation answer: the user dismissed it without choosing.
 */
#define MCPC_ELICIT_CANCEL 3

/**
 * Sampling flag for mcpc_options_set_sampling_handler: requests may carry tools.
 */
#define MCPC_SAMPLING_TOOLS 1

/**
 * One request from the server for input, owned by the host from the moment its
 * handler gets it: answer it exactly once (mcpc_input_elicit, mcpc_input_complete or
 * mcpc_input_fail), now or later, from any thread, and free it with mcpc_input_free.
 * Thread-safe.
 */
typedef struct mcpc_input_t mcpc_input_t;

/**
 * Receives one input request from the server. `input` is the host's from here on:
 * answer it exactly once and free it with mcpc_input_free, now or later, from any
 * thread. Runs on an mcpc blocking-pool thread, so it may block (ask a user); calls
 * may overlap, one per request. A request not answered within the client's timeout
 * (before 2026-07-28) or its call's timeout (2026-07-28) ends unanswered, and a later
 * answer returns MCPC_ERR_TIMEOUT. Blocking mcpc calls from it return
 * MCPC_ERR_WOULD_DEADLOCK.
 */
typedef void (*mcpc_input_cb)(void *userdata,
                              mcpc_input_t *input);

/**
 * Answers the server's elicitation requests with `cb` (see mcpc_input_cb), in the
 * modes of `modes` (MCPC_ELICIT_MODE_FORM and/or MCPC_ELICIT_MODE_URL), which the
 * client then declares as its `elicitation` capability. Without a handler,
 * elicitation is not declared, and one asked for anyway is declined. `userdata_free`
 * (may be NULL) runs exactly once, when the options and every client made from them
 * are freed; also if this call fails. Replaces an earlier elicitation handler.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or `cb`, `modes` 0 or unknown bits).
 *
 * # Safety
 * `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
 * `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_options_set_elicitation_handler(mcpc_options_t *opts,
                                                   uint32_t modes,
                                                   mcpc_input_cb cb,
                                                   void *userdata,
                                                   mcpc_free_cb userdata_free);

/**
 * Answers the server's `sampling/createMessage` requests with `cb`; the client then
 * declares `sampling` (with `tools` when `flags` has MCPC_SAMPLING_TOOLS). Without a
 * handler, sampling is not declared, and a request for it fails as before (the call
 * gets MCPC_ERR_INPUT_REQUIRED under 2026-07-28; before it, the server gets -32601).
 * Otherwise as mcpc_options_set_elicitation_handler.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or `cb`, unknown flag bits).
 *
 * # Safety
 * As for mcpc_options_set_elicitation_handler.
 */
mcpc_status_t mcpc_options_set_sampling_handler(mcpc_options_t *opts,
                                                uint32_t flags,
                                                mcpc_input_cb cb,
                                                void *userdata,
                                                mcpc_free_cb userdata_free);

/**
 * Answers the server's `roots/list` requests with `cb` (complete them with
 * `{"roots":[{"uri":"file:///...","name":"..."}]}`); the client then declares `roots`
 * (with `listChanged` before 2026-07-28; see mcpc_client_roots_changed). Otherwise as
 * mcpc_options_set_elicitation_handler.
 * Errors: MCPC_ERR_INVALID_ARG (NULL options or `cb`).
 *
 * # Safety
 * As for mcpc_options_set_elicitation_handler.
 */
mcpc_status_t mcpc_options_set_roots_handler(mcpc_options_t *opts,
                                             mcpc_input_cb cb,
                                             void *userdata,
                                             mcpc_free_cb userdata_free);

/**
 * What the request asks for: MCPC_INPUT_ELICIT_FORM, MCPC_INPUT_ELICIT_URL,
 * MCPC_INPUT_SAMPLING or MCPC_INPUT_ROOTS; 0 for NULL.
 * Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
int32_t mcpc_input_kind(const mcpc_input_t *input);

/**
 * The request's method (`elicitation/create`, `sampling/createMessage`, `roots/list`).
 * Borrowed until mcpc_input_free; NULL for NULL. Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_method(const mcpc_input_t *input);

/**
 * Which server asks (the title or name it gave itself), to show the user. Borrowed
 * until mcpc_input_free; NULL for NULL. Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_server(const mcpc_input_t *input);

/**
 * The host's name for the server that asks (the name in its configuration, or the
 * one given to mcpc_host_add_stdio or mcpc_host_add_http), so a host of many servers
 * can tell the user which one; NULL for a client outside a host, and for NULL.
 * Borrowed until mcpc_input_free. Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_host_server(const mcpc_input_t *input);

/**
 * The request's params as JSON, as the server sent them (`{}` when it sent none): for
 * sampling, its messages, model preferences, tools and the rest. Borrowed until
 * mcpc_input_free; NULL for NULL. Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_params_json(const mcpc_input_t *input);

/**
 * An elicitation's message to the user; NULL for other kinds. Borrowed until
 * mcpc_input_free. Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_message(const mcpc_input_t *input);

/**
 * A form elicitation's requested schema as JSON (a flat object of string, number,
 * integer, boolean and enum-array properties, already checked); NULL for other kinds.
 * Borrowed until mcpc_input_free. Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_schema_json(const mcpc_input_t *input);

/**
 * A URL elicitation's URL, to show in full before the user consents (never open or
 * fetch it without consent); NULL for other kinds. Borrowed until mcpc_input_free.
 * Threads: any thread.
 *
 * # Safety
 * `input` is NULL or live.
 */
const char *mcpc_input_url(const mcpc_input_t *input);

/**
 * Answers an elicitation: `action` is MCPC_ELICIT_ACCEPT, MCPC_ELICIT_DECLINE or
 * MCPC_ELICIT_CANCEL. `content_json` (NULL for none) is an accepted form's content, a
 * JSON object: fields it leaves out get the schema's defaults, and it is checked
 * against the requested schema before anything is sent. A URL elicitation is
 * accepted with no content. Does not consume `input`.
 * Threads: any thread, also from inside the handler.
 * Errors: MCPC_ERR_INVALID_ARG (NULL input, an unknown action, content that is not
 * JSON, not an elicitation), MCPC_ERR_INVALID_UTF8, MCPC_ERR_INPUT_INVALID (the content
 * does not fit the schema, or content where none belongs: nothing was sent, the
 * request stays open), MCPC_ERR_ALREADY_COMPLETED, MCPC_ERR_TIMEOUT (it ended
 * unanswered), MCPC_ERR_CLOSED (its client is closing or gone, or its call ended:
 * the answer cannot go out).
 *
 * # Safety
 * `input` is NULL or live; `content_json` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_input_elicit(const mcpc_input_t *input,
                                int32_t action,
                                const char *content_json);

/**
 * Answers the request with its whole result as JSON: a `CreateMessageResult` for
 * sampling (`role`, `content`, `model`, ...), `{"roots":[...]}` (each a `file://` URI)
 * for roots, an `ElicitResult` for elicitation (checked as by mcpc_input_elicit).
 * Does not consume `input`.
 * Threads: any thread, also from inside the handler.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, not JSON), MCPC_ERR_INVALID_UTF8, and as
 * mcpc_input_elicit.
 *
 * # Safety
 * `input` is NULL or live; `result_json` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_input_complete(const mcpc_input_t *input,
                                  const char *result_json);

/**
 * Refuses the request, naming why (`message`, may be NULL): before 2026-07-28 the
 * server gets a JSON-RPC error (code -1) with the message; under 2026-07-28 the call
 * that carried the request fails with MCPC_ERR_INPUT_REQUIRED. To decline an
 * elicitation, use mcpc_input_elicit instead. Does not consume `input`.
 * Threads: any thread, also from inside the handler.
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_ALREADY_COMPLETED, MCPC_ERR_TIMEOUT, MCPC_ERR_CLOSED.
 *
 * # Safety
 * `input` is NULL or live; `message` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_input_fail(const mcpc_input_t *input,
                              const char *message);

/**
 * Frees the host's handle. A request not yet answered is refused now (as by
 * mcpc_input_fail), rather than left to its timeout. NULL is a no-op. Safe after the
 * client that made it was freed.
 * Threads: any thread, once no other thread uses the handle.
 *
 * # Safety
 * `input` is NULL or live, freed only once.
 */
void mcpc_input_free(mcpc_input_t *input);

/**
 * Tells the server the host's roots changed: sends `notifications/roots/list_changed`
 * (before 2026-07-28; under 2026-07-28 the server asks for the roots each time it
 * needs them, so nothing is sent).
 * Threads: any thread, also from mcpc callbacks (it does not block).
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_NOT_SUPPORTED (no roots handler was
 * registered), MCPC_ERR_CLOSED, MCPC_ERR_TRANSPORT.
 *
 * # Safety
 * `client` is NULL or live.
 */
mcpc_status_t mcpc_client_roots_changed(const mcpc_client_t *client);

/* ===== Hosts ===== */
/* Many servers behind one handle: configuration files, starting, one catalog, routing. */

/**
 * The environment policy (mcpc_host_set_env_policy): everything but variables
 * whose names hold TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL or AUTH (any case),
 * unless the server's `env` names them. The default.
 */
#define MCPC_ENV_NO_SECRETS 0

/**
 * The environment policy: everything.
 */
#define MCPC_ENV_PASS_ALL 1

/**
 * The environment policy: only the names given (and the server's own `env`).
 */
#define MCPC_ENV_ALLOW 2

/**
 * What a host reports to mcpc_host_event_cb.
 */
typedef enum {
  /**
   * A server's state changed: `server` names it; `detail` is its error ("STATUS_NAME:
   * message") or NULL.
   */
  MCPC_HOST_SERVER_STATE = 1,
  /**
   * mcpc_host_start settled: `server` is NULL; `detail` is the summary, JSON
   * `{"servers": {STATE: COUNT}, "tools": N, "prompts": N, "collisions": N}`; `state`
   * means nothing.
   */
  MCPC_HOST_SETTLED = 2,
  /**
   * The catalog changed (a server became ready, failed or was removed): `server`
   * and `detail` are NULL; `state` means nothing.
   */
  MCPC_HOST_CATALOG_CHANGED = 3,
} mcpc_host_event_t;

/**
 * A server's state, as reported to mcpc_host_event_cb and by mcpc_host_status.
 */
typedef enum {
  /**
   * Added, not started yet.
   */
  MCPC_SERVER_ADDED = 0,
  MCPC_SERVER_STARTING = 1,
  /**
   * Started; its tools are in the catalog.
   */
  MCPC_SERVER_READY = 2,
  /**
   * Did not start, or its connection ended; the detail says why.
   */
  MCPC_SERVER_FAILED = 3,
  /**
   * Its authorization needs a login (MCPC_ERR_LOGIN_REQUIRED).
   */
  MCPC_SERVER_NEEDS_LOGIN = 4,
  /**
   * Disabled in its configuration; never started.
   */
  MCPC_SERVER_DISABLED = 5,
  /**
   * Its process died and is being started again (a restart policy).
   */
  MCPC_SERVER_RESTARTING = 6,
  /**
   * Not started: its tools, from a saved catalog (mcpc_host_load_catalog), are in
   * the catalog, and its first call starts it (mcpc_host_set_lazy).
   */
  MCPC_SERVER_IDLE = 7,
} mcpc_server_state_t;

/**
 * Many MCP servers behind one handle. Thread-safe: any number of threads may use
 * it at once.
 */
typedef struct mcpc_host_t mcpc_host_t;

/**
 * Receives a host's reports, one call at a time: on an mcpc thread, or on the thread
 * of the host call that caused the report (mcpc_host_start; mcpc_host_load_catalog;
 * mcpc_host_call_tool starting an idle server). The strings are borrowed for the
 * call. Blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK; mcpc_host_status,
 * mcpc_host_tools and the other calls that do not block may be made.
 */
typedef void (*mcpc_host_event_cb)(void *userdata,
                                   mcpc_host_event_t event,
                                   const char *server,
                                   mcpc_server_state_t state,
                                   const char *detail);

/**
 * Gives a value a configuration file asks of the host: `kind` is "input" (VS Code's
 * `${input:ID}`: `reference` is the ID, `prompt` its description from the file's
 * `inputs`) or "secret" (any other scheme, such as `${op://vault/item}`: `reference`
 * is it whole, `prompt` NULL). Write the value NUL-terminated into `buf` (`buf_len`
 * bytes, 8192) and return 0, or return nonzero for "no value" (the file is then
 * refused with MCPC_ERR_CONFIG naming the variable). Runs on the thread that called
 * mcpc_host_add_config, so it may block to ask the user. The value is never logged
 * nor put in any message.
 */
typedef int32_t (*mcpc_host_resolve_cb)(void *userdata,
                                        const char *kind,
                                        const char *reference,
                                        const char *prompt,
                                        char *buf,
                                        size_t buf_len);

/**
 * Makes a host with no servers. `defaults` (NULL: the library's defaults) is what
 * every server added without options of its own starts from: client info,
 * timeouts, handlers of the server's input requests, stderr, restart policy.
 * At most 64 servers start at once (mcpc_host_set_concurrency).
 * Ownership: `defaults` is copied; the caller keeps it. On success `*out_host` is
 * the caller's; free it with mcpc_host_free.
 * Threads: any thread.
 * Errors: MCPC_ERR_INVALID_ARG (NULL `out_host`).
 *
 * # Safety
 * `defaults` is NULL or live; `out_host` is NULL or writable.
 */
mcpc_status_t mcpc_host_new(const mcpc_options_t *defaults,
                            mcpc_host_t **out_host);

/**
 * Reports the host's events to `cb` (see mcpc_host_event_cb), replacing any
 * callback set before; NULL `cb` removes it. `userdata_free` (may be NULL) runs once,
 * when the host is freed or the callback replaced; it also runs if this call fails.
 * Threads: any thread; reports already under way finish with the old callback.
 * Errors: MCPC_ERR_INVALID_ARG (NULL host).
 *
 * # Safety
 * `host` is NULL or live; `cb` may be called from mcpc threads with `userdata`
 * until `userdata_free` runs.
 */
mcpc_status_t mcpc_host_set_event_callback(const mcpc_host_t *host,
                                           mcpc_host_event_cb cb,
                                           void *userdata,
                                           mcpc_free_cb userdata_free);

/**
 * Asks `cb` for the values configuration files take from the host (see
 * mcpc_host_resolve_cb), replacing any resolver set before; NULL `cb` removes it.
 * Each (kind, reference) is asked once per file, however often the file names it.
 * `userdata_free` (may be NULL) runs once, when the host is freed or the resolver
 * replaced; it also runs if this call fails.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL host).
 *
 * # Safety
 * `host` is NULL or live; `cb` may be called with `userdata` until `userdata_free` runs.
 */
mcpc_status_t mcpc_host_set_resolver(const mcpc_host_t *host,
                                     mcpc_host_resolve_cb cb,
                                     void *userdata,
                                     mcpc_free_cb userdata_free);

/**
 * Sets a variable configuration files may name as `${NAME}`, such as
 * `workspaceFolder` (`userHome` is $HOME unless set). A host variable comes before
 * the environment's of the same name. Applies to files added later.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `host` is NULL or live; the strings are NULL or NUL-terminated.
 */
mcpc_status_t mcpc_host_set_variable(const mcpc_host_t *host,
                                     const char *name,
                                     const char *value);

/**
 * Sets which of this process's environment stdio servers started later inherit
 * (MCPC_ENV_NO_SECRETS, MCPC_ENV_PASS_ALL or MCPC_ENV_ALLOW); `names` (`count` of them) are the allowed names for
 * MCPC_ENV_ALLOW and are ignored otherwise. A server's own `env` is always passed.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL host, another policy,
 * NULL `names` with a nonzero `count`), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `host` is NULL or live; `names` is NULL or holds `count` NUL-terminated strings.
 */
mcpc_status_t mcpc_host_set_env_policy(const mcpc_host_t *host,
                                       int32_t policy,
                                       const char *const *names,
                                       size_t count);

/**
 * Sets how many servers mcpc_host_start starts at once (at least 1; 64 by default).
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL host, 0).
 *
 * # Safety
 * `host` is NULL or live.
 */
mcpc_status_t mcpc_host_set_concurrency(const mcpc_host_t *host,
                                        size_t n);

/**
 * With `lazy` nonzero, mcpc_host_start leaves each server that has saved tools
 * (mcpc_host_load_catalog) idle (MCPC_SERVER_IDLE), and its first call starts it
 * (within the server's startup timeout); 0, the default, starts every server.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `host` is NULL or live.
 */
mcpc_status_t mcpc_host_set_lazy(const mcpc_host_t *host,
                                 int32_t lazy);

/**
 * Sets how tools and prompts are named in the catalog: `format` holds `{name}` (the
 * server's own name for the tool or prompt) once and `{server}` (the server's name in
 * the configuration) at most once, around text of `[A-Za-z0-9_-]` (at most 32
 * characters), for example `mcp__{server}__{name}`; NULL restores the default
 * `{server}__{name}`. The names are sanitized and cut to 64 characters with a stable
 * suffix as with the default. The catalog is made again at once (a
 * MCPC_HOST_CATALOG_CHANGED event when a name changed).
 * Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL host, a
 * malformed format, named in the message), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `host` is NULL or live; `format` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_host_set_name_format(const mcpc_host_t *host,
                                        const char *format);

/**
 * Reads a configuration file (`mcpServers`, VS Code's `servers` with `inputs`,
 * Zed's `context_servers`, or mcp.json's root map; docs/host.md lists the fields
 * and variables) and adds its servers, not started. All or none: a malformed
 * value, an unresolved variable or a name already added adds nothing.
 * `*out_added` (may be NULL) is set to the number of servers added.
 * Threads: any thread; the resolver runs on this one.
 * Errors: MCPC_ERR_INVALID_ARG (NULL, a name already added), MCPC_ERR_INVALID_UTF8,
 * MCPC_ERR_CONFIG (unreadable file, malformed value, unresolved variable: the
 * message names the file, the server and the field, never a value).
 *
 * # Safety
 * `host` is NULL or live; `path` is NULL or NUL-terminated; `out_added` is NULL or writable.
 */
mcpc_status_t mcpc_host_add_config(const mcpc_host_t *host,
                                   const char *path,
                                   size_t *out_added);

/**
 * Publishes a catalog saved from an earlier run, as mcpc_host_tools gave it: each
 * entry's tool goes to its server (by the server's name) when that server is added
 * and not started yet, so the catalog is whole before the servers are up; entries
 * of other servers are ignored. A server's listing replaces its saved tools once it
 * starts. `*out_taken` (may be NULL) is set to the number of tools taken.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL, not a catalog: the
 * message says which entry), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `host` is NULL or live; `catalog_json` is NULL or NUL-terminated; `out_taken` is
 * NULL or writable.
 */
mcpc_status_t mcpc_host_load_catalog(const mcpc_host_t *host,
                                     const char *catalog_json,
                                     size_t *out_taken);

/**
 * Adds a stdio server named `name` that runs `argv` (as mcpc_client_connect_stdio),
 * with `opts` (NULL: the host's defaults), not started.
 * Ownership: the strings and `opts` are read during the call.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL, argc 0, empty or taken
 * name), MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `host` is NULL or live; `name` is NULL or NUL-terminated; `argv` is NULL or holds
 * `argc` NUL-terminated strings; `opts` is NULL or live.
 */
mcpc_status_t mcpc_host_add_stdio(const mcpc_host_t *host,
                                  const char *name,
                                  const char *const *argv,
                                  size_t argc,
                                  const mcpc_options_t *opts);

/**
 * Adds an HTTP server named `name` at `url` (Streamable HTTP, falling back to the
 * HTTP+SSE transport as mcpc_client_connect_http does), with `opts` (NULL: the
 * host's defaults), not started. The URL is checked when the server starts.
 * Threads: any thread. Errors: MCPC_ERR_INVALID_ARG (NULL, empty or taken name),
 * MCPC_ERR_INVALID_UTF8.
 *
 * # Safety
 * `host` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or live.
 */
mcpc_status_t mcpc_host_add_http(const mcpc_host_t *host,
                                 const char *name,
                                 const char *url,
                                 const mcpc_options_t *opts);

/**
 * Starts every added server not started yet, at most the concurrency at once (64), each
 * within its startup timeout (its configuration's, else its options' timeout), and
 * waits until each is ready or failed. Each change is reported (mcpc_host_event_cb),
 * then the summary (MCPC_HOST_SETTLED). A failed server leaves the others running.
 * Threads: any thread except mcpc's own.
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_WOULD_DEADLOCK, and the error of the
 * first server marked `required` that did not start (its message names it).
 *
 * # Safety
 * `host` is NULL or live.
 */
mcpc_status_t mcpc_host_start(const mcpc_host_t *host);

/**
 * The catalog: JSON `{"tools": [{"name": QUALIFIED, "server": NAME, "tool": {...as
 * listed}}], "collisions": [{"name", "kept", "renamed", "renamedTo"}]}`. A qualified
 * name is `SERVER__TOOL` in `[A-Za-z0-9_-]`, at most 64 characters (cut, with a stable
 * hash suffix, when longer; the same suffix renames the later of two tools that would
 * share a name, and the collision is listed). Only ready servers' tools, after their
 * include and exclude lists.
 * Ownership: `*out_json` is the caller's; free with mcpc_string_free.
 * Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `host` is NULL or live; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_host_tools(const mcpc_host_t *host,
                              char **out_json);

/**
 * Every server's state: JSON `[{"name", "state", "tools": N, "error": {"status",
 * "message"}, "stderr": [last lines]}]` in the order added (`tools`: as the server
 * listed them, before its include and exclude lists); `state` is one of
 * "added", "starting", "ready", "failed", "needs_login", "disabled", "restarting";
 * `error` and `stderr` appear for a server that failed.
 * Ownership: `*out_json` is the caller's; free with mcpc_string_free.
 * Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `host` is NULL or live; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_host_status(const mcpc_host_t *host,
                               char **out_json);

/**
 * Calls the tool with qualified name `qualified` (see mcpc_host_tools) on its server,
 * with that server's timeout unless `opts` sets one, and waits for its result, as
 * mcpc_client_call_tool does.
 * Ownership: as mcpc_client_call_tool's. Threads: any thread, concurrently; not from
 * mcpc callbacks.
 * An idle server (mcpc_host_set_lazy), or one still starting, is started or waited
 * for first.
 * Errors: MCPC_ERR_UNKNOWN_NAME (no such tool in the catalog: never listed, excluded,
 * or its server failed), the error of a server that did not start, MCPC_ERR_CLOSED,
 * and those of mcpc_client_call_tool.
 *
 * # Safety
 * `host` is NULL or live; strings are NULL or NUL-terminated; `opts` is NULL or
 * initialised; `out_result` is NULL or writable.
 */
mcpc_status_t mcpc_host_call_tool(const mcpc_host_t *host,
                                  const char *qualified,
                                  const char *arguments_json,
                                  const mcpc_call_opts_t *opts,
                                  mcpc_result_t **out_result);

/**
 * Every server's resources and resource templates, as listed: JSON `{"resources":
 * [{"uri", "server", "resource": {...}}], "templates": [{"server", "template":
 * {...}}], "collisions": [{"uri", "kept", "dropped"}]}` (a URI two servers listed
 * routes to the one added first; the collision is listed). Only servers that
 * declare resources are asked; saved catalogs hold tools only.
 * Ownership: `*out_json` is the caller's; free with mcpc_string_free.
 * Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `host` is NULL or live; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_host_resources(const mcpc_host_t *host,
                                  char **out_json);

/**
 * Reads resource `uri` from the server that listed it, else from the server with
 * the template whose literal start (before its first `{`) is the longest start of
 * `uri`; otherwise as mcpc_client_read_resource. An idle server is started first.
 * Ownership: `*out_contents` is the caller's (free with mcpc_contents_free).
 * Threads: any thread, concurrently; not from mcpc callbacks.
 * Errors: MCPC_ERR_UNKNOWN_NAME (no server listed it or a template it fits),
 * MCPC_ERR_CLOSED, and those of mcpc_client_read_resource.
 *
 * # Safety
 * `host` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or
 * initialised; `out_contents` is NULL or writable.
 */
mcpc_status_t mcpc_host_read_resource(const mcpc_host_t *host,
                                      const char *uri,
                                      const mcpc_call_opts_t *opts,
                                      mcpc_contents_t **out_contents);

/**
 * Every server's prompts under qualified names (the same naming as tools, see
 * mcpc_host_set_name_format): JSON `{"prompts": [{"name", "server", "prompt":
 * {...}}], "collisions": [{"name", "kept", "renamed", "renamedTo"}]}`, each prompt as
 * its server listed it. Only servers that declare prompts are asked; saved catalogs
 * hold tools only.
 * Ownership: `*out_json` is the caller's; free with mcpc_string_free.
 * Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
 *
 * # Safety
 * `host` is NULL or live; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_host_prompts(const mcpc_host_t *host,
                                char **out_json);

/**
 * Gets the prompt with qualified name `qualified` (see mcpc_host_prompts) from its
 * server, with `arguments_json` as for mcpc_client_get_prompt, and that server's
 * timeout unless `opts` sets one. An idle server is started first.
 * Ownership: on success `*out_json` is the caller's (free with mcpc_string_free).
 * Threads: any thread, concurrently; not from mcpc callbacks.
 * Errors: MCPC_ERR_UNKNOWN_NAME (no such prompt in the catalog), MCPC_ERR_CLOSED,
 * and those of mcpc_client_get_prompt.
 *
 * # Safety
 * `host` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or
 * initialised; `out_json` is NULL or writable.
 */
mcpc_status_t mcpc_host_get_prompt(const mcpc_host_t *host,
                                   const char *qualified,
                                   const char *arguments_json,
                                   const mcpc_call_opts_t *opts,
                                   char **out_json);

/**
 * Stops server `name` and removes it; its tools leave the catalog.
 * Threads: any thread except mcpc's own. Errors: MCPC_ERR_INVALID_ARG (NULL),
 * MCPC_ERR_INVALID_UTF8, MCPC_ERR_UNKNOWN_NAME, MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `host` is NULL or live; `name` is NULL or NUL-terminated.
 */
mcpc_status_t mcpc_host_remove(const mcpc_host_t *host,
                               const char *name);

/**
 * Closes every server (each as mcpc_client_close): calls in flight return
 * MCPC_ERR_CLOSED, and so do later starts, adds and calls; no report is made once this
 * has begun, and a report under way on another thread is waited for. Idempotent. The
 * handle stays valid until mcpc_host_free.
 * Threads: any thread, also while other threads use the host; not from mcpc
 * callbacks (MCPC_ERR_WOULD_DEADLOCK; use mcpc_host_free there).
 * Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_WOULD_DEADLOCK.
 *
 * # Safety
 * `host` is NULL or live.
 */
mcpc_status_t mcpc_host_close(const mcpc_host_t *host);

/**
 * Closes every server (as mcpc_host_close) and frees the host. NULL is a no-op. A
 * report under way on another thread is waited for, so no callback uses the host
 * once this returns. Called from an mcpc callback it does not block on the servers:
 * their close finishes on an mcpc thread (the callback must not use the host after).
 * Threads: any thread, once no other thread is calling the host.
 *
 * # Safety
 * `host` is NULL or live, freed only once, with no call on it still running.
 */
void mcpc_host_free(mcpc_host_t *host);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* MCPC_H */
