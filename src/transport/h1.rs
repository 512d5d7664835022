//! HTTP/1.1 exchanges with one endpoint's origin, with a pool of kept-alive
//! connections.
//!
//! Why not a full HTTP client (reqwest, hyper-util's pooled client): there, every
//! connection runs in a task of its own, so each request handed its bytes to that
//! task and got the response back from it, a thread hand-off each way; and the
//! redirect and retry layers parsed the URL twice per request. Here the future that
//! makes a request reads and writes its connection itself: a request is one task,
//! and one that a blocked caller polls runs on the caller's own thread.
//!
//! Why not hyper's connection API either (which mcpc used before): its dispatcher,
//! request and body channels took about 17,000 instructions of a 37,000-instruction
//! call (callgrind), and 30 kB per connection. What is left to write is small: a
//! request head is the request line, `Host`, `Content-Length` and the header lines
//! it is given; response heads and chunk sizes are parsed by `httparse` (hyper's
//! own parser), and the body is framed by
//! `Content-Length`, chunks or the connection's end (RFC 9112, section 6).
//! Measured in `make bench` (README.md, Performance).
//!
//! A connection belongs to one request at a time: taken from the pool (or opened),
//! it goes back once the response body has been read to its end. A request dropped
//! before that drops its connection, which closes it.

use std::io;
use std::mem::MaybeUninit;
use std::net::SocketAddr;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderValue, Method, StatusCode, Uri};
use rustls_pki_types::ServerName;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;
use url::Url;

use crate::runtime::boxed_apart;

/// How long a kept-alive connection may sit unused before it is closed.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Why an exchange failed.
#[derive(Debug)]
pub enum Failure {
    /// Name lookup or TCP connect (a timeout is `io::ErrorKind::TimedOut`).
    Connect(io::Error),
    /// The TLS handshake (a certificate that is not trusted, for example).
    Tls(io::Error),
    /// HTTP on an open connection: reading or writing it failed, or the server's
    /// response broke HTTP/1.1.
    Http(io::Error),
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
            Failure::Connect(e) | Failure::Tls(e) | Failure::Http(e) => (
                e.to_string(),
                e.get_ref().map(|e| e as &(dyn std::error::Error + 'static)),
            ),
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
    /// A caller's thread may wait for this socket right where a read or write
    /// would block (`here::wait_in_place`), instead of the exchange pending first.
    /// Set (by `Stream::wait_in_place`) for a plain connection, whose reader or
    /// writer has nothing else to do meanwhile, except while it is probed in the
    /// pool (a probe must not wait). Never under TLS: its layer writes what it owes
    /// (a handshake's last message, say) only after a read would block.
    wait_in_place: bool,
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
            wait_in_place: false,
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
            if self.wait_in_place && super::http::here::wait_in_place(sock.as_fd(), reading) {
                match op(sock.as_fd()) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    done => {
                        *ready = true;
                        return Poll::Ready(done);
                    }
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
        let mut recheck = recheck;
        loop {
            let guard = if reading {
                w.poll_read_ready(cx)
            } else {
                w.poll_write_ready(cx)
            };
            let mut guard = match guard {
                Poll::Ready(Ok(g)) => g,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending if recheck => {
                    // Not known to be readable, but the server may have closed it
                    // since the reactor last looked: tried once all the same. (Tried
                    // before asking the reactor, the socket was read twice a request
                    // with calls in flight: the reactor still held it readable from
                    // the last response, so the loop read it again.)
                    match op(w.get_ref().as_fd()) {
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Poll::Pending,
                        done => return Poll::Ready(done),
                    }
                }
                Poll::Pending => return Poll::Pending,
            };
            match guard.try_io(|w| op(w.get_ref().as_fd())) {
                Ok(done) => return Poll::Ready(done),
                // Tried: what the reactor says from now on is the truth.
                Err(_would_block) => recheck = false,
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

impl Stream {
    /// Lets a caller's thread wait for a plain connection's socket in place, or not
    /// (see `Tcp::wait_in_place`); a TLS connection's never does.
    fn wait_in_place(&mut self, on: bool) {
        if let Stream::Plain(tcp) = self {
            tcp.wait_in_place = on;
        }
    }
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

/// The most a response head (status line and fields, each 1xx head on its own),
/// a chunk-size line or a trailer field may take.
const MAX_LINE: usize = 256 * 1024;
/// The most fields a response head may have.
const MAX_FIELDS: usize = 100;
/// The fields a response head is first parsed with room for (see `parse_head`).
const FEW_FIELDS: usize = 16;
/// The least a read asks the socket for.
const READ_SIZE: usize = 8 * 1024;
/// The room a read of a whole body asks for at least (see [`Reply::rest`]).
const GROW_STEP: usize = 64 * 1024;
/// The room a read of a body's next piece asks for at least (see `Conn::next_piece`).
const PIECE_READ: usize = 64 * 1024;
/// A piece of body up to this size is copied out of the read buffer, which then
/// serves the next read from its start; a larger one is split off it, not copied.
const COPY_MAX: usize = 16 * 1024;
/// A connection goes back to the pool with its read buffer when the buffer is at
/// most this large (a larger one is freed).
const KEEP_BUF: usize = 64 * 1024;

fn invalid(msg: impl Into<String>) -> Failure {
    Failure::Http(io::Error::new(io::ErrorKind::InvalidData, msg.into()))
}

fn closed_early(what: &str) -> Failure {
    Failure::Http(io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("the connection closed {what}"),
    ))
}

/// How a response body comes (RFC 9112, section 6.3).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Framing {
    /// This many bytes are left.
    Length(u64),
    /// In chunks; where the decoder is.
    Chunked(Chunk),
    /// Until the server closes the connection.
    UntilClose,
    /// Read to its end.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Chunk {
    /// A chunk-size line is next.
    Size,
    /// This many bytes of the current chunk are left.
    Data(u64),
    /// The CRLF after a chunk's data is next.
    DataEnd,
    /// The trailer fields (ignored) up to an empty line.
    Trailers,
}

/// A response head.
struct Head {
    status: StatusCode,
    fields: Fields,
    framing: Framing,
    /// The connection may carry another request after this response.
    keep_alive: bool,
}

/// A response head's fields: the head's bytes, copied out of the read buffer once,
/// then where each field's name and value lie in them, in one allocation. A header
/// map cost four allocations a response (its two tables and a copy of each value)
/// and about 800 instructions more (callgrind). Where the fields lie is not kept
/// beside the pointer: a reply moves through several awaits, and with room for
/// eight fields in it (136 bytes) each move was a `memcpy` call.
struct Fields {
    /// The head, then four u32 (native order) a field: name start and length,
    /// value start and length, all in the head (at most `MAX_LINE` long).
    all: Box<[u8]>,
    /// The head's length: where the table starts.
    head_len: u32,
}

impl Fields {
    /// The fields of the head `head`, with `fields` in it.
    fn new<'h>(head: &'h [u8], fields: &[httparse::Header<'h>]) -> Fields {
        let mut all = Vec::with_capacity(head.len() + 16 * fields.len());
        all.extend_from_slice(head);
        let base = head.as_ptr() as usize;
        // Both fit in u32: the head is at most MAX_LINE long.
        let mut at = |b: &[u8]| {
            all.extend_from_slice(&((b.as_ptr() as usize - base) as u32).to_ne_bytes());
            all.extend_from_slice(&(b.len() as u32).to_ne_bytes());
        };
        for f in fields {
            at(f.name.as_bytes());
            at(f.value);
        }
        Fields {
            all: all.into_boxed_slice(),
            head_len: head.len() as u32,
        }
    }

    /// Each field's name and value, in order.
    fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let (head, table) = self.all.split_at(self.head_len as usize);
        let bytes = move |at: &[u8]| {
            let n = |i: usize| u32::from_ne_bytes([at[i], at[i + 1], at[i + 2], at[i + 3]]) as usize;
            &head[n(0)..n(0) + n(4)]
        };
        table.chunks_exact(16).map(move |f| (bytes(&f[..8]), bytes(&f[8..])))
    }

    /// The value of the first field named `name` (in any case).
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.iter().find(|(n, _)| same_text(n, name.as_bytes())).map(|(_, v)| v)
    }
}

/// The fields of a response head that say how its body comes and whether its
/// connection may be used again, gathered as the head is read (one pass, no lookup
/// afterwards).
#[derive(Default)]
struct BodyFields {
    /// `Content-Length`, when every value given agrees.
    length: Option<u64>,
    /// A `Content-Length` that is not a number, or two that differ.
    length_error: Option<&'static str>,
    /// `Transfer-Encoding` was given; whether its last coding is `chunked`.
    chunked: Option<bool>,
    /// `Connection: close`.
    close: bool,
}

/// True if `text`, a field's name or value as httparse passed it (no control
/// bytes but tab), is `lower` in any case. `lower` holds only lowercase letters,
/// digits and `-` `.` `/`: a byte of `text` with bit 0x20 set is one of those
/// only if it is that character in either case (the other bytes that map to them,
/// from 0x0D to 0x19, are control bytes), so setting it is an exact comparison,
/// done for all bytes at once. `eq_ignore_ascii_case` took about 150 instructions
/// for a name the length of `content-length`, and a response's head is checked
/// against four names.
pub(crate) fn same_text(text: &[u8], lower: &[u8]) -> bool {
    debug_assert!(lower
        .iter()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-./".contains(b)));
    text.len() == lower.len() && text.iter().zip(lower).fold(0, |diff, (t, l)| diff | ((t | 0x20) ^ l)) == 0
}

/// The comma-separated items of a field value, trimmed, empty ones left out.
fn items(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty())
}

impl BodyFields {
    fn note(&mut self, name: &[u8], value: &[u8]) {
        if same_text(name, CONTENT_LENGTH.as_str().as_bytes()) {
            for item in value.split(|&b| b == b',').map(<[u8]>::trim_ascii) {
                // Digits only (no sign, no space), and no overflow.
                let n = (!item.is_empty()).then_some(item).and_then(|digits| {
                    digits.iter().try_fold(0u64, |n, &d| {
                        let d = d.is_ascii_digit().then(|| u64::from(d - b'0'))?;
                        n.checked_mul(10)?.checked_add(d)
                    })
                });
                match n {
                    None => self.length_error = Some("the response's Content-Length is not a number"),
                    Some(n) if self.length.is_some_and(|l| l != n) => {
                        self.length_error = Some("the response has two different Content-Length values")
                    }
                    Some(n) => self.length = Some(n),
                }
            }
        } else if same_text(name, TRANSFER_ENCODING.as_str().as_bytes()) {
            // Only the last coding of the last field counts.
            if let Some(last) = items(value).last() {
                self.chunked = Some(last.eq_ignore_ascii_case(b"chunked"));
            } else {
                self.chunked.get_or_insert(false);
            }
        } else if same_text(name, CONNECTION.as_str().as_bytes()) {
            self.close |= items(value).any(|t| t.eq_ignore_ascii_case(b"close"));
        }
    }

    /// How the body of a response to `method` with this status comes, and whether
    /// the connection may be used again (RFC 9112, section 6.3).
    fn framing(&self, method: &Method, status: StatusCode) -> Result<(Framing, bool), Failure> {
        let keep_alive = !self.close;
        if method == Method::HEAD || status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED {
            return Ok((Framing::Done, keep_alive));
        }
        match self.chunked {
            // A length beside chunks is ignored, and the connection not used again.
            Some(true) => {
                let beside = self.length.is_some() || self.length_error.is_some();
                return Ok((Framing::Chunked(Chunk::Size), keep_alive && !beside));
            }
            Some(false) => return Ok((Framing::UntilClose, false)),
            None => {}
        }
        if let Some(e) = self.length_error {
            return Err(invalid(e));
        }
        Ok(match self.length {
            Some(0) => (Framing::Done, keep_alive),
            Some(n) => (Framing::Length(n), keep_alive),
            None => (Framing::UntilClose, false),
        })
    }
}

/// A whole head from the front of `buf` (taken off it), None if it is not all
/// there yet. 1xx heads are skipped (101 is an error: nothing asked to switch).
fn parse_head(buf: &mut BytesMut, method: &Method) -> Result<Option<Head>, Failure> {
    loop {
        // Room for a few fields on the stack; a head with more is parsed again with
        // room for all it may have, on the heap. (On a blocked caller's thread this
        // runs at the deepest point of its call, and every page of stack a thread
        // reaches stays its own: room for 100 fields was 3.2 KB of it.)
        let mut few = [const { MaybeUninit::uninit() }; FEW_FIELDS];
        let parsed = match read_fields(buf, &mut few) {
            Err(httparse::Error::TooManyHeaders) => {
                let mut all = Vec::new();
                all.resize_with(MAX_FIELDS, MaybeUninit::uninit);
                read_fields(buf, &mut all)
            }
            other => other,
        };
        let (used, code, http10, fields, body) = match parsed {
            Ok(Some(p)) => p,
            Ok(None) if buf.len() < MAX_LINE => return Ok(None),
            Ok(None) => return Err(invalid(format!("the response head is over {} KiB", MAX_LINE / 1024))),
            Err(e) => return Err(invalid(format!("the response head is not valid HTTP/1.1 ({e})"))),
        };
        let status = code
            .and_then(|c| StatusCode::from_u16(c).ok())
            .ok_or_else(|| invalid("the response's status code is not valid"))?;
        buf.advance(used);
        if status == StatusCode::SWITCHING_PROTOCOLS {
            return Err(invalid("the server switched protocols unasked (101)"));
        }
        if status.is_informational() {
            continue;
        }
        let (framing, keep_alive) = body.framing(method, status)?;
        return Ok(Some(Head {
            status,
            fields,
            framing,
            keep_alive: keep_alive && !http10,
        }));
    }
}

/// What [`read_fields`] found: the head's length, its status code, whether it is
/// HTTP/1.0, its fields and what says how the body is framed.
type HeadParts = (usize, Option<u16>, bool, Fields, BodyFields);

/// Parses a head at the front of `buf` with room for `room.len()` fields: `None`
/// while it is not all there (or is over `MAX_LINE`).
fn read_fields<'b>(
    buf: &'b [u8],
    room: &mut [MaybeUninit<httparse::Header<'b>>],
) -> Result<Option<HeadParts>, httparse::Error> {
    let mut resp = httparse::Response::new(&mut []);
    let used = match httparse::ParserConfig::default().parse_response_with_uninit_headers(&mut resp, buf, room)? {
        httparse::Status::Complete(n) if n <= MAX_LINE => n,
        _ => return Ok(None),
    };
    // httparse has checked them: names are tokens, values visible text.
    let mut body = BodyFields::default();
    for f in resp.headers.iter() {
        body.note(f.name.as_bytes(), f.value);
    }
    let fields = Fields::new(&buf[..used], resp.headers);
    Ok(Some((used, resp.code, resp.version == Some(0), fields, body)))
}

/// `n` bytes off the front of `buf`.
fn take(buf: &mut BytesMut, n: usize) -> Bytes {
    if n <= COPY_MAX {
        let piece = Bytes::copy_from_slice(&buf[..n]);
        buf.advance(n);
        piece
    } else {
        buf.split_to(n).freeze()
    }
}

/// What reading a body needs next.
enum Step {
    /// A piece of the body: this many bytes at the buffer's front (the caller takes
    /// them off it).
    Piece(usize),
    /// More bytes from the connection (at its end, the body ends if it is framed by
    /// the end, and is cut short otherwise).
    More,
    /// The body's end.
    End,
}

/// One step of reading a body framed by `framing` from the front of `buf`, which it
/// moves on. No I/O: the same steps whatever pieces the stream arrives in (the
/// `http1` fuzz target checks it).
fn body_step(buf: &mut BytesMut, framing: &mut Framing) -> Result<Step, Failure> {
    let too_long = |what: &str| invalid(format!("the response's {what} is over {} KiB", MAX_LINE / 1024));
    loop {
        match framing {
            Framing::Done => return Ok(Step::End),
            Framing::Length(left) | Framing::Chunked(Chunk::Data(left)) => {
                if buf.is_empty() {
                    return Ok(Step::More);
                }
                let n = usize::try_from(*left).unwrap_or(usize::MAX).min(buf.len());
                *left -= n as u64;
                if *left == 0 {
                    *framing = match framing {
                        Framing::Length(_) => Framing::Done,
                        _ => Framing::Chunked(Chunk::DataEnd),
                    };
                }
                return Ok(Step::Piece(n));
            }
            Framing::UntilClose => {
                if buf.is_empty() {
                    return Ok(Step::More);
                }
                return Ok(Step::Piece(buf.len()));
            }
            Framing::Chunked(Chunk::Size) => match httparse::parse_chunk_size(buf) {
                Ok(httparse::Status::Complete((used, _))) if used > MAX_LINE => {
                    return Err(too_long("chunk size line"))
                }
                Ok(httparse::Status::Complete((used, size))) => {
                    buf.advance(used);
                    *framing = Framing::Chunked(if size == 0 { Chunk::Trailers } else { Chunk::Data(size) });
                }
                Ok(httparse::Status::Partial) if buf.len() >= MAX_LINE => return Err(too_long("chunk size line")),
                Ok(httparse::Status::Partial) => return Ok(Step::More),
                Err(_) => return Err(invalid("a chunk size in the response is not valid")),
            },
            Framing::Chunked(Chunk::DataEnd) => {
                if buf.len() < 2 {
                    return Ok(Step::More);
                }
                if &buf[..2] != b"\r\n" {
                    return Err(invalid("a chunk in the response does not end where its size says"));
                }
                buf.advance(2);
                *framing = Framing::Chunked(Chunk::Size);
            }
            Framing::Chunked(Chunk::Trailers) => match memchr::memmem::find(buf, b"\r\n") {
                Some(i) if i >= MAX_LINE => return Err(too_long("trailer")),
                Some(0) => {
                    buf.advance(2);
                    *framing = Framing::Done;
                }
                Some(i) => buf.advance(i + 2), // a trailer field, not used
                // The line's end may start at the last byte (a CR): over the limit only
                // once more than that is here, whatever the reads.
                None if buf.len() > MAX_LINE => return Err(too_long("trailer")),
                None => return Ok(Step::More),
            },
        }
    }
}

/// What a response read from a stream comes to: its status, its fields, its body,
/// whether its connection could carry another request, and how many bytes followed
/// it.
pub(crate) type Read = (u16, Vec<(Vec<u8>, Vec<u8>)>, Vec<u8>, bool, usize);

/// Reads a response to a POST from `reads`, each as if one read from the socket
/// (for the `http1` fuzz target, which checks that any split reads the same).
pub(crate) fn read_from(reads: &[&[u8]]) -> Result<Read, String> {
    let mut buf = BytesMut::new();
    let mut reads = reads.iter();
    let head = loop {
        match parse_head(&mut buf, &Method::POST).map_err(|e| e.to_string())? {
            Some(head) => break head,
            None => match reads.next() {
                Some(r) => buf.extend_from_slice(r),
                None => return Err("the stream ended in the head".into()),
            },
        }
    };
    let mut framing = head.framing;
    let mut body = Vec::new();
    loop {
        match body_step(&mut buf, &mut framing).map_err(|e| e.to_string())? {
            Step::Piece(n) => {
                body.extend_from_slice(&buf[..n]);
                buf.advance(n);
            }
            Step::End => break,
            Step::More => match reads.next() {
                Some(r) => buf.extend_from_slice(r),
                None if framing == Framing::UntilClose => break,
                None => return Err("the stream ended in the body".into()),
            },
        }
    }
    let fields = head.fields.iter().map(|(n, v)| (n.to_vec(), v.to_vec())).collect();
    let after = buf.len() + reads.map(|r| r.len()).sum::<usize>();
    Ok((head.status.as_u16(), fields, body, head.keep_alive, after))
}

/// One connection: its stream and what has been read from it and not yet used.
/// It carries one request at a time and reads and writes only when the future that
/// uses it is polled.
struct Conn {
    io: Stream,
    buf: BytesMut,
    /// False once a response said the connection ends with it.
    keep_alive: bool,
    idle_since: Instant,
    /// The socket (for forgetting a caller's wait on it).
    fd: RawFd,
    /// Shared with the socket (see `Tcp::recheck`).
    recheck: Arc<AtomicBool>,
}

impl Conn {
    /// Reads what the socket has into `buf`, with room for at least `want` bytes
    /// more; Ok(0) when the server has closed the connection.
    async fn read_more(&mut self, want: usize) -> io::Result<usize> {
        self.buf.reserve(want.max(READ_SIZE));
        std::future::poll_fn(|cx| tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.buf)).await
    }

    /// For a connection taken from the pool: false when the server closed it, or
    /// sent something nobody asked for, while it sat idle.
    async fn still_open(&mut self) -> bool {
        self.recheck.store(true, Ordering::Relaxed);
        let mut byte = [0u8; 1];
        std::future::poll_fn(|cx| {
            let mut probe = ReadBuf::new(&mut byte);
            self.io.wait_in_place(false);
            let read = Pin::new(&mut self.io).poll_read(cx, &mut probe);
            self.io.wait_in_place(true);
            Poll::Ready(read.is_pending())
        })
        .await
    }

    /// Writes a request: its parts in order, in one system call when the socket
    /// takes them all. On failure, says too whether any of it went out.
    async fn write(&mut self, parts: [&[u8]; 3]) -> Result<(), (io::Error, bool)> {
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut done = 0;
        while done < total {
            let mut bufs = [io::IoSlice::new(&[]); 3];
            let (mut n, mut skip) = (0, done);
            for part in parts {
                if skip >= part.len() {
                    skip -= part.len();
                    continue;
                }
                bufs[n] = io::IoSlice::new(&part[skip..]);
                (n, skip) = (n + 1, 0);
            }
            let sent = done > 0;
            let wrote = std::future::poll_fn(|cx| Pin::new(&mut self.io).poll_write_vectored(cx, &bufs[..n]))
                .await
                .map_err(|e| (e, sent))?;
            if wrote == 0 {
                return Err((io::ErrorKind::WriteZero.into(), sent));
            }
            done += wrote;
        }
        std::future::poll_fn(|cx| Pin::new(&mut self.io).poll_flush(cx))
            .await
            .map_err(|e| (e, true))
    }

    /// Reads the response head (past any 1xx ones).
    async fn read_head(&mut self, method: &Method) -> Result<Head, Failure> {
        loop {
            // A kept-alive connection's buffer is empty when its next request goes out.
            if !self.buf.is_empty() {
                if let Some(head) = parse_head(&mut self.buf, method)? {
                    return Ok(head);
                }
            }
            match self.read_more(READ_SIZE).await {
                Ok(0) if self.buf.is_empty() => return Err(closed_early("before a response came")),
                Ok(0) => return Err(closed_early("in the middle of the response head")),
                Ok(_) => {}
                Err(e) => return Err(Failure::Http(e)),
            }
        }
    }

    /// The next piece of a body framed by `framing` (which it moves on): its length,
    /// at the front of the buffer, where it stays; None at the end.
    async fn next_piece(&mut self, framing: &mut Framing) -> Result<Option<usize>, Failure> {
        loop {
            match body_step(&mut self.buf, framing)? {
                Step::Piece(n) => return Ok(Some(n)),
                Step::End => return Ok(None),
                // Room for 64 KiB a read, not for all that is left. Measured over SSE,
                // 100 echoes of 1 MiB: room for up to 1 MiB cost 32,000-37,000 page
                // faults and 540-580 MiB/s; 64 KiB 690-900 MiB/s; 8 KiB 710-790, with
                // eight times the reads (and 10-20% more CPU from 1 to 4 MiB).
                Step::More => match self.read_more(PIECE_READ).await {
                    Ok(0) if *framing == Framing::UntilClose => {
                        *framing = Framing::Done;
                        return Ok(None);
                    }
                    Ok(0) => return Err(closed_early("before the response body's end")),
                    Ok(_) => {}
                    Err(e) => return Err(Failure::Http(e)),
                },
            }
        }
    }
}

/// Connections kept alive between requests.
#[derive(Default)]
struct Pool {
    // Boxed here too: a connection leaves the pool for a reply, which keeps it
    // boxed (see `Reply::conn`).
    #[allow(clippy::vec_box)]
    idle: Mutex<Vec<Box<Conn>>>,
}

impl Pool {
    fn take(&self) -> Option<Box<Conn>> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        while let Some(c) = idle.pop() {
            if c.idle_since.elapsed() < IDLE_TIMEOUT {
                return Some(c);
            }
        }
        None
    }

    /// Keeps `c` for the next request, if it may carry one: its last response said
    /// nothing against it, and nothing was left unread after it.
    fn put(&self, mut c: Box<Conn>) {
        if !c.keep_alive || !c.buf.is_empty() {
            return;
        }
        super::http::here::forget_wait(c.fd);
        if c.buf.capacity() > KEEP_BUF {
            c.buf = BytesMut::new();
        }
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
    /// The `Host` header's value.
    authority: String,
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
        HeaderValue::from_str(&authority).ok()?;
        Some(Client {
            origin: Origin {
                host,
                port,
                authority,
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

    async fn connect(&self) -> Result<Box<Conn>, Failure> {
        let o = &self.origin;
        let connect = async {
            let tcp = match &o.host {
                url::Host::Ipv4(ip) => TcpStream::connect(SocketAddr::from((*ip, o.port))).await,
                url::Host::Ipv6(ip) => TcpStream::connect(SocketAddr::from((*ip, o.port))).await,
                // Apart, as the handshake below: a name lookup is a large future.
                url::Host::Domain(d) => boxed_apart(|| TcpStream::connect((d.as_str(), o.port))).await,
            }
            .map_err(Failure::Connect)?;
            let _ = tcp.set_nodelay(true);
            let fd = tcp.as_raw_fd();
            let recheck = Arc::new(AtomicBool::new(false));
            let tcp = Tcp::new(tcp, recheck.clone()).map_err(Failure::Connect)?;
            let io = match &o.tls {
                None => {
                    let mut io = Stream::Plain(tcp);
                    io.wait_in_place(true);
                    io
                }
                Some(tls) => {
                    let name = match &o.host {
                        url::Host::Ipv4(ip) => ServerName::IpAddress((*ip).into()),
                        url::Host::Ipv6(ip) => ServerName::IpAddress((*ip).into()),
                        url::Host::Domain(d) => ServerName::try_from(d.clone())
                            .map_err(|e| Failure::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?,
                    };
                    // Made apart: inline, the handshake's future made this function's
                    // frame 7 KB, on the stack of every caller's thread that connects.
                    let handshake = boxed_apart(|| tls.connect(name, tcp));
                    Stream::Tls(Box::new(handshake.await.map_err(Failure::Tls)?))
                }
            };
            Ok(Box::new(Conn {
                io,
                buf: BytesMut::new(),
                keep_alive: true,
                idle_since: Instant::now(),
                fd,
                recheck,
            }))
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(c) => c,
            Err(_) => Err(Failure::Connect(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no connection within {} ms", self.connect_timeout.as_millis()),
            ))),
        }
    }

    /// The start of a request's head: the request line, `Host`, then `fields`
    /// (`name: value` lines, which must carry none of `Host`, `Content-Length` and
    /// `Transfer-Encoding`). [`Client::send`] ends it. The same for every request
    /// with the same method, path and fields, so a caller may keep it.
    pub fn request_head(&self, method: &Method, path: &Uri, fields: &[u8]) -> Vec<u8> {
        let mut h = Vec::with_capacity(64 + self.origin.authority.len() + fields.len());
        h.extend_from_slice(method.as_str().as_bytes());
        h.push(b' ');
        h.extend_from_slice(path.path_and_query().map_or("/", |p| p.as_str()).as_bytes());
        h.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        h.extend_from_slice(self.origin.authority.as_bytes());
        h.extend_from_slice(b"\r\n");
        h.extend_from_slice(fields);
        h
    }

    /// Sends one request (`head` from [`Client::request_head`] with the same
    /// `method`) and waits for the response head. `Content-Length` ends the head when
    /// there is a body (or it is a POST). A kept-alive connection that turns out
    /// closed before the request went out is dropped and the request goes on
    /// another.
    pub async fn send(&self, method: &Method, head: &[u8], body: &[u8]) -> Result<Reply, Failure> {
        let mut end = [0u8; 48];
        let end = head_end(&mut end, body.len(), method == Method::POST);
        loop {
            let (mut conn, reused) = match self.pool.take() {
                Some(c) => (c, true),
                // Boxed: connecting (with TLS) is a large future, and rare; inline, it
                // made every request's future larger, and moving it cost more.
                None => (boxed_apart(|| self.connect()).await?, false),
            };
            // The server may have closed it while it sat idle, unwatched.
            if reused && !conn.still_open().await {
                continue;
            }
            match conn.write([head, end, body]).await {
                Ok(()) => {}
                Err((_, false)) if reused => continue, // closed meanwhile; nothing went out
                Err((e, _)) => return Err(Failure::Http(e)),
            }
            let h = conn.read_head(method).await?;
            conn.keep_alive = h.keep_alive;
            let mut reply = Reply {
                status: h.status,
                fields: h.fields,
                framing: h.framing,
                // What the head framed, before any of the body is read.
                length: match h.framing {
                    Framing::Length(n) => Some(n),
                    Framing::Done => Some(0),
                    _ => None,
                },
                conn: Some(conn),
                lent: 0,
                pool: self.pool.clone(),
            };
            if reply.framing == Framing::Done {
                reply.finish(); // no body: the connection is free at once
            }
            return Ok(reply);
        }
    }
}

/// The end of a request's head, written into `room`: `Content-Length` when there is
/// a body of `len` bytes (or `always`), then the empty line.
fn head_end(room: &mut [u8; 48], len: usize, always: bool) -> &[u8] {
    let mut n = 0;
    let mut put = |b: &[u8]| {
        room[n..n + b.len()].copy_from_slice(b);
        n += b.len();
    };
    if len > 0 || always {
        put(b"content-length: ");
        put(itoa::Buffer::new().format(len).as_bytes());
        put(b"\r\n");
    }
    put(b"\r\n");
    &room[..n]
}

/// A response whose body is still to be read; it holds its connection until then.
pub struct Reply {
    status: StatusCode,
    fields: Fields,
    framing: Framing,
    length: Option<u64>,
    /// Boxed, as it moves between the pool and replies, and a reply through awaits.
    conn: Option<Box<Conn>>,
    /// The body's bytes at the front of the connection's buffer, lent by `rest`.
    lent: usize,
    pool: Arc<Pool>,
}

impl Reply {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The value of the first field named `name` (in any case), as sent.
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.fields.get(name)
    }

    /// The same, when it is text (visible ASCII or UTF-8).
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// How many bytes of the body are sure to follow what has been read, in one
    /// piece: what is left of a body of known length, or of the current chunk.
    pub fn piece_left(&self) -> u64 {
        match self.framing {
            Framing::Length(n) | Framing::Chunked(Chunk::Data(n)) => n,
            _ => 0,
        }
    }

    /// The body's length, when the server gave one.
    pub fn content_length(&self) -> Option<u64> {
        self.length
    }

    /// The body read to its end: the connection goes back to the pool (if it may).
    fn finish(&mut self) {
        self.framing = Framing::Done;
        if let Some(mut c) = self.conn.take() {
            let lent = std::mem::take(&mut self.lent);
            c.buf.advance(lent);
            if lent > KEEP_BUF && c.buf.is_empty() {
                // What is left of it says nothing of its size. Bytes after the body
                // stay, so that the pool refuses the connection.
                c.buf = BytesMut::new();
            }
            self.pool.put(c);
        }
    }

    /// A reply's connection, its buffer moved past what was `lent` (by `rest` or
    /// `chunk_lent`): None once it is back in the pool or gone. (Of the fields, not
    /// of the reply: its framing is borrowed beside it.)
    fn past_lent<'c>(conn: &'c mut Option<Box<Conn>>, lent: &mut usize) -> Option<&'c mut Conn> {
        let conn = conn.as_mut()?;
        conn.buf.advance(std::mem::take(lent));
        Some(conn)
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Failure> {
        let Some(conn) = Self::past_lent(&mut self.conn, &mut self.lent) else {
            return Ok(None);
        };
        match conn.next_piece(&mut self.framing).await {
            Ok(piece) => {
                let piece = piece.map(|n| take(&mut conn.buf, n));
                if self.framing == Framing::Done {
                    self.finish();
                }
                Ok(piece)
            }
            Err(e) => {
                self.conn = None; // unusable
                Err(e)
            }
        }
    }

    /// The same, lent from the connection's buffer until the next call or the
    /// reply's end, for a reader that uses each piece at once (an SSE stream's):
    /// a piece taken out was copied first, and an allocation made for it (about 300
    /// instructions a call with SSE replies, callgrind). With the piece, how many
    /// bytes are sure to follow it in one piece (as [`Reply::piece_left`]).
    pub async fn chunk_lent(&mut self) -> Result<Option<(&[u8], u64)>, Failure> {
        let Some(conn) = Self::past_lent(&mut self.conn, &mut self.lent) else {
            return Ok(None);
        };
        match conn.next_piece(&mut self.framing).await {
            Ok(Some(n)) => {
                self.lent = n;
                let left = self.piece_left();
                let conn = self.conn.as_ref().expect("the connection read the piece");
                Ok(Some((&conn.buf[..n], left)))
            }
            Ok(None) => {
                self.finish();
                Ok(None)
            }
            Err(e) => {
                self.conn = None; // unusable
                Err(e)
            }
        }
    }

    /// The rest of a body whose length the server gave (`content_length`), read
    /// into the connection's buffer and lent from there, as a stdio line is: a
    /// large body is neither gathered from pieces nor copied out. Room for the
    /// whole body is made before it comes, so the caller checks the length against
    /// its limit first.
    pub async fn rest(&mut self) -> Result<&[u8], Failure> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(&[]);
        };
        let Framing::Length(left) = self.framing else {
            return Err(invalid("the response body's length is not known"));
        };
        let left = usize::try_from(left).map_err(|_| invalid("the response body is too large"))?;
        if left > GROW_STEP && conn.buf.len() < left && conn.buf.capacity() < left + READ_SIZE {
            // A large body gets a buffer of its own, made at once at its length (and
            // a last read's room) on the thread that reads it. Grown as it came, by
            // `realloc`, it stayed in the heap of whichever thread first made the
            // connection's buffer (a runtime thread) and left the growth's holes there:
            // 1 MiB echo over HTTP, 2.3 MB of two runtime threads' heaps. Made at
            // once: the run's peak RSS 12.5 → 11.5 MB, 925-997 → 1,066-1,220 MiB/s on
            // one CPU, 4,000 → 3,760 page faults in 100 calls.
            let mut whole = BytesMut::with_capacity(left + READ_SIZE);
            whole.extend_from_slice(&conn.buf);
            conn.buf = whole;
        }
        while conn.buf.len() < left {
            let want = (left - conn.buf.len()).min(GROW_STEP);
            match conn.read_more(want).await {
                Ok(0) => {
                    self.conn = None;
                    return Err(closed_early("before the response body's end"));
                }
                Ok(_) => {}
                Err(e) => {
                    self.conn = None;
                    return Err(Failure::Http(e));
                }
            }
        }
        self.framing = Framing::Done;
        self.lent = left;
        let conn = self.conn.as_ref().expect("the connection read the body");
        Ok(&conn.buf[..left])
    }

    /// The body that [`rest`](Self::rest) lent, taken out of the connection's buffer
    /// whole (no copy), for a reader that keeps it; bytes after it stay the
    /// connection's.
    pub fn take_rest(&mut self) -> Bytes {
        let lent = std::mem::take(&mut self.lent);
        let Some(conn) = self.conn.as_mut() else {
            return Bytes::new();
        };
        let mut body = std::mem::take(&mut conn.buf);
        if body.len() > lent {
            conn.buf = body.split_off(lent);
        }
        body.freeze()
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        // A body read to its end (or an empty one) leaves the connection reusable;
        // one dropped half-read closes it.
        if self.framing == Framing::Done {
            self.finish();
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
    use std::future::Future;

    /// `same_text` agrees with `eq_ignore_ascii_case` for every byte a field's name
    /// or value may hold (tab, then 0x20 to 0xFF but DEL), in every position.
    #[test]
    fn same_text_is_case_folding_exactly() {
        let allowed = std::iter::once(b'\t').chain((0x20..=0xFF).filter(|&b| b != 0x7F));
        for lower in ["content-length", "application/json", "x.1"] {
            let want = lower.as_bytes();
            for at in 0..want.len() {
                for b in allowed.clone() {
                    let mut text = want.to_vec();
                    text[at] = b;
                    assert_eq!(
                        same_text(&text, want),
                        text.eq_ignore_ascii_case(want),
                        "{lower} with {b:#x} at {at}"
                    );
                }
            }
            assert!(!same_text(&want[1..], want) && same_text(lower.to_uppercase().as_bytes(), want));
        }
    }

    /// A head with more fields than the first parse has room for is parsed again
    /// with room for all it may have; one with more than that is refused.
    #[test]
    fn heads_with_many_fields() {
        let head = |n: usize| {
            let mut h = String::from("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n");
            for i in 1..n {
                h.push_str(&format!("X-Field-{i}: value {i}\r\n"));
            }
            h + "\r\n{}"
        };
        for n in [1, FEW_FIELDS, FEW_FIELDS + 1, 40, MAX_FIELDS] {
            let (status, fields, body, _, _) = read_from(&[head(n).as_bytes()]).unwrap();
            assert_eq!((status, fields.len(), &body[..]), (200, n, &b"{}"[..]));
            assert_eq!(
                fields[n - 1].1,
                if n == 1 {
                    b"2".to_vec()
                } else {
                    format!("value {}", n - 1).into_bytes()
                }
            );
        }
        let err = read_from(&[head(MAX_FIELDS + 1).as_bytes()]).unwrap_err();
        assert!(err.contains("not valid HTTP/1.1"), "{err}");
    }

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

    /// How a test reads a body.
    #[derive(Clone, Copy, Debug)]
    enum How {
        /// With `rest`, if its length is known (else as `Pieces`).
        Whole,
        /// With `chunk`.
        Pieces,
        /// With `chunk_lent`.
        Lent,
    }

    /// Posts `{}` and reads the reply's body as `how` says.
    async fn post(client: &Client, how: How) -> Result<Vec<u8>, Failure> {
        let mut reply = client
            .send(
                &Method::POST,
                &client.request_head(&Method::POST, &Uri::from_static("/mcp"), b""),
                b"{}",
            )
            .await?;
        let mut body = Vec::new();
        match how {
            How::Whole if reply.content_length().is_some() => body.extend_from_slice(reply.rest().await?),
            How::Lent => {
                while let Some((piece, _)) = reply.chunk_lent().await? {
                    body.extend_from_slice(piece);
                }
            }
            _ => {
                while let Some(c) = reply.chunk().await? {
                    body.extend_from_slice(&c);
                }
            }
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
                let body = run_here_or_not(here, post(&client, How::Lent));
                assert_eq!(body.unwrap(), b"ok", "on a caller's thread: {here}");
                // The connection is back in the pool, idle: the server closes it.
                close.send(()).unwrap();
                closed.recv().unwrap();
            }
        }
        server.join().unwrap();
    }

    /// A server that answers requests (a head and the body `{}`), in order, with
    /// `replies`, each written a byte at a time so the client meets every split;
    /// after a reply marked `true` it closes the connection. It ends after the last
    /// reply and says how many connections it accepted.
    fn scripted<R: AsRef<[u8]> + Send + 'static>(replies: Vec<(R, bool)>) -> (u16, std::thread::JoinHandle<usize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let mut replies = replies.into_iter();
            let mut conns = 0;
            'conns: while replies.len() > 0 {
                let (mut s, _) = listener.accept().unwrap();
                s.set_nodelay(true).unwrap();
                conns += 1;
                loop {
                    let mut got = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !got.windows(4).any(|w| w == b"\r\n\r\n") || !got.ends_with(b"{}") {
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => continue 'conns, // the client left this one
                            Ok(n) => got.extend_from_slice(&buf[..n]),
                        }
                    }
                    let Some((reply, close)) = replies.next() else {
                        break 'conns;
                    };
                    for b in reply.as_ref() {
                        if s.write_all(&[*b]).is_err() {
                            break;
                        }
                    }
                    if close || replies.len() == 0 {
                        continue 'conns;
                    }
                }
            }
            conns
        });
        (port, server)
    }

    fn run_here_or_not<T>(here: bool, fut: impl Future<Output = T>) -> T {
        if here {
            super::super::http::here::block_here(fut)
        } else {
            crate::runtime::handle().block_on(fut)
        }
    }

    #[test]
    fn bodies_are_framed_by_chunks_length_or_close() {
        for here in [true, false] {
            let (port, server) =
                scripted::<&[u8]>(vec![
                // A 1xx head first; chunks with an extension and a trailer.
                (
                    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                      5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
                    false,
                ),
                (b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello", false),
                // Said to be the last on its connection: the next request opens another.
                (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc", true),
                (b"HTTP/1.1 200 OK\r\n\r\nuntil the end", true),
                // Chunked with a length beside it: read as chunked, not used again.
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n2\r\nok\r\n0\r\n\r\n",
                    false,
                ),
                (b"HTTP/1.1 204 No Content\r\n\r\n", false),
            ]);
            let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
            let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
            let bodies: Vec<Vec<u8>> = (0..6)
                .map(|i| run_here_or_not(here, post(&client, [How::Pieces, How::Whole, How::Lent][i % 3])).unwrap())
                .collect();
            let want: [&[u8]; 6] = [b"hello world", b"hello", b"abc", b"until the end", b"ok", b""];
            assert_eq!(bodies, want, "on a caller's thread: {here}");
            assert_eq!(server.join().unwrap(), 4, "on a caller's thread: {here}");
        }
    }

    #[test]
    fn broken_framing_is_an_error() {
        let cases: [(&[u8], &str); 6] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
                "two different Content-Length",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
                "Content-Length is not a number",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                "closed before the response body's end",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "chunk size",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n",
                "does not end where its size says",
            ),
            (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"),
        ];
        for here in [true, false] {
            let (port, server) = scripted(cases.iter().map(|(r, _)| (*r, true)).collect());
            let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
            let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
            for (reply, want) in cases {
                let got = run_here_or_not(here, post(&client, How::Whole));
                let text = got.expect_err(&String::from_utf8_lossy(reply)).to_string();
                assert!(text.contains(want), "{text:?} should say {want:?}");
            }
            assert_eq!(server.join().unwrap(), cases.len());
        }
    }

    #[test]
    fn a_response_head_that_is_not_http_is_an_error() {
        let (port, server) = scripted(vec![(b"SSH-2.0-OpenSSH\r\n\r\n", true)]);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
        let err = crate::runtime::handle()
            .block_on(post(&client, How::Pieces))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid HTTP/1.1"), "{err}");
        server.join().unwrap();
    }

    /// Random bodies, sent in chunks of random sizes (with extensions, and trailers
    /// at the end), come back whole, and the connection carries them all.
    #[test]
    fn random_chunked_bodies_come_back_whole() {
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9);
        let mut rand = move |n: u64| rng.below(n);
        let mut bodies = Vec::new();
        let mut replies = Vec::new();
        for case in 0..24 {
            let body: Vec<u8> = (0..rand(3000)).map(|_| b"ab\r\n0;x\"{}"[rand(10) as usize]).collect();
            let mut reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            let mut rest = &body[..];
            while !rest.is_empty() {
                let n = (1 + rand(400) as usize).min(rest.len());
                let ext = if rand(3) == 0 { ";name=\"v\"" } else { "" };
                reply.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                reply.extend_from_slice(&rest[..n]);
                reply.extend_from_slice(b"\r\n");
                rest = &rest[n..];
            }
            reply.extend_from_slice(if case % 2 == 0 {
                b"0\r\n\r\n"
            } else {
                b"0\r\nX-A: 1\r\nX-B: 2\r\n\r\n"
            });
            bodies.push(body);
            replies.push((reply, false));
        }
        let (port, server) = scripted(replies);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10)).unwrap();
        for (i, want) in bodies.iter().enumerate() {
            let how = if i % 4 < 2 { How::Pieces } else { How::Lent };
            let got = run_here_or_not(i % 2 == 0, post(&client, how)).unwrap();
            assert!(&got == want, "body {i} differs");
        }
        assert_eq!(server.join().unwrap(), 1);
    }
}
