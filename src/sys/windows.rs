//! The Windows calls the core needs, through safe wrappers, under the names of
//! `sys/unix.rs` where they make sense. Windows has no SIGPIPE and no signals to
//! block: a write to a pipe with no reader fails with an error. A stdio server and
//! everything it starts run in a job object ([`Job`]), Windows' process group.

use std::cell::Cell;
use std::io;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, INVALID_HANDLE_VALUE};
use windows_sys::Win32::System::Diagnostics::ToolHelp::{
    CreateToolhelp32Snapshot, Thread32First, Thread32Next, TH32CS_SNAPTHREAD, THREADENTRY32,
};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation, SetInformationJobObject,
    TerminateJobObject, JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{OpenThread, ResumeThread, THREAD_SUSPEND_RESUME};

thread_local! {
    static MCPC_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Marks the calling thread as one of the runtime's (Windows has no SIGPIPE to
/// block). Called on every runtime thread at start.
pub fn block_sigpipe_on_this_thread() {
    MCPC_THREAD.with(|b| b.set(true));
}

/// True on the runtime's own threads; false on a host's thread, also while it
/// blocks in a call or runs a callback.
pub fn on_mcpc_thread() -> bool {
    MCPC_THREAD.with(|b| b.get())
}

/// The events a caller's thread may wait for on a socket, under POSIX's names.
/// Only Linux's callers wait on a socket themselves (`drive/park.rs`); here the
/// names keep `drive/here.rs` the same on every platform.
/// (An enum, not constants: cbindgen would take those for the header's.)
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollFlags {
    POLLIN,
    POLLOUT,
}

/// A socket, under the names `drive/here.rs` uses for a descriptor.
pub use std::os::windows::io::{BorrowedSocket as BorrowedFd, RawSocket as RawFd};

/// The exit code a server's processes get when their job is terminated.
pub const TERMINATED: u32 = 1;

/// A job object whose processes are all killed when it is terminated or its last
/// handle closes (`JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`): a server and everything it
/// starts, also if the host process dies without closing the client. The handle
/// is not inherited, so a server cannot keep its own job alive.
pub struct Job(OwnedHandle);

impl Job {
    pub fn new() -> io::Result<Job> {
        #[allow(unsafe_code)]
        // SAFETY: no security attributes (NULL: a handle children do not inherit)
        // and no name; the returned handle, checked for NULL, is owned from here.
        let job = unsafe {
            let h = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if h.is_null() {
                return Err(io::Error::last_os_error());
            }
            Job(OwnedHandle::from_raw_handle(h as RawHandle))
        };
        #[allow(unsafe_code)]
        // SAFETY: a plain C structure of integers, for which all zeroes is valid
        // (no limits).
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        #[allow(unsafe_code)]
        // SAFETY: the job's handle is open; `limits` is the structure this class
        // of information takes, outlives the call, and its size is given.
        let ok = unsafe {
            SetInformationJobObject(
                job.handle(),
                JobObjectExtendedLimitInformation,
                std::ptr::from_ref(&limits).cast(),
                std::mem::size_of_val(&limits) as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    fn handle(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }

    /// Puts a process in the job; what it starts from then on is in the job too.
    pub fn adopt(&self, process: RawHandle) -> io::Result<()> {
        #[allow(unsafe_code)]
        // SAFETY: both handles are open for the call (the job's is owned here, the
        // process's by the caller's child value).
        let ok = unsafe { AssignProcessToJobObject(self.handle(), process as HANDLE) };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Kills every process in the job. Errors (all gone already) are ignored.
    pub fn terminate(&self) {
        #[allow(unsafe_code)]
        // SAFETY: the job's handle is open for the call.
        unsafe {
            TerminateJobObject(self.handle(), TERMINATED);
        }
    }
}

/// Resumes the threads of process `pid`, created suspended (one thread, its
/// first), once it is in its job: so it cannot start a process outside the job.
pub fn resume_process(pid: u32) -> io::Result<()> {
    #[allow(unsafe_code)]
    // SAFETY: the snapshot handle is checked and closed here; `entry` is a valid
    // THREADENTRY32 with its size set, as Thread32First/Next require; each thread
    // handle opened is checked and closed after ResumeThread.
    unsafe {
        let snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
        if snap == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        let mut entry: THREADENTRY32 = std::mem::zeroed();
        entry.dwSize = std::mem::size_of::<THREADENTRY32>() as u32;
        let mut resumed = 0;
        let mut more = Thread32First(snap, &mut entry) != 0;
        while more {
            if entry.th32OwnerProcessID == pid {
                let thread = OpenThread(THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID);
                if !thread.is_null() {
                    if ResumeThread(thread) != u32::MAX {
                        resumed += 1;
                    }
                    CloseHandle(thread);
                }
            }
            more = Thread32Next(snap, &mut entry) != 0;
        }
        let err = io::Error::last_os_error();
        CloseHandle(snap);
        if resumed == 0 {
            return Err(err);
        }
    }
    Ok(())
}
