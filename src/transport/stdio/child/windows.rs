//! Starting the server on Windows: found with PATHEXT, created suspended with no
//! console window, placed in a job object and only then resumed, so that nothing
//! it starts escapes the job; terminating the job ends the whole tree.

use super::spawn_error;
use crate::error::Result;
use crate::sys::{resume_process, Job};
use crate::transport::stdio::StdioConfig;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use tokio::process::{Child, Command};
use windows_sys::Win32::System::Threading::{CREATE_NO_WINDOW, CREATE_SUSPENDED};

/// The server's job: it and everything it starts.
pub(in crate::transport::stdio) struct Tree(Job);

impl Tree {
    /// Windows has no request to stop that a process without a console gets
    /// (no SIGTERM): false, and the job is terminated after `close_grace`.
    pub(in crate::transport::stdio) fn ask_to_stop(&self) -> bool {
        false
    }

    pub(in crate::transport::stdio) fn kill(&self) {
        self.0.terminate();
    }
}

/// NTSTATUS values (a crash: an access violation is 0xC0000005) have the top two
/// bits set; an exit code from the program itself rarely does.
const NTSTATUS_ERROR: u32 = 0xC000_0000;

pub(in crate::transport::stdio) fn describe(status: Option<ExitStatus>) -> String {
    match status {
        None => "the server process is still running".into(),
        Some(s) => match s.code().map(|c| c as u32) {
            Some(code) if code & NTSTATUS_ERROR == NTSTATUS_ERROR => {
                format!("the server crashed (NTSTATUS 0x{code:08X})")
            }
            Some(code) => format!("the server exited with status {code}"),
            None => format!("the server ended ({s})"),
        },
    }
}

/// The extensions PATHEXT lists (as the child will see it), or Windows' default.
fn extensions(cfg: &StdioConfig) -> Vec<OsString> {
    let pathext = super::child_var(cfg, "PATHEXT")
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| ".COM;.EXE;.BAT;.CMD".into());
    pathext
        .to_string_lossy()
        .split(';')
        .filter(|e| e.starts_with('.') && e.len() > 1)
        .map(OsString::from)
        .collect()
}

/// `base` itself when it names a file with an extension, else `base` with the
/// first of `exts` that names a file (`npx` is `npx.cmd`; a file `npx` with no
/// extension, npm's shell script, is not a Windows program).
fn with_extension(base: &Path, exts: &[OsString]) -> Option<PathBuf> {
    if base.extension().is_some() && base.is_file() {
        return Some(base.to_path_buf());
    }
    exts.iter().find_map(|ext| {
        let mut name = base.as_os_str().to_owned();
        name.push(ext);
        let p = PathBuf::from(name);
        p.is_file().then_some(p)
    })
}

/// The program's full path: a path (with a separator or a drive), relative to the
/// working directory the child gets, as on Unix; or a name, searched on the
/// child's PATH; either with PATHEXT's extensions when it has none of its own.
/// Given to `Command` whole, so std sees a `.cmd` or `.bat` and runs it through
/// `cmd.exe` with its arguments quoted safely (or refuses them).
pub(super) fn find_program(cfg: &StdioConfig) -> Result<PathBuf> {
    let exts = extensions(cfg);
    let program = Path::new(&cfg.program);
    let is_path = cfg.program.to_string_lossy().contains(['/', '\\', ':']);
    if is_path {
        let full = match (&cfg.cwd, program.is_relative()) {
            (Some(dir), true) => dir.join(program),
            _ => program.to_path_buf(),
        };
        return with_extension(&full, &exts).ok_or_else(|| spawn_error(cfg, "no such program file"));
    }
    let path = super::child_var(cfg, "PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| !dir.as_os_str().is_empty())
        .find_map(|dir| with_extension(&dir.join(program), &exts))
        .ok_or_else(|| spawn_error(cfg, "not found in PATH (with PATHEXT)"))
}

/// Spawns the server suspended, puts it in a new job, then lets it run.
pub(super) fn spawn(mut cmd: Command, cfg: &StdioConfig) -> Result<(Child, Tree)> {
    let job = Job::new().map_err(|e| spawn_error(cfg, format!("cannot make a job object: {e}")))?;
    cmd.creation_flags(CREATE_NO_WINDOW | CREATE_SUSPENDED);
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        // std's refusal of a batch file argument cmd.exe would misread
        // (CVE-2024-24576): say which rule it broke.
        std::io::ErrorKind::InvalidInput => spawn_error(
            cfg,
            format!("an argument cannot be passed safely to a batch file through cmd.exe ({e})"),
        ),
        _ => spawn_error(cfg, e),
    })?;
    let placed = match (child.raw_handle(), child.id()) {
        (Some(handle), Some(pid)) => job.adopt(handle).and_then(|()| resume_process(pid)),
        _ => Err(std::io::Error::other("the process is gone")),
    };
    if let Err(e) = placed {
        // Never left suspended, nor running outside a job.
        let _ = child.start_kill();
        return Err(spawn_error(
            cfg,
            format!("cannot place the server in a job object: {e}"),
        ));
    }
    Ok((child, Tree(job)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::transport::stdio::StdioTransport;
    use crate::transport::{Delivered, Delivery, Outgoing, Sink};
    use std::sync::{mpsc, Arc, Mutex};
    use std::time::{Duration, Instant};

    /// A directory of its own under the temporary one, made afresh.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mcpc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn on_path(dir: &Path, program: &str) -> StdioConfig {
        let mut cfg = StdioConfig::new(program);
        let path = std::env::join_paths(
            std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
        )
        .unwrap();
        cfg.env.push(("Path".into(), Some(path)));
        cfg
    }

    /// `npx` is `npx.cmd`: the file with no extension beside it (npm's shell
    /// script) is not a program; PATHEXT from the child's environment decides.
    #[test]
    fn a_bare_name_finds_its_cmd_with_pathext() {
        let dir = scratch("pathext");
        std::fs::write(dir.join("npx"), "#!/bin/sh\n").unwrap();
        std::fs::write(dir.join("npx.cmd"), "@echo off\r\n").unwrap();
        let cfg = on_path(&dir, "npx");
        assert_eq!(find_program(&cfg).unwrap(), dir.join("npx.cmd"));
        let mut only_exe = on_path(&dir, "npx");
        only_exe.env.push(("PATHEXT".into(), Some(".EXE".into())));
        assert!(find_program(&only_exe).is_err());
        // A path is taken relative to the child's working directory.
        let mut relative = StdioConfig::new(r".\npx");
        relative.cwd = Some(dir.clone());
        assert_eq!(find_program(&relative).unwrap(), dir.join("npx.cmd"));
        assert!(find_program(&StdioConfig::new("mcpc-no-such-program")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }

    struct Lines(Mutex<mpsc::Sender<Vec<u8>>>);

    impl Sink for Lines {
        fn deliver(&self, d: Delivery<'_>) -> crate::error::Result<Delivered> {
            let _ = self.0.lock().unwrap().send(d.msg.to_vec());
            Ok(Delivered::Done)
        }
        fn fail_request(&self, _id: i64, _err: Error) {}
        fn is_pending(&self, _id: i64) -> bool {
            true
        }
        fn closed(&self, _err: Error) {}
    }

    /// A server that is a batch file found on PATH: its lines come back, and at
    /// close one that ignores its stdin closing is ended after the grace period.
    #[test]
    fn a_batch_server_answers_and_is_ended_at_close() {
        let dir = scratch("batch");
        // Echoes each line; at the end of its input, waits (as a server that
        // ignores stdin closing) until its job is terminated. (`echo %line%`:
        // Wine's cmd.exe prints the `(` of `echo(`.)
        let script = "@echo off\r\n:loop\r\nset \"line=\"\r\nset /p line=\r\nif not defined line goto hang\r\n\
                      echo %line%\r\ngoto loop\r\n:hang\r\ngoto hang\r\n";
        std::fs::write(dir.join("echo-server.cmd"), script).unwrap();
        let mut cfg = on_path(&dir, "echo-server");
        cfg.close_grace = Duration::from_millis(500);
        let (tx, lines) = mpsc::channel();
        let sink = Arc::new(Lines(Mutex::new(tx)));
        let transport = {
            let _runtime = crate::drive::runtime::handle().enter();
            StdioTransport::spawn(cfg, sink.clone()).expect("the batch file starts")
        };
        transport
            .send(Outgoing::response(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_vec()))
            .unwrap();
        assert_eq!(
            lines.recv_timeout(Duration::from_secs(20)).expect("a line back"),
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#
        );
        let t0 = Instant::now();
        crate::drive::runtime::block_on(transport.close()).unwrap();
        let took = t0.elapsed();
        assert!(
            took >= Duration::from_millis(500) && took < Duration::from_secs(10),
            "the job was terminated after the grace ({took:?})"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
