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

/// Runs `f` on the builder behind `p` (NULL is `MCPC_ERR_INVALID_ARG`), as the
/// status of the export `name`.
///
/// The caller's contract: `p` is NULL or came from [`into_raw`] for this type, is
/// live, and no other reference to the value is.
pub(crate) fn with_builder<C: Handle>(
    name: &str,
    p: *mut C,
    f: impl FnOnce(&mut C::Rust) -> Result<()>,
) -> crate::error::mcpc_status_t {
    super::boundary::status(name, || {
        // SAFETY: per the export's contract, which its caller documents.
        let v = unsafe { get_mut(p) }?;
        f(v).map(|()| Status::MCPC_OK)
    })
}

/// Takes back ownership of the value behind a handle; NULL gives `None`.
///
/// # Safety
/// `p` is NULL or came from [`into_raw`] for this type and was not freed.
pub(crate) unsafe fn take<C: Handle>(p: *mut C) -> Option<Box<C::Rust>> {
    // SAFETY: per the contract above, ownership returns to Rust exactly once.
    (!p.is_null()).then(|| unsafe { Box::from_raw(p.cast::<C::Rust>()) })
}

/// What an out-pointer may carry: cleared to its zero (NULL, 0) on entry.
pub(crate) trait OutValue: Copy {
    const ZERO: Self;
}

impl<T> OutValue for *mut T {
    const ZERO: Self = std::ptr::null_mut();
}

impl OutValue for usize {
    const ZERO: Self = 0;
}

/// An out-pointer of an export: checked non-NULL and cleared when made, written
/// once on success. Making it is the one `unsafe` step, with one safety argument;
/// writing it is safe.
pub(crate) struct Out<'a, T: OutValue>(&'a mut T);

impl<'a, T: OutValue> Out<'a, T> {
    /// A required out-pointer: NULL is `MCPC_ERR_INVALID_ARG`, naming `what`.
    ///
    /// # Safety
    /// `p` is NULL or valid for writes for as long as the export runs.
    pub(crate) unsafe fn new(p: *mut T, what: &str) -> Result<Self> {
        // SAFETY: per the contract, a non-NULL `p` is writable during the call.
        let slot =
            unsafe { p.as_mut() }.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{what} is NULL")))?;
        *slot = T::ZERO;
        Ok(Out(slot))
    }

    /// An optional out-pointer: `None` for NULL.
    ///
    /// # Safety
    /// As for [`Out::new`].
    pub(crate) unsafe fn optional(p: *mut T) -> Option<Self> {
        // SAFETY: per the contract, a non-NULL `p` is writable during the call.
        let slot = unsafe { p.as_mut() }?;
        *slot = T::ZERO;
        Some(Out(slot))
    }

    /// Writes the value.
    pub(crate) fn set(self, v: T) {
        *self.0 = v;
    }
}

impl<C: Handle> Out<'_, *mut C> {
    /// Moves `v` to the heap and hands C its handle (rustls-ffi's
    /// `set_boxed_mut_ptr`).
    pub(crate) fn set_handle(self, v: C::Rust) {
        self.set(into_raw::<C>(v));
    }
}
