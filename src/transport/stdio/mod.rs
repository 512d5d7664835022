//! The stdio transport: spawns the server as a child process and exchanges one
//! JSON-RPC message per line over its stdin and stdout.
//!
//! The child belongs to the transport. It runs in its own process group (a job
//! object on Windows: `child/`); on close its stdin is closed, then after a grace
//! period the group gets SIGTERM, then SIGKILL (on Windows the job is terminated),
//! and the child is always reaped. Its stderr is always drained.
//!
//! On Linux a caller blocked in a call reads its own response from the pipe
//! (`linux.rs`, with `reader`, `turns`, `writer` and `pipe`); elsewhere the
//! runtime's tasks read and write it (`portable.rs`).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::process::Command;

use super::SinkRef;
use crate::error::{Error, Status};

mod child;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod pipe;
#[cfg(not(target_os = "linux"))]
mod portable;
#[cfg(target_os = "linux")]
mod reader;
#[cfg(target_os = "linux")]
mod turns;
#[cfg(target_os = "linux")]
mod writer;

use child::*;
#[cfg(target_os = "linux")]
pub use linux::StdioTransport;
#[cfg(target_os = "linux")]
use pipe::*;
#[cfg(not(target_os = "linux"))]
pub use portable::StdioTransport;
#[cfg(target_os = "linux")]
use reader::*;
#[cfg(target_os = "linux")]
use writer::*;

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
    /// How long the child has to exit after its stdin closes, before SIGTERM (on
    /// Windows, before its job is terminated).
    pub close_grace: Duration,
    /// How long after SIGTERM before SIGKILL (Windows has no SIGTERM: unused).
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

/// The most read from a pipe at once.
pub(super) const READ_CHUNK: usize = 64 * 1024;

/// A message sent after the client began to close (an answer to a server request
/// that came in meanwhile): `MCPC_ERR_CLOSED`, as after close on every transport.
pub(super) fn closing() -> Error {
    Error::new(Status::MCPC_ERR_CLOSED, "the client is closing")
}

pub(super) fn too_long_error(too_long: crate::framing::LineTooLong) -> Error {
    Error::new(
        Status::MCPC_ERR_MESSAGE_TOO_LARGE,
        format!(
            "the server sent a message longer than the {} byte limit",
            too_long.limit
        ),
    )
}
