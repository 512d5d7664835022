//! The child process: starting it in a group of its own (a process group on Unix,
//! a job object on Windows: `unix.rs`, `windows.rs`), stderr, supervision of its
//! exit and the shutdown sequence at close.

use super::SinkRef;
use super::*;
use crate::error::{Error, Result, Status};
use std::process::ExitStatus;
use std::sync::Mutex;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr};
use tokio::sync::watch;
use tokio::task::JoinHandle;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as os;
#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as os;

pub(super) use os::describe;
use os::Tree;

/// What runs beside a server: the transport's tasks (its reader's and writer's,
/// and the stderr one added here) and the supervisor, which runs the shutdown
/// sequence. One for both transports (`linux.rs`, `portable.rs`).
pub(super) struct Running {
    tasks: Mutex<Vec<JoinHandle<()>>>,
    supervisor: Mutex<Option<JoinHandle<()>>>,
}

impl Running {
    /// Adds the stderr task (when its lines go to a callback) to the transport's
    /// `tasks`, and spawns the supervisor ([`supervise`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn start(
        mut tasks: Vec<JoinHandle<()>>,
        mut child: Child,
        tree: Tree,
        cfg: &StdioConfig,
        sink: SinkRef,
        exit_tx: watch::Sender<Option<ExitStatus>>,
        close_rx: watch::Receiver<bool>,
        read_done: watch::Receiver<bool>,
    ) -> Running {
        if let (Some(err), StderrMode::Lines(cb)) = (child.stderr.take(), &cfg.stderr) {
            tasks.push(tokio::spawn(stderr_loop(err, cb.clone(), cfg.max_message_size)));
        }
        let supervisor = tokio::spawn(supervise(child, tree, cfg.clone(), sink, exit_tx, close_rx, read_done));
        Running {
            tasks: Mutex::new(tasks),
            supervisor: Mutex::new(Some(supervisor)),
        }
    }

    /// Once the close is signalled: waits for the shutdown sequence, then ends the
    /// tasks.
    pub(super) async fn finish(&self) {
        let supervisor = self.supervisor.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(s) = supervisor {
            let _ = s.await;
        }
        let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|p| p.into_inner()));
        for t in tasks {
            t.abort();
            let _ = t.await;
        }
    }
}

/// After stdout ends, how long to wait for the exit status to name it in the error.
pub(super) const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

/// MCPC_ERR_SPAWN, naming the program.
pub(super) fn spawn_error(cfg: &StdioConfig, why: impl std::fmt::Display) -> Error {
    Error::new(
        Status::MCPC_ERR_SPAWN,
        format!("cannot start {:?}: {why}", cfg.program.to_string_lossy()),
    )
}

/// Starts the server with piped stdin and stdout, in a group of its own that
/// [`supervise`] ends. The program is found first (on PATH as the child will see
/// it, and with PATHEXT on Windows), so a mistake gives a clear MCPC_ERR_SPAWN on
/// every platform and under every tool (valgrind, for one, lets a failed exec look
/// like a child that exits at once).
pub(super) fn start(cfg: &StdioConfig) -> Result<(Child, Tree)> {
    if let Some(dir) = &cfg.cwd {
        if !dir.is_dir() {
            return Err(spawn_error(
                cfg,
                format!("working directory {dir:?} is not a directory"),
            ));
        }
    }
    let mut cmd = Command::new(os::find_program(cfg)?);
    cmd.args(&cfg.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(match cfg.stderr {
            StderrMode::Inherit => Stdio::inherit(),
            StderrMode::Discard => Stdio::null(),
            StderrMode::Lines(_) => Stdio::piped(),
        })
        .kill_on_drop(true);
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
    os::spawn(cmd, cfg)
}

/// The PATH the child will see: the options may set, remove or clear it.
pub(super) fn child_var(cfg: &StdioConfig, name: &str) -> Option<OsString> {
    // Windows' variable names are case-insensitive.
    let same = |k: &OsString| {
        if cfg!(windows) {
            k.eq_ignore_ascii_case(name)
        } else {
            k == name
        }
    };
    match cfg.env.iter().rev().find(|(k, _)| same(k)) {
        Some((_, v)) => v.clone(),
        None if cfg.clear_env => None,
        None => std::env::var_os(name),
    }
}

/// Waits briefly for the child's exit status, to name it in an error.
pub(super) async fn exit_status_soon(exit_rx: &mut watch::Receiver<Option<ExitStatus>>) -> Option<ExitStatus> {
    tokio::time::timeout(EXIT_STATUS_WAIT, exit_rx.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|s| *s))
}

/// The most read from a server's stderr at once: its lines are few and short, and a
/// host keeps one such buffer a server.
const STDERR_CHUNK: usize = 4 * 1024;

pub(super) async fn stderr_loop(mut stderr: ChildStderr, cb: StderrFn, max: usize) {
    let mut buf = vec![0u8; STDERR_CHUNK];
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
pub(super) async fn supervise(
    mut child: Child,
    tree: Tree,
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
            let status = shutdown(&mut child, &tree, &cfg).await;
            let _ = exit_tx.send(status);
        }
    }
    // Whatever the leader did, its group (grandchildren) goes too.
    tree.kill();
}

/// Stdin is closed already: the child has `close_grace` to exit, then it is asked
/// to stop (SIGTERM to its group, where there is such a request) and has
/// `term_grace`, then its whole group is killed.
pub(super) async fn shutdown(child: &mut Child, tree: &Tree, cfg: &StdioConfig) -> Option<ExitStatus> {
    if let Ok(Ok(s)) = tokio::time::timeout(cfg.close_grace, child.wait()).await {
        return Some(s);
    }
    if tree.ask_to_stop() {
        if let Ok(Ok(s)) = tokio::time::timeout(cfg.term_grace, child.wait()).await {
            return Some(s);
        }
    }
    tree.kill();
    let _ = child.start_kill();
    child.wait().await.ok()
}
