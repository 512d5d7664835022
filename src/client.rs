//! The client core: request ids, the pending-request table, routing of what the
//! server sends, and the MCP operations (handshake, tools/list, tools/call).

use std::collections::{HashMap, HashSet};
use std::fmt::Display;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::{self, Incoming, METHOD_NOT_FOUND};
use crate::protocol::{self, CancelledParams, ClientInfo, InitializeParams, Session};
use crate::result::{self, CallResult, Tool};
use crate::transport::{Outgoing, Sink, SinkRef, Transport};

/// Called with `(progress, total, message)` for each `notifications/progress` of a request.
pub type ProgressFn = Arc<dyn Fn(f64, Option<f64>, Option<&str>) + Send + Sync>;
/// Called with `(method, params JSON)` for server notifications the client does not handle itself.
pub type NotificationFn = Arc<dyn Fn(&str, Option<&str>) + Send + Sync>;

/// Client-wide settings.
#[derive(Clone)]
pub struct Options {
    pub client_info: ClientInfo,
    /// A version to ask for instead of the newest.
    pub protocol_version: Option<String>,
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
            protocol_version: None,
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

struct Waiter {
    tx: oneshot::Sender<Result<Box<RawValue>>>,
    progress: Option<Arc<ProgressState>>,
}

struct ProgressState {
    callback: Option<ProgressFn>,
    seen: AtomicU64,
    notify: Notify,
}

#[derive(Default)]
struct State {
    pending: HashMap<i64, Waiter>,
    closed: Option<Error>,
}

/// The part of a connection that the transport's sink reaches: it outlives
/// nothing it does not own, so the transport can hold it.
pub(crate) struct Shared {
    next_id: AtomicI64,
    state: Mutex<State>,
    on_notification: Option<NotificationFn>,
}

impl Shared {
    fn new(on_notification: Option<NotificationFn>) -> Self {
        Shared {
            next_id: AtomicI64::new(1),
            state: Mutex::new(State::default()),
            on_notification,
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
        self.lock().pending.remove(&id)
    }

    fn closed_error(&self) -> Option<Error> {
        self.lock().closed.clone()
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
        let state = self
            .lock()
            .pending
            .get(&id)
            .and_then(|w| w.progress.clone());
        if let Some(state) = state {
            state.seen.fetch_add(1, Ordering::Relaxed);
            state.notify.notify_one();
            if let Some(cb) = &state.callback {
                cb(p.progress, p.total, p.message.as_deref());
            }
        }
    }
}

impl Sink for Shared {
    fn deliver(&self, msg: &[u8]) -> Result<Option<Outgoing>> {
        match jsonrpc::decode(msg) {
            Err(e) => {
                log::warn!("dropped a message from the server: {e}");
                Err(e)
            }
            Ok(Incoming::Response { id, outcome }) => {
                match self.take(id) {
                    Some(w) => {
                        let _ = w.tx.send(outcome.map_err(jsonrpc::RpcError::into_error));
                    }
                    None => log::debug!(
                        "dropped a response to id {id}, which matches no pending request"
                    ),
                }
                Ok(None)
            }
            Ok(Incoming::Request { id, method }) => {
                let body = if method == "ping" {
                    jsonrpc::encode_response(id, Ok(protocol::empty_capabilities()))
                } else {
                    let msg = format!(
                        "Method not found: {}",
                        method.chars().take(100).collect::<String>()
                    );
                    jsonrpc::encode_response(id, Err((METHOD_NOT_FOUND, &msg)))
                };
                Ok(Some(Outgoing {
                    body,
                    id: None,
                    method: None,
                }))
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

    fn fail_request(&self, id: i64, err: Error) {
        if let Some(w) = self.take(id) {
            let _ = w.tx.send(Err(err));
        }
    }

    fn closed(&self, err: Error) {
        let drained: Vec<Waiter> = {
            let mut st = self.lock();
            if st.closed.is_some() {
                return;
            }
            st.closed = Some(err.clone());
            st.pending.drain().map(|(_, w)| w).collect()
        };
        for w in drained {
            let _ = w.tx.send(Err(err.clone()));
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
}

/// What makes a transport: given the sink it delivers into.
pub type Connector<'a> = &'a (dyn Fn(SinkRef) -> Result<Arc<dyn Transport>> + Sync);

#[derive(Serialize)]
struct ListParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cursor: Option<&'a str>,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a RawValue>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<ProgressMeta>,
}

#[derive(Serialize)]
struct ProgressMeta {
    #[serde(rename = "progressToken")]
    progress_token: i64,
}

impl Client {
    /// Makes the transport and runs the handshake. On failure the transport is closed.
    pub async fn connect(
        connector: Connector<'_>,
        options: Options,
        ctl: &Control,
    ) -> Result<Client> {
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
            },
        };
        match client.initialize(ctl).await {
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

    async fn initialize(&self, ctl: &Control) -> Result<Session> {
        let version = self
            .options
            .protocol_version
            .as_deref()
            .unwrap_or(protocol::LATEST_INITIALIZE_VERSION);
        let params = InitializeParams {
            protocol_version: version,
            capabilities: protocol::empty_capabilities(),
            client_info: &self.options.client_info,
        };
        let id = self.next_id();
        let raw = self
            .request(id, "initialize", &params, None, ctl, false)
            .await
            .map_err(|e| match e.status {
                Status::MCPC_ERR_RPC | Status::MCPC_ERR_PROTOCOL => {
                    e.with_status(Status::MCPC_ERR_HANDSHAKE)
                }
                _ => e,
            })?;
        let session = protocol::accept_initialize(raw)?;
        self.notify("notifications/initialized", None::<&()>)?;
        Ok(session)
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
    pub fn notify<P: Serialize + ?Sized>(
        &self,
        method: &'static str,
        params: Option<&P>,
    ) -> Result<()> {
        let body = jsonrpc::encode_notification(method, params);
        self.transport.send(Outgoing {
            body,
            id: None,
            method: Some(method),
        })
    }

    fn send_cancel(&self, id: i64, reason: &str) {
        let params = CancelledParams {
            request_id: id,
            reason,
        };
        if let Err(e) = self.notify("notifications/cancelled", Some(&params)) {
            log::debug!("could not send notifications/cancelled for {id}: {e}");
        }
    }

    /// Sends one request and waits for its outcome, its timeout, or its cancellation.
    /// `name` names the tool (or other target) in error messages.
    async fn request<P: Serialize + ?Sized>(
        &self,
        id: i64,
        method: &'static str,
        params: &P,
        name: Option<&str>,
        ctl: &Control,
        cancellable: bool,
    ) -> Result<Box<RawValue>> {
        let ctx = || match name {
            Some(n) => format!("{method} {}", quote(n)),
            None => method.to_string(),
        };
        let (tx, mut rx) = oneshot::channel();
        let progress = (ctl.progress.is_some() || ctl.reset_on_progress).then(|| {
            Arc::new(ProgressState {
                callback: ctl.progress.clone(),
                seen: AtomicU64::new(0),
                notify: Notify::new(),
            })
        });
        self.shared
            .register(
                id,
                Waiter {
                    tx,
                    progress: progress.clone(),
                },
            )
            .map_err(|e| e.context(ctx()))?;
        let mut guard = PendingGuard {
            client: self,
            id,
            done: false,
        };
        let body = jsonrpc::encode_request(id, method, Some(params));
        self.transport
            .send(Outgoing {
                body,
                id: Some(id),
                method: Some(method),
            })
            .map_err(|e| e.context(ctx()))?;

        let timeout = self.timeout_of(ctl);
        let start = Instant::now();
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
                        Err(_) => Err(self
                            .shared
                            .closed_error()
                            .unwrap_or_else(|| Error::new(Status::MCPC_ERR_CLOSED, "the connection closed"))
                            .context(ctx())),
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
            Err(e) if e.status == Status::MCPC_ERR_SESSION_EXPIRED => {
                self.list_tools_once(ctl, deadline).await
            }
            other => other,
        }
    }

    async fn list_tools_once(&self, ctl: &Control, deadline: Instant) -> Result<Vec<Tool>> {
        let mut tools: Vec<Tool> = Vec::new();
        let mut names: HashSet<String> = HashSet::new();
        let mut cursors: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0usize;
        loop {
            if pages == self.options.max_pages {
                return Err(Error::new(
                    Status::MCPC_ERR_TOO_MANY_PAGES,
                    format!(
                        "tools/list: more than {} pages; stopped",
                        self.options.max_pages
                    ),
                ));
            }
            pages += 1;
            let page_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let params = ListParams {
                cursor: cursor.as_deref(),
            };
            let id = self.next_id();
            let raw = self
                .request(id, "tools/list", &params, None, &page_ctl, true)
                .await?;
            let page = result::parse_page(&raw)
                .map_err(|e| e.context(format!("tools/list page {pages}")))?;
            for tool in page.tools {
                if !names.insert(tool.name.clone()) {
                    return Err(Error::new(
                        Status::MCPC_ERR_DUPLICATE_TOOL,
                        format!(
                            "tools/list: tool name {} appears twice (page {pages})",
                            quote(&tool.name)
                        ),
                    ));
                }
                tools.push(tool);
            }
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) => {
                    if !cursors.insert(next.clone()) {
                        return Err(Error::new(
                            Status::MCPC_ERR_CURSOR_REPEATED,
                            format!("tools/list: cursor {} was already seen in this listing (page {pages})", quote(&next)),
                        ));
                    }
                    cursor = Some(next);
                }
            }
        }
    }

    /// Calls a tool. A result with `isError: true` is returned as `Ok` with
    /// `is_error` set: the caller decides how to report it.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<&RawValue>,
        ctl: &Control,
    ) -> Result<CallResult> {
        let id = self.next_id();
        let wants_progress = ctl.progress.is_some() || ctl.reset_on_progress;
        let params = CallParams {
            name,
            arguments,
            meta: wants_progress.then_some(ProgressMeta { progress_token: id }),
        };
        let raw = self
            .request(id, "tools/call", &params, Some(name), ctl, true)
            .await?;
        result::parse_call_result(raw).map_err(|e| e.context(format!("tools/call {}", quote(name))))
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
}

impl Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mcpc client (protocol {})", self.session.version)
    }
}
