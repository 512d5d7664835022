//! The stdio transport on Linux: the caller's thread blocked in a call reads its
//! response from the server's stdout itself (see [`crate::drive`]), and writes its
//! request straight into the server's stdin.

use std::collections::VecDeque;
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};

use tokio::sync::{watch, Notify};

use super::turns::Turns;
use super::*;
use crate::drive::park::Parker;
use crate::drive::Drive;
use crate::error::Result;
use crate::framing::LineFramer;
use crate::transport::{BoxFuture, Outgoing, SinkRef, Transport};

pub struct StdioTransport {
    writer: Arc<Writer>,
    reader: Arc<Reader>,
    close_tx: watch::Sender<bool>,
    running: Running,
}

impl StdioTransport {
    /// Spawns the server. Must run inside the runtime.
    pub fn spawn(cfg: StdioConfig, sink: SinkRef) -> Result<Arc<dyn Transport>> {
        let (mut child, tree) = start(&cfg)?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");

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
            turns: Turns::new(),
            handback: Notify::new(),
            state: Mutex::new(ReadState::new(LineFramer::new(cfg.max_message_size))),
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
        let running = Running::start(tasks, child, tree, &cfg, sink, exit_tx, close_rx, read_done_rx);
        Ok(Arc::new(StdioTransport {
            writer,
            reader,
            close_tx,
            running,
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
        if self.reader.turns.unclaim(parker_id(parker)) {
            crate::drive::runtime::handle().spawn(rearm_later(Arc::downgrade(&self.reader)));
        }
    }
}

impl Transport for StdioTransport {
    fn probe_kind(&self) -> crate::transport::ProbeKind {
        crate::transport::ProbeKind::Stream { restartable: true }
    }

    fn driver(&self) -> Option<&dyn Drive> {
        Some(self)
    }

    fn send(&self, msg: Outgoing) -> Result<()> {
        // A message sent while the watch is left off after a blocking call (an
        // asynchronous call's request, say) has its answer read by the reader task:
        // arm the watch now rather than at the next check.
        self.reader.turns.rearm_for_send(&*self.reader);
        let mut body = msg.body;
        body.push(b'\n');
        self.writer.send(body)
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The writer drains what is queued, then closes the child's stdin.
            self.writer.close();
            let _ = self.close_tx.send(true);
            self.running.finish().await;
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
#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, AsRawFd, OwnedFd};
    use std::sync::atomic::Ordering;

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
        impl crate::transport::Sink for Record {
            fn deliver(&self, d: crate::transport::Delivery<'_>) -> Result<crate::transport::Delivered> {
                if d.on_caller {
                    self.by_caller.fetch_add(1, Ordering::SeqCst);
                } else {
                    self.by_task.fetch_add(1, Ordering::SeqCst);
                }
                self.wake();
                Ok(crate::transport::Delivered::Done)
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
