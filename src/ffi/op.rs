//! `mcpc_op_t`: an asynchronous operation in flight (the machinery is the core's,
//! [`crate::op`]).

use std::sync::Arc;

use super::boundary::boundary;
use super::ptr::{self, Handle};
pub(crate) use crate::client::op::{spawn_op, OpState, OpTracker};

/// An asynchronous operation started by an `_async` function. Its completion
/// callback runs exactly once, whether or not the handle is still held.
/// Thread-safe: cancel it from any thread; free it with mcpc_op_free.
pub struct mcpc_op_t {
    _private: [u8; 0],
}

impl Handle for mcpc_op_t {
    type Rust = Arc<OpState>;
    const NAME: &'static str = "op";
}

/// Cancels the operation: its completion reports MCPC_ERR_CANCELLED, unless it had
/// already completed, and the server is sent `notifications/cancelled` for a request
/// still in flight. A local cancel does not prove that the server stopped the work.
/// Idempotent; NULL is ignored.
/// Threads: any thread, also from inside mcpc callbacks (including the op's own).
///
/// # Safety
/// `op` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_op_cancel(op: *const mcpc_op_t) {
    boundary("mcpc_op_cancel", || {
        // SAFETY: per the contract.
        if let Ok(op) = unsafe { ptr::get(op) } {
            op.cancel();
        }
    })
}

/// True once the operation has completed or been cancelled (its callback has run or
/// is about to). False for NULL.
/// Threads: any thread.
///
/// # Safety
/// `op` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_op_is_finished(op: *const mcpc_op_t) -> bool {
    // SAFETY: per the contract.
    boundary("mcpc_op_is_finished", || {
        unsafe { ptr::get(op) }.is_ok_and(|o| o.is_finished())
    })
}

/// Frees the handle. It does not cancel: the operation runs on and its callback still
/// runs exactly once. NULL is a no-op.
/// Threads: any thread, also from inside the op's own callback.
///
/// # Safety
/// `op` is NULL or a live handle, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_op_free(op: *mut mcpc_op_t) {
    // SAFETY: per the contract.
    boundary("mcpc_op_free", || drop(unsafe { ptr::take(op) }))
}
