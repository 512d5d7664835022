//! `mcpc_call_opts_t`: the per-call settings, read by every call (its versions: the
//! struct grows at its end), with the progress callback and the task fields.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;
use std::time::Duration;

use super::boundary::{boundary, c_message, status};
use super::cancel::mcpc_cancel_t;
use super::ptr;
use crate::client::tasks::{TaskControl, TaskEvent, TaskMode, TaskReply};
use crate::client::Control;
use crate::error::mcpc_status_t;
use crate::error::{Error, Result, Status};

/// Receives progress for a call: `progress` (increasing), `total` (negative when the
/// server gave none) and `message` (NUL-terminated, NULL when absent, borrowed for the
/// duration of the call). Runs on an mcpc thread; calls for one request never overlap.
/// It must not block for long; blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_progress_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, progress: f64, total: f64, message: *const c_char)>;

/// Per-call settings. Initialise with `mcpc_call_opts_init_sized(&opts, sizeof opts)`,
/// then set what you need; NULL in place of the struct means all defaults. The struct
/// is read during the call only; the caller keeps ownership.
///
/// The struct grows at its end, never in between: a later version of mcpc may add
/// fields after the last one. `struct_size` says how much of it the caller knows.
/// Fields past it read as their defaults, so a program built against an older header
/// keeps working with a newer library; a program built against a newer header works
/// with an older library as long as it leaves the fields that library does not know
/// at their defaults (zero), else the call fails with MCPC_ERR_INVALID_ARG.
#[repr(C)]
pub struct mcpc_call_opts_t {
    /// The size of the struct as the caller's header defines it: set by
    /// mcpc_call_opts_init_sized. The smallest accepted is the first version's (56
    /// bytes on 64-bit platforms), which mcpc_call_opts_init writes.
    pub struct_size: u32,
    /// Timeout in milliseconds; 0 means the client's default. Negative is invalid.
    pub timeout_ms: i64,
    /// Cancellation handle (may be NULL); triggering it from any thread cancels the call.
    pub cancel: *const mcpc_cancel_t,
    /// Progress callback (may be NULL). Asking for progress adds a progress token to the request.
    pub on_progress: mcpc_progress_cb,
    /// Passed to `on_progress`; must stay valid until the call returns.
    pub progress_userdata: *mut c_void,
    /// When true, each progress notification restarts the timeout...
    pub reset_timeout_on_progress: bool,
    /// ...but never past this many milliseconds in total (0: no total limit).
    pub max_total_ms: i64,
    // The second version (tasks), after mcpc 0.1.0.
    /// Whether the call may run as a task: MCPC_TASK_ALLOW (0, the default),
    /// MCPC_TASK_FORBID, MCPC_TASK_PREFER or MCPC_TASK_REQUIRE (see docs/client.md, Tasks).
    pub task_mode: i32,
    /// How long following a task may take in all, in milliseconds from the start of
    /// the call; 0: the call's timeout covers the task too. Each request to the
    /// server keeps the call's timeout. Negative is invalid.
    pub task_timeout_ms: i64,
    /// Task callback (may be NULL): each status change of the call's task, with the
    /// task's reference.
    pub on_task: mcpc_task_cb,
    /// Passed to `on_task`; must stay valid until the call completes.
    pub task_userdata: *mut c_void,
}

struct ProgressTarget {
    cb: unsafe extern "C" fn(*mut c_void, f64, f64, *const c_char),
    userdata: *mut c_void,
}
// SAFETY: the header documents that the progress callback runs on an mcpc thread
// with the caller's userdata, valid until the call returns.
unsafe impl Send for ProgressTarget {}
// SAFETY: as above; mcpc never dereferences the userdata.
unsafe impl Sync for ProgressTarget {}

impl ProgressTarget {
    fn call(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let message = message.map(super::boundary::c_message);
        let mptr = message.as_ref().map_or(std::ptr::null(), |m| m.as_ptr());
        // SAFETY: the caller's callback and userdata, valid during the call.
        unsafe { (self.cb)(self.userdata, progress, total.unwrap_or(-1.0), mptr) }
    }
}

/// The size of mcpc_call_opts_t in its first version (the fields up to
/// `max_total_ms`): what mcpc_call_opts_init writes, and the smallest accepted.
const CALL_OPTS_FIRST: usize = std::mem::offset_of!(mcpc_call_opts_t, max_total_ms) + std::mem::size_of::<i64>();

/// Larger than any header's struct could be: a `struct_size` past it is garbage (an
/// uninitialised struct), not a newer program.
const CALL_OPTS_MAX: usize = 4096;

fn call_opts_defaults(struct_size: u32) -> mcpc_call_opts_t {
    mcpc_call_opts_t {
        struct_size,
        timeout_ms: 0,
        cancel: std::ptr::null(),
        on_progress: None,
        progress_userdata: std::ptr::null_mut(),
        reset_timeout_on_progress: false,
        max_total_ms: 0,
        task_mode: MCPC_TASK_ALLOW,
        task_timeout_ms: 0,
        on_task: None,
        task_userdata: std::ptr::null_mut(),
    }
}

/// The caller's call options as this library's struct: the fields within the caller's
/// `struct_size` copied, the rest at their defaults; the bytes of a larger struct that
/// this library does not know must be zero.
///
/// # Safety
/// `opts` points to at least `struct_size` readable bytes (its first field).
unsafe fn read_call_opts(opts: *const mcpc_call_opts_t) -> Result<mcpc_call_opts_t> {
    // SAFETY: every version of the struct starts with `struct_size`.
    let size = unsafe { std::ptr::addr_of!((*opts).struct_size).read_unaligned() } as usize;
    if !(CALL_OPTS_FIRST..=CALL_OPTS_MAX).contains(&size) {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!(
                "mcpc_call_opts_t.struct_size is {size}, not the size of any version of the struct; \
                 initialise it with mcpc_call_opts_init_sized(&opts, sizeof opts)"
            ),
        ));
    }
    let known = std::mem::size_of::<mcpc_call_opts_t>();
    let bytes = opts.cast::<u8>();
    if size > known {
        // SAFETY: the caller's struct holds `size` bytes (its contract).
        let unknown = unsafe { std::slice::from_raw_parts(bytes.add(known), size - known) };
        if unknown.iter().any(|&b| b != 0) {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!(
                    "mcpc_call_opts_t sets fields this version of mcpc does not know (struct_size {size}, \
                     known {known}); leave them zero or use a newer libmcpc"
                ),
            ));
        }
    }
    let mut out = call_opts_defaults(size as u32);
    // SAFETY: both hold at least `size.min(known)` bytes, and a prefix of the struct is
    // the same fields in every version.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes, std::ptr::addr_of_mut!(out).cast::<u8>(), size.min(known));
    }
    Ok(out)
}

/// Reads call options into a core `Control`.
///
/// # Safety
/// `opts` is NULL or a valid, initialised mcpc_call_opts_t; its cancel handle is NULL or live.
pub(super) unsafe fn control_from(opts: *const mcpc_call_opts_t) -> Result<Control> {
    if opts.is_null() {
        return Ok(Control::default());
    }
    // SAFETY: per the contract.
    let o = unsafe { read_call_opts(opts) }?;
    if o.timeout_ms < 0 || o.max_total_ms < 0 || o.task_timeout_ms < 0 {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            "timeout_ms, max_total_ms and task_timeout_ms must not be negative",
        ));
    }
    let mut ctl = Control {
        timeout: (o.timeout_ms > 0).then(|| Duration::from_millis(o.timeout_ms as u64)),
        reset_on_progress: o.reset_timeout_on_progress,
        max_total: (o.max_total_ms > 0).then(|| Duration::from_millis(o.max_total_ms as u64)),
        task: task_control(&o)?,
        ..Control::default()
    };
    if !o.cancel.is_null() {
        // SAFETY: a live cancel handle per the contract.
        ctl.cancel = Some(unsafe { ptr::get(o.cancel) }?.clone());
    }
    if let Some(cb) = o.on_progress {
        let target = ProgressTarget {
            cb,
            userdata: o.progress_userdata,
        };
        ctl.progress = Some(Arc::new(
            move |progress: f64, total: Option<f64>, message: Option<&str>| target.call(progress, total, message),
        ));
    }
    Ok(ctl)
}

/// Fills `opts` with the defaults as the struct's first version has them (client
/// timeout, no cancel, no progress) and sets `struct_size` to that version's size.
/// Fields added to the struct later are left as they are, and read as their defaults:
/// a program that sets one must initialise with mcpc_call_opts_init_sized instead.
/// Does nothing for NULL.
/// Threads: any thread.
///
/// # Safety
/// `opts` is NULL or points to writable memory for the struct's first version.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_call_opts_init(opts: *mut mcpc_call_opts_t) {
    boundary("mcpc_call_opts_init", || {
        if !opts.is_null() {
            let init = call_opts_defaults(CALL_OPTS_FIRST as u32);
            // SAFETY: writable for the first version's size per the contract; the
            // first version is this struct's prefix.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    std::ptr::addr_of!(init).cast::<u8>(),
                    opts.cast::<u8>(),
                    CALL_OPTS_FIRST,
                )
            };
        }
    })
}

/// Fills the caller's `size` bytes at `opts` with the defaults (client timeout, no
/// cancel, no progress; every field this library does not know zeroed) and sets
/// `struct_size` to `size`. Pass `sizeof` of the struct as your header defines it:
/// `mcpc_call_opts_init_sized(&opts, sizeof opts)`.
/// Ownership: `opts` stays the caller's.
/// Threads: any thread.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, or `size` smaller than the struct's first
/// version or larger than any version could be).
///
/// # Safety
/// `opts` is NULL or points to `size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_call_opts_init_sized(opts: *mut mcpc_call_opts_t, size: usize) -> mcpc_status_t {
    status("mcpc_call_opts_init_sized", || {
        if opts.is_null() {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "opts is NULL"));
        }
        if !(CALL_OPTS_FIRST..=CALL_OPTS_MAX).contains(&size) {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!("size {size} is not the size of any version of mcpc_call_opts_t"),
            ));
        }
        let init = call_opts_defaults(size as u32);
        let known = std::mem::size_of::<mcpc_call_opts_t>();
        // SAFETY: `size` writable bytes per the contract.
        unsafe {
            std::ptr::write_bytes(opts.cast::<u8>(), 0, size);
            std::ptr::copy_nonoverlapping(
                std::ptr::addr_of!(init).cast::<u8>(),
                opts.cast::<u8>(),
                size.min(known),
            );
        }
        Ok(Status::MCPC_OK)
    })
}

/// `mcpc_call_opts_t.task_mode`: a task only where one is needed (a tool that
/// requires one; under 2026-07-28, as the host declared the tasks extension).
pub const MCPC_TASK_ALLOW: i32 = 0;
/// `mcpc_call_opts_t.task_mode`: never a task.
pub const MCPC_TASK_FORBID: i32 = 1;
/// `mcpc_call_opts_t.task_mode`: a task wherever the tool or the server allows one.
pub const MCPC_TASK_PREFER: i32 = 2;
/// `mcpc_call_opts_t.task_mode`: a task, or MCPC_ERR_NOT_SUPPORTED before anything
/// is sent when the server (or, under 2025-11-25, the tool) cannot run one.
pub const MCPC_TASK_REQUIRE: i32 = 3;

/// What an mcpc_task_cb returns: go on following the task.
pub const MCPC_TASK_FOLLOW: i32 = 0;
/// What an mcpc_task_cb returns: stop following the task and leave it running on the
/// server; the call ends with MCPC_ERR_TASK_DETACHED, and the reference the callback
/// was given resumes it (mcpc_client_resume_task). Ignored for a terminal status.
pub const MCPC_TASK_DETACH: i32 = 1;

/// Receives each status change of the task a call became: when the server creates it
/// and whenever its status changes. `reference_json` is the task's reference (a JSON
/// object: `endpointId`, `generation` "v1" or "v2", `taskId`, `originalOperation`),
/// to keep for mcpc_client_resume_task; `status` is one of "working",
/// "input_required", "completed", "failed", "cancelled"; `message` the server's
/// status message or NULL. All three are borrowed for the duration of the callback.
/// Returns MCPC_TASK_FOLLOW or MCPC_TASK_DETACH.
/// Threads: runs on the thread that follows the task (the caller's own during a
/// blocking call, an mcpc thread otherwise); calls for one call never overlap. It
/// must not block for long; blocking mcpc calls from it return
/// MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_task_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        reference_json: *const c_char,
        status: *const c_char,
        message: *const c_char,
    ) -> i32,
>;

struct TaskTarget {
    cb: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *const c_char) -> i32,
    userdata: *mut c_void,
}
// SAFETY: the header documents that the task callback may run on an mcpc thread with
// the caller's userdata, valid until the call completes.
unsafe impl Send for TaskTarget {}
// SAFETY: as above; mcpc never dereferences the userdata.
unsafe impl Sync for TaskTarget {}

impl TaskTarget {
    fn call(&self, event: &TaskEvent<'_>) -> TaskReply {
        let reference = c_message(event.reference);
        let status = CString::new(event.status.as_str()).expect("a status has no NUL");
        let message = event.message.map(c_message);
        let mptr = message.as_ref().map_or(std::ptr::null(), |m| m.as_ptr());
        // SAFETY: the caller's callback and userdata, valid during the call.
        let reply = unsafe { (self.cb)(self.userdata, reference.as_ptr(), status.as_ptr(), mptr) };
        if reply == MCPC_TASK_DETACH {
            TaskReply::Detach
        } else {
            TaskReply::Follow
        }
    }
}

/// The task settings of call options read by `control_from`.
fn task_control(o: &mcpc_call_opts_t) -> Result<TaskControl> {
    let mode = match o.task_mode {
        MCPC_TASK_ALLOW => TaskMode::Allow,
        MCPC_TASK_FORBID => TaskMode::Forbid,
        MCPC_TASK_PREFER => TaskMode::Prefer,
        MCPC_TASK_REQUIRE => TaskMode::Require,
        other => {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!(
                    "mcpc_call_opts_t.task_mode is {other}, not one of MCPC_TASK_ALLOW, _FORBID, _PREFER, _REQUIRE"
                ),
            ))
        }
    };
    let on_task = o.on_task.map(|cb| {
        let target = TaskTarget {
            cb,
            userdata: o.task_userdata,
        };
        Arc::new(move |event: &TaskEvent<'_>| target.call(event)) as crate::client::tasks::TaskFn
    });
    Ok(TaskControl {
        mode,
        timeout: (o.task_timeout_ms > 0).then(|| Duration::from_millis(o.task_timeout_ms as u64)),
        on_task,
    })
}
