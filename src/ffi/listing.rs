//! The listings other than tools, as JSON arrays: resources, resource templates,
//! prompts.

use std::ffi::c_char;

use super::boundary::status;
use super::client::{control_from, mcpc_call_opts_t, mcpc_client_t};
use super::cstr::string_out;
use super::ptr::{self, Out};
use crate::client::Listing;
use crate::error::{mcpc_status_t, Status};

fn list(
    name: &str,
    what: Listing,
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status(name, || {
        // SAFETY: the exports' contract: `out_json` is NULL or writable.
        let out = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: the exports' contract: `client` is NULL or live, `opts` NULL or initialised.
        let (c, ctl) = unsafe { (ptr::get(client)?, control_from(opts)?) };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let json = crate::drive::block_on_driven(std::pin::pin!(cl.list_json(what, &ctl)), cl.driver())??;
        out.set(string_out(&json));
        Ok(Status::MCPC_OK)
    })
}

/// Drops the lists the client keeps between listings (tools, resources, resource
/// templates, prompts), so that the next listing of each asks the server. A list is
/// kept under 2026-07-28 for the `ttlMs` the server gave, and before it while the
/// server declared `listChanged` for it and sent no `list_changed` notification since.
/// Threads: any thread, also from mcpc callbacks.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `client` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_forget_lists(client: *const mcpc_client_t) -> mcpc_status_t {
    status("mcpc_client_forget_lists", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(client) }?.client().forget_lists();
        Ok(Status::MCPC_OK)
    })
}

/// Lists every resource (`resources/list`, following `nextCursor`) as one JSON array
/// of the resources as the server sent them (`uri`, `name`, `mimeType`, `_meta`...).
/// The call options' timeout covers the whole listing. A kept list is handed out
/// again as for mcpc_client_list_tools.
/// Ownership: on success `*out_json` is the caller's; free it with mcpc_string_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_CURSOR_REPEATED, MCPC_ERR_DUPLICATE_TOOL
/// (a URI twice), MCPC_ERR_TOO_MANY_PAGES, MCPC_ERR_RPC (-32601: the server has no
/// resources), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED, MCPC_ERR_PROTOCOL.
///
/// # Safety
/// `client` is NULL or live; `opts` is NULL or an initialised mcpc_call_opts_t;
/// `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_resources(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    list("mcpc_client_list_resources", Listing::Resources, client, opts, out_json)
}

/// Lists every resource template (`resources/templates/list`) as one JSON array; a
/// `uriTemplate` twice is MCPC_ERR_DUPLICATE_TOOL. Otherwise as
/// mcpc_client_list_resources.
///
/// # Safety
/// As for mcpc_client_list_resources.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_resource_templates(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    list(
        "mcpc_client_list_resource_templates",
        Listing::ResourceTemplates,
        client,
        opts,
        out_json,
    )
}

/// Lists every prompt (`prompts/list`) as one JSON array (`name`, `description`,
/// `arguments`...); a name twice is MCPC_ERR_DUPLICATE_TOOL. Otherwise as
/// mcpc_client_list_resources.
///
/// # Safety
/// As for mcpc_client_list_resources.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_prompts(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    list("mcpc_client_list_prompts", Listing::Prompts, client, opts, out_json)
}
