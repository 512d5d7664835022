//! The seam between the HTTP transport and the HTTP versions: "send this request,
//! give me the response head and a body to read". The transport above (sessions,
//! auth, SSE, replies) is written once against [`Client`] and [`Reply`]; below,
//! each request goes over mcpc's HTTP/1.1 ([`super::h1`]).
//!
//! An enum, not a trait object: a request's future and its reply stay unboxed on
//! the HTTP/1.1 path, whose speed is what a sequential call costs.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode, Uri};
use url::Url;

use super::h1;
pub(crate) use super::h1::same_text;
pub use super::net::{Failure, Route};

/// HTTP to one origin. Cheap to share; every method may be called from any
/// thread, in any task.
pub struct Client {
    h1: h1::Client,
}

impl Client {
    /// A client for `url`'s origin (no connection yet): TLS (with `tls`) for
    /// `https`, plain TCP for `http`, through `route`'s proxy when given. None if
    /// the URL has no host.
    pub fn new(
        url: &Url,
        tls: Option<Arc<rustls::ClientConfig>>,
        connect_timeout: Duration,
        route: Option<Route>,
    ) -> Option<Client> {
        Some(Client {
            h1: h1::Client::new(url, tls, connect_timeout, route)?,
        })
    }

    /// The start of a request's head, as HTTP/1.1 writes it (see
    /// `h1::Client::request_head`): the request line, `Host`, then `fields`.
    pub fn request_head(&self, method: &Method, path: &Uri, fields: &[u8]) -> Vec<u8> {
        self.h1.request_head(method, path, fields)
    }

    /// Sends one request (`head` from [`Client::request_head`]) and waits for the
    /// response head.
    pub async fn send(&self, method: &Method, head: &[u8], body: &[u8]) -> Result<Reply, Failure> {
        self.h1.send(method, head, body).await.map(Reply::H1)
    }

    /// Closes the connections kept alive (those in use close when their request ends).
    pub fn close_idle(&self) {
        self.h1.close_idle();
    }
}

/// A response whose body is still to be read.
#[derive(Debug)]
pub enum Reply {
    H1(h1::Reply),
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        match self {
            Reply::H1(r) => r.status(),
        }
    }

    /// The value of the first field named `name` (lower case), as sent.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        match self {
            Reply::H1(r) => r.header(name),
        }
    }

    /// The same, when it is text (visible ASCII or UTF-8).
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// The body's length, when the server gave one.
    pub fn content_length(&self) -> Option<u64> {
        match self {
            Reply::H1(r) => r.content_length(),
        }
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Failure> {
        match self {
            Reply::H1(r) => r.chunk().await,
        }
    }

    /// The same, lent until the next call, with how many bytes are sure to follow
    /// it in one piece (see `h1::Reply::chunk_lent`).
    pub async fn chunk_lent(&mut self) -> Result<Option<(&[u8], u64)>, Failure> {
        match self {
            Reply::H1(r) => r.chunk_lent().await,
        }
    }

    /// The rest of a body whose length the server gave, lent (see
    /// `h1::Reply::rest`); the caller checks the length against its limit first.
    pub async fn rest(&mut self) -> Result<&[u8], Failure> {
        match self {
            Reply::H1(r) => r.rest().await,
        }
    }

    /// The body that [`rest`](Self::rest) lent, taken out whole (no copy).
    pub fn take_rest(&mut self) -> Bytes {
        match self {
            Reply::H1(r) => r.take_rest(),
        }
    }
}
