//! The child process: checks before spawning, stderr, supervision of its exit and
//! the shutdown sequence at close.

use super::SinkRef;
use super::*;
use crate::error::{Error, Result, Status};
use crate::sys::{signal_group, Sig};
use std::process::ExitStatus;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr};
use tokio::sync::watch;

/// After stdout ends, how long to wait for the exit status to name it in the error.
pub(super) const EXIT_STATUS_WAIT: Duration = Duration::from_millis(200);

pub(super) fn describe(status: Option<ExitStatus>) -> String {
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
pub(super) fn check_spawnable(cfg: &StdioConfig) -> Result<()> {
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

/// Waits briefly for the child's exit status, to name it in an error.
pub(super) async fn exit_status_soon(exit_rx: &mut watch::Receiver<Option<ExitStatus>>) -> Option<ExitStatus> {
    tokio::time::timeout(EXIT_STATUS_WAIT, exit_rx.wait_for(Option::is_some))
        .await
        .ok()
        .and_then(|r| r.ok().and_then(|s| *s))
}

pub(super) async fn stderr_loop(mut stderr: ChildStderr, cb: StderrFn, max: usize) {
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
pub(super) async fn supervise(
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

pub(super) async fn shutdown(child: &mut Child, pgid: u32, cfg: &StdioConfig) -> Option<ExitStatus> {
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
