//! The client core: request ids, the pending-request table, routing of what the
//! server sends, and the MCP operations (handshake, tools/list, tools/call).

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::deadlines::Deadlines;
use crate::error::{quote, Error, Result, Status};
use crate::headers::{self, ParamHeader};
use crate::jsonrpc::{self, Incoming, ResultJson, Serialized, METHOD_NOT_FOUND};
use crate::protocol::{
    self, negotiated, CancelledParams, ClientInfo, Discovered, InitializeParams, MetaOnly, Negotiation, RequestMeta,
    ResultKind, Session,
};
use crate::result::{self, Arguments, CallResult, Tool};
use crate::transport::{Outgoing, ProbeKind, Sink, SinkRef, Transport};

/// Called with `(progress, total, message)` for each `notifications/progress` of a request.
pub type ProgressFn = Arc<dyn Fn(f64, Option<f64>, Option<&str>) + Send + Sync>;
/// Called with `(method, params JSON)` for server notifications the client does not handle itself.
pub type NotificationFn = Arc<dyn Fn(&str, Option<&str>) + Send + Sync>;

/// Client-wide settings.
#[derive(Clone)]
pub struct Options {
    pub client_info: ClientInfo,
    /// How the protocol version is chosen (auto by default).
    pub negotiation: Negotiation,
    /// Default timeout for connect (handshake), each listing and each call.
    pub timeout: Duration,
    /// Most `tools/list` pages followed in one listing.
    pub max_pages: usize,
    pub on_notification: Option<NotificationFn>,
}

/// Default request timeout: finite, long enough for slow tools.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_MAX_PAGES: usize = 1000;

impl Default for Options {
    fn default() -> Self {
        Options {
            client_info: ClientInfo::default(),
            negotiation: Negotiation::default(),
            timeout: DEFAULT_TIMEOUT,
            max_pages: DEFAULT_MAX_PAGES,
            on_notification: None,
        }
    }
}

/// Per-operation control: timeout override, cancellation, progress.
#[derive(Clone, Default)]
pub struct Control {
    pub timeout: Option<Duration>,
    pub cancel: Option<CancellationToken>,
    pub progress: Option<ProgressFn>,
    /// Each progress notification restarts the timeout...
    pub reset_on_progress: bool,
    /// ...but never past this total.
    pub max_total: Option<Duration>,
}

/// Receives a request's outcome on the thread that routes its response (an mcpc
/// thread), with no task in between.
pub type Completion = Box<dyn FnOnce(Result<ResultJson>) + Send>;

/// Where a request's outcome goes.
enum Reply {
    /// A future waiting in [`Client::request`].
    Wake(oneshot::Sender<Result<ResultJson>>),
    /// A direct call ([`Client::call_tool_direct`]).
    Call(Completion),
}

struct Waiter {
    reply: Reply,
    progress: Option<Arc<ProgressState>>,
    /// When the request was registered.
    since: Instant,
    /// A direct call's deadline (also in `State::deadlines`).
    deadline: Option<Instant>,
    /// How the router reads the result as it reads the response (see
    /// [`Shared::route_read`]).
    reader: Reader,
}

/// Results up to this size are read by the router with their response
/// ([`Shared::route_read`]); larger ones go through [`jsonrpc::decode`] and are read
/// by their request. A 1 MiB call result read by the router had its copy and its
/// text allocated while the line buffer still held the message, and glibc then
/// grew and trimmed the heap around those three buffers on every call (four `brk` a
/// call, each growth faulting in fresh pages): the 1 MiB echo fell from about 300
/// to 180 MiB/s, though it took 12% fewer instructions. A larger call result in a
/// message handed over whole (`Sink::deliver_whole`) is read by the router too: it
/// is then kept as a slice of that message, with no copy.
const ROUTER_READS_UP_TO: usize = 64 * 1024;

/// What a request's result is, for the router to read it with its response.
#[derive(Clone, Copy, PartialEq)]
enum Reader {
    /// Any JSON, read by whoever waits for it.
    Json,
    /// A `CallToolResult`.
    Call,
    /// A `ListToolsResult`.
    Page,
}

impl Waiter {
    /// Hands over the outcome. A direct call's completion runs here, unless this
    /// thread may be the host's (then it runs on an mcpc thread).
    fn complete(self, outcome: Result<ResultJson>, on_mcpc_thread: bool) {
        match self.reply {
            Reply::Wake(tx) => {
                let _ = tx.send(outcome);
            }
            Reply::Call(done) if on_mcpc_thread => done(outcome),
            Reply::Call(done) => {
                crate::drive::runtime::handle().spawn(async move { done(outcome) });
            }
        }
    }
}

struct ProgressState {
    callback: Option<ProgressFn>,
    notify: Notify,
    /// The last progress value passed on: values that do not increase are dropped
    /// (the protocol promises increasing progress; a replaying server breaks it).
    last: Mutex<Option<f64>>,
}

#[derive(Default)]
struct State {
    /// By request id. The ids are this client's own (a server's response only looks
    /// one up), so a fast non-keyed hash is safe here; SipHash took 500 instructions
    /// per call (callgrind).
    pending: rustc_hash::FxHashMap<i64, Waiter>,
    closed: Option<Error>,
    /// Direct calls by deadline (see [`Client::call_tool_direct`]).
    deadlines: Deadlines,
    /// The deadline task runs.
    deadline_task: bool,
    /// The deadline the task sleeps until (None: until woken). A new deadline wakes
    /// it only when earlier: sequential calls, each the earliest when it starts (the
    /// one before it has ended), would otherwise wake a runtime thread each.
    deadline_armed: Option<Instant>,
}

/// The part of a connection that the transport's sink reaches: it outlives
/// nothing it does not own, so the transport can hold it.
pub(crate) struct Shared {
    next_id: AtomicI64,
    state: Mutex<State>,
    on_notification: Option<NotificationFn>,
    /// Under 2026-07-28 servers send no requests, and clients answer none.
    modern: AtomicBool,
    /// Wakes the deadline task: an earlier deadline, or the connection closed.
    deadline_wake: Notify,
}

impl Shared {
    fn new(on_notification: Option<NotificationFn>) -> Self {
        Shared {
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            on_notification,
            modern: AtomicBool::new(false),
            deadline_wake: Notify::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere never leaves the table inconsistent: every update is one step.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn register(&self, id: i64, waiter: Waiter) -> Result<()> {
        let mut st = self.lock();
        if let Some(err) = &st.closed {
            return Err(err.clone());
        }
        st.pending.insert(id, waiter);
        Ok(())
    }

    fn take(&self, id: i64) -> Option<Waiter> {
        let mut guard = self.lock();
        let st = &mut *guard;
        let w = st.pending.remove(&id)?;
        if let Some(d) = w.deadline {
            let pending = &st.pending;
            st.deadlines.remove(d, id, |i| pending.contains_key(&i));
        }
        Some(w)
    }

    fn closed_error(&self) -> Option<Error> {
        self.lock().closed.clone()
    }

    /// Why a waiter's reply was dropped unanswered: the connection closed.
    fn dropped_error(&self) -> Error {
        self.closed_error()
            .unwrap_or_else(|| Error::new(Status::MCPC_ERR_CLOSED, "the connection closed"))
    }

    fn route_response(&self, id: i64, outcome: std::result::Result<ResultJson, jsonrpc::RpcError>) {
        match self.take(id) {
            // A caller-supplied transport delivers on the host's threads.
            Some(w) => w.complete(
                outcome.map_err(jsonrpc::RpcError::into_error),
                crate::sys::on_mcpc_thread(),
            ),
            None => log::debug!("dropped a response to id {id}, which matches no pending request"),
        }
    }

    /// Routes a response to a `tools/call` or a `tools/list` in the usual shape,
    /// read in one pass: the envelope up to the result ([`jsonrpc::response_head`]),
    /// then the rest checked and read as the result ([`result::call_result_read`],
    /// [`result::page_read`]). Before, the router scanned the result for its end,
    /// and the reader scanned it again (about 500 instructions a small call, 2 a
    /// byte of a large result; callgrind). False, with nothing done, for any other
    /// message, for a request whose result is read elsewhere, and for a direct call
    /// when this may be the host's thread (`host`); [`jsonrpc::decode`] then reads
    /// the message as before.
    fn route_read(&self, msg: &[u8], host: bool, owner: Option<&bytes::Bytes>) -> bool {
        let Some((id, rest)) = jsonrpc::response_head(msg) else {
            return false;
        };
        // A large result is read here only from a message handed over whole, which
        // the result then keeps as a slice instead of a copy.
        let large = rest.len() > ROUTER_READS_UP_TO;
        if large && owner.is_none() {
            return false;
        }
        let reader = match self.lock().pending.get(&id) {
            Some(w) if !(host && matches!(w.reply, Reply::Call(_))) => w.reader,
            _ => Reader::Json,
        };
        if large && reader != Reader::Call {
            return false;
        }
        // The head is ASCII, and so is what follows the result: the message is
        // UTF-8 if the rest is.
        let Some(text) = (reader != Reader::Json)
            .then(|| jsonrpc::utf8(&msg[rest]).ok())
            .flatten()
        else {
            return false;
        };
        let read = match reader {
            Reader::Call => result::call_result_read(text, owner).map(ResultJson::from_call),
            _ => result::page_read(text).map(|page| ResultJson::from_page(text, page)),
        };
        let Some(read) = read else {
            return false;
        };
        match self.take(id) {
            Some(w) => w.complete(Ok(read), crate::sys::on_mcpc_thread()),
            // It ended meanwhile (a timeout, a cancel): a late response.
            None => log::debug!("dropped a response to id {id}, which matches no pending request"),
        }
        true
    }

    fn route_progress(&self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        struct P<'a> {
            #[serde(rename = "progressToken")]
            token: serde_json::Value,
            progress: f64,
            #[serde(default)]
            total: Option<f64>,
            #[serde(default, borrow)]
            message: Option<std::borrow::Cow<'a, str>>,
        }
        let Some(p) = params.and_then(|p| serde_json::from_str::<P<'_>>(p.get()).ok()) else {
            log::warn!("dropped a malformed notifications/progress");
            return;
        };
        let Some(id) = p.token.as_i64() else { return };
        let state = self.lock().pending.get(&id).and_then(|w| w.progress.clone());
        if let Some(state) = state {
            {
                let mut last = state.last.lock().unwrap_or_else(|p| p.into_inner());
                if last.is_some_and(|l| p.progress <= l) {
                    return;
                }
                *last = Some(p.progress);
            }
            state.notify.notify_one();
            if let Some(cb) = &state.callback {
                cb(p.progress, p.total, p.message.as_deref());
            }
        }
    }
}

impl Sink for Shared {
    fn deliver(&self, msg: &[u8]) -> Result<Option<Outgoing>> {
        self.deliver_whole(msg, None)
    }

    fn deliver_response(&self, msg: &[u8]) -> Option<Result<()>> {
        self.deliver_response_whole(msg, None)
    }

    fn deliver_whole(&self, msg: &[u8], whole: Option<&bytes::Bytes>) -> Result<Option<Outgoing>> {
        if self.route_read(msg, false, whole) {
            return Ok(None);
        }
        match jsonrpc::decode_in(msg, whole) {
            Err(e) => {
                log::warn!("dropped a message from the server: {e}");
                Err(e)
            }
            Ok(Incoming::Response { id, outcome }) => {
                self.route_response(id, outcome);
                Ok(None)
            }
            Ok(Incoming::Request { method, .. }) if self.modern.load(Ordering::Acquire) => {
                log::debug!("dropped a server request ({method}): 2026-07-28 servers send none");
                Ok(None)
            }
            Ok(Incoming::Request { id, method }) => {
                let body = if method == "ping" {
                    jsonrpc::encode_response(id, Ok(protocol::empty_capabilities()))
                } else {
                    let msg = format!("Method not found: {}", method.chars().take(100).collect::<String>());
                    jsonrpc::encode_response(id, Err((METHOD_NOT_FOUND, &msg)))
                };
                Ok(Some(Outgoing::response(body)))
            }
            Ok(Incoming::Notification { method, params }) => {
                if method == "notifications/progress" {
                    self.route_progress(params);
                } else if let Some(cb) = &self.on_notification {
                    cb(&method, params.map(RawValue::get));
                }
                Ok(None)
            }
        }
    }

    fn deliver_response_whole(&self, msg: &[u8], whole: Option<&bytes::Bytes>) -> Option<Result<()>> {
        if self.route_read(msg, true, whole) {
            return Some(Ok(()));
        }
        match jsonrpc::decode_in(msg, whole) {
            Ok(Incoming::Response { id, outcome }) => {
                // A direct call's completion is the host's code: never on the host's thread.
                if matches!(
                    self.lock().pending.get(&id),
                    Some(Waiter {
                        reply: Reply::Call(_),
                        ..
                    })
                ) {
                    return None;
                }
                self.route_response(id, outcome);
                Some(Ok(()))
            }
            Ok(_) => None,
            Err(e) => {
                log::warn!("dropped a message from the server: {e}");
                Some(Err(e))
            }
        }
    }

    fn is_pending(&self, id: i64) -> bool {
        self.lock().pending.contains_key(&id)
    }

    fn fail_request(&self, id: i64, err: Error) {
        if let Some(w) = self.take(id) {
            w.complete(Err(err), crate::sys::on_mcpc_thread());
        }
    }

    fn closed(&self, err: Error) {
        let drained: Vec<Waiter> = {
            let mut st = self.lock();
            if st.closed.is_some() {
                return;
            }
            st.closed = Some(err.clone());
            st.deadlines.clear();
            st.pending.drain().map(|(_, w)| w).collect()
        };
        self.deadline_wake.notify_one();
        for w in drained {
            // Closing may run on the host's thread (mcpc_client_close).
            w.complete(Err(err.clone()), false);
        }
    }
}

/// Removes a request's waiter when its future ends for any reason (completion,
/// timeout, cancellation, or the future being dropped), so a late response is dropped.
struct PendingGuard<'a> {
    client: &'a Client,
    id: i64,
    done: bool,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.client.shared.take(self.id);
            self.client.transport.abandon(self.id);
        }
    }
}

/// A connected MCP client. Thread-safe: every method takes `&self`, and
/// concurrent requests are multiplexed over the one connection.
pub struct Client {
    shared: Arc<Shared>,
    transport: Arc<dyn Transport>,
    options: Options,
    session: Session,
    /// Under 2026-07-28 over HTTP: each listed tool's `x-mcp-header` annotations.
    param_headers: Mutex<HashMap<String, Arc<Vec<ParamHeader>>>>,
}

/// What makes a transport: given the sink it delivers into. Called again to
/// restart a stdio server that exited on the version probe.
pub type Connector<'a> = &'a (dyn Fn(SinkRef) -> Result<Arc<dyn Transport>> + Sync);

#[derive(Serialize)]
struct ListParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cursor: Option<&'a str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<RequestMeta<'a>>,
}

struct CallParams<'a> {
    name: &'a str,
    arguments: Option<Arguments<'a>>,
    /// `_meta`
    meta: Option<RequestMeta<'a>>,
    /// `requestState`
    request_state: Option<&'a str>,
    /// `inputResponses`
    input_responses: Option<&'a RawValue>,
}

/// Written as they are: the keys as they are, the strings and `_meta` through serde
/// (escaped), the arguments and input responses (checked JSON) copied. serde
/// serializing them as a struct cost about 560 instructions a call, mostly in
/// escaping each key (callgrind); the test `call_params_written_as_json` checks
/// what is written.
impl jsonrpc::Params for CallParams<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        fn json(out: &mut Vec<u8>, value: &(impl Serialize + ?Sized)) {
            serde_json::to_writer(out, value).expect("serializing params cannot fail");
        }
        out.extend_from_slice(br#"{"name":"#);
        jsonrpc::write_json_str(out, self.name);
        if let Some(arguments) = self.arguments {
            out.extend_from_slice(br#","arguments":"#);
            out.extend_from_slice(arguments.get().as_bytes());
        }
        if let Some(meta) = &self.meta {
            out.extend_from_slice(br#","_meta":"#);
            json(out, meta);
        }
        if let Some(state) = self.request_state {
            out.extend_from_slice(br#","requestState":"#);
            json(out, state);
        }
        if let Some(responses) = self.input_responses {
            out.extend_from_slice(br#","inputResponses":"#);
            out.extend_from_slice(responses.get().as_bytes());
        }
        out.push(b'}');
    }
}

/// Most `input_required` rounds one call may take.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// The longest a version probe waits on a stream transport before taking silence
/// for an older server (which may ignore requests that come before `initialize`).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the version probe showed.
enum Probe {
    Modern(Session),
    /// The server refused the version it says it supports: ask once more.
    Retry,
    /// An older server: `initialize`, after restarting the server if it died.
    Legacy {
        restart: bool,
    },
    Fail(Error),
}

impl Client {
    /// Makes the transport and agrees on a protocol version with the server: by
    /// `initialize`, or under 2026-07-28 by `server/discover`. On failure the
    /// transport is closed.
    pub async fn connect(connector: Connector<'_>, options: Options, ctl: &Control) -> Result<Client> {
        let shared = Arc::new(Shared::new(options.on_notification.clone()));
        let transport = connector(shared.clone() as SinkRef)?;
        let mut client = Client {
            shared,
            transport,
            options,
            session: Session {
                version: String::new(),
                negotiated_by: "",
                init_result: RawValue::from_string("{}".into()).expect("static JSON"),
                modern: false,
            },
            param_headers: Mutex::new(HashMap::new()),
        };
        match client.negotiate(connector, ctl).await {
            Ok(session) => {
                client.session = session;
                Ok(client)
            }
            Err(e) => {
                client.close().await;
                Err(e)
            }
        }
    }

    async fn negotiate(&mut self, connector: Connector<'_>, ctl: &Control) -> Result<Session> {
        match self.options.negotiation.clone() {
            Negotiation::Legacy => {
                self.initialize(protocol::LATEST_INITIALIZE_VERSION, negotiated::INITIALIZE, ctl)
                    .await
            }
            Negotiation::Pinned(v) if protocol::is_modern(&v) => {
                self.set_modern(true);
                match self.discover(ctl, true).await? {
                    Discovered::Modern(mut s) => {
                        s.negotiated_by = negotiated::PINNED;
                        Ok(s)
                    }
                    Discovered::LegacyOnly => Err(Error::new(
                        Status::MCPC_ERR_UNSUPPORTED_VERSION,
                        format!("pinned to {v}, but the server lists only older versions"),
                    )),
                }
            }
            Negotiation::Pinned(v) => self.initialize(&v, negotiated::PINNED, ctl).await,
            Negotiation::Auto => {
                self.set_modern(true);
                let kind = self.transport.probe_kind();
                let probe_ctl = match kind {
                    ProbeKind::Stream { .. } => Control {
                        timeout: Some(self.timeout_of(ctl).min(PROBE_TIMEOUT)),
                        ..ctl.clone()
                    },
                    ProbeKind::Http => ctl.clone(),
                };
                let mut probe = Probe::Retry;
                for attempt in 0..2 {
                    probe = match self.discover(&probe_ctl, false).await {
                        Ok(Discovered::Modern(s)) => Probe::Modern(s),
                        Ok(Discovered::LegacyOnly) => Probe::Legacy { restart: false },
                        Err(e) => classify_probe_error(e, kind),
                    };
                    if !matches!(probe, Probe::Retry) || attempt == 1 {
                        break;
                    }
                }
                match probe {
                    Probe::Modern(s) => Ok(s),
                    Probe::Retry => Err(Error::new(
                        Status::MCPC_ERR_UNSUPPORTED_VERSION,
                        "the server refused 2026-07-28 twice while listing it as supported",
                    )),
                    Probe::Fail(e) => Err(e.context("protocol version probe")),
                    Probe::Legacy { restart } => {
                        if restart {
                            self.restart(connector).await?;
                        }
                        self.set_modern(false);
                        self.initialize(protocol::LATEST_INITIALIZE_VERSION, negotiated::FALLBACK, ctl)
                            .await
                    }
                }
            }
        }
    }

    /// Switches the connection (and its transport) between the two generations.
    fn set_modern(&self, modern: bool) {
        self.shared.modern.store(modern, Ordering::Release);
        self.transport.set_era(modern.then_some(protocol::MODERN_VERSION));
    }

    /// Replaces a transport whose server died on the probe with a fresh one.
    async fn restart(&mut self, connector: Connector<'_>) -> Result<()> {
        self.transport.close().await;
        let shared = Arc::new(Shared::new(self.options.on_notification.clone()));
        self.transport = connector(shared.clone() as SinkRef)?;
        self.shared = shared;
        Ok(())
    }

    async fn discover(&self, ctl: &Control, cancellable: bool) -> Result<Discovered> {
        let id = self.next_id();
        let params = MetaOnly { meta: self.meta(None) };
        let raw = self
            .request(
                id,
                "server/discover",
                &Serialized(&params),
                None,
                ctl,
                cancellable,
                Vec::new(),
                0,
            )
            .await?
            .into_raw()
            .map_err(|e| e.with_status(Status::MCPC_ERR_HANDSHAKE))?;
        protocol::accept_discover(raw, negotiated::DISCOVER)
    }

    async fn initialize(&self, version: &str, how: &'static str, ctl: &Control) -> Result<Session> {
        let params = InitializeParams {
            protocol_version: version,
            capabilities: protocol::empty_capabilities(),
            client_info: &self.options.client_info,
        };
        let id = self.next_id();
        let raw = self
            .request(id, "initialize", &Serialized(&params), None, ctl, false, Vec::new(), 0)
            .await
            .map_err(|e| match e.status {
                // Errors of the exchange itself are handshake errors; specific ones
                // (auth, TLS, unsupported version, timeout...) keep their status.
                Status::MCPC_ERR_RPC | Status::MCPC_ERR_PROTOCOL | Status::MCPC_ERR_HTTP => {
                    e.with_status(Status::MCPC_ERR_HANDSHAKE)
                }
                _ => e,
            })?
            .into_raw()
            .map_err(|e| e.with_status(Status::MCPC_ERR_HANDSHAKE))?;
        let session = protocol::accept_initialize(raw, how)?;
        self.notify("notifications/initialized", None::<&()>)?;
        Ok(session)
    }

    /// The `_meta` a request carries: the progress token, and under 2026-07-28
    /// the protocol version, client capabilities and client info.
    fn meta(&self, progress_token: Option<i64>) -> RequestMeta<'_> {
        if self.is_modern() {
            RequestMeta {
                progress_token,
                protocol_version: Some(protocol::MODERN_VERSION),
                client_capabilities: Some(protocol::empty_capabilities()),
                client_info: Some(&self.options.client_info),
            }
        } else {
            RequestMeta {
                progress_token,
                ..RequestMeta::default()
            }
        }
    }

    fn is_modern(&self) -> bool {
        self.shared.modern.load(Ordering::Acquire)
    }

    /// Under 2026-07-28 over HTTP, tool annotations become headers.
    fn mirrors_params(&self) -> bool {
        self.is_modern() && self.transport.probe_kind() == ProbeKind::Http
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    fn next_id(&self) -> i64 {
        self.shared.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn timeout_of(&self, ctl: &Control) -> Duration {
        ctl.timeout.unwrap_or(self.options.timeout)
    }

    /// Sends a notification.
    pub fn notify<P: Serialize + ?Sized>(&self, method: &'static str, params: Option<&P>) -> Result<()> {
        notify(&*self.transport, method, params)
    }

    fn send_cancel(&self, id: i64, reason: &str) {
        send_cancel(&*self.transport, id, reason);
    }

    /// Sends one request and waits for its outcome, its timeout, or its cancellation.
    /// `name` names the tool (or other target) in error messages.
    #[allow(clippy::too_many_arguments)]
    async fn request<P: jsonrpc::Params + ?Sized>(
        &self,
        id: i64,
        method: &'static str,
        params: &P,
        name: Option<&str>,
        ctl: &Control,
        cancellable: bool,
        headers: Vec<(String, String)>,
        params_len: usize,
    ) -> Result<ResultJson> {
        let ctx = || match name {
            Some(n) => format!("{method} {}", quote(n)),
            None => method.to_string(),
        };
        // A handle triggered before the call never lets it start.
        if ctl.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
            return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled before it was sent").context(ctx()));
        }
        let start = Instant::now();
        let (tx, mut rx) = oneshot::channel();
        let progress = (ctl.progress.is_some() || ctl.reset_on_progress).then(|| {
            Arc::new(ProgressState {
                callback: ctl.progress.clone(),
                notify: Notify::new(),
                last: Mutex::new(None),
            })
        });
        self.shared
            .register(
                id,
                Waiter {
                    reply: Reply::Wake(tx),
                    progress: progress.clone(),
                    since: start,
                    deadline: None,
                    // Before 2026-07-28 the results of these are always of their type.
                    reader: match method {
                        "tools/call" if !self.is_modern() => Reader::Call,
                        "tools/list" if !self.is_modern() => Reader::Page,
                        _ => Reader::Json,
                    },
                },
            )
            .map_err(|e| e.context(ctx()))?;
        let mut guard = PendingGuard {
            client: self,
            id,
            done: false,
        };
        let body = jsonrpc::encode_request(id, method, Some(params), params_len);
        self.transport
            .send(Outgoing {
                body,
                id: Some(id),
                method: Some(method),
                headers,
            })
            .map_err(|e| e.context(ctx()))?;

        let timeout = self.timeout_of(ctl);
        let hard_end = ctl.max_total.map(|m| start + m);
        let clamp = |t: Instant| hard_end.map_or(t, |h| t.min(h));
        let sleep = tokio::time::sleep_until(clamp(start + timeout));
        tokio::pin!(sleep);
        let cancelled = async {
            match &ctl.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        loop {
            let progressed = async {
                match (&progress, ctl.reset_on_progress) {
                    (Some(p), true) => p.notify.notified().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    guard.done = true;
                    return match outcome {
                        Ok(Ok(raw)) => Ok(raw),
                        Ok(Err(e)) => Err(e.context(ctx())),
                        Err(_) => Err(self.shared.dropped_error().context(ctx())),
                    };
                }
                _ = &mut cancelled => {
                    if cancellable {
                        self.send_cancel(id, "cancelled by the client");
                    }
                    return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled").context(ctx()));
                }
                _ = &mut sleep => {
                    if cancellable {
                        self.send_cancel(id, "timed out");
                    }
                    let waited = Instant::now().duration_since(start).as_millis();
                    return Err(Error::new(Status::MCPC_ERR_TIMEOUT, format!("timed out after {waited} ms")).context(ctx()));
                }
                _ = progressed => {
                    sleep.as_mut().reset(clamp(Instant::now() + timeout));
                }
            }
        }
    }

    /// Lists every tool, following `nextCursor`. The timeout covers the whole listing.
    /// When the HTTP session expires mid-listing, the listing starts over once on the
    /// fresh session (cursors belong to a session); a call is never retried.
    pub async fn list_tools(&self, ctl: &Control) -> Result<Vec<Tool>> {
        let deadline = Instant::now() + self.timeout_of(ctl);
        match self.list_tools_once(ctl, deadline).await {
            Err(e) if e.status == Status::MCPC_ERR_SESSION_EXPIRED => self.list_tools_once(ctl, deadline).await,
            other => other,
        }
    }

    async fn list_tools_once(&self, ctl: &Control, deadline: Instant) -> Result<Vec<Tool>> {
        let mut tools: Vec<Tool> = Vec::new();
        // Names seen, by their hash: a hash seen before is a duplicate if a tool
        // kept or dropped so far has that name. The names themselves cost an
        // allocation a tool to keep. Names are the server's, so their hash is keyed
        // (SipHash); the set of those hashes needs no second keyed hash.
        let name_hash = std::collections::hash_map::RandomState::new();
        let mut names: rustc_hash::FxHashSet<u64> = Default::default();
        let mut dropped: Vec<String> = Vec::new();
        let mut cursors: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0usize;
        let mirror = self.mirrors_params();
        let mut annotations: HashMap<String, Arc<Vec<ParamHeader>>> = HashMap::new();
        loop {
            if pages == self.options.max_pages {
                return Err(Error::new(
                    Status::MCPC_ERR_TOO_MANY_PAGES,
                    format!("tools/list: more than {} pages; stopped", self.options.max_pages),
                ));
            }
            pages += 1;
            let page_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let id = self.next_id();
            let meta = self.meta(None);
            let params = ListParams {
                cursor: cursor.as_deref(),
                meta: (!meta.is_empty()).then_some(meta),
            };
            let raw = self
                .request(
                    id,
                    "tools/list",
                    &Serialized(&params),
                    None,
                    &page_ctl,
                    true,
                    Vec::new(),
                    0,
                )
                .await?;
            let page = match raw.into_page() {
                Ok(read) => read,
                Err(raw) => {
                    if self.is_modern() && protocol::result_kind(raw.get())? != ResultKind::Complete {
                        return Err(Error::new(
                            Status::MCPC_ERR_PROTOCOL,
                            "tools/list: the server asked for input on a listing",
                        ));
                    }
                    result::parse_page(raw.get())
                }
            }
            .map_err(|e| e.context(format!("tools/list page {pages}")))?;
            for tool in page.tools {
                if !names.insert(name_hash.hash_one(&tool.name))
                    && tools.iter().map(|t| &t.name).chain(&dropped).any(|n| *n == tool.name)
                {
                    return Err(Error::new(
                        Status::MCPC_ERR_DUPLICATE_TOOL,
                        format!(
                            "tools/list: tool name {} appears twice (page {pages})",
                            quote(&tool.name)
                        ),
                    ));
                }
                if mirror {
                    match tool_param_headers(&tool) {
                        Ok(hs) if hs.is_empty() => {}
                        Ok(hs) => {
                            annotations.insert(tool.name.clone(), Arc::new(hs));
                        }
                        Err(why) => {
                            log::warn!("tools/list: dropped tool {}: {why}", quote(&tool.name));
                            dropped.push(tool.name);
                            continue;
                        }
                    }
                }
                tools.push(tool);
            }
            match page.next_cursor {
                None => {
                    if mirror {
                        *self.param_headers.lock().unwrap_or_else(|p| p.into_inner()) = annotations;
                    }
                    return Ok(tools);
                }
                Some(next) => {
                    if !cursors.insert(next.clone()) {
                        return Err(Error::new(
                            Status::MCPC_ERR_CURSOR_REPEATED,
                            format!(
                                "tools/list: cursor {} was already seen in this listing (page {pages})",
                                quote(&next)
                            ),
                        ));
                    }
                    cursor = Some(next);
                }
            }
        }
    }

    /// The 2026-07-28 HTTP headers of a call: `Mcp-Name`, and `Mcp-Param-*` for the
    /// tool's annotated parameters (as the last listing described them).
    fn call_headers(&self, name: &str, arguments: Option<Arguments<'_>>) -> Vec<(String, String)> {
        if !self.mirrors_params() {
            return Vec::new();
        }
        let mut out = vec![("Mcp-Name".to_string(), headers::encode_value(name))];
        let annotated = self
            .param_headers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned();
        if let (Some(hs), Some(args)) = (annotated, arguments) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(args.get()) {
                out.extend(headers::param_values(&v, &hs));
            }
        }
        out
    }

    /// Calls a tool. A result with `isError: true` is returned as `Ok` with
    /// `is_error` set: the caller decides how to report it. Under 2026-07-28 an
    /// `input_required` result is retried with its `requestState`, a new id each
    /// round, up to [`MAX_INPUT_ROUNDS`]. Over HTTP, a call refused for its headers
    /// (-32020) is retried once after listing the tools again.
    pub async fn call_tool(&self, name: &str, arguments: Option<Arguments<'_>>, ctl: &Control) -> Result<CallResult> {
        let wants_progress = ctl.progress.is_some() || ctl.reset_on_progress;
        let ctx = || call_context(name);
        let deadline = Instant::now() + self.timeout_of(ctl);
        let mut state: Option<String> = None;
        let mut responses: Option<Box<RawValue>> = None;
        let mut relisted = false;
        for _round in 0..=MAX_INPUT_ROUNDS {
            let id = self.next_id();
            let meta = self.meta(wants_progress.then_some(id));
            let params = CallParams {
                name,
                arguments,
                meta: (!meta.is_empty()).then_some(meta),
                request_state: state.as_deref(),
                input_responses: responses.as_deref(),
            };
            let round_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let headers = self.call_headers(name, arguments);
            let params_len = arguments.map_or(0, |a| a.get().len())
                + responses.as_ref().map_or(0, |r| r.get().len())
                + state.as_ref().map_or(0, String::len);
            let raw = match self
                .request(
                    id,
                    "tools/call",
                    &params,
                    Some(name),
                    &round_ctl,
                    true,
                    headers,
                    params_len,
                )
                .await
            {
                // The server wanted headers we did not send: the tool's schema is unknown
                // or changed. Re-list the tools to learn it, and retry once.
                Err(e) if e.status == Status::MCPC_ERR_HEADER_MISMATCH && self.mirrors_params() && !relisted => {
                    relisted = true;
                    let list_ctl = Control {
                        timeout: Some(deadline.saturating_duration_since(Instant::now())),
                        ..ctl.clone()
                    };
                    crate::drive::runtime::boxed_apart(|| self.list_tools(&list_ctl))
                        .await
                        .map_err(|le| le.context(ctx()))?;
                    continue;
                }
                other => other?,
            };
            if self.is_modern() {
                match protocol::result_kind(raw.get()).map_err(|e| e.context(ctx()))? {
                    ResultKind::Complete => {}
                    ResultKind::InputRequired {
                        request_state,
                        input_requests,
                    } => {
                        responses = match input_requests {
                            Some(reqs) => Some(
                                protocol::input_responses(&reqs)
                                    .map_err(|why| Error::new(Status::MCPC_ERR_INPUT_REQUIRED, why).context(ctx()))?,
                            ),
                            None => None,
                        };
                        state = request_state;
                        continue;
                    }
                }
            }
            return result::parse_call_result(raw).map_err(|e| e.context(ctx()));
        }
        Err(Error::new(
            Status::MCPC_ERR_INPUT_REQUIRED,
            format!("the server still asked for input after {MAX_INPUT_ROUNDS} rounds"),
        )
        .context(ctx()))
    }

    /// True when a call with these controls can be [direct](Self::call_tool_direct):
    /// a session before 2026-07-28 (no `input_required` rounds), no progress, and no
    /// cancellation token (a direct call is cancelled through its [`DirectCall`]).
    pub fn can_call_direct(&self, ctl: &Control) -> bool {
        ctl.progress.is_none() && !ctl.reset_on_progress && ctl.cancel.is_none() && !self.is_modern()
    }

    /// Starts `tools/call` with no task behind it: the request is registered and
    /// sent, and `done` runs exactly once with the outcome, on an mcpc thread: the one
    /// that routes the response (with no hand-off), the deadline task on a timeout, or
    /// a task for a cancel, a close or a failed send. `done` is also given the tool's
    /// name (the call's own copy, kept for error texts). Only for calls that
    /// [`can_call_direct`](Self::can_call_direct); errors as [`call_tool`](Self::call_tool).
    pub fn call_tool_direct(
        &self,
        name: &str,
        arguments: Option<Arguments<'_>>,
        ctl: &Control,
        done: impl FnOnce(Result<CallResult>, &ToolName) + Send + 'static,
    ) -> DirectCall {
        // The error context is made only for an error.
        let tool = ToolName(smallvec::SmallVec::from_slice(name.as_bytes()));
        let completion: Completion = Box::new(move |outcome| done(call_outcome(outcome, tool.as_str()), &tool));
        let id = self.start_direct(name, arguments, ctl, Reply::Call(completion));
        DirectCall {
            id,
            shared: self.shared.clone(),
            transport: Arc::downgrade(&self.transport),
        }
    }

    /// [`call_tool`](Self::call_tool) for a caller that waits for it on its own
    /// thread (a blocking call): [direct](Self::call_tool_direct) when it can be, its
    /// deadline one of the client's, so that the call arms no timer of its own and
    /// waits for nothing but its outcome. (Through `call_tool`, with a timer of its
    /// own and a select over the outcome, the timeout, the cancel handle and
    /// progress, a sequential call took about 1,150 instructions more; callgrind.)
    pub async fn call_tool_waited(
        &self,
        name: &str,
        arguments: Option<Arguments<'_>>,
        ctl: &Control,
    ) -> Result<CallResult> {
        if !self.can_call_direct(ctl) {
            return self.call_tool(name, arguments, ctl).await;
        }
        let (tx, rx) = oneshot::channel();
        let id = self.start_direct(name, arguments, ctl, Reply::Wake(tx));
        // Ends the call if this future is dropped first.
        let mut guard = PendingGuard {
            client: self,
            id,
            done: false,
        };
        let outcome = rx.await;
        guard.done = true;
        call_outcome(outcome.unwrap_or_else(|_| Err(self.shared.dropped_error())), name)
    }

    /// Registers and sends a direct `tools/call`, whose outcome goes to `reply`: from
    /// the thread that routes its response, from the deadline task when its timeout
    /// passes (which also tells the server), or at once if the client is closed or
    /// the request could not be sent. Its id.
    fn start_direct(&self, name: &str, arguments: Option<Arguments<'_>>, ctl: &Control, reply: Reply) -> i64 {
        let id = self.next_id();
        let params = CallParams {
            name,
            arguments,
            meta: None,
            request_state: None,
            input_responses: None,
        };
        let body = jsonrpc::encode_request(id, "tools/call", Some(&params), arguments.map_or(0, |a| a.get().len()));
        let timeout = self.timeout_of(ctl);
        let start_task = {
            let mut st = self.shared.lock();
            // Under the lock: calls of one timeout, started from many threads at
            // once, then come in the order of their deadlines, and each joins the
            // back of the deadline queue rather than the sorted set.
            let since = Instant::now();
            let deadline = since + timeout;
            let waiter = Waiter {
                reply,
                progress: None,
                since,
                deadline: Some(deadline),
                reader: Reader::Call,
            };
            if let Some(err) = &st.closed {
                let err = err.clone();
                drop(st);
                waiter.complete(Err(err), false);
                return id;
            }
            st.pending.insert(id, waiter);
            if st.deadlines.insert(deadline, id) && st.deadline_armed.map_or(true, |armed| deadline < armed) {
                self.shared.deadline_wake.notify_one();
            }
            !std::mem::replace(&mut st.deadline_task, true)
        };
        if start_task {
            crate::drive::runtime::handle()
                .spawn(expire_deadlines(self.shared.clone(), Arc::downgrade(&self.transport)));
        }
        let sent = self.transport.send(Outgoing {
            body,
            id: Some(id),
            method: Some("tools/call"),
            headers: Vec::new(),
        });
        if let Err(e) = sent {
            if let Some(w) = self.shared.take(id) {
                w.complete(Err(e), false);
            }
        }
        id
    }

    /// Fails everything in flight with `MCPC_ERR_CLOSED` and shuts the transport down.
    /// Idempotent.
    pub async fn close(&self) {
        self.shared
            .closed(Error::new(Status::MCPC_ERR_CLOSED, "the client was closed"));
        self.transport.close().await;
    }

    /// True once the connection has failed or been closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed_error().is_some()
    }

    /// What a caller's thread blocked in a call drives: the transport, which may let
    /// it read its own responses (see [`crate::drive::block_on_driven`]).
    pub fn driver(&self) -> Option<&dyn crate::drive::Drive> {
        self.transport.driver()
    }
}

/// What a tool call's errors are prefixed with.
fn call_context(name: &str) -> String {
    format!("tools/call {}", quote(name))
}

/// A direct call's outcome as its caller gets it: the result read, or the error
/// with the call's context.
fn call_outcome(outcome: Result<ResultJson>, name: &str) -> Result<CallResult> {
    outcome
        .and_then(result::parse_call_result)
        .map_err(|e| e.context(call_context(name)))
}

fn notify<P: Serialize + ?Sized>(transport: &dyn Transport, method: &'static str, params: Option<&P>) -> Result<()> {
    let body = jsonrpc::encode_notification(method, params);
    transport.send(Outgoing {
        body,
        id: None,
        method: Some(method),
        headers: Vec::new(),
    })
}

fn send_cancel(transport: &dyn Transport, id: i64, reason: &str) {
    let params = CancelledParams { request_id: id, reason };
    if let Err(e) = notify(transport, "notifications/cancelled", Some(&params)) {
        log::debug!("could not send notifications/cancelled for {id}: {e}");
    }
}

/// Stops a direct call's exchange and tells the server, if the transport is still there.
fn give_up(transport: &Weak<dyn Transport>, id: i64, reason: &str) {
    if let Some(transport) = transport.upgrade() {
        transport.abandon(id);
        send_cancel(&*transport, id, reason);
    }
}

/// Fails direct calls whose deadline passed; ends when the connection closes. Holds
/// the transport weakly: a client dropped without being closed still drops it.
async fn expire_deadlines(shared: Arc<Shared>, transport: Weak<dyn Transport>) {
    loop {
        let wake = shared.deadline_wake.notified();
        let next = {
            let mut st = shared.lock();
            if st.closed.is_some() {
                return;
            }
            st.deadline_armed = st.deadlines.first();
            st.deadline_armed
        };
        match next {
            Some(t) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(t) => {}
                    _ = wake => continue,
                }
            }
            None => {
                wake.await;
                continue;
            }
        }
        let now = Instant::now();
        loop {
            let expired = {
                let mut guard = shared.lock();
                let st = &mut *guard;
                let pending = &st.pending;
                match st.deadlines.pop_expired(now, |i| pending.contains_key(&i)) {
                    Some(id) => st.pending.remove(&id).map(|w| (id, w)),
                    None => break,
                }
            };
            if let Some((id, w)) = expired {
                give_up(&transport, id, "timed out");
                let waited = now.duration_since(w.since).as_millis();
                w.complete(
                    Err(Error::new(
                        Status::MCPC_ERR_TIMEOUT,
                        format!("timed out after {waited} ms"),
                    )),
                    true,
                );
            }
        }
    }
}

/// A direct call's copy of its tool's name, for error texts: inline when short (most
/// names are), so that it costs no allocation.
pub struct ToolName(smallvec::SmallVec<[u8; 32]>);

impl ToolName {
    pub fn as_str(&self) -> &str {
        // A copy of a `&str`, so always UTF-8; checked only when an error text needs it.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

/// A direct call in flight: cancel it, or let it run.
pub struct DirectCall {
    id: i64,
    shared: Arc<Shared>,
    transport: Weak<dyn Transport>,
}

impl DirectCall {
    /// Cancels the call: sends `notifications/cancelled`, and its completion gets
    /// MCPC_ERR_CANCELLED (on an mcpc thread). No-op once the call completed.
    pub fn cancel(&self) {
        if let Some(w) = self.shared.take(self.id) {
            give_up(&self.transport, self.id, "cancelled by the client");
            w.complete(Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled")), false);
        }
    }
}

/// Reads a tool's `x-mcp-header` annotations from its `inputSchema`.
fn tool_param_headers(tool: &Tool) -> std::result::Result<Vec<ParamHeader>, String> {
    #[derive(Deserialize)]
    struct Schema {
        #[serde(rename = "inputSchema", default)]
        input_schema: serde_json::Value,
    }
    let s: Schema = serde_json::from_str(tool.json()).map_err(|e| format!("malformed tool: {e}"))?;
    headers::param_headers(&s.input_schema)
}

/// Decides what a failed `server/discover` says about the server. Only answers
/// that show an older server lead to `initialize`: authentication, TLS, server
/// errors and HTTP timeouts never do.
fn classify_probe_error(e: Error, kind: ProbeKind) -> Probe {
    match e.status {
        // The server speaks the stateless protocol, but something in our request is off.
        Status::MCPC_ERR_HEADER_MISMATCH | Status::MCPC_ERR_MISSING_CAPABILITY => Probe::Fail(e),
        // -32022: if the versions it lists include ours, ask again; else it may speak
        // an older version.
        Status::MCPC_ERR_UNSUPPORTED_VERSION => {
            #[derive(Deserialize)]
            struct Data {
                #[serde(default)]
                supported: Vec<String>,
            }
            let supported = e.rpc_data.as_deref().and_then(|d| serde_json::from_str::<Data>(d).ok());
            if supported.is_some_and(|d| d.supported.iter().any(|v| protocol::is_modern(v))) {
                Probe::Retry
            } else {
                Probe::Legacy { restart: false }
            }
        }
        // Any other JSON-RPC error: an older server (they answer -32601, -32602, -32600...).
        Status::MCPC_ERR_RPC => Probe::Legacy { restart: false },
        Status::MCPC_ERR_HTTP if matches!(e.http_status, Some(400 | 404 | 405)) => Probe::Legacy { restart: false },
        Status::MCPC_ERR_TIMEOUT if matches!(kind, ProbeKind::Stream { .. }) => Probe::Legacy { restart: false },
        Status::MCPC_ERR_TRANSPORT if kind == (ProbeKind::Stream { restartable: true }) => {
            Probe::Legacy { restart: true }
        }
        _ => Probe::Fail(e),
    }
}

impl Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mcpc client (protocol {})", self.session.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tools/call` params, written as they are, are the JSON they stand for.
    #[test]
    fn call_params_written_as_json() {
        use crate::jsonrpc::Params as _;
        use serde_json::{json, Value};
        let args = r#"{"text":"a\"b","n":[1,2]}"#;
        let responses = RawValue::from_string(r#"{"q":{"ok":true}}"#.into()).unwrap();
        for name in ["echo", "a\"b\\c\n\u{1}é/", ""] {
            for full in [false, true] {
                for arguments in [None, result::parse_arguments(Some(args)).unwrap()] {
                    let params = CallParams {
                        name,
                        arguments,
                        meta: full.then(|| RequestMeta {
                            progress_token: Some(7),
                            ..RequestMeta::default()
                        }),
                        request_state: full.then_some("st\"ate"),
                        input_responses: full.then_some(&*responses),
                    };
                    let mut out = Vec::new();
                    params.write_json(&mut out);
                    let mut want = json!({ "name": name });
                    if arguments.is_some() {
                        want["arguments"] = serde_json::from_str(args).unwrap();
                    }
                    if full {
                        want["_meta"] = json!({ "progressToken": 7 });
                        want["requestState"] = json!("st\"ate");
                        want["inputResponses"] = json!({ "q": { "ok": true } });
                    }
                    assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), want);
                    // Compact: no raw newline can end the message early.
                    assert!(!out.contains(&b'\n'));
                }
            }
        }
    }
}
