//! The host's signer through the C ABI: DPoP proofs and `private_key_jwt`
//! assertions signed where the key lives (an HSM, the OS key store), so that the
//! private key never enters mcpc.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use super::cstr::str_in;
use super::oauth::{mcpc_oauth_t, with_oauth};
use super::userdata::{mcpc_free_cb, Userdata};
use crate::auth::{SignFn, Signer};
use crate::error::mcpc_status_t;
use crate::error::{Error, Status};

/// The most bytes a signature may take: a DER ECDSA P-256 signature.
pub const MCPC_SIGNATURE_MAX: usize = 72;

/// Signs `data` (`data_len` bytes, borrowed for the call) for ES256: ECDSA with
/// P-256 over the SHA-256 of `data` (the callback hashes). Write the signature into
/// `signature` (room for `*signature_len` bytes, MCPC_SIGNATURE_MAX), raw (r then
/// s, 32 bytes each) or DER, set `*signature_len` to its length and return 0; or
/// return nonzero when it cannot sign (the request then fails with
/// MCPC_ERR_AUTH). mcpc checks every signature against the public key given with
/// the callback before it sends one. Runs on an mcpc blocking-pool thread and may
/// block (a hardware token); a request waiting for it is still bounded by its
/// timeout. Calls may overlap, from different threads.
pub type mcpc_sign_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        data: *const u8,
        data_len: usize,
        signature: *mut u8,
        signature_len: *mut usize,
    ) -> i32,
>;

/// The callback and its userdata as a [`SignFn`].
fn sign_fn(
    cb: unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut u8, *mut usize) -> i32,
    ud: Arc<Userdata>,
) -> SignFn {
    Arc::new(move |data: &[u8]| {
        let mut sig = [0u8; MCPC_SIGNATURE_MAX];
        let mut len = MCPC_SIGNATURE_MAX;
        let _scope = crate::drive::runtime::CallbackScope::enter();
        // SAFETY: the host's callback with its userdata, the data, and writable room.
        let rc = unsafe { cb(ud.ptr(), data.as_ptr(), data.len(), sig.as_mut_ptr(), &mut len) };
        (rc == 0 && len <= MCPC_SIGNATURE_MAX).then(|| sig[..len].to_vec())
    })
}

/// Sets a signer from its arguments with `set`, for the named export.
///
/// # Safety
/// As the exports below say.
unsafe fn set_signer(
    name: &str,
    oauth: *mut mcpc_oauth_t,
    public_key_pem: *const c_char,
    cb: mcpc_sign_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
    set: impl FnOnce(&mut crate::auth::Settings, Arc<Signer>),
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_oauth(name, oauth, |s| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "sign is NULL"))?;
        // SAFETY: per the contract.
        let pem = unsafe { str_in(public_key_pem, "public_key_pem") }?;
        set(s, Arc::new(Signer::host(pem, sign_fn(cb, ud))?));
        Ok(())
    })
}

/// Signs DPoP proofs with the host's key: `public_key_pem` is its P-256 public
/// key (`BEGIN PUBLIC KEY`, copied), `sign` signs with the private key (see
/// mcpc_sign_cb). Replaces mcpc_oauth_set_dpop_key; DPoP stays subject to
/// mcpc_oauth_set_dpop. `userdata_free` (may be NULL) runs exactly once, when
/// the settings and every client made from them are freed (also if this fails).
/// Threads: as the settings object. Errors: MCPC_ERR_INVALID_ARG (NULL object,
/// `public_key_pem` or `sign`; not a P-256 public key), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `public_key_pem` is NULL or
/// NUL-terminated; `sign` may be called from mcpc threads with `userdata` until
/// `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_dpop_signer(
    oauth: *mut mcpc_oauth_t,
    public_key_pem: *const c_char,
    sign: mcpc_sign_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    // SAFETY: per the contract.
    unsafe {
        set_signer(
            "mcpc_oauth_set_dpop_signer",
            oauth,
            public_key_pem,
            sign,
            userdata,
            userdata_free,
            |s, k| s.dpop_key = Some(k),
        )
    }
}

/// Authenticates the client with `private_key_jwt`, its assertions signed by the
/// host's key: `public_key_pem` is the P-256 public key (`BEGIN PUBLIC KEY`,
/// copied) registered for the client, `sign` signs (see mcpc_sign_cb). Replaces
/// mcpc_oauth_set_client_key. `userdata_free` (may be NULL) runs exactly once, when
/// the settings and every client made from them are freed (also if this fails).
/// Threads: as the settings object. Errors: MCPC_ERR_INVALID_ARG (NULL object,
/// `public_key_pem` or `sign`; not a P-256 public key), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// As mcpc_oauth_set_dpop_signer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_client_signer(
    oauth: *mut mcpc_oauth_t,
    public_key_pem: *const c_char,
    sign: mcpc_sign_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    // SAFETY: per the contract.
    unsafe {
        set_signer(
            "mcpc_oauth_set_client_signer",
            oauth,
            public_key_pem,
            sign,
            userdata,
            userdata_free,
            |s, k| s.client_key = Some(k),
        )
    }
}
