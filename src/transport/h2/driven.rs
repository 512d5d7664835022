//! The connection's future and its streams ([`super::exchange`]), polled by its
//! task on the runtime or, on Linux while a caller's thread is blocked on one of
//! its streams, by that thread (the drive model of [`crate::drive`]): a sequential
//! call then reads and writes the socket itself, as over HTTP/1.1, instead of
//! waking the task and being woken by it.
//!
//! One caller's thread at a time may claim the connection; while it holds the
//! claim, it alone polls the connection and the task stays asleep (the wakes that
//! would reach the task are dropped). The socket follows its poller
//! (`drive::socket::Tcp` leaves the reactor on a caller's thread and joins it
//! again on the runtime), so a claim ends by waking the task, which polls again
//! and from then on is woken by the reactor and the other streams; except when the
//! claim's stream ended cleanly and no other stream is open: then the connection
//! is parked, outside the reactor and unpolled, until the next request (or the
//! client's end) takes it up again, polling it first for what the server sent
//! meanwhile (as HTTP/1.1 rechecks a kept-alive connection). A sequential call so
//! wakes no runtime thread at all.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError, Weak};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use h2::client::SendRequest;

use super::exchange::{keep_waker, Exchange, Lists, Streams};
use super::gather::{Gather, Io};
use crate::drive::here;

type Conn = h2::client::Connection<Io, Bytes>;

/// The connection and its streams, polled together.
pub struct Actor {
    conn: Pin<Box<Conn>>,
    streams: Streams,
}

type Slot = Option<Actor>;

/// The connection, shared by its task and the callers that drive it.
pub struct Driven {
    /// Locked for one poll at a time, by the task or the claim's holder; neither
    /// waits inside a poll, so a lock is held briefly.
    conn: Mutex<Slot>,
    /// The requests to send and the streams to poll, handed to whoever polls.
    lists: Lists,
    /// Set while the connection is polled: what is handed over meanwhile is taken
    /// in before that poll ends, with no wake.
    busy: AtomicBool,
    /// The client no longer hands the connection out: its handle for requests goes.
    retiring: AtomicBool,
    /// The claim's holder's waker, for what other threads hand over meanwhile.
    claim_waker: Mutex<Option<Waker>>,
    /// The caller's thread that holds the claim ([`thread_number`]), 0 while none
    /// does. Another request of that thread, made while its claimed reply is
    /// kept, polls the connection too, as the claim's holder is not polled
    /// meanwhile.
    claimer: AtomicU64,
    /// The requests under way and whether the connection is parked, changed
    /// together so that a request that starts as a claim ends either finds the
    /// connection parked or keeps it from being parked.
    book: Mutex<Book>,
    /// The socket's recheck flag: its next read tries the socket whatever is
    /// known of it (set when a parked connection is taken up again).
    recheck: Arc<AtomicBool>,
    /// The task's waker, set before it looks at `claimer`, so that the end of a
    /// claim always finds it.
    task: Mutex<Option<Waker>>,
    /// The waker the connection is polled with, by the task or a claim's holder:
    /// it notes that h2 wants another poll (a frame queued, say) and has the
    /// connection polled ([`Driven::wake_poller`]).
    task_wake: Waker,
    /// Set by `task_wake`: the poll under way polls the connection again.
    repoll: AtomicBool,
    /// The socket's kept writes ([`Io`]), flushed before a poll ends.
    gather: Arc<Gather>,
    /// The socket, whose wait a caller's thread forgets when its claim ends: the
    /// stream is the connection's, not the caller's exchange's, so nothing else
    /// would (the fd lifetime rule, `drive`'s module doc).
    #[cfg(target_os = "linux")]
    fd: std::os::fd::RawFd,
    /// How often the task was polled (tests: sequential calls never wake it).
    #[cfg(test)]
    task_polls: std::sync::atomic::AtomicUsize,
}

#[derive(Default)]
struct Book {
    /// The [`Wait`]s alive: one a request, from its head to its reply's drop.
    open: usize,
    /// Nothing polls the connection and its socket is outside the reactor: the
    /// next request (or [`Driven::retire`]) must take it up.
    parked: bool,
    /// The client no longer hands the connection out (closed, replaced, or the
    /// client gone): it must be polled to its end, so it is never parked again.
    retired: bool,
}

struct TaskWake(Weak<Driven>);

/// The waker h2 holds for one stream.
struct Ready {
    exchange: Weak<Exchange>,
    driven: Weak<Driven>,
}

impl Wake for Ready {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let (Some(ex), Some(d)) = (self.exchange.upgrade(), self.driven.upgrade()) {
            d.ready(ex);
        }
    }
}

impl Wake for TaskWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(d) = self.0.upgrade() {
            d.repoll.store(true, Ordering::SeqCst);
            d.wake_poller();
        }
    }
}

impl Driven {
    /// Starts the connection's task; `send` is its handle for requests.
    pub fn spawn(
        conn: Conn,
        send: SendRequest<Bytes>,
        recheck: Arc<AtomicBool>,
        gather: Arc<Gather>,
        #[cfg(target_os = "linux")] fd: std::os::fd::RawFd,
    ) -> Arc<Driven> {
        let driven = Arc::new_cyclic(|me| Driven {
            conn: Mutex::new(Some(Actor {
                conn: Box::pin(conn),
                streams: Streams::new(send),
            })),
            lists: Lists::default(),
            busy: AtomicBool::new(false),
            retiring: AtomicBool::new(false),
            claim_waker: Mutex::new(None),
            claimer: AtomicU64::new(0),
            book: Mutex::new(Book::default()),
            recheck,
            task: Mutex::new(None),
            task_wake: Waker::from(Arc::new(TaskWake(me.clone()))),
            repoll: AtomicBool::new(false),
            gather,
            #[cfg(target_os = "linux")]
            fd,
            #[cfg(test)]
            task_polls: Default::default(),
        });
        let task = driven.clone();
        crate::drive::runtime::handle().spawn(std::future::poll_fn(move |cx| task.poll_task(cx)));
        driven
    }

    fn poll_task(&self, cx: &mut Context<'_>) -> Poll<()> {
        #[cfg(test)]
        self.task_polls.fetch_add(1, Ordering::SeqCst);
        keep_waker(&mut self.task.lock().unwrap_or_else(|e| e.into_inner()), cx);
        match self.poll_as_task() {
            Some(polled) => polled,
            None => {
                // Another thread has the connection for a moment (taking it up, or
                // about to claim it): polled again, so that the wake that brought
                // the task here is not lost; a claim found then keeps it asleep.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    /// Polls the connection as its task does (with the task's waker), unless a
    /// caller holds the claim; None when another thread holds the connection.
    fn poll_as_task(&self) -> Option<Poll<()>> {
        if self.claimer.load(Ordering::SeqCst) != 0 {
            return Some(Poll::Pending);
        }
        let mut slot = match self.conn.try_lock() {
            Ok(s) => s,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => return None,
        };
        // Claimed between the look above and the lock: the holder polls it now (its
        // claim was set before it locked, so a lock taken after its poll sees it).
        if self.claimer.load(Ordering::SeqCst) != 0 {
            return Some(Poll::Pending);
        }
        Some(self.poll_conn(&mut slot))
    }

    /// A request to go out on this connection, whose stream's waker puts it on
    /// the ready list.
    pub fn exchange(self: &Arc<Self>, req: Arc<http::Request<()>>, body: Bytes) -> Arc<Exchange> {
        let driven = Arc::downgrade(self);
        Exchange::new(req, body, |exchange| Waker::from(Arc::new(Ready { exchange, driven })))
    }

    /// Hands a request to whoever polls the connection; one that has ended tells
    /// the request so at once.
    pub fn submit(&self, ex: &Arc<Exchange>) {
        if self.lists.submit(ex) {
            self.wake_poller();
        }
    }

    /// Puts a stream that has something to do on the ready list (h2's waker for
    /// it, or its request letting go or taking what was held).
    pub fn ready(&self, ex: Arc<Exchange>) {
        if self.lists.push_ready(ex) {
            self.wake_poller();
        }
    }

    /// Has the connection polled: by the poll under way, if one is, else by the
    /// claim's holder or the task. A holder that has not polled yet (no waker) is
    /// about to: it claims before it polls, and takes in the lists when it does.
    fn wake_poller(&self) {
        if self.busy.load(Ordering::SeqCst) {
            return;
        }
        if self.claimer.load(Ordering::SeqCst) != 0 {
            let waker = self.claim_waker.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if let Some(w) = waker {
                w.wake();
            }
            return;
        }
        self.wake_task();
    }

    /// Polls the connection and its streams until neither has anything to do; when
    /// the connection has ended, its streams get their ends and it is dropped.
    fn poll_conn(&self, slot: &mut Slot) -> Poll<()> {
        let Some(actor) = slot.as_mut() else {
            return Poll::Ready(());
        };
        let cx = &mut Context::from_waker(&self.task_wake);
        // What came in is sent before the connection is polled, which then writes
        // it; except on a connection just taken up to be rechecked: what the server
        // sent meanwhile (its end, say) is known before a request goes out on it.
        let mut send_first = !self.recheck.load(Ordering::Relaxed);
        loop {
            self.busy.store(true, Ordering::SeqCst);
            if std::mem::take(&mut send_first) {
                actor.streams.submit(&self.lists, cx);
            }
            self.repoll.store(false, Ordering::SeqCst);
            let mut polled = actor.conn.as_mut().poll(cx);
            if polled.is_pending() && self.gather.held.load(Ordering::Relaxed) {
                // h2 has nothing more to write for now: what it wrote and was kept
                // goes out, by one more poll whose flush writes it.
                self.gather.flushing.store(true, Ordering::Relaxed);
                polled = actor.conn.as_mut().poll(cx);
                self.gather.flushing.store(false, Ordering::Relaxed);
            }
            if let Poll::Ready(r) = polled {
                if let Err(e) = r {
                    log::debug!("an HTTP/2 connection ended: {e}");
                }
                actor.streams.close(&self.lists);
                *slot = None;
                self.busy.store(false, Ordering::SeqCst);
                return Poll::Ready(());
            }
            actor.streams.submit(&self.lists, cx);
            actor.streams.run_ready(&self.lists);
            if self.retiring.load(Ordering::SeqCst) && actor.streams.retire() {
                self.repoll.store(true, Ordering::SeqCst);
            }
            if actor.streams.may_send_more() {
                // A stream ended and made room for one held back.
                continue;
            }
            // Polled again only if h2 asked (a frame queued by what was sent, read
            // or let go): a response taken in asks nothing more of the connection.
            if self.repoll.load(Ordering::SeqCst) {
                continue;
            }
            // Whatever was handed over after the lists were last looked at found
            // the poll under way and woke nobody: taken in here.
            self.busy.store(false, Ordering::SeqCst);
            if !self.lists.pending() && !self.repoll.load(Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
    }

    /// The client no longer hands the connection out (its handle for requests is
    /// gone): a parked connection is taken up, and none is parked from now on, so
    /// that the task polls it to its end (GOAWAY, then closed once its streams end).
    pub fn retire(&self) {
        self.retiring.store(true, Ordering::SeqCst);
        // Seen by a poll under way (which the wake below does not reach) when it
        // looks at `repoll` before it ends.
        self.repoll.store(true, Ordering::SeqCst);
        let parked = {
            let mut book = self.book();
            book.retired = true;
            std::mem::take(&mut book.parked)
        };
        if parked {
            self.wake_task();
        } else {
            self.wake_poller();
        }
    }

    #[cfg(all(test, target_os = "linux"))]
    pub fn is_parked(&self) -> bool {
        self.book().parked
    }

    #[cfg(all(test, target_os = "linux"))]
    pub fn task_polls(&self) -> usize {
        self.task_polls.load(Ordering::SeqCst)
    }

    #[cfg(test)]
    pub fn held_back(&self) -> usize {
        self.lock().as_ref().map_or(0, |a| a.streams.held_back())
    }

    #[cfg(test)]
    pub fn has_ended(&self) -> bool {
        self.lock().is_none()
    }

    #[cfg(test)]
    pub fn live_streams(&self) -> usize {
        self.lock().as_ref().map_or(0, |a| a.streams.live())
    }

    #[cfg(all(test, target_os = "linux"))]
    pub fn driven_by_a_caller(&self) -> bool {
        self.claimer.load(Ordering::SeqCst) != 0
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wake_task(&self) {
        let waker = self.task.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(w) = waker {
            w.wake();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Waits for a stream (its response, its send window, its body), during which a
/// caller's thread may claim the connection and poll it. One wait serves a request
/// from its head to its body's end, so the claim is not given back in between. The
/// claim ends, and the task is woken, when the wait ends: at the body's end, when
/// dropped, or when polled off a caller's thread (moved to the runtime).
pub struct Wait {
    driven: Arc<Driven>,
    claimed: bool,
    /// This request took up a parked connection, to be polled first by this
    /// thread if it claims it (only on Linux, where connections are parked).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    unparked: bool,
    /// The request's body as handed to h2, which lets go of it once it is all
    /// written: until then the connection is not parked. Kept on every thread, and
    /// let go of at the first poll that finds h2 done with it, so that its memory
    /// is freed here rather than by the poller (see
    /// [`exchange::request_for`](super::exchange::request_for)), and not held for
    /// the rest of a long response.
    body: Option<Bytes>,
}

impl Wait {
    /// A request's wait, counted as under way until dropped. A request that finds
    /// the connection parked takes it up: a caller's thread claims it and polls it
    /// first (see [`poll`](Self::poll)); any other polls it once as the task,
    /// which then drives it.
    pub fn new(driven: Arc<Driven>) -> Wait {
        let unparked = {
            let mut book = driven.book();
            book.open += 1;
            std::mem::take(&mut book.parked)
        };
        let mut wait = Wait {
            driven,
            claimed: false,
            unparked: false,
            body: None,
        };
        if unparked {
            // Whoever takes up a parked connection sees that it is driven: a
            // caller's thread by claiming it at once (a claim taken later could
            // find another's), anything else by polling it as the task.
            let here = cfg!(target_os = "linux") && here::polling();
            if here && wait.try_claim() {
                wait.unparked = true;
            } else {
                wait.driven.recheck.store(true, Ordering::Relaxed);
                if here {
                    wait.driven.wake_task();
                } else {
                    let _ = wait.driven.poll_as_task();
                }
            }
        }
        wait
    }

    /// Keeps a handle on the request's body (see the field).
    pub fn keep_body(&mut self, body: &Bytes) {
        self.body = Some(body.clone());
    }

    /// Claims the connection for this caller's thread, if it is one and no other
    /// holds the claim. Taken before a request goes out, it keeps the request's
    /// wake from reaching the task. Only on Linux, where a caller's thread waits on
    /// a socket itself; elsewhere the task drives every stream.
    pub fn claim(&mut self) {
        if cfg!(target_os = "linux") && !self.claimed && here::polling() {
            self.try_claim();
        }
    }

    /// Claims the connection if no other wait holds the claim.
    fn try_claim(&mut self) -> bool {
        self.claimed = self
            .driven
            .claimer
            .compare_exchange(0, thread_number(), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok();
        self.claimed
    }

    /// Polls `inner` and, while it waits on a caller's thread holding the claim,
    /// the connection too.
    pub fn poll<T>(&mut self, cx: &mut Context<'_>, mut inner: impl FnMut(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
        if self.body.as_ref().is_some_and(Bytes::is_unique) {
            self.body = None;
        }
        if !here::polling() {
            // Moved to the runtime: the task drives from now on.
            self.end();
            return inner(cx);
        }
        #[cfg(target_os = "linux")]
        if std::mem::take(&mut self.unparked) && self.claimed {
            // What the server sent while the connection was parked (a GOAWAY, its
            // end) is read before this request goes out. Looked for only while the
            // connection (and so its socket) is there.
            let mut slot = self.driven.lock();
            if slot.is_some() && crate::sys::has_input(self.driven.fd) {
                self.driven.recheck.store(true, Ordering::Relaxed);
                let _ = self.driven.poll_conn(&mut slot);
            }
        }
        if let Poll::Ready(v) = inner(cx) {
            return Poll::Ready(v);
        }
        self.claim();
        // This wait's claim, or its thread's in a reply it keeps.
        if self.driven.claimer.load(Ordering::SeqCst) != thread_number() {
            // Another caller or the task drives: the stream wakes this thread.
            return Poll::Pending;
        }
        keep_waker(
            &mut self.driven.claim_waker.lock().unwrap_or_else(|e| e.into_inner()),
            cx,
        );
        let _ = self.driven.poll_conn(&mut self.driven.lock());
        inner(cx)
    }

    /// Ends the claim, if this wait holds it: the task drives from now on.
    pub fn end(&mut self) {
        self.end_claim(false);
    }

    /// Ends the claim at the response body's end. When the request's body is all
    /// written and no other request is under way, the connection has nothing to
    /// do until the next request: it is parked rather than handed to the task.
    pub fn finish(&mut self) {
        let written = self.body.take().map_or(true, |b| b.is_unique());
        self.end_claim(written);
    }

    fn end_claim(&mut self, may_park: bool) {
        if !std::mem::take(&mut self.claimed) {
            return;
        }
        #[cfg(target_os = "linux")]
        here::forget_wait(self.driven.fd);
        // Only the claim's holder polls the connection, so whether it is still
        // there cannot change before the claim is given up below.
        let alive = may_park && self.driven.lock().is_some();
        *self.driven.claim_waker.lock().unwrap_or_else(|e| e.into_inner()) = None;
        {
            let mut book = self.driven.book();
            self.driven.claimer.store(0, Ordering::SeqCst);
            // Something handed over that found the claim held and woke nobody (a
            // reply let go of just before its wait ended, say) keeps it unparked.
            // Nor is one that keeps gathered writes (a server may end its answer
            // before the request's body has all gone): the task writes them.
            let held = self.driven.gather.held.load(Ordering::Relaxed);
            if alive && book.open == 1 && !book.retired && !held && !self.driven.lists.pending() {
                book.parked = true;
                return;
            }
        }
        // Polled by the task from now on; one that has ended ends the task.
        self.driven.wake_task();
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        self.end();
        self.driven.book().open -= 1;
    }
}

/// A number for this thread, never 0 and never reused in the process.
fn thread_number() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static NUMBER: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    NUMBER.with(|n| *n)
}
