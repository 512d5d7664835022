//! `mcpc_options_t`: the settings a client is made with.

use std::ffi::{c_char, c_void};
use std::time::Duration;

use super::boundary::boundary;
use super::cstr::{opt_str_in, str_in};
use super::ptr::{self, Handle};
use super::userdata::{mcpc_free_cb, Userdata};
use crate::config::{Config, HttpMode, HttpVersion};
use crate::error::mcpc_status_t;
use crate::error::{Error, Result, Status};
use crate::protocol::{self, ClientInfo, Negotiation};
use crate::transport::stdio::StderrMode;

/// Client settings: a builder. Make it with mcpc_options_new, set what you need,
/// pass it to a connect function (which copies it; the same options may make many
/// clients), and free it with mcpc_options_free.
/// Threads: not thread-safe; use one options object from one thread at a time.
pub struct mcpc_options_t {
    _private: [u8; 0],
}

impl Handle for mcpc_options_t {
    type Rust = Config;
    const NAME: &'static str = "options";
}

/// stderr of a stdio server is read and discarded (the default).
pub const MCPC_STDERR_DISCARD: i32 = 0;
/// stderr of a stdio server goes to this process's stderr.
pub const MCPC_STDERR_INHERIT: i32 = 1;

/// Receives one line the server wrote to stderr: `line` (not NUL-terminated, may
/// hold any bytes) of `len` bytes, borrowed for the duration of the call.
/// Runs on an mcpc thread; calls for one client never overlap. It must not block
/// for long, and blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_stderr_cb = Option<unsafe extern "C" fn(userdata: *mut c_void, line: *const c_char, len: usize)>;

/// Receives a server notification the client does not handle itself, such as
/// `notifications/message` or `notifications/tools/list_changed`: its method and its
/// params as JSON (NULL when absent), both NUL-terminated and borrowed for the
/// duration of the call. Runs on an mcpc thread; calls for one client never overlap.
/// It must not block for long; blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_notification_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, method: *const c_char, params_json: *const c_char)>;

pub(super) fn positive_ms(ms: i64, what: &str) -> Result<Duration> {
    if ms <= 0 {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("{what} must be positive, got {ms}"),
        ));
    }
    Ok(Duration::from_millis(ms as u64))
}

pub(super) fn with_options(
    name: &str,
    opts: *mut mcpc_options_t,
    f: impl FnOnce(&mut Config) -> Result<()>,
) -> mcpc_status_t {
    ptr::with_builder(name, opts, f)
}

/// Makes an options object with the defaults: timeout 60000 ms, the newest
/// protocol version, client info "mcpc" and this library's version, at most 1000
/// pages per listing, messages up to 16 MiB, stderr discarded, close grace 2000 ms
/// then 2000 ms after SIGTERM.
/// Ownership: the caller owns it; free with mcpc_options_free.
/// Threads: any thread.
/// Errors: none (NULL only if allocation panicked).
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_options_new() -> *mut mcpc_options_t {
    boundary(
        "mcpc_options_new",
        || ptr::into_raw::<mcpc_options_t>(Config::default()),
    )
}

/// Frees an options object. NULL is a no-op. Clients made from it are not affected.
///
/// # Safety
/// `opts` is NULL or a live options object, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_free(opts: *mut mcpc_options_t) {
    // SAFETY: per the contract.
    boundary("mcpc_options_free", || drop(unsafe { ptr::take(opts) }))
}

/// Sets the default timeout, in milliseconds, for connecting (the handshake), for each
/// whole tool listing and for each call. A call may override it.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or `timeout_ms` not positive).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_timeout_ms(opts: *mut mcpc_options_t, timeout_ms: i64) -> mcpc_status_t {
    with_options("mcpc_options_set_timeout_ms", opts, |o| {
        o.set_timeout(positive_ms(timeout_ms, "timeout_ms")?)
    })
}

/// Sets how long, in milliseconds, the `server/discover` probe of the default
/// negotiation waits for an answer over stdio or the caller-supplied stream transport
/// before it also sends `initialize` (10000 by default). The connect timeout still
/// bounds the whole handshake. HTTP servers always answer, so HTTP ignores it.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or `window_ms` not positive).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_probe_window_ms(opts: *mut mcpc_options_t, window_ms: i64) -> mcpc_status_t {
    with_options("mcpc_options_set_probe_window_ms", opts, |o| {
        o.set_probe_window(positive_ms(window_ms, "window_ms")?)
    })
}

/// Sets the `clientInfo` sent in the handshake. Both strings are copied.
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_client_info(
    opts: *mut mcpc_options_t,
    name: *const c_char,
    version: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_set_client_info", opts, |o| {
        // SAFETY: per the contract.
        let (name, version) = unsafe { (str_in(name, "name")?, str_in(version, "version")?) };
        o.client.client_info = ClientInfo {
            name: name.into(),
            version: version.into(),
        };
        Ok(())
    })
}

/// Pins the protocol version: "2026-07-28" (the stateless revision: no `initialize`,
/// `server/discover` instead), or one asked for in `initialize`: "2025-11-25",
/// "2025-06-18", "2025-03-26", "2024-11-05". A pinned client never falls back to
/// another version. NULL unpins (back to MCPC_NEGOTIATE_AUTO).
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, or a version this library does not speak),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; `version` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_protocol_version(
    opts: *mut mcpc_options_t,
    version: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_set_protocol_version", opts, |o| {
        // SAFETY: per the contract.
        let v = unsafe { opt_str_in(version, "version") }?;
        o.client.negotiation = match v {
            None => Negotiation::Auto,
            Some(v) if protocol::ALL_VERSIONS.contains(&v) => Negotiation::Pinned(v.to_string()),
            Some(v) => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!(
                        "protocol version {v:?} is not supported (supported: {})",
                        protocol::ALL_VERSIONS.join(", ")
                    ),
                ))
            }
        };
        Ok(())
    })
}

/// Negotiation mode: probe with `server/discover`, use 2026-07-28 when the server
/// speaks it and fall back to `initialize` for older servers (the default).
pub const MCPC_NEGOTIATE_AUTO: i32 = 0;
/// Negotiation mode: `initialize` only (2024-11-05 to 2025-11-25), never a probe.
pub const MCPC_NEGOTIATE_LEGACY: i32 = 1;

/// Chooses how the protocol version is negotiated: MCPC_NEGOTIATE_AUTO (the default)
/// or MCPC_NEGOTIATE_LEGACY. Clears a pinned version. In auto mode the fallback to
/// `initialize` happens only on answers that show an older server (a JSON-RPC error to
/// the probe, HTTP 400/404/405 without a 2026-07-28 error, on stdio silence or a server
/// that exits on the probe, which is restarted once); 401/403, 5xx, TLS errors and HTTP
/// timeouts fail the connect instead. The outcome holds for the client's lifetime.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or an unknown mode).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_negotiation(opts: *mut mcpc_options_t, mode: i32) -> mcpc_status_t {
    with_options("mcpc_options_set_negotiation", opts, |o| {
        o.client.negotiation = match mode {
            MCPC_NEGOTIATE_AUTO => Negotiation::Auto,
            MCPC_NEGOTIATE_LEGACY => Negotiation::Legacy,
            _ => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("unknown negotiation mode {mode}"),
                ))
            }
        };
        Ok(())
    })
}

/// Sets the most pages one tool listing follows before failing with MCPC_ERR_TOO_MANY_PAGES.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or 0).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_max_pages(opts: *mut mcpc_options_t, max_pages: usize) -> mcpc_status_t {
    with_options("mcpc_options_set_max_pages", opts, |o| o.set_max_pages(max_pages))
}

/// Sets the largest message accepted from the server, in bytes (default 16 MiB).
/// A longer message fails the connection with MCPC_ERR_MESSAGE_TOO_LARGE.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or below 1024).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_max_message_size(opts: *mut mcpc_options_t, bytes: usize) -> mcpc_status_t {
    with_options("mcpc_options_set_max_message_size", opts, |o| {
        o.set_max_message_size(bytes)
    })
}

/// Sets (or with `value` NULL, removes) a variable in a stdio server's environment.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or name, empty name or one with '='),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_env(
    opts: *mut mcpc_options_t,
    name: *const c_char,
    value: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_set_env", opts, |o| {
        // SAFETY: per the contract.
        let (name, value) = unsafe { (str_in(name, "name")?, opt_str_in(value, "value")?) };
        o.set_env(name, value)
    })
}

/// Starts a stdio server from an empty environment instead of this process's;
/// variables set with mcpc_options_set_env still apply.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_clear_env(opts: *mut mcpc_options_t) -> mcpc_status_t {
    with_options("mcpc_options_clear_env", opts, |o| {
        o.clear_env = true;
        Ok(())
    })
}

/// Sets the working directory of a stdio server (NULL: this process's).
/// Errors: MCPC_ERR_INVALID_ARG (NULL options), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; `dir` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_cwd(opts: *mut mcpc_options_t, dir: *const c_char) -> mcpc_status_t {
    with_options("mcpc_options_set_cwd", opts, |o| {
        // SAFETY: per the contract.
        o.cwd = unsafe { opt_str_in(dir, "dir") }?.map(Into::into);
        Ok(())
    })
}

/// Chooses what happens to a stdio server's stderr: MCPC_STDERR_DISCARD (default)
/// or MCPC_STDERR_INHERIT. Replaces any stderr callback.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or an unknown mode).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_stderr(opts: *mut mcpc_options_t, mode: i32) -> mcpc_status_t {
    with_options("mcpc_options_set_stderr", opts, |o| {
        o.stderr = match mode {
            MCPC_STDERR_DISCARD => StderrMode::Discard,
            MCPC_STDERR_INHERIT => StderrMode::Inherit,
            _ => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("unknown stderr mode {mode}"),
                ))
            }
        };
        Ok(())
    })
}

/// Hands each line a stdio server writes to stderr to `cb`. `userdata_free` (may be
/// NULL) runs exactly once, when the options and every client made from them are freed,
/// on whichever thread frees the last one; it also runs if this call fails.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
///
/// # Safety
/// `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
/// `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_stderr_callback(
    opts: *mut mcpc_options_t,
    cb: mcpc_stderr_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_stderr_callback", opts, |o| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
        o.stderr = StderrMode::Lines(std::sync::Arc::new(move |line: &[u8]| {
            // SAFETY: the caller's callback, with its own userdata and a borrowed buffer.
            unsafe { cb(ud.ptr(), line.as_ptr().cast(), line.len()) }
        }));
        Ok(())
    })
}

/// Hands server notifications the client does not handle itself to `cb` (see
/// mcpc_notification_cb). `userdata_free` (may be NULL) runs exactly once, when the
/// options and every client made from them are freed; it also runs if this call fails.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
///
/// # Safety
/// `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
/// `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_notification_callback(
    opts: *mut mcpc_options_t,
    cb: mcpc_notification_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_notification_callback", opts, |o| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
        o.client.on_notification = Some(std::sync::Arc::new(move |method: &str, params: Option<&str>| {
            let method = super::boundary::c_message(method);
            let params = params.map(super::boundary::c_message);
            let params_ptr = params.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
            // SAFETY: the caller's callback, with borrowed NUL-terminated strings.
            unsafe { cb(ud.ptr(), method.as_ptr(), params_ptr) }
        }));
        Ok(())
    })
}

/// Gives mcpc the current bearer token for HTTP: write it NUL-terminated into `buf`
/// (`buf_len` bytes, 8192) and return 0, or return nonzero for "no token".
/// `www_authenticate` is NULL when mcpc asks for the first token, and the server's
/// `WWW-Authenticate` header (or "") after a 401, when the host may refresh it; a
/// second 401 for the same request is MCPC_ERR_AUTH. Runs on an mcpc blocking-pool
/// thread, so it may block (an OAuth refresh); calls never overlap for one client.
/// Blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_token_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        www_authenticate: *const c_char,
        buf: *mut c_char,
        buf_len: usize,
    ) -> i32,
>;

const TOKEN_BUF: usize = 8192;

/// Adds a header to every HTTP request (for example an API key). Header names the
/// transport sets itself (Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version,
/// Last-Event-ID, Host, Content-Length) are refused. Headers never follow a redirect to
/// another origin (such redirects are refused).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an invalid or reserved name, a value with
/// control characters; the message never repeats the value), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_add_header(
    opts: *mut mcpc_options_t,
    name: *const c_char,
    value: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_add_header", opts, |o| {
        // SAFETY: per the contract.
        let (name, value) = unsafe { (str_in(name, "name")?, str_in(value, "value")?) };
        o.add_header(name, value)
    })
}

/// HTTP transport mode: Streamable HTTP, and when its POST is answered 400, 404 or 405
/// without a JSON-RPC error body, the HTTP+SSE transport of 2024-11-05 (the default).
pub const MCPC_HTTP_AUTO: i32 = 0;
/// HTTP transport mode: Streamable HTTP only.
pub const MCPC_HTTP_STREAMABLE: i32 = 1;
/// HTTP transport mode: the HTTP+SSE transport of 2024-11-05 only (the URL is its
/// event stream's, such as `https://host/sse`).
pub const MCPC_HTTP_SSE: i32 = 2;

/// Chooses the HTTP transport mcpc_client_connect_http uses: MCPC_HTTP_AUTO (the
/// default), MCPC_HTTP_STREAMABLE or MCPC_HTTP_SSE. Over the HTTP+SSE transport the
/// version is agreed by `initialize` (2024-11-05 to 2025-11-25) unless one is pinned;
/// a GET opens the event stream, whose `endpoint` event names where messages are
/// POSTed (the same origin only, else MCPC_ERR_PROTOCOL); headers, the bearer token
/// (or the token callback's first token), CAs and proxies apply as for Streamable
/// HTTP; OAuth does not (it needs Streamable HTTP).
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, an unknown mode).
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_http_transport(opts: *mut mcpc_options_t, mode: i32) -> mcpc_status_t {
    with_options("mcpc_options_set_http_transport", opts, |o| {
        o.http_transport = match mode {
            MCPC_HTTP_AUTO => HttpMode::Auto,
            MCPC_HTTP_STREAMABLE => HttpMode::Streamable,
            MCPC_HTTP_SSE => HttpMode::Sse,
            other => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("unknown HTTP transport mode {other}"),
                ))
            }
        };
        Ok(())
    })
}

/// HTTP version: HTTP/2 for `https://` endpoints whose server offers it (ALPN),
/// else HTTP/1.1; HTTP/1.1 for `http://` ones (the default).
pub const MCPC_HTTP_VERSION_AUTO: i32 = 0;
/// HTTP version: HTTP/1.1 only, as curl's `--http1.1`.
pub const MCPC_HTTP_VERSION_1_1: i32 = 1;
/// HTTP version: HTTP/2 only, as curl's `--http2-prior-knowledge`: over plain TCP
/// from the first byte for `http://` (h2c), and for `https://` with `h2` the only
/// protocol offered by ALPN (a server that does not agree is MCPC_ERR_TRANSPORT).
pub const MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE: i32 = 2;

/// Chooses the HTTP versions mcpc_client_connect_http may speak:
/// MCPC_HTTP_VERSION_AUTO (the default), MCPC_HTTP_VERSION_1_1 or
/// MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE. Over HTTP/2 one connection per endpoint
/// carries every request at once, and a cancelled request resets only its own
/// stream. An `http://` endpoint reached through a proxy is asked in HTTP/1.1's
/// absolute form, so prior knowledge there fails to connect with
/// MCPC_ERR_NOT_SUPPORTED. Authorization servers (OAuth) are reached over HTTP/1.1.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, an unknown version).
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_http_version(opts: *mut mcpc_options_t, version: i32) -> mcpc_status_t {
    with_options("mcpc_options_set_http_version", opts, |o| {
        o.http_version = match version {
            MCPC_HTTP_VERSION_AUTO => HttpVersion::Auto,
            MCPC_HTTP_VERSION_1_1 => HttpVersion::Http11,
            MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE => HttpVersion::Http2PriorKnowledge,
            other => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("unknown HTTP version {other}"),
                ))
            }
        };
        Ok(())
    })
}

/// Sends `Authorization: Bearer <token>` on every HTTP request (NULL clears it). For
/// tokens that change, use mcpc_options_set_token_callback instead.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, a token with control characters),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; `token` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_bearer_token(
    opts: *mut mcpc_options_t,
    token: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_set_bearer_token", opts, |o| {
        // SAFETY: per the contract.
        let token = unsafe { opt_str_in(token, "token") }?;
        o.set_bearer(token)
    })
}

/// Sets the token callback (see mcpc_token_cb); it takes precedence over a fixed
/// bearer token once it has given one. `userdata_free` (may be NULL) runs exactly once,
/// when the options and every client made from them are freed (also if this fails).
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
///
/// # Safety
/// `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
/// `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_token_callback(
    opts: *mut mcpc_options_t,
    cb: mcpc_token_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_token_callback", opts, |o| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
        o.token_fn = Some(std::sync::Arc::new(move |challenge: Option<&str>| {
            let challenge = challenge.map(super::boundary::c_message);
            let cptr = challenge.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
            let mut buf = vec![0u8; TOKEN_BUF];
            let _scope = crate::drive::runtime::CallbackScope::enter();
            // SAFETY: the caller's callback with its userdata, a borrowed challenge and
            // a writable buffer of TOKEN_BUF bytes.
            let rc = unsafe { cb(ud.ptr(), cptr, buf.as_mut_ptr().cast(), TOKEN_BUF) };
            if rc != 0 {
                return None;
            }
            let end = buf.iter().position(|b| *b == 0)?;
            String::from_utf8(buf[..end].to_vec()).ok().filter(|t| !t.is_empty())
        }));
        Ok(())
    })
}

/// Trusts the CA certificates in `pem` (`len` bytes of PEM) for HTTPS, in addition to
/// the system's roots. Certificates are always verified; this is how a test or private
/// CA is trusted.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, no certificate in the PEM, a malformed one).
///
/// # Safety
/// `opts` is NULL or a live options object; `pem` is NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_add_ca_pem(
    opts: *mut mcpc_options_t,
    pem: *const c_char,
    len: usize,
) -> mcpc_status_t {
    with_options("mcpc_options_add_ca_pem", opts, |o| {
        if pem.is_null() || len == 0 {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "pem is NULL or empty"));
        }
        // SAFETY: `len` readable bytes per the contract.
        let bytes = unsafe { std::slice::from_raw_parts(pem.cast::<u8>(), len) }.to_vec();
        add_ca(o, bytes)
    })
}

/// As mcpc_options_add_ca_pem, reading the PEM from the file at `path` now.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, unreadable file, no certificate), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; `path` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_add_ca_file(opts: *mut mcpc_options_t, path: *const c_char) -> mcpc_status_t {
    with_options("mcpc_options_add_ca_file", opts, |o| {
        // SAFETY: per the contract.
        let path = unsafe { str_in(path, "path") }?;
        let bytes = std::fs::read(path).map_err(|e| {
            Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!("cannot read CA file {path:?}: {e}"),
            )
        })?;
        add_ca(o, bytes)
    })
}

fn add_ca(o: &mut Config, pem: Vec<u8>) -> Result<()> {
    use rustls_pki_types::pem::PemObject;
    let certs = rustls_pki_types::CertificateDer::pem_slice_iter(&pem).collect::<std::result::Result<Vec<_>, _>>();
    match certs {
        Ok(c) if !c.is_empty() => {
            o.ca_pem.push(pem);
            Ok(())
        }
        Ok(_) => Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "the PEM holds no certificate")),
        Err(e) => Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("the PEM is malformed: {e}"),
        )),
    }
}

/// Opens the optional standalone GET stream after connecting over HTTP, so server
/// notifications sent outside any request reach the notification callback (405 from
/// the server means it offers none: not an error). Off by default. The stream
/// reconnects with backoff, honouring `retry` and sending `Last-Event-ID`.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_standalone_stream(opts: *mut mcpc_options_t, enabled: bool) -> mcpc_status_t {
    with_options("mcpc_options_set_standalone_stream", opts, |o| {
        o.standalone_stream = enabled;
        Ok(())
    })
}

/// Checks each tool result's `structuredContent` against the `outputSchema` its tool
/// had in the client's last mcpc_client_list_tools (JSON Schema draft 2020-12 unless
/// the schema names another; no `$ref` outside the schema is fetched, and a schema
/// that needs one, or does not compile, leaves its tool unchecked). A result that does
/// not fit, or has no `structuredContent` though its tool has a schema, is
/// MCPC_ERR_OUTPUT_SCHEMA with the result still handed out, as for MCPC_ERR_TOOL; an
/// `isError` result is never checked; a tool not listed yet is not checked. Off by
/// default.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_validate_output(opts: *mut mcpc_options_t, enabled: bool) -> mcpc_status_t {
    with_options("mcpc_options_set_validate_output", opts, |o| {
        o.client.validate_output = enabled;
        Ok(())
    })
}
