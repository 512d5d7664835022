//! Caller userdata: a pointer the library carries for a callback, and the
//! function that frees it, run exactly once when the last user lets go.

use std::ffi::c_void;
use std::sync::Arc;

/// Frees callback userdata. Runs exactly once, on whichever thread drops the
/// last reference (a caller thread or an mcpc thread).
pub type mcpc_free_cb = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

pub(crate) struct Userdata {
    ptr: *mut c_void,
    free: mcpc_free_cb,
}

// SAFETY: the header documents that callbacks and `userdata_free` may run on
// any mcpc thread, so the caller vouches for the pointer's thread-safety.
unsafe impl Send for Userdata {}
// SAFETY: as above; mcpc never dereferences the pointer itself.
unsafe impl Sync for Userdata {}

impl Userdata {
    pub(crate) fn new(ptr: *mut c_void, free: mcpc_free_cb) -> Arc<Self> {
        Arc::new(Userdata { ptr, free })
    }

    pub(crate) fn ptr(&self) -> *mut c_void {
        self.ptr
    }
}

impl Drop for Userdata {
    fn drop(&mut self) {
        if let Some(free) = self.free {
            // SAFETY: the caller gave this function for this pointer; Drop runs once.
            unsafe { free(self.ptr) };
        }
    }
}
