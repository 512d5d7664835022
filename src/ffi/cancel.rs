//! `mcpc_cancel_t`: a cancellation flag shared between a blocking call and any other thread.

use tokio_util::sync::CancellationToken;

use super::boundary::boundary;
use super::ptr::{self, Handle};

/// A cancellation handle. Pass it in `mcpc_call_opts_t.cancel`; trigger it from
/// any thread to make the calls that carry it return `MCPC_ERR_CANCELLED` at once.
/// Once triggered it stays triggered; make a new one for the next call.
pub struct mcpc_cancel_t {
    _private: [u8; 0],
}

impl Handle for mcpc_cancel_t {
    type Rust = CancellationToken;
    const NAME: &'static str = "cancel";
}

/// Makes a cancellation handle.
/// Ownership: the caller owns it; free with mcpc_cancel_free once no call uses it.
/// Threads: any thread.
/// Errors: none (returns NULL only if allocation panicked).
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_cancel_new() -> *mut mcpc_cancel_t {
    boundary("mcpc_cancel_new", || {
        ptr::into_raw::<mcpc_cancel_t>(CancellationToken::new())
    })
}

/// Triggers the handle: every call using it sends `notifications/cancelled` for its
/// request and returns MCPC_ERR_CANCELLED. A local cancel does not prove that the
/// server stopped the work. Idempotent; NULL is ignored.
/// Threads: any thread, concurrently with the call it cancels; also from mcpc callbacks.
///
/// # Safety
/// `cancel` is NULL or a live handle from mcpc_cancel_new.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_cancel_trigger(cancel: *const mcpc_cancel_t) {
    boundary("mcpc_cancel_trigger", || {
        // SAFETY: per the contract.
        if let Ok(token) = unsafe { ptr::get(cancel) } {
            token.cancel();
        }
    })
}

/// True once the handle was triggered. NULL gives false.
/// Threads: any thread.
///
/// # Safety
/// `cancel` is NULL or a live handle from mcpc_cancel_new.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_cancel_is_triggered(cancel: *const mcpc_cancel_t) -> bool {
    // SAFETY: per the contract.
    boundary("mcpc_cancel_is_triggered", || {
        unsafe { ptr::get(cancel) }.is_ok_and(|t| t.is_cancelled())
    })
}

/// Frees the handle. NULL is a no-op. Calls still using it keep their own reference,
/// so freeing does not cancel them.
/// Threads: any thread.
///
/// # Safety
/// `cancel` is NULL or a live handle from mcpc_cancel_new, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_cancel_free(cancel: *mut mcpc_cancel_t) {
    // SAFETY: per the contract.
    boundary("mcpc_cancel_free", || drop(unsafe { ptr::take(cancel) }))
}
