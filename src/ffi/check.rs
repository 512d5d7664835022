//! Checks of what a caller would pass to a connect or call function, made before
//! anything starts: a command-line front end reports a usage error without first
//! spawning a server or opening a connection.

use std::ffi::c_char;

use crate::error::{mcpc_status_t, Status};
use crate::ffi::boundary::status;
use crate::ffi::cstr::{opt_str_in, str_in};

/// Checks an endpoint URL as mcpc_client_connect_http would, without connecting:
/// `https://` to any host, `http://` only to loopback, no credentials in the URL.
/// Ownership: `url` is read during the call. Threads: any thread.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, not a URL, credentials in it, no host),
/// MCPC_ERR_INVALID_UTF8, MCPC_ERR_INSECURE_URL (plain http:// to a host that is not
/// loopback, or another scheme).
///
/// # Safety
/// `url` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_check_url(url: *const c_char) -> mcpc_status_t {
    status("mcpc_check_url", || {
        // SAFETY: per the contract.
        let url = unsafe { str_in(url, "url") }?;
        crate::url_policy::check_endpoint(url)?;
        Ok(Status::MCPC_OK)
    })
}

/// Checks a tool call's arguments as mcpc_client_call_tool would, without a client:
/// a JSON object, or NULL (or JSON `null`) for none.
/// Ownership: `arguments_json` is read during the call. Threads: any thread.
/// Errors: MCPC_ERR_INVALID_ARG (not JSON, or JSON that is not an object),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `arguments_json` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_check_arguments(arguments_json: *const c_char) -> mcpc_status_t {
    status("mcpc_check_arguments", || {
        // SAFETY: per the contract.
        let json = unsafe { opt_str_in(arguments_json, "arguments_json") }?;
        crate::result::parse_arguments(json)?;
        Ok(Status::MCPC_OK)
    })
}
