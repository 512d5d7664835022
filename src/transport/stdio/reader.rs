//! The read side of the child's stdout, shared by the reader task and a caller's
//! thread blocked in a call (see [`crate::drive`]).

use super::turns::{PipeWatch, Turns};
use super::SinkRef;
use super::*;
use crate::drive::park::Parker;
use crate::error::{Error, Status};
use crate::framing::{LineFramer, LineTooLong};
use crate::transport::{Delivered, Delivery};
use bytes::Bytes;
use nix::sys::epoll::{Epoll, EpollEvent, EpollFlags, EpollTimeout};
use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::unix::AsyncFd;
use tokio::sync::{watch, Notify};

/// A parker's identity: one per thread, alive as long as its thread.
pub(super) fn parker_id(parker: &Parker) -> usize {
    std::ptr::from_ref(parker) as usize
}

/// After a blocking call, the watch on the server's stdout is left disarmed, so
/// that the next call need not disarm it again: re-arming it after each call and
/// disarming it before the next would cost two `epoll_ctl` a call
/// (docs/performance.md). A task ([`rearm_later`]) arms it again when it finds the
/// pipe free, checking every `REARM_AFTER`; what the server sends between calls is
/// read at most about this late, and a message sent meanwhile arms it at once
/// ([`Transport::send`](crate::transport::Transport::send)).
pub(super) const REARM_AFTER: Duration = Duration::from_millis(1);

/// Arms the watch once no blocking call holds the pipe (see [`REARM_AFTER`]).
pub(super) async fn rearm_later(reader: std::sync::Weak<Reader>) {
    loop {
        tokio::time::sleep(REARM_AFTER).await;
        let Some(reader) = reader.upgrade() else { return };
        if reader.turns.rearm_if_free(&*reader) {
            return;
        }
    }
}

/// The read side of the child's stdout, shared by the reader task and a caller's
/// thread blocked in a call ([`Drive::drive`](crate::drive::Drive::drive)). One of them reads at a time
/// ([`Turns`]). A caller's thread delivers only responses: at the first other message it
/// stops, leaving that line and the ones after it to the reader task, in order, so
/// notification and progress callbacks keep running on mcpc's threads, and a call's
/// progress callbacks all run before its response completes it.
pub(super) struct Reader {
    /// The child's stdout, non-blocking.
    pub(super) fd: OwnedFd,
    /// An epoll set holding only `fd`, one-shot: the reader task waits on the set,
    /// and a caller's thread disarms it while it reads, so the task (and the runtime
    /// thread it runs on) is not woken for what the caller reads itself.
    pub(super) watch: AsyncFd<Watch>,
    /// Whose turn it is; a caller's thread is named by its parker ([`parker_id`]).
    /// The watch is left off after a blocking call ([`REARM_AFTER`]).
    pub(super) turns: Turns,
    /// Wakes the reader task when a caller stops reading with work left.
    pub(super) handback: Notify,
    pub(super) state: Mutex<ReadState>,
    pub(super) sink: SinkRef,
    pub(super) replies: Arc<Writer>,
    pub(super) growth: PipeGrowth,
}

pub(super) struct Watch(pub(super) Epoll);

impl AsRawFd for Watch {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0 .0.as_raw_fd()
    }
}

pub(super) struct ReadState {
    pub(super) framer: LineFramer,
    /// What one read may fill: small at first, grown to READ_CHUNK by reads that fill
    /// it, so that an idle server (a host keeps many) costs a page, not READ_CHUNK.
    pub(super) buf: Vec<u8>,
    /// Lines a caller's thread read but left for the reader task.
    pub(super) deferred: VecDeque<Vec<u8>>,
    /// The line cap was exceeded while a caller read: the reader task reports it.
    pub(super) too_long: Option<LineTooLong>,
}

/// How reading stopped.
pub(super) enum ReadEnd {
    /// Nothing more to read for now.
    Drained,
    Eof,
    Failed(Error),
}

/// The first size of [`ReadState::buf`].
pub(super) const FIRST_READ: usize = 4 * 1024;

impl ReadState {
    pub(super) fn new(framer: LineFramer) -> ReadState {
        ReadState {
            framer,
            buf: vec![0u8; FIRST_READ],
            deferred: VecDeque::new(),
            too_long: None,
        }
    }

    /// After a read of `n` bytes: one that filled the buffer says more is coming.
    fn grow_after(&mut self, n: usize) {
        if n == self.buf.len() && n < READ_CHUNK {
            self.buf.resize((n * 4).min(READ_CHUNK), 0);
        }
    }
}

impl Reader {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn read_some(&self, buf: &mut [u8]) -> nix::Result<usize> {
        loop {
            match nix::unistd::read(self.fd.as_raw_fd(), buf) {
                Err(nix::errno::Errno::EINTR) => continue,
                // A full default-sized pipe: a large message is crossing.
                Ok(n) if n >= LARGE => {
                    self.growth.grow(self.fd.as_fd());
                    return Ok(n);
                }
                other => return other,
            }
        }
    }

    /// The reader task's turn: delivers what a caller left, then reads until the
    /// pipe is empty.
    pub(super) fn drain(&self) -> ReadEnd {
        let mut guard = self.lock();
        let st = &mut *guard;
        while let Some(line) = st.deferred.pop_front() {
            self.deliver(&line, None);
        }
        if let Some(too_long) = st.too_long.take() {
            return ReadEnd::Failed(too_long_error(too_long));
        }
        loop {
            let read = {
                let _corked = Corked::new(&self.replies);
                st.framer.read_with(
                    &mut st.buf,
                    |dst| self.read_some(dst),
                    |line, whole| self.deliver(line, whole),
                )
            };
            match read {
                Err(too_long) => return ReadEnd::Failed(too_long_error(too_long)),
                Ok(Ok(0)) => return ReadEnd::Eof,
                Ok(Ok(n)) => st.grow_after(n),
                Ok(Err(nix::errno::Errno::EAGAIN)) => return ReadEnd::Drained,
                Ok(Err(e)) => {
                    return ReadEnd::Failed(Error::new(
                        Status::MCPC_ERR_TRANSPORT,
                        format!("reading from the server failed: {}", std::io::Error::from(e)),
                    ))
                }
            }
        }
    }

    /// Delivers a line (given whole, as `Bytes`, when it is large: see
    /// [`LineFramer::feed`]).
    pub(super) fn deliver(&self, line: &[u8], whole: Option<&Bytes>) {
        if let Ok(Delivered::Reply(mut reply)) = self.sink.deliver(Delivery::any(line, whole)) {
            reply.body.push(b'\n');
            let _ = self.replies.send(reply.body);
        }
    }

    /// Reserves reading for a caller's thread before it sends its request (see
    /// [`Drive::claim`](crate::drive::Drive::claim) and [`Turns::claim`]). Disarming only at
    /// the caller's first turn loses the race to a fast server when there are
    /// other CPUs (docs/decisions/0003-caller-drives-its-io.md).
    pub(super) fn claim(&self, parker: &Parker) -> bool {
        self.turns.claim(parker_id(parker), self)
    }

    /// A caller's turn (see [`Drive::drive`](crate::drive::Drive::drive)): waits on the pipe and the
    /// caller's parker, delivering responses, until the parker is woken. Under a
    /// claim, the caller keeps `busy` after a turn that left nothing to hand back.
    pub(super) fn read_here(&self, parker: &Parker) -> bool {
        let Some(claimed) = self.turns.begin(parker_id(parker), self) else {
            return false;
        };
        let mut guard = self.lock();
        let st = &mut *guard;
        // Lines left for the reader task come first; so do ends it must report.
        let mut hand_back = !st.deferred.is_empty() || st.too_long.is_some();
        while !hand_back && !parker.is_notified() {
            parker.wait(Some(self.fd.as_fd()));
            let deferred = &mut st.deferred;
            let read = st.framer.read_with(
                &mut st.buf,
                |dst| self.read_some(dst),
                |line, whole| {
                    if !deferred.is_empty()
                        || matches!(self.sink.deliver(Delivery::on_caller(line, whole)), Ok(Delivered::Left))
                    {
                        deferred.push_back(line.to_vec());
                    }
                },
            );
            match read {
                Err(e) => {
                    st.too_long = Some(e);
                    hand_back = true;
                }
                // End of stream, or a failed read: the reader task reports it.
                Ok(Ok(0)) => hand_back = true,
                Ok(Ok(n)) => {
                    st.grow_after(n);
                    hand_back = !st.deferred.is_empty();
                }
                // Woken by the parker, or spuriously.
                Ok(Err(nix::errno::Errno::EAGAIN)) => {}
                Ok(Err(_)) => hand_back = true,
            }
        }
        drop(guard);
        self.turns.end(claimed, hand_back, self);
        !hand_back
    }
}

impl PipeWatch for Reader {
    fn arm(&self, on: bool) {
        let events = if on {
            EpollFlags::EPOLLIN | EpollFlags::EPOLLONESHOT
        } else {
            EpollFlags::EPOLLONESHOT
        };
        let _ = self
            .watch
            .get_ref()
            .0
            .modify(self.fd.as_fd(), &mut EpollEvent::new(events, 0));
    }

    fn hand_back(&self) {
        self.handback.notify_one();
    }
}

pub(super) async fn read_loop(reader: Arc<Reader>, mut exit_rx: watch::Receiver<Option<ExitStatus>>) {
    let end = loop {
        // The pipe became readable, or a caller's thread stopped reading with work left.
        tokio::select! {
            biased;
            _ = reader.handback.notified() => {}
            ready = reader.watch.readable() => match ready {
                Ok(mut guard) => {
                    // Takes the event off the set (the one-shot entry is now disarmed).
                    let mut events = [EpollEvent::empty()];
                    let _ = reader.watch.get_ref().0.wait(&mut events, EpollTimeout::ZERO);
                    guard.clear_ready();
                }
                Err(e) => break ReadEnd::Failed(Error::new(
                    Status::MCPC_ERR_TRANSPORT,
                    format!("reading from the server failed: {e}"),
                )),
            },
        }
        let Some(end) = reader.turns.task_turn(&*reader, || {
            let end = reader.drain();
            let drained = matches!(end, ReadEnd::Drained);
            (end, drained)
        }) else {
            // A caller's thread reads; it re-arms the watch when it stops.
            continue;
        };
        if !matches!(end, ReadEnd::Drained) {
            break end;
        }
    };
    let err = match end {
        ReadEnd::Failed(e) => e,
        _ => {
            let status = exit_status_soon(&mut exit_rx).await;
            let partial = if reader.lock().framer.pending() > 0 {
                " in the middle of a message"
            } else {
                ""
            };
            Error::new(
                Status::MCPC_ERR_TRANSPORT,
                format!("the server closed its stdout{partial} ({})", describe(status)),
            )
        }
    };
    reader.sink.closed(err);
}
