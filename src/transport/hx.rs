//! The seam between the HTTP transport and the HTTP versions: "send this request,
//! give me the response head and a body to read". The transport above (sessions,
//! auth, SSE, replies) is written once against [`Client`] and [`Reply`]; below,
//! each request goes over mcpc's HTTP/1.1 ([`super::h1`]) or over HTTP/2
//! ([`super::h2`]), as [`Version`] and the server's ALPN choose.
//!
//! An enum, not a trait object: a request's future and its reply stay unboxed on
//! the HTTP/1.1 path, whose speed is what a sequential call costs; the HTTP/2
//! path is boxed apart.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, StatusCode, Uri};
use url::Url;

pub(crate) use super::h1::same_text;
use super::net::Origin;
pub use super::net::{Failure, Route};
use super::{h1, h2};
use crate::drive::runtime::boxed_apart;

/// Which HTTP versions a client may speak (docs/decisions/0020-http2.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Version {
    /// `https://`: HTTP/2 when the server picks it by ALPN, else HTTP/1.1.
    /// `http://`: HTTP/1.1.
    #[default]
    Auto,
    /// HTTP/1.1 only.
    Http11,
    /// HTTP/2 only: over plain TCP from the first byte (prior knowledge), or over
    /// TLS with `h2` the only protocol offered.
    Http2PriorKnowledge,
}

/// HTTP to one origin. Cheap to share; every method may be called from any
/// thread, in any task.
pub struct Client {
    h1: h1::Client,
    /// None when HTTP/2 is off for this origin.
    h2: Option<h2::Client>,
    /// True once HTTP/1.1 is known to be the version: the server chose it.
    h1_only: AtomicBool,
}

impl Client {
    /// A client for `url`'s origin (no connection yet): TLS (with `tls`) for
    /// `https`, plain TCP for `http`, through `route`'s proxy when given. None if
    /// the URL has no host. `version` says whether HTTP/2 is offered (ALPN, set
    /// here on a copy of `tls`) or spoken from the first byte; a plain-http origin
    /// asked through a proxy is always HTTP/1.1 (the caller refuses prior
    /// knowledge there).
    pub fn new(
        url: &Url,
        tls: Option<Arc<rustls::ClientConfig>>,
        connect_timeout: Duration,
        route: Option<Route>,
        version: Version,
    ) -> Option<Client> {
        let https = tls.is_some();
        let h2 = match version {
            Version::Http11 => None,
            Version::Auto if !https => None,
            Version::Http2PriorKnowledge if !https && route.is_some() => None,
            Version::Auto | Version::Http2PriorKnowledge => {
                let only = version == Version::Http2PriorKnowledge;
                let tls = tls.as_ref().map(|t| {
                    let mut t = (**t).clone();
                    t.alpn_protocols = if only {
                        vec![b"h2".to_vec()]
                    } else {
                        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
                    };
                    Arc::new(t)
                });
                let origin = Origin::new(url, tls, route.clone())?;
                Some(h2::Client::new(origin, connect_timeout, !https, only))
            }
        };
        Some(Client {
            h1: h1::Client::new(url, tls, connect_timeout, route)?,
            h2,
            h1_only: AtomicBool::new(false),
        })
    }

    /// The start of a request's head, as HTTP/1.1 writes it (see
    /// `h1::Client::request_head`): the request line, `Host`, then `fields`.
    pub fn request_head(&self, method: &Method, path: &Uri, fields: &[u8]) -> Vec<u8> {
        self.h1.request_head(method, path, fields)
    }

    /// Sends one request (`head` from [`Client::request_head`]) and waits for the
    /// response head: over HTTP/2 while the server may speak it, else HTTP/1.1.
    /// The version is chosen here, before the future is first polled: the future
    /// is HTTP/1.1's own, or HTTP/2's boxed apart (it would make every HTTP/1.1
    /// request's larger), with no async layer of the seam's around either.
    pub fn send<'a>(
        &'a self,
        method: &'a Method,
        head: &'a [u8],
        body: &'a [u8],
    ) -> Send<impl Future<Output = Result<h1::Reply, Failure>> + 'a, impl Future<Output = Result<Reply, Failure>> + 'a>
    {
        match &self.h2 {
            Some(h2) if !self.h1_only.load(Ordering::Relaxed) => Send::H2 {
                f: boxed_apart(|| self.send_h2(h2, method, head, body)),
            },
            _ => Send::H1 {
                f: self.h1.send(method, head, body),
            },
        }
    }

    async fn send_h2(&self, h2: &h2::Client, method: &Method, head: &[u8], body: &[u8]) -> Result<Reply, Failure> {
        match h2.send(method, head, body).await? {
            h2::Sent::Reply(r) => Ok(Reply::H2(Box::new(r))),
            h2::Sent::Http11(fresh) => {
                self.h1_only.store(true, Ordering::Relaxed);
                match fresh {
                    Some(fresh) => self.h1.send_over(fresh, method, head, body).await,
                    None => self.h1.send(method, head, body).await,
                }
                .map(Reply::H1)
            }
        }
    }

    /// Closes the connections kept alive (those in use close when their request
    /// ends; an HTTP/2 connection once its streams end).
    pub fn close_idle(&self) {
        self.h1.close_idle();
        if let Some(h2) = &self.h2 {
            h2.close_idle();
        }
    }
}

pin_project_lite::pin_project! {
    /// The future of [`Client::send`].
    #[project = SendProj]
    pub enum Send<A, B> {
        H1 { #[pin] f: A },
        H2 { f: Pin<Box<B>> },
    }
}

impl<A, B> Future for Send<A, B>
where
    A: Future<Output = Result<h1::Reply, Failure>>,
    B: Future<Output = Result<Reply, Failure>>,
{
    type Output = Result<Reply, Failure>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            SendProj::H1 { f } => f.poll(cx).map(|r| r.map(Reply::H1)),
            SendProj::H2 { f } => f.as_mut().poll(cx),
        }
    }
}

/// A response whose body is still to be read.
#[derive(Debug)]
pub enum Reply {
    H1(h1::Reply),
    /// Boxed: an HTTP/2 reply holds its header map, and a reply moves through awaits.
    H2(Box<h2::Reply>),
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        match self {
            Reply::H1(r) => r.status(),
            Reply::H2(r) => r.status(),
        }
    }

    /// The value of the first field named `name` (lower case), as sent.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        match self {
            Reply::H1(r) => r.header(name),
            Reply::H2(r) => r.header(name),
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
            Reply::H2(r) => r.content_length(),
        }
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Failure> {
        match self {
            Reply::H1(r) => r.chunk().await,
            Reply::H2(r) => r.chunk().await,
        }
    }

    /// The same, lent until the next call, with how many bytes are sure to follow
    /// it in one piece (see `h1::Reply::chunk_lent`).
    pub async fn chunk_lent(&mut self) -> Result<Option<(&[u8], u64)>, Failure> {
        match self {
            Reply::H1(r) => r.chunk_lent().await,
            Reply::H2(r) => r.chunk_lent().await,
        }
    }

    /// The rest of a body whose length the server gave, lent (see
    /// `h1::Reply::rest`); the caller checks the length against its limit first.
    pub async fn rest(&mut self) -> Result<&[u8], Failure> {
        match self {
            Reply::H1(r) => r.rest().await,
            Reply::H2(r) => r.rest().await,
        }
    }

    /// The body that [`rest`](Self::rest) lent, taken out whole (no copy).
    pub fn take_rest(&mut self) -> Bytes {
        match self {
            Reply::H1(r) => r.take_rest(),
            Reply::H2(r) => r.take_rest(),
        }
    }
}
