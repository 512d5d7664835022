//! The primitives of the concurrency core (an operation's completion-or-cancel
//! decision, the operation tracker, the parker's state and its eventfd, the
//! router's table of pending requests and deadlines, the turns at a stdio
//! server's stdout): loom's when model-checked
//! (`--cfg mcpc_loom`, `make loom`), so that the models explore the real code; the
//! standard library's and the system's otherwise, at no cost.

#[cfg(mcpc_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize};
#[cfg(mcpc_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
pub(crate) use std::sync::atomic::Ordering;
// The turns at a stdio server's stdout (their flags) are Linux's.
#[cfg(all(not(mcpc_loom), target_os = "linux"))]
pub(crate) use std::sync::atomic::AtomicBool;
#[cfg(not(mcpc_loom))]
pub(crate) use std::sync::atomic::{AtomicU8, AtomicUsize};
#[cfg(not(mcpc_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

/// The parker's eventfd as loom sees it: a counter that a wait blocks on until
/// it is non-zero. Only what the parker uses: write, and a wait that reads.
#[cfg(mcpc_loom)]
pub(crate) struct ModelEventFd {
    count: loom::sync::Mutex<u64>,
    ready: loom::sync::Condvar,
}

#[cfg(mcpc_loom)]
impl ModelEventFd {
    pub(crate) fn new() -> Self {
        ModelEventFd {
            count: loom::sync::Mutex::new(0),
            ready: loom::sync::Condvar::new(),
        }
    }

    pub(crate) fn write(&self, n: u64) {
        *self.count.lock().unwrap() += n;
        self.ready.notify_all();
    }

    /// Blocks until the counter is non-zero, then reads it (back to zero).
    pub(crate) fn wait_and_read(&self) {
        let mut count = self.count.lock().unwrap();
        while *count == 0 {
            count = self.ready.wait(count).unwrap();
        }
        *count = 0;
    }
}
