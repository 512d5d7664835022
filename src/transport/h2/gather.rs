//! The connection's socket as h2 sees it, with large writes gathered. h2 writes a
//! DATA frame that it chains (a payload of 256 bytes or more, over vectored I/O)
//! as two pieces, its buffer and the payload, and flushes after each, so a body
//! went out as one `sendmsg` per frame (16 KiB, most servers' largest): 66 system
//! calls for a 1 MiB argument. Here such a write of 8 KiB or more, and whatever is
//! written after it, is kept (up to 256 KiB) until the poller, once h2 has nothing
//! more to write, polls the connection once more to flush it; everything else is
//! written as before.

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
    /// Set by the poller for the poll that flushes what is kept: h2's flush then
    /// writes it (at other times a flush leaves it kept).
    pub flushing: AtomicBool,
    /// Something is kept that h2 counts as written: the poller has the connection
    /// flushed. (Cleared once it is handed to the stream below, which over TLS may
    /// still hold records until the socket takes them, as it would without this.)
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

    /// Keeps `bufs` (`len` bytes in all) after what is kept.
    fn keep(&mut self, bufs: &[io::IoSlice<'_>], len: usize) -> usize {
        if self.out.capacity() == 0 {
            self.out.reserve_exact(GATHER_UP_TO);
        }
        for b in bufs {
            self.out.extend_from_slice(b);
        }
        self.gather.held.store(true, Ordering::Relaxed);
        len
    }

    /// Writes what is kept; Ready once all of it has gone. The buffer is freed
    /// then: only a large body needs one, and none is held between bodies.
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
        // A large DATA frame (h2 writes h2's buffer, ending in the frame's head,
        // and the payload: two pieces), or anything after what is kept (to keep
        // the order), while it fits. A write larger than the buffer goes as it is;
        // h2's buffer alone (small frames) is one piece and goes as before.
        let frame = bufs.len() > 1 && len >= GATHER_FROM;
        if (frame || !me.out.is_empty()) && me.out.len() + len <= GATHER_UP_TO {
            return Poll::Ready(Ok(me.keep(bufs, len)));
        }
        if !me.out.is_empty() {
            std::task::ready!(me.poll_drain(cx))?;
            // A frame that did not fit starts the next gathering.
            if frame && len <= GATHER_UP_TO {
                return Poll::Ready(Ok(me.keep(bufs, len)));
            }
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
        // Only what is kept waits; a flush with nothing kept goes through (TLS may
        // hold records of a small write until flushed).
        if !me.out.is_empty() {
            if !me.gather.flushing.load(Ordering::Relaxed) {
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
    use std::future::Future;
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpSocket, TcpStream};

    use super::*;
    use crate::drive::runtime::handle;
    use crate::drive::socket::Tcp;

    /// Runs a test's body on the runtime; one that hangs fails.
    fn run(body: impl Future<Output = ()>) {
        handle().block_on(async {
            tokio::time::timeout(Duration::from_secs(20), body)
                .await
                .expect("the test hung");
        });
    }

    /// An `Io` over a loopback connection, and the other end; with small socket
    /// buffers both ways if `small`.
    async fn pair(small: bool) -> (Io, Arc<Gather>, TcpStream) {
        let listening = TcpSocket::new_v4().unwrap();
        let ours = TcpSocket::new_v4().unwrap();
        if small {
            listening.set_recv_buffer_size(4096).unwrap();
            ours.set_send_buffer_size(4096).unwrap();
        }
        listening.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listening.local_addr().unwrap();
        let listener = listening.listen(1).unwrap();
        let (ours, theirs) = tokio::join!(ours.connect(addr), listener.accept());
        let tcp = Tcp::new(ours.unwrap(), Arc::new(AtomicBool::new(false))).unwrap();
        let gather = Arc::new(Gather::default());
        (Io::new(Stream::Plain(tcp), gather.clone()), gather, theirs.unwrap().0)
    }

    fn frame(i: usize, len: usize) -> Vec<u8> {
        (0..len).map(|j| (i * 7 + j) as u8).collect()
    }

    /// Writes `f` as h2 writes a DATA frame it chains: its buffer (here the 9-byte
    /// head) and its payload, in one vectored write.
    async fn write_frame(io: &mut Io, f: &[u8]) {
        let (head, payload) = f.split_at(9);
        let n = io
            .write_vectored(&[io::IoSlice::new(head), io::IoSlice::new(payload)])
            .await
            .unwrap();
        io.write_all(&f[n..]).await.unwrap();
    }

    /// Asserts that nothing has reached `peer` (a peek at the socket itself).
    fn nothing_arrived(peer: TcpStream) -> TcpStream {
        let peer = peer.into_std().unwrap();
        let r = peer.peek(&mut [0u8; 1]);
        assert!(
            matches!(&r, Err(e) if e.kind() == io::ErrorKind::WouldBlock),
            "nothing goes out while kept: {r:?}"
        );
        TcpStream::from_std(peer).unwrap()
    }

    /// Reads `len` bytes from `peer`, on a task of its own.
    fn read_back(mut peer: TcpStream, len: usize) -> tokio::task::JoinHandle<Vec<u8>> {
        tokio::spawn(async move {
            let mut got = vec![0; len];
            peer.read_exact(&mut got).await.unwrap();
            got
        })
    }

    async fn flushing(io: &mut Io, gather: &Gather) {
        gather.flushing.store(true, Ordering::Relaxed);
        io.flush().await.unwrap();
        gather.flushing.store(false, Ordering::Relaxed);
    }

    #[test]
    fn large_data_frames_wait_for_the_flush_and_keep_their_order() {
        run(async {
            let (mut io, gather, mut peer) = pair(false).await;
            // h2 chains frames only over vectored writes.
            assert!(io.is_write_vectored());
            // A small write goes at once, as before...
            io.write_all(b"head").await.unwrap();
            io.flush().await.unwrap();
            let mut got = vec![0; 4];
            peer.read_exact(&mut got).await.unwrap();
            assert_eq!(got, b"head");
            // ...and so does a large write in one piece (h2's buffer of small frames).
            let one = frame(9, 20 << 10);
            io.write_all(&one).await.unwrap();
            io.flush().await.unwrap();
            assert!(!gather.held.load(Ordering::Relaxed));
            let mut got = vec![0; one.len()];
            peer.read_exact(&mut got).await.unwrap();
            assert!(got == one);
            // Large DATA frames, and a small write after them, are kept through a
            // flush...
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
            let mut peer = nothing_arrived(peer);
            // ...and go out, in order, at the poller's flush.
            flushing(&mut io, &gather).await;
            assert!(!gather.held.load(Ordering::Relaxed));
            let mut got = vec![0; sent.len()];
            peer.read_exact(&mut got).await.unwrap();
            assert!(got == sent, "the kept bytes came in order");
        });
    }

    #[test]
    fn a_frame_that_does_not_fit_sends_what_is_kept_and_is_kept_itself() {
        run(async {
            let (mut io, gather, mut peer) = pair(false).await;
            let f = frame(1, 16 << 10);
            // Sixteen fit; the seventeenth sends them.
            for _ in 0..17 {
                write_frame(&mut io, &f).await;
            }
            let mut got = vec![0; GATHER_UP_TO];
            peer.read_exact(&mut got).await.unwrap();
            assert!(got.chunks(f.len()).all(|c| c == &f[..]));
            assert!(gather.held.load(Ordering::Relaxed), "the seventeenth is kept");
            let mut peer = nothing_arrived(peer);
            flushing(&mut io, &gather).await;
            let mut got = vec![0; f.len()];
            peer.read_exact(&mut got).await.unwrap();
            assert!(got == f);
        });
    }

    #[test]
    fn a_write_larger_than_the_buffer_follows_what_was_kept_at_once() {
        run(async {
            let (mut io, gather, peer) = pair(false).await;
            let (first, big) = (frame(3, 20 << 10), frame(4, GATHER_UP_TO + 1));
            write_frame(&mut io, &first).await;
            assert!(gather.held.load(Ordering::Relaxed));
            let reader = read_back(peer, first.len() + big.len());
            write_frame(&mut io, &big).await;
            assert!(!gather.held.load(Ordering::Relaxed), "no flush was needed");
            assert!(reader.await.unwrap() == [first, big].concat());
        });
    }

    #[test]
    fn a_flush_the_socket_cannot_take_whole_goes_on_where_it_stopped() {
        run(async {
            let (mut io, gather, peer) = pair(true).await;
            let (first, second) = (frame(5, 200 << 10), frame(6, 20 << 10));
            write_frame(&mut io, &first).await;
            // The peer reads nothing yet: the socket takes a few KiB of it.
            gather.flushing.store(true, Ordering::Relaxed);
            let flushed = std::future::poll_fn(|cx| Poll::Ready(Pin::new(&mut io).poll_flush(cx))).await;
            gather.flushing.store(false, Ordering::Relaxed);
            assert!(flushed.is_pending(), "the socket took all of it: {flushed:?}");
            // Written meanwhile, kept after the rest of the first.
            write_frame(&mut io, &second).await;
            let reader = read_back(peer, first.len() + second.len());
            flushing(&mut io, &gather).await;
            assert!(reader.await.unwrap() == [first, second].concat());
        });
    }

    #[test]
    fn the_shutdown_sends_what_was_kept() {
        run(async {
            let (mut io, _, mut peer) = pair(false).await;
            let f = frame(2, 20 << 10);
            write_frame(&mut io, &f).await;
            io.shutdown().await.unwrap();
            let mut got = Vec::new();
            peer.read_to_end(&mut got).await.unwrap();
            assert!(got == f);
        });
    }
}
