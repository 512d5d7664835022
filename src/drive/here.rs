//! The caller's executor: a caller blocked in a call runs its request's exchange on
//! its own thread. The request is written and its response read and delivered there,
//! with no hand-off to a runtime thread and back (see [`super::block_on_driven`]).
//! Only a response is delivered there; anything else (a notification, a server
//! request, whose callbacks are the host's code) moves the exchange to the runtime.
//! So does whatever is left of it when the call ends (an SSE stream still open, say).
//! Sockets ([`super::socket`]) report here what they would wait for.
//!
//! A transport names itself by an [`Owner`]; it stashes an exchange here and gets
//! back what must move to the runtime, so this layer never calls the transport.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::park::Parker;
use super::BoxFuture;
// A socket's descriptor under one name on every platform; only Linux's driven
// socket (`super::socket`) notes waits here.
use crate::sys::{BorrowedFd, PollFlags, RawFd};

/// A request's whole exchange, as one future.
pub type Exchange = BoxFuture<'static, ()>;

/// Which transport a claim or an exchange belongs to: the address of its shared
/// state, compared and never dereferenced.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Owner(usize);

impl Owner {
    pub fn of<T>(shared: &Arc<T>) -> Owner {
        Owner(Arc::as_ptr(shared) as *const () as usize)
    }
}

/// An exchange a transport must now spawn on the runtime, with its request id.
pub type Moved = (i64, Exchange);

struct Claim {
    /// The transport it is for.
    owner: Owner,
    waker: Waker,
    /// The request and its exchange, until done or moved to the runtime.
    task: Option<(i64, Exchange)>,
}

/// This thread's part in running exchanges, but its claim: one thread-local,
/// as on a caller's thread each access to a thread-local costs a call into the
/// dynamic loader (`__tls_get_addr`, in a shared library), and one that several
/// fields share is found once per function. (No field needs dropping: with one,
/// each access would check first whether its destructor is registered.)
struct Here {
    /// True while this thread polls a claimed exchange.
    polling: Cell<bool>,
    /// Set by an exchange that must move to the runtime.
    moving: Cell<bool>,
    /// The socket the exchange waits for, and whether to read (else write).
    wait: Cell<Option<(RawFd, Dirs)>>,
    /// The socket (and directions) that ended the last wait.
    woke: Cell<Option<(RawFd, Dirs)>>,
}

thread_local! {
    static CLAIM: RefCell<Option<Claim>> = const { RefCell::new(None) };
    static HERE: Here = const {
        Here {
            polling: Cell::new(false),
            moving: Cell::new(false),
            wait: Cell::new(None),
            woke: Cell::new(None),
        }
    };
}

/// The directions a socket waits for: [`READ`], [`WRITE`] or both.
type Dirs = u8;
const READ: Dirs = 1;
const WRITE: Dirs = 2;

#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
fn dir(read: bool) -> Dirs {
    if read {
        READ
    } else {
        WRITE
    }
}

/// What a socket waits for, as `poll` flags.
fn events(dirs: Dirs) -> PollFlags {
    match dirs {
        READ => PollFlags::POLLIN,
        WRITE => PollFlags::POLLOUT,
        #[cfg(target_os = "linux")]
        _ => PollFlags::POLLIN | PollFlags::POLLOUT,
        // Off Linux no caller's thread waits on a socket itself.
        #[cfg(not(target_os = "linux"))]
        _ => PollFlags::POLLIN,
    }
}

/// Called by a socket that would block, polled by a caller's thread: the thread
/// may wait on `fd` itself (readable if `read`, else writable). A connection that
/// would block both ways in one poll (HTTP/2's reads, then its writes) waits for
/// either, so that a blocked write never keeps it from reading.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
pub fn note_wait(fd: RawFd, read: bool) {
    if HERE.with(|h| h.polling.get()) {
        HERE.with(|h| {
            let dirs = match h.wait.get() {
                Some((w, d)) if w == fd => d | dir(read),
                _ => dir(read),
            };
            h.wait.set(Some((fd, dirs)));
        });
    }
}

/// Called by a socket that would block, polled by a caller's thread, when its
/// reader or writer has nothing else to do meanwhile: waits for `fd` (readable
/// if `read`, else writable) right there, unless something else has woken the
/// exchange or does meanwhile (a timer, a cancel, the response delivered). True
/// if the socket ended the wait: then the socket is tried again at once, and the
/// exchange goes on in the same poll. Otherwise the socket notes its wait
/// ([`note_wait`]) and the exchange pends as usual.
///
/// Waiting in place saves the exchange's return to [`run`] and its poll down to
/// the socket again, once a response.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
pub fn wait_in_place(fd: BorrowedFd<'_>, read: bool) -> bool {
    if !HERE.with(|h| h.polling.get()) {
        return false;
    }
    Parker::with_current(|parker| {
        parker.wait_for(Some((fd, events(dir(read)))));
        !parker.is_notified()
    })
    .unwrap_or(false)
}

/// True, once for each direction, after this thread was woken by socket `fd`,
/// which it waited on (to read if `read`, else to write; a wait for both may have
/// ended by either, so both are tried).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
pub fn woken_by(fd: RawFd, read: bool) -> bool {
    HERE.with(|h| match h.woke.get() {
        None => false,
        // The usual case: the one direction waited for.
        Some(w) if w == (fd, dir(read)) => {
            h.woke.set(None);
            true
        }
        Some((w, d)) if w == fd && d == READ | WRITE => {
            h.woke.set(Some((fd, d & !dir(read))));
            true
        }
        Some(_) => false,
    })
}

/// Called when the socket `fd` is closed or leaves its exchange: no wait on it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))] // the caller's fast path is Linux's alone
pub fn forget_wait(fd: RawFd) {
    if HERE.with(|h| h.wait.get()).is_some_and(|(w, _)| w == fd) {
        HERE.with(|h| h.wait.set(None));
    }
    if HERE.with(|h| h.woke.get()).is_some_and(|(w, _)| w == fd) {
        HERE.with(|h| h.woke.set(None));
    }
}

/// Reserves the next exchange that `owner` stashes for this thread, blocked in a
/// call with `parker`. False if `parker` is not this thread's own.
pub fn claim(owner: Owner, parker: &Parker) -> bool {
    let Some(arc) = Parker::current().filter(|p| std::ptr::eq(&**p, parker)) else {
        return false;
    };
    HERE.with(|h| h.woke.set(None));
    CLAIM.with(|c| {
        *c.borrow_mut() = Some(Claim {
            owner,
            waker: Waker::from(arc),
            task: None,
        })
    });
    true
}

/// Keeps request `id`'s exchange for this thread to run, if it holds a claim on
/// this transport with no exchange yet; otherwise gives it back.
pub fn stash(owner: Owner, id: i64, task: Exchange) -> Option<Exchange> {
    CLAIM.with(|c| match c.borrow_mut().as_mut() {
        Some(claim) if claim.owner == owner && claim.task.is_none() && !HERE.with(|h| h.polling.get()) => {
            claim.task = Some((id, task));
            None
        }
        _ => Some(task),
    })
}

fn take(owner: Owner) -> Option<(i64, Exchange)> {
    CLAIM.with(|c| {
        c.borrow_mut()
            .as_mut()
            .filter(|claim| claim.owner == owner)
            .and_then(|claim| claim.task.take())
    })
}

/// What [`run`] did.
pub enum Ran {
    /// This thread held no exchange of the owner's: it did not wait.
    Nothing,
    /// It polled the exchange, and waited if it was not done.
    Waited,
    /// The exchange must go on on the runtime: the owner spawns it.
    Move(Moved),
}

/// Polls the stashed exchange, then sleeps until woken if it is not done.
pub fn run(owner: Owner, parker: &Parker) -> Ran {
    let Some((id, mut task)) = take(owner) else {
        return Ran::Nothing;
    };
    let waker = CLAIM.with(|c| c.borrow().as_ref().map(|claim| claim.waker.clone()));
    let Some(waker) = waker else { return Ran::Nothing };
    let (polled, wait) = poll_here(task.as_mut(), &waker);
    if polled.is_ready() {
        return Ran::Waited;
    }
    if HERE.with(|h| h.moving.replace(false)) {
        return Ran::Move((id, task));
    }
    CLAIM.with(|c| {
        if let Some(claim) = c.borrow_mut().as_mut() {
            claim.task = Some((id, task));
        }
    });
    wait_here(parker, wait);
    Ran::Waited
}

/// Polls `fut` as this thread's own exchange: what the socket would wait for comes
/// back with the result.
fn poll_here<F: Future + ?Sized>(fut: Pin<&mut F>, waker: &Waker) -> (Poll<F::Output>, Option<(RawFd, Dirs)>) {
    struct Polling;
    impl Drop for Polling {
        // Also when the poll panics: the thread is not polling any more.
        fn drop(&mut self) {
            HERE.with(|h| h.polling.set(false));
            HERE.with(|h| h.woke.set(None));
        }
    }
    HERE.with(|h| h.polling.set(true));
    HERE.with(|h| h.wait.set(None));
    let polling = Polling;
    let polled = fut.poll(&mut Context::from_waker(waker));
    drop(polling);
    (polled, HERE.with(|h| h.wait.take()))
}

/// Sleeps until woken, or until the socket the exchange waits for is ready.
/// `wait` must come from [`poll_here`] of a future this thread still holds.
fn wait_here(parker: &Parker, wait: Option<(RawFd, Dirs)>) {
    #[allow(unsafe_code)]
    // SAFETY: the socket belongs to a connection that the polled future (held
    // by this thread until the wait ends) owns: a connection that is dropped or
    // put back in the pool forgets its note first.
    let fd = wait.map(|(fd, dirs)| (unsafe { BorrowedFd::borrow_raw(fd) }, events(dirs)));
    parker.wait_for(fd);
    if !parker.is_notified() {
        HERE.with(|h| h.woke.set(wait));
    }
}

/// Runs `fut` to its end on this thread as a caller's exchange runs (for tests).
#[cfg(test)]
pub fn block_here<F: Future>(fut: F) -> F::Output {
    let parker = Parker::current().expect("eventfd");
    let waker = Waker::from(parker.clone());
    let _runtime = super::runtime::handle().enter();
    let mut fut = std::pin::pin!(fut);
    loop {
        parker.reset();
        let (polled, wait) = poll_here(fut.as_mut(), &waker);
        if let Poll::Ready(out) = polled {
            return out;
        }
        wait_here(&parker, wait);
    }
}

/// True while a caller's thread polls its exchange.
pub fn polling() -> bool {
    HERE.with(|h| h.polling.get())
}

/// On a caller's thread, pends once and has the exchange moved to the runtime;
/// elsewhere, ready at once.
pub async fn to_runtime() {
    std::future::poll_fn(|_| {
        if HERE.with(|h| h.polling.get()) {
            HERE.with(|h| h.moving.set(true));
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await
}

/// Drops request `id`'s exchange if this thread holds it (the call was abandoned).
pub fn drop_stashed(owner: Owner, id: i64) -> bool {
    let task = CLAIM.with(|c| {
        let mut c = c.borrow_mut();
        let claim = c.as_mut().filter(|claim| claim.owner == owner)?;
        match &claim.task {
            Some((held, _)) if *held == id => claim.task.take(),
            _ => None,
        }
    });
    task.is_some()
}

/// Ends the claim; an exchange not done yet comes back, for the owner to spawn.
pub fn release(owner: Owner) -> Option<Moved> {
    let claim = CLAIM.with(|c| {
        let mut c = c.borrow_mut();
        match c.as_ref() {
            Some(claim) if claim.owner == owner => c.take(),
            _ => None,
        }
    });
    claim.and_then(|c| c.task)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A connection that would block both ways in one poll waits for either, and a
    /// wake-up lets each direction try again once.
    #[test]
    fn a_wait_both_ways_is_one_wait_for_either() {
        HERE.with(|h| h.polling.set(true));
        HERE.with(|h| h.wait.set(None));
        note_wait(7, true);
        note_wait(7, false);
        assert_eq!(HERE.with(|h| h.wait.get()), Some((7, READ | WRITE)));
        assert_eq!(events(READ | WRITE), PollFlags::POLLIN | PollFlags::POLLOUT);
        // Another socket's wait replaces it.
        note_wait(8, true);
        assert_eq!(HERE.with(|h| h.wait.get()), Some((8, READ)));
        HERE.with(|h| h.woke.set(Some((7, READ | WRITE))));
        assert!(!woken_by(8, true));
        assert!(woken_by(7, false));
        assert!(woken_by(7, true));
        assert!(!woken_by(7, true), "once each");
        HERE.with(|h| h.woke.set(Some((7, READ))));
        assert!(!woken_by(7, false));
        assert!(woken_by(7, true));
        HERE.with(|h| h.polling.set(false));
        HERE.with(|h| h.wait.set(None));
    }
}
