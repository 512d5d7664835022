//! `mcpc_client_t`: a connection to one MCP server, and the calls made over it.

use std::ffi::{c_char, CString};
use std::sync::Arc;

use super::boundary::{boundary, status};
pub(super) use super::call_opts::control_from;
pub use super::call_opts::{mcpc_call_opts_t, mcpc_progress_cb};
use super::cstr::{opt_str_in, str_in, string_out};
use super::op::OpTracker;
use super::options::mcpc_options_t;
use super::ptr::{self, Handle, Out};
use super::result::{mcpc_result_t, mcpc_tool_list_t, ResultData, ToolListData};
use super::transport::mcpc_transport_t;
use crate::client::{read_tool, Ask, Call, Client, Control};
use crate::config::{Config, Plan};
use crate::drive::runtime;
use crate::error::mcpc_status_t;
use crate::error::{Error, Result, Status};
use crate::supervise::Held;
use crate::transport::SinkRef;

/// A connected MCP client. Thread-safe: any number of threads may call it at once,
/// and their requests are multiplexed over its one connection.
pub struct mcpc_client_t {
    _private: [u8; 0],
}

pub(crate) struct ClientHandle {
    slot: Held,
    /// As negotiated at connect (a restarted server negotiates again, and speaks
    /// the same revision unless it changed meanwhile).
    version: CString,
    negotiated_by: CString,
    pub(super) ops: Arc<OpTracker>,
}

/// The client a request goes to: borrowed when there is only ever one.
pub(crate) enum ClientRef<'a> {
    One(&'a Arc<Client>),
    Now(Arc<Client>),
}

impl std::ops::Deref for ClientRef<'_> {
    type Target = Arc<Client>;
    fn deref(&self) -> &Arc<Client> {
        match self {
            ClientRef::One(c) => c,
            ClientRef::Now(c) => c,
        }
    }
}

impl ClientHandle {
    /// The handle for `client`, made by `plan`: supervised when the plan restarts.
    pub(super) fn made(plan: Plan, client: Client) -> Self {
        let version = super::boundary::c_message(&client.session().version);
        let negotiated_by = super::boundary::c_message(client.session().negotiated_by);
        ClientHandle {
            slot: Held::made(plan, client),
            version,
            negotiated_by,
            ops: OpTracker::new(),
        }
    }

    /// The client requests go to now.
    pub(crate) fn client(&self) -> ClientRef<'_> {
        match &self.slot {
            Held::One(c) => ClientRef::One(c),
            Held::Supervised(s) => ClientRef::Now(s.current()),
        }
    }

    /// The client for a blocking request: while the server is being started
    /// again, the new one, waited for within the request's timeout (or until its
    /// cancel); the request then has what is left of its timeout.
    pub(crate) fn client_ready(&self, ctl: &mut Control) -> ClientRef<'_> {
        match &self.slot {
            Held::One(c) => ClientRef::One(c),
            Held::Supervised(s) => {
                let c = s.current();
                if !c.is_closed() {
                    return ClientRef::Now(c);
                }
                let timeout = ctl.timeout.unwrap_or(c.options().timeout);
                let deadline = tokio::time::Instant::now() + timeout;
                let ready = runtime::block_on(s.ready(deadline, ctl.cancel.as_ref())).unwrap_or(c);
                ctl.timeout = Some(deadline.saturating_duration_since(tokio::time::Instant::now()));
                ClientRef::Now(ready)
            }
        }
    }

    /// Closes the client (no restart after this), then waits until every async
    /// operation has completed.
    fn close(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let ops = self.ops.clone();
        let slot = self.slot.clone();
        async move {
            ops.close();
            slot.close().await;
            ops.idle().await;
        }
    }
}

impl Handle for mcpc_client_t {
    type Rust = ClientHandle;
    const NAME: &'static str = "client";
}

pub(super) fn options_of(opts: *const mcpc_options_t) -> Result<Config> {
    if opts.is_null() {
        return Ok(Config::default());
    }
    // SAFETY: the caller's contract: NULL or a live options object.
    Ok(unsafe { ptr::get(opts) }?.clone())
}

fn connect_blocking(plan: Plan, out_client: Out<'_, *mut mcpc_client_t>) -> Result<Status> {
    let client = runtime::block_on(plan.connect(&Control::default()))??;
    out_client.set_handle(ClientHandle::made(plan, client));
    Ok(Status::MCPC_OK)
}

/// The stdio plan for `argv` (checked UTF-8) and the options.
///
/// # Safety
/// `argv` is NULL or holds `argc` NUL-terminated strings.
pub(super) unsafe fn stdio_connector(argv: *const *const c_char, argc: usize, o: &Config) -> Result<Plan> {
    if argv.is_null() || argc == 0 {
        return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "argv is NULL or argc is 0"));
    }
    // SAFETY: per the contract.
    o.stdio_plan(&unsafe { stdio_args(argv, argc) }?)
}

/// `argv`'s `argc` strings, checked UTF-8.
///
/// # Safety
/// `argv` is NULL or holds `argc` NUL-terminated strings.
pub(super) unsafe fn stdio_args(argv: *const *const c_char, argc: usize) -> Result<Vec<String>> {
    if argv.is_null() {
        return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "argv is NULL"));
    }
    // SAFETY: `argv` holds `argc` pointers per the contract.
    let raw = unsafe { std::slice::from_raw_parts(argv, argc) };
    let mut args = Vec::with_capacity(argc);
    for (i, a) in raw.iter().enumerate() {
        // SAFETY: each is a NUL-terminated string per the contract.
        args.push(unsafe { str_in(*a, &format!("argv[{i}]")) }?.to_string());
    }
    Ok(args)
}

/// The HTTP plan: the URL is checked here, before any connection.
///
/// # Safety
/// `url` is NULL or NUL-terminated.
pub(super) unsafe fn http_connector(url: *const c_char, o: &Config) -> Result<Plan> {
    // SAFETY: per the contract.
    o.http_plan(unsafe { str_in(url, "url") }?)
}

/// The plan for a caller-supplied transport.
///
/// # Safety
/// `transport` is NULL or live.
pub(super) unsafe fn transport_connector(transport: *const mcpc_transport_t, o: &Config) -> Result<Plan> {
    // SAFETY: per the contract.
    let host = unsafe { ptr::get(transport) }?.clone();
    let max = o.max_message_size;
    Ok(Plan::new(Box::new(move |sink: SinkRef| host.attach(sink, max)), o.client.clone()).endpoint("transport".into()))
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
        // SAFETY: per the contract.
        let out_client = unsafe { Out::new(out_client, "out_client") }?;
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { stdio_connector(argv, argc, &o) }?;
        connect_blocking(connector, out_client)
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
        // SAFETY: per the contract.
        let out_json = unsafe { Out::new(out_json, "out_json") }?;
        // SAFETY: per the contract.
        let c = unsafe { ptr::get(client) }?;
        out_json.set(string_out(c.client().session().init_result.get()));
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
/// covers the whole listing. A list the client keeps (its `ttlMs` under 2026-07-28;
/// before it, until `list_changed`, where the server declared `listChanged` and such
/// notifications reach the client) is handed out again without asking the server;
/// mcpc_client_forget_lists drops it.
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
        // SAFETY: per the contract.
        let out_list = unsafe { Out::new(out_list, "out_list") }?;
        // SAFETY: per the contract.
        let (c, ctl) = unsafe { (ptr::get(client)?, control_from(opts)?) };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        let tools = crate::drive::block_on_driven(std::pin::pin!(cl.list_tools(&ctl)), cl.driver())??;
        out_list.set_handle(ToolListData::new(tools));
        Ok(Status::MCPC_OK)
    })
}

/// Calls tool `name` with `arguments_json` (a JSON object, or NULL for none) and
/// waits for its result. On MCPC_OK and on MCPC_ERR_TOOL (the tool ran and reported
/// failure with `isError: true`) `*out_result` holds the result, whose text says what
/// went wrong; so it does on MCPC_ERR_OUTPUT_SCHEMA (see
/// mcpc_options_set_validate_output). A JSON-RPC error (for example an unknown tool) is MCPC_ERR_RPC with its
/// code in mcpc_last_error_rpc_code(). On timeout or cancel the server is sent
/// `notifications/cancelled` and a late response is dropped; a local cancel does not
/// prove that the server stopped the work.
/// Ownership: the strings and `opts` are read during the call. `*out_result` is owned
/// by the caller (free with mcpc_result_free); it is NULL on any other status.
/// Threads: any thread, concurrently with other calls on the same client; not from
/// mcpc callbacks (MCPC_ERR_WOULD_DEADLOCK).
/// Errors: MCPC_ERR_INVALID_ARG (NULL, arguments not a JSON object), MCPC_ERR_INVALID_UTF8,
/// MCPC_ERR_TOOL, MCPC_ERR_OUTPUT_SCHEMA, MCPC_ERR_RPC, MCPC_ERR_TIMEOUT,
/// MCPC_ERR_CANCELLED, MCPC_ERR_PROTOCOL, MCPC_ERR_TRANSPORT, MCPC_ERR_MESSAGE_TOO_LARGE,
/// MCPC_ERR_CLOSED.
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
        // SAFETY: per the contract.
        let out_result = unsafe { Out::new(out_result, "out_result") }?;
        // SAFETY: per the contract.
        let (c, name, args, ctl) = unsafe {
            (
                ptr::get(client)?,
                str_in(name, "name")?,
                opt_str_in(arguments_json, "arguments_json")?,
                control_from(opts)?,
            )
        };
        let mut ctl = ctl;
        let cl = c.client_ready(&mut ctl);
        call_tool_on(&cl, name, args, &ctl, out_result)
    })
}

/// Calls tool `name` on `cl` and hands out its result: MCPC_ERR_TOOL (and
/// MCPC_ERR_OUTPUT_SCHEMA) with the result set.
pub(super) fn call_tool_on(
    cl: &Arc<Client>,
    name: &str,
    args: Option<&str>,
    ctl: &Control,
    out_result: Out<'_, *mut mcpc_result_t>,
) -> Result<Status> {
    let args = crate::result::parse_arguments(args)?;
    let call = Call::new(cl, Ask::Tool { name, arguments: args }, ctl);
    let r = read_tool(
        crate::drive::block_on_driven(std::pin::pin!(call.wait()), cl.driver())?,
        name,
    )?;
    let tool_error = cl.outcome_error(name, &r);
    out_result.set_handle(ResultData::new(r));
    tool_error.map_or(Ok(Status::MCPC_OK), Err)
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
        runtime::block_on(c.close())?;
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
        let close = c.close();
        drop(c);
        close_for_free(close);
    })
}

/// Runs a freed handle's close: to its end on a caller's thread, or, from an mcpc
/// callback (which must not block), on an mcpc thread.
pub(super) fn close_for_free(close: impl std::future::Future<Output = ()> + Send + 'static) {
    if runtime::on_runtime_thread() {
        runtime::handle().spawn(close);
    } else {
        let _ = runtime::block_on(close);
    }
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
        // SAFETY: per the contract.
        let out_client = unsafe { Out::new(out_client, "out_client") }?;
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { transport_connector(transport, &o) }?;
        connect_blocking(connector, out_client)
    })
}

/// Connects to a Streamable HTTP endpoint and runs the initialize handshake. `url`
/// must be `https://`, or `http://` on a loopback host (127.0.0.0/8, ::1, localhost);
/// anything else is refused with MCPC_ERR_INSECURE_URL before any connection is made,
/// and a URL with credentials in it is refused with MCPC_ERR_INVALID_ARG. TLS is
/// always verified: the system's roots plus any CA given in the options. Headers, the
/// bearer token and the token callback come from the options. Redirects are followed
/// only within the endpoint's origin, never from https to http. A server that refuses
/// Streamable HTTP's POST (400, 404 or 405 without a JSON-RPC error body) is tried as
/// the HTTP+SSE transport of 2024-11-05 (see mcpc_options_set_http_transport). Proxies
/// as mcpc_options_set_proxy says.
/// Ownership and threads: as mcpc_client_connect_stdio.
/// Errors: MCPC_ERR_INVALID_ARG, MCPC_ERR_INVALID_UTF8, MCPC_ERR_INSECURE_URL,
/// MCPC_ERR_TLS, MCPC_ERR_TRANSPORT, MCPC_ERR_HTTP, MCPC_ERR_AUTH, MCPC_ERR_PROXY_AUTH,
/// MCPC_ERR_HANDSHAKE, MCPC_ERR_PROTOCOL (the old transport's endpoint on another
/// origin), MCPC_ERR_TIMEOUT, MCPC_ERR_WOULD_DEADLOCK.
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
        // SAFETY: per the contract.
        let out_client = unsafe { Out::new(out_client, "out_client") }?;
        let o = options_of(opts)?;
        // SAFETY: per the contract.
        let connector = unsafe { http_connector(url, &o) }?;
        connect_blocking(connector, out_client)
    })
}
