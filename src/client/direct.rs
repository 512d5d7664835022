//! Direct calls: a tool call registered and sent without a task of its own, its
//! deadline one of the client's, and the task that expires those deadlines.

use super::*;
use crate::error::{Error, Result, Status};
use crate::jsonrpc::{self};
use crate::result::{Arguments, CallResult};
use crate::transport::{Outgoing, Transport};
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::time::Instant;

/// Stops a direct call's exchange and tells the server, if the transport is still there.
pub(super) fn give_up(transport: &Weak<dyn Transport>, id: i64, reason: &str) {
    if let Some(transport) = transport.upgrade() {
        transport.abandon(id);
        send_cancel(&*transport, id, reason);
    }
}

/// Fails direct calls whose deadline passed; ends when the connection closes. Holds
/// the transport weakly: a client dropped without being closed still drops it.
pub(super) async fn expire_deadlines(shared: Arc<Shared>, transport: Weak<dyn Transport>) {
    loop {
        // Made before the deadline is armed, so that an earlier one registered
        // meanwhile still wakes this wait.
        let wake = shared.deadline_wake.notified();
        let Some(next) = shared.arm_deadline() else {
            return;
        };
        match next {
            Some(t) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(t) => {}
                    _ = wake => continue,
                }
            }
            None => {
                wake.await;
                continue;
            }
        }
        let now = Instant::now();
        while let Some((id, w)) = shared.take_expired(now) {
            give_up(&transport, id, "timed out");
            let waited = now.duration_since(w.since).as_millis();
            w.complete(
                Err(Error::new(
                    Status::MCPC_ERR_TIMEOUT,
                    format!("timed out after {waited} ms"),
                )),
                true,
            );
        }
    }
}

impl Shared {
    /// Registers direct call `id`, its deadline `timeout` from now, and tells
    /// whether the deadline task is yet to be started; `None` when the connection
    /// is closed: then the reply gets the error at once (on an mcpc thread).
    pub(super) fn register_direct(&self, id: i64, timeout: Duration, reply: Reply) -> Option<bool> {
        let mut st = self.lock();
        // Under the lock: calls of one timeout, started from many threads at
        // once, then come in the order of their deadlines, and each joins the
        // back of the deadline queue rather than the sorted set.
        let since = Instant::now();
        let deadline = since + timeout;
        let waiter = Waiter {
            reply,
            progress: None,
            since,
            deadline: Some(deadline),
            reader: Reader::Call,
        };
        if let Some(err) = &st.closed {
            let err = err.clone();
            drop(st);
            waiter.complete(Err(err), false);
            return None;
        }
        st.pending.insert(id, waiter);
        if st.deadlines.insert(deadline, id) && st.deadline_armed.map_or(true, |armed| deadline < armed) {
            self.deadline_wake.notify_one();
        }
        Some(!std::mem::replace(&mut st.deadline_task, true))
    }

    /// Arms the deadline task: the earliest deadline, which it sleeps until (none:
    /// until woken); `None` once the connection closed, which ends the task.
    pub(super) fn arm_deadline(&self) -> Option<Option<Instant>> {
        let mut st = self.lock();
        if st.closed.is_some() {
            return None;
        }
        st.deadline_armed = st.deadlines.first();
        Some(st.deadline_armed)
    }

    /// Takes out of the table a direct call whose deadline is at or before `now`.
    pub(super) fn take_expired(&self, now: Instant) -> Option<(i64, Waiter)> {
        let mut guard = self.lock();
        let st = &mut *guard;
        loop {
            let pending = &st.pending;
            let id = st.deadlines.pop_expired(now, |i| pending.contains_key(&i))?;
            if let Some(w) = st.pending.remove(&id) {
                return Some((id, w));
            }
        }
    }
}

/// A direct call's copy of its tool's name, for error texts: inline when short (most
/// names are), so that it costs no allocation.
pub struct ToolName(smallvec::SmallVec<[u8; 32]>);

impl ToolName {
    pub fn as_str(&self) -> &str {
        // A copy of a `&str`, so always UTF-8; checked only when an error text needs it.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// A direct call in flight: cancel it, or let it run.
pub struct DirectCall {
    id: i64,
    shared: Arc<Shared>,
    transport: Weak<dyn Transport>,
}

impl DirectCall {
    /// Cancels the call: sends `notifications/cancelled`, and its completion gets
    /// MCPC_ERR_CANCELLED (on an mcpc thread). No-op once the call completed.
    pub fn cancel(&self) {
        if let Some(w) = self.shared.take(self.id) {
            give_up(&self.transport, self.id, "cancelled by the client");
            w.complete(Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled")), false);
        }
    }
}

impl Client {
    /// True when a call with these controls can be [direct](Self::call_tool_direct):
    /// a session before 2026-07-28 (no `input_required` rounds), no progress, and no
    /// cancellation token (a direct call is cancelled through its [`DirectCall`]).
    pub fn can_call_direct(&self, ctl: &Control) -> bool {
        ctl.progress.is_none() && !ctl.reset_on_progress && ctl.cancel.is_none() && !self.is_modern()
    }

    /// Starts `tools/call` with no task behind it: the request is registered and
    /// sent, and `done` runs exactly once with the outcome, on an mcpc thread: the one
    /// that routes the response (with no hand-off), the deadline task on a timeout, or
    /// a task for a cancel, a close or a failed send. `done` is also given the tool's
    /// name (the call's own copy, kept for error texts). Only for calls that
    /// [`can_call_direct`](Self::can_call_direct); errors as [`call_tool`](Self::call_tool).
    pub fn call_tool_direct(
        &self,
        name: &str,
        arguments: Option<Arguments<'_>>,
        ctl: &Control,
        done: impl FnOnce(Result<CallResult>, &ToolName) + Send + 'static,
    ) -> DirectCall {
        // The error context is made only for an error.
        let tool = ToolName(smallvec::SmallVec::from_slice(name.as_bytes()));
        let completion: Completion = Box::new(move |outcome| done(call_outcome(outcome, tool.as_str()), &tool));
        let id = self.start_direct(name, arguments, ctl, Reply::Call(completion));
        DirectCall {
            id,
            shared: self.shared.clone(),
            transport: Arc::downgrade(&self.transport),
        }
    }

    /// [`call_tool`](Self::call_tool) for a caller that waits for it on its own
    /// thread (a blocking call): [direct](Self::call_tool_direct) when it can be, its
    /// deadline one of the client's, so that the call arms no timer of its own and
    /// waits for nothing but its outcome. (Through `call_tool` it would have a timer
    /// of its own and a select over the outcome, the timeout, the cancel handle and
    /// progress; docs/decisions/0005-direct-blocking-call.md.)
    pub async fn call_tool_waited(
        &self,
        name: &str,
        arguments: Option<Arguments<'_>>,
        ctl: &Control,
    ) -> Result<CallResult> {
        if !self.can_call_direct(ctl) {
            return self.call_tool(name, arguments, ctl).await;
        }
        let (tx, rx) = oneshot::channel();
        let id = self.start_direct(name, arguments, ctl, Reply::Wake(tx));
        // Ends the call if this future is dropped first.
        let mut guard = PendingGuard {
            client: self,
            id,
            done: false,
        };
        let outcome = rx.await;
        guard.done = true;
        call_outcome(outcome.unwrap_or_else(|_| Err(self.shared.dropped_error())), name)
    }

    /// Registers and sends a direct `tools/call`, whose outcome goes to `reply`: from
    /// the thread that routes its response, from the deadline task when its timeout
    /// passes (which also tells the server), or at once if the client is closed or
    /// the request could not be sent. Its id.
    pub(super) fn start_direct(
        &self,
        name: &str,
        arguments: Option<Arguments<'_>>,
        ctl: &Control,
        reply: Reply,
    ) -> i64 {
        let id = self.next_id();
        let params = CallParams {
            name,
            arguments,
            meta: None,
            request_state: None,
            input_responses: None,
        };
        let body = jsonrpc::encode_request(id, "tools/call", Some(&params), arguments.map_or(0, |a| a.get().len()));
        let timeout = self.timeout_of(ctl);
        let Some(start_task) = self.shared.register_direct(id, timeout, reply) else {
            return id;
        };
        if start_task {
            crate::drive::runtime::handle()
                .spawn(expire_deadlines(self.shared.clone(), Arc::downgrade(&self.transport)));
        }
        let sent = self.transport.send(Outgoing {
            body,
            id: Some(id),
            method: Some(Cow::Borrowed("tools/call")),
            headers: Vec::new(),
        });
        if let Err(e) = sent {
            if let Some(w) = self.shared.take(id) {
                w.complete(Err(e), false);
            }
        }
        id
    }
}

/// Model checks (`make loom`): the deadline queue between the deadline task, the
/// router and a caller registering a call, in every interleaving.
#[cfg(all(test, mcpc_loom))]
mod loom_models {
    use super::super::router::loom_models::{ended, shared, woken, Outcome};
    use super::*;
    use crate::transport::Sink;
    use loom::thread;

    fn call(shared: &Shared, id: i64, timeout: Duration) -> Outcome {
        let (tx, rx) = oneshot::channel();
        shared.register_direct(id, timeout, Reply::Wake(tx)).unwrap();
        rx
    }

    fn deadline_of(shared: &Shared, id: i64) -> Option<Instant> {
        shared.lock().pending.get(&id).and_then(|w| w.deadline)
    }

    /// Call 1 is due and the responses to it and to call 2 arrive as the deadline
    /// task expires what is due and arms again; call 3 registers meanwhile. A
    /// deadline either fires or is removed, never both (each call completed once,
    /// a timeout only when due, no ended call's deadline left to fire), and never
    /// lost: every pending call's deadline is queued, in order, and a call due
    /// before what the task armed wakes it.
    #[test]
    fn loom_a_deadline_fires_or_is_removed_never_both() {
        loom::model(|| {
            let shared = shared();
            let mut due = call(&shared, 1, Duration::ZERO);
            let mut later = call(&shared, 2, Duration::from_secs(3600));
            // The task armed for call 1 and took its wake-up; its timer fires now.
            shared.arm_deadline();
            woken(&shared);
            let fired = Instant::now();
            let task = {
                let shared = shared.clone();
                thread::spawn(move || {
                    while let Some((_, w)) = shared.take_expired(fired) {
                        assert!(w.deadline.unwrap() <= fired, "a timeout before its deadline");
                        w.complete(Err(Error::new(Status::MCPC_ERR_TIMEOUT, "timed out")), true);
                    }
                    shared.arm_deadline().unwrap()
                })
            };
            let router = {
                let shared = shared.clone();
                thread::spawn(move || {
                    for id in [1, 2] {
                        shared.fail_request(id, Error::new(Status::MCPC_ERR_TRANSPORT, "answered"));
                    }
                })
            };
            let mut fresh = call(&shared, 3, Duration::ZERO);
            let fresh_at = deadline_of(&shared, 3);
            let armed = task.join().unwrap();
            router.join().unwrap();

            let one = ended(&mut due);
            assert!(
                matches!(one, Some(Status::MCPC_ERR_TIMEOUT | Status::MCPC_ERR_TRANSPORT)),
                "{one:?}"
            );
            assert_eq!(ended(&mut later), Some(Status::MCPC_ERR_TRANSPORT));
            // Due after the timer fired, so pending: the task armed for it, or is
            // woken for it.
            assert_eq!(ended(&mut fresh), None);
            let fresh_at = fresh_at.expect("call 3 pending");
            assert!(armed.is_some_and(|t| t <= fresh_at) || woken(&shared), "a lost wake-up");
            let mut guard = shared.lock();
            let st = &mut *guard;
            let mut queued: Vec<_> = st.pending.iter().map(|(&id, w)| (w.deadline.unwrap(), id)).collect();
            queued.sort();
            assert_eq!(st.deadlines.first(), queued.first().map(|q| q.0));
            let pending = &st.pending;
            let end = fired + Duration::from_secs(7200);
            let fire: Vec<_> =
                std::iter::from_fn(|| st.deadlines.pop_expired(end, |i| pending.contains_key(&i))).collect();
            assert_eq!(
                fire,
                queued.iter().map(|q| q.1).collect::<Vec<_>>(),
                "what would fire is what is pending"
            );
        });
    }
}
