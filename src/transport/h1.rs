//! HTTP/1.1 exchanges with one endpoint's origin, over hyper's connection API, with a
//! pool of kept-alive connections.
//!
//! Why not a full HTTP client (reqwest, hyper-util's pooled client): there, every
//! connection runs in a task of its own, so each request handed its bytes to that
//! task and got the response back from it, a thread hand-off each way; and the
//! redirect and retry layers parsed the URL twice per request. Here the future that
//! makes a request drives its connection itself (`Driver::drive`): a request is one
//! task, and one that a blocked caller polls runs on the caller's own thread. Measured
//! in `make bench` (README.md, Performance).
//!
//! A connection belongs to one request at a time: taken from the pool (or opened),
//! it goes back once the response body has been read to its end. A request dropped
//! before that drops its connection, which closes it.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::header::{CONTENT_LENGTH, HOST};
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri};
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use rustls_pki_types::ServerName;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use url::Url;

/// How long a kept-alive connection may sit unused before it is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

type Body = Full<Bytes>;

/// Why an exchange failed.
#[derive(Debug)]
pub enum Failure {
    /// Name lookup or TCP connect (a timeout is `io::ErrorKind::TimedOut`).
    Connect(io::Error),
    /// The TLS handshake (a certificate that is not trusted, for example).
    Tls(io::Error),
    /// HTTP on an open connection.
    Http(hyper::Error),
}

impl Failure {
    pub fn is_tls(&self) -> bool {
        matches!(self, Failure::Tls(_))
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The innermost cause says the most ("connection refused", "UnknownIssuer").
        let (mut text, mut source) = match self {
            Failure::Connect(e) | Failure::Tls(e) => (
                e.to_string(),
                e.get_ref().map(|e| e as &(dyn std::error::Error + 'static)),
            ),
            Failure::Http(e) => (e.to_string(), std::error::Error::source(e)),
        };
        while let Some(s) = source {
            text = s.to_string();
            source = s.source();
        }
        f.write_str(&text)
    }
}

/// A TCP stream that works two ways. Polled by a caller's thread blocked in a call
/// (see `super::http`'s `here`), it reads and writes the socket itself and, when
/// the socket is not ready, has that thread wait on it: the runtime's reactor is not
/// involved, so a sequential call wakes no runtime thread. Polled anywhere else, it
/// is registered with the reactor (from its first such poll) like tokio's own
/// streams. Sends never raise SIGPIPE (they may run on a host's thread).
struct Tcp {
    sock: Sock,
    /// Set when the connection is taken from the pool: the next read tries the
    /// socket whatever is known of it (the server may have closed it meanwhile).
    recheck: Arc<AtomicBool>,
    /// What a caller's thread knows of the socket: false after an operation would
    /// have blocked, until the socket wakes the thread.
    readable: bool,
    writable: bool,
}

enum Sock {
    /// Not watched by the reactor: polled by a caller's thread (or not yet polled).
    Bare(std::net::TcpStream),
    /// Registered with the reactor, for runtime tasks.
    Watched(AsyncFd<std::net::TcpStream>),
    /// Only while it moves between the two.
    Moving,
}

impl Tcp {
    fn new(tcp: TcpStream, recheck: Arc<AtomicBool>) -> io::Result<Tcp> {
        // Leaves the reactor until a runtime task polls it.
        Ok(Tcp {
            sock: Sock::Bare(tcp.into_std()?),
            recheck,
            readable: true,
            writable: true,
        })
    }

    /// The socket, watched or not; None only while it moves between the two.
    fn std(&self) -> Option<&std::net::TcpStream> {
        match &self.sock {
            Sock::Bare(s) => Some(s),
            Sock::Watched(w) => Some(w.get_ref()),
            Sock::Moving => None,
        }
    }

    fn raw_fd(&self) -> RawFd {
        self.std().map_or(-1, AsRawFd::as_raw_fd)
    }

    fn poll_io<T>(
        &mut self,
        cx: &mut Context<'_>,
        interest: Interest,
        mut op: impl FnMut(BorrowedFd<'_>) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        let reading = interest == Interest::READABLE;
        let recheck = reading && self.recheck.swap(false, Ordering::Relaxed);
        if super::http::here::polling() {
            if let Sock::Watched(_) = self.sock {
                if let Sock::Watched(w) = std::mem::replace(&mut self.sock, Sock::Moving) {
                    self.sock = Sock::Bare(w.into_inner());
                }
                (self.readable, self.writable) = (true, true);
            }
            let Sock::Bare(sock) = &self.sock else {
                return Poll::Ready(Err(io::Error::other("the socket is gone")));
            };
            let fd = sock.as_raw_fd();
            let woke = super::http::here::woken_by(fd, reading) || recheck;
            let ready = if reading {
                &mut self.readable
            } else {
                &mut self.writable
            };
            *ready |= woke;
            if *ready {
                match op(sock.as_fd()) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => *ready = false,
                    done => return Poll::Ready(done),
                }
            }
            super::http::here::note_wait(fd, reading);
            return Poll::Pending;
        }
        if let Sock::Bare(_) = self.sock {
            if let Sock::Bare(s) = std::mem::replace(&mut self.sock, Sock::Moving) {
                match crate::sys::watch(s) {
                    Ok(w) => self.sock = Sock::Watched(w),
                    Err((e, s)) => {
                        self.sock = Sock::Bare(s);
                        return Poll::Ready(Err(e));
                    }
                }
            }
        }
        let Sock::Watched(w) = &self.sock else {
            return Poll::Ready(Err(io::Error::other("the socket is gone")));
        };
        if recheck {
            match op(w.get_ref().as_fd()) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                done => return Poll::Ready(done),
            }
        }
        loop {
            let guard = if reading {
                w.poll_read_ready(cx)
            } else {
                w.poll_write_ready(cx)
            };
            let mut guard = match guard {
                Poll::Ready(Ok(g)) => g,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            };
            match guard.try_io(|w| op(w.get_ref().as_fd())) {
                Ok(done) => return Poll::Ready(done),
                Err(_would_block) => continue,
            }
        }
    }
}

impl Drop for Tcp {
    fn drop(&mut self) {
        super::http::here::forget_wait(self.raw_fd());
    }
}

impl AsyncRead for Tcp {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.get_mut()
            .poll_io(cx, Interest::READABLE, |fd| crate::sys::read_into(fd, buf))
    }
}

impl AsyncWrite for Tcp {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut().poll_io(cx, Interest::WRITABLE, |fd| {
            crate::sys::send_nosignal(fd, &[io::IoSlice::new(buf)])
        })
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut()
            .poll_io(cx, Interest::WRITABLE, |fd| crate::sys::send_nosignal(fd, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(sock) = self.std() else {
            return Poll::Ready(Ok(()));
        };
        Poll::Ready(match sock.shutdown(std::net::Shutdown::Write) {
            Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
            other => other,
        })
    }
}

/// A plain or TLS stream.
enum Stream {
    Plain(Tcp),
    Tls(Box<TlsStream<Tcp>>),
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// The part of a connection that reads and writes its socket: it does so only when
/// polled, by the future that uses the connection.
struct Driver {
    io: Pin<Box<http1::Connection<TokioIo<Stream>, Body>>>,
    /// The connection has ended (closed by either side, or failed).
    ended: bool,
}

impl Driver {
    fn poll(&mut self, cx: &mut Context<'_>) {
        if !self.ended && self.io.as_mut().poll(cx).is_ready() {
            self.ended = true;
        }
    }

    /// Runs `fut` with the connection driven alongside it.
    async fn drive<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            self.poll(cx);
            fut.as_mut().poll(cx)
        })
        .await
    }
}

struct Conn {
    tx: http1::SendRequest<Body>,
    driver: Driver,
    idle_since: Instant,
    /// The socket (for forgetting a caller's wait on it).
    fd: RawFd,
    /// Shared with the socket (see `Tcp::recheck`).
    recheck: Arc<AtomicBool>,
}

/// Connections kept alive between requests.
#[derive(Default)]
struct Pool {
    idle: Mutex<Vec<Conn>>,
}

impl Pool {
    fn take(&self) -> Option<Conn> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(c) = idle.pop() {
            if c.idle_since.elapsed() < IDLE_TIMEOUT {
                return Some(c);
            }
        }
        None
    }

    fn put(&self, mut c: Conn) {
        if c.driver.ended || c.tx.is_closed() {
            return;
        }
        super::http::here::forget_wait(c.fd);
        c.idle_since = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        // The oldest are first: close those past their time.
        let expired = idle
            .iter()
            .take_while(|c| c.idle_since.elapsed() >= IDLE_TIMEOUT)
            .count();
        idle.drain(..expired);
        idle.push(c);
    }
}

/// Where the requests go: one origin.
struct Origin {
    /// For connecting.
    host: url::Host<String>,
    port: u16,
    /// The `Host` header.
    authority: HeaderValue,
    tls: Option<TlsConnector>,
}

/// HTTP/1.1 to one origin. Cheap to share; every method may be called from any
/// thread, in any task.
pub struct Client {
    origin: Origin,
    connect_timeout: Duration,
    pool: Arc<Pool>,
}

impl Client {
    /// A client for `url`'s origin (no connection yet). TLS (with `tls`) for
    /// `https`, plain TCP for `http`. None if the URL has no host.
    pub fn new(url: &Url, tls: Option<Arc<rustls::ClientConfig>>, connect_timeout: Duration) -> Option<Client> {
        let host = url.host()?.to_owned();
        let port = url.port_or_known_default()?;
        let mut authority = url.host_str()?.to_string();
        if let Some(p) = url.port() {
            authority.push_str(&format!(":{p}"));
        }
        Some(Client {
            origin: Origin {
                host,
                port,
                authority: HeaderValue::from_str(&authority).ok()?,
                tls: tls.map(TlsConnector::from),
            },
            connect_timeout,
            pool: Arc::default(),
        })
    }

    /// Closes the connections kept alive (those in use close when their request ends).
    pub fn close_idle(&self) {
        self.pool.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    async fn connect(&self) -> Result<Conn, Failure> {
        let o = &self.origin;
        let connect = async {
            let tcp = match &o.host {
                url::Host::Ipv4(ip) => TcpStream::connect(SocketAddr::from((*ip, o.port))).await,
                url::Host::Ipv6(ip) => TcpStream::connect(SocketAddr::from((*ip, o.port))).await,
                url::Host::Domain(d) => TcpStream::connect((d.as_str(), o.port)).await,
            }
            .map_err(Failure::Connect)?;
            let _ = tcp.set_nodelay(true);
            let fd = tcp.as_raw_fd();
            let recheck = Arc::new(AtomicBool::new(false));
            let tcp = Tcp::new(tcp, recheck.clone()).map_err(Failure::Connect)?;
            let stream = match &o.tls {
                None => Stream::Plain(tcp),
                Some(tls) => {
                    let name = match &o.host {
                        url::Host::Ipv4(ip) => ServerName::IpAddress((*ip).into()),
                        url::Host::Ipv6(ip) => ServerName::IpAddress((*ip).into()),
                        url::Host::Domain(d) => ServerName::try_from(d.clone())
                            .map_err(|e| Failure::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?,
                    };
                    Stream::Tls(Box::new(tls.connect(name, tcp).await.map_err(Failure::Tls)?))
                }
            };
            let (tx, io) = http1::handshake(TokioIo::new(stream)).await.map_err(Failure::Http)?;
            Ok(Conn {
                tx,
                driver: Driver {
                    io: Box::pin(io),
                    ended: false,
                },
                idle_since: Instant::now(),
                fd,
                recheck,
            })
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(c) => c,
            Err(_) => Err(Failure::Connect(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no connection within {} ms", self.connect_timeout.as_millis()),
            ))),
        }
    }

    /// Sends one request (`path` is the path and query) and waits for the response
    /// head. A kept-alive connection that turns out closed before the request went
    /// out is dropped and the request goes on another.
    pub async fn send(&self, method: Method, path: Uri, mut headers: HeaderMap, body: Bytes) -> Result<Reply, Failure> {
        headers.insert(HOST, self.origin.authority.clone());
        if !body.is_empty() || method == Method::POST {
            headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
        }
        let mut req = Request::new(Full::new(body));
        *req.method_mut() = method;
        *req.uri_mut() = path;
        *req.headers_mut() = headers;
        loop {
            let (mut conn, reused) = match self.pool.take() {
                Some(c) => (c, true),
                None => (self.connect().await?, false),
            };
            let Conn {
                tx, driver, recheck, ..
            } = &mut conn;
            if reused {
                // The server may have closed it while it sat idle, unwatched: the
                // connection reads the socket once to see (hyper reads for an end
                // when idle).
                recheck.store(true, Ordering::Relaxed);
                let usable = std::future::poll_fn(|cx| {
                    driver.poll(cx);
                    if driver.ended {
                        return Poll::Ready(false);
                    }
                    tx.poll_ready(cx).map(|r| r.is_ok())
                });
                if !usable.await {
                    continue; // closed while it was idle
                }
            }
            match driver.drive(tx.try_send_request(req)).await {
                Ok(resp) => {
                    let (head, body) = resp.into_parts();
                    return Ok(Reply {
                        status: head.status,
                        headers: head.headers,
                        body,
                        conn: Some(conn),
                        pool: self.pool.clone(),
                    });
                }
                Err(mut e) => match e.take_message() {
                    Some(r) if reused => req = r,
                    _ => return Err(Failure::Http(e.into_error())),
                },
            }
        }
    }
}

/// A response whose body is still to be read; it holds its connection until then.
pub struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Incoming,
    conn: Option<Conn>,
    pool: Arc<Pool>,
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body's length, when the server gave one.
    pub fn content_length(&self) -> Option<u64> {
        self.body.size_hint().exact()
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Failure> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(None);
        };
        let body = &mut self.body;
        loop {
            let frame = conn
                .driver
                .drive(std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)))
                .await;
            match frame {
                Some(Ok(f)) => match f.into_data() {
                    Ok(data) if !data.is_empty() => return Ok(Some(data)),
                    _ => continue, // trailers, or an empty piece
                },
                Some(Err(e)) => {
                    self.conn = None; // unusable
                    return Err(Failure::Http(e));
                }
                None => {
                    if let Some(c) = self.conn.take() {
                        self.pool.put(c);
                    }
                    return Ok(None);
                }
            }
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        // A body read to its end (or an empty one) leaves the connection reusable;
        // one dropped half-read closes it.
        if let Some(c) = self.conn.take() {
            if self.body.is_end_stream() {
                self.pool.put(c);
            }
        }
    }
}

/// The response head (for tests and logs).
impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server that answers one request per connection, then, when told to, closes
    /// the connection and says it has.
    fn one_answer_per_connection(
        conns: usize,
    ) -> (
        u16,
        std::sync::mpsc::Sender<()>,
        std::sync::mpsc::Receiver<()>,
        std::thread::JoinHandle<()>,
    ) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (close_tx, close_rx) = std::sync::mpsc::channel();
        let (closed_tx, closed_rx) = std::sync::mpsc::channel();
        let server = std::thread::spawn(move || {
            for _ in 0..conns {
                let (mut s, _) = listener.accept().unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                // The request: a head, then a body of 2 bytes.
                while !got.windows(4).any(|w| w == b"\r\n\r\n") || !got.ends_with(b"{}") {
                    let n = s.read(&mut buf).unwrap();
                    assert!(n > 0, "the client closed early");
                    got.extend_from_slice(&buf[..n]);
                }
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
                close_rx.recv().unwrap();
                drop(s);
                closed_tx.send(()).unwrap();
            }
        });
        (port, close_tx, closed_rx, server)
    }

    async fn post(client: &Client) -> Result<Vec<u8>, Failure> {
        let mut reply = client
            .send(
                Method::POST,
                Uri::from_static("/mcp"),
                HeaderMap::new(),
                Bytes::from_static(b"{}"),
            )
            .await?;
        let mut body = Vec::new();
        while let Some(c) = reply.chunk().await? {
            body.extend_from_slice(&c);
        }
        Ok(body)
    }

    #[test]
    fn a_connection_closed_while_idle_is_not_used_again() {
        let (port, close, closed, server) = one_answer_per_connection(4);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
        // On a caller's thread (no reactor), then in a runtime task.
        for here in [true, false] {
            for _ in 0..2 {
                let body = if here {
                    super::super::http::here::block_here(post(&client))
                } else {
                    crate::runtime::handle().block_on(post(&client))
                };
                assert_eq!(body.unwrap(), b"ok", "on a caller's thread: {here}");
                // The connection is back in the pool, idle: the server closes it.
                close.send(()).unwrap();
                closed.recv().unwrap();
            }
        }
        server.join().unwrap();
    }
}
