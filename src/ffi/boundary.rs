//! The panic boundary and the thread-local last error.

use std::cell::RefCell;
use std::ffi::CString;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use crate::error::{Error, Status};

pub(crate) struct LastError {
    pub status: Status,
    pub message: CString,
    pub rpc_code: i64,
}

thread_local! {
    pub(crate) static LAST_ERROR: RefCell<LastError> = RefCell::new(LastError {
        status: Status::MCPC_OK,
        message: CString::default(),
        rpc_code: 0,
    });
}

/// Turns message text into a C string, replacing any NUL.
pub(crate) fn c_message(text: &str) -> CString {
    let mut out = Vec::with_capacity(text.len() + 1);
    push_c_text(&mut out, text);
    CString::from_vec_with_nul(out).expect("NULs were replaced")
}

/// Appends `text` as C text: any NUL in it shown as `\0`, and a NUL at the end.
pub(crate) fn push_c_text(out: &mut Vec<u8>, text: &str) {
    // The common case (no NUL) costs one scan and one copy.
    if !text.contains('\0') {
        out.extend_from_slice(text.as_bytes());
    } else {
        out.extend_from_slice(text.replace('\0', "\\0").as_bytes());
    }
    out.push(0);
}

pub(crate) fn clear_last_error() {
    LAST_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        if e.status != Status::MCPC_OK {
            *e = LastError {
                status: Status::MCPC_OK,
                message: CString::default(),
                rpc_code: 0,
            };
        }
    });
}

pub(crate) fn set_last_error(err: &Error) {
    LAST_ERROR.with(|e| {
        *e.borrow_mut() = LastError {
            status: err.status,
            message: c_message(&err.message),
            rpc_code: err.rpc_code.unwrap_or(0),
        };
    });
}

/// What an export returns when its body panicked.
pub(crate) trait Fallback {
    fn fallback() -> Self;
}

impl Fallback for Status {
    fn fallback() -> Self {
        Status::MCPC_ERR_PANIC
    }
}
impl<T> Fallback for *const T {
    fn fallback() -> Self {
        ptr::null()
    }
}
impl<T> Fallback for *mut T {
    fn fallback() -> Self {
        ptr::null_mut()
    }
}
impl Fallback for usize {
    fn fallback() -> Self {
        0
    }
}
impl Fallback for u32 {
    fn fallback() -> Self {
        0
    }
}

impl Fallback for i64 {
    fn fallback() -> Self {
        0
    }
}
impl Fallback for i32 {
    fn fallback() -> Self {
        0
    }
}
impl Fallback for bool {
    fn fallback() -> Self {
        false
    }
}
impl Fallback for () {
    fn fallback() {}
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Runs an export's body: catches a panic (recording `MCPC_ERR_PANIC` as the
/// last error) and returns the type's fallback instead of unwinding into C.
pub(crate) fn boundary<T: Fallback>(name: &str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(|| {
        crate::inject::point("export", name);
        f()
    })) {
        Ok(v) => v,
        Err(p) => {
            set_last_error(&Error::new(
                Status::MCPC_ERR_PANIC,
                format!("{name}: internal panic: {}", panic_text(&*p)),
            ));
            T::fallback()
        }
    }
}

/// The body of a status-returning export: clears the last error, runs `f`
/// behind the boundary, records the error it returns.
pub(crate) fn status(name: &str, f: impl FnOnce() -> Result<Status, Error>) -> Status {
    clear_last_error();
    boundary(name, || match f() {
        Ok(s) => s,
        Err(e) => {
            set_last_error(&e);
            e.status
        }
    })
}
