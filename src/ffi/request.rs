//! Requests and notifications by method name, for methods mcpc has no typed call
//! for (extensions among them).

use std::ffi::{c_char, c_void};

use super::boundary::status;
use super::client::{control_from, mcpc_call_opts_t, mcpc_client_t};
use super::client_async::{deliver, op_out, required, SendPtr};
use super::cstr::{opt_str_in, str_in, string_out};
use super::op::mcpc_op_t;
use super::ptr::{self, Out};
use crate::client::generic::request_params;
use crate::client::{Ask, Call, Reader};
use crate::error::{mcpc_status_t, Status};

/// Sends the request `method` with `params_json` (a JSON object; NULL for none) and
/// waits for its result, as mcpc_client_call_tool does: the call options' timeout,
/// cancel handle and progress callback apply; under 2026-07-28 the client's `_meta`
/// envelope is added to the params (members the caller set in `_meta` are kept) and
/// `input_required` rounds are answered (by the input handlers, see
/// mcpc_options_set_elicitation_handler); over HTTP the `Mcp-Name` header mirrors the
/// `name` of `tools/call` and `prompts/get` and the `uri` of `resources/read`, and a
/// tool call's annotated arguments go into `Mcp-Param-*` as for mcpc_client_call_tool.
/// `initialize`, `server/discover` and
/// `notifications/initialized` belong to the session and are refused.
/// Ownership: the strings and `opts` are read during the call. On success
/// `*out_result_json` is the result as the server sent it, owned by the caller: free
/// it with mcpc_string_free.
/// Threads: any thread, concurrently; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an empty or session method, params not a JSON
/// object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_RPC (a JSON-RPC error; its code from
/// mcpc_last_error_rpc_code), MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED,
/// MCPC_ERR_PROTOCOL, MCPC_ERR_INPUT_REQUIRED, MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `client` is NULL or live; the strings are NULL or NUL-terminated; `opts` is NULL or
/// an initialised mcpc_call_opts_t; `out_result_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_request(
    client: *const mcpc_client_t,
    method: *const c_char,
    params_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_result_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_request", || {
        // SAFETY: per the contract.
        let out = unsafe { Out::new(out_result_json, "out_result_json") }?;
        // SAFETY: per the contract.
        let (c, method, params, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(method, "method")?,
                opt_str_in(params_json, "params_json")?,
                control_from(opts)?,
            )
        };
        let params = request_params(method, params)?;
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let ask = Ask::Method {
            method,
            params: &params,
            reader: Reader::Json,
        };
        let call = Call::new(&cl, ask, &ctl);
        let json = crate::drive::block_on_driven(std::pin::pin!(call.wait()), cl.driver())??;
        let raw = json.into_raw().map_err(|e| e.context(method))?;
        out.set(string_out(raw.get()));
        Ok(Status::MCPC_OK)
    })
}

/// Completes mcpc_client_request_async: on MCPC_OK `result_json` is the result, owned
/// by the callee (free with mcpc_string_free); otherwise NULL. Otherwise as
/// mcpc_connect_done_cb.
pub type mcpc_request_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        result_json: *mut c_char,
        error_message: *const c_char,
    ),
>;

/// Starts mcpc_client_request without blocking; `on_done` gets the result exactly
/// once, on an mcpc thread. Cancelling the op sends `notifications/cancelled`.
/// Ownership: the strings and `opts` are read during this call; the progress
/// userdata must stay valid until `on_done` runs. `*out_op` (when not NULL) is owned
/// by the caller; free it with mcpc_op_free.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, NULL on_done,
/// an empty or session method, params not a JSON object), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_CLOSED. Later errors go to `on_done`, as for mcpc_client_request.
///
/// # Safety
/// As mcpc_client_request; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_request_async(
    client: *const mcpc_client_t,
    method: *const c_char,
    params_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    on_done: mcpc_request_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_request_async", || {
        // SAFETY: per the contract.
        let out_op = unsafe { Out::optional(out_op) };
        // SAFETY: per the contract.
        let (c, method, params, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(method, "method")?,
                opt_str_in(params_json, "params_json")?,
                control_from(opts)?,
            )
        };
        let cb = required(on_done)?;
        let ud = SendPtr(userdata);
        let params = request_params(method, params)?;
        let ask = Ask::Method {
            method,
            params: &params,
            reader: Reader::Json,
        };
        const WHAT: &str = "mcpc_client_request_async";
        let op = Call::start(&c.client(), ask, ctl, &c.ops, true, WHAT, move |outcome, target| {
            deliver(cb, ud, WHAT, || {
                let raw = outcome?.into_raw().map_err(|e| e.context(target.name()))?;
                Ok((string_out(raw.get()), None))
            })
        })?;
        if let Some(op) = op {
            op_out(op, out_op);
        }
        Ok(Status::MCPC_OK)
    })
}

/// Sends the notification `method` with `params_json` (a JSON object; NULL for none).
/// Returns once it is queued; under 2026-07-28 the client's `_meta` envelope is added.
/// Threads: any thread, also from mcpc callbacks.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, an empty or session method, params not a JSON
/// object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_CLOSED.
///
/// # Safety
/// `client` is NULL or live; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_notify(
    client: *const mcpc_client_t,
    method: *const c_char,
    params_json: *const c_char,
) -> mcpc_status_t {
    status("mcpc_client_notify", || {
        // SAFETY: per the contract.
        let (c, method, params) = unsafe {
            (
                ptr::get(client)?,
                str_in(method, "method")?,
                opt_str_in(params_json, "params_json")?,
            )
        };
        c.client().notify_raw(method, params)?;
        Ok(Status::MCPC_OK)
    })
}
