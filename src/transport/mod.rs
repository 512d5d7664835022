//! The transport seam inside the core: every transport (stdio, HTTP, caller-supplied)
//! implements [`Transport`] and pushes what it receives into a [`Sink`], so the
//! client core never knows which one it talks to.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::error::{Error, Result};

pub mod callback;
pub mod http;
pub mod stdio;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One outgoing JSON-RPC message, serialized compactly (no newline), with what a
/// transport may need to route it without parsing it again.
#[derive(Debug)]
pub struct Outgoing {
    pub body: Vec<u8>,
    /// The request id, for requests.
    pub id: Option<i64>,
    /// The method, for requests and notifications (`None` for responses).
    pub method: Option<&'static str>,
}

/// What a transport delivers into. Implemented by the client core.
pub trait Sink: Send + Sync + 'static {
    /// One complete message from the peer. Returns a reply the transport must
    /// send back (a response to a server request), if any. An error concerns this
    /// message only (it was dropped); the connection goes on.
    fn deliver(&self, msg: &[u8]) -> Result<Option<Outgoing>>;
    /// A failure that belongs to one request (for example its HTTP POST failed).
    fn fail_request(&self, id: i64, err: Error);
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
}
