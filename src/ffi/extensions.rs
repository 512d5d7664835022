//! Extensions through the C ABI: declaring one, and reading the server's.

use std::ffi::c_char;

use super::boundary::status;
use super::client::mcpc_client_t;
use super::cstr::{opt_str_in, str_in, string_out};
use super::options::{mcpc_options_t, with_options};
use super::ptr::{self, Out};
use crate::error::{mcpc_status_t, Status};

/// Declares the extension `id` (such as "io.modelcontextprotocol/tasks") with its
/// settings, `settings_json`: a JSON object, or NULL for `{}`. The client sends it in
/// `capabilities.extensions`: in `initialize` before 2026-07-28, and under 2026-07-28
/// in every request's client capabilities. A server offers an extension's tools and
/// methods only to a client that declared it. Declaring an id again replaces its
/// settings. The settings are sent as written.
/// Ownership: the strings are copied. Threads: as any options setter (one thread at a
/// time per options object).
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or id; an id not of the form
/// `prefix/name`, printable and without spaces; settings that are not a JSON object),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `opts` is NULL or a live options object; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_add_extension(
    opts: *mut mcpc_options_t,
    id: *const c_char,
    settings_json: *const c_char,
) -> mcpc_status_t {
    with_options("mcpc_options_add_extension", opts, |o| {
        // SAFETY: per the contract.
        let (id, settings) = unsafe { (str_in(id, "id")?, opt_str_in(settings_json, "settings_json")?) };
        o.add_extension(id, settings)
    })
}

/// The extensions the server offers: its `capabilities.extensions` (in its
/// `initialize` result, or under 2026-07-28 its `server/discover` result), exactly as
/// the server sent it, an object of extension ids and their settings. `*out_json` is
/// NULL (with MCPC_OK) when the server declared none. It is server data: check what
/// you read of it.
/// Ownership: on success `*out_json`, when not NULL, is owned by the caller; free with
/// mcpc_string_free.
/// Threads: any thread, concurrently.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `client` is NULL or live; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_server_extensions(
    client: *const mcpc_client_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_server_extensions", || {
        // SAFETY: per the contract.
        let out_json = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let c = unsafe { ptr::get(client) }?;
        let client = c.client();
        if let Some(json) = crate::client::extensions::offered(client.session().init_result.get()) {
            out_json.set(string_out(json));
        }
        Ok(Status::MCPC_OK)
    })
}
