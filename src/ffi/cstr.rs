//! Strings across the boundary.

use std::ffi::{c_char, CStr, CString};

use crate::error::{Error, Result, Status};

/// Borrows a NUL-terminated UTF-8 string from C. NULL is `MCPC_ERR_INVALID_ARG`,
/// bad UTF-8 is `MCPC_ERR_INVALID_UTF8`; both name `what`.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that outlives the borrow.
pub(crate) unsafe fn str_in<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{what} is NULL")));
    }
    // simdutf8's check: a caller's 1 MiB of arguments in a third of std's time.
    // SAFETY: non-NULL and NUL-terminated per the contract.
    crate::jsonrpc::utf8(unsafe { CStr::from_ptr(p) }.to_bytes())
        .map_err(|e| Error::new(Status::MCPC_ERR_INVALID_UTF8, format!("{what} is not valid UTF-8: {e}")))
}

/// As [`str_in`], but NULL is `None`.
///
/// # Safety
/// As for [`str_in`].
pub(crate) unsafe fn opt_str_in<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: forwarded contract.
        unsafe { str_in(p, what) }.map(Some)
    }
}

/// Hands C an owned copy of `s`, to be freed with `mcpc_string_free`.
pub(crate) fn string_out(s: &str) -> *mut c_char {
    crate::ffi::boundary::c_message(s).into_raw()
}

/// Frees a string made by [`string_out`].
///
/// # Safety
/// `p` is NULL or came from [`string_out`] and was not freed.
pub(crate) unsafe fn string_free(p: *mut c_char) {
    if !p.is_null() {
        // SAFETY: per the contract, `p` came from CString::into_raw.
        drop(unsafe { CString::from_raw(p) });
    }
}
