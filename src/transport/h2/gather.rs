//! The connection's socket as h2 sees it, with large writes gathered. h2 writes a
//! large DATA frame straight from its payload and flushes after each, so a body
//! went out as one `sendmsg` per frame (16 KiB, the usual server's largest): 64
//! system calls for a 1 MiB argument. Here, while the poller polls, such writes
//! are gathered and go out together when h2 has nothing more to write or the
//! buffer is full; everything else is written as before.

use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::transport::net::Stream;

/// A DATA frame at least this large (with its head) is gathered.
const GATHER_FROM: usize = 8 << 10;
/// The most gathered: a write that would not fit has what is gathered go first.
const GATHER_UP_TO: usize = 256 << 10;

/// Shared by the socket and its poller.
#[derive(Default)]
pub struct Gather {
    /// Set by the poller while it polls the connection: large writes may wait.
    pub defer: AtomicBool,
    /// Something waits to be written: the poller has the connection flushed.
    pub held: AtomicBool,
}

/// The socket under h2.
pub struct Io {
    s: Stream,
    out: Vec<u8>,
    /// How much of `out` has gone.
    sent: usize,
    gather: Arc<Gather>,
}

impl Io {
    pub fn new(s: Stream, gather: Arc<Gather>) -> Io {
        Io {
            s,
            out: Vec::new(),
            sent: 0,
            gather,
        }
    }

    /// Writes what is gathered; Ready once all of it has gone, and its buffer freed
    /// (a large body is the exception: no buffer is kept between them).
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.sent < self.out.len() {
            let n = std::task::ready!(Pin::new(&mut self.s).poll_write(cx, &self.out[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.sent = 0;
        self.out = Vec::new();
        self.gather.held.store(false, Ordering::Relaxed);
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Io {
    #[inline]
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().s).poll_read(cx, buf)
    }
}

impl AsyncWrite for Io {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.poll_write_vectored(cx, &[io::IoSlice::new(buf)])
    }

    #[inline]
    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let me = self.get_mut();
        let len: usize = bufs.iter().map(|b| b.len()).sum();
        // A large DATA frame (h2 writes its head, from h2's buffer, and its payload
        // as two pieces), or anything after what is gathered (to keep the order),
        // while it fits; a write larger than the buffer goes as it is. h2's buffer
        // of small frames is written as one piece and goes as it did.
        let frame = bufs.len() > 1 && len >= GATHER_FROM;
        if (frame || !me.out.is_empty())
            && me.out.len() + len <= GATHER_UP_TO
            && me.gather.defer.load(Ordering::Relaxed)
        {
            if me.out.capacity() == 0 {
                me.out.reserve_exact(GATHER_UP_TO);
            }
            for b in bufs {
                me.out.extend_from_slice(b);
            }
            me.gather.held.store(true, Ordering::Relaxed);
            return Poll::Ready(Ok(len));
        }
        if !me.out.is_empty() {
            std::task::ready!(me.poll_drain(cx))?;
        }
        Pin::new(&mut me.s).poll_write_vectored(cx, bufs)
    }

    #[inline]
    fn is_write_vectored(&self) -> bool {
        self.s.is_write_vectored()
    }

    #[inline]
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        // Only what is gathered waits; a flush with nothing gathered goes through
        // (TLS may hold records of a small write until flushed).
        if !me.out.is_empty() {
            if me.gather.defer.load(Ordering::Relaxed) {
                return Poll::Ready(Ok(()));
            }
            std::task::ready!(me.poll_drain(cx))?;
        }
        Pin::new(&mut me.s).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let me = self.get_mut();
        std::task::ready!(me.poll_drain(cx))?;
        Pin::new(&mut me.s).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::drive::runtime::handle;
    use crate::drive::socket::Tcp;

    /// An `Io` over a loopback connection, deferring as while its poller polls, and
    /// the other end.
    async fn pair() -> (Io, Arc<Gather>, tokio::net::TcpStream) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (ours, theirs) = tokio::join!(tokio::net::TcpStream::connect(("127.0.0.1", port)), listener.accept());
        let tcp = Tcp::new(ours.unwrap(), Arc::new(AtomicBool::new(false))).unwrap();
        let gather = Arc::new(Gather::default());
        gather.defer.store(true, Ordering::Relaxed);
        (Io::new(Stream::Plain(tcp), gather.clone()), gather, theirs.unwrap().0)
    }

    fn frame(i: usize, len: usize) -> Vec<u8> {
        (0..len).map(|j| (i * 7 + j) as u8).collect()
    }

    /// Writes `f` as h2 writes a DATA frame: its 9-byte head and its payload, in
    /// one vectored write.
    async fn write_frame(io: &mut Io, f: &[u8]) {
        let (head, payload) = f.split_at(9);
        let n = io
            .write_vectored(&[io::IoSlice::new(head), io::IoSlice::new(payload)])
            .await
            .unwrap();
        io.write_all(&f[n..]).await.unwrap();
    }

    #[test]
    fn large_data_frames_wait_for_the_flush_and_keep_their_order() {
        handle().block_on(async {
            let (mut io, gather, mut peer) = pair().await;
            // A small write alone goes at once, as before.
            io.write_all(b"head").await.unwrap();
            io.flush().await.unwrap();
            let mut got = vec![0; 4];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(got, b"head");
            // So does a large write in one piece (h2's buffer of small frames).
            let one = frame(9, 20 << 10);
            io.write_all(&one).await.unwrap();
            io.flush().await.unwrap();
            assert!(!gather.held.load(Ordering::Relaxed));
            let mut got = vec![0; one.len()];
            peer.read_exact(&mut got).await.unwrap();
            assert!(got == one);
            // Large DATA frames, and a small write after them, are gathered...
            let mut sent = Vec::new();
            for i in 0..4 {
                let f = frame(i, 16 << 10);
                write_frame(&mut io, &f).await;
                sent.extend_from_slice(&f);
            }
            io.write_all(b"tail").await.unwrap();
            sent.extend_from_slice(b"tail");
            io.flush().await.unwrap();
            assert!(gather.held.load(Ordering::Relaxed));
            // On loopback a write is in the peer's queue when it returns.
            let early = peer.try_read(&mut [0u8; 1]);
            assert!(
                matches!(&early, Err(e) if e.kind() == io::ErrorKind::WouldBlock),
                "nothing goes out while writes are deferred: {early:?}"
            );
            // ...and go out, in order, at the flush that is not deferred.
            gather.defer.store(false, Ordering::Relaxed);
            io.flush().await.unwrap();
            assert!(!gather.held.load(Ordering::Relaxed));
            let mut got = vec![0; sent.len()];
            peer.read_exact(&mut got).await.unwrap();
            assert!(got == sent, "the gathered bytes came in order");
        });
    }

    #[test]
    fn a_full_buffer_goes_out_without_a_flush() {
        handle().block_on(async {
            let (mut io, _, mut peer) = pair().await;
            let f = frame(1, 16 << 10);
            let n = GATHER_UP_TO / f.len() + 1;
            let reader = tokio::spawn(async move {
                let mut got = vec![0; n * (16 << 10)];
                peer.read_exact(&mut got[..GATHER_UP_TO]).await.unwrap();
                got
            });
            for _ in 0..=n {
                write_frame(&mut io, &f).await;
            }
            // What reached the limit went out with the write after it.
            let got = reader.await.unwrap();
            assert!(got[..GATHER_UP_TO].chunks(f.len()).all(|c| c == &f[..c.len()]));
        });
    }

    #[test]
    fn a_write_larger_than_the_buffer_follows_what_was_gathered_at_once() {
        handle().block_on(async {
            let (mut io, gather, mut peer) = pair().await;
            let (first, big) = (frame(3, 20 << 10), frame(4, GATHER_UP_TO + 1));
            write_frame(&mut io, &first).await;
            assert!(gather.held.load(Ordering::Relaxed));
            let reader = tokio::spawn(async move {
                let mut got = vec![0; (20 << 10) + GATHER_UP_TO + 1];
                peer.read_exact(&mut got).await.unwrap();
                got
            });
            write_frame(&mut io, &big).await;
            assert!(!gather.held.load(Ordering::Relaxed), "no flush was needed");
            let got = reader.await.unwrap();
            assert!(got[..first.len()] == first[..] && got[first.len()..] == big[..]);
        });
    }

    #[test]
    fn the_shutdown_sends_what_was_gathered() {
        handle().block_on(async {
            let (mut io, _, mut peer) = pair().await;
            let f = frame(2, 20 << 10);
            write_frame(&mut io, &f).await;
            io.shutdown().await.unwrap();
            let mut got = Vec::new();
            peer.read_to_end(&mut got).await.unwrap();
            assert!(got == f);
        });
    }
}
