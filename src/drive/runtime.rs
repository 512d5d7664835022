//! The one tokio runtime shared by every client, started on first use.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle, Runtime};

use crate::error::{Error, Result, Status};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Worker threads: the client's work is I/O routing, so two workers carry it;
/// `MCPC_WORKER_THREADS` overrides (1 to 64).
fn worker_threads() -> usize {
    std::env::var("MCPC_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| (1..=64).contains(n))
        .unwrap_or(2)
}

/// Returns the runtime's handle, starting the runtime on first use.
pub fn handle() -> &'static Handle {
    RUNTIME
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(worker_threads())
                .thread_name("mcpc-worker")
                .enable_all()
                .on_thread_start(crate::sys::block_sigpipe_on_this_thread)
                .build()
                .expect("mcpc: cannot start the tokio runtime")
        })
        .handle()
}

/// Makes a large future that is rarely awaited, boxed, in a stack frame of its
/// own. Boxed in place (`Box::pin(make_it()).await`), the future is still built in
/// the frame of the function that awaits it, and that frame is on the stack all
/// the while the future is polled, taken or not: on a blocked caller's thread the
/// exchange is polled there, and every page of stack it reaches stays the
/// caller's thread's (docs/performance.md).
#[inline(never)]
pub fn boxed_apart<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::pin(make())
}

thread_local! {
    static IN_CALLBACK: Cell<u32> = const { Cell::new(0) };
}

/// Marks the current thread as running caller code on mcpc's behalf (a callback
/// reached through `mcpc_transport_deliver` runs on the host's own thread) for as
/// long as the guard lives.
pub struct CallbackScope(());

impl CallbackScope {
    pub fn enter() -> Self {
        IN_CALLBACK.with(|c| c.set(c.get() + 1));
        CallbackScope(())
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(c.get() - 1));
    }
}

/// True when the current thread belongs to the runtime (a worker or a
/// blocking-pool thread) or is inside a callback that mcpc runs: places where a
/// blocking mcpc call could wait on itself.
pub fn on_runtime_thread() -> bool {
    Handle::try_current().is_ok() || IN_CALLBACK.with(|c| c.get() > 0)
}

/// Runs `fut` to completion on the calling thread, with the runtime's I/O and
/// timers driving it. No hop to another thread: the caller's thread polls the
/// future itself. Refuses to run on a runtime thread, where it would deadlock.
pub fn block_on<F: Future>(fut: F) -> Result<F::Output> {
    refuse_on_runtime_thread()?;
    Ok(handle().block_on(fut))
}

pub(super) fn refuse_on_runtime_thread() -> Result<()> {
    if on_runtime_thread() {
        return Err(Error::new(
            Status::MCPC_ERR_WOULD_DEADLOCK,
            "a blocking mcpc call was made from an mcpc callback or library thread; use the _async form",
        ));
    }
    Ok(())
}
