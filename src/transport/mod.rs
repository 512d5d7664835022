//! The transport seam inside the core: every transport (stdio, HTTP, caller-supplied)
//! implements [`Transport`] and pushes what it receives into a [`Sink`], so the
//! client core never knows which one it talks to.

use std::borrow::Cow;
use std::sync::Arc;

use crate::drive::Drive;
use crate::error::{Error, Result};

pub mod callback;
pub(crate) mod h1;
pub(crate) mod h2;
pub mod http;
pub(crate) mod hx;
pub(crate) mod net;
pub mod proxy;
pub mod stdio;

pub use crate::drive::BoxFuture;

/// One outgoing JSON-RPC message, serialized compactly (no newline), with what a
/// transport may need to route it without parsing it again.
#[derive(Debug)]
pub struct Outgoing {
    pub body: Vec<u8>,
    /// The request id, for requests.
    pub id: Option<i64>,
    /// The method, for requests and notifications (`None` for responses).
    pub method: Option<Cow<'static, str>>,
    /// Headers an HTTP transport adds to this message (under 2026-07-28: `Mcp-Name`
    /// and `Mcp-Param-*`). Other transports ignore them.
    pub headers: Vec<(String, String)>,
}

impl Outgoing {
    /// A response to a server request.
    pub fn response(body: Vec<u8>) -> Self {
        Outgoing {
            body,
            id: None,
            method: None,
            headers: Vec::new(),
        }
    }
}

/// What a failed version probe can mean on a transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// A message stream (stdio, the caller's stream): an older server may ignore the
    /// probe, so silence means an older server; `restartable` when a server that
    /// died on the probe can be started again.
    Stream { restartable: bool },
    /// HTTP: statuses tell; silence is only a timeout.
    Http,
}

/// One message as a transport hands it over to its [`Sink`].
#[derive(Clone, Copy)]
pub struct Delivery<'a> {
    /// One complete message from the peer.
    pub msg: &'a [u8],
    /// When given, holds `msg` itself (a large HTTP body, SSE event or stdio line):
    /// a result kept for the caller may then be a slice of it rather than a copy.
    pub whole: Option<&'a bytes::Bytes>,
    /// Handed over on a caller's thread blocked in a call, where no callback may
    /// run: only a response is delivered; anything else is [`Delivered::Left`].
    pub on_caller: bool,
}

impl<'a> Delivery<'a> {
    /// Any message, on the transport's own thread, in order.
    pub fn any(msg: &'a [u8], whole: Option<&'a bytes::Bytes>) -> Self {
        Delivery {
            msg,
            whole,
            on_caller: false,
        }
    }

    /// On a caller's thread: a response, or nothing (see [`Delivery::on_caller`]).
    pub fn on_caller(msg: &'a [u8], whole: Option<&'a bytes::Bytes>) -> Self {
        Delivery {
            msg,
            whole,
            on_caller: true,
        }
    }
}

/// What a [`Sink`] did with a [`Delivery`].
pub enum Delivered {
    /// Delivered; nothing to send back.
    Done,
    /// Delivered; the transport must send this back (a response to a server request).
    Reply(Outgoing),
    /// Left untouched (a caller's thread got more than a response): the transport
    /// hands it over again on its own thread, in order.
    Left,
}

/// What a transport delivers into. Implemented by the client core.
pub trait Sink: Send + Sync + 'static {
    /// The one way in for what the peer sends. An error concerns this message only
    /// (it was dropped); the connection goes on.
    fn deliver(&self, d: Delivery<'_>) -> Result<Delivered>;
    /// A failure that belongs to one request (for example its HTTP POST failed).
    fn fail_request(&self, id: i64, err: Error);
    /// True while request `id` still waits for its response.
    fn is_pending(&self, id: i64) -> bool;
    /// The connection is gone: every pending and later request fails with `err`.
    /// Idempotent: the first error wins.
    fn closed(&self, err: Error);
}

pub type SinkRef = Arc<dyn Sink>;

/// A bidirectional message channel to one server.
pub trait Transport: Send + Sync + 'static {
    /// Queues one message. Never blocks; fails at once if the transport is closed.
    /// Failures found later are reported through the sink.
    fn send(&self, msg: Outgoing) -> Result<()>;
    /// Stops waiting for the response to request `id` (timeout or cancel). A
    /// transport that carries each request on its own exchange aborts it.
    fn abandon(&self, _id: i64) {}
    /// Shuts the transport down, gracefully first, bounded in time. Idempotent.
    fn close(&self) -> BoxFuture<'_, ()>;
    /// Switches between the generations: `Some(version)` for the stateless
    /// 2026-07-28 rules (per-request headers, no sessions), `None` for `initialize`.
    fn set_era(&self, _modern: Option<&'static str>) {}
    /// What a caller's thread blocked in a call may do while it waits (see
    /// [`crate::drive`]): `None`, the default, for a transport it cannot drive.
    fn driver(&self) -> Option<&dyn Drive> {
        None
    }
    /// Waits until what the server sends unasked can reach the client (over HTTP
    /// before 2026-07-28: the standalone GET stream is open, or refused). Bounded by
    /// the caller.
    fn settled(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    /// Whether the server's unasked notifications (`list_changed` among them) reach
    /// the client: a kept list is trusted until one says otherwise only then.
    fn hears_unsolicited(&self) -> bool {
        true
    }
    /// How to read a failed version probe on this transport.
    fn probe_kind(&self) -> ProbeKind {
        ProbeKind::Stream { restartable: false }
    }
}
