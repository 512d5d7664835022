//! Status codes and the core error type.

use std::fmt;

/// Status of an mcpc call. `MCPC_OK` is success; every other value is an error
/// whose message is available from `mcpc_last_error_message()` (blocking calls)
/// or passed to the completion callback (asynchronous calls).
///
/// The numeric values are stable and are never renumbered; new codes are only added.
#[repr(C)]
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum mcpc_status_t {
    /// Success.
    MCPC_OK = 0,
    /// A required argument was NULL, out of range or malformed (for example JSON that does not parse).
    MCPC_ERR_INVALID_ARG = 1,
    /// A string argument was not valid UTF-8.
    MCPC_ERR_INVALID_UTF8 = 2,
    /// A Rust panic was caught at the C boundary; the message says where. The handle stays usable.
    MCPC_ERR_PANIC = 3,
    /// The transport failed: the server process exited, a pipe broke, a connection failed.
    MCPC_ERR_TRANSPORT = 4,
    /// The server broke the protocol (malformed message, message over the size limit, bad result shape).
    MCPC_ERR_PROTOCOL = 5,
    /// The initialize handshake failed (error reply, unsupported or empty protocol version).
    MCPC_ERR_HANDSHAKE = 6,
    /// The server answered with a JSON-RPC error; `mcpc_last_error_rpc_code()` gives its code.
    MCPC_ERR_RPC = 7,
    /// The tool ran and reported failure (`isError: true`); the result is still handed out.
    MCPC_ERR_TOOL = 8,
    /// The request did not complete within its timeout; `notifications/cancelled` was sent.
    MCPC_ERR_TIMEOUT = 9,
    /// The request was cancelled by the caller; `notifications/cancelled` was sent.
    MCPC_ERR_CANCELLED = 10,
    /// The client was closed, or its connection had already failed before this call.
    MCPC_ERR_CLOSED = 11,
    /// A listing returned a cursor already seen in it (a loop).
    MCPC_ERR_CURSOR_REPEATED = 12,
    /// `tools/list` returned the same tool name twice (or another listing the same
    /// resource URI, template or prompt name).
    MCPC_ERR_DUPLICATE_TOOL = 13,
    /// A listing needed more pages than the configured maximum.
    MCPC_ERR_TOO_MANY_PAGES = 14,
    /// A message from the server exceeded the maximum message size.
    MCPC_ERR_MESSAGE_TOO_LARGE = 15,
    /// The server process could not be started.
    MCPC_ERR_SPAWN = 16,
    /// A blocking mcpc call was made from an mcpc callback or library thread, where it would deadlock.
    MCPC_ERR_WOULD_DEADLOCK = 17,
    /// A URL was refused by policy before any connection was made (for example `http://` to a non-loopback host).
    MCPC_ERR_INSECURE_URL = 18,
    /// TLS failed (certificate not trusted, wrong host, handshake failure).
    MCPC_ERR_TLS = 19,
    /// The HTTP server answered with an unexpected status or content type.
    MCPC_ERR_HTTP = 20,
    /// Authentication failed (401/403 after the token callback had its chance).
    MCPC_ERR_AUTH = 21,
    /// The HTTP session expired (404 on a request that carried a session id).
    MCPC_ERR_SESSION_EXPIRED = 22,
    /// The server does not support any protocol version this client speaks.
    MCPC_ERR_UNSUPPORTED_VERSION = 23,
    /// The operation is not supported by this transport or protocol version.
    MCPC_ERR_NOT_SUPPORTED = 24,
    /// The server found the request's HTTP headers inconsistent with its body (-32020).
    MCPC_ERR_HEADER_MISMATCH = 25,
    /// The server requires client capabilities this client does not have (-32021).
    MCPC_ERR_MISSING_CAPABILITY = 26,
    /// The server asked for input this client cannot give (elicitation, sampling,
    /// roots), or kept asking past the round limit.
    MCPC_ERR_INPUT_REQUIRED = 27,
    /// Authorization needs a login that cannot happen now: headless mode with no
    /// usable stored credentials, or no way to open the authorization URL.
    MCPC_ERR_LOGIN_REQUIRED = 28,
    /// The host cancelled the login (`mcpc_auth_request_cancel`), or the user
    /// denied access at the authorization server.
    MCPC_ERR_LOGIN_CANCELLED = 29,
    /// The authorization server (or the server's authorization metadata) failed
    /// or broke the OAuth rules: an error response, a wrong issuer, no PKCE S256,
    /// a malformed or oversized answer. The message says which.
    MCPC_ERR_AUTH_SERVER = 30,
    /// The stdio server exited (or its connection failed) while the request was in
    /// flight, and mcpc_options_set_restart is on: mcpc starts the server again, and
    /// the request may be sent again (it may or may not have run). Also a request made
    /// while the server is being started again, from a call that does not wait for it.
    MCPC_ERR_SERVER_EXITED = 31,
    /// An input request handle (`mcpc_input_t`) was completed a second time; the first
    /// answer stands.
    MCPC_ERR_ALREADY_COMPLETED = 32,
    /// The host's answer to a server's input request does not fit what was asked (an
    /// elicitation's content against its requested schema, a malformed result). Nothing
    /// was sent; the request stays open for a corrected answer.
    MCPC_ERR_INPUT_INVALID = 33,
    /// The HTTP proxy wants credentials, or refused those given (407). Other proxy
    /// failures (not reached, a tunnel refused) are MCPC_ERR_TRANSPORT naming the proxy.
    MCPC_ERR_PROXY_AUTH = 34,
    /// The tool's result does not fit its `outputSchema` (checked only when
    /// mcpc_options_set_validate_output asks for it); the result is still handed out.
    MCPC_ERR_OUTPUT_SCHEMA = 35,
    /// A skill's file failed verification: its size or sha256 digest is not the one
    /// the skill's listing gives, its frontmatter differs from the listing's, or no
    /// listed skill names it (refused before anything was sent). Its content is not
    /// handed out.
    MCPC_ERR_INTEGRITY = 36,
    /// The call stopped following its task because the task callback asked it to
    /// (`MCPC_TASK_DETACH`): the task runs on on the server, and the reference the
    /// callback was given resumes it (mcpc_client_resume_task).
    MCPC_ERR_TASK_DETACHED = 37,
    /// A configuration file or value is malformed, or names a variable that has no
    /// value; the message names the file, the server and the field, never a value.
    MCPC_ERR_CONFIG = 38,
    /// No server, or no tool in the host's catalog, has that name.
    MCPC_ERR_UNKNOWN_NAME = 39,
}

pub use mcpc_status_t as Status;

impl Status {
    /// The constant's name, for messages and the CLI.
    pub fn name(self) -> &'static str {
        use mcpc_status_t::*;
        match self {
            MCPC_OK => "MCPC_OK",
            MCPC_ERR_INVALID_ARG => "MCPC_ERR_INVALID_ARG",
            MCPC_ERR_INVALID_UTF8 => "MCPC_ERR_INVALID_UTF8",
            MCPC_ERR_PANIC => "MCPC_ERR_PANIC",
            MCPC_ERR_TRANSPORT => "MCPC_ERR_TRANSPORT",
            MCPC_ERR_PROTOCOL => "MCPC_ERR_PROTOCOL",
            MCPC_ERR_HANDSHAKE => "MCPC_ERR_HANDSHAKE",
            MCPC_ERR_RPC => "MCPC_ERR_RPC",
            MCPC_ERR_TOOL => "MCPC_ERR_TOOL",
            MCPC_ERR_TIMEOUT => "MCPC_ERR_TIMEOUT",
            MCPC_ERR_CANCELLED => "MCPC_ERR_CANCELLED",
            MCPC_ERR_CLOSED => "MCPC_ERR_CLOSED",
            MCPC_ERR_CURSOR_REPEATED => "MCPC_ERR_CURSOR_REPEATED",
            MCPC_ERR_DUPLICATE_TOOL => "MCPC_ERR_DUPLICATE_TOOL",
            MCPC_ERR_TOO_MANY_PAGES => "MCPC_ERR_TOO_MANY_PAGES",
            MCPC_ERR_MESSAGE_TOO_LARGE => "MCPC_ERR_MESSAGE_TOO_LARGE",
            MCPC_ERR_SPAWN => "MCPC_ERR_SPAWN",
            MCPC_ERR_WOULD_DEADLOCK => "MCPC_ERR_WOULD_DEADLOCK",
            MCPC_ERR_INSECURE_URL => "MCPC_ERR_INSECURE_URL",
            MCPC_ERR_TLS => "MCPC_ERR_TLS",
            MCPC_ERR_HTTP => "MCPC_ERR_HTTP",
            MCPC_ERR_AUTH => "MCPC_ERR_AUTH",
            MCPC_ERR_SESSION_EXPIRED => "MCPC_ERR_SESSION_EXPIRED",
            MCPC_ERR_UNSUPPORTED_VERSION => "MCPC_ERR_UNSUPPORTED_VERSION",
            MCPC_ERR_NOT_SUPPORTED => "MCPC_ERR_NOT_SUPPORTED",
            MCPC_ERR_HEADER_MISMATCH => "MCPC_ERR_HEADER_MISMATCH",
            MCPC_ERR_MISSING_CAPABILITY => "MCPC_ERR_MISSING_CAPABILITY",
            MCPC_ERR_INPUT_REQUIRED => "MCPC_ERR_INPUT_REQUIRED",
            MCPC_ERR_LOGIN_REQUIRED => "MCPC_ERR_LOGIN_REQUIRED",
            MCPC_ERR_LOGIN_CANCELLED => "MCPC_ERR_LOGIN_CANCELLED",
            MCPC_ERR_AUTH_SERVER => "MCPC_ERR_AUTH_SERVER",
            MCPC_ERR_SERVER_EXITED => "MCPC_ERR_SERVER_EXITED",
            MCPC_ERR_ALREADY_COMPLETED => "MCPC_ERR_ALREADY_COMPLETED",
            MCPC_ERR_INPUT_INVALID => "MCPC_ERR_INPUT_INVALID",
            MCPC_ERR_PROXY_AUTH => "MCPC_ERR_PROXY_AUTH",
            MCPC_ERR_OUTPUT_SCHEMA => "MCPC_ERR_OUTPUT_SCHEMA",
            MCPC_ERR_INTEGRITY => "MCPC_ERR_INTEGRITY",
            MCPC_ERR_TASK_DETACHED => "MCPC_ERR_TASK_DETACHED",
            MCPC_ERR_CONFIG => "MCPC_ERR_CONFIG",
            MCPC_ERR_UNKNOWN_NAME => "MCPC_ERR_UNKNOWN_NAME",
        }
    }
}

/// An error from the core: a status, a message that names its context, and for
/// JSON-RPC errors the server's code and `data`.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    pub status: Status,
    pub message: String,
    pub rpc_code: Option<i64>,
    /// The HTTP status behind the error, for HTTP transport errors.
    pub http_status: Option<u16>,
    /// The `data` of a JSON-RPC error, as JSON.
    pub rpc_data: Option<String>,
}

/// Longest piece of peer-supplied text quoted in an error message.
pub const MAX_QUOTED: usize = 200;

impl Error {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        Error {
            status,
            message: message.into(),
            rpc_code: None,
            http_status: None,
            rpc_data: None,
        }
    }

    pub fn rpc(code: i64, message: impl Into<String>) -> Self {
        Error {
            status: Status::MCPC_ERR_RPC,
            message: message.into(),
            rpc_code: Some(code),
            http_status: None,
            rpc_data: None,
        }
    }

    /// Prefixes the message with a context such as `tools/call "echo"`.
    /// The error of an operation whose work panicked, or that was dropped before it
    /// completed: `what` names it.
    pub fn panicked(what: &str) -> Self {
        Error::new(
            Status::MCPC_ERR_PANIC,
            format!("{what}: internal panic; the operation ended without its outcome"),
        )
    }

    pub fn context(mut self, ctx: impl fmt::Display) -> Self {
        self.message = format!("{ctx}: {}", self.message);
        self
    }

    pub fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Quotes untrusted peer text for an error message: bounded in length, control
/// characters escaped.
pub fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_QUOTED) + 8);
    out.push('"');
    for (n, c) in text.chars().enumerate() {
        if n == MAX_QUOTED {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quote_bounds_and_escapes() {
        assert_eq!(quote("a\nb"), "\"a\\nb\"");
        let long = "x".repeat(1000);
        let q = quote(&long);
        assert!(q.len() < MAX_QUOTED + 10);
        assert!(q.ends_with("...\""));
    }

    #[test]
    fn context_prefixes() {
        let e = Error::new(Status::MCPC_ERR_TIMEOUT, "timed out").context("tools/call \"x\"");
        assert_eq!(e.message, "tools/call \"x\": timed out");
    }
}
