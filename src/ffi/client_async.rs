//! The asynchronous forms of the client's calls: each returns at once, and its
//! completion callback runs exactly once, on an mcpc thread.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::boundary::status;
use super::client::*;
use super::cstr::{opt_str_in, str_in};
use super::op::{mcpc_op_t, spawn_op};
use super::options::mcpc_options_t;
use super::ptr::{self, Out};
use super::result::{mcpc_result_t, mcpc_tool_list_t, ResultData, ToolListData};
use super::transport::mcpc_transport_t;
use crate::client::{read_tool, Ask, Call, Control};
use crate::config::Plan;
use crate::error::mcpc_status_t;
use crate::error::{Error, Result, Status};

/// Completes mcpc_client_connect_stdio_async or mcpc_client_connect_transport_async:
/// on MCPC_OK `client` is the new client, owned by the callee (free it with
/// mcpc_client_free, from any thread); otherwise it is NULL and `error_message` says
/// why (also in mcpc_last_error_* during the call). `error_message` is borrowed for the
/// call ("" on success). Runs exactly once, on an mcpc thread.
pub type mcpc_connect_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        client: *mut mcpc_client_t,
        error_message: *const c_char,
    ),
>;

/// Completes mcpc_client_list_tools_async: on MCPC_OK `list` is owned by the callee
/// (free with mcpc_tool_list_free); otherwise NULL. Otherwise as mcpc_connect_done_cb.
pub type mcpc_list_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        list: *mut mcpc_tool_list_t,
        error_message: *const c_char,
    ),
>;

/// Completes mcpc_client_call_tool_async: on MCPC_OK, MCPC_ERR_TOOL and
/// MCPC_ERR_OUTPUT_SCHEMA `result` is owned by the callee (free with
/// mcpc_result_free); otherwise NULL. Otherwise as
/// mcpc_connect_done_cb.
pub type mcpc_call_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        result: *mut mcpc_result_t,
        error_message: *const c_char,
    ),
>;

/// Userdata carried to a completion callback on an mcpc thread.
pub(super) struct SendPtr(pub(super) *mut c_void);
// SAFETY: the header documents that completions run on mcpc threads with this userdata.
unsafe impl Send for SendPtr {}

/// Runs a completion callback: the value on success (or with MCPC_ERR_TOOL), else the
/// error, which is also this thread's last error during the callback.
pub(super) fn finish<T>(
    cb: unsafe extern "C" fn(*mut c_void, Status, *mut T, *const c_char),
    ud: SendPtr,
    value: *mut T,
    err: Option<Error>,
) {
    match &err {
        None => {
            super::boundary::clear_last_error();
            // SAFETY: the caller's callback, with its userdata, an owned value and a
            // static empty message (a success allocates no message).
            unsafe { cb(ud.0, Status::MCPC_OK, value, c"".as_ptr()) }
        }
        Some(e) => {
            super::boundary::set_last_error(e);
            let msg = super::boundary::c_message(&e.message);
            // SAFETY: as above, with a message borrowed for the callback's duration.
            unsafe { cb(ud.0, e.status, value, msg.as_ptr()) }
        }
    }
}

/// Reads an operation's outcome (`read`: the value to hand out, or the error) and
/// runs its completion callback. A panic while reading still runs the callback, with
/// MCPC_ERR_PANIC naming `what`: the host waiting for it never waits forever.
pub(super) fn deliver<T>(
    cb: unsafe extern "C" fn(*mut c_void, Status, *mut T, *const c_char),
    ud: SendPtr,
    what: &str,
    read: impl FnOnce() -> Result<(*mut T, Option<Error>)>,
) {
    let read = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::inject::point("deliver", what);
        read()
    }))
    .unwrap_or_else(|_| Err(Error::panicked(what)));
    match read {
        Ok((value, err)) => finish(cb, ud, value, err),
        Err(e) => finish(cb, ud, std::ptr::null_mut(), Some(e)),
    }
}

pub(super) fn required<T>(cb: Option<T>) -> Result<T> {
    cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "on_done is NULL"))
}

/// Stores the op handle, or drops it when the caller passed no `out_op`.
pub(super) fn op_out(op: Arc<super::op::OpState>, out_op: Option<Out<'_, *mut mcpc_op_t>>) {
    if let Some(out) = out_op {
        out.set_handle(op);
    }
}

fn connect_async(
    plan: Plan,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: Option<Out<'_, *mut mcpc_op_t>>,
) -> Result<Status> {
    let cb = required(on_done)?;
    let ud = SendPtr(userdata);
    let op = spawn_op(
        None,
        None,
        "connect",
        |token| async move {
            let ctl = Control {
                cancel: Some(token),
                ..Control::default()
            };
            let client = plan.connect(&ctl).await?;
            Ok(ClientHandle::made(plan, client))
        },
        move |outcome| {
            deliver(cb, ud, "connect", || {
                Ok((ptr::into_raw::<mcpc_client_t>(outcome?), None))
            })
        },
    )?;
    op_out(op, out_op);
    Ok(Status::MCPC_OK)
}

/// Starts mcpc_client_connect_stdio without blocking: returns at once, and `on_done`
/// gets the client (or the error) exactly once, on an mcpc thread. Cancelling the op
/// stops the handshake and shuts the server down (`initialize` itself is never sent
/// `notifications/cancelled`).
/// Ownership: `argv` and `opts` are read during this call. `*out_op` (when `out_op` is
/// not NULL) is owned by the caller; free it with mcpc_op_free.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, argc 0, NULL
/// on_done), MCPC_ERR_INVALID_UTF8. Later errors go to `on_done`, as for
/// mcpc_client_connect_stdio.
///
/// # Safety
/// As mcpc_client_connect_stdio; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_stdio_async(
    argv: *const *const c_char,
    argc: usize,
    opts: *const mcpc_options_t,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_stdio_async", || {
        // SAFETY: per the contract.
        let out_op = unsafe { Out::optional(out_op) };
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { stdio_connector(argv, argc, &o) }?;
        connect_async(connector, on_done, userdata, out_op)
    })
}

/// Starts mcpc_client_connect_transport without blocking; as
/// mcpc_client_connect_stdio_async otherwise.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL transport or
/// on_done).
///
/// # Safety
/// As mcpc_client_connect_transport; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_transport_async(
    transport: *const mcpc_transport_t,
    opts: *const mcpc_options_t,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_transport_async", || {
        // SAFETY: per the contract.
        let out_op = unsafe { Out::optional(out_op) };
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { transport_connector(transport, &o) }?;
        connect_async(connector, on_done, userdata, out_op)
    })
}

/// Starts mcpc_client_list_tools without blocking: returns at once, and `on_done` gets
/// the list (or the error) exactly once, on an mcpc thread. A cancel from `opts.cancel`
/// or mcpc_op_cancel stops it with MCPC_ERR_CANCELLED. Closing the client completes it
/// (MCPC_ERR_CLOSED) before the close returns.
/// Ownership: `opts` is read during this call; its progress userdata must stay valid
/// until `on_done` runs. `*out_op` (when not NULL) is owned by the caller.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG, MCPC_ERR_CLOSED.
///
/// # Safety
/// As mcpc_client_list_tools; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_tools_async(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    on_done: mcpc_list_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_list_tools_async", || {
        // SAFETY: per the contract.
        let out_op = unsafe { Out::optional(out_op) };
        // SAFETY: per the contract.
        let (c, mut ctl) = unsafe { (ptr::get(client)?, control_from(opts)?) };
        let cb = required(on_done)?;
        let ud = SendPtr(userdata);
        let client = c.client().clone();
        let parent = ctl.cancel.take();
        let op = spawn_op(
            Some(&c.ops),
            parent.as_ref(),
            "mcpc_client_list_tools_async",
            |token| async move {
                ctl.cancel = Some(token);
                client.list_tools(&ctl).await
            },
            move |outcome| {
                deliver(cb, ud, "mcpc_client_list_tools_async", || {
                    let list = ToolListData::new(outcome?);
                    Ok((ptr::into_raw::<mcpc_tool_list_t>(list), None))
                })
            },
        )?;
        op_out(op, out_op);
        Ok(Status::MCPC_OK)
    })
}

/// Starts mcpc_client_call_tool without blocking: returns at once, and `on_done` gets
/// the result (or the error) exactly once, on an mcpc thread. A cancel from
/// `opts.cancel` or mcpc_op_cancel sends `notifications/cancelled` and completes with
/// MCPC_ERR_CANCELLED, even when the response races the cancel. Closing the client
/// completes it (MCPC_ERR_CLOSED) before the close returns.
/// Ownership: `name`, `arguments_json` and `opts` are read during this call; the
/// progress userdata must stay valid until `on_done` runs. `*out_op` (when not NULL)
/// is owned by the caller; free it with mcpc_op_free.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, arguments not
/// a JSON object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_CLOSED.
///
/// # Safety
/// As mcpc_client_call_tool; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_call_tool_async(
    client: *const mcpc_client_t,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    on_done: mcpc_call_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_call_tool_async", || {
        // SAFETY: per the contract.
        let out_op = unsafe { Out::optional(out_op) };
        // SAFETY: per the contract.
        let (c, name, args, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(name, "name")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let cb = required(on_done)?;
        let ud = SendPtr(userdata);
        let client = &*c.client();
        let ask = Ask::Tool {
            name,
            arguments: crate::result::parse_arguments(args)?,
        };
        // Only a client that checks output schemas needs itself in the completion.
        let me = client.options().validate_output.then(|| Arc::clone(client));
        const WHAT: &str = "mcpc_client_call_tool_async";
        let op = Call::start(
            client,
            ask,
            ctl,
            &c.ops,
            out_op.is_some(),
            WHAT,
            move |outcome, target| {
                deliver(cb, ud, WHAT, || {
                    let name = target.name();
                    let r = read_tool(outcome, name)?;
                    let err = match &me {
                        Some(me) => me.outcome_error(name, &r),
                        None => r.tool_error(name),
                    };
                    Ok((ptr::into_raw::<mcpc_result_t>(ResultData::new(r)), err))
                })
            },
        )?;
        if let Some(op) = op {
            op_out(op, out_op);
        }
        Ok(Status::MCPC_OK)
    })
}

/// Starts mcpc_client_connect_http without blocking; as mcpc_client_connect_stdio_async
/// otherwise. URL policy errors are returned here, with no callback.
///
/// # Safety
/// As mcpc_client_connect_http; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_http_async(
    url: *const c_char,
    opts: *const mcpc_options_t,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_http_async", || {
        // SAFETY: per the contract.
        let out_op = unsafe { Out::optional(out_op) };
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { http_connector(url, &o) }?;
        connect_async(connector, on_done, userdata, out_op)
    })
}
