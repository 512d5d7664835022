//! The POSIX (and Linux) calls the core needs, through safe wrappers. Linux-only
//! calls (`pwritev2`) fall back to portable ones where they fail, and are built
//! only on Linux, as are the driven socket's (`drive/socket.rs`).

#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

use nix::errno::Errno;
use nix::sys::signal::{killpg, pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

thread_local! {
    static SIGPIPE_BLOCKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Blocks SIGPIPE on the calling thread, so that a write to a pipe whose reader
/// has gone returns EPIPE instead of killing the host process. Called on every
/// runtime thread at start.
pub fn block_sigpipe_on_this_thread() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGPIPE);
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
    SIGPIPE_BLOCKED.with(|b| b.set(true));
}

/// True on the runtime's own threads (they all block SIGPIPE from their start).
/// Unlike [`crate::drive::runtime::on_runtime_thread`], false on a host's thread, also
/// while it blocks in a call (inside the runtime's context) or runs a callback.
pub fn on_mcpc_thread() -> bool {
    SIGPIPE_BLOCKED.with(|b| b.get())
}

/// Writes to a pipe from any thread without raising SIGPIPE in the host. On a
/// thread that does not block SIGPIPE already, the write says so itself where the
/// kernel allows it (`RWF_NOSIGNAL`, Linux 6.18); elsewhere SIGPIPE is blocked for
/// the write, and a SIGPIPE the write raised is taken off the thread before the
/// mask is restored.
pub fn write_nosigpipe(fd: std::os::fd::BorrowedFd<'_>, buf: &[u8]) -> nix::Result<usize> {
    writev_nosigpipe(fd, &[std::io::IoSlice::new(buf)])
}

/// `RWF_NOSIGNAL` (Linux 6.18): a write that finds no reader fails with EPIPE and
/// raises no SIGPIPE. Not in the libc crate yet.
#[cfg(target_os = "linux")]
const RWF_NOSIGNAL: libc::c_int = 0x100;

/// Cleared the first time `pwritev2` refuses `RWF_NOSIGNAL` (an older kernel).
#[cfg(target_os = "linux")]
static RWF_NOSIGNAL_WORKS: AtomicBool = AtomicBool::new(true);

/// As [`write_nosigpipe`], gathering several buffers into one write.
///
/// With `RWF_NOSIGNAL` a host thread's write is one system call instead of three
/// (the mask blocked and restored around it; docs/decisions/0007-pwritev2-nosignal.md).
pub fn writev_nosigpipe(fd: std::os::fd::BorrowedFd<'_>, bufs: &[std::io::IoSlice<'_>]) -> nix::Result<usize> {
    if SIGPIPE_BLOCKED.with(|b| b.get()) {
        return writev(fd, bufs);
    }
    #[cfg(target_os = "linux")]
    if RWF_NOSIGNAL_WORKS.load(Ordering::Relaxed) {
        match pwritev_nosignal(fd, bufs) {
            // Refused before anything was written: the flag is unknown (before
            // Linux 6.18), or pwritev2 is (before 4.6, or a sandbox's filter).
            Err(Errno::EOPNOTSUPP | Errno::ENOSYS | Errno::EPERM) => {
                RWF_NOSIGNAL_WORKS.store(false, Ordering::Relaxed);
            }
            done => return done,
        }
    }
    writev_masked(fd, bufs)
}

fn writev(fd: std::os::fd::BorrowedFd<'_>, bufs: &[std::io::IoSlice<'_>]) -> nix::Result<usize> {
    match bufs {
        [one] => nix::unistd::write(fd, one),
        many => nix::sys::uio::writev(fd, many),
    }
}

/// `pwritev2(fd, bufs, -1, RWF_NOSIGNAL)`: a write at the file's position (a
/// pipe has none) that raises no SIGPIPE.
#[cfg(target_os = "linux")]
fn pwritev_nosignal(fd: std::os::fd::BorrowedFd<'_>, bufs: &[std::io::IoSlice<'_>]) -> nix::Result<usize> {
    let count = libc::c_int::try_from(bufs.len()).map_err(|_| Errno::EINVAL)?;
    #[allow(unsafe_code)]
    // SAFETY: `IoSlice` is ABI-compatible with `iovec` on Unix, and `bufs` holds
    // `count` of them, each valid to read for its length, for the whole call.
    let n = unsafe { pwritev2(fd.as_raw_fd(), bufs.as_ptr().cast(), count, RWF_NOSIGNAL) };
    Errno::result(n).map(|n| n as usize)
}

/// glibc's `pwritev2` at offset -1.
#[cfg(all(target_os = "linux", not(target_env = "musl")))]
#[allow(unsafe_code)]
unsafe fn pwritev2(fd: libc::c_int, iov: *const libc::iovec, count: libc::c_int, flags: libc::c_int) -> isize {
    // SAFETY: the caller's promise, passed on.
    unsafe { libc::pwritev2(fd, iov, count, -1, flags) }
}

/// The system call itself: musl has a `pwritev2` only from 1.2.5, and a library that
/// names it fails to load on an older one (a musllinux_1_2 wheel must load on 1.2.0).
/// Offset -1 is passed as its low and high halves, as the kernel reads it.
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[allow(unsafe_code)]
unsafe fn pwritev2(fd: libc::c_int, iov: *const libc::iovec, count: libc::c_int, flags: libc::c_int) -> isize {
    let offset: libc::c_long = -1;
    // SAFETY: the caller's promise, passed on; the arguments are those of the call.
    unsafe { libc::syscall(libc::SYS_pwritev2, fd, iov, count, offset, offset, flags) as isize }
}

/// A write with SIGPIPE blocked on this thread around it (see [`write_nosigpipe`]).
fn writev_masked(fd: std::os::fd::BorrowedFd<'_>, bufs: &[std::io::IoSlice<'_>]) -> nix::Result<usize> {
    let mut set = SigSet::empty();
    set.add(Signal::SIGPIPE);
    let mut old = SigSet::empty();
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut old));
    let result = writev(fd, bufs);
    if !old.contains(Signal::SIGPIPE) {
        if result == Err(Errno::EPIPE) {
            take_pending_sigpipe(&set);
        }
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None);
    }
    result
}

/// Accepts a pending SIGPIPE of this thread, if there is one, without waiting.
fn take_pending_sigpipe(set: &SigSet) {
    let zero = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    #[allow(unsafe_code)]
    // SAFETY: sigtimedwait reads a valid signal set and timeout, and writes no
    // siginfo (NULL); with a zero timeout it never blocks.
    unsafe {
        libc::sigtimedwait(set.as_ref(), std::ptr::null_mut(), &zero);
    }
}

/// Sends `sig` to the process group `pgid`. Errors (group gone) are ignored.
pub fn signal_group(pgid: u32, sig: Signal) {
    if let Ok(pid) = i32::try_from(pgid) {
        if pid > 1 {
            let _ = killpg(Pid::from_raw(pid), sig);
        }
    }
}

pub use nix::sys::signal::Signal as Sig;

/// The events a caller's thread may wait for on a descriptor.
pub use nix::poll::PollFlags;

/// A descriptor a caller's thread may wait on, and its raw number.
pub use std::os::fd::{BorrowedFd, RawFd};

/// A descriptor registered with the runtime's reactor.
#[cfg(target_os = "linux")]
pub type Watched<T> = tokio::io::unix::AsyncFd<T>;

/// Makes a spawned server start with no blocked signals, whatever the host's
/// thread had blocked (a host that handles Ctrl-C on a sigwait thread blocks
/// SIGINT and SIGTERM, and a child would inherit that and ignore our SIGTERM).
pub fn unblock_signals_in_child(cmd: &mut tokio::process::Command) {
    #[allow(unsafe_code)]
    // SAFETY: the closure runs in the child between fork and exec, and only calls
    // sigprocmask, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)
                .map_err(std::io::Error::from)
        });
    }
}

/// Reads from `fd` into the unfilled part of `buf` (memory not initialized yet, so
/// it is not zeroed first) and marks what was read filled. Retries on EINTR.
#[cfg(target_os = "linux")]
pub fn read_into(fd: std::os::fd::BorrowedFd<'_>, buf: &mut tokio::io::ReadBuf<'_>) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        #[allow(unsafe_code)]
        // SAFETY: read(2) writes at most `unfilled.len()` bytes into memory the
        // ReadBuf owns; only the `n` bytes the kernel reports written are then
        // marked initialized and filled.
        let n = unsafe {
            let unfilled = buf.unfilled_mut();
            let n = libc::read(fd.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len());
            if n > 0 {
                buf.assume_init(n as usize);
            }
            n
        };
        if n >= 0 {
            buf.advance(n as usize);
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Sends on a connected socket (Linux's driven socket). A peer that has gone gives
/// EPIPE, never SIGPIPE: the send may run on a host's thread (a blocked caller's),
/// where SIGPIPE would end the process. Retries on EINTR.
#[cfg(target_os = "linux")]
pub fn send_nosignal(fd: std::os::fd::BorrowedFd<'_>, bufs: &[std::io::IoSlice<'_>]) -> std::io::Result<usize> {
    use nix::sys::socket::{sendmsg, MsgFlags};
    use std::os::fd::AsRawFd;
    loop {
        match sendmsg::<()>(fd.as_raw_fd(), bufs, &[], MsgFlags::MSG_NOSIGNAL, None) {
            Err(nix::errno::Errno::EINTR) => continue,
            other => return other.map_err(std::io::Error::from),
        }
    }
}

/// Registers a socket with the runtime's reactor (read and write interest). On
/// failure, gives the socket back with the error. Call inside the runtime.
#[cfg(target_os = "linux")]
pub fn watch(sock: std::net::TcpStream) -> Result<Watched<std::net::TcpStream>, (std::io::Error, std::net::TcpStream)> {
    use tokio::io::{unix::AsyncFd, Interest};
    #[allow(unsafe_code)]
    // SAFETY: the AsyncFd owns the stream, whose descriptor stays open and the same
    // for as long as the stream lives.
    let watched = unsafe { AsyncFd::register_with_interest(sock, Interest::READABLE | Interest::WRITABLE) };
    watched.map_err(|e| {
        let (sock, err) = e.into_parts();
        (err, sock)
    })
}

/// True when `fd` has something to read, its end included, right now (a poll that
/// does not wait). An error says true too: the read that follows finds it.
#[cfg(target_os = "linux")]
pub fn has_input(fd: std::os::fd::RawFd) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    #[allow(unsafe_code)]
    // SAFETY: the caller's fd is open for the call (the connection that owns it
    // is held by the caller).
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    !matches!(poll(&mut fds, PollTimeout::ZERO), Ok(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler};
    use std::io::IoSlice;
    use std::os::fd::AsFd;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static SIGPIPES: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn count(_: libc::c_int) {
        SIGPIPES.fetch_add(1, Ordering::SeqCst);
    }

    fn mask() -> SigSet {
        let mut now = SigSet::empty();
        pthread_sigmask(SigmaskHow::SIG_BLOCK, None, Some(&mut now)).unwrap();
        now
    }

    /// A write to a pipe whose reader has gone fails with EPIPE, raises no SIGPIPE
    /// on a host's thread and leaves its mask as it was: with `RWF_NOSIGNAL` where
    /// the kernel has it, and with SIGPIPE blocked around the write (both run).
    #[test]
    fn a_write_to_a_closed_pipe_raises_no_sigpipe() {
        // Counted rather than ignored (as the test harness has it), so that one let
        // through shows.
        let counting = SigAction::new(SigHandler::Handler(count), SaFlags::empty(), SigSet::empty());
        #[allow(unsafe_code)]
        // SAFETY: the handler only adds to an atomic.
        let before = unsafe { sigaction(Signal::SIGPIPE, &counting) }.unwrap();
        let bufs = [IoSlice::new(b"x"), IoSlice::new(b"y")];
        let unread = || {
            let (r, w) = nix::unistd::pipe().unwrap();
            drop(r);
            w
        };
        let mask_before = mask();
        assert_eq!(writev_nosigpipe(unread().as_fd(), &bufs), Err(Errno::EPIPE));
        assert_eq!(writev_masked(unread().as_fd(), &bufs[..1]), Err(Errno::EPIPE));
        assert_eq!(mask(), mask_before);
        assert_eq!(SIGPIPES.load(Ordering::SeqCst), 0);
        // A plain write does raise one here, so the count above can fail.
        assert_eq!(writev(unread().as_fd(), &bufs), Err(Errno::EPIPE));
        assert_eq!(SIGPIPES.load(Ordering::SeqCst), 1);
        #[allow(unsafe_code)]
        // SAFETY: puts back the action the process had.
        unsafe { sigaction(Signal::SIGPIPE, &before) }.unwrap();
    }
}
