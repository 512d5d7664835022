//! `mcpc_transport_t` and `mcpc_exchange_t`: the caller-supplied transport seam.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::boundary::{boundary, status};
use super::cstr::opt_str_in;
use super::ptr::{self, Handle, Out};
use super::userdata::{mcpc_free_cb, Userdata};
use crate::error::{mcpc_status_t, Error, Result, Status};
use crate::transport::callback::{CloseFn, Exchange, HostEnd, Mode};

/// A transport whose channel the host owns. Make it with mcpc_transport_new (stream
/// form) or mcpc_transport_new_request (request/response form), connect a client over
/// it with mcpc_client_connect_transport, push what the server sends with
/// mcpc_transport_deliver, and free the host's handle with mcpc_transport_free.
/// Thread-safe: deliver from any thread.
pub struct mcpc_transport_t {
    _private: [u8; 0],
}

impl Handle for mcpc_transport_t {
    type Rust = HostEnd;
    const NAME: &'static str = "transport";
}

/// One outgoing message of a request/response transport, waiting for the host to
/// complete it (mcpc_exchange_complete) or fail it (mcpc_exchange_fail), exactly once,
/// from any thread.
pub struct mcpc_exchange_t {
    _private: [u8; 0],
}

impl Handle for mcpc_exchange_t {
    type Rust = Exchange;
    const NAME: &'static str = "exchange";
}

/// Sends one outgoing JSON-RPC message (`data`, `len` bytes, one compact JSON object
/// with no line end and no NUL terminator) on the host's channel. Returns 0 on
/// success; any other value fails the message (its request returns
/// MCPC_ERR_TRANSPORT), not the connection.
/// Runs on an mcpc blocking-pool thread, never a runtime worker; calls for one
/// transport never overlap and come in send order. `data` is borrowed for the call.
/// It may call mcpc_transport_deliver (also for the response to this very message);
/// blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_transport_send_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, data: *const c_char, len: usize) -> i32>;

/// Hands one outgoing JSON-RPC message to a request/response host: `exchange` is owned
/// by the host from here on and must be completed or failed exactly once, from any
/// thread, now or later. Messages that expect no response (notifications, answers to
/// server requests; mcpc_exchange_expects_response says which) are completed with no
/// body. Returns 0 on success; any other value fails the message, and then the host
/// must not touch `exchange` (mcpc reclaims it).
/// Threads and reentrancy: as for mcpc_transport_send_cb.
pub type mcpc_transport_request_cb = Option<
    unsafe extern "C" fn(userdata: *mut c_void, exchange: *mut mcpc_exchange_t, data: *const c_char, len: usize) -> i32,
>;

/// Closes the host's channel. Runs exactly once, when the client closes (after every
/// queued message went out), on an mcpc blocking-pool thread; never if the transport
/// is freed without having been attached to a client.
pub type mcpc_transport_close_cb = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

fn close_fn(close: mcpc_transport_close_cb, ud: &Arc<Userdata>) -> Option<CloseFn> {
    let ud = ud.clone();
    close.map(|close| -> CloseFn {
        Box::new(move || {
            // SAFETY: the host's callback with its userdata.
            unsafe { close(ud.ptr()) }
        })
    })
}

fn new_transport(name: &str, out: *mut *mut mcpc_transport_t, make: impl FnOnce() -> Result<HostEnd>) -> mcpc_status_t {
    status(name, || {
        // SAFETY: the exports' contract: `out` is NULL or writable.
        let out = unsafe { Out::new(out, "out_transport") }?;
        out.set_handle(make()?);
        Ok(Status::MCPC_OK)
    })
}

/// Makes a stream transport: `send` gets each outgoing message, and the host delivers
/// every incoming message with mcpc_transport_deliver. `close` (may be NULL) closes the
/// channel. `userdata_free` (may be NULL) runs exactly once, when both the host's handle
/// and the client are done with the transport (also if this call fails).
/// Ownership: on success `*out_transport` is the host's handle; free it with
/// mcpc_transport_free (a client connected over it keeps the transport alive).
/// Threads: any thread.
/// Errors: MCPC_ERR_INVALID_ARG (NULL `send` or `out_transport`).
///
/// # Safety
/// The callbacks may be called with `userdata` from mcpc threads until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_transport_new(
    send: mcpc_transport_send_cb,
    close: mcpc_transport_close_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
    out_transport: *mut *mut mcpc_transport_t,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    new_transport("mcpc_transport_new", out_transport, || {
        let send = send.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "send is NULL"))?;
        let close = close_fn(close, &ud);
        let send_fn = Box::new(move |data: &[u8]| {
            // SAFETY: the host's callback with its userdata and a borrowed buffer.
            match unsafe { send(ud.ptr(), data.as_ptr().cast(), data.len()) } {
                0 => Ok(()),
                code => Err(format!("send returned {code}")),
            }
        });
        Ok(HostEnd::new(Mode::Stream(send_fn), close))
    })
}

/// Makes a request/response transport: `request` gets each outgoing message as an
/// exchange, which the host completes with the response body (mcpc_exchange_complete)
/// from any thread. Otherwise as mcpc_transport_new. mcpc_transport_deliver works too,
/// for messages that arrive outside any exchange.
/// Errors: MCPC_ERR_INVALID_ARG (NULL `request` or `out_transport`).
///
/// # Safety
/// The callbacks may be called with `userdata` from mcpc threads until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_transport_new_request(
    request: mcpc_transport_request_cb,
    close: mcpc_transport_close_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
    out_transport: *mut *mut mcpc_transport_t,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    new_transport("mcpc_transport_new_request", out_transport, || {
        let request = request.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "request is NULL"))?;
        let close = close_fn(close, &ud);
        let request_fn = Box::new(move |exchange: Exchange, data: &[u8]| {
            let ex = ptr::into_raw::<mcpc_exchange_t>(exchange);
            // SAFETY: the host's callback with its userdata, an exchange it now owns,
            // and a borrowed buffer.
            match unsafe { request(ud.ptr(), ex, data.as_ptr().cast(), data.len()) } {
                0 => Ok(()),
                code => {
                    // The host refused the exchange and must not touch it: reclaim it.
                    // SAFETY: `ex` came from into_raw above and the host gave it back.
                    if let Some(ex) = unsafe { ptr::take(ex) } {
                        ex.fail(&format!("request returned {code}"));
                    }
                    Err(format!("request returned {code}"))
                }
            }
        });
        Ok(HostEnd::new(Mode::RequestResponse(request_fn), close))
    })
}

/// Delivers one message from the server: exactly one JSON-RPC message of `len` bytes
/// (no framing; need not be NUL-terminated). It is routed on the calling thread before
/// this returns: a response completes its call, and notification and progress
/// callbacks run on this thread. Deliveries may come from several threads at once.
/// A message over the client's size limit fails the connection.
/// Ownership: `data` is read during the call only.
/// Threads: any thread, also from inside the send callback.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or no client attached yet), MCPC_ERR_CLOSED (the
/// client closed the transport), MCPC_ERR_PROTOCOL (not a JSON-RPC message: dropped, the
/// connection goes on), MCPC_ERR_MESSAGE_TOO_LARGE. A response whose envelope is sound
/// but whose result is not valid JSON is routed (MCPC_OK): its call fails with
/// MCPC_ERR_PROTOCOL.
///
/// # Safety
/// `transport` is NULL or live; `data` is NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_transport_deliver(
    transport: *const mcpc_transport_t,
    data: *const c_char,
    len: usize,
) -> mcpc_status_t {
    status("mcpc_transport_deliver", || {
        // SAFETY: per the contract.
        let (t, bytes) = unsafe { (ptr::get(transport)?, bytes_in(data, len)?) };
        t.deliver(bytes)?;
        Ok(Status::MCPC_OK)
    })
}

/// Reads `len` bytes from C; NULL is allowed only with `len` 0.
///
/// # Safety
/// `data` is NULL or points to `len` readable bytes.
unsafe fn bytes_in<'a>(data: *const c_char, len: usize) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "data is NULL"));
    }
    // SAFETY: non-NULL with `len` readable bytes per the contract.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

/// Signals that the host's channel ended (the server went away): every call in flight
/// and every later call fails with MCPC_ERR_TRANSPORT naming `reason` (may be NULL).
/// Threads: any thread.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or no client attached), MCPC_ERR_CLOSED,
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `transport` is NULL or live; `reason` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_transport_end(
    transport: *const mcpc_transport_t,
    reason: *const c_char,
) -> mcpc_status_t {
    status("mcpc_transport_end", || {
        // SAFETY: per the contract.
        let (t, reason) = unsafe { (ptr::get(transport)?, opt_str_in(reason, "reason")?) };
        t.end(reason.unwrap_or("end of stream"))?;
        Ok(Status::MCPC_OK)
    })
}

/// Frees the host's handle. NULL is a no-op. A client connected over the transport
/// keeps using it; deliveries need the handle, so free it once the client is closed.
/// Threads: any thread, once no other thread uses the handle.
///
/// # Safety
/// `transport` is NULL or live, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_transport_free(transport: *mut mcpc_transport_t) {
    // SAFETY: per the contract.
    boundary("mcpc_transport_free", || drop(unsafe { ptr::take(transport) }))
}

/// True when the exchange carries a request, whose response the body must hold;
/// false for notifications and answers to server requests (complete them with no body).
///
/// # Safety
/// `exchange` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_exchange_expects_response(exchange: *const mcpc_exchange_t) -> bool {
    // SAFETY: per the contract.
    boundary("mcpc_exchange_expects_response", || {
        unsafe { ptr::get(exchange) }.is_ok_and(Exchange::expects_response)
    })
}

/// Completes an exchange with the response body: zero or more JSON-RPC messages, one
/// per line (server notifications may come before the response); `body` may be NULL
/// with `len` 0. Consumes `exchange`, whatever the result. A request whose response is
/// not in the body fails with MCPC_ERR_PROTOCOL.
/// Threads: any thread, also from inside the request callback.
/// Errors: MCPC_ERR_INVALID_ARG (NULL exchange), MCPC_ERR_CLOSED (the client closed),
/// MCPC_ERR_PROTOCOL (a message in the body was not JSON-RPC; the others were routed),
/// MCPC_ERR_MESSAGE_TOO_LARGE.
///
/// # Safety
/// `exchange` is NULL or live (it is consumed); `body` is NULL or `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_exchange_complete(
    exchange: *mut mcpc_exchange_t,
    body: *const c_char,
    len: usize,
) -> mcpc_status_t {
    status("mcpc_exchange_complete", || {
        // SAFETY: per the contract; ownership returns to mcpc here.
        let ex = unsafe { ptr::take(exchange) }
            .ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "exchange is NULL"))?;
        // SAFETY: per the contract.
        let bytes = unsafe { bytes_in(body, len) }?;
        ex.complete(bytes)?;
        Ok(Status::MCPC_OK)
    })
}

/// Fails an exchange: its request returns MCPC_ERR_TRANSPORT naming `reason` (may be
/// NULL). Consumes `exchange`. NULL is a no-op.
/// Threads: any thread.
///
/// # Safety
/// `exchange` is NULL or live (it is consumed); `reason` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_exchange_fail(exchange: *mut mcpc_exchange_t, reason: *const c_char) {
    boundary("mcpc_exchange_fail", || {
        // SAFETY: per the contract; ownership returns to mcpc here.
        let Some(ex) = (unsafe { ptr::take(exchange) }) else {
            return;
        };
        // SAFETY: per the contract.
        let reason = unsafe { opt_str_in(reason, "reason") }
            .ok()
            .flatten()
            .unwrap_or("no reason given");
        ex.fail(reason);
    })
}
