//! The few operating-system calls the core needs, through safe wrappers.

use nix::sys::signal::{killpg, pthread_sigmask, SigSet, SigmaskHow, Signal};
use nix::unistd::Pid;

/// Blocks SIGPIPE on the calling thread, so that a write to a pipe whose reader
/// has gone returns EPIPE instead of killing the host process. Called on every
/// runtime thread at start; all pipe writes happen on those threads.
pub fn block_sigpipe_on_this_thread() {
    let mut set = SigSet::empty();
    set.add(Signal::SIGPIPE);
    let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
}

/// Sends `sig` to the process group `pgid`. Errors (group gone) are ignored.
pub fn signal_group(pgid: u32, sig: Signal) {
    if let Ok(pid) = i32::try_from(pgid) {
        if pid > 1 {
            let _ = killpg(Pid::from_raw(pid), sig);
        }
    }
}

pub use nix::sys::signal::Signal as Sig;

/// Makes a spawned server start with no blocked signals, whatever the host's
/// thread had blocked (a host that handles Ctrl-C on a sigwait thread blocks
/// SIGINT and SIGTERM, and a child would inherit that and ignore our SIGTERM).
pub fn unblock_signals_in_child(cmd: &mut tokio::process::Command) {
    #[allow(unsafe_code)]
    // SAFETY: the closure runs in the child between fork and exec, and only calls
    // sigprocmask, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)
                .map_err(std::io::Error::from)
        });
    }
}
