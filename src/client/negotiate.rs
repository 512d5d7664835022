//! Agreeing on a protocol version: the `server/discover` probe, the `initialize`
//! fallback, and what a failed probe means on each transport.

use super::input::served::Inbox;
use super::*;
use crate::error::{Error, Result, Status};
use crate::jsonrpc::Serialized;
use crate::protocol::{self, negotiated, Discovered, InitializeParams, MetaOnly, Negotiation, Session};
use crate::transport::{ProbeKind, SinkRef};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

use crate::drive::BoxFuture;

/// Most `input_required` rounds one call may take.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// The longest a version probe waits alone on a stream transport before the
/// fallback `initialize` goes out too (some older servers ignore requests that
/// come before `initialize`).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// What the version probe showed.
pub(super) enum Probe {
    Modern(Session),
    /// The server refused the version it says it supports: ask once more.
    Retry,
    /// An older server: `initialize`, after restarting the server if it died.
    Legacy {
        restart: bool,
    },
    Fail(Error),
}

/// How a stream probe ended.
enum Step {
    /// The race of the probe and the fallback chose the session.
    Decided(Session),
    /// What the probe alone showed.
    Probe(Probe),
}

/// What a stream probe waits for.
enum Event {
    /// An answer to the probe (`true`: to the probe asked again).
    Probe(Result<Discovered>, bool),
    /// The outcome of the fallback `initialize`.
    Init(Result<Session>),
    /// The window of silence passed.
    Silence,
}

/// The output of `f`, or never when there is none.
async fn next<T>(f: &mut Option<BoxFuture<'_, T>>) -> T {
    match f {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

/// `ctl` with what is left until `deadline` as its timeout.
fn until(ctl: &Control, deadline: Instant) -> Control {
    Control {
        timeout: Some(deadline.saturating_duration_since(Instant::now())),
        ..ctl.clone()
    }
}

/// True for a -32022 whose data lists 2026-07-28 among the supported versions.
fn lists_modern(e: &Error) -> bool {
    #[derive(Deserialize)]
    struct Data {
        #[serde(default)]
        supported: Vec<String>,
    }
    e.status == Status::MCPC_ERR_UNSUPPORTED_VERSION
        && e.rpc_data
            .as_deref()
            .and_then(|d| serde_json::from_str::<Data>(d).ok())
            .is_some_and(|d| d.supported.iter().any(|v| protocol::is_modern(v)))
}

/// Decides what a failed `server/discover` says about the server. Only answers
/// that show an older server lead to `initialize`: authentication, TLS, server
/// errors and HTTP timeouts never do.
pub(super) fn classify_probe_error(e: Error, kind: ProbeKind) -> Probe {
    match e.status {
        // The server speaks the stateless protocol, but something in our request is off.
        Status::MCPC_ERR_HEADER_MISMATCH | Status::MCPC_ERR_MISSING_CAPABILITY => Probe::Fail(e),
        // -32022: if the versions it lists include ours, ask again; else it may speak
        // an older version.
        Status::MCPC_ERR_UNSUPPORTED_VERSION if lists_modern(&e) => Probe::Retry,
        Status::MCPC_ERR_UNSUPPORTED_VERSION => Probe::Legacy { restart: false },
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

impl Client {
    /// Makes the transport and agrees on a protocol version with the server: by
    /// `initialize`, or under 2026-07-28 by `server/discover`. On failure the
    /// transport is closed.
    pub async fn connect(connector: Connector<'_>, options: Options, ctl: &Control) -> Result<Client> {
        let inbox = Inbox::new(options.input.clone(), options.timeout);
        let shared = Arc::new(Shared::new(&options, inbox.clone()));
        let transport = connector(shared.clone() as SinkRef)?;
        inbox.set_transport(&transport);
        let capabilities = super::extensions::Declared::of(&options);
        let mut client = Client {
            shared,
            transport,
            options,
            session: Session {
                version: String::new(),
                negotiated_by: "",
                init_result: RawValue::from_string("{}".into()).expect("static JSON"),
                capabilities: Default::default(),
                modern: false,
            },
            param_headers: Mutex::new(HashMap::new()),
            output_schemas: Default::default(),
            capabilities,
            listener: Default::default(),
            skills: Default::default(),
        };
        match client.negotiate(connector, ctl).await {
            Ok(session) => {
                client.inbox().set_server(session.init_result.get());
                // A server may send its requests on the GET stream as soon as the
                // first call reaches it, and drops them while that stream is not open.
                let settle = client.timeout_of(ctl).min(Duration::from_secs(5));
                let _ = tokio::time::timeout(settle, client.transport.settled()).await;
                client.session = session;
                client.apply_log_level(ctl).await;
                Ok(client)
            }
            Err(e) => {
                client.close().await;
                Err(e)
            }
        }
    }

    pub(super) async fn negotiate(&mut self, connector: Connector<'_>, ctl: &Control) -> Result<Session> {
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
                // The connect timeout bounds the whole: probe, fallback and retries.
                let deadline = Instant::now() + self.timeout_of(ctl);
                let kind = self.transport.probe_kind();
                let probe = match kind {
                    ProbeKind::Stream { .. } => match self.probe_stream(ctl, deadline, kind).await? {
                        Step::Decided(session) => {
                            self.set_modern(session.modern);
                            return Ok(session);
                        }
                        Step::Probe(probe) => probe,
                    },
                    ProbeKind::Http => {
                        let mut probe = Probe::Retry;
                        for attempt in 0..2 {
                            probe = match self.discover(&until(ctl, deadline), false).await {
                                Ok(Discovered::Modern(s)) => Probe::Modern(s),
                                Ok(Discovered::LegacyOnly) => Probe::Legacy { restart: false },
                                Err(e) => classify_probe_error(e, kind),
                            };
                            if !matches!(probe, Probe::Retry) || attempt == 1 {
                                break;
                            }
                        }
                        probe
                    }
                };
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
                        self.fallback_until(ctl, deadline).await
                    }
                }
            }
        }
    }

    /// The probe on a stream transport, where a server may be slow to start and a
    /// few older ones ignore requests before `initialize`. The probe stays pending
    /// until the deadline; after the window of silence `initialize` goes out too,
    /// and the first answer that shows the server's generation decides: a probe
    /// answer listing 2026-07-28 (whenever it comes), an `initialize` result, or a
    /// -32022 to `initialize` listing 2026-07-28 (then the probe is asked again
    /// once, in case the first was lost). Gives the session when that race decided
    /// it, else what the probe showed, for [`Client::negotiate`] to act on.
    async fn probe_stream(&self, ctl: &Control, deadline: Instant, kind: ProbeKind) -> Result<Step> {
        let mut probe: Option<BoxFuture<'_, Result<Discovered>>> = Some(Box::pin(self.discover_until(ctl, deadline)));
        let mut again: Option<BoxFuture<'_, Result<Discovered>>> = None;
        let mut init: Option<BoxFuture<'_, Result<Session>>> = None;
        let (mut asked_again, mut init_sent) = (false, false);
        // What a failed `initialize` said, while a probe may still answer.
        let mut init_err: Option<Error> = None;
        // At most half the connect timeout, which leaves the fallback time to answer.
        let now = Instant::now();
        let half = deadline.saturating_duration_since(now) / 2;
        let window = tokio::time::sleep_until(now + half.min(self.options.probe_window));
        tokio::pin!(window);
        loop {
            let event = tokio::select! {
                biased;
                d = next(&mut probe) => Event::Probe(d, false),
                d = next(&mut again) => Event::Probe(d, true),
                i = next(&mut init) => Event::Init(i),
                () = &mut window, if !init_sent => Event::Silence,
            };
            match event {
                Event::Probe(answer, second) => {
                    if second {
                        again = None;
                    } else {
                        probe = None;
                    }
                    let shown = match answer {
                        Ok(Discovered::Modern(s)) => return Ok(Step::Decided(s)),
                        Ok(Discovered::LegacyOnly) => Probe::Legacy { restart: false },
                        Err(e) => classify_probe_error(e, kind),
                    };
                    match shown {
                        Probe::Retry if !asked_again => {
                            asked_again = true;
                            again = Some(Box::pin(self.discover_until(ctl, deadline)));
                        }
                        // An older server: the fallback decides, if it went out.
                        Probe::Legacy { restart: false } if init_sent => {
                            if probe.is_none() && again.is_none() {
                                if let Some(e) = init_err.take() {
                                    return Err(e);
                                }
                            }
                        }
                        shown => return Ok(Step::Probe(shown)),
                    }
                }
                Event::Init(Ok(session)) => return Ok(Step::Decided(session)),
                Event::Init(Err(e)) => {
                    init = None;
                    if lists_modern(&e) && !asked_again {
                        asked_again = true;
                        again = Some(Box::pin(self.discover_until(ctl, deadline)));
                    }
                    if probe.is_none() && again.is_none() {
                        return Err(e);
                    }
                    init_err = Some(e);
                }
                Event::Silence => {
                    init_sent = true;
                    init = Some(Box::pin(self.fallback_until(ctl, deadline)));
                }
            }
        }
    }

    async fn discover_until(&self, ctl: &Control, deadline: Instant) -> Result<Discovered> {
        self.discover(&until(ctl, deadline), false).await
    }

    async fn fallback_until(&self, ctl: &Control, deadline: Instant) -> Result<Session> {
        let ctl = until(ctl, deadline);
        self.initialize(protocol::LATEST_INITIALIZE_VERSION, negotiated::FALLBACK, &ctl)
            .await
    }

    /// Switches the connection (and its transport) between the two generations.
    pub(super) fn set_modern(&self, modern: bool) {
        self.shared.modern.store(modern, Ordering::Release);
        self.transport.set_era(modern.then_some(protocol::MODERN_VERSION));
    }

    /// Replaces a transport whose server died on the probe with a fresh one.
    pub(super) async fn restart(&mut self, connector: Connector<'_>) -> Result<()> {
        self.transport.close().await;
        let inbox = self.shared.inbox.clone();
        let shared = Arc::new(Shared::new(&self.options, inbox.clone()));
        self.transport = connector(shared.clone() as SinkRef)?;
        inbox.set_transport(&self.transport);
        self.shared = shared;
        Ok(())
    }

    pub(super) async fn discover(&self, ctl: &Control, cancellable: bool) -> Result<Discovered> {
        let id = self.next_id();
        let params = MetaOnly { meta: self.meta(None) };
        let x = Exchange {
            cancellable,
            ..Exchange::new(id, "server/discover")
        };
        let raw = self
            .exchange(x, &Serialized(&params), ctl)
            .await?
            .into_raw()
            .map_err(|e| e.with_status(Status::MCPC_ERR_HANDSHAKE))?;
        protocol::accept_discover(raw, negotiated::DISCOVER)
    }

    pub(super) async fn initialize(&self, version: &str, how: &'static str, ctl: &Control) -> Result<Session> {
        let params = InitializeParams {
            protocol_version: version,
            capabilities: &self.capabilities.legacy,
            client_info: &self.options.client_info,
        };
        let id = self.next_id();
        let x = Exchange {
            cancellable: false,
            ..Exchange::new(id, "initialize")
        };
        let raw = self
            .exchange(x, &Serialized(&params), ctl)
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
        // Set before `initialized`, after which the server may ask for input.
        self.inbox().set_server(session.init_result.get());
        self.notify("notifications/initialized", None::<&()>)?;
        Ok(session)
    }
}
