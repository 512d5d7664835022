//! Starting the server on Unix: found on PATH, in a process group of its own
//! whose signals end it, with no blocked signals.

use super::spawn_error;
use crate::error::Result;
use crate::sys::{signal_group, Sig};
use crate::transport::stdio::StdioConfig;
use std::ffi::OsString;
use std::process::ExitStatus;
use tokio::process::{Child, Command};

/// The server's process group.
pub(in crate::transport::stdio) struct Tree(u32);

impl Tree {
    /// SIGTERM to the group: true, as there is such a request here.
    pub(in crate::transport::stdio) fn ask_to_stop(&self) -> bool {
        signal_group(self.0, Sig::SIGTERM);
        true
    }

    pub(in crate::transport::stdio) fn kill(&self) {
        signal_group(self.0, Sig::SIGKILL);
    }
}

pub(in crate::transport::stdio) fn describe(status: Option<ExitStatus>) -> String {
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

/// Checks that the program exists and is executable (a path with a `/`, relative
/// to the working directory the child gets, or a name on the child's PATH), and
/// gives it back as it was given: exec finds it the same way.
pub(super) fn find_program(cfg: &StdioConfig) -> Result<OsString> {
    use std::os::unix::fs::PermissionsExt;
    let is_executable =
        |p: &std::path::Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    let program = std::path::Path::new(&cfg.program);
    if cfg.program.as_encoded_bytes().contains(&b'/') {
        let full = match (&cfg.cwd, program.is_relative()) {
            (Some(dir), true) => dir.join(program),
            _ => program.to_path_buf(),
        };
        return if is_executable(&full) {
            Ok(cfg.program.clone())
        } else {
            Err(spawn_error(cfg, "no such executable file"))
        };
    }
    let path = super::child_var(cfg, "PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program))) {
        Ok(cfg.program.clone())
    } else {
        Err(spawn_error(cfg, "not found in PATH"))
    }
}

/// Spawns the server as the leader of a new process group.
pub(super) fn spawn(mut cmd: Command, cfg: &StdioConfig) -> Result<(Child, Tree)> {
    cmd.process_group(0);
    crate::sys::unblock_signals_in_child(&mut cmd);
    let child = cmd.spawn().map_err(|e| spawn_error(cfg, e))?;
    let pgid = child.id().unwrap_or(0);
    Ok((child, Tree(pgid)))
}
