//! The caller-supplied transport: the host owns the channel. Outgoing messages go
//! to host callbacks, run one at a time on one blocking-pool thread per transport
//! (never a runtime worker, so a slow host cannot stall the runtime); incoming
//! messages are pushed by the host from any thread with [`HostEnd::deliver`], and
//! routed on that thread with no hop.
//!
//! Two forms: a stream (`send` each message; responses arrive through `deliver`),
//! and request/response (each message becomes an [`Exchange`] that the host
//! completes later, from any thread, with the response body).

use crate::transport::{Delivered, Delivery};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{BoxFuture, Outgoing, SinkRef, Transport};
use crate::drive::runtime::{self, CallbackScope};
use crate::error::{Error, Result, Status};
use crate::framing::LineFramer;

/// Sends one message on the host's channel; an `Err` fails that message's request.
pub type SendFn = Box<dyn FnMut(&[u8]) -> std::result::Result<(), String> + Send>;
/// Hands one message to the host as an exchange it completes later.
pub type RequestFn = Box<dyn FnMut(Exchange, &[u8]) -> std::result::Result<(), String> + Send>;
/// Closes the host's channel. Runs at most once, after every queued message went out.
pub type CloseFn = Box<dyn FnOnce() + Send>;

pub enum Mode {
    Stream(SendFn),
    RequestResponse(RequestFn),
}

/// How long `close` waits for the host's callbacks to return before giving up on them.
pub const CLOSE_WAIT: Duration = Duration::from_secs(5);

enum Job {
    Send(Outgoing),
    Close,
}

struct State {
    sink: Option<SinkRef>,
    closed: bool,
    max_message_size: usize,
    /// The callbacks, until a client attaches and the worker takes them.
    callbacks: Option<(Mode, Option<CloseFn>)>,
    queue: Option<mpsc::Sender<Job>>,
    worker: Option<tokio::task::JoinHandle<()>>,
}

struct Inner {
    state: Mutex<State>,
}

impl Inner {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enqueue(&self, msg: Outgoing) -> Result<()> {
        let st = self.lock();
        match (&st.queue, st.closed) {
            (Some(q), false) if q.send(Job::Send(msg)).is_ok() => Ok(()),
            _ => Err(Error::new(Status::MCPC_ERR_CLOSED, "the transport is closed")),
        }
    }

    fn sink(&self) -> Result<(SinkRef, usize)> {
        let st = self.lock();
        if st.closed {
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the transport is closed"));
        }
        match &st.sink {
            Some(s) => Ok((s.clone(), st.max_message_size)),
            None => Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "the transport is not attached to a client yet",
            )),
        }
    }

    /// Routes one message; answers to server requests are queued to go out.
    fn deliver(&self, msg: &[u8]) -> Result<()> {
        let (sink, max) = self.sink()?;
        if msg.len() > max {
            let err = Error::new(
                Status::MCPC_ERR_MESSAGE_TOO_LARGE,
                format!(
                    "the host delivered a message of {} bytes, over the {max} byte limit",
                    msg.len()
                ),
            );
            sink.closed(err.clone());
            return Err(err);
        }
        let _scope = CallbackScope::enter();
        if let Delivered::Reply(reply) = sink.deliver(Delivery::any(msg, None))? {
            // A reply that cannot go out (closed meanwhile) only concerns the server.
            let _ = self.enqueue(reply);
        }
        Ok(())
    }
}

/// The host's end: what it holds to push messages in.
#[derive(Clone)]
pub struct HostEnd {
    inner: Arc<Inner>,
}

/// The client's end, behind the [`Transport`] trait.
struct ClientEnd {
    inner: Arc<Inner>,
}

impl HostEnd {
    pub fn new(mode: Mode, close: Option<CloseFn>) -> Self {
        HostEnd {
            inner: Arc::new(Inner {
                state: Mutex::new(State {
                    sink: None,
                    closed: false,
                    max_message_size: super::stdio::DEFAULT_MAX_MESSAGE,
                    callbacks: Some((mode, close)),
                    queue: None,
                    worker: None,
                }),
            }),
        }
    }

    /// Attaches the transport to a client: starts its callback thread. A transport
    /// serves one client only.
    pub fn attach(&self, sink: SinkRef, max_message_size: usize) -> Result<Arc<dyn Transport>> {
        let mut st = self.inner.lock();
        let Some((mode, close)) = st.callbacks.take() else {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "the transport is already attached to a client",
            ));
        };
        let (tx, rx) = mpsc::channel();
        st.sink = Some(sink.clone());
        st.max_message_size = max_message_size;
        st.queue = Some(tx);
        let inner = self.inner.clone();
        st.worker = Some(runtime::handle().spawn_blocking(move || run_callbacks(inner, sink, mode, close, rx)));
        Ok(Arc::new(ClientEnd {
            inner: self.inner.clone(),
        }))
    }

    /// One complete message from the host (no framing: exactly one JSON-RPC message).
    pub fn deliver(&self, msg: &[u8]) -> Result<()> {
        self.inner.deliver(msg)
    }

    /// The host's channel ended: everything pending fails with a transport error.
    pub fn end(&self, reason: &str) -> Result<()> {
        let (sink, _) = self.inner.sink()?;
        sink.closed(Error::new(
            Status::MCPC_ERR_TRANSPORT,
            format!("the host ended the transport: {reason}"),
        ));
        Ok(())
    }
}

fn run_callbacks(inner: Arc<Inner>, sink: SinkRef, mut mode: Mode, close: Option<CloseFn>, rx: mpsc::Receiver<Job>) {
    while let Ok(job) = rx.recv() {
        let msg = match job {
            Job::Send(msg) => msg,
            Job::Close => break,
        };
        let id = msg.id;
        let outcome = match &mut mode {
            Mode::Stream(send) => send(&msg.body),
            Mode::RequestResponse(request) => {
                let exchange = Exchange {
                    inner: inner.clone(),
                    id,
                    done: false,
                };
                request(exchange, &msg.body)
            }
        };
        if let Err(why) = outcome {
            let err = Error::new(
                Status::MCPC_ERR_TRANSPORT,
                format!("the host's transport callback failed: {why}"),
            );
            match id {
                Some(id) => sink.fail_request(id, err),
                None => log::warn!("{err}"),
            }
        }
    }
    drop(mode);
    if let Some(close) = close {
        close();
    }
}

impl Transport for ClientEnd {
    fn send(&self, msg: Outgoing) -> Result<()> {
        self.inner.enqueue(msg)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let worker = {
                let mut st = self.inner.lock();
                if let Some(q) = st.queue.take() {
                    let _ = q.send(Job::Close);
                }
                st.closed = true;
                st.sink = None;
                st.worker.take()
            };
            if let Some(w) = worker {
                if tokio::time::timeout(CLOSE_WAIT, w).await.is_err() {
                    log::warn!("the host's transport callbacks did not return within {CLOSE_WAIT:?}");
                }
            }
        })
    }
}

/// One message handed to a request/response host, to be completed exactly once
/// with the response body. Dropped without completion, it fails its request.
pub struct Exchange {
    inner: Arc<Inner>,
    id: Option<i64>,
    done: bool,
}

impl Exchange {
    /// Completes the exchange with the response body: zero or more JSON-RPC
    /// messages, one per line (for example notifications, then the response).
    pub fn complete(mut self, body: &[u8]) -> Result<()> {
        self.done = true;
        let (sink, max) = self.inner.sink()?;
        let mut framer = LineFramer::new(max);
        let mut first_err = None;
        let mut body_ok = framer.feed(body, |line, _| {
            if let Err(e) = self.inner.deliver(line) {
                first_err.get_or_insert(e);
            }
        });
        if body_ok.is_ok() {
            // A final message without a line end.
            body_ok = framer.feed(b"\n", |line, _| {
                if let Err(e) = self.inner.deliver(line) {
                    first_err.get_or_insert(e);
                }
            });
        }
        if let Err(too_long) = body_ok {
            let err = Error::new(
                Status::MCPC_ERR_MESSAGE_TOO_LARGE,
                format!(
                    "the host completed an exchange with a message over the {} byte limit",
                    too_long.limit
                ),
            );
            sink.closed(err.clone());
            return Err(err);
        }
        if let Some(id) = self.id {
            // No-op when the response was in the body.
            sink.fail_request(
                id,
                Error::new(
                    Status::MCPC_ERR_PROTOCOL,
                    "the exchange completed without a response to the request",
                ),
            );
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Fails the exchange: its request fails with a transport error naming `reason`.
    pub fn fail(mut self, reason: &str) {
        self.done = true;
        if let (Some(id), Ok((sink, _))) = (self.id, self.inner.sink()) {
            sink.fail_request(
                id,
                Error::new(
                    Status::MCPC_ERR_TRANSPORT,
                    format!("the host failed the exchange: {reason}"),
                ),
            );
        }
    }

    /// True when the exchange carries a request (and so expects a response).
    pub fn expects_response(&self) -> bool {
        self.id.is_some()
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if !self.done {
            if let (Some(id), Ok((sink, _))) = (self.id, self.inner.sink()) {
                sink.fail_request(
                    id,
                    Error::new(Status::MCPC_ERR_TRANSPORT, "the host dropped the exchange"),
                );
            }
        }
    }
}
