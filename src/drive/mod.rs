//! The drive model: a caller's thread blocked in a call drives its own I/O.
//!
//! A sequential call's largest cost is the hand-off between threads: the runtime's
//! thread reads the response and wakes the caller's. So a caller blocked in a call
//! polls its own future ([`block_on_driven`]) and, where its transport lets it,
//! reads and writes the transport's descriptor itself. Everything that makes that
//! safe lives here: the runtime ([`runtime`]), the parker a caller sleeps on
//! ([`park`]), the caller's executor for HTTP exchanges ([`here`]) and the socket
//! that moves between the caller and the reactor ([`socket`]). Transports use these;
//! nothing here knows a transport.
//!
//! The contract:
//! - **Who may poll.** A future is polled by the runtime, or by the one caller's
//!   thread blocked on it in [`block_on_driven`]. A transport's [`Drive`] says what
//!   that thread may do meanwhile: `claim` (before the request goes out) reserves
//!   the read side for it, `drive` waits there doing the reading, `release` gives
//!   it back. A claim is per thread, never shared; a second caller finds the read
//!   side taken and waits on its parker like any task.
//! - **Why a blocking wait inside `poll` is allowed.** Only on a caller's thread
//!   that polls its own exchange ([`here::wait_in_place`]): that thread has nothing
//!   else to run, and its parker's eventfd is in the same `poll`, so a wake-up (a
//!   timer, a cancel, the response delivered by someone else) ends the wait. The
//!   runtime's threads never wait inside `poll`.
//! - **The fd lifetime rule.** A caller's thread waits on a socket it names by its
//!   raw descriptor ([`here`]) only while the future that owns the socket is held by
//!   that thread. A [`socket::Tcp`] forgets any wait on its descriptor when it is
//!   dropped or leaves its exchange ([`socket::Tcp::leave_exchange`], before it
//!   goes back to a pool), so the descriptor cannot be closed or reused under a
//!   wait. Both halves of the argument are in this module.
//! - **How the reader takes the pipe back.** A stdio transport's reader task and a
//!   caller's thread take turns at the pipe under one flag; the caller delivers
//!   only responses and leaves anything else, in order, to the reader task, which a
//!   re-arm task always wakes again once the pipe is free (transport::stdio).
//! - **Moving to the runtime.** Whatever a caller's thread has not finished when its
//!   call ends (an SSE stream still open, a server request whose callback is the
//!   host's code) goes to the runtime: [`here::release`] and [`here::Ran::Move`]
//!   hand it back to its transport, which spawns it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use crate::error::Result;
use park::Parker;

pub mod here;
pub mod park;
pub mod runtime;
#[cfg(target_os = "linux")]
pub mod socket;
/// Elsewhere the socket is tokio's, driven by the reactor: no caller waits on it.
#[cfg(not(target_os = "linux"))]
#[path = "socket_reactor.rs"]
pub mod socket;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a caller's thread blocked in [`block_on_driven`] may do while its future
/// waits.
pub trait Drive {
    /// Before the future is first polled (before its request is sent): reserves
    /// the waiting work for this thread. True if it did; then [`release`](Self::release)
    /// runs once the future is done.
    fn claim(&self, parker: &Parker) -> bool;
    /// Waits, doing the waiting work itself, until the parker is woken or it has
    /// something to do: true if it waited, false if it could not.
    fn drive(&self, parker: &Parker) -> bool;
    /// Ends a claim (also when the future panicked).
    fn release(&self, parker: &Parker);
}

/// Like [`block_on`], but while the future waits the calling thread may do the
/// waiting work itself ([`Drive`]), and sleeps until woken only when it cannot. The
/// stdio transport reads its pipe here, so a sequential call is woken by the
/// server's reply itself; it claims the pipe before the request goes out, so that
/// a reply that comes fast does not wake a runtime thread first.
/// The future is pinned by the caller, where it was made: a call's future is large,
/// and moving it in here would copy it.
pub fn block_on_driven<F: Future>(mut fut: Pin<&mut F>, driver: Option<&dyn Drive>) -> Result<F::Output> {
    runtime::refuse_on_runtime_thread()?;
    let Some(parker) = Parker::current() else {
        return Ok(runtime::handle().block_on(fut));
    };
    // Timers, I/O and spawns inside the future belong to the runtime.
    let _runtime = runtime::handle().enter();
    struct Claim<'a>(&'a dyn Drive, &'a Parker);
    impl Drop for Claim<'_> {
        fn drop(&mut self) {
            self.0.release(self.1);
        }
    }
    let _claim = driver.filter(|d| d.claim(&parker)).map(|d| Claim(d, &parker));
    let waker = Waker::from(parker.clone());
    let mut cx = Context::from_waker(&waker);
    loop {
        parker.reset();
        if let Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
            return Ok(out);
        }
        if !driver.is_some_and(|d| d.drive(&parker)) {
            parker.wait(None);
        }
    }
}
