//! Parking a caller's thread during a blocking call, so that it can sleep on more
//! than its own wake-up: a [`Parker`] also waits on a file descriptor (the stdio
//! transport's pipe), which lets the caller's thread read its own response instead
//! of being woken by another thread that read it (one cross-thread wake-up less per
//! call, the largest cost of a sequential call).
//!
//! That wait on a descriptor is Linux's (an eventfd and `poll`). Elsewhere the
//! parker parks its thread and waits on nothing else, and no caller asks it to:
//! the transports there offer no caller's fast path (ARCHITECTURE.md).

use std::sync::Arc;
use std::task::Wake;

use crate::sync::{AtomicU8, Ordering};
use crate::sys::{BorrowedFd, PollFlags};

const EMPTY: u8 = 0;
const PARKED: u8 = 1;
const NOTIFIED: u8 = 2;

thread_local! {
    static PARKER: Option<Arc<Parker>> = Parker::new();
}

/// One thread's wake-up: an eventfd, written only when the thread actually sleeps.
/// Used as the waker of the future the thread blocks on.
pub struct Parker {
    #[cfg(all(not(mcpc_loom), target_os = "linux"))]
    efd: nix::sys::eventfd::EventFd,
    /// Elsewhere, the thread itself, unparked to wake it.
    #[cfg(all(not(mcpc_loom), not(target_os = "linux")))]
    efd: std::thread::Thread,
    #[cfg(mcpc_loom)]
    efd: crate::sync::ModelEventFd,
    state: AtomicU8,
}

impl Parker {
    fn new() -> Option<Arc<Parker>> {
        #[cfg(all(not(mcpc_loom), target_os = "linux"))]
        let efd = {
            use nix::sys::eventfd::{EfdFlags, EventFd};
            EventFd::from_value_and_flags(0, EfdFlags::EFD_NONBLOCK | EfdFlags::EFD_CLOEXEC).ok()?
        };
        #[cfg(all(not(mcpc_loom), not(target_os = "linux")))]
        let efd = std::thread::current();
        #[cfg(mcpc_loom)]
        let efd = crate::sync::ModelEventFd::new();
        Some(Arc::new(Parker {
            efd,
            state: AtomicU8::new(EMPTY),
        }))
    }

    /// This thread's parker, made on first use; `None` if the system refused an eventfd.
    pub fn current() -> Option<Arc<Parker>> {
        PARKER.with(Clone::clone)
    }

    /// Runs `f` with this thread's parker; `None` (and `f` not run) if the system
    /// refused an eventfd. Unlike [`current`](Self::current), takes no reference.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
    pub fn with_current<T>(f: impl FnOnce(&Parker) -> T) -> Option<T> {
        PARKER.with(|p| p.as_deref().map(f))
    }

    /// Forgets an earlier wake-up: called before the future is polled again.
    pub fn reset(&self) {
        self.state.store(EMPTY, Ordering::Release);
    }

    /// True once woken since the last [`reset`](Self::reset).
    pub fn is_notified(&self) -> bool {
        self.state.load(Ordering::Acquire) == NOTIFIED
    }

    /// Sleeps until woken, or until `fd` (if any) is readable or closed. Returns at
    /// once when already woken. May return spuriously: callers check and loop.
    pub fn wait(&self, fd: Option<BorrowedFd<'_>>) {
        self.wait_for(fd.map(|fd| (fd, PollFlags::POLLIN)));
    }

    /// As [`wait`](Self::wait), for the given events on `fd`.
    pub fn wait_for(&self, fd: Option<(BorrowedFd<'_>, PollFlags)>) {
        if self
            .state
            .compare_exchange(EMPTY, PARKED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        self.sleep(fd);
        // Still PARKED: woken by `fd`, not by the waker.
        let _ = self
            .state
            .compare_exchange(PARKED, EMPTY, Ordering::AcqRel, Ordering::Acquire);
    }

    /// Sleeps on the eventfd and `fd` until either is readable.
    #[cfg(all(not(mcpc_loom), target_os = "linux"))]
    fn sleep(&self, fd: Option<(BorrowedFd<'_>, PollFlags)>) {
        use nix::poll::{poll, PollFd, PollTimeout};
        use std::os::fd::AsFd;
        let mut fds = [PollFd::new(self.efd.as_fd(), PollFlags::POLLIN)];
        let mut both;
        let fds: &mut [PollFd<'_>] = match fd {
            Some((fd, events)) => {
                both = [fds[0], PollFd::new(fd, events)];
                &mut both
            }
            None => &mut fds,
        };
        // EINTR is a spurious return like any other.
        let _ = poll(fds, PollTimeout::NONE);
        if fds[0].any().unwrap_or(false) {
            let _ = self.efd.read();
        }
    }

    /// Parks the thread until unparked. No descriptor is waited on here (nobody
    /// asks, see the module doc): given one, it returns at once, spuriously.
    #[cfg(all(not(mcpc_loom), not(target_os = "linux")))]
    fn sleep(&self, fd: Option<(BorrowedFd<'_>, PollFlags)>) {
        if fd.is_none() {
            std::thread::park();
        }
    }

    /// The model's sleep: on the eventfd alone (the models wait on no other fd).
    #[cfg(mcpc_loom)]
    fn sleep(&self, fd: Option<(BorrowedFd<'_>, PollFlags)>) {
        assert!(fd.is_none(), "the loom models wait on the eventfd alone");
        self.efd.wait_and_read();
    }

    fn unpark(&self) {
        if self.state.swap(NOTIFIED, Ordering::AcqRel) == PARKED {
            #[cfg(any(mcpc_loom, target_os = "linux"))]
            let _ = self.efd.write(1);
            #[cfg(all(not(mcpc_loom), not(target_os = "linux")))]
            self.efd.unpark();
        }
    }
}

impl Wake for Parker {
    fn wake(self: Arc<Self>) {
        self.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.unpark();
    }
}

/// Model checks (`make loom`): a wake-up racing the sleep is never lost, in every
/// interleaving.
#[cfg(all(test, mcpc_loom))]
mod loom_models {
    use super::*;

    #[test]
    fn loom_a_wake_racing_the_sleep_is_never_lost() {
        loom::model(|| {
            let p = Parker::new().expect("the model's eventfd");
            p.reset();
            let waker = std::task::Waker::from(p.clone());
            let t = loom::thread::spawn(move || waker.wake());
            // A caller's loop: sleep until woken (a lost wake-up deadlocks, which
            // loom reports).
            while !p.is_notified() {
                p.wait(None);
            }
            t.join().unwrap();
            assert!(p.is_notified());
        });
    }

    #[test]
    fn loom_a_reset_after_the_wake_waits_for_the_next() {
        loom::model(|| {
            let p = Parker::new().expect("the model's eventfd");
            let first = std::task::Waker::from(p.clone());
            first.wake_by_ref();
            p.wait(None);
            assert!(p.is_notified());
            // The next round: a wake from another thread ends the next wait.
            p.reset();
            let t = loom::thread::spawn(move || first.wake());
            while !p.is_notified() {
                p.wait(None);
            }
            t.join().unwrap();
        });
    }
}

#[cfg(all(test, not(mcpc_loom), target_os = "linux"))]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use std::time::Duration;

    #[test]
    fn wakes_from_another_thread_and_from_a_readable_fd() {
        let p = Parker::current().expect("eventfd");
        let waker = std::task::Waker::from(p.clone());
        p.reset();
        let t = std::thread::spawn(move || {
            // Likely lets the other thread fall asleep first; the test holds either way.
            std::thread::sleep(Duration::from_millis(20));
            waker.wake();
        });
        while !p.is_notified() {
            p.wait(None);
        }
        t.join().unwrap();

        p.reset();
        let (r, w) = nix::unistd::pipe().unwrap();
        nix::unistd::write(&w, b"x").unwrap();
        p.wait(Some(r.as_fd()));
        assert!(!p.is_notified(), "woken by the fd, not by the waker");

        // A wake-up before the wait is not lost.
        p.reset();
        std::task::Waker::from(p.clone()).wake_by_ref();
        p.wait(None);
        assert!(p.is_notified());
    }
}
