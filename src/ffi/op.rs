//! `mcpc_op_t`: an asynchronous operation in flight, and the machinery that runs
//! one: exactly one completion, cancel from any thread, and a per-client tracker so
//! that no callback runs after the client's close has returned.

use std::future::Future;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::boundary::boundary;
use super::ptr::{self, Handle};
use crate::client::DirectCall;
use crate::drive::runtime;
use crate::error::{Error, Result, Status};

/// An asynchronous operation started by an `_async` function. Its completion
/// callback runs exactly once, whether or not the handle is still held.
/// Thread-safe: cancel it from any thread; free it with mcpc_op_free.
pub struct mcpc_op_t {
    _private: [u8; 0],
}

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const CANCELLED: u8 = 2;

pub(crate) struct OpState {
    state: AtomicU8,
    /// What a task-run operation's work watches; a direct one has its call to
    /// cancel alone (a token for nobody to watch cost an allocation a call).
    token: Option<CancellationToken>,
    /// A direct operation's call, to cancel it (no task listens to its token).
    direct: OnceLock<DirectCall>,
}

impl OpState {
    fn new(token: Option<CancellationToken>) -> Self {
        OpState {
            state: AtomicU8::new(RUNNING),
            token,
            direct: OnceLock::new(),
        }
    }

    /// Marks the operation done, unless a cancel won the race: then whatever the
    /// work produced is dropped and the outcome is MCPC_ERR_CANCELLED.
    fn settle<T>(&self, outcome: Result<T>) -> Result<T> {
        match self
            .state
            .compare_exchange(RUNNING, DONE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => outcome,
            Err(_) => match outcome {
                Err(e) if e.status == Status::MCPC_ERR_CANCELLED => Err(e),
                _ => Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled")),
            },
        }
    }
}

impl Handle for mcpc_op_t {
    type Rust = Arc<OpState>;
    const NAME: &'static str = "op";
}

/// Counts a client's operations in flight, and refuses new ones once closing.
/// An atomic count, and a wake-up only when the last operation of a closing client
/// ends: a watch channel here took about 900 instructions per operation (callgrind).
pub(crate) struct OpTracker {
    /// Operations in flight times two, plus one once closed.
    state: AtomicUsize,
    idle: Notify,
}

const CLOSED: usize = 1;
const ONE_OP: usize = 2;

pub(crate) struct OpGuard(Arc<OpTracker>);

impl Drop for OpGuard {
    fn drop(&mut self) {
        self.0.leave();
    }
}

impl OpTracker {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(OpTracker {
            state: AtomicUsize::new(0),
            idle: Notify::new(),
        })
    }

    fn start(self: &Arc<Self>) -> Result<OpGuard> {
        if self.state.fetch_add(ONE_OP, Ordering::AcqRel) & CLOSED != 0 {
            self.leave();
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the client was closed"));
        }
        Ok(OpGuard(self.clone()))
    }

    fn leave(&self) {
        if self.state.fetch_sub(ONE_OP, Ordering::AcqRel) == CLOSED + ONE_OP {
            self.idle.notify_waiters();
        }
    }

    /// Refuses new operations from now on.
    pub(crate) fn close(&self) {
        self.state.fetch_or(CLOSED, Ordering::AcqRel);
    }

    /// Once closed, waits until every operation has run its completion.
    pub(crate) async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            // Registered before the check, so a last operation ending in between
            // still wakes this wait.
            notified.as_mut().enable();
            if self.state.load(Ordering::Acquire) <= CLOSED {
                return;
            }
            notified.await;
        }
    }
}

/// Starts an operation: `work` gets the op's cancellation token (a child of the
/// caller's, if any) and runs on the runtime; `complete` gets its outcome, turned
/// into MCPC_ERR_CANCELLED if a cancel won the race, and runs exactly once on an
/// mcpc thread. Fails at once (no callback) if the tracker refuses.
pub(crate) fn spawn_op<T, F>(
    tracker: Option<&Arc<OpTracker>>,
    parent: Option<&CancellationToken>,
    work: impl FnOnce(CancellationToken) -> F,
    complete: impl FnOnce(Result<T>) + Send + 'static,
) -> Result<Arc<OpState>>
where
    F: Future<Output = Result<T>> + Send + 'static,
    T: Send + 'static,
{
    let guard = tracker.map(OpTracker::start).transpose()?;
    let token = parent.map_or_else(CancellationToken::new, CancellationToken::child_token);
    let op = Arc::new(OpState::new(Some(token.clone())));
    let fut = work(token);
    let state = op.clone();
    // Boxed: a call's future is large, and the task would otherwise copy it whole
    // as it moves through the scheduler's stages.
    runtime::handle().spawn(Box::pin(async move {
        let outcome = state.settle(fut.await);
        complete(outcome);
        drop(guard);
    }));
    Ok(op)
}

/// Starts a call with no task of its own: `start` gets the completion to hand to
/// the core (by value: no box), which finishes it exactly once on an mcpc thread,
/// and returns the call, to cancel it. `complete` then gets the outcome, as with
/// [`spawn_op`]. The op handle is made only when the caller asked for one
/// (`handle`): with none, nothing can cancel the call but a close or its timeout,
/// and the call costs two allocations less.
pub(crate) fn direct_op<T, K>(
    tracker: &Arc<OpTracker>,
    handle: bool,
    start: impl FnOnce(OpDone<K>) -> DirectCall,
    complete: K,
) -> Result<Option<Arc<OpState>>>
where
    K: FnOnce(Result<T>) + Send + 'static,
{
    let guard = tracker.start()?;
    let op = handle.then(|| Arc::new(OpState::new(None)));
    let call = start(OpDone {
        state: op.clone(),
        complete,
        guard,
    });
    if let Some(op) = &op {
        let _ = op.direct.set(call);
    }
    Ok(op)
}

/// A direct operation's completion (see [`direct_op`]).
pub(crate) struct OpDone<K> {
    /// `None` when no handle was made: then nothing can cancel the call.
    state: Option<Arc<OpState>>,
    complete: K,
    guard: OpGuard,
}

impl<K> OpDone<K> {
    /// Settles the operation (a cancel that came first wins) and runs `complete`;
    /// the operation counts as in flight until it has returned.
    pub(crate) fn finish<T>(self, outcome: Result<T>)
    where
        K: FnOnce(Result<T>),
    {
        let outcome = match &self.state {
            Some(state) => state.settle(outcome),
            None => outcome,
        };
        (self.complete)(outcome);
        drop(self.guard);
    }
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
            if op
                .state
                .compare_exchange(RUNNING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                if let Some(token) = &op.token {
                    token.cancel();
                }
                if let Some(call) = op.direct.get() {
                    call.cancel();
                }
            }
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
        unsafe { ptr::get(op) }.is_ok_and(|o| o.state.load(Ordering::Acquire) != RUNNING)
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
