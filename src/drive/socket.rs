//! A TCP socket that a caller's thread or the runtime may drive, and the moves
//! between the two (see the module doc of [`super`]).

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

use super::here;
use crate::sys::Watched;

/// A TCP stream that works two ways. Polled by a caller's thread blocked in a call
/// (see [`super::here`]), it reads and writes the socket itself and, when
/// the socket is not ready, has that thread wait on it: the runtime's reactor is not
/// involved, so a sequential call wakes no runtime thread. Polled anywhere else, it
/// is registered with the reactor (from its first such poll) like tokio's own
/// streams. Sends never raise SIGPIPE (they may run on a host's thread).
pub struct Tcp {
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
    Watched(Watched<std::net::TcpStream>),
    /// Only while it moves between the two.
    Moving,
}

impl Tcp {
    pub fn new(tcp: TcpStream, recheck: Arc<AtomicBool>) -> io::Result<Tcp> {
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
    pub fn std(&self) -> Option<&std::net::TcpStream> {
        match &self.sock {
            Sock::Bare(s) => Some(s),
            Sock::Watched(w) => Some(w.get_ref()),
            Sock::Moving => None,
        }
    }

    pub fn raw_fd(&self) -> RawFd {
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
        if here::polling() {
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
            let woke = here::woken_by(fd, reading) || recheck;
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
            if self.wait_in_place && here::wait_in_place(sock.as_fd(), reading) {
                match op(sock.as_fd()) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    done => {
                        *ready = true;
                        return Poll::Ready(done);
                    }
                }
            }
            here::note_wait(fd, reading);
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
                    // before asking the reactor, the socket would be read twice a
                    // request with calls in flight: the reactor may still hold it
                    // readable from the last response.)
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

impl Tcp {
    /// Lets a caller's thread wait for this socket right where a read or write
    /// would block, or not (see the field's doc).
    pub fn set_wait_in_place(&mut self, on: bool) {
        self.wait_in_place = on;
    }

    /// The socket leaves its exchange (it goes back to a pool): no caller's thread
    /// may go on waiting on it. Part of the fd lifetime rule (module doc).
    pub fn leave_exchange(&self) {
        here::forget_wait(self.raw_fd());
    }
}

impl Drop for Tcp {
    fn drop(&mut self) {
        here::forget_wait(self.raw_fd());
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
