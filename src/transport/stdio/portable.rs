//! The stdio transport where a caller's thread does not read the pipe itself
//! (every platform but Linux, Windows among them): the runtime's tasks read the
//! server's stdout and write its stdin through tokio's pipes, and a caller blocked
//! in a call sleeps until its response is delivered. The same results as Linux's
//! `linux.rs`, with one hand-off between threads more per call.

use std::process::ExitStatus;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};

use super::*;
use crate::error::Result;
use crate::framing::LineFramer;
use crate::transport::{BoxFuture, Delivered, Delivery, Outgoing, Transport};

pub struct StdioTransport {
    /// Messages (with their `\n`) for the writer task, in order.
    out: mpsc::UnboundedSender<Vec<u8>>,
    close_tx: watch::Sender<bool>,
    running: Running,
}

fn stdin_closed() -> Error {
    Error::new(Status::MCPC_ERR_TRANSPORT, "the server's stdin is closed")
}

impl StdioTransport {
    /// Spawns the server. Must run inside the runtime.
    pub fn spawn(cfg: StdioConfig, sink: SinkRef) -> Result<Arc<dyn Transport>> {
        let (mut child, tree) = start(&cfg)?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (out, out_rx) = mpsc::unbounded_channel();
        let (exit_tx, exit_rx) = watch::channel::<Option<ExitStatus>>(None);
        let (close_tx, close_rx) = watch::channel(false);
        let (read_done_tx, read_done_rx) = watch::channel(false);
        let mut tasks = vec![tokio::spawn(write_loop(
            stdin,
            out_rx,
            sink.clone(),
            close_rx.clone(),
            exit_rx.clone(),
        ))];
        let (replies, read_sink, max) = (out.clone(), sink.clone(), cfg.max_message_size);
        tasks.push(tokio::spawn(async move {
            read_loop(stdout, read_sink, replies, max, exit_rx).await;
            let _ = read_done_tx.send(true);
        }));
        let running = Running::start(tasks, child, tree, &cfg, sink, exit_tx, close_rx, read_done_rx);
        Ok(Arc::new(StdioTransport { out, close_tx, running }))
    }
}

impl Transport for StdioTransport {
    fn probe_kind(&self) -> crate::transport::ProbeKind {
        crate::transport::ProbeKind::Stream { restartable: true }
    }

    fn send(&self, msg: Outgoing) -> Result<()> {
        if *self.close_tx.borrow() {
            return Err(super::closing());
        }
        let mut body = msg.body;
        body.push(b'\n');
        self.out.send(body).map_err(|_| stdin_closed())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // The writer drains what is queued, then closes the child's stdin.
            let _ = self.close_tx.send(true);
            self.running.finish().await;
        })
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // Without close(), the runtime still reaps: the writer closes stdin, the
        // supervisor runs the shutdown sequence, and the tasks end with their pipes.
        let _ = self.close_tx.send(true);
    }
}

/// Writes what is queued, gathered into one write, as it comes; at close, what is
/// left, then drops stdin (the child reads EOF).
async fn write_loop(
    mut stdin: ChildStdin,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    sink: SinkRef,
    mut close_rx: watch::Receiver<bool>,
    mut exit_rx: watch::Receiver<Option<ExitStatus>>,
) {
    let mut batch = Vec::new();
    loop {
        let closing = tokio::select! {
            biased;
            msg = rx.recv() => match msg {
                Some(m) => {
                    batch = m;
                    false
                }
                None => true,
            },
            _ = close_rx.wait_for(|c| *c) => true,
        };
        while let Ok(m) = rx.try_recv() {
            batch.extend_from_slice(&m);
        }
        if !batch.is_empty() {
            // Flushed each time: tokio's pipe on Windows writes from a blocking
            // thread, and says it is done only when flushed.
            let written = match stdin.write_all(&batch).await {
                Ok(()) => stdin.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                let status = exit_status_soon(&mut exit_rx).await;
                rx.close();
                sink.closed(Error::new(
                    Status::MCPC_ERR_TRANSPORT,
                    format!("writing to the server failed: {e} ({})", describe(status)),
                ));
                return;
            }
            batch.clear();
        }
        if closing {
            return;
        }
    }
}

/// Reads the server's stdout and hands each line to the sink, in order; answers
/// the server's requests through the writer.
async fn read_loop(
    mut stdout: ChildStdout,
    sink: SinkRef,
    replies: mpsc::UnboundedSender<Vec<u8>>,
    max: usize,
    mut exit_rx: watch::Receiver<Option<ExitStatus>>,
) {
    let mut framer = LineFramer::new(max);
    let mut buf = vec![0u8; READ_CHUNK];
    let failed = loop {
        let n = match stdout.read(&mut buf).await {
            Ok(0) => break None,
            Ok(n) => n,
            Err(e) => {
                break Some(Error::new(
                    Status::MCPC_ERR_TRANSPORT,
                    format!("reading from the server failed: {e}"),
                ))
            }
        };
        let fed = framer.feed(&buf[..n], |line, whole| {
            if let Ok(Delivered::Reply(mut reply)) = sink.deliver(Delivery::any(line, whole)) {
                reply.body.push(b'\n');
                let _ = replies.send(reply.body);
            }
        });
        if let Err(too_long) = fed {
            break Some(too_long_error(too_long));
        }
    };
    let err = match failed {
        Some(e) => e,
        None => {
            let status = exit_status_soon(&mut exit_rx).await;
            let partial = if framer.pending() > 0 {
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
    sink.closed(err);
}
