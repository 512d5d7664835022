//! The stdio transport: spawns the server as a child process and exchanges one
//! JSON-RPC message per line over its stdin and stdout.
//!
//! The child belongs to the transport. It runs in its own process group; on close
//! its stdin is closed, then after a grace period the group gets SIGTERM, then
//! SIGKILL, and the child is always reaped. Its stderr is always drained.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use std::collections::VecDeque;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use bytes::Bytes;
use smallvec::SmallVec;
use tokio::io::unix::AsyncFd;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;

use super::{BoxFuture, Outgoing, SinkRef, Transport};
use crate::drive::park::Parker;
use crate::drive::Drive;
use crate::error::{Error, Result, Status};
use crate::framing::{LineFramer, LineTooLong};
use crate::sys::{signal_group, Sig};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};

/// Called with each line the server writes to stderr (without its line end).
pub type StderrFn = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// What happens to the child's stderr.
#[derive(Clone, Default)]
pub enum StderrMode {
    /// Read and thrown away.
    #[default]
    Discard,
    /// Shared with the host process's stderr.
    Inherit,
    /// Handed line by line to a callback (lines over the message size limit are cut).
    Lines(StderrFn),
}

pub const DEFAULT_MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// How to start and stop the server.
#[derive(Clone)]
pub struct StdioConfig {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Variables to set (`Some`) or remove (`None`) in the child's environment.
    pub env: Vec<(OsString, Option<OsString>)>,
    /// Start from an empty environment instead of the host's.
    pub clear_env: bool,
    pub cwd: Option<PathBuf>,
    pub stderr: StderrMode,
    pub max_message_size: usize,
    /// How long the child has to exit after its stdin closes, before SIGTERM.
    pub close_grace: Duration,
    /// How long after SIGTERM before SIGKILL.
    pub term_grace: Duration,
}

impl StdioConfig {
    pub fn new(program: impl Into<OsString>) -> Self {
        StdioConfig {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
            stderr: StderrMode::Discard,
            max_message_size: DEFAULT_MAX_MESSAGE,
            close_grace: Duration::from_millis(2000),
            term_grace: Duration::from_millis(2000),
        }
    }
}

const READ_CHUNK: usize = 64 * 1024;
/// A pipe to or from the server that a large message crosses grows to this size
/// (Linux's default is 64 KiB), so such a message crosses in a few reads instead of
/// sixteen wake-ups per MiB. The kernel allocates pipe pages only as they fill.
const PIPE_SIZE: usize = 1024 * 1024;
/// Linux's default pipe size: a message at least this long grows its pipe.
const LARGE: usize = 64 * 1024;
/// At most this many grown pipes are open in the process at once. Linux counts a
/// pipe's whole size against the user's `pipe-user-pages-soft` (64 MiB by default),
/// past which every new pipe of that user, in any process, gets only 8 KiB.
const MAX_GROWN_PIPES: usize = 16;
static GROWN_PIPES: AtomicUsize = AtomicUsize::new(0);

/// Grows one pipe, at most once: when the first large message crosses it.
struct PipeGrowth(AtomicU8);

const UNTRIED: u8 = 0;
const TRIED: u8 = 1;
const GROWN: u8 = 2;

impl PipeGrowth {
    fn new() -> Self {
        PipeGrowth(AtomicU8::new(UNTRIED))
    }

    /// Grows the pipe to [`PIPE_SIZE`] if this is the first try and the process's
    /// budget and the system allow (an unprivileged process may go up to
    /// /proc/sys/fs/pipe-max-size); otherwise it stays as it is.
    fn grow(&self, fd: BorrowedFd<'_>) {
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

/// A parker's identity: one per thread, alive as long as its thread.
fn parker_id(parker: &Parker) -> usize {
    std::ptr::from_ref(parker) as usize
}

/// After a blocking call, the watch on the server's stdout is left disarmed, so
/// that the next call need not disarm it again: re-arming it after each call and
/// disarming it before the next cost two `epoll_ctl` a call, 0.5 µs of a 7.5 µs
/// sequential call on one CPU (interleaved runs of a build without them). A task
/// ([`rearm_later`]) arms it again when it finds the pipe free, checking every
/// `REARM_AFTER`; what the server sends between calls is read at most about this
/// late, and a message sent meanwhile arms it at once ([`Transport::send`]).
const REARM_AFTER: Duration = Duration::from_millis(1);

/// Arms the watch once no blocking call holds the pipe (see [`REARM_AFTER`]).
async fn rearm_later(reader: std::sync::Weak<Reader>) {
    loop {
        tokio::time::sleep(REARM_AFTER).await;
        let Some(reader) = reader.upgrade() else { return };
        if reader.try_acquire() {
            reader.rearm_pending.store(false, Ordering::SeqCst);
            reader.rearm();
            reader.release();
            return;
        }
    }
}

/// After stdout ends, how long to wait for the exit status to name it in the error.
const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

/// The write side of the child's stdin. A message goes straight out from the
/// sending thread when nothing is queued and the pipe takes it whole (the common
/// case: no hand-off to another thread); otherwise it waits in the queue, which the
/// writer task drains as the pipe drains. One lock keeps the order.
struct Writer {
    state: Mutex<WriteState>,
    wake: Notify,
    growth: PipeGrowth,
}

struct WriteState {
    /// The pipe (non-blocking); `None` once closed.
    fd: Option<Arc<AsyncFd<OwnedFd>>>,
    /// Messages (with their `\n`) not yet fully written; `front_done` bytes of the
    /// first have gone out.
    queue: VecDeque<Vec<u8>>,
    front_done: usize,
    /// No more messages: drain, then close stdin.
    closing: bool,
}

impl Writer {
    fn lock(&self) -> std::sync::MutexGuard<'_, WriteState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends one message (ending in `\n`), or queues it for the writer task. A
    /// caller's thread writes straight into the pipe; on mcpc's own threads (where
    /// asynchronous calls start, often many at a time from completion callbacks)
    /// messages are queued and the writer task sends what gathered in one write.
    fn send(&self, msg: Vec<u8>) -> Result<()> {
        let mut st = self.lock();
        if st.closing {
            return Err(Error::new(Status::MCPC_ERR_TRANSPORT, "the server's stdin is closed"));
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
        // next request's buffer comes from: with 64 requests in flight, buffers
        // freed in batches by the writer overflowed glibc's per-thread cache, and
        // each request's allocation cost about 200 instructions instead of 50
        // (callgrind).
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
    fn corked_here(&self) -> bool {
        CORKED.with(|c| c.get() == std::ptr::from_ref(self) as usize)
    }

    /// Writes what is queued, gathered, as far as the pipe takes it now. `Ok(true)`
    /// when the queue is empty; `Ok(false)` when the pipe is full with some left.
    fn write_queued(st: &mut WriteState, fd: BorrowedFd<'_>) -> nix::Result<bool> {
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
    fn flush_here(&self) {
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

    fn close(&self) {
        self.lock().closing = true;
        self.wake.notify_one();
    }
}

thread_local! {
    /// The writer (its address) whose sends this thread queues without waking the
    /// writer task, because it writes them itself after the deliveries ([`Corked`]).
    static CORKED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// While the reader task delivers a batch of lines, the requests that completion
/// callbacks start (the next asynchronous calls) queue without waking the writer
/// task, and the reader writes them in one gathered write after the batch: no hop
/// to another runtime thread per batch, and the server's next requests leave as
/// soon as the batch is read.
struct Corked<'a>(&'a Writer, usize);

impl<'a> Corked<'a> {
    fn new(writer: &'a Writer) -> Self {
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

/// The read side of the child's stdout, shared by the reader task and a caller's
/// thread blocked in a call ([`Drive::drive`]). One of them reads at a time
/// (`busy`). A caller's thread delivers only responses: at the first other message it
/// stops, leaving that line and the ones after it to the reader task, in order, so
/// notification and progress callbacks keep running on mcpc's threads, and a call's
/// progress callbacks all run before its response completes it.
struct Reader {
    /// The child's stdout, non-blocking.
    fd: OwnedFd,
    /// An epoll set holding only `fd`, one-shot: the reader task waits on the set,
    /// and a caller's thread disarms it while it reads, so the task (and the runtime
    /// thread it runs on) is not woken for what the caller reads itself.
    watch: AsyncFd<Watch>,
    busy: AtomicBool,
    /// A claimer disarmed the watch and left it so ([`REARM_AFTER`]): the next
    /// claimer need not disarm it. Whoever arms it clears this first.
    watch_off: AtomicBool,
    /// A task that arms the watch again is on its way ([`rearm_later`]).
    rearm_pending: AtomicBool,
    /// The parker (its address) of the caller's thread that holds `busy` between its
    /// turns at reading ([`Drive::claim`]); 0 when none does.
    claimant: AtomicUsize,
    /// Wakes the reader task when a caller stops reading with work left.
    handback: Notify,
    state: Mutex<ReadState>,
    sink: SinkRef,
    replies: Arc<Writer>,
    growth: PipeGrowth,
}

struct Watch(Epoll);

impl AsRawFd for Watch {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.0 .0.as_raw_fd()
    }
}

struct ReadState {
    framer: LineFramer,
    buf: Box<[u8]>,
    /// Lines a caller's thread read but left for the reader task.
    deferred: VecDeque<Vec<u8>>,
    /// The line cap was exceeded while a caller read: the reader task reports it.
    too_long: Option<LineTooLong>,
}

/// How reading stopped.
enum ReadEnd {
    /// Nothing more to read for now.
    Drained,
    Eof,
    Failed(Error),
}

impl Reader {
    fn lock(&self) -> std::sync::MutexGuard<'_, ReadState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn try_acquire(&self) -> bool {
        self.busy
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    fn release(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }

    /// Arms the one-shot watch (level-triggered: what is already in the pipe
    /// fires at once), or disarms it.
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

    /// Arms the watch: the pipe is the reader task's again.
    fn rearm(&self) {
        self.watch_off.store(false, Ordering::SeqCst);
        self.arm(true);
    }

    fn read_some(&self, buf: &mut [u8]) -> nix::Result<usize> {
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
    fn drain(&self) -> ReadEnd {
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
                Ok(Ok(_)) => {}
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
    fn deliver(&self, line: &[u8], whole: Option<&Bytes>) {
        if let Ok(Some(mut reply)) = self.sink.deliver_whole(line, whole) {
            reply.body.push(b'\n');
            let _ = self.replies.send(reply.body);
        }
    }

    /// Reserves reading for a caller's thread before it sends its request (see
    /// [`Drive::claim`]): `busy` taken and the watch disarmed now, so that
    /// the response cannot wake the reader task's runtime thread in the moment
    /// between the request going out and the caller's first turn. Disarming only
    /// at that turn lost the race to a fast server on most sequential calls across
    /// two CPUs (strace: the runtime thread woke about once a call).
    fn claim(&self, parker: &Parker) -> bool {
        if !self.try_acquire() {
            return false;
        }
        if !self.watch_off.load(Ordering::SeqCst) {
            self.arm(false);
        }
        self.claimant.store(parker_id(parker), Ordering::SeqCst);
        true
    }

    /// Ends a claim that this thread still holds, leaving the watch disarmed for
    /// the next call (see [`REARM_AFTER`]): true if it ended one.
    fn unclaim(&self, parker: &Parker) -> bool {
        if self
            .claimant
            .compare_exchange(parker_id(parker), 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.watch_off.store(true, Ordering::SeqCst);
            self.release();
            return true;
        }
        false
    }

    /// A caller's turn (see [`Drive::drive`]): waits on the pipe and the
    /// caller's parker, delivering responses, until the parker is woken. Under a
    /// claim, the caller keeps `busy` after a turn that left nothing to hand back.
    fn read_here(&self, parker: &Parker) -> bool {
        let claimed = self.claimant.load(Ordering::SeqCst) == parker_id(parker);
        if !claimed {
            if !self.try_acquire() {
                return false;
            }
            self.arm(false);
        }
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
                    if !deferred.is_empty() || self.sink.deliver_response_whole(line, whole).is_none() {
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
                Ok(Ok(_)) => hand_back = !st.deferred.is_empty(),
                // Woken by the parker, or spuriously.
                Ok(Err(nix::errno::Errno::EAGAIN)) => {}
                Ok(Err(_)) => hand_back = true,
            }
        }
        drop(guard);
        if claimed {
            if !hand_back {
                return true;
            }
            self.claimant.store(0, Ordering::SeqCst);
        }
        self.watch_off.store(false, Ordering::SeqCst);
        self.release();
        // What comes next (or is already in the pipe) is the reader task's again.
        self.arm(true);
        if hand_back {
            self.handback.notify_one();
        }
        !hand_back
    }
}

fn too_long_error(too_long: LineTooLong) -> Error {
    Error::new(
        Status::MCPC_ERR_MESSAGE_TOO_LARGE,
        format!(
            "the server sent a message longer than the {} byte limit",
            too_long.limit
        ),
    )
}

pub struct StdioTransport {
    writer: Arc<Writer>,
    reader: Arc<Reader>,
    close_tx: watch::Sender<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

fn describe(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "the server process is still running".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("the server exited with status {code}"),
            (None, Some(sig)) => format!("the server was killed by signal {sig}"),
            _ => format!("the server ended ({s})"),
        },
    }
}

/// Checks before spawning that the program and the working directory exist, so a
/// mistake gives a clear MCPC_ERR_SPAWN on every platform and under every tool
/// (valgrind, for one, lets a failed exec look like a child that exits at once).
fn check_spawnable(cfg: &StdioConfig) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let spawn_err = |why: String| {
        Error::new(
            Status::MCPC_ERR_SPAWN,
            format!("cannot start {:?}: {why}", cfg.program.to_string_lossy()),
        )
    };
    if let Some(dir) = &cfg.cwd {
        if !dir.is_dir() {
            return Err(spawn_err(format!("working directory {dir:?} is not a directory")));
        }
    }
    let is_executable =
        |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    let program = std::path::Path::new(&cfg.program);
    if cfg.program.as_encoded_bytes().contains(&b'/') {
        let full = match (&cfg.cwd, program.is_relative()) {
            (Some(dir), true) => dir.join(program),
            _ => program.to_path_buf(),
        };
        return if is_executable(&full) {
            Ok(())
        } else {
            Err(spawn_err("no such executable file".into()))
        };
    }
    // PATH as the child will see it (the options may set or clear it).
    let path = cfg
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| if cfg.clear_env { None } else { std::env::var_os("PATH") })
        .unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program))) {
        Ok(())
    } else {
        Err(spawn_err("not found in PATH".into()))
    }
}

/// A pipe end in non-blocking mode, registered with the runtime.
fn nonblocking_async_fd(fd: std::io::Result<OwnedFd>) -> Result<AsyncFd<OwnedFd>> {
    // `new` is deprecated for fds a value may not own; an OwnedFd owns its fd.
    #[allow(deprecated)]
    nonblocking(fd).and_then(AsyncFd::new).map_err(pipe_setup_error)
}

/// The child's stdout in non-blocking mode, and a one-shot epoll set watching it,
/// registered with the runtime.
fn watched_pipe(fd: std::io::Result<OwnedFd>) -> Result<(OwnedFd, AsyncFd<Watch>)> {
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

fn pipe_setup_error(e: std::io::Error) -> Error {
    Error::new(Status::MCPC_ERR_SPAWN, format!("cannot set up the server's pipes: {e}"))
}

/// A pipe end (as the child's handle gives it) switched to non-blocking mode.
fn nonblocking(fd: std::io::Result<OwnedFd>) -> std::io::Result<OwnedFd> {
    let fd = fd?;
    nix::fcntl::fcntl(
        fd.as_raw_fd(),
        nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK),
    )?;
    Ok(fd)
}

impl StdioTransport {
    /// Spawns the server. Must run inside the runtime.
    pub fn spawn(cfg: StdioConfig, sink: SinkRef) -> Result<Arc<dyn Transport>> {
        check_spawnable(&cfg)?;
        let mut cmd = Command::new(&cfg.program);
        cmd.args(&cfg.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match cfg.stderr {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Discard => Stdio::null(),
                StderrMode::Lines(_) => Stdio::piped(),
            })
            .process_group(0)
            .kill_on_drop(true);
        crate::sys::unblock_signals_in_child(&mut cmd);
        if cfg.clear_env {
            cmd.env_clear();
        }
        for (k, v) in &cfg.env {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        if let Some(dir) = &cfg.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|e| {
            Error::new(
                Status::MCPC_ERR_SPAWN,
                format!("cannot start {:?}: {e}", cfg.program.to_string_lossy()),
            )
        })?;
        let pgid = child.id().unwrap_or(0);
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take();

        let fd = nonblocking_async_fd(stdin.into_owned_fd())?;
        let writer = Arc::new(Writer {
            state: Mutex::new(WriteState {
                fd: Some(Arc::new(fd)),
                queue: VecDeque::new(),
                front_done: 0,
                closing: false,
            }),
            wake: Notify::new(),
            growth: PipeGrowth::new(),
        });
        let (exit_tx, exit_rx) = watch::channel::<Option<ExitStatus>>(None);
        let (close_tx, close_rx) = watch::channel(false);
        let (fd, watch) = watched_pipe(stdout.into_owned_fd())?;
        let reader = Arc::new(Reader {
            fd,
            watch,
            busy: AtomicBool::new(false),
            watch_off: AtomicBool::new(false),
            rearm_pending: AtomicBool::new(false),
            claimant: AtomicUsize::new(0),
            handback: Notify::new(),
            state: Mutex::new(ReadState {
                framer: LineFramer::new(cfg.max_message_size),
                buf: vec![0u8; READ_CHUNK].into_boxed_slice(),
                deferred: VecDeque::new(),
                too_long: None,
            }),
            sink: sink.clone(),
            replies: writer.clone(),
            growth: PipeGrowth::new(),
        });
        let mut tasks = Vec::new();
        tasks.push(tokio::spawn(write_loop(writer.clone(), sink.clone(), exit_rx.clone())));
        let (read_done_tx, read_done_rx) = watch::channel(false);
        let task_reader = reader.clone();
        tasks.push(tokio::spawn(async move {
            read_loop(task_reader, exit_rx).await;
            let _ = read_done_tx.send(true);
        }));
        if let (Some(err), StderrMode::Lines(cb)) = (stderr, &cfg.stderr) {
            tasks.push(tokio::spawn(stderr_loop(err, cb.clone(), cfg.max_message_size)));
        }
        let supervisor = tokio::spawn(supervise(
            child,
            pgid,
            cfg.clone(),
            sink,
            exit_tx,
            close_rx,
            read_done_rx,
        ));
        Ok(Arc::new(StdioTransport {
            writer,
            reader,
            close_tx,
            tasks: Mutex::new(tasks),
            supervisor: Mutex::new(Some(supervisor)),
        }))
    }
}

/// A caller's thread blocked in a call reads the pipe itself (see [`Reader`]).
impl Drive for StdioTransport {
    fn claim(&self, parker: &Parker) -> bool {
        self.reader.claim(parker)
    }

    fn drive(&self, parker: &Parker) -> bool {
        self.reader.read_here(parker)
    }

    fn release(&self, parker: &Parker) {
        if self.reader.unclaim(parker) && !self.reader.rearm_pending.swap(true, Ordering::SeqCst) {
            crate::drive::runtime::handle().spawn(rearm_later(Arc::downgrade(&self.reader)));
        }
    }
}

impl Transport for StdioTransport {
    fn probe_kind(&self) -> super::ProbeKind {
        super::ProbeKind::Stream { restartable: true }
    }

    fn driver(&self) -> Option<&dyn Drive> {
        Some(self)
    }

    fn send(&self, msg: Outgoing) -> Result<()> {
        // A message sent while the watch is left off after a blocking call (an
        // asynchronous call's request, say) has its answer read by the reader task:
        // arm the watch now rather than at the next check.
        let reader = &self.reader;
        if reader.watch_off.load(Ordering::SeqCst) && reader.try_acquire() {
            reader.rearm();
            reader.release();
        }
        let mut body = msg.body;
        body.push(b'\n');
        self.writer.send(body)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The writer drains what is queued, then closes the child's stdin.
            self.writer.close();
            let _ = self.close_tx.send(true);
            let supervisor = self.supervisor.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(s) = supervisor {
                let _ = s.await;
            }
            let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
            for t in tasks {
                t.abort();
                let _ = t.await;
            }
        })
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Without close(), the runtime still reaps: the writer closes stdin, the
        // supervisor runs the shutdown sequence, and the tasks end with their pipes.
        self.writer.close();
        let _ = self.close_tx.send(true);
    }
}

/// Waits briefly for the child's exit status, to name it in an error.
async fn exit_status_soon(exit_rx: &mut watch::Receiver<Option<ExitStatus>>) -> Option<ExitStatus> {
    tokio::time::timeout(EXIT_STATUS_WAIT, exit_rx.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|s| *s))
}

/// Messages up to this size join the last one queued (see [`Writer::send`]).
const SMALL: usize = 4 * 1024;
/// The most a queued buffer grows to by joining.
const BATCH: usize = 64 * 1024;

/// Drains the queue as the pipe takes it; closes stdin once closing and drained.
/// Most queued messages gathered into one write.
const MAX_GATHER: usize = 64;

async fn write_loop(writer: Arc<Writer>, sink: SinkRef, mut exit_rx: watch::Receiver<Option<ExitStatus>>) {
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
                st.fd = None;
                st.queue.clear();
                st.closing = true;
                return;
            }
        }
    }
}

async fn read_loop(reader: Arc<Reader>, mut exit_rx: watch::Receiver<Option<ExitStatus>>) {
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
        if !reader.try_acquire() {
            // A caller's thread reads; it re-arms the watch when it stops.
            continue;
        }
        let end = reader.drain();
        if matches!(end, ReadEnd::Drained) {
            reader.rearm();
        }
        reader.release();
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

async fn stderr_loop(mut stderr: ChildStderr, cb: StderrFn, max: usize) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        while let Some(pos) = memchr::memchr(b'\n', chunk) {
            let room = max.saturating_sub(line.len());
            line.extend_from_slice(&chunk[..pos.min(room)]);
            let l = line.strip_suffix(b"\r").unwrap_or(&line);
            cb(l);
            line.clear();
            chunk = &chunk[pos + 1..];
        }
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
    }
    if !line.is_empty() {
        cb(&line);
    }
}

/// Owns the child: reports its exit, and runs the shutdown sequence on close.
async fn supervise(
    mut child: Child,
    pgid: u32,
    cfg: StdioConfig,
    sink: SinkRef,
    exit_tx: watch::Sender<Option<ExitStatus>>,
    mut close_rx: watch::Receiver<bool>,
    mut read_done: watch::Receiver<bool>,
) {
    let exited = tokio::select! {
        status = child.wait() => Some(status.ok()),
        _ = close_rx.wait_for(|c| *c) => None,
    };
    match exited {
        Some(status) => {
            let _ = exit_tx.send(status);
            // Let the reader hand over the last lines (it fails what is pending itself
            // at EOF); a grandchild holding stdout open must not keep calls waiting.
            let _ = tokio::time::timeout(EXIT_STATUS_WAIT, read_done.wait_for(|d| *d)).await;
            sink.closed(Error::new(Status::MCPC_ERR_TRANSPORT, describe(status)));
            let _ = close_rx.wait_for(|c| *c).await;
        }
        None => {
            let status = shutdown(&mut child, pgid, &cfg).await;
            let _ = exit_tx.send(status);
        }
    }
    // Whatever the leader did, its group (grandchildren) goes too.
    signal_group(pgid, Sig::SIGKILL);
}

async fn shutdown(child: &mut Child, pgid: u32, cfg: &StdioConfig) -> Option<ExitStatus> {
    if let Ok(Ok(s)) = tokio::time::timeout(cfg.close_grace, child.wait()).await {
        return Some(s);
    }
    signal_group(pgid, Sig::SIGTERM);
    if let Ok(Ok(s)) = tokio::time::timeout(cfg.term_grace, child.wait()).await {
        return Some(s);
    }
    signal_group(pgid, Sig::SIGKILL);
    let _ = child.start_kill();
    child.wait().await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe_size(fd: &OwnedFd) -> usize {
        nix::fcntl::fcntl(fd.as_raw_fd(), nix::fcntl::FcntlArg::F_GETPIPE_SZ).expect("F_GETPIPE_SZ") as usize
    }

    /// A pipe grows once, and no more than MAX_GROWN_PIPES grown pipes are open at
    /// once; closing one makes room for the next. (No other test here grows pipes.)
    #[test]
    fn pipes_grow_within_the_budget() {
        let max = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok());
        if max.map_or(true, |m| m < PIPE_SIZE) {
            return; // this system does not allow the size at all
        }
        let pipes: Vec<(OwnedFd, OwnedFd, PipeGrowth)> = (0..MAX_GROWN_PIPES + 1)
            .map(|_| {
                let (r, w) = nix::unistd::pipe().expect("pipe");
                (r, w, PipeGrowth::new())
            })
            .collect();
        for (r, _, g) in &pipes {
            g.grow(r.as_fd());
            g.grow(r.as_fd());
        }
        let grown = pipes.iter().filter(|(r, _, _)| pipe_size(r) == PIPE_SIZE).count();
        assert_eq!(grown, MAX_GROWN_PIPES);
        assert_eq!(GROWN_PIPES.load(Ordering::Acquire), MAX_GROWN_PIPES);
        let last = &pipes[MAX_GROWN_PIPES];
        assert!(pipe_size(&last.0) < PIPE_SIZE);
        // The last one already had its try; a fresh pipe grows once one is closed.
        let mut pipes = pipes;
        drop(pipes.remove(0));
        let (r, _w) = nix::unistd::pipe().expect("pipe");
        let g = PipeGrowth::new();
        g.grow(r.as_fd());
        assert_eq!(pipe_size(&r), PIPE_SIZE);
        drop(g);
        drop(pipes);
        assert_eq!(GROWN_PIPES.load(Ordering::Acquire), 0);
    }

    /// A caller that claims the pipe before it sends reads its own response even
    /// when the response arrives before the caller's first turn at reading: the
    /// reader task (on a runtime thread) is never woken for it. The window is made
    /// wide on purpose: the future waits 50 ms after sending before it yields, and
    /// `cat` answers at once. Without the claim the reader task reads every line.
    #[test]
    fn a_fast_response_is_read_by_its_caller() {
        use std::sync::atomic::AtomicUsize;
        use std::task::{Poll, Waker};
        #[derive(Default)]
        struct Record {
            by_task: AtomicUsize,
            by_caller: AtomicUsize,
            waker: Mutex<Option<Waker>>,
        }
        impl Record {
            fn seen(&self) -> usize {
                self.by_task.load(Ordering::SeqCst) + self.by_caller.load(Ordering::SeqCst)
            }
            fn wake(&self) {
                if let Some(w) = self.waker.lock().unwrap().take() {
                    w.wake();
                }
            }
        }
        impl super::super::Sink for Record {
            fn deliver(&self, _msg: &[u8]) -> Result<Option<Outgoing>> {
                self.by_task.fetch_add(1, Ordering::SeqCst);
                self.wake();
                Ok(None)
            }
            fn deliver_response(&self, _msg: &[u8]) -> Option<Result<()>> {
                self.by_caller.fetch_add(1, Ordering::SeqCst);
                self.wake();
                Some(Ok(()))
            }
            fn fail_request(&self, _id: i64, _err: Error) {}
            fn is_pending(&self, _id: i64) -> bool {
                true
            }
            fn closed(&self, _err: Error) {}
        }
        let sink = Arc::new(Record::default());
        let transport = {
            let _runtime = crate::drive::runtime::handle().enter();
            StdioTransport::spawn(StdioConfig::new("cat"), sink.clone()).expect("cat runs")
        };
        for round in 1..=3 {
            let mut sent = false;
            let answered = std::future::poll_fn(|cx| {
                *sink.waker.lock().unwrap() = Some(cx.waker().clone());
                if sink.seen() == round {
                    return Poll::Ready(());
                }
                if !sent {
                    sent = true;
                    transport.send(Outgoing::response(b"{}".to_vec())).expect("sent");
                    // The response arrives now, before the caller's turn at reading.
                    std::thread::sleep(Duration::from_millis(50));
                }
                Poll::Pending
            });
            crate::drive::block_on_driven(std::pin::pin!(answered), transport.driver()).expect("not a runtime thread");
        }
        assert_eq!(
            (
                sink.by_caller.load(Ordering::SeqCst),
                sink.by_task.load(Ordering::SeqCst)
            ),
            (3, 0)
        );
        crate::drive::runtime::block_on(transport.close()).expect("not a runtime thread");
    }
}
