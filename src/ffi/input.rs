//! `mcpc_input_t`: the server's input requests (elicitation, sampling, roots) as the
//! host gets them, the handlers that receive them, and telling the server the roots
//! changed.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;

use serde_json::Value;

use super::boundary::{boundary, c_message, status};
use super::client::mcpc_client_t;
use super::cstr::{opt_str_in, str_in};
use super::options::{mcpc_options_t, with_options};
use super::ptr::{self, Handle};
use super::userdata::{mcpc_free_cb, Userdata};
use crate::client::input::{Handler, Kind, Pending};
use crate::error::{mcpc_status_t, Error, Result, Status};

/// One request from the server for input, owned by the host from the moment its
/// handler gets it: answer it exactly once (mcpc_input_elicit, mcpc_input_complete or
/// mcpc_input_fail), now or later, from any thread, and free it with mcpc_input_free.
/// Thread-safe.
pub struct mcpc_input_t {
    _private: [u8; 0],
}

pub(crate) struct HostInput {
    pending: Pending,
    method: CString,
    params: CString,
    server: CString,
    host_server: Option<CString>,
    message: Option<CString>,
    schema: Option<CString>,
    url: Option<CString>,
}

impl Handle for mcpc_input_t {
    type Rust = HostInput;
    const NAME: &'static str = "input";
}

impl HostInput {
    fn new(pending: Pending) -> Self {
        let r = pending.request();
        HostInput {
            method: c_message(r.method),
            params: c_message(r.params.get()),
            server: c_message(&r.server),
            host_server: r.host_server.as_deref().map(c_message),
            message: r.message.as_deref().map(c_message),
            schema: r.schema.as_ref().map(|s| c_message(s.get())),
            url: r.url.as_deref().map(c_message),
            pending,
        }
    }
}

/// Kind of input request: an `elicitation/create` in form mode (fill in the schema
/// of mcpc_input_schema_json).
pub const MCPC_INPUT_ELICIT_FORM: i32 = 1;
/// Kind of input request: an `elicitation/create` in URL mode (show the server and the
/// URL of mcpc_input_url; accepting means the user consented to open it).
pub const MCPC_INPUT_ELICIT_URL: i32 = 2;
/// Kind of input request: `sampling/createMessage`.
pub const MCPC_INPUT_SAMPLING: i32 = 3;
/// Kind of input request: `roots/list`.
pub const MCPC_INPUT_ROOTS: i32 = 4;

/// Elicitation mode flag for mcpc_options_set_elicitation_handler: form mode.
pub const MCPC_ELICIT_MODE_FORM: u32 = 1;
/// Elicitation mode flag for mcpc_options_set_elicitation_handler: URL mode.
pub const MCPC_ELICIT_MODE_URL: u32 = 2;
/// Sampling flag for mcpc_options_set_sampling_handler: requests may carry tools.
pub const MCPC_SAMPLING_TOOLS: u32 = 1;

/// Elicitation answer: the user submitted (a form's content) or consented (a URL).
pub const MCPC_ELICIT_ACCEPT: i32 = 1;
/// Elicitation answer: the user explicitly declined.
pub const MCPC_ELICIT_DECLINE: i32 = 2;
/// Elicitation answer: the user dismissed it without choosing.
pub const MCPC_ELICIT_CANCEL: i32 = 3;

/// Receives one input request from the server. `input` is the host's from here on:
/// answer it exactly once and free it with mcpc_input_free, now or later, from any
/// thread. Runs on an mcpc blocking-pool thread, so it may block (ask a user); calls
/// may overlap, one per request. A request not answered within the client's timeout
/// (before 2026-07-28) or its call's timeout (2026-07-28) ends unanswered, and a later
/// answer returns MCPC_ERR_TIMEOUT. Blocking mcpc calls from it return
/// MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_input_cb = Option<unsafe extern "C" fn(userdata: *mut c_void, input: *mut mcpc_input_t)>;

fn handler(cb: mcpc_input_cb, ud: Arc<Userdata>) -> Result<Handler> {
    let cb = cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "cb is NULL"))?;
    Ok(Arc::new(move |pending: Pending| {
        let input = ptr::into_raw::<mcpc_input_t>(HostInput::new(pending));
        let _scope = crate::drive::runtime::CallbackScope::enter();
        // SAFETY: the host's callback with its userdata and a handle it now owns.
        unsafe { cb(ud.ptr(), input) }
    }))
}

/// Answers the server's elicitation requests with `cb` (see mcpc_input_cb), in the
/// modes of `modes` (MCPC_ELICIT_MODE_FORM and/or MCPC_ELICIT_MODE_URL), which the
/// client then declares as its `elicitation` capability. Without a handler,
/// elicitation is not declared, and one asked for anyway is declined. `userdata_free`
/// (may be NULL) runs exactly once, when the options and every client made from them
/// are freed; also if this call fails. Replaces an earlier elicitation handler.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or `cb`, `modes` 0 or unknown bits).
///
/// # Safety
/// `opts` is NULL or a live options object; `cb` may be called from mcpc threads with
/// `userdata` until `userdata_free` runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_elicitation_handler(
    opts: *mut mcpc_options_t,
    modes: u32,
    cb: mcpc_input_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_elicitation_handler", opts, |o| {
        if modes == 0 || modes & !(MCPC_ELICIT_MODE_FORM | MCPC_ELICIT_MODE_URL) != 0 {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!("modes must be MCPC_ELICIT_MODE_FORM and/or MCPC_ELICIT_MODE_URL, not {modes}"),
            ));
        }
        o.client.input.elicitation = Some(handler(cb, ud)?);
        o.client.input.elicit_form = modes & MCPC_ELICIT_MODE_FORM != 0;
        o.client.input.elicit_url = modes & MCPC_ELICIT_MODE_URL != 0;
        Ok(())
    })
}

/// Answers the server's `sampling/createMessage` requests with `cb`; the client then
/// declares `sampling` (with `tools` when `flags` has MCPC_SAMPLING_TOOLS). Without a
/// handler, sampling is not declared, and a request for it fails as before (the call
/// gets MCPC_ERR_INPUT_REQUIRED under 2026-07-28; before it, the server gets -32601).
/// Otherwise as mcpc_options_set_elicitation_handler.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or `cb`, unknown flag bits).
///
/// # Safety
/// As for mcpc_options_set_elicitation_handler.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_sampling_handler(
    opts: *mut mcpc_options_t,
    flags: u32,
    cb: mcpc_input_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_sampling_handler", opts, |o| {
        if flags & !MCPC_SAMPLING_TOOLS != 0 {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!("unknown sampling flags {flags}"),
            ));
        }
        o.client.input.sampling = Some(handler(cb, ud)?);
        o.client.input.sampling_tools = flags & MCPC_SAMPLING_TOOLS != 0;
        Ok(())
    })
}

/// Answers the server's `roots/list` requests with `cb` (complete them with
/// `{"roots":[{"uri":"file:///...","name":"..."}]}`); the client then declares `roots`
/// (with `listChanged` before 2026-07-28; see mcpc_client_roots_changed). Otherwise as
/// mcpc_options_set_elicitation_handler.
/// Errors: MCPC_ERR_INVALID_ARG (NULL options or `cb`).
///
/// # Safety
/// As for mcpc_options_set_elicitation_handler.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_options_set_roots_handler(
    opts: *mut mcpc_options_t,
    cb: mcpc_input_cb,
    userdata: *mut c_void,
    userdata_free: mcpc_free_cb,
) -> mcpc_status_t {
    let ud = Userdata::new(userdata, userdata_free);
    with_options("mcpc_options_set_roots_handler", opts, |o| {
        o.client.input.roots = Some(handler(cb, ud)?);
        Ok(())
    })
}

/// Tells the server the host's roots changed: sends `notifications/roots/list_changed`
/// (before 2026-07-28; under 2026-07-28 the server asks for the roots each time it
/// needs them, so nothing is sent).
/// Threads: any thread, also from mcpc callbacks (it does not block).
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_NOT_SUPPORTED (no roots handler was
/// registered), MCPC_ERR_CLOSED, MCPC_ERR_TRANSPORT.
///
/// # Safety
/// `client` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_roots_changed(client: *const mcpc_client_t) -> mcpc_status_t {
    status("mcpc_client_roots_changed", || {
        // SAFETY: per the contract.
        let c = unsafe { ptr::get(client) }?;
        c.client().roots_changed()?;
        Ok(Status::MCPC_OK)
    })
}

/// The input handle behind `input`, and an accessor's borrowed string.
fn text(input: *const mcpc_input_t, name: &str, f: impl FnOnce(&HostInput) -> Option<&CString>) -> *const c_char {
    boundary(name, || {
        // SAFETY: the accessors' contract: `input` is NULL or live.
        unsafe { ptr::get(input) }
            .ok()
            .and_then(f)
            .map_or(std::ptr::null(), |s| s.as_ptr())
    })
}

/// What the request asks for: MCPC_INPUT_ELICIT_FORM, MCPC_INPUT_ELICIT_URL,
/// MCPC_INPUT_SAMPLING or MCPC_INPUT_ROOTS; 0 for NULL.
/// Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_kind(input: *const mcpc_input_t) -> i32 {
    boundary("mcpc_input_kind", || {
        // SAFETY: per the contract.
        match unsafe { ptr::get(input) }.map(|i| i.pending.request().kind) {
            Ok(Kind::ElicitForm) => MCPC_INPUT_ELICIT_FORM,
            Ok(Kind::ElicitUrl) => MCPC_INPUT_ELICIT_URL,
            Ok(Kind::Sampling) => MCPC_INPUT_SAMPLING,
            Ok(Kind::Roots) => MCPC_INPUT_ROOTS,
            Err(_) => 0,
        }
    })
}

/// The request's method (`elicitation/create`, `sampling/createMessage`, `roots/list`).
/// Borrowed until mcpc_input_free; NULL for NULL. Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_method(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_method", |i| Some(&i.method))
}

/// Which server asks (the title or name it gave itself), to show the user. Borrowed
/// until mcpc_input_free; NULL for NULL. Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_server(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_server", |i| Some(&i.server))
}

/// The host's name for the server that asks (the name in its configuration, or the
/// one given to mcpc_host_add_stdio or mcpc_host_add_http), so a host of many servers
/// can tell the user which one; NULL for a client outside a host, and for NULL.
/// Borrowed until mcpc_input_free. Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_host_server(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_host_server", |i| i.host_server.as_ref())
}

/// The request's params as JSON, as the server sent them (`{}` when it sent none): for
/// sampling, its messages, model preferences, tools and the rest. Borrowed until
/// mcpc_input_free; NULL for NULL. Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_params_json(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_params_json", |i| Some(&i.params))
}

/// An elicitation's message to the user; NULL for other kinds. Borrowed until
/// mcpc_input_free. Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_message(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_message", |i| i.message.as_ref())
}

/// A form elicitation's requested schema as JSON (a flat object of string, number,
/// integer, boolean and enum-array properties, already checked); NULL for other kinds.
/// Borrowed until mcpc_input_free. Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_schema_json(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_schema_json", |i| i.schema.as_ref())
}

/// A URL elicitation's URL, to show in full before the user consents (never open or
/// fetch it without consent); NULL for other kinds. Borrowed until mcpc_input_free.
/// Threads: any thread.
///
/// # Safety
/// `input` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_url(input: *const mcpc_input_t) -> *const c_char {
    text(input, "mcpc_input_url", |i| i.url.as_ref())
}

fn answer(name: &str, input: *const mcpc_input_t, f: impl FnOnce(&Pending) -> Result<()>) -> mcpc_status_t {
    status(name, || {
        // SAFETY: the exports' contract: `input` is NULL or live.
        let i = unsafe { ptr::get(input) }?;
        f(&i.pending)?;
        Ok(Status::MCPC_OK)
    })
}

fn json_in(text: &str, what: &str) -> Result<Value> {
    serde_json::from_str(text)
        .map_err(|e| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("{what} is not valid JSON: {e}")))
}

/// Answers an elicitation: `action` is MCPC_ELICIT_ACCEPT, MCPC_ELICIT_DECLINE or
/// MCPC_ELICIT_CANCEL. `content_json` (NULL for none) is an accepted form's content, a
/// JSON object: fields it leaves out get the schema's defaults, and it is checked
/// against the requested schema before anything is sent. A URL elicitation is
/// accepted with no content. Does not consume `input`.
/// Threads: any thread, also from inside the handler.
/// Errors: MCPC_ERR_INVALID_ARG (NULL input, an unknown action, content that is not
/// JSON, not an elicitation), MCPC_ERR_INVALID_UTF8, MCPC_ERR_INPUT_INVALID (the content
/// does not fit the schema, or content where none belongs: nothing was sent, the
/// request stays open), MCPC_ERR_ALREADY_COMPLETED, MCPC_ERR_TIMEOUT (it ended
/// unanswered), MCPC_ERR_CLOSED (its client is closing or gone, or its call ended:
/// the answer cannot go out).
///
/// # Safety
/// `input` is NULL or live; `content_json` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_elicit(
    input: *const mcpc_input_t,
    action: i32,
    content_json: *const c_char,
) -> mcpc_status_t {
    answer("mcpc_input_elicit", input, |p| {
        if !matches!(p.request().kind, Kind::ElicitForm | Kind::ElicitUrl) {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "the request is not an elicitation",
            ));
        }
        let action = match action {
            MCPC_ELICIT_ACCEPT => "accept",
            MCPC_ELICIT_DECLINE => "decline",
            MCPC_ELICIT_CANCEL => "cancel",
            _ => {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("unknown elicitation action {action}"),
                ))
            }
        };
        // SAFETY: per the contract.
        let content = unsafe { opt_str_in(content_json, "content_json") }?
            .map(|c| json_in(c, "content_json"))
            .transpose()?;
        p.elicit(action, content)
    })
}

/// Answers the request with its whole result as JSON: a `CreateMessageResult` for
/// sampling (`role`, `content`, `model`, ...), `{"roots":[...]}` (each a `file://` URI)
/// for roots, an `ElicitResult` for elicitation (checked as by mcpc_input_elicit).
/// Does not consume `input`.
/// Threads: any thread, also from inside the handler.
/// Errors: MCPC_ERR_INVALID_ARG (NULL, not JSON), MCPC_ERR_INVALID_UTF8, and as
/// mcpc_input_elicit.
///
/// # Safety
/// `input` is NULL or live; `result_json` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_complete(input: *const mcpc_input_t, result_json: *const c_char) -> mcpc_status_t {
    answer("mcpc_input_complete", input, |p| {
        // SAFETY: per the contract.
        let result = json_in(unsafe { str_in(result_json, "result_json") }?, "result_json")?;
        p.complete(result)
    })
}

/// Refuses the request, naming why (`message`, may be NULL): before 2026-07-28 the
/// server gets a JSON-RPC error (code -1) with the message; under 2026-07-28 the call
/// that carried the request fails with MCPC_ERR_INPUT_REQUIRED. To decline an
/// elicitation, use mcpc_input_elicit instead. Does not consume `input`.
/// Threads: any thread, also from inside the handler.
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_ALREADY_COMPLETED, MCPC_ERR_TIMEOUT, MCPC_ERR_CLOSED.
///
/// # Safety
/// `input` is NULL or live; `message` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_fail(input: *const mcpc_input_t, message: *const c_char) -> mcpc_status_t {
    answer("mcpc_input_fail", input, |p| {
        // SAFETY: per the contract.
        let message = unsafe { opt_str_in(message, "message") }?;
        p.fail(message.unwrap_or("the client refused the request"))
    })
}

/// Frees the host's handle. A request not yet answered is refused now (as by
/// mcpc_input_fail), rather than left to its timeout. NULL is a no-op. Safe after the
/// client that made it was freed.
/// Threads: any thread, once no other thread uses the handle.
///
/// # Safety
/// `input` is NULL or live, freed only once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_input_free(input: *mut mcpc_input_t) {
    boundary("mcpc_input_free", || {
        // SAFETY: per the contract; ownership returns to mcpc here.
        if let Some(i) = unsafe { ptr::take(input) } {
            let _ = i.pending.fail("the client let go of the request unanswered");
        }
    })
}
