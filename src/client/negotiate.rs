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

/// Most `input_required` rounds one call may take.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// The longest a version probe waits on a stream transport before taking silence
/// for an older server (which may ignore requests that come before `initialize`).
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

/// Decides what a failed `server/discover` says about the server. Only answers
/// that show an older server lead to `initialize`: authentication, TLS, server
/// errors and HTTP timeouts never do.
pub(super) fn classify_probe_error(e: Error, kind: ProbeKind) -> Probe {
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

impl Client {
    /// Makes the transport and agrees on a protocol version with the server: by
    /// `initialize`, or under 2026-07-28 by `server/discover`. On failure the
    /// transport is closed.
    pub async fn connect(connector: Connector<'_>, options: Options, ctl: &Control) -> Result<Client> {
        let inbox = Inbox::new(options.input.clone(), options.timeout);
        let shared = Arc::new(Shared::new(options.on_notification.clone(), inbox.clone()));
        let transport = connector(shared.clone() as SinkRef)?;
        inbox.set_transport(&transport);
        let capabilities = (options.input.capabilities(false), options.input.capabilities(true));
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
            capabilities,
        };
        match client.negotiate(connector, ctl).await {
            Ok(session) => {
                client.inbox().set_server(session.init_result.get());
                // A server may send its requests on the GET stream as soon as the
                // first call reaches it, and drops them while that stream is not open.
                let settle = client.timeout_of(ctl).min(Duration::from_secs(5));
                let _ = tokio::time::timeout(settle, client.transport.settled()).await;
                client.session = session;
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
    pub(super) fn set_modern(&self, modern: bool) {
        self.shared.modern.store(modern, Ordering::Release);
        self.transport.set_era(modern.then_some(protocol::MODERN_VERSION));
    }

    /// Replaces a transport whose server died on the probe with a fresh one.
    pub(super) async fn restart(&mut self, connector: Connector<'_>) -> Result<()> {
        self.transport.close().await;
        let inbox = self.shared.inbox.clone();
        let shared = Arc::new(Shared::new(self.options.on_notification.clone(), inbox.clone()));
        self.transport = connector(shared.clone() as SinkRef)?;
        inbox.set_transport(&self.transport);
        self.shared = shared;
        Ok(())
    }

    pub(super) async fn discover(&self, ctl: &Control, cancellable: bool) -> Result<Discovered> {
        let id = self.next_id();
        let params = MetaOnly { meta: self.meta(None) };
        let raw = self
            .request(
                id,
                "server/discover".into(),
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

    pub(super) async fn initialize(&self, version: &str, how: &'static str, ctl: &Control) -> Result<Session> {
        let params = InitializeParams {
            protocol_version: version,
            capabilities: &self.capabilities.0,
            client_info: &self.options.client_info,
        };
        let id = self.next_id();
        let raw = self
            .request(
                id,
                "initialize".into(),
                &Serialized(&params),
                None,
                ctl,
                false,
                Vec::new(),
                0,
            )
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
