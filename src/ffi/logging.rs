//! The server's log: the level asked for and the callback that gets its messages.

use std::ffi::{c_char, c_void};

use super::boundary::{c_message, status};
use super::client::{control_from, mcpc_call_opts_t, mcpc_client_t};
use super::cstr::opt_str_in;
use super::options::{mcpc_options_t, with_options};
use super::ptr;
use super::userdata::{mcpc_free_cb, Userdata};
use crate::client::{level_code, LEVELS};
use crate::error::{mcpc_status_t, Error, Status};

/// Receives one log message of the server (`notifications/message`): its level
/// ("debug", "info", "notice", "warning", "error", "critical", "alert" or
/// "emergency", or another string a server sent), its logger (NULL when none) and
/// its data as JSON (any JSON value), all NUL-terminated, borrowed for the call, and
/// untrusted server data. Runs on an mcpc thread; calls for one client never overlap.
/// It must not block for long; blocking mcpc calls from it return
/// MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_log_cb = Option<
    unsafe extern "C" fn(userdata: *mut c_void, level: *const c_char, logger: *const c_char, data_json: *const c_char),
>;

/// The static name of a valid level (so the options hold no string of the caller's).
fn level_of(level: &str) -> crate::error::Result<&'static str> {
    let code = level_code(level)?;
    Ok(LEVELS[usize::from(code) - 1])
}

/// The server log level to ask for when connecting: "debug", "info", "notice",
/// "warning", "error", "critical", "alert" or "emergency" (messages at that level and
/// above); NULL (the default) asks for none. Before 2026-07-28 it is sent as
/// `logging/setLevel` right after `initialize`, when the server declares `logging`
/// (a failure there does not fail the connect); under 2026-07-28 it rides in every
/// request's `_meta`, and without it the server sends no log.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options, not a level), MCPC_ERR_INVALID_UTF8.
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object; `level` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_log_level(opts: *mut mcpc_options_t, level: *const c_char) -> mcpc_status_t {
    with_options("mcpc_options_set_log_level", opts, |o| {
        // SAFETY: per the contract.
        let level = unsafe { opt_str_in(level, "level") }?;
        o.client.log_level = level.map(level_of).transpose()?;
        Ok(())
    })
}

/// Hands the server's log messages (`notifications/message` with a string `level`
/// and `data`) to `cb` (see mcpc_log_cb) instead of the notification callback.
/// `userdata_free` (may be NULL) runs exactly once, when the options and every client
/// made from them are freed; it also runs if this call fails.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or NULL `cb`).
/// Threads: the thread that owns `opts`.
///
/// # Safety
/// `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
/// `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_log_callback(
    opts: *mut mcpc_options_t,
    cb: mcpc_log_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_log_callback", opts, |o| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
        o.client.on_log = Some(std::sync::Arc::new(
            move |level: &str, logger: Option<&str>, data: &str| {
                let (level, data) = (c_message(level), c_message(data));
                let logger = logger.map(c_message);
                let logger_ptr = logger.as_ref().map_or(std::ptr::null(), |l| l.as_ptr());
                // SAFETY: the caller's callback, with borrowed NUL-terminated strings.
                unsafe { cb(ud.ptr(), level.as_ptr(), logger_ptr, data.as_ptr()) }
            },
        ));
        Ok(())
    })
}

/// Changes the server log level of a connected client (see
/// mcpc_options_set_log_level for the levels). Before 2026-07-28 this sends
/// `logging/setLevel` and waits for its answer (NULL sends nothing: that revision
/// cannot turn the log off); under 2026-07-28 the level (or, for NULL, none) rides on
/// every later request, and nothing is sent now. The call options apply as for
/// mcpc_client_call_tool.
/// Threads: any thread; not from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL client, not a level), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_RPC (the server refused it, -32601 when it has no log), MCPC_ERR_TIMEOUT,
/// MCPC_ERR_CANCELLED, MCPC_ERR_CLOSED.
///
/// # Safety
/// `client` is NULL or live; `level` is NULL or NUL-terminated; `opts` is NULL or an
/// initialised mcpc_call_opts_t.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_set_log_level(
    client: *const mcpc_client_t,
    level: *const c_char,
    opts: *const mcpc_call_opts_t,
) -> mcpc_status_t {
    status("mcpc_client_set_log_level", || {
        // SAFETY: per the contract.
        let (c, level, ctl) = unsafe { (ptr::get(client)?, opt_str_in(level, "level")?, control_from(opts)?) };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        crate::drive::block_on_driven(std::pin::pin!(cl.set_log_level(level, &ctl)), cl.driver())??;
        Ok(Status::MCPC_OK)
    })
}
