//! A host's resources and prompts: every server's resources and templates in one
//! list, a resource read routed by its URI to the server that listed it, and every
//! server's prompts under qualified names, each got from its server (docs/host.md).

use std::ffi::c_char;

use super::boundary::status;
use super::client::{control_from, mcpc_call_opts_t};
use super::content::{get_prompt_on, mcpc_contents_t, read_resource_on};
use super::cstr::{opt_str_in, str_in, string_out};
use super::host::mcpc_host_t;
use super::ptr::{self, Out};
use crate::error::{mcpc_status_t, Status};

/// Every server's resources and resource templates, as listed: JSON `{"resources":
/// [{"uri", "server", "resource": {...}}], "templates": [{"server", "template":
/// {...}}], "collisions": [{"uri", "kept", "dropped"}]}` (a URI two servers listed
/// routes to the one added first; the collision is listed). Only servers that
/// declare resources are asked; saved catalogs hold tools only.
/// Ownership: `*out_json` is the caller's; free with mcpc_string_free.
/// Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `host` is NULL or live; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_resources(host: *const mcpc_host_t, out_json: *mut *mut c_char) -> mcpc_status_t {
    status("mcpc_host_resources", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        out.set(string_out(&h.catalog().resources_json()));
        Ok(Status::MCPC_OK)
    })
}

/// Reads resource `uri` from the server that listed it, else from the server with
/// the template whose literal start (before its first `{`) is the longest start of
/// `uri`; otherwise as mcpc_client_read_resource. An idle server is started first.
/// Ownership: `*out_contents` is the caller's (free with mcpc_contents_free).
/// Threads: any thread, concurrently; not from mcpc callbacks.
/// Errors: MCPC_ERR_UNKNOWN_NAME (no server listed it or a template it fits),
/// MCPC_ERR_CLOSED, and those of mcpc_client_read_resource.
///
/// # Safety
/// `host` is NULL or live; `uri` is NULL or NUL-terminated; `opts` is NULL or
/// initialised; `out_contents` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_read_resource(
    host: *const mcpc_host_t,
    uri: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_contents: *mut *mut mcpc_contents_t,
) -> mcpc_status_t {
    status("mcpc_host_read_resource", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_contents, "out_contents") }?;
        // SAFETY: per the contract.
        let (h, uri, ctl) = unsafe { (ptr::get(host)?, str_in(uri, "uri")?, control_from(opts)?) };
        let member = h.route_uri(uri)?;
        let client = h.client_blocking(member)?;
        read_resource_on(&client, uri, &ctl, out)
    })
}

/// Every server's prompts under qualified names (the same naming as tools, see
/// mcpc_host_set_name_format): JSON `{"prompts": [{"name", "server", "prompt":
/// {...}}], "collisions": [{"name", "kept", "renamed", "renamedTo"}]}`, each prompt as
/// its server listed it. Only servers that declare prompts are asked; saved catalogs
/// hold tools only.
/// Ownership: `*out_json` is the caller's; free with mcpc_string_free.
/// Threads: any thread, also from mcpc_host_event_cb. Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `host` is NULL or live; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_prompts(host: *const mcpc_host_t, out_json: *mut *mut c_char) -> mcpc_status_t {
    status("mcpc_host_prompts", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let h = unsafe { ptr::get(host) }?;
        out.set(string_out(&h.catalog().prompts_json()));
        Ok(Status::MCPC_OK)
    })
}

/// Gets the prompt with qualified name `qualified` (see mcpc_host_prompts) from its
/// server, with `arguments_json` as for mcpc_client_get_prompt, and that server's
/// timeout unless `opts` sets one. An idle server is started first.
/// Ownership: on success `*out_json` is the caller's (free with mcpc_string_free).
/// Threads: any thread, concurrently; not from mcpc callbacks.
/// Errors: MCPC_ERR_UNKNOWN_NAME (no such prompt in the catalog), MCPC_ERR_CLOSED,
/// and those of mcpc_client_get_prompt.
///
/// # Safety
/// `host` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or
/// initialised; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_host_get_prompt(
    host: *const mcpc_host_t,
    qualified: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_host_get_prompt", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let (h, q, args, ctl) = unsafe {
            (
                ptr::get(host)?,
                str_in(qualified, "qualified")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let (member, prompt) = h.route_prompt(q)?;
        let client = h.client_blocking(member)?;
        get_prompt_on(&client, &prompt, args, &ctl, out)
    })
}
