//! Resuming a task from its reference (the call options' task fields and the task
//! callback are in [`super::call_opts`]).

use std::ffi::c_char;

use super::boundary::status;
use super::call_opts::{control_from, mcpc_call_opts_t};
use super::client::mcpc_client_t;
use super::cstr::{str_in, string_out};
use super::ptr::{self, Out};
use crate::error::{mcpc_status_t, Status};

/// Follows a task to its end from its reference (the JSON an mcpc_task_cb was
/// given, kept by the host), from this client: a task another call detached from,
/// or one started by an earlier process. The outcome is the original request's: on
/// success `*out_result_json` is its result as the server sent it (for a tool call,
/// a CallToolResult). The call options apply as to any call: the timeout, the
/// cancel handle (which also cancels the task on the server), `task_timeout_ms` and
/// the task callback.
/// Ownership: the strings and `opts` are read during the call; `*out_result_json` is
/// owned by the caller: free it with mcpc_string_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, a malformed reference, one naming another
/// endpoint, or a generation other than the session's: "v1" needs a session before
/// 2026-07-28, "v2" one of 2026-07-28), MCPC_ERR_INVALID_UTF8, MCPC_ERR_RPC (the
/// server does not know the task, or the task failed with an error), MCPC_ERR_TIMEOUT,
/// MCPC_ERR_CANCELLED (also: the task was cancelled on the server), MCPC_ERR_CLOSED,
/// MCPC_ERR_PROTOCOL, MCPC_ERR_TASK_DETACHED, MCPC_ERR_MISSING_CAPABILITY,
/// MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `client` is NULL or live; `reference_json` is NULL or NUL-terminated; `opts` is
/// NULL or an initialised mcpc_call_opts_t; `out_result_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_resume_task(
    client: *const mcpc_client_t,
    reference_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_result_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_resume_task", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_result_json, "out_result_json") }?;
        // SAFETY: per the contract.
        let (c, reference, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(reference_json, "reference_json")?,
                control_from(opts)?,
            )
        };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let resume = cl.resume_task(reference, &ctl);
        let json = crate::drive::block_on_driven(std::pin::pin!(resume), cl.driver())??;
        let raw = json.into_raw()?;
        out.set(string_out(raw.get()));
        Ok(Status::MCPC_OK)
    })
}
