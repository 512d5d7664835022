//! HTTP/2 to one origin, with the `h2` crate: one connection carries every request
//! at once, each on a stream of its own. Chosen by ALPN over TLS (`h2` offered
//! beside `http/1.1`; a server that picks HTTP/1.1 gets the stream back, for
//! HTTP/1.1 to use), or spoken from the first byte over plain TCP (prior
//! knowledge, for loopback servers and tests).
//!
//! The connection is driven by a task of its own on the runtime (or by a blocked
//! caller's thread, `driven`): every stream's bytes go through it. A request's
//! future hands its head and body over (`exchange`) and waits for the response
//! head; a [`Reply`] reads the body. Dropping either before the end resets that
//! stream alone (`RST_STREAM` with `CANCEL`: the poller drops the stream's h2
//! handles, and h2 sends it when the last handle of an open stream goes), and the
//! other streams go on.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use h2::Reason;
use http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_LENGTH};
use http::{Method, Request, StatusCode, Uri};

use crate::error::quote;
use crate::transport::net::{self, Failure, Origin, Stream};
use driven::{Driven, Wait};
use exchange::{End, Exchange, Lost};

mod driven;
mod exchange;
mod gather;

/// The receive windows mcpc grants. The protocol's default, 64 KiB a stream and
/// for the whole connection, makes a server stop every 64 KiB until mcpc's
/// WINDOW_UPDATE comes back: a round trip each time, so a 4 MiB result would wait
/// 64 of them. Granted up front, a result of up to 8 MiB flows without a stop,
/// and 64 such streams at once share 32 MiB. These are permissions, not buffers:
/// mcpc reads each stream as it comes and releases what it read at once.
const STREAM_WINDOW: u32 = 8 << 20;
const CONNECTION_WINDOW: u32 = 32 << 20;
/// Frames of up to 256 KiB: fewer frames (and wake-ups) for a large result, while
/// a frame that h2 holds whole stays small.
const MAX_FRAME: u32 = 256 << 10;
/// The most a response's header block may take, as HTTP/1.1's head limit.
const MAX_HEADERS: u32 = 256 << 10;

/// An open connection: its number and its future, which holds its handle for requests.
type Conn = (u64, Arc<Driven>);

/// A request head and the request built from it, from which the poller makes
/// every request with that head (see [`exchange::request_for`]).
type Kept = (Vec<u8>, Arc<Request<()>>);

/// A stream on which the server chose HTTP/1.1, for HTTP/1.1 to use.
type Fallback = Option<(Stream, Arc<AtomicBool>)>;

/// What a request got.
pub enum Sent {
    Reply(Reply),
    /// The server chose HTTP/1.1 by ALPN: the stream just opened, if this request
    /// opened it (for HTTP/1.1 to carry the request), else None.
    Http11(Fallback),
}

/// HTTP/2 to one origin. Cheap to share; every method may be called from any
/// thread, in any task.
pub struct Client {
    origin: Origin,
    connect_timeout: Duration,
    /// Plain TCP with HTTP/2 from the first byte, rather than TLS and ALPN.
    prior_knowledge: bool,
    /// When ALPN is the only way in (prior knowledge over TLS): a server that
    /// does not pick `h2` is an error, not a fallback.
    required: bool,
    /// The connection's handle, once open; a connection that fails is replaced
    /// by the next request. Held while connecting, so requests that start at once
    /// share one connection.
    conn: tokio::sync::Mutex<Option<Conn>>,
    /// Numbers the connections, so that a request whose connection failed
    /// replaces that one and not a newer one.
    opened: std::sync::atomic::AtomicU64,
    /// Set when the server chose HTTP/1.1: no more HTTP/2 connections are tried.
    refused: AtomicBool,
    /// The last request built and its head: a client sends the same head call
    /// after call, and building the request from it costs more than the rest of
    /// the call's own work.
    last: std::sync::Mutex<Option<Kept>>,
}

fn failed(e: h2::Error) -> Failure {
    match e.into_io() {
        Some(io) => Failure::Http(io),
        None => Failure::Http(io::Error::other("HTTP/2 failed")),
    }
}

/// An HTTP/2 error as mcpc tells it: who ended what, with the reason by its name
/// in the specification (`REFUSED_STREAM`), as the server's own logs name it.
fn h2_failure(e: h2::Error) -> Failure {
    if e.is_io() {
        return failed(e);
    }
    let Some(reason) = e.reason() else {
        return Failure::Http(io::Error::other(format!("HTTP/2: {e}")));
    };
    let what = match (e.is_remote(), e.is_library(), e.is_go_away()) {
        (true, _, true) => {
            // The server's own words, which h2 shows only in its text.
            let text = e.to_string();
            let said = text.split_once(" (b\"").map(|(_, d)| d.trim_end_matches("\")"));
            match said {
                Some(d) => format!("the server ended the connection (GOAWAY, {reason:?}: {})", quote(d)),
                None => format!("the server ended the connection (GOAWAY, {reason:?})"),
            }
        }
        (true, _, false) => format!("the server reset the stream (RST_STREAM, {reason:?})"),
        // Refused here: a frame against the protocol, or past one of mcpc's limits
        // (a response head over its size, say).
        (_, true, true) => format!(
            "what the server sent was refused ({}, {reason:?}) and the connection ended",
            reason.description()
        ),
        (_, true, false) => format!(
            "the server's response was refused ({}, {reason:?}) and its stream reset",
            reason.description()
        ),
        _ => e.to_string(),
    };
    Failure::Http(io::Error::other(format!("HTTP/2: {what}")))
}

impl Client {
    /// A client for `origin` (no connection yet). `prior_knowledge`: HTTP/2 over
    /// plain TCP; otherwise TLS, whose ALPN (set by the caller in `origin`'s
    /// settings) chooses, and `required` makes a server that does not choose `h2`
    /// an error.
    pub fn new(origin: Origin, connect_timeout: Duration, prior_knowledge: bool, required: bool) -> Client {
        Client {
            origin,
            connect_timeout,
            prior_knowledge,
            required,
            conn: tokio::sync::Mutex::new(None),
            opened: Default::default(),
            refused: AtomicBool::new(false),
            last: std::sync::Mutex::new(None),
        }
    }

    /// Drops the connection's handle: it closes (GOAWAY) once its streams end.
    pub fn close_idle(&self) {
        if let Ok(mut c) = self.conn.try_lock() {
            let_go(c.take());
        }
    }

    /// The connection's handle and number, opened if there is none (or `stale`,
    /// the number of one that just failed, is the one kept); `Err(stream)` when
    /// the server chose HTTP/1.1.
    async fn sender(&self, stale: Option<u64>) -> Result<Result<Conn, Fallback>, Failure> {
        let mut slot = self.conn.lock().await;
        if self.refused.load(Ordering::Relaxed) {
            return Ok(Err(None));
        }
        if let Some((n, d)) = slot.as_ref() {
            if stale != Some(*n) {
                return Ok(Ok((*n, d.clone())));
            }
            let_go(slot.take());
        }
        // Boxed: a connection is opened once, and its future (TLS included) would
        // otherwise swell every request's future, which is allocated per request.
        let opened = Box::pin(self.open()).await?;
        let (n, driven) = match opened {
            Ok(driven) => (self.opened.fetch_add(1, Ordering::Relaxed), driven),
            Err(fallback) => return Ok(Err(fallback)),
        };
        *slot = Some((n, driven.clone()));
        Ok(Ok((n, driven)))
    }

    /// Opens a connection and starts its task; `Err(stream)` when the server chose
    /// HTTP/1.1 (and it may).
    async fn open(&self) -> Result<Result<Arc<Driven>, Fallback>, Failure> {
        let (io, recheck) = net::open(&self.origin, self.connect_timeout).await?;
        if !self.prior_knowledge && !io.is_h2() {
            if self.required {
                return Err(Failure::Http(io::Error::other(
                    "the server did not agree to HTTP/2 (ALPN)",
                )));
            }
            self.refused.store(true, Ordering::Relaxed);
            return Ok(Err(Some((io, recheck))));
        }
        #[cfg(target_os = "linux")]
        let fd = io.raw_fd();
        let gather = Arc::new(gather::Gather::default());
        let io = gather::Io::new(io, gather.clone());
        let (send, conn) = h2::client::Builder::new()
            .initial_window_size(STREAM_WINDOW)
            .initial_connection_window_size(CONNECTION_WINDOW)
            .max_frame_size(MAX_FRAME)
            .max_header_list_size(MAX_HEADERS)
            .enable_push(false)
            .handshake::<_, Bytes>(io)
            .await
            .map_err(h2_failure)?;
        Ok(Ok(Driven::spawn(
            conn,
            send,
            recheck,
            gather,
            #[cfg(target_os = "linux")]
            fd,
        )))
    }

    /// Sends one request (`head` as `h1::Client::request_head` writes it, in
    /// origin form) and waits for the response head. A request the server did not
    /// process goes again, once, on a fresh connection: one that never went out
    /// (the connection had failed or was going away) or one the server refused
    /// (see [`refused`]).
    pub async fn send(&self, method: &Method, head: &[u8], body: &[u8]) -> Result<Sent, Failure> {
        let mut stale: Option<u64> = None;
        let mut tries = 0;
        loop {
            tries += 1;
            let (n, driven) = match self.sender(stale).await? {
                Ok(s) => s,
                Err(fresh) => return Ok(Sent::Http11(fresh)),
            };
            let again = tries < 2;
            let req = self.request_kept(method, head)?;
            let body = Bytes::copy_from_slice(body);
            // Claimed before the request goes out: this thread then sends it and
            // reads its answer, rather than the connection's task.
            let mut wait = Wait::new(driven.clone());
            wait.claim();
            if !body.is_empty() {
                wait.keep_body(&body);
            }
            let held = Held::submit(&driven, req, body);
            let ex = &held.ex;
            match std::future::poll_fn(|cx| wait.poll(cx, |cx| ex.poll_head(cx))).await {
                Ok(parts) => return Ok(Sent::Reply(Reply::of(parts, held, wait))),
                Err(Lost::Unsent(_)) if again => stale = Some(n),
                // The stream's own error says more than the body's send (which only
                // saw it closed): a refusal in either goes again too.
                Err(Lost::Failed(e, send)) if again && (refused(&e) || send.as_ref().is_some_and(refused)) => {
                    stale = Some(n)
                }
                Err(Lost::Unsent(Some(e)) | Lost::Failed(e, _)) => return Err(h2_failure(e)),
                Err(Lost::Unsent(None) | Lost::Closed) => return Err(closed()),
            }
        }
    }

    /// [`request_of`](Self::request_of), the last request's when its head was the
    /// same: shared, for the poller to build each request from (see
    /// [`exchange::request_for`]).
    fn request_kept(&self, method: &Method, head: &[u8]) -> Result<Arc<Request<()>>, Failure> {
        // Locked, not tried: with calls in flight, a request built afresh for
        // want of the lock would cost more than the wait for it.
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((h, req)) = last.as_ref() {
            if h == head && req.method() == method {
                return Ok(req.clone());
            }
        }
        let req = Arc::new(self.request_of(method, head)?);
        *last = Some((head.to_vec(), req.clone()));
        Ok(req)
    }

    /// The request an HTTP/1.1 head describes: its request line and fields, with
    /// `Host` as the URI's authority and the fields HTTP/2 forbids left out (RFC
    /// 9113, section 8.2.2), with a length of 0 that each request's body replaces
    /// (see [`exchange::request_for`]). The head is mcpc's own, so each line is
    /// well formed.
    fn request_of(&self, method: &Method, head: &[u8]) -> Result<Request<()>, Failure> {
        let bad = |what: &str| Failure::Http(io::Error::new(io::ErrorKind::InvalidInput, what.to_string()));
        let mut lines = head.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let line = lines.next().ok_or_else(|| bad("an empty request head"))?;
        let target = line
            .split(|&b| b == b' ')
            .nth(1)
            .ok_or_else(|| bad("no request target"))?;
        let scheme = if self.prior_knowledge { "http" } else { "https" };
        let mut uri = Vec::with_capacity(scheme.len() + 3 + self.origin.authority.len() + target.len());
        uri.extend_from_slice(scheme.as_bytes());
        uri.extend_from_slice(b"://");
        uri.extend_from_slice(self.origin.authority.as_bytes());
        uri.extend_from_slice(target);
        let uri = Uri::try_from(uri).map_err(|_| bad("the request target is not a URI"))?;
        let mut req = Request::builder()
            .method(method.clone())
            .uri(uri)
            .version(http::Version::HTTP_2)
            .body(())
            .map_err(|_| bad("the request is not valid"))?;
        let headers = req.headers_mut();
        for line in lines.filter(|l| !l.is_empty()) {
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                return Err(bad("a request field without a colon"));
            };
            let name = HeaderName::from_bytes(&line[..colon]).map_err(|_| bad("a request field's name"))?;
            let value = line[colon + 1..].trim_ascii_start();
            let value = HeaderValue::from_bytes(value).map_err(|_| bad("a request field's value"))?;
            let connection_specific = matches!(
                name.as_str(),
                "host" | "connection" | "keep-alive" | "proxy-connection" | "transfer-encoding" | "upgrade"
            ) || (name == http::header::TE && value != "trailers");
            if !connection_specific && name != CONTENT_LENGTH {
                headers.append(name, value);
            }
        }
        // A place for each request's own length: set there, it grows nothing.
        headers.insert(CONTENT_LENGTH, HeaderValue::from_static("0"));
        Ok(req)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let_go(self.conn.get_mut().take());
    }
}

/// Lets go of a connection the client no longer hands out: it is retired, so that
/// its handle for requests goes and its task (even that of a parked connection,
/// polled by nobody) closes it once its streams end.
fn let_go(conn: Option<Conn>) {
    if let Some((_, driven)) = conn {
        driven.retire();
    }
}

/// True for a stream the server refused before processing it: reset by the server
/// with `REFUSED_STREAM`, or above the last stream a GOAWAY said it would process
/// (RFC 9113, sections 8.7 and 6.8); a reset h2 made itself says nothing of what
/// the server did. h2 says "went away" too of a stream the server took and then
/// closed the connection without answering; as with HTTP/1.1
/// (docs/decisions/0012-h1-resend.md), that one case may run twice, and so a
/// request goes again once only.
fn refused(e: &h2::Error) -> bool {
    e.is_remote() && (e.reason() == Some(Reason::REFUSED_STREAM) || e.is_go_away())
}

/// Reads an HTTP/2 client's first bytes on a connection until they hold a frame
/// that ends a stream (HEADERS or DATA with END_STREAM), up to 64 KiB: what the
/// servers of the tests and of the `h2_reply` fuzz target wait for before they
/// answer. False when the connection ended (or failed, or ran past 64 KiB) first.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) async fn read_request<S: tokio::io::AsyncRead + Unpin>(io: &mut S) -> bool {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while got.len() < 1 << 16 {
        // The frames after the 24-byte preface.
        let mut at = 24;
        while let Some(head) = got.get(at..at + 9) {
            if matches!(head[3], 0 | 1) && head[4] & 1 == 1 {
                return true;
            }
            at += 9 + (usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]));
        }
        match io.read(&mut buf).await {
            Ok(n) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => return false,
        }
    }
    false
}

fn closed() -> Failure {
    Failure::Http(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the HTTP/2 connection closed before the response ended",
    ))
}

/// A request's hold on its exchange: let go before the end, it resets the stream.
struct Held {
    ex: Arc<Exchange>,
    driven: Arc<Driven>,
}

impl Held {
    /// Hands the request to the connection's poller.
    fn submit(driven: &Arc<Driven>, req: Arc<Request<()>>, body: Bytes) -> Held {
        let ex = driven.exchange(req, body);
        driven.submit(&ex);
        Held {
            ex,
            driven: driven.clone(),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if self.ex.let_go() {
            self.driven.ready(self.ex.clone());
        }
    }
}

/// A response whose body is still to be read. Dropped before its end, it resets
/// its stream.
pub struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Held,
    length: Option<u64>,
    /// The piece `chunk_lent` lent, or the body `rest` lent when it came in one.
    piece: Bytes,
    /// The body `rest` gathered.
    whole: BytesMut,
    /// The request's wait, whose claim on the connection (if this thread holds
    /// it) goes on until the body's end. Dropped last: the body's drop may queue
    /// a reset, which the connection must not be parked before.
    wait: Wait,
}

impl Reply {
    fn of(parts: http::response::Parts, body: Held, wait: Wait) -> Reply {
        let length = parts
            .headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok());
        Reply {
            wait,
            status: parts.status,
            headers: parts.headers,
            body,
            length,
            piece: Bytes::new(),
            whole: BytesMut::new(),
        }
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The value of the field named `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers.get(name).map(HeaderValue::as_bytes)
    }

    /// The body's length, when the server gave one (h2 checks the body against it).
    pub fn content_length(&self) -> Option<u64> {
        self.length
    }

    /// The next piece of the body; `None` at its end. What is read is given back
    /// to the server's window at once.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Failure> {
        let (body, wait) = (&self.body, &mut self.wait);
        let next = std::future::poll_fn(|cx| {
            wait.poll(cx, |cx| {
                let (next, resume) = body.ex.poll_data(cx);
                if resume {
                    body.driven.ready(body.ex.clone());
                }
                next
            })
        })
        .await;
        match next {
            None => {
                self.wait.finish();
                Ok(None)
            }
            Some(Ok(piece)) => Ok(Some(piece)),
            Some(Err(End::Failed(e))) => Err(h2_failure(e)),
            Some(Err(_)) => Err(closed()),
        }
    }

    /// The same, lent until the next call; nothing is known to follow in one piece.
    pub async fn chunk_lent(&mut self) -> Result<Option<(&[u8], u64)>, Failure> {
        match self.chunk().await? {
            Some(piece) => {
                self.piece = piece;
                Ok(Some((&self.piece[..], 0)))
            }
            None => Ok(None),
        }
    }

    /// The rest of a body whose length the server gave, gathered and lent; room
    /// for it is made at once, so the caller checks the length first.
    pub async fn rest(&mut self) -> Result<&[u8], Failure> {
        let want = usize::try_from(self.length.unwrap_or(0)).unwrap_or(usize::MAX);
        // A body that comes in one piece (the usual one) is kept as it came.
        self.piece = Bytes::new();
        let mut first = None;
        while let Some(piece) = self.chunk().await? {
            match first.take() {
                None if self.whole.is_empty() => first = Some(piece),
                earlier => {
                    if self.whole.is_empty() {
                        self.whole.reserve(want.max(piece.len()));
                    }
                    if let Some(earlier) = earlier {
                        self.whole.extend_from_slice(&earlier);
                    }
                    self.whole.extend_from_slice(&piece);
                }
            }
        }
        if let Some(only) = first {
            self.piece = only;
            return Ok(&self.piece[..]);
        }
        Ok(&self.whole[..])
    }

    /// The body that [`rest`](Self::rest) lent, taken out whole (no copy).
    pub fn take_rest(&mut self) -> Bytes {
        if self.whole.is_empty() {
            return std::mem::take(&mut self.piece);
        }
        std::mem::take(&mut self.whole).freeze()
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("h2::Reply")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
