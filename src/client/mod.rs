//! The client core: request ids, the pending-request table, routing of what the
//! server sends, and the MCP operations (handshake, tools/list, tools/call).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result, Status};
use crate::headers::ParamHeader;
use crate::jsonrpc::{self};
use crate::protocol::{self, CancelledParams, ClientInfo, Negotiation, RequestMeta, Session};
use crate::result::ResultJson;
use crate::transport::{Outgoing, ProbeKind, Sink, SinkRef, Transport};

pub mod apps;
mod cache;
pub mod call;
#[cfg(test)]
mod core_tests;
mod direct;
mod exchange;
pub mod extensions;
mod followed;
pub mod generic;
pub mod input;
mod listen;
mod listing;
mod logging;
mod negotiate;
#[cfg(test)]
mod negotiate_tests;
pub mod op;
mod output;
mod relay;
mod router;
pub mod skills;
pub mod tasks;
mod tools;
mod typed;

pub use call::{read_tool, Ask, Call};
use exchange::Exchange;
pub use listing::Listing;
pub use logging::{level_code, LogFn, LEVELS};
pub use negotiate::MAX_INPUT_ROUNDS;

pub use relay::Relayed;
pub use router::Reader;
pub(crate) use router::Shared;
use router::*;
pub use typed::Reference;

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
    /// How long the version probe waits on a stream transport before silence
    /// counts.
    pub probe_window: Duration,
    pub on_notification: Option<NotificationFn>,
    /// The host's handlers for the server's input requests.
    pub input: input::Handlers,
    /// The server log level to ask for (one of [`LEVELS`]), if any.
    pub log_level: Option<&'static str>,
    /// Gets `notifications/message` (else they go to `on_notification`).
    pub on_log: Option<LogFn>,
    /// Check `structuredContent` against the listed tool's `outputSchema`.
    pub validate_output: bool,
    /// A restart of the server follows a failed connection (set by the supervisor
    /// from the start, so that a server dying at once is reported as such).
    pub restart_follows: bool,
    /// The extensions declared, by id, each with its settings (a JSON object).
    pub extensions: Vec<(String, Box<serde_json::value::RawValue>)>,
    /// Names the server in task references (see [`tasks::Reference`]).
    pub endpoint: String,
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
            probe_window: negotiate::PROBE_TIMEOUT,
            on_notification: None,
            input: input::Handlers::default(),
            log_level: None,
            on_log: None,
            validate_output: false,
            restart_follows: false,
            extensions: Vec::new(),
            endpoint: String::new(),
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
    /// A listing asks the server even when a kept list still holds.
    pub bypass_cache: bool,
    /// How a call deals with tasks.
    pub task: tasks::TaskControl,
}

/// Receives a request's outcome on the thread that routes its response (an mcpc
/// thread), with no task in between.
pub type Completion = Box<dyn FnOnce(Result<ResultJson>) + Send>;

/// A connected MCP client. Thread-safe: every method takes `&self`, and
/// concurrent requests are multiplexed over the one connection.
pub struct Client {
    shared: Arc<Shared>,
    transport: Arc<dyn Transport>,
    options: Options,
    session: Session,
    /// Under 2026-07-28 over HTTP: each listed tool's `x-mcp-header` annotations.
    param_headers: Mutex<HashMap<String, Arc<Vec<ParamHeader>>>>,
    /// With `validate_output`: each listed tool's compiled `outputSchema`.
    output_schemas: output::Schemas,
    /// The capabilities the client declares: for `initialize`, and under 2026-07-28.
    capabilities: extensions::Declared,
    /// Under 2026-07-28: the subscribed resources and their `subscriptions/listen`.
    listener: listen::Listener,
    /// The skills entries held, by their `SKILL.md` URI (see [`skills`]).
    skills: Mutex<HashMap<String, Arc<skills::Skill>>>,
}

/// What makes a transport: given the sink it delivers into. Called again to
/// restart a stdio server that exited on the version probe.
pub type Connector<'a> = &'a (dyn Fn(SinkRef) -> Result<Arc<dyn Transport>> + Sync);

impl Client {
    /// The `_meta` a request carries: the progress token, and under 2026-07-28
    /// the protocol version, client capabilities and client info.
    fn meta(&self, progress_token: Option<i64>) -> RequestMeta<'_> {
        self.meta_for(progress_token, tasks::TaskMode::Allow)
    }

    /// [`Self::meta`] for a call with the task preference `mode`: under 2026-07-28
    /// the tasks extension is left out of the client capabilities (forbid), declared
    /// as the host did (allow), or added (prefer, require).
    fn meta_for(&self, progress_token: Option<i64>, mode: tasks::TaskMode) -> RequestMeta<'_> {
        if self.is_modern() {
            let caps = match mode {
                tasks::TaskMode::Allow => &self.capabilities.modern,
                tasks::TaskMode::Forbid => &self.capabilities.without_tasks,
                tasks::TaskMode::Prefer | tasks::TaskMode::Require => &self.capabilities.with_tasks,
            };
            RequestMeta {
                progress_token,
                protocol_version: Some(protocol::MODERN_VERSION),
                client_capabilities: Some(caps),
                client_info: Some(&self.options.client_info),
                log_level: self.log_level(),
            }
        } else {
            RequestMeta {
                progress_token,
                ..RequestMeta::default()
            }
        }
    }

    fn inbox(&self) -> &input::served::Inbox {
        &self.shared.inbox
    }

    /// Tells the server the host's roots changed (`notifications/roots/list_changed`).
    /// Under 2026-07-28 nothing is sent: the server asks for the roots each time.
    pub fn roots_changed(&self) -> Result<()> {
        if self.inbox().handlers.roots.is_none() {
            return Err(Error::new(
                Status::MCPC_ERR_NOT_SUPPORTED,
                "no roots handler is registered, so the client declares no roots",
            ));
        }
        if self.is_modern() {
            return Ok(());
        }
        self.notify("notifications/roots/list_changed", None::<&()>)
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

    /// Fails everything in flight with `MCPC_ERR_CLOSED` and shuts the transport down.
    /// Idempotent.
    pub async fn close(&self) {
        self.shared
            .closed(Error::new(Status::MCPC_ERR_CLOSED, "the client was closed"));
        self.reap_listens().await;
        self.transport.close().await;
    }

    /// True once the connection has failed or been closed.
    pub fn is_closed(&self) -> bool {
        self.shared.closed_error().is_some()
    }

    /// Why the connection ended, once it has.
    pub fn closed_error(&self) -> Option<Error> {
        self.shared.closed_error()
    }

    /// Cancelled once the connection has failed or been closed.
    pub fn gone(&self) -> CancellationToken {
        self.shared.gone.clone()
    }

    /// Whether a failed connection will be followed by a restart of the server
    /// (see MCPC_ERR_SERVER_EXITED).
    pub fn set_restart_follows(&self, on: bool) {
        self.shared.restart_follows.store(on, Ordering::Release);
    }

    /// No restart will follow after all (the restarts ran out, or the client was
    /// closed): a connection that failed saying one would now fails with `err`.
    pub fn no_restart(&self, err: Error) {
        self.set_restart_follows(false);
        self.shared.replace_restart_error(err);
    }

    /// What a caller's thread blocked in a call drives: the transport, which may let
    /// it read its own responses (see [`crate::drive::block_on_driven`]).
    pub fn driver(&self) -> Option<&dyn crate::drive::Drive> {
        self.transport.driver()
    }
}

fn notify<P: Serialize + ?Sized>(
    transport: &dyn Transport,
    method: impl Into<Cow<'static, str>>,
    params: Option<&P>,
) -> Result<()> {
    let method = method.into();
    let body = jsonrpc::encode_notification(&method, params);
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

impl Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "mcpc client (protocol {})", self.session.version)
    }
}
