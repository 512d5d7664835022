//! Direct calls: a request registered and sent without a task of its own, its
//! deadline one of the client's, and the task that expires those deadlines.

use super::*;
use crate::error::{Error, Status};
use crate::transport::Transport;
use std::sync::{Arc, Weak};
use std::time::Duration;
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
    pub(super) fn register_direct(&self, id: i64, timeout: Duration, reply: Reply, reader: Reader) -> Option<bool> {
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
            reader,
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

/// A direct call in flight: cancel it, or let it run.
pub struct DirectCall {
    id: i64,
    shared: Arc<Shared>,
    transport: Weak<dyn Transport>,
}

impl DirectCall {
    pub(super) fn new(id: i64, client: &Client) -> Self {
        DirectCall {
            id,
            shared: client.shared.clone(),
            transport: Arc::downgrade(&client.transport),
        }
    }

    /// Cancels the call: sends `notifications/cancelled`, and its completion gets
    /// MCPC_ERR_CANCELLED (on an mcpc thread). No-op once the call completed.
    pub fn cancel(&self) {
        if let Some(w) = self.shared.take(self.id) {
            give_up(&self.transport, self.id, "cancelled by the client");
            w.complete(Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled")), false);
        }
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
    use tokio::sync::oneshot;

    fn call(shared: &Shared, id: i64, timeout: Duration) -> Outcome {
        let (tx, rx) = oneshot::channel();
        shared
            .register_direct(id, timeout, Reply::Wake(tx), Reader::Call)
            .unwrap();
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
