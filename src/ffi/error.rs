//! The last error, versions, and owned strings.

use std::ffi::c_char;

use super::boundary::{boundary, LAST_ERROR};
use crate::error::{mcpc_status_t, Status};

/// The message of the last error on this thread: what failed and why, naming its
/// context (for example `tools/call "slow": timed out after 5000 ms`). "" when the last
/// mcpc call on this thread succeeded. Never NULL.
/// Ownership: borrowed; valid until the next call on this thread of an mcpc function
/// that returns mcpc_status_t (each of those clears it on entry and sets it on
/// failure). Accessors that return no status (mcpc_result_*, mcpc_tool_list_* other
/// than _to_json, mcpc_status_name, mcpc_last_error_*, the _free functions) leave it alone,
/// so after MCPC_ERR_TOOL the message and the result can be read in any order.
/// Threads: per thread; each thread sees its own last error.
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_last_error_message() -> *const c_char {
    boundary("mcpc_last_error_message", || {
        LAST_ERROR.with(|e| e.borrow().message.as_ptr())
    })
}

/// The status of the last error on this thread (MCPC_OK when the last call succeeded).
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_last_error_status() -> mcpc_status_t {
    boundary("mcpc_last_error_status", || LAST_ERROR.with(|e| e.borrow().status))
}

/// The JSON-RPC error code of the last error on this thread when it was MCPC_ERR_RPC
/// (or a handshake refused with a JSON-RPC error); 0 otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_last_error_rpc_code() -> i64 {
    boundary("mcpc_last_error_rpc_code", || LAST_ERROR.with(|e| e.borrow().rpc_code))
}

/// The name of a status value, such as "MCPC_ERR_TIMEOUT"; "MCPC_UNKNOWN_STATUS" for a
/// value this library does not define. Never NULL.
/// Ownership: static; never free it.
/// Threads: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_status_name(status: i32) -> *const c_char {
    boundary("mcpc_status_name", || {
        let name = STATUSES
            .iter()
            .find(|s| **s as i32 == status)
            .map_or("MCPC_UNKNOWN_STATUS", |s| s.name());
        // The names are static and NUL-free; keep NUL-terminated copies alive forever.
        static NAMES: std::sync::OnceLock<Vec<(String, std::ffi::CString)>> = std::sync::OnceLock::new();
        let names = NAMES.get_or_init(|| {
            STATUSES
                .iter()
                .map(|s| s.name())
                .chain(["MCPC_UNKNOWN_STATUS"])
                .map(|n| (n.to_string(), std::ffi::CString::new(n).expect("static name")))
                .collect()
        });
        names
            .iter()
            .find(|(n, _)| n == name)
            .map_or(std::ptr::null(), |(_, c)| c.as_ptr())
    })
}

const STATUSES: &[Status] = {
    use Status::*;
    &[
        MCPC_OK,
        MCPC_ERR_INVALID_ARG,
        MCPC_ERR_INVALID_UTF8,
        MCPC_ERR_PANIC,
        MCPC_ERR_TRANSPORT,
        MCPC_ERR_PROTOCOL,
        MCPC_ERR_HANDSHAKE,
        MCPC_ERR_RPC,
        MCPC_ERR_TOOL,
        MCPC_ERR_TIMEOUT,
        MCPC_ERR_CANCELLED,
        MCPC_ERR_CLOSED,
        MCPC_ERR_CURSOR_REPEATED,
        MCPC_ERR_DUPLICATE_TOOL,
        MCPC_ERR_TOO_MANY_PAGES,
        MCPC_ERR_MESSAGE_TOO_LARGE,
        MCPC_ERR_SPAWN,
        MCPC_ERR_WOULD_DEADLOCK,
        MCPC_ERR_INSECURE_URL,
        MCPC_ERR_TLS,
        MCPC_ERR_HTTP,
        MCPC_ERR_AUTH,
        MCPC_ERR_SESSION_EXPIRED,
        MCPC_ERR_UNSUPPORTED_VERSION,
        MCPC_ERR_NOT_SUPPORTED,
        MCPC_ERR_HEADER_MISMATCH,
        MCPC_ERR_MISSING_CAPABILITY,
        MCPC_ERR_INPUT_REQUIRED,
        MCPC_ERR_LOGIN_REQUIRED,
        MCPC_ERR_LOGIN_CANCELLED,
        MCPC_ERR_AUTH_SERVER,
        MCPC_ERR_SERVER_EXITED,
        MCPC_ERR_ALREADY_COMPLETED,
        MCPC_ERR_INPUT_INVALID,
        MCPC_ERR_PROXY_AUTH,
        MCPC_ERR_OUTPUT_SCHEMA,
        MCPC_ERR_INTEGRITY,
        MCPC_ERR_TASK_DETACHED,
        MCPC_ERR_CONFIG,
        MCPC_ERR_UNKNOWN_NAME,
    ]
};

/// This library's version, "MAJOR.MINOR.PATCH"; equals the MCPC_VERSION macros of the
/// header it was built with. Ownership: static; never free it. Threads: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Frees a string that mcpc handed out as owned (`char *`). NULL is a no-op.
/// Never pass it a borrowed (`const char *`) string, and never free mcpc strings with free().
///
/// # Safety
/// `s` is NULL or an owned string from mcpc, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_string_free(s: *mut c_char) {
    // SAFETY: per the contract.
    boundary("mcpc_string_free", || unsafe { super::cstr::string_free(s) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_has_its_name() {
        let last = Status::MCPC_ERR_UNKNOWN_NAME as i32;
        for v in 0..=last {
            // SAFETY: mcpc_status_name returns a static NUL-terminated string.
            let name = unsafe { std::ffi::CStr::from_ptr(mcpc_status_name(v)) }
                .to_str()
                .unwrap();
            assert_ne!(name, "MCPC_UNKNOWN_STATUS", "status {v}");
        }
        assert_eq!(
            STATUSES.len() as i32,
            last + 1,
            "a status is listed twice or the list is behind"
        );
    }
}
