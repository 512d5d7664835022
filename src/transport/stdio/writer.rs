//! The write side of the child's stdin: straight from the sending thread when the
//! pipe takes a message whole, else queued for the writer task.

use super::SinkRef;
use super::*;
use crate::error::{Error, Result, Status};
use smallvec::SmallVec;
use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use tokio::io::unix::AsyncFd;
use tokio::sync::{watch, Notify};

thread_local! {
    /// The writer (its address) whose sends this thread queues without waking the
    /// writer task, because it writes them itself after the deliveries ([`Corked`]).
    static CORKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The write side of the child's stdin. A message goes straight out from the
/// sending thread when nothing is queued and the pipe takes it whole (the common
/// case: no hand-off to another thread); otherwise it waits in the queue, which the
/// writer task drains as the pipe drains. One lock keeps the order.
pub(super) struct Writer {
    pub(super) state: Mutex<WriteState>,
    pub(super) wake: Notify,
    pub(super) growth: PipeGrowth,
}

pub(super) struct WriteState {
    /// The pipe (non-blocking); `None` once closed.
    pub(super) fd: Option<Arc<AsyncFd<OwnedFd>>>,
    /// Messages (with their `\n`) not yet fully written; `front_done` bytes of the
    /// first have gone out.
    pub(super) queue: VecDeque<Vec<u8>>,
    pub(super) front_done: usize,
    /// The client closes: no more messages; drain, then close stdin.
    pub(super) closing: bool,
}

impl Writer {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, WriteState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends one message (ending in `\n`), or queues it for the writer task. A
    /// caller's thread writes straight into the pipe; on mcpc's own threads (where
    /// asynchronous calls start, often many at a time from completion callbacks)
    /// messages are queued and the writer task sends what gathered in one write.
    pub(super) fn send(&self, msg: Vec<u8>) -> Result<()> {
        let mut st = self.lock();
        if st.closing {
            // Our own close, not a fault: an answer to a server request that comes in
            // meanwhile can no longer go out, and says so.
            return Err(super::closing());
        }
        let Some(fd) = st.fd.clone() else {
            return Err(Error::new(Status::MCPC_ERR_TRANSPORT, "the server's stdin is closed"));
        };
        if msg.len() >= LARGE {
            self.growth.grow(fd.get_ref().as_fd());
        }
        if st.queue.is_empty() && !crate::sys::on_mcpc_thread() {
            match crate::sys::write_nosigpipe(fd.get_ref().as_fd(), &msg) {
                Ok(n) if n == msg.len() => return Ok(()),
                Ok(n) => st.front_done = n,
                // Full pipe, or a broken one: the writer task waits, or reports it.
                Err(_) => st.front_done = 0,
            }
        }
        // A small message queued behind another joins the last one queued, and
        // its own buffer is freed at once, on the thread that made it, where the
        // next request's buffer comes from: with many requests in flight, buffers
        // freed in batches by the writer overflow glibc's per-thread cache, and
        // make each request's allocation dearer.
        match st.queue.back_mut() {
            Some(back) if msg.len() <= SMALL && back.len() + msg.len() <= BATCH => back.extend_from_slice(&msg),
            _ => st.queue.push_back(msg),
        }
        drop(st);
        if !self.corked_here() {
            self.wake.notify_one();
        }
        Ok(())
    }

    /// True when this thread is the reader task delivering this client's messages
    /// ([`Corked`]): it writes what its deliveries queued once they are done.
    pub(super) fn corked_here(&self) -> bool {
        CORKED.with(|c| c.get() == std::ptr::from_ref(self) as usize)
    }

    /// Writes what is queued, gathered, as far as the pipe takes it now. `Ok(true)`
    /// when the queue is empty; `Ok(false)` when the pipe is full with some left.
    pub(super) fn write_queued(st: &mut WriteState, fd: BorrowedFd<'_>) -> nix::Result<bool> {
        while !st.queue.is_empty() {
            let slices: SmallVec<[std::io::IoSlice<'_>; MAX_GATHER]> = st
                .queue
                .iter()
                .take(MAX_GATHER)
                .enumerate()
                .map(|(i, m)| std::io::IoSlice::new(if i == 0 { &m[st.front_done..] } else { m }))
                .collect();
            let r = crate::sys::writev_nosigpipe(fd, &slices);
            drop(slices);
            match r {
                Ok(mut n) => {
                    // Drops what went out whole; remembers how far the next one got.
                    while let Some(front) = st.queue.front() {
                        let left = front.len() - st.front_done;
                        if n < left {
                            st.front_done += n;
                            break;
                        }
                        n -= left;
                        st.queue.pop_front();
                        st.front_done = 0;
                    }
                }
                Err(nix::errno::Errno::EAGAIN) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// The reader task's flush after a batch of deliveries ([`Corked`]): writes on
    /// this thread what they queued; what the pipe does not take now, and any
    /// failure, is left to the writer task.
    pub(super) fn flush_here(&self) {
        let mut st = self.lock();
        if st.queue.is_empty() {
            return;
        }
        let done = match st.fd.clone() {
            Some(fd) => matches!(Self::write_queued(&mut st, fd.get_ref().as_fd()), Ok(true)),
            None => false,
        };
        drop(st);
        if !done {
            self.wake.notify_one();
        }
    }

    pub(super) fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_one();
    }
}

/// While the reader task delivers a batch of lines, the requests that completion
/// callbacks start (the next asynchronous calls) queue without waking the writer
/// task, and the reader writes them in one gathered write after the batch: no hop
/// to another runtime thread per batch, and the server's next requests leave as
/// soon as the batch is read.
pub(super) struct Corked<'a>(&'a Writer, usize);

impl<'a> Corked<'a> {
    pub(super) fn new(writer: &'a Writer) -> Self {
        let outer = CORKED.with(|c| c.replace(std::ptr::from_ref(writer) as usize));
        Corked(writer, outer)
    }
}

impl Drop for Corked<'_> {
    fn drop(&mut self) {
        CORKED.with(|c| c.set(self.1));
        self.0.flush_here();
    }
}

/// Messages up to this size join the last one queued (see [`Writer::send`]).
pub(super) const SMALL: usize = 4 * 1024;

/// The most a queued buffer grows to by joining.
pub(super) const BATCH: usize = 64 * 1024;

/// Drains the queue as the pipe takes it; closes stdin once closing and drained.
/// Most queued messages gathered into one write.
pub(super) const MAX_GATHER: usize = 64;

pub(super) async fn write_loop(writer: Arc<Writer>, sink: SinkRef, mut exit_rx: watch::Receiver<Option<ExitStatus>>) {
    loop {
        let outcome = {
            let mut st = writer.lock();
            let Some(fd) = st.fd.clone() else { return };
            if st.queue.is_empty() {
                if st.closing {
                    st.fd = None; // the last reference: closing it gives the child EOF
                    return;
                }
                None
            } else {
                match Writer::write_queued(&mut st, fd.get_ref().as_fd()) {
                    Ok(true) => continue,
                    Ok(false) => Some(Ok(fd)),
                    Err(e) => Some(Err(e)),
                }
            }
        };
        match outcome {
            None => {
                writer.wake.notified().await;
                // Lets the other tasks that are ready now (calls being started) queue
                // their messages first, so they leave together.
                tokio::task::yield_now().await;
            }
            Some(Ok(fd)) => {
                // Full pipe: wait until it drains (or something new arrives).
                tokio::select! {
                    ready = fd.writable() => {
                        if let Ok(mut guard) = ready {
                            guard.clear_ready();
                        }
                    }
                    _ = writer.wake.notified() => {}
                }
            }
            Some(Err(e)) => {
                let status = exit_status_soon(&mut exit_rx).await;
                sink.closed(Error::new(
                    Status::MCPC_ERR_TRANSPORT,
                    format!(
                        "writing to the server failed: {} ({})",
                        std::io::Error::from(e),
                        describe(status)
                    ),
                ));
                let mut st = writer.lock();
                st.fd = None; // later sends fail as a transport error
                st.queue.clear();
                return;
            }
        }
    }
}
