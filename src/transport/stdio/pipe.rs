//! The pipes to the child: non-blocking set-up, and growth for large messages.

use super::*;
use crate::error::{Error, Result, Status};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use tokio::io::unix::AsyncFd;

/// A pipe to or from the server that a large message crosses grows to this size
/// (Linux's default is 64 KiB), so such a message crosses in a few reads instead of
/// sixteen wake-ups per MiB. The kernel allocates pipe pages only as they fill.
pub(super) const PIPE_SIZE: usize = 1024 * 1024;

/// Linux's default pipe size: a message at least this long grows its pipe.
pub(super) const LARGE: usize = 64 * 1024;

/// At most this many grown pipes are open in the process at once. Linux counts a
/// pipe's whole size against the user's `pipe-user-pages-soft` (64 MiB by default),
/// past which every new pipe of that user, in any process, gets only 8 KiB.
pub(super) const MAX_GROWN_PIPES: usize = 16;

pub(super) static GROWN_PIPES: AtomicUsize = AtomicUsize::new(0);

/// Grows one pipe, at most once: when the first large message crosses it.
pub(super) struct PipeGrowth(AtomicU8);

pub(super) const UNTRIED: u8 = 0;

pub(super) const TRIED: u8 = 1;

pub(super) const GROWN: u8 = 2;

impl PipeGrowth {
    pub(super) fn new() -> Self {
        PipeGrowth(AtomicU8::new(UNTRIED))
    }

    /// Grows the pipe to [`PIPE_SIZE`] if this is the first try and the process's
    /// budget and the system allow (an unprivileged process may go up to
    /// /proc/sys/fs/pipe-max-size); otherwise it stays as it is.
    pub(super) fn grow(&self, fd: BorrowedFd<'_>) {
        if self.0.load(Ordering::Relaxed) != UNTRIED || self.0.swap(TRIED, Ordering::AcqRel) != UNTRIED {
            return;
        }
        if GROWN_PIPES.fetch_add(1, Ordering::AcqRel) < MAX_GROWN_PIPES
            && nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_SETPIPE_SZ(PIPE_SIZE as i32)).is_ok()
        {
            self.0.store(GROWN, Ordering::Release);
        } else {
            GROWN_PIPES.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for PipeGrowth {
    fn drop(&mut self) {
        if *self.0.get_mut() == GROWN {
            GROWN_PIPES.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// A pipe end in non-blocking mode, registered with the runtime.
pub(super) fn nonblocking_async_fd(fd: std::io::Result<OwnedFd>) -> Result<AsyncFd<OwnedFd>> {
    // `new` is deprecated for fds a value may not own; an OwnedFd owns its fd.
    #[allow(deprecated)]
    nonblocking(fd).and_then(AsyncFd::new).map_err(pipe_setup_error)
}

/// The child's stdout in non-blocking mode, and a one-shot epoll set watching it,
/// registered with the runtime.
pub(super) fn watched_pipe(fd: std::io::Result<OwnedFd>) -> Result<(OwnedFd, AsyncFd<Watch>)> {
    let watched = || -> std::io::Result<(OwnedFd, AsyncFd<Watch>)> {
        let fd = nonblocking(fd)?;
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC)?;
        epoll.add(
            fd.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN | EpollFlags::EPOLLONESHOT, 0),
        )?;
        // `new` is deprecated for fds a value may not own; `Watch` owns its epoll fd.
        #[allow(deprecated)]
        let watch = AsyncFd::new(Watch(epoll))?;
        Ok((fd, watch))
    };
    watched().map_err(pipe_setup_error)
}

pub(super) fn pipe_setup_error(e: std::io::Error) -> Error {
    Error::new(Status::MCPC_ERR_SPAWN, format!("cannot set up the server's pipes: {e}"))
}

/// A pipe end (as the child's handle gives it) switched to non-blocking mode.
pub(super) fn nonblocking(fd: std::io::Result<OwnedFd>) -> std::io::Result<OwnedFd> {
    let fd = fd?;
    nix::fcntl::fcntl(
        fd.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )?;
    Ok(fd)
}
