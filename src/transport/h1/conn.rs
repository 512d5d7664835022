//! One kept-alive connection (plain or TLS) and the pool that keeps them between
//! requests.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use http::Method;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::parse::*;
use crate::transport::net::{self, Origin, Stream};

/// How long a kept-alive connection may sit unused before it is closed.
pub(super) const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// One connection: its stream and what has been read from it and not yet used.
/// It carries one request at a time and reads and writes only when the future that
/// uses it is polled.
pub(super) struct Conn {
    pub(super) io: Stream,
    pub(super) buf: BytesMut,
    /// False once a response said the connection ends with it.
    pub(super) keep_alive: bool,
    pub(super) idle_since: Instant,
    /// Shared with the socket (see `Tcp::recheck`).
    pub(super) recheck: Arc<AtomicBool>,
}

impl Conn {
    /// A fresh connection to `origin`.
    pub(super) async fn open(origin: &Origin, timeout: Duration) -> Result<Box<Conn>, Failure> {
        let (io, recheck) = net::open(origin, timeout).await?;
        Ok(Conn::over(io, recheck))
    }

    /// A connection over a stream just opened.
    pub(super) fn over(mut io: Stream, recheck: Arc<AtomicBool>) -> Box<Conn> {
        io.wait_in_place(true);
        Box::new(Conn {
            io,
            buf: BytesMut::new(),
            keep_alive: true,
            idle_since: Instant::now(),
            recheck,
        })
    }

    /// Reads what the socket has into `buf`, with room for at least `want` bytes
    /// more; Ok(0) when the server has closed the connection.
    pub(super) async fn read_more(&mut self, want: usize) -> io::Result<usize> {
        self.buf.reserve(want.max(READ_SIZE));
        std::future::poll_fn(|cx| tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.buf)).await
    }

    /// For a connection taken from the pool: false when the server closed it, or
    /// sent something nobody asked for, while it sat idle.
    pub(super) async fn still_open(&mut self) -> bool {
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
    pub(super) async fn write(&mut self, parts: [&[u8]; 3]) -> Result<(), (io::Error, bool)> {
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

    /// Reads the response head (past any 1xx ones). An error says too whether the
    /// connection ended (closed or reset) before any byte of a response came.
    pub(super) async fn read_head(&mut self, method: &Method) -> Result<Head, (Failure, bool)> {
        // A kept-alive connection's buffer is empty when its next request goes out.
        let mut got_any = !self.buf.is_empty();
        loop {
            if !self.buf.is_empty() {
                if let Some(head) = parse_head(&mut self.buf, method).map_err(|f| (f, false))? {
                    return Ok(head);
                }
            }
            match self.read_more(READ_SIZE).await {
                Ok(0) if !got_any => return Err((closed_early("before a response came"), true)),
                Ok(0) => return Err((closed_early("in the middle of the response head"), false)),
                Ok(_) => got_any = true,
                Err(e) => {
                    let ended = matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted | io::ErrorKind::BrokenPipe
                    );
                    return Err((Failure::Http(e), ended && !got_any));
                }
            }
        }
    }

    /// The next piece of a body framed by `framing` (which it moves on): its length,
    /// at the front of the buffer, where it stays; None at the end.
    pub(super) async fn next_piece(&mut self, framing: &mut Framing) -> Result<Option<usize>, Failure> {
        loop {
            match body_step(&mut self.buf, framing)? {
                Step::Piece(n) => return Ok(Some(n)),
                Step::End => return Ok(None),
                // Room for 64 KiB a read, not for all that is left: more room costs
                // page faults and throughput, less costs more reads and CPU.
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
pub(super) struct Pool {
    // Boxed here too: a connection leaves the pool for a reply, which keeps it
    // boxed (see `Reply::conn`).
    #[allow(clippy::vec_box)]
    pub(super) idle: Mutex<Vec<Box<Conn>>>,
}

impl Pool {
    pub(super) fn take(&self) -> Option<Box<Conn>> {
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
    pub(super) fn put(&self, mut c: Box<Conn>) {
        if !c.keep_alive || !c.buf.is_empty() {
            return;
        }
        c.io.leave_exchange();
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
