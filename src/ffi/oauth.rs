//! OAuth through the C ABI: the authorization settings object, the host's
//! callbacks (showing the authorization URL, storing credentials) and the login
//! handle the host completes.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

use zeroize::Zeroizing;

use super::boundary::{boundary, status};
use super::cstr::{opt_str_in, str_in};
use super::options::mcpc_options_t;
use super::ptr::{self, Handle};
use super::userdata::{mcpc_free_cb, Userdata};
use crate::auth::{Browser, Grant, LoginDone, LoginOutcome, Settings, Signer, Store};
use crate::error::mcpc_status_t;
use crate::error::{Error, Result, Status};

/// Authorization settings for HTTP endpoints: a builder. Make it with
/// mcpc_oauth_new, set what applies, attach it with mcpc_options_set_oauth (which
/// copies it), and free it with mcpc_oauth_free.
/// Threads: not thread-safe; use one object from one thread at a time.
pub struct mcpc_oauth_t {
    _private: [u8; 0],
}

impl Handle for mcpc_oauth_t {
    type Rust = Settings;
    const NAME: &'static str = "oauth";
}

/// One login in progress: the authorization URL to show the user. The host
/// completes it exactly once, from any thread, now or later, with
/// mcpc_auth_request_complete or mcpc_auth_request_cancel; either frees it. A
/// login the host never completes ends with the request's timeout (the handle
/// must still be completed or cancelled to free it).
pub struct mcpc_auth_request_t {
    _private: [u8; 0],
}

pub(crate) struct AuthRequest {
    url: CString,
    done: LoginDone,
}

impl Handle for mcpc_auth_request_t {
    type Rust = AuthRequest;
    const NAME: &'static str = "request";
}

/// The grant: a user logs in (authorization code with PKCE), the default.
pub const MCPC_OAUTH_AUTHORIZATION_CODE: i32 = 0;
/// The grant: no user; the client authenticates with its id and secret (or key).
pub const MCPC_OAUTH_CLIENT_CREDENTIALS: i32 = 1;
/// The grant: no user; a JWT assertion from the host is exchanged for the token
/// (RFC 7523): a workload's identity token, or with mcpc_oauth_set_identity_provider
/// an enterprise ID token, exchanged for an ID-JAG first.
pub const MCPC_OAUTH_JWT_BEARER: i32 = 2;

/// Gives a fresh assertion for MCPC_OAUTH_JWT_BEARER: write it NUL-terminated into
/// `buf` (`buf_len` bytes, 65536) and return 0, or return nonzero for none (the
/// request then fails with MCPC_ERR_LOGIN_REQUIRED). Runs on an mcpc blocking-pool
/// thread before each token request that needs one; it may block (run a command).
pub type mcpc_assertion_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, buf: *mut c_char, buf_len: usize) -> i32>;

/// Shows a login to the user: open `mcpc_auth_request_url(request)` in a browser,
/// then hand back the URL the authorization server redirected to with
/// mcpc_auth_request_complete (or give up with mcpc_auth_request_cancel). The host
/// owns `request` until it completes it. Runs on an mcpc blocking-pool thread; it
/// may block (until the redirect arrives) or return at once and complete later
/// from any thread. Blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_authorize_cb = Option<unsafe extern "C" fn(userdata: *mut c_void, request: *mut mcpc_auth_request_t)>;

/// Loads the stored value of `key` (NUL-terminated): write it NUL-terminated into
/// `buf` (`buf_len` bytes, 65536) and return 0, or return nonzero when there is
/// none. Values are JSON holding secrets (tokens, client secrets): keep them
/// private. Runs on an mcpc thread; calls for one client never overlap.
pub type mcpc_store_load_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, key: *const c_char, buf: *mut c_char, buf_len: usize) -> i32>;

/// Stores `value` under `key` (both NUL-terminated, borrowed for the call); a NULL
/// `value` deletes the key. Runs on an mcpc thread; calls for one client never overlap.
pub type mcpc_store_save_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, key: *const c_char, value: *const c_char)>;

const STORE_BUF: usize = 65536;

pub(super) fn with_oauth(
    name: &str,
    o: *mut mcpc_oauth_t,
    f: impl FnOnce(&mut Settings) -> Result<()>,
) -> mcpc_status_t {
    ptr::with_builder(name, o, f)
}

/// Makes authorization settings with the defaults: the authorization code grant,
/// client name "mcpc", no client id (registration is used where the server offers
/// it), no callbacks, not headless.
/// Ownership: the caller owns it; free with mcpc_oauth_free. Threads: any thread.
/// Errors: none (NULL only if allocation panicked).
#[unsafe(no_mangle)]
pub extern "C" fn mcpc_oauth_new() -> *mut mcpc_oauth_t {
    boundary("mcpc_oauth_new", || ptr::into_raw::<mcpc_oauth_t>(Settings::default()))
}

/// Frees authorization settings. NULL is a no-op; options it was attached to keep
/// their copy.
///
/// # Safety
/// `oauth` is NULL or a live oauth object, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_free(oauth: *mut mcpc_oauth_t) {
    // SAFETY: per the contract.
    boundary("mcpc_oauth_free", || drop(unsafe { ptr::take(oauth) }))
}

/// Sets a pre-registered client: its id, and its secret (NULL for a public
/// client). Both are copied; the secret never appears in messages or logs.
/// Errors: MCPC_ERR_INVALID_ARG (NULL object or id, an empty id), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_client(
    oauth: *mut mcpc_oauth_t,
    client_id: *const c_char,
    client_secret: *const c_char,
) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_client", oauth, |s| {
        // SAFETY: per the contract.
        let (id, secret) = unsafe {
            (
                str_in(client_id, "client_id")?,
                opt_str_in(client_secret, "client_secret")?,
            )
        };
        if id.is_empty() {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "client_id is empty"));
        }
        s.client_id = Some(id.to_string());
        s.client_secret = secret.map(str::to_string);
        Ok(())
    })
}

/// Sets an optional string of the settings, `what` naming it in messages.
fn set_text(
    name: &str,
    oauth: *mut mcpc_oauth_t,
    text: *const c_char,
    what: &str,
    url: bool,
    slot: impl FnOnce(&mut Settings) -> &mut Option<String>,
) -> mcpc_status_t {
    with_oauth(name, oauth, |s| {
        // SAFETY: the caller's contract: `text` is NULL or NUL-terminated.
        let t = unsafe { opt_str_in(text, what) }?;
        if url {
            if let Some(t) = t {
                url::Url::parse(t)
                    .map_err(|e| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{what} is not a URL: {e}")))?;
            }
        }
        *slot(s) = t.map(str::to_string);
        Ok(())
    })
}

/// Sets the redirect URI of logins (for example `http://127.0.0.1:PORT/callback`,
/// where the host receives the redirect); NULL clears it. Needed by the
/// authorization code grant. Errors: MCPC_ERR_INVALID_ARG (NULL object, not a
/// URL), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `uri` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_redirect_uri(oauth: *mut mcpc_oauth_t, uri: *const c_char) -> mcpc_status_t {
    set_text("mcpc_oauth_set_redirect_uri", oauth, uri, "uri", true, |s| {
        &mut s.redirect_uri
    })
}

/// Sets the URL of the client's ID metadata document, used as its client id where
/// the authorization server supports client ID metadata documents (instead of
/// registration); NULL clears it. Errors: MCPC_ERR_INVALID_ARG (NULL object, not a
/// URL), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `url` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_client_metadata_url(
    oauth: *mut mcpc_oauth_t,
    url: *const c_char,
) -> mcpc_status_t {
    set_text("mcpc_oauth_set_client_metadata_url", oauth, url, "url", true, |s| {
        &mut s.client_metadata_url
    })
}

/// Sets the scope to ask for (space-separated) when neither the server's challenge
/// nor its metadata names one; NULL clears it.
/// Errors: MCPC_ERR_INVALID_ARG (NULL object), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `scope` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_scope(oauth: *mut mcpc_oauth_t, scope: *const c_char) -> mcpc_status_t {
    set_text("mcpc_oauth_set_scope", oauth, scope, "scope", false, |s| &mut s.scope)
}

/// Sets the grant: MCPC_OAUTH_AUTHORIZATION_CODE (the default),
/// MCPC_OAUTH_CLIENT_CREDENTIALS (which needs mcpc_oauth_set_client with a secret,
/// or mcpc_oauth_set_client_key) or MCPC_OAUTH_JWT_BEARER (which needs an assertion).
/// Errors: MCPC_ERR_INVALID_ARG (NULL object, an unknown grant).
///
/// # Safety
/// `oauth` is NULL or a live oauth object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_grant(oauth: *mut mcpc_oauth_t, grant: i32) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_grant", oauth, |s| {
        s.grant = match grant {
            MCPC_OAUTH_AUTHORIZATION_CODE => Grant::AuthorizationCode,
            MCPC_OAUTH_CLIENT_CREDENTIALS => Grant::ClientCredentials,
            MCPC_OAUTH_JWT_BEARER => Grant::JwtBearer,
            g => return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, format!("unknown grant {g}"))),
        };
        Ok(())
    })
}

/// Headless mode (`headless` nonzero): never log in; use stored or refreshed
/// credentials only, and fail with MCPC_ERR_LOGIN_REQUIRED when a login is needed.
/// Errors: MCPC_ERR_INVALID_ARG (NULL object).
///
/// # Safety
/// `oauth` is NULL or a live oauth object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_headless(oauth: *mut mcpc_oauth_t, headless: i32) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_headless", oauth, |s| {
        s.headless = headless != 0;
        Ok(())
    })
}

/// Authenticates the client with `private_key_jwt` (RFC 7523): `pem` is its PKCS#8
/// P-256 private key (ES256), copied; NULL clears it. Assertions are signed for the
/// authorization server's issuer and live five minutes. The key never appears in
/// messages. Errors: MCPC_ERR_INVALID_ARG (NULL object, not such a key),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `pem` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_client_key(oauth: *mut mcpc_oauth_t, pem: *const c_char) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_client_key", oauth, |s| {
        // SAFETY: per the contract.
        let pem = unsafe { opt_str_in(pem, "pem") }?;
        s.client_key = pem.map(Signer::from_pem).transpose()?.map(Arc::new);
        Ok(())
    })
}

/// Sets a fixed assertion (a JWT, copied) for MCPC_OAUTH_JWT_BEARER; NULL clears it.
/// For assertions that expire, use mcpc_oauth_set_assertion_callback.
/// Errors: MCPC_ERR_INVALID_ARG (NULL object, an empty assertion), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `jwt` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_assertion(oauth: *mut mcpc_oauth_t, jwt: *const c_char) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_assertion", oauth, |s| {
        // SAFETY: per the contract.
        let jwt = unsafe { opt_str_in(jwt, "jwt") }?.map(str::to_string);
        if jwt.as_deref() == Some("") {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "jwt is empty"));
        }
        s.assertion = jwt.map(|j| {
            let j = Zeroizing::new(j);
            Arc::new(move || Some(j.clone())) as crate::auth::AssertionFn
        });
        Ok(())
    })
}

/// Sets the assertion callback (see mcpc_assertion_cb) for MCPC_OAUTH_JWT_BEARER.
/// `userdata_free` (may be NULL) runs exactly once, when the settings and everything
/// made from them are freed (also if this fails).
/// Errors: MCPC_ERR_INVALID_ARG (NULL object or `cb`).
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `cb` may be called from mcpc threads
/// with `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_assertion_callback(
    oauth: *mut mcpc_oauth_t,
    cb: mcpc_assertion_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_oauth("mcpc_oauth_set_assertion_callback", oauth, |s| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
        s.assertion = Some(Arc::new(move || {
            let mut buf = Zeroizing::new(vec![0u8; STORE_BUF]);
            let _scope = crate::drive::runtime::CallbackScope::enter();
            // SAFETY: the host's callback with its userdata and a writable buffer.
            let rc = unsafe { cb(ud.ptr(), buf.as_mut_ptr().cast(), STORE_BUF) };
            let end = buf.iter().position(|b| *b == 0)?;
            (rc == 0 && end > 0)
                .then(|| {
                    std::str::from_utf8(&buf[..end])
                        .ok()
                        .map(|j| Zeroizing::new(j.to_string()))
                })
                .flatten()
        }));
        Ok(())
    })
}

/// With MCPC_OAUTH_JWT_BEARER: the assertion is an ID token of the enterprise
/// identity provider whose token endpoint is `token_endpoint` (where this client is
/// `client_id`); mcpc exchanges it there (RFC 8693) for an ID-JAG naming the MCP
/// server's authorization server and resource, then presents that. NULL
/// `token_endpoint` clears it. Errors: MCPC_ERR_INVALID_ARG (NULL object, not a
/// URL, NULL client_id), MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_identity_provider(
    oauth: *mut mcpc_oauth_t,
    token_endpoint: *const c_char,
    client_id: *const c_char,
) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_identity_provider", oauth, |s| {
        // SAFETY: per the contract.
        let Some(endpoint) = unsafe { opt_str_in(token_endpoint, "token_endpoint") }? else {
            s.idp = None;
            return Ok(());
        };
        // SAFETY: per the contract.
        let client_id = unsafe { str_in(client_id, "client_id") }?;
        url::Url::parse(endpoint).map_err(|e| {
            Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!("token_endpoint is not a URL: {e}"),
            )
        })?;
        s.idp = Some(crate::auth::Idp {
            token_endpoint: endpoint.to_string(),
            client_id: client_id.to_string(),
        });
        Ok(())
    })
}

/// DPoP (RFC 9449), on by default: when the authorization server accepts ES256
/// proofs, tokens are bound to the client's key and every request carries a fresh
/// proof; otherwise bearer tokens are used. `enabled` zero turns it off.
/// Errors: MCPC_ERR_INVALID_ARG (NULL object).
///
/// # Safety
/// `oauth` is NULL or a live oauth object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_dpop(oauth: *mut mcpc_oauth_t, enabled: i32) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_dpop", oauth, |s| {
        s.dpop = enabled != 0;
        Ok(())
    })
}

/// Uses the host's DPoP key (PKCS#8 P-256 PEM, copied) instead of a fresh key per
/// client, so that a stored DPoP-bound token stays usable; NULL goes back to a
/// fresh key. Errors: MCPC_ERR_INVALID_ARG (NULL object, not such a key),
/// MCPC_ERR_INVALID_UTF8.
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `pem` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_dpop_key(oauth: *mut mcpc_oauth_t, pem: *const c_char) -> mcpc_status_t {
    with_oauth("mcpc_oauth_set_dpop_key", oauth, |s| {
        // SAFETY: per the contract.
        let pem = unsafe { opt_str_in(pem, "pem") }?;
        s.dpop_key = pem.map(Signer::from_pem).transpose()?.map(Arc::new);
        Ok(())
    })
}

struct CBrowser {
    cb: unsafe extern "C" fn(*mut c_void, *mut mcpc_auth_request_t),
    ud: Arc<Userdata>,
}

impl Browser for CBrowser {
    fn open(&self, url: &str, done: LoginDone) {
        let req = ptr::into_raw::<mcpc_auth_request_t>(AuthRequest {
            url: super::boundary::c_message(url),
            done,
        });
        let _scope = crate::drive::runtime::CallbackScope::enter();
        // SAFETY: the host's callback with its userdata; it now owns `req`.
        unsafe { (self.cb)(self.ud.ptr(), req) }
    }
}

/// Sets the login callback (see mcpc_authorize_cb). Without one, a needed login is
/// MCPC_ERR_LOGIN_REQUIRED. `userdata_free` (may be NULL) runs exactly once, when
/// the settings and everything made from them are freed (also if this fails).
/// Errors: MCPC_ERR_INVALID_ARG (NULL object or `cb`).
///
/// # Safety
/// `oauth` is NULL or a live oauth object; `cb` may be called from mcpc threads
/// with `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_authorize_callback(
    oauth: *mut mcpc_oauth_t,
    cb: mcpc_authorize_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_oauth("mcpc_oauth_set_authorize_callback", oauth, |s| {
        let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
        s.browser = Some(Arc::new(CBrowser { cb, ud }));
        Ok(())
    })
}

struct CStore {
    load: unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_char, usize) -> i32,
    save: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char),
    ud: Arc<Userdata>,
}

impl Store for CStore {
    fn load(&self, key: &str) -> Option<String> {
        let key = super::boundary::c_message(key);
        let mut buf = vec![0u8; STORE_BUF];
        let _scope = crate::drive::runtime::CallbackScope::enter();
        // SAFETY: the host's callback, a borrowed key and a writable buffer of STORE_BUF bytes.
        let rc = unsafe { (self.load)(self.ud.ptr(), key.as_ptr(), buf.as_mut_ptr().cast(), STORE_BUF) };
        if rc != 0 {
            return None;
        }
        let end = buf.iter().position(|b| *b == 0)?;
        String::from_utf8(buf[..end].to_vec()).ok()
    }

    fn save(&self, key: &str, value: Option<&str>) {
        let key = super::boundary::c_message(key);
        let value = value.map(super::boundary::c_message);
        let vptr = value.as_ref().map_or(std::ptr::null(), |v| v.as_ptr());
        let _scope = crate::drive::runtime::CallbackScope::enter();
        // SAFETY: the host's callback with borrowed NUL-terminated strings.
        unsafe { (self.save)(self.ud.ptr(), key.as_ptr(), vptr) }
    }
}

/// Sets the credential store (see mcpc_store_load_cb and mcpc_store_save_cb):
/// tokens are kept under a key naming the server, registrations under one naming
/// the issuer. `userdata_free` (may be NULL) runs exactly once, when the settings
/// and everything made from them are freed (also if this fails).
/// Errors: MCPC_ERR_INVALID_ARG (NULL object, `load` or `save`).
///
/// # Safety
/// `oauth` is NULL or a live oauth object; the callbacks may be called from mcpc
/// threads with `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_oauth_set_store(
    oauth: *mut mcpc_oauth_t,
    load: mcpc_store_load_cb,
    save: mcpc_store_save_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_oauth("mcpc_oauth_set_store", oauth, |s| {
        let (Some(load), Some(save)) = (load, save) else {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "load or save is NULL"));
        };
        s.store = Some(Arc::new(CStore { load, save, ud }));
        Ok(())
    })
}

/// Uses OAuth for HTTP endpoints of clients made from `opts` (a copy of `oauth`
/// is taken; NULL turns OAuth off). It replaces a bearer token or token callback.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options).
///
/// # Safety
/// `opts` is NULL or a live options object; `oauth` is NULL or a live oauth object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_oauth(
    opts: *mut mcpc_options_t,
    oauth: *const mcpc_oauth_t,
) -> mcpc_status_t {
    status("mcpc_options_set_oauth", || {
        // SAFETY: the export's contract.
        let o = unsafe { ptr::get_mut(opts) }?;
        // SAFETY: as above; NULL is allowed here.
        o.oauth = if oauth.is_null() {
            None
        } else {
            Some(unsafe { ptr::get(oauth) }?.clone())
        };
        Ok(Status::MCPC_OK)
    })
}

/// The authorization URL of a login, NUL-terminated; owned by `request` (valid
/// until it is completed or cancelled). NULL for a NULL request.
/// Threads: any thread.
///
/// # Safety
/// `request` is NULL or a live login handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_auth_request_url(request: *const mcpc_auth_request_t) -> *const c_char {
    boundary("mcpc_auth_request_url", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(request) }.map_or(std::ptr::null(), |r| r.url.as_ptr())
    })
}

/// Completes a login with the URL the authorization server redirected to (its
/// query holds `code`, `state` and `iss`, which mcpc checks). Frees `request`,
/// also on error. Threads: any thread, exactly once per request.
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8 (the login then ends
/// as cancelled).
///
/// # Safety
/// `request` is NULL or a live login handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_auth_request_complete(
    request: *mut mcpc_auth_request_t,
    redirect_url: *const c_char,
) -> mcpc_status_t {
    status("mcpc_auth_request_complete", || {
        // SAFETY: per the contract; ownership returns here once.
        let r =
            unsafe { ptr::take(request) }.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "request is NULL"))?;
        // SAFETY: per the contract.
        let url = unsafe { str_in(redirect_url, "redirect_url") };
        match url {
            Ok(u) => {
                r.done.complete(LoginOutcome::Redirect(u.to_string()));
                Ok(Status::MCPC_OK)
            }
            Err(e) => {
                r.done.complete(LoginOutcome::Cancelled);
                Err(e)
            }
        }
    })
}

/// Cancels a login: the request that needed it fails with MCPC_ERR_LOGIN_CANCELLED.
/// Frees `request`. Threads: any thread, exactly once per request.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `request` is NULL or a live login handle, not used after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_auth_request_cancel(request: *mut mcpc_auth_request_t) -> mcpc_status_t {
    status("mcpc_auth_request_cancel", || {
        // SAFETY: per the contract; ownership returns here once.
        let r =
            unsafe { ptr::take(request) }.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "request is NULL"))?;
        r.done.complete(LoginOutcome::Cancelled);
        Ok(Status::MCPC_OK)
    })
}
