//! The stream of one connection: plain TCP, TLS, or TLS in TLS (with the origin
//! through an `https://` proxy).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_rustls::client::TlsStream;

use crate::drive::socket::Tcp;

/// A plain or TLS stream (TLS in TLS: with the origin through an `https://` proxy).
pub enum Stream {
    Plain(Tcp),
    Tls(Box<TlsStream<Tcp>>),
    TlsInTls(Box<TlsStream<TlsStream<Tcp>>>),
}

impl Stream {
    /// Lets a caller's thread wait for a plain connection's socket in place, or not
    /// (see `Tcp::wait_in_place`); a TLS connection's never does.
    pub fn wait_in_place(&mut self, on: bool) {
        if let Stream::Plain(tcp) = self {
            tcp.set_wait_in_place(on);
        }
    }

    /// The socket's descriptor, for forgetting a caller's thread's wait on it
    /// (`drive::here::forget_wait`) where nothing drops the stream.
    #[cfg(target_os = "linux")]
    pub fn raw_fd(&self) -> std::os::fd::RawFd {
        match self {
            Stream::Plain(tcp) => tcp.raw_fd(),
            Stream::Tls(tls) => tls.get_ref().0.raw_fd(),
            Stream::TlsInTls(tls) => tls.get_ref().0.get_ref().0.raw_fd(),
        }
    }

    /// The connection leaves its exchange (see [`Tcp::leave_exchange`]).
    pub fn leave_exchange(&self) {
        match self {
            Stream::Plain(tcp) => tcp.leave_exchange(),
            Stream::Tls(tls) => tls.get_ref().0.leave_exchange(),
            Stream::TlsInTls(tls) => tls.get_ref().0.get_ref().0.leave_exchange(),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            Stream::TlsInTls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            Stream::TlsInTls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
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
            Stream::TlsInTls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
            Stream::TlsInTls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            Stream::TlsInTls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            Stream::TlsInTls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

impl Stream {
    /// True when TLS with the origin agreed on HTTP/2 (ALPN `h2`).
    pub fn is_h2(&self) -> bool {
        let alpn = match self {
            Stream::Plain(_) => None,
            Stream::Tls(s) => s.get_ref().1.alpn_protocol(),
            Stream::TlsInTls(s) => s.get_ref().1.alpn_protocol(),
        };
        alpn == Some(b"h2")
    }
}
