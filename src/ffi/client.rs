//! `mcpc_client_t`: a connection to one MCP server, and the calls made over it.

use std::ffi::{c_char, c_void, CString};
use std::sync::Arc;
use std::time::Duration;

use super::boundary::{boundary, status};
use super::cancel::mcpc_cancel_t;
use super::cstr::{opt_str_in, str_in, string_out};
use super::op::{direct_op, mcpc_op_t, spawn_op, OpTracker};
use super::options::{mcpc_options_t, OptionsData};
use super::ptr::{self, check_out, Handle};
use super::result::{mcpc_result_t, mcpc_tool_list_t, ResultData, ToolListData};
use super::transport::mcpc_transport_t;
use crate::client::{Client, Control};
use crate::drive::runtime;
use crate::error::mcpc_status_t;
use crate::error::{quote, Error, Result, Status};
use crate::transport::http::{HttpConfig, HttpTransport};
use crate::transport::stdio::{StdioConfig, StdioTransport};
use crate::transport::{SinkRef, Transport};

/// A connected MCP client. Thread-safe: any number of threads may call it at once,
/// and their requests are multiplexed over its one connection.
pub struct mcpc_client_t {
    _private: [u8; 0],
}

pub(crate) struct ClientHandle {
    pub client: Arc<Client>,
    version: CString,
    negotiated_by: CString,
    ops: Arc<OpTracker>,
}

impl ClientHandle {
    fn new(client: Client) -> Self {
        let version = super::boundary::c_message(&client.session().version);
        let negotiated_by = super::boundary::c_message(client.session().negotiated_by);
        ClientHandle {
            client: Arc::new(client),
            version,
            negotiated_by,
            ops: OpTracker::new(),
        }
    }

    /// Closes the client, then waits until every async operation has completed.
    async fn close(client: Arc<Client>, ops: Arc<OpTracker>) {
        ops.close();
        client.close().await;
        ops.idle().await;
    }
}

impl Handle for mcpc_client_t {
    type Rust = ClientHandle;
    const NAME: &'static str = "client";
}

/// Receives progress for a call: `progress` (increasing), `total` (negative when the
/// server gave none) and `message` (NUL-terminated, NULL when absent, borrowed for the
/// duration of the call). Runs on an mcpc thread; calls for one request never overlap.
/// It must not block for long; blocking mcpc calls from it return MCPC_ERR_WOULD_DEADLOCK.
pub type mcpc_progress_cb =
    Option<unsafe extern "C" fn(userdata: *mut c_void, progress: f64, total: f64, message: *const c_char)>;

/// Per-call settings. Initialise with mcpc_call_opts_init, then set what you need;
/// NULL in place of the struct means all defaults. The struct is read during the call
/// only; the caller keeps ownership.
#[repr(C)]
pub struct mcpc_call_opts_t {
    /// sizeof(mcpc_call_opts_t), set by mcpc_call_opts_init; lets the struct grow.
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

/// Reads call options into a core `Control`.
///
/// # Safety
/// `opts` is NULL or a valid, initialised mcpc_call_opts_t; its cancel handle is NULL or live.
unsafe fn control_from(opts: *const mcpc_call_opts_t) -> Result<Control> {
    // SAFETY: per the contract.
    let Some(o) = (unsafe { opts.as_ref() }) else {
        return Ok(Control::default());
    };
    if (o.struct_size as usize) < std::mem::size_of::<mcpc_call_opts_t>() {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            "mcpc_call_opts_t.struct_size is wrong; initialise the struct with mcpc_call_opts_init",
        ));
    }
    if o.timeout_ms < 0 || o.max_total_ms < 0 {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            "timeout_ms and max_total_ms must not be negative",
        ));
    }
    let mut ctl = Control {
        timeout: (o.timeout_ms > 0).then(|| Duration::from_millis(o.timeout_ms as u64)),
        reset_on_progress: o.reset_timeout_on_progress,
        max_total: (o.max_total_ms > 0).then(|| Duration::from_millis(o.max_total_ms as u64)),
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

/// Fills `opts` with the defaults (client timeout, no cancel, no progress) and sets
/// `struct_size`. Does nothing for NULL.
///
/// # Safety
/// `opts` is NULL or points to writable memory for one mcpc_call_opts_t.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_call_opts_init(opts: *mut mcpc_call_opts_t) {
    boundary("mcpc_call_opts_init", || {
        if !opts.is_null() {
            let init = mcpc_call_opts_t {
                struct_size: std::mem::size_of::<mcpc_call_opts_t>() as u32,
                timeout_ms: 0,
                cancel: std::ptr::null(),
                on_progress: None,
                progress_userdata: std::ptr::null_mut(),
                reset_timeout_on_progress: false,
                max_total_ms: 0,
            };
            // SAFETY: writable per the contract.
            unsafe { opts.write(init) };
        }
    })
}

fn options_of(opts: *const mcpc_options_t) -> Result<OptionsData> {
    if opts.is_null() {
        return Ok(OptionsData::default());
    }
    // SAFETY: the caller's contract: NULL or a live options object.
    Ok(unsafe { ptr::get(opts) }?.clone())
}

/// What makes a client's transport, given the sink it delivers into.
type ConnectorBox = Box<dyn Fn(SinkRef) -> Result<Arc<dyn Transport>> + Send + Sync>;

fn connect_blocking(o: OptionsData, connector: ConnectorBox, out_client: *mut *mut mcpc_client_t) -> Result<Status> {
    let client = runtime::block_on(Client::connect(&*connector, o.client, &Control::default()))??;
    // SAFETY: `out_client` was checked non-NULL by the caller of this helper.
    unsafe { *out_client = ptr::into_raw::<mcpc_client_t>(ClientHandle::new(client)) };
    Ok(Status::MCPC_OK)
}

/// The stdio connector for `argv` (checked UTF-8) and the options.
///
/// # Safety
/// `argv` is NULL or holds `argc` NUL-terminated strings.
unsafe fn stdio_connector(argv: *const *const c_char, argc: usize, o: &OptionsData) -> Result<ConnectorBox> {
    if argv.is_null() || argc == 0 {
        return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "argv is NULL or argc is 0"));
    }
    // SAFETY: `argv` holds `argc` pointers per the contract.
    let raw = unsafe { std::slice::from_raw_parts(argv, argc) };
    let mut args = Vec::with_capacity(argc);
    for (i, a) in raw.iter().enumerate() {
        // SAFETY: each is a NUL-terminated string per the contract.
        args.push(unsafe { str_in(*a, &format!("argv[{i}]")) }?.to_string());
    }
    let mut cfg = StdioConfig::new(&args[0]);
    cfg.args = args[1..].iter().map(Into::into).collect();
    cfg.env = o.env.clone();
    cfg.clear_env = o.clear_env;
    cfg.cwd = o.cwd.clone();
    cfg.stderr = o.stderr.clone();
    cfg.max_message_size = o.max_message_size;
    cfg.close_grace = o.close_grace;
    cfg.term_grace = o.term_grace;
    Ok(Box::new(move |sink: SinkRef| StdioTransport::spawn(cfg.clone(), sink)))
}

/// The HTTP connector: the URL is checked here, before any connection.
///
/// # Safety
/// `url` is NULL or NUL-terminated.
unsafe fn http_connector(url: *const c_char, o: &OptionsData) -> Result<ConnectorBox> {
    // SAFETY: per the contract.
    let url = crate::url_policy::check_endpoint(unsafe { str_in(url, "url") }?)?;
    let cfg = HttpConfig {
        url,
        headers: o.headers.clone(),
        bearer: o.bearer.clone(),
        token_fn: o.token_fn.clone(),
        ca_pem: o.ca_pem.clone(),
        max_message_size: o.max_message_size,
        standalone_stream: o.standalone_stream,
        connect_timeout: o.client.timeout.min(std::time::Duration::from_secs(30)),
    };
    Ok(Box::new(move |sink: SinkRef| HttpTransport::connect(cfg.clone(), sink)))
}

/// The connector for a caller-supplied transport.
///
/// # Safety
/// `transport` is NULL or live.
unsafe fn transport_connector(transport: *const mcpc_transport_t, o: &OptionsData) -> Result<ConnectorBox> {
    // SAFETY: per the contract.
    let host = unsafe { ptr::get(transport) }?.clone();
    let max = o.max_message_size;
    Ok(Box::new(move |sink: SinkRef| host.attach(sink, max)))
}

/// Starts a server as a child process and connects to it over stdio: spawns
/// `argv[0]` (looked up in PATH when it has no slash) with `argv[1..argc]`, runs the
/// initialize handshake, and sends notifications/initialized. Blocks until the client is
/// ready or the options' timeout passes. The child runs in its own process group and
/// belongs to the client: mcpc_client_close stops and reaps it and its group.
/// Ownership: `argv` and `opts` are read during the call only (`opts` may be NULL for
/// the defaults). On success `*out_client` is owned by the caller; free it with
/// mcpc_client_free. On failure `*out_client` is NULL and no process is left.
/// Threads: any thread except mcpc's own (from an mcpc callback it returns
/// MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, argc 0), MCPC_ERR_INVALID_UTF8, MCPC_ERR_SPAWN,
/// MCPC_ERR_HANDSHAKE, MCPC_ERR_TIMEOUT, MCPC_ERR_TRANSPORT, MCPC_ERR_MESSAGE_TOO_LARGE,
/// MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `argv` is NULL or holds `argc` NUL-terminated strings; `opts` is NULL or live;
/// `out_client` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_stdio(
    argv: *const *const c_char,
    argc: usize,
    opts: *const mcpc_options_t,
    out_client: *mut *mut mcpc_client_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_stdio", || {
        check_out(out_client, "out_client")?;
        // SAFETY: checked non-NULL.
        unsafe { *out_client = std::ptr::null_mut() };
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { stdio_connector(argv, argc, &o) }?;
        connect_blocking(o, connector, out_client)
    })
}

/// The server's initialize result as JSON (`protocolVersion`, `capabilities`,
/// `serverInfo`, `instructions`), or under 2026-07-28 its `server/discover` result
/// (`supportedVersions`, `capabilities`, `_meta` with the server info, `instructions`),
/// as the server sent it.
/// Ownership: on success `*out_json` is owned by the caller; free with mcpc_string_free.
/// Threads: any thread, concurrently.
/// Errors: MCPC_ERR_INVALID_ARG (NULL).
///
/// # Safety
/// `client` is NULL or live; `out_json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_server_info(
    client: *const mcpc_client_t,
    out_json: *mut *mut c_char,
) -> mcpc_status_t {
    status("mcpc_client_server_info", || {
        check_out(out_json, "out_json")?;
        // SAFETY: checked non-NULL.
        unsafe { *out_json = std::ptr::null_mut() };
        // SAFETY: per the contract.
        let c = unsafe { ptr::get(client) }?;
        // SAFETY: checked non-NULL.
        unsafe { *out_json = string_out(c.client.session().init_result.get()) };
        Ok(Status::MCPC_OK)
    })
}

/// The protocol version in use, such as "2025-11-25". NULL if `client` is NULL.
/// Ownership: borrowed; valid until mcpc_client_free. Threads: any thread.
///
/// # Safety
/// `client` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_protocol_version(client: *const mcpc_client_t) -> *const c_char {
    boundary("mcpc_client_protocol_version", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(client) }.map_or(std::ptr::null(), |c| c.version.as_ptr())
    })
}

/// How the protocol version in use was chosen: "discover" (auto mode: the server's
/// `server/discover` listed 2026-07-28), "fallback" (auto mode: the probe showed an older
/// server, and `initialize` chose the version), "initialize" (legacy mode), or "pinned".
/// NULL if `client` is NULL.
/// Ownership: borrowed; valid until mcpc_client_free. Threads: any thread.
///
/// # Safety
/// `client` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_negotiated_by(client: *const mcpc_client_t) -> *const c_char {
    boundary("mcpc_client_negotiated_by", || {
        // SAFETY: per the contract.
        unsafe { ptr::get(client) }.map_or(std::ptr::null(), |c| c.negotiated_by.as_ptr())
    })
}

/// Lists all the server's tools, following `nextCursor` page by page. Fails with
/// MCPC_ERR_CURSOR_REPEATED when a cursor repeats one already seen in this listing,
/// MCPC_ERR_DUPLICATE_TOOL when a tool name appears twice, MCPC_ERR_TOO_MANY_PAGES past
/// the configured page limit; each message names the cursor or tool. The timeout
/// covers the whole listing.
/// Ownership: `opts` is read during the call (NULL: defaults). On success `*out_list`
/// is owned by the caller; free with mcpc_tool_list_free.
/// Threads: any thread, concurrently with other calls on the same client; not from
/// mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG, MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_RPC,
/// MCPC_ERR_PROTOCOL, MCPC_ERR_TRANSPORT, MCPC_ERR_CLOSED, the three listing errors above.
///
/// # Safety
/// `client` is NULL or live; `opts` is NULL or initialised; `out_list` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_tools(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    out_list: *mut *mut mcpc_tool_list_t,
) -> mcpc_status_t {
    status("mcpc_client_list_tools", || {
        check_out(out_list, "out_list")?;
        // SAFETY: checked non-NULL.
        unsafe { *out_list = std::ptr::null_mut() };
        // SAFETY: per the contract.
        let (c, ctl) = unsafe { (ptr::get(client)?, control_from(opts)?) };
        let tools = crate::drive::block_on_driven(std::pin::pin!(c.client.list_tools(&ctl)), c.client.driver())??;
        // SAFETY: checked non-NULL.
        unsafe { *out_list = ptr::into_raw::<mcpc_tool_list_t>(ToolListData::new(tools)) };
        Ok(Status::MCPC_OK)
    })
}

/// Calls tool `name` with `arguments_json` (a JSON object, or NULL for none) and
/// waits for its result. On MCPC_OK and on MCPC_ERR_TOOL (the tool ran and reported
/// failure with `isError: true`) `*out_result` holds the result, whose text says what
/// went wrong. A JSON-RPC error (for example an unknown tool) is MCPC_ERR_RPC with its
/// code in mcpc_last_error_rpc_code(). On timeout or cancel the server is sent
/// `notifications/cancelled` and a late response is dropped; a local cancel does not
/// prove that the server stopped the work.
/// Ownership: the strings and `opts` are read during the call. `*out_result` is owned
/// by the caller (free with mcpc_result_free); it is NULL on any other status.
/// Threads: any thread, concurrently with other calls on the same client; not from
/// mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, arguments not a JSON object), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_TOOL, MCPC_ERR_RPC, MCPC_ERR_TIMEOUT, MCPC_ERR_CANCELLED, MCPC_ERR_PROTOCOL,
/// MCPC_ERR_TRANSPORT, MCPC_ERR_MESSAGE_TOO_LARGE, MCPC_ERR_CLOSED.
///
/// # Safety
/// `client` is NULL or live; strings are NULL or NUL-terminated; `opts` is NULL or
/// initialised; `out_result` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_call_tool(
    client: *const mcpc_client_t,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    out_result: *mut *mut mcpc_result_t,
) -> mcpc_status_t {
    status("mcpc_client_call_tool", || {
        check_out(out_result, "out_result")?;
        // SAFETY: checked non-NULL.
        unsafe { *out_result = std::ptr::null_mut() };
        // SAFETY: per the contract.
        let (c, name, args, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(name, "name")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let args = crate::result::parse_arguments(args)?;
        let r = crate::drive::block_on_driven(
            std::pin::pin!(c.client.call_tool_waited(name, args, &ctl)),
            c.client.driver(),
        )??;
        let tool_error = r.is_error.then(|| tool_error(name, &r));
        // SAFETY: checked non-NULL.
        unsafe { *out_result = ptr::into_raw::<mcpc_result_t>(ResultData::new(r)) };
        tool_error.map_or(Ok(Status::MCPC_OK), Err)
    })
}

/// Closes the client: every call in flight returns MCPC_ERR_CLOSED, and the
/// transport shuts down (for stdio: stdin closed, then after the close grace SIGTERM
/// to the process group, then SIGKILL; the child is always reaped). Bounded by the
/// options' close grace periods. Idempotent; later calls fail with MCPC_ERR_CLOSED.
/// The handle stays valid until mcpc_client_free.
/// Threads: any thread, also while other threads are in calls on this client; not
/// from mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK; use mcpc_client_free there).
/// Errors: MCPC_ERR_INVALID_ARG (NULL), MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `client` is NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_close(client: *const mcpc_client_t) -> mcpc_status_t {
    status("mcpc_client_close", || {
        // SAFETY: per the contract.
        let c = unsafe { ptr::get(client) }?;
        runtime::block_on(ClientHandle::close(c.client.clone(), c.ops.clone()))?;
        Ok(Status::MCPC_OK)
    })
}

/// Closes the client (as mcpc_client_close) and frees it. NULL is a no-op. Called from
/// an mcpc callback it does not block: the close finishes on an mcpc thread.
/// Threads: any thread, once no other thread is using the handle.
///
/// # Safety
/// `client` is NULL or live, freed only once, with no call on it still running.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_free(client: *mut mcpc_client_t) {
    boundary("mcpc_client_free", || {
        // SAFETY: per the contract.
        let Some(c) = (unsafe { ptr::take(client) }) else {
            return;
        };
        let close = ClientHandle::close(c.client.clone(), c.ops.clone());
        drop(c);
        if runtime::on_runtime_thread() {
            runtime::handle().spawn(close);
        } else {
            let _ = runtime::block_on(close);
        }
    })
}

/// Connects over a caller-supplied transport (see mcpc_transport_new): runs the
/// initialize handshake through the host's callbacks and waits for it. The host
/// delivers the server's messages with mcpc_transport_deliver, from its own threads,
/// also while this call blocks. A transport serves one client.
/// Ownership: `transport` stays the host's (free it with mcpc_transport_free when
/// done delivering); the client holds its own reference. `opts` is read during the
/// call (NULL: defaults). On success `*out_client` is owned by the caller.
/// Threads: any thread except mcpc's own and the host's delivering thread (a blocking
/// call from an mcpc callback returns MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, transport already attached), MCPC_ERR_HANDSHAKE,
/// MCPC_ERR_TIMEOUT, MCPC_ERR_TRANSPORT, MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `transport` is NULL or live; `opts` is NULL or live; `out_client` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_transport(
    transport: *const mcpc_transport_t,
    opts: *const mcpc_options_t,
    out_client: *mut *mut mcpc_client_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_transport", || {
        check_out(out_client, "out_client")?;
        // SAFETY: checked non-NULL.
        unsafe { *out_client = std::ptr::null_mut() };
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { transport_connector(transport, &o) }?;
        connect_blocking(o, connector, out_client)
    })
}

/// Completes mcpc_client_connect_stdio_async or mcpc_client_connect_transport_async:
/// on MCPC_OK `client` is the new client, owned by the callee (free it with
/// mcpc_client_free, from any thread); otherwise it is NULL and `error_message` says
/// why (also in mcpc_last_error_* during the call). `error_message` is borrowed for the
/// call ("" on success). Runs exactly once, on an mcpc thread.
pub type mcpc_connect_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        client: *mut mcpc_client_t,
        error_message: *const c_char,
    ),
>;

/// Completes mcpc_client_list_tools_async: on MCPC_OK `list` is owned by the callee
/// (free with mcpc_tool_list_free); otherwise NULL. Otherwise as mcpc_connect_done_cb.
pub type mcpc_list_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        list: *mut mcpc_tool_list_t,
        error_message: *const c_char,
    ),
>;

/// Completes mcpc_client_call_tool_async: on MCPC_OK and MCPC_ERR_TOOL `result` is owned
/// by the callee (free with mcpc_result_free); otherwise NULL. Otherwise as
/// mcpc_connect_done_cb.
pub type mcpc_call_done_cb = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: mcpc_status_t,
        result: *mut mcpc_result_t,
        error_message: *const c_char,
    ),
>;

/// Userdata carried to a completion callback on an mcpc thread.
struct SendPtr(*mut c_void);
// SAFETY: the header documents that completions run on mcpc threads with this userdata.
unsafe impl Send for SendPtr {}

/// Runs a completion callback: the value on success (or with MCPC_ERR_TOOL), else the
/// error, which is also this thread's last error during the callback.
fn finish<T>(
    cb: unsafe extern "C" fn(*mut c_void, Status, *mut T, *const c_char),
    ud: SendPtr,
    value: *mut T,
    err: Option<Error>,
) {
    match &err {
        None => {
            super::boundary::clear_last_error();
            // SAFETY: the caller's callback, with its userdata, an owned value and a
            // static empty message (a success allocates no message).
            unsafe { cb(ud.0, Status::MCPC_OK, value, c"".as_ptr()) }
        }
        Some(e) => {
            super::boundary::set_last_error(e);
            let msg = super::boundary::c_message(&e.message);
            // SAFETY: as above, with a message borrowed for the callback's duration.
            unsafe { cb(ud.0, e.status, value, msg.as_ptr()) }
        }
    }
}

fn required<T>(cb: Option<T>) -> Result<T> {
    cb.ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "on_done is NULL"))
}

/// Stores the op handle, or drops it when the caller passed no `out_op`.
fn op_out(op: Arc<super::op::OpState>, out_op: *mut *mut mcpc_op_t) {
    if !out_op.is_null() {
        // SAFETY: the caller's writable out-pointer, checked non-NULL.
        unsafe { *out_op = ptr::into_raw::<mcpc_op_t>(op) };
    }
}

fn clear_out_op(out_op: *mut *mut mcpc_op_t) {
    if !out_op.is_null() {
        // SAFETY: the caller's writable out-pointer, checked non-NULL.
        unsafe { *out_op = std::ptr::null_mut() };
    }
}

fn connect_async(
    o: OptionsData,
    connector: ConnectorBox,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> Result<Status> {
    let cb = required(on_done)?;
    let ud = SendPtr(userdata);
    let op = spawn_op(
        None,
        None,
        |token| async move {
            let ctl = Control {
                cancel: Some(token),
                ..Control::default()
            };
            Client::connect(&*connector, o.client, &ctl).await
        },
        move |outcome| match outcome {
            Ok(client) => finish(cb, ud, ptr::into_raw::<mcpc_client_t>(ClientHandle::new(client)), None),
            Err(e) => finish(cb, ud, std::ptr::null_mut(), Some(e)),
        },
    )?;
    op_out(op, out_op);
    Ok(Status::MCPC_OK)
}

/// Starts mcpc_client_connect_stdio without blocking: returns at once, and `on_done`
/// gets the client (or the error) exactly once, on an mcpc thread. Cancelling the op
/// stops the handshake and shuts the server down (`initialize` itself is never sent
/// `notifications/cancelled`).
/// Ownership: `argv` and `opts` are read during this call. `*out_op` (when `out_op` is
/// not NULL) is owned by the caller; free it with mcpc_op_free.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, argc 0, NULL
/// on_done), MCPC_ERR_INVALID_UTF8. Later errors go to `on_done`, as for
/// mcpc_client_connect_stdio.
///
/// # Safety
/// As mcpc_client_connect_stdio; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_stdio_async(
    argv: *const *const c_char,
    argc: usize,
    opts: *const mcpc_options_t,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_stdio_async", || {
        clear_out_op(out_op);
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { stdio_connector(argv, argc, &o) }?;
        connect_async(o, connector, on_done, userdata, out_op)
    })
}

/// Starts mcpc_client_connect_transport without blocking; as
/// mcpc_client_connect_stdio_async otherwise.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL transport or
/// on_done).
///
/// # Safety
/// As mcpc_client_connect_transport; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_transport_async(
    transport: *const mcpc_transport_t,
    opts: *const mcpc_options_t,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_transport_async", || {
        clear_out_op(out_op);
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { transport_connector(transport, &o) }?;
        connect_async(o, connector, on_done, userdata, out_op)
    })
}

/// Starts mcpc_client_list_tools without blocking: returns at once, and `on_done` gets
/// the list (or the error) exactly once, on an mcpc thread. A cancel from `opts.cancel`
/// or mcpc_op_cancel stops it with MCPC_ERR_CANCELLED. Closing the client completes it
/// (MCPC_ERR_CLOSED) before the close returns.
/// Ownership: `opts` is read during this call; its progress userdata must stay valid
/// until `on_done` runs. `*out_op` (when not NULL) is owned by the caller.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG, MCPC_ERR_CLOSED.
///
/// # Safety
/// As mcpc_client_list_tools; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_list_tools_async(
    client: *const mcpc_client_t,
    opts: *const mcpc_call_opts_t,
    on_done: mcpc_list_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_list_tools_async", || {
        clear_out_op(out_op);
        // SAFETY: per the contract.
        let (c, mut ctl) = unsafe { (ptr::get(client)?, control_from(opts)?) };
        let cb = required(on_done)?;
        let ud = SendPtr(userdata);
        let client = c.client.clone();
        let parent = ctl.cancel.take();
        let op = spawn_op(
            Some(&c.ops),
            parent.as_ref(),
            |token| async move {
                ctl.cancel = Some(token);
                client.list_tools(&ctl).await
            },
            move |outcome| match outcome {
                Ok(tools) => finish(
                    cb,
                    ud,
                    ptr::into_raw::<mcpc_tool_list_t>(ToolListData::new(tools)),
                    None,
                ),
                Err(e) => finish(cb, ud, std::ptr::null_mut(), Some(e)),
            },
        )?;
        op_out(op, out_op);
        Ok(Status::MCPC_OK)
    })
}

/// Starts mcpc_client_call_tool without blocking: returns at once, and `on_done` gets
/// the result (or the error) exactly once, on an mcpc thread. A cancel from
/// `opts.cancel` or mcpc_op_cancel sends `notifications/cancelled` and completes with
/// MCPC_ERR_CANCELLED, even when the response races the cancel. Closing the client
/// completes it (MCPC_ERR_CLOSED) before the close returns.
/// Ownership: `name`, `arguments_json` and `opts` are read during this call; the
/// progress userdata must stay valid until `on_done` runs. `*out_op` (when not NULL)
/// is owned by the caller; free it with mcpc_op_free.
/// Threads: any thread, also from mcpc callbacks.
/// Errors (returned here, with no callback): MCPC_ERR_INVALID_ARG (NULL, arguments not
/// a JSON object), MCPC_ERR_INVALID_UTF8, MCPC_ERR_CLOSED.
///
/// # Safety
/// As mcpc_client_call_tool; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_call_tool_async(
    client: *const mcpc_client_t,
    name: *const c_char,
    arguments_json: *const c_char,
    opts: *const mcpc_call_opts_t,
    on_done: mcpc_call_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_call_tool_async", || {
        clear_out_op(out_op);
        // SAFETY: per the contract.
        let (c, name, args, mut ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(name, "name")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let cb = required(on_done)?;
        let ud = SendPtr(userdata);
        if c.client.can_call_direct(&ctl) {
            // No task: the request goes out now, and the thread that routes the
            // response runs the completion.
            let args = crate::result::parse_arguments(args)?;
            let op = direct_op(
                &c.ops,
                !out_op.is_null(),
                |done| {
                    c.client.call_tool_direct(name, args, &ctl, move |outcome, tool| {
                        done.finish(outcome.map(|r| {
                            let err = r.is_error.then(|| tool_error(tool.as_str(), &r));
                            (r, err)
                        }))
                    })
                },
                move |outcome| match outcome {
                    Ok((r, err)) => finish(cb, ud, ptr::into_raw::<mcpc_result_t>(ResultData::new(r)), err),
                    Err(e) => finish(cb, ud, std::ptr::null_mut(), Some(e)),
                },
            )?;
            if let Some(op) = op {
                op_out(op, out_op);
            }
            return Ok(Status::MCPC_OK);
        }
        let args = crate::result::parse_arguments(args)?.map(crate::result::Arguments::to_owned);
        let client = c.client.clone();
        let name = name.to_string();
        let parent = ctl.cancel.take();
        let op = spawn_op(
            Some(&c.ops),
            parent.as_ref(),
            |token| async move {
                ctl.cancel = Some(token);
                let r = client
                    .call_tool(
                        &name,
                        args.as_ref().map(crate::result::OwnedArguments::as_arguments),
                        &ctl,
                    )
                    .await?;
                let tool_error = r.is_error.then(|| tool_error(&name, &r));
                Ok((r, tool_error))
            },
            move |outcome| match outcome {
                Ok((r, err)) => finish(cb, ud, ptr::into_raw::<mcpc_result_t>(ResultData::new(r)), err),
                Err(e) => finish(cb, ud, std::ptr::null_mut(), Some(e)),
            },
        )?;
        op_out(op, out_op);
        Ok(Status::MCPC_OK)
    })
}

fn tool_error(name: &str, r: &crate::result::CallResult) -> Error {
    Error::new(
        Status::MCPC_ERR_TOOL,
        format!(
            "tools/call {}: the tool reported an error: {}",
            quote(name),
            quote(r.text_str())
        ),
    )
}

/// Connects to a Streamable HTTP endpoint and runs the initialize handshake. `url`
/// must be `https://`, or `http://` on a loopback host (127.0.0.0/8, ::1, localhost);
/// anything else is refused with MCPC_ERR_INSECURE_URL before any connection is made,
/// and a URL with credentials in it is refused with MCPC_ERR_INVALID_ARG. TLS is
/// always verified: the system's roots plus any CA given in the options. Headers, the
/// bearer token and the token callback come from the options. Redirects are followed
/// only within the endpoint's origin, never from https to http.
/// Ownership and threads: as mcpc_client_connect_stdio.
/// Errors: MCPC_ERR_INVALID_ARG, MCPC_ERR_INVALID_UTF8, MCPC_ERR_INSECURE_URL,
/// MCPC_ERR_TLS, MCPC_ERR_TRANSPORT, MCPC_ERR_HTTP, MCPC_ERR_AUTH, MCPC_ERR_HANDSHAKE,
/// MCPC_ERR_TIMEOUT, MCPC_ERR_WOULD_DEADLOCK.
///
/// # Safety
/// `url` is NULL or NUL-terminated; `opts` is NULL or live; `out_client` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_http(
    url: *const c_char,
    opts: *const mcpc_options_t,
    out_client: *mut *mut mcpc_client_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_http", || {
        check_out(out_client, "out_client")?;
        // SAFETY: checked non-NULL.
        unsafe { *out_client = std::ptr::null_mut() };
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { http_connector(url, &o) }?;
        connect_blocking(o, connector, out_client)
    })
}

/// Starts mcpc_client_connect_http without blocking; as mcpc_client_connect_stdio_async
/// otherwise. URL policy errors are returned here, with no callback.
///
/// # Safety
/// As mcpc_client_connect_http; `userdata` is passed to `on_done` untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn mcpc_client_connect_http_async(
    url: *const c_char,
    opts: *const mcpc_options_t,
    on_done: mcpc_connect_done_cb,
    userdata: *mut c_void,
    out_op: *mut *mut mcpc_op_t,
) -> mcpc_status_t {
    status("mcpc_client_connect_http_async", || {
        clear_out_op(out_op);
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { http_connector(url, &o) }?;
        connect_async(o, connector, on_done, userdata, out_op)
    })
}
