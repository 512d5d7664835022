//! The router: the table of pending requests and what a transport delivers into
//! it (responses, progress, notifications, server requests), read once.

use super::input::served::{Inbox, Served};
use super::*;
use crate::deadlines::Deadlines;
use crate::error::{Error, Result, Status};
use crate::jsonrpc::{self, Incoming, METHOD_NOT_FOUND};
use crate::protocol::{self};
use crate::result::ResultJson;
use crate::result::{self};
use crate::sync::MutexGuard;
use crate::transport::{Delivered, Delivery, Outgoing, Sink};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;

/// The `subscriptions/listen` requests in force, by request id, each with the sender
/// of its acknowledgement until that came (the subscriptions' module fills it).
pub(super) type ListenRoutes = Mutex<std::collections::HashMap<i64, Option<oneshot::Sender<Vec<String>>>>>;

/// Where a request's outcome goes.
pub(super) enum Reply {
    /// A future waiting in [`Client::request`].
    Wake(oneshot::Sender<Result<ResultJson>>),
    /// A direct call (see [`super::call::Call::start`]).
    Call(Completion),
}

pub(super) struct Waiter {
    pub(super) reply: Reply,
    pub(super) progress: Option<Arc<ProgressState>>,
    /// When the request was registered.
    pub(super) since: Instant,
    /// A direct call's deadline (also in `State::deadlines`).
    pub(super) deadline: Option<Instant>,
    /// How the router reads the result as it reads the response (see
    /// [`Shared::route_read`]).
    pub(super) reader: Reader,
}

/// Results up to this size are read by the router with their response
/// ([`Shared::route_read`]); larger ones go through [`jsonrpc::decode`] and are read
/// by their request. A large call result read by the router would have its copy and
/// its text allocated while the line buffer still holds the message, and glibc
/// would grow and trim the heap around those three buffers on every call, each
/// growth faulting in fresh pages: slower, though with fewer instructions
/// (docs/performance.md). A larger call result in a message handed over whole
/// (`Sink::deliver_whole`) is read by the router too, and so is a read's: it is then
/// kept as a slice of that message, with no copy.
pub(super) const ROUTER_READS_UP_TO: usize = 64 * 1024;

/// What a request's result is, for the router to read it with its response.
#[derive(Clone, Copy, Default, PartialEq)]
pub enum Reader {
    /// Any JSON, read by whoever waits for it.
    #[default]
    Json,
    /// A `CallToolResult`.
    Call,
    /// A `ListToolsResult`.
    Page,
    /// A `ReadResourceResult`.
    Read,
}

impl Waiter {
    /// Hands over the outcome. A direct call's completion runs here, unless this
    /// thread may be the host's (then it runs on an mcpc thread).
    pub(super) fn complete(self, outcome: Result<ResultJson>, on_mcpc_thread: bool) {
        match self.reply {
            Reply::Wake(tx) => {
                let _ = tx.send(outcome);
            }
            Reply::Call(done) if on_mcpc_thread => run_completion(done, outcome),
            Reply::Call(done) => {
                crate::drive::runtime::handle().spawn(async move { run_completion(done, outcome) });
            }
        }
    }
}

/// Runs a direct call's completion. A panic in it stops here, not in the transport
/// that routed the response; the operation's own guard has completed it by then
/// (see [`super::op::Completer`]).
fn run_completion(done: Completion, outcome: Result<ResultJson>) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| done(outcome))).is_err() {
        log::error!("a completion panicked; its operation ended with MCPC_ERR_PANIC");
    }
}

pub(super) struct ProgressState {
    pub(super) callback: Option<ProgressFn>,
    pub(super) notify: Notify,
    /// The last progress value passed on: values that do not increase are dropped
    /// (the protocol promises increasing progress; a replaying server breaks it).
    pub(super) last: Mutex<Option<f64>>,
}

#[derive(Default)]
pub(super) struct State {
    /// By request id. The ids are this client's own (a server's response only looks
    /// one up), so a fast non-keyed hash is safe here, and cheaper than SipHash.
    pub(super) pending: rustc_hash::FxHashMap<i64, Waiter>,
    pub(super) closed: Option<Error>,
    /// Direct calls by deadline (see [`super::direct`]).
    pub(super) deadlines: Deadlines,
    /// The deadline task runs.
    pub(super) deadline_task: bool,
    /// The deadline the task sleeps until (None: until woken). A new deadline wakes
    /// it only when earlier: sequential calls, each the earliest when it starts (the
    /// one before it has ended), would otherwise wake a runtime thread each.
    pub(super) deadline_armed: Option<Instant>,
}

/// The part of a connection that the transport's sink reaches: it outlives
/// nothing it does not own, so the transport can hold it.
pub(crate) struct Shared {
    pub(super) next_id: AtomicI64,
    pub(super) state: crate::sync::Mutex<State>,
    pub(super) on_notification: Option<NotificationFn>,
    pub(super) on_log: Option<super::LogFn>,
    /// The log level asked for (see `logging::level_code`; 0: none).
    pub(super) log_level: std::sync::atomic::AtomicU8,
    /// Under 2026-07-28 servers send no requests, and clients answer none.
    pub(super) modern: AtomicBool,
    /// Wakes the deadline task: an earlier deadline, or the connection closed.
    pub(super) deadline_wake: Notify,
    /// Serves the server's input requests (before 2026-07-28).
    pub(super) inbox: Arc<Inbox>,
    /// Cancelled when the connection is gone: ends waits that are no request of their own.
    pub(super) gone: tokio_util::sync::CancellationToken,
    /// The lists kept between listings (dropped by `list_changed` notifications).
    pub(super) cache: super::cache::Cache,
    /// Under 2026-07-28: the `subscriptions/listen` requests in force.
    pub(super) listens: ListenRoutes,
    /// A restart of the server follows a failed connection: what was in flight fails
    /// as MCPC_ERR_SERVER_EXITED, which says it may be sent again.
    pub(super) restart_follows: AtomicBool,
    /// The tasks the client's calls follow.
    pub(super) tasks: super::followed::Followed,
}

impl Shared {
    pub(super) fn new(options: &super::Options, inbox: Arc<Inbox>) -> Self {
        let level = options.log_level.map_or(0, |l| super::level_code(l).unwrap_or(0));
        Shared {
            next_id: AtomicI64::new(1),
            state: crate::sync::Mutex::new(State::default()),
            on_notification: options.on_notification.clone(),
            on_log: options.on_log.clone(),
            log_level: std::sync::atomic::AtomicU8::new(level),
            modern: AtomicBool::new(false),
            deadline_wake: Notify::new(),
            inbox,
            gone: tokio_util::sync::CancellationToken::new(),
            cache: Default::default(),
            listens: Default::default(),
            restart_follows: AtomicBool::new(options.restart_follows),
            tasks: Default::default(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere never leaves the table inconsistent: every update is one step.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn register(&self, id: i64, waiter: Waiter) -> Result<()> {
        let mut st = self.lock();
        if let Some(err) = &st.closed {
            return Err(err.clone());
        }
        st.pending.insert(id, waiter);
        Ok(())
    }

    pub(super) fn take(&self, id: i64) -> Option<Waiter> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let w = st.pending.remove(&id)?;
        if let Some(d) = w.deadline {
            let pending = &st.pending;
            st.deadlines.remove(d, id, |i| pending.contains_key(&i));
        }
        Some(w)
    }

    pub(super) fn closed_error(&self) -> Option<Error> {
        self.lock().closed.clone()
    }

    /// Replaces a failure that said a restart follows with `err`.
    pub(super) fn replace_restart_error(&self, err: Error) {
        let mut st = self.lock();
        if st
            .closed
            .as_ref()
            .is_some_and(|e| e.status == Status::MCPC_ERR_SERVER_EXITED)
        {
            st.closed = Some(err);
        }
    }

    /// Why a waiter's reply was dropped unanswered: the connection closed.
    pub(super) fn dropped_error(&self) -> Error {
        self.closed_error()
            .unwrap_or_else(|| Error::new(Status::MCPC_ERR_CLOSED, "the connection closed"))
    }

    pub(super) fn route_response(&self, id: i64, outcome: std::result::Result<jsonrpc::RawResult, jsonrpc::RpcError>) {
        match self.take(id) {
            // A caller-supplied transport delivers on the host's threads.
            Some(w) => w.complete(
                outcome.map(ResultJson::from).map_err(crate::protocol::rpc_error),
                crate::sys::on_mcpc_thread(),
            ),
            None => log::debug!("dropped a response to id {id}, which matches no pending request"),
        }
    }

    /// A malformed response to request `id` fails that request at once (a later
    /// valid response to it is then late, and dropped); one that matches no pending
    /// request is only dropped.
    fn route_malformed(&self, id: i64, why: Error) -> Result<Delivered> {
        match self.take(id) {
            Some(w) => {
                log::warn!("failed request {id}: {why}");
                w.complete(Err(why), crate::sys::on_mcpc_thread());
                Ok(Delivered::Done)
            }
            None => {
                log::warn!("dropped a message from the server: {why}");
                Err(why)
            }
        }
    }

    /// Routes a response to a `tools/call`, a `tools/list` or a `resources/read` in
    /// the usual shape, read in one pass: the envelope up to the result
    /// ([`jsonrpc::response_head`]), then the rest checked and read as the result
    /// ([`result::call_result_read`], [`result::page_read`], [`result::contents_read`]), so that the result is not scanned for its end by the
    /// router and then again by its reader. False, with nothing done, for any other
    /// message, for a request whose result is read elsewhere, and for a direct call
    /// when this may be the host's thread (`host`); [`jsonrpc::decode`] then reads
    /// the message.
    pub(super) fn route_read(&self, msg: &[u8], host: bool, owner: Option<&bytes::Bytes>) -> bool {
        let Some((id, rest)) = jsonrpc::response_head(msg) else {
            return false;
        };
        // A large result is read here only from a message handed over whole, which
        // the result then keeps as a slice instead of a copy.
        let large = rest.len() > ROUTER_READS_UP_TO;
        if large && owner.is_none() {
            return false;
        }
        let reader = match self.lock().pending.get(&id) {
            Some(w) if !(host && matches!(w.reply, Reply::Call(_))) => w.reader,
            _ => Reader::Json,
        };
        if large && !matches!(reader, Reader::Call | Reader::Read) {
            return false;
        }
        // The head is ASCII, and so is what follows the result: the message is
        // UTF-8 if the rest is.
        let Some(text) = (reader != Reader::Json)
            .then(|| jsonrpc::utf8(&msg[rest]).ok())
            .flatten()
        else {
            return false;
        };
        let read = match reader {
            Reader::Call => result::call_result_read(text, owner).map(ResultJson::from_call),
            Reader::Read => result::contents_read(text, owner).map(ResultJson::from_contents),
            _ => result::page_read(text).map(|page| ResultJson::from_page(text, page)),
        };
        let Some(read) = read else {
            return false;
        };
        match self.take(id) {
            Some(w) => w.complete(Ok(read), crate::sys::on_mcpc_thread()),
            // It ended meanwhile (a timeout, a cancel): a late response.
            None => log::debug!("dropped a response to id {id}, which matches no pending request"),
        }
        true
    }

    pub(super) fn route_progress(&self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(rename = "progressToken")]
            token: serde_json::Value,
            progress: f64,
            #[serde(default)]
            total: Option<f64>,
            #[serde(default, borrow)]
            message: Option<std::borrow::Cow<'a, str>>,
        }
        let Some(p) = params.and_then(|p| serde_json::from_str::<P<'_>>(p.get()).ok()) else {
            log::warn!("dropped a malformed notifications/progress");
            return;
        };
        let Some(id) = p.token.as_i64() else { return };
        let state = self.lock().pending.get(&id).and_then(|w| w.progress.clone());
        if let Some(state) = state {
            {
                let mut last = state.last.lock().unwrap_or_else(|p| p.into_inner());
                if last.is_some_and(|l| p.progress <= l) {
                    return;
                }
                *last = Some(p.progress);
            }
            state.notify.notify_one();
            if let Some(cb) = &state.callback {
                cb(p.progress, p.total, p.message.as_deref());
            }
        }
    }
}

impl Shared {
    /// Any message, on the transport's own thread.
    fn deliver_any(&self, msg: &[u8], whole: Option<&bytes::Bytes>) -> Result<Delivered> {
        if self.route_read(msg, false, whole) {
            return Ok(Delivered::Done);
        }
        match jsonrpc::decode_in(msg, whole) {
            Err(e) => {
                log::warn!("dropped a message from the server: {e}");
                Err(e)
            }
            Ok(Incoming::Response { id, outcome }) => {
                self.route_response(id, outcome);
                Ok(Delivered::Done)
            }
            Ok(Incoming::Malformed { id, why }) => self.route_malformed(id, why),
            Ok(Incoming::Request { method, .. }) if self.modern.load(Ordering::Acquire) => {
                log::debug!("dropped a server request ({method}): 2026-07-28 servers send none");
                Ok(Delivered::Done)
            }
            Ok(Incoming::Request { id, method, params }) if self.inbox.handlers.for_method(&method).is_some() => {
                Ok(match self.inbox.serve(id, &method, params) {
                    Served::Handed => Delivered::Done,
                    Served::Reply(reply) => Delivered::Reply(reply),
                })
            }
            Ok(Incoming::Request { id, method, .. }) => {
                let body = if method == "ping" {
                    jsonrpc::encode_response(id, Ok(protocol::empty_capabilities()))
                } else {
                    let msg = format!("Method not found: {}", method.chars().take(100).collect::<String>());
                    jsonrpc::encode_response(id, Err((METHOD_NOT_FOUND, &msg)))
                };
                Ok(Delivered::Reply(Outgoing::response(body)))
            }
            Ok(Incoming::Notification { method, params }) => {
                if self.modern.load(Ordering::Acquire) && self.route_listen(&method, params) {
                    return Ok(Delivered::Done);
                }
                if method.ends_with("/list_changed") {
                    self.cache.changed(&method);
                }
                if method == "notifications/tasks/status" {
                    self.tasks.note(params); // and on to the host
                }
                if method == "notifications/progress" {
                    self.route_progress(params);
                } else if method == "notifications/message"
                    && self
                        .on_log
                        .as_ref()
                        .is_some_and(|f| super::logging::route_log(f, params))
                {
                    // handed to the log callback
                } else if let Some(cb) = &self.on_notification {
                    cb(&method, params.map(RawValue::get));
                }
                Ok(Delivered::Done)
            }
        }
    }

    fn is_direct_call(&self, id: i64) -> bool {
        matches!(
            self.lock().pending.get(&id),
            Some(Waiter {
                reply: Reply::Call(_),
                ..
            })
        )
    }

    /// A response only, on a caller's thread: anything else is left to the
    /// transport's own thread.
    fn deliver_on_caller(&self, msg: &[u8], whole: Option<&bytes::Bytes>) -> Result<Delivered> {
        if self.route_read(msg, true, whole) {
            return Ok(Delivered::Done);
        }
        match jsonrpc::decode_in(msg, whole) {
            Ok(Incoming::Response { id, outcome }) => {
                // A direct call's completion is the host's code: never on the host's thread.
                if self.is_direct_call(id) {
                    return Ok(Delivered::Left);
                }
                self.route_response(id, outcome);
                Ok(Delivered::Done)
            }
            Ok(Incoming::Malformed { id, .. }) if self.is_direct_call(id) => Ok(Delivered::Left),
            Ok(Incoming::Malformed { id, why }) => self.route_malformed(id, why),
            Ok(_) => Ok(Delivered::Left),
            Err(e) => {
                log::warn!("dropped a message from the server: {e}");
                Err(e)
            }
        }
    }
}

impl Sink for Shared {
    fn deliver(&self, d: Delivery<'_>) -> Result<Delivered> {
        if d.on_caller {
            return self.deliver_on_caller(d.msg, d.whole);
        }
        self.deliver_any(d.msg, d.whole)
    }

    fn is_pending(&self, id: i64) -> bool {
        self.lock().pending.contains_key(&id)
    }

    fn fail_request(&self, id: i64, err: Error) {
        if let Some(w) = self.take(id) {
            w.complete(Err(err), crate::sys::on_mcpc_thread());
        }
    }

    fn closed(&self, err: Error) {
        let err = if err.status != Status::MCPC_ERR_CLOSED && self.restart_follows.load(Ordering::Acquire) {
            Error::new(
                Status::MCPC_ERR_SERVER_EXITED,
                format!("{}; the server is being started again", err.message),
            )
        } else {
            err
        };
        let drained: Vec<Waiter> = {
            let mut st = self.lock();
            if st.closed.is_some() {
                return;
            }
            st.closed = Some(err.clone());
            st.deadlines.clear();
            st.pending.drain().map(|(_, w)| w).collect()
        };
        self.deadline_wake.notify_one();
        self.gone.cancel();
        for w in drained {
            // Closing may run on the host's thread (mcpc_client_close).
            w.complete(Err(err.clone()), false);
        }
    }
}

/// Removes a request's waiter when its future ends for any reason (completion,
/// timeout, cancellation, or the future being dropped), so a late response is dropped.
pub(super) struct PendingGuard<'a> {
    pub(super) client: &'a Client,
    pub(super) id: i64,
    pub(super) done: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.client.shared.take(self.id);
            self.client.transport.abandon(self.id);
        }
    }
}

/// Model checks (`make loom`): the table of pending requests, its deadlines and
/// the close, in every interleaving.
#[cfg(all(test, mcpc_loom))]
pub(super) mod loom_models {
    use super::*;
    use crate::transport::Delivery;
    use loom::thread;
    use std::future::Future;
    use std::task::{Context, Waker};
    use std::time::Duration;
    use tokio::sync::oneshot::error::TryRecvError;

    pub(in crate::client) type Outcome = oneshot::Receiver<Result<ResultJson>>;

    pub(in crate::client) fn shared() -> Arc<Shared> {
        let inbox = Inbox::new(Default::default(), Duration::from_secs(1));
        Arc::new(Shared::new(&super::super::Options::default(), inbox))
    }

    /// How a request ended: `None` while nothing completed it. A reply dropped
    /// unanswered (its waiter lost) fails the model.
    pub(in crate::client) fn ended(rx: &mut Outcome) -> Option<Status> {
        match rx.try_recv() {
            Ok(Ok(_)) => Some(Status::MCPC_OK),
            Ok(Err(e)) => Some(e.status),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Closed) => panic!("a request was dropped without its outcome"),
        }
    }

    /// True when a wake-up of the deadline task is waiting for it.
    pub(in crate::client) fn woken(shared: &Shared) -> bool {
        let wake = std::pin::pin!(shared.deadline_wake.notified());
        wake.poll(&mut Context::from_waker(Waker::noop())).is_ready()
    }

    fn request(shared: &Shared, id: i64) -> Result<Outcome> {
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter {
            reply: Reply::Wake(tx),
            progress: None,
            since: Instant::now(),
            deadline: None,
            reader: Reader::Json,
        };
        shared.register(id, waiter).map(|()| rx)
    }

    /// The router completes a request while the connection closes and a new
    /// request registers: each registered request is completed exactly once (by
    /// its response or by the close), one registered after the close is refused,
    /// and nothing is left in the table, the deadlines or unwoken.
    #[test]
    fn loom_close_racing_the_router_completes_each_request_once() {
        loom::model(|| {
            let shared = shared();
            let mut answered = request(&shared, 1).unwrap();
            let (tx, mut direct) = oneshot::channel();
            shared
                .register_direct(2, Duration::from_secs(3600), Reply::Wake(tx), Reader::Call)
                .unwrap();
            let router = {
                let shared = shared.clone();
                thread::spawn(move || {
                    let _ = shared.deliver(Delivery::any(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#, None));
                })
            };
            let closer = {
                let shared = shared.clone();
                thread::spawn(move || shared.closed(Error::new(Status::MCPC_ERR_CLOSED, "closed")))
            };
            let late = request(&shared, 3);
            router.join().unwrap();
            closer.join().unwrap();

            let one = ended(&mut answered);
            assert!(
                matches!(one, Some(Status::MCPC_OK | Status::MCPC_ERR_CLOSED)),
                "{one:?}"
            );
            assert_eq!(ended(&mut direct), Some(Status::MCPC_ERR_CLOSED));
            match late {
                Ok(mut rx) => assert_eq!(ended(&mut rx), Some(Status::MCPC_ERR_CLOSED)),
                Err(e) => assert_eq!(e.status, Status::MCPC_ERR_CLOSED),
            }
            let st = shared.lock();
            assert!(st.pending.is_empty() && st.deadlines.first().is_none());
            drop(st);
            assert!(woken(&shared), "the deadline task must hear of the close");
        });
    }
}
