//! Casts between opaque C handles and the Rust values behind them. Every cast
//! goes through here, tied to its type by [`Handle`].

use crate::error::{Error, Result, Status};

/// Links an opaque C type to the Rust value a pointer to it really points at.
pub(crate) trait Handle {
    type Rust;
    const NAME: &'static str;
}

/// Moves a value to the heap and hands C an opaque pointer to it.
pub(crate) fn into_raw<C: Handle>(v: C::Rust) -> *mut C {
    Box::into_raw(Box::new(v)).cast::<C>()
}

/// Borrows the value behind a handle; NULL is `MCPC_ERR_INVALID_ARG`.
///
/// # Safety
/// `p` is NULL or came from [`into_raw`] for this type and was not freed.
pub(crate) unsafe fn get<'a, C: Handle>(p: *const C) -> Result<&'a C::Rust> {
    // SAFETY: per the contract above, a non-NULL `p` points at a live C::Rust.
    unsafe { p.cast::<C::Rust>().as_ref() }
        .ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{} is NULL", C::NAME)))
}

/// Mutably borrows the value behind a builder handle (single-threaded types only).
///
/// # Safety
/// As for [`get`], and no other reference to the value is live.
pub(crate) unsafe fn get_mut<'a, C: Handle>(p: *mut C) -> Result<&'a mut C::Rust> {
    // SAFETY: per the contract above.
    unsafe { p.cast::<C::Rust>().as_mut() }
        .ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{} is NULL", C::NAME)))
}

/// Takes back ownership of the value behind a handle; NULL gives `None`.
///
/// # Safety
/// `p` is NULL or came from [`into_raw`] for this type and was not freed.
pub(crate) unsafe fn take<C: Handle>(p: *mut C) -> Option<Box<C::Rust>> {
    // SAFETY: per the contract above, ownership returns to Rust exactly once.
    (!p.is_null()).then(|| unsafe { Box::from_raw(p.cast::<C::Rust>()) })
}

/// Writes `v` through an out-pointer that was checked non-NULL.
pub(crate) fn check_out<T>(out: *mut T, what: &str) -> Result<()> {
    if out.is_null() {
        Err(Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{what} is NULL")))
    } else {
        Ok(())
    }
}
