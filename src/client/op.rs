//! An asynchronous operation in flight: exactly one completion (also when its work
//! panics or it is dropped unfinished), a cancel from any thread that wins or loses
//! against it, and a per-client tracker so that no completion runs after the
//! client's close has returned.

use std::future::Future;
use std::sync::{Arc, OnceLock};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::direct::DirectCall;
use crate::drive::runtime;
use crate::error::{Error, Result, Status};
use crate::sync::{AtomicU8, AtomicUsize, Ordering};

const RUNNING: u8 = 0;
const DONE: u8 = 1;
const CANCELLED: u8 = 2;

pub struct OpState {
    state: AtomicU8,
    /// What a task-run operation's work watches; a direct one has its call to
    /// cancel alone (a token for nobody to watch cost an allocation a call).
    token: Option<CancellationToken>,
    /// A direct operation's call, to cancel it (no task listens to its token).
    direct: OnceLock<DirectCall>,
}

impl OpState {
    /// Cancels the operation: its outcome becomes MCPC_ERR_CANCELLED unless it had
    /// completed already; a task-run one's token and a direct one's call are
    /// cancelled (which sends `notifications/cancelled`). Idempotent.
    pub fn cancel(&self) {
        if self
            .state
            .compare_exchange(RUNNING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            if let Some(token) = &self.token {
                token.cancel();
            }
            if let Some(call) = self.direct.get() {
                call.cancel();
            }
        }
    }

    /// True once completed or cancelled.
    pub fn is_finished(&self) -> bool {
        self.state.load(Ordering::Acquire) != RUNNING
    }

    pub(crate) fn new(token: Option<CancellationToken>) -> Self {
        OpState {
            state: AtomicU8::new(RUNNING),
            token,
            direct: OnceLock::new(),
        }
    }

    /// Marks the operation done, unless a cancel won the race: then whatever the
    /// work produced is dropped and the outcome is MCPC_ERR_CANCELLED.
    pub(crate) fn settle<T>(&self, outcome: Result<T>) -> Result<T> {
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

/// Counts a client's operations in flight, and refuses new ones once closing.
/// An atomic count, and a wake-up only when the last operation of a closing client
/// ends: a watch channel here would cost far more per operation (docs/performance.md).
pub struct OpTracker {
    /// Operations in flight times two, plus one once closed.
    state: AtomicUsize,
    idle: Notify,
}

const CLOSED: usize = 1;
const ONE_OP: usize = 2;

pub struct OpGuard(Arc<OpTracker>);

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

/// An operation's completion, run exactly once: by [`finish`](Self::finish), or, if
/// the operation ends without finishing (its work panicked, or it was dropped
/// unfinished), by its drop with MCPC_ERR_PANIC naming the operation, so that a host
/// waiting for the completion never waits forever. The operation counts as in flight
/// until the completion has returned.
pub(crate) struct Completer<T, K>
where
    K: FnOnce(Result<T>) + Send + 'static,
    T: 'static,
{
    /// `None` when no handle was made: then nothing can cancel the operation.
    state: Option<Arc<OpState>>,
    complete: Option<K>,
    guard: Option<OpGuard>,
    what: &'static str,
    _outcome: std::marker::PhantomData<fn(T)>,
}

impl<T, K> Completer<T, K>
where
    K: FnOnce(Result<T>) + Send + 'static,
    T: 'static,
{
    fn new(state: Option<Arc<OpState>>, guard: Option<OpGuard>, what: &'static str, complete: K) -> Self {
        Completer {
            state,
            complete: Some(complete),
            guard,
            what,
            _outcome: std::marker::PhantomData,
        }
    }

    /// Settles the operation (a cancel that came first wins) and runs the completion.
    pub(crate) fn finish(mut self, outcome: Result<T>) {
        let outcome = match &self.state {
            Some(state) => state.settle(outcome),
            None => outcome,
        };
        if let Some(complete) = self.complete.take() {
            complete(outcome);
        }
        drop(self.guard.take());
    }
}

impl<T, K> Drop for Completer<T, K>
where
    K: FnOnce(Result<T>) + Send + 'static,
    T: 'static,
{
    fn drop(&mut self) {
        let Some(complete) = self.complete.take() else { return };
        if let Some(state) = &self.state {
            // A cancel racing this still sees the operation finished.
            let _ = state.settle(Ok(()));
        }
        let err = crate::error::Error::panicked(self.what);
        let guard = self.guard.take();
        if std::thread::panicking() {
            // Not while unwinding: on an mcpc thread of its own.
            runtime::handle().spawn(async move {
                complete(Err(err));
                drop(guard);
            });
        } else {
            complete(Err(err));
            drop(guard);
        }
    }
}

/// A future whose panic is its outcome, so that the task running it completes.
struct CatchUnwind<F>(std::pin::Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        let fut = self.0.as_mut();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fut.poll(cx))) {
            Ok(std::task::Poll::Pending) => std::task::Poll::Pending,
            Ok(std::task::Poll::Ready(v)) => std::task::Poll::Ready(Ok(v)),
            Err(p) => std::task::Poll::Ready(Err(p)),
        }
    }
}

/// Starts an operation: `work` gets the op's cancellation token (a child of the
/// caller's, if any) and runs on the runtime; `complete` gets its outcome, turned
/// into MCPC_ERR_CANCELLED if a cancel won the race (MCPC_ERR_PANIC, naming `what`,
/// if the work panicked), and runs exactly once on an mcpc thread. Fails at once (no
/// callback) if the tracker refuses.
pub(crate) fn spawn_op<T, F>(
    tracker: Option<&Arc<OpTracker>>,
    parent: Option<&CancellationToken>,
    what: &'static str,
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
    let done = Completer::new(Some(op.clone()), guard, what, complete);
    // Boxed: a call's future is large, and the task would otherwise copy it whole
    // as it moves through the scheduler's stages.
    let fut = CatchUnwind(Box::pin(async move {
        crate::inject::point("spawned", what);
        fut.await
    }));
    runtime::handle().spawn(async move {
        let outcome = fut.await.unwrap_or_else(|_| Err(crate::error::Error::panicked(what)));
        done.finish(outcome);
    });
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
    what: &'static str,
    start: impl FnOnce(OpDone<T, K>) -> DirectCall,
    complete: K,
) -> Result<Option<Arc<OpState>>>
where
    K: FnOnce(Result<T>) + Send + 'static,
    T: 'static,
{
    let guard = tracker.start()?;
    let op = handle.then(|| Arc::new(OpState::new(None)));
    let call = start(Completer::new(op.clone(), Some(guard), what, complete));
    if let Some(op) = &op {
        let _ = op.direct.set(call);
    }
    Ok(op)
}

/// A direct operation's completion (see [`direct_op`]).
pub(crate) type OpDone<T, K> = Completer<T, K>;

/// Model checks (`make loom`): every interleaving of the operation's decision and
/// of the tracker's count, not only those a stress run meets.
#[cfg(all(test, mcpc_loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;
    use loom::thread;

    /// A cancel racing the completion: exactly one wins, the outcome says which,
    /// and both see the operation finished.
    #[test]
    fn loom_completion_or_cancel_is_decided_once() {
        loom::model(|| {
            let op = Arc::new(OpState::new(None));
            let canceller = {
                let op = op.clone();
                thread::spawn(move || op.cancel())
            };
            let outcome = op.settle(Ok(7));
            canceller.join().unwrap();
            assert!(op.is_finished());
            let state = op.state.load(Ordering::Acquire);
            match outcome {
                Ok(7) => assert_eq!(state, DONE),
                Err(e) => {
                    assert_eq!(e.status, Status::MCPC_ERR_CANCELLED);
                    assert_eq!(state, CANCELLED);
                }
                Ok(_) => unreachable!(),
            }
        });
    }

    /// Two cancels and a completion: the completion is still decided once.
    #[test]
    fn loom_cancel_is_idempotent() {
        loom::model(|| {
            let op = Arc::new(OpState::new(None));
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let op = op.clone();
                    thread::spawn(move || op.cancel())
                })
                .collect();
            let outcome = op.settle(Ok(()));
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(outcome.is_ok(), op.state.load(Ordering::Acquire) == DONE);
        });
    }

    /// An operation starting while the client closes either is refused or is
    /// counted, so that close waits for it; once it ends the count is empty.
    #[test]
    fn loom_close_races_a_start() {
        loom::model(|| {
            let tracker = std::sync::Arc::new(OpTracker {
                state: AtomicUsize::new(0),
                idle: Notify::new(),
            });
            let closer = {
                let t = tracker.clone();
                thread::spawn(move || t.close())
            };
            let started = tracker.start();
            let closed_first = !matches!(started, Ok(_));
            closer.join().unwrap();
            let during = tracker.state.load(Ordering::Acquire);
            match started {
                Ok(guard) => {
                    assert_eq!(during, CLOSED + ONE_OP, "close must wait for it");
                    drop(guard);
                }
                Err(e) => {
                    assert!(closed_first);
                    assert_eq!(e.status, Status::MCPC_ERR_CLOSED);
                }
            }
            assert_eq!(tracker.state.load(Ordering::Acquire), CLOSED);
        });
    }
}
