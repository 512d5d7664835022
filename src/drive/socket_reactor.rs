//! The TCP socket where a caller's thread does not wait on it itself (every
//! platform but Linux): tokio's stream, driven by the runtime's reactor whoever
//! polls it. A caller's thread that polls its exchange ([`super::here`]) sleeps on
//! its parker, which the reactor wakes. The same interface as Linux's `socket.rs`.

use std::io;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A TCP stream, always registered with the reactor.
pub struct Tcp(TcpStream);

impl Tcp {
    /// `recheck` is the pool's flag that the socket may have closed while it was
    /// idle: the reactor knows that here, so it is not needed.
    pub fn new(tcp: TcpStream, _recheck: Arc<AtomicBool>) -> io::Result<Tcp> {
        Ok(Tcp(tcp))
    }

    /// Nothing to do: no caller's thread waits on this socket in place.
    pub fn set_wait_in_place(&mut self, _on: bool) {}

    /// Nothing to do: no caller's thread waits on this socket.
    pub fn leave_exchange(&self) {}
}

impl AsyncRead for Tcp {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Tcp {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
