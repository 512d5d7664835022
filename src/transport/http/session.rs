//! Exchanges and the session: a message's exchange run by its caller's thread or a
//! task, the 2026-07-28 rules, session renewal after a 404, and the standalone
//! GET stream.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ::http::header::{HeaderMap, HeaderName, HeaderValue};
use ::http::{Method, StatusCode};
use bytes::Bytes;

use super::Outgoing;
use super::*;
use crate::drive::here::{self, Exchange, Owner};
use crate::drive::runtime::boxed_apart;
use crate::error::{Error, Result, Status};

impl Inner {
    /// Sends one message and routes what comes back. Errors belong to the message.
    /// The body is dropped once the server has answered, before the reply's body is
    /// read: no retry can need it then, and a large request's memory is free again
    /// before the response's.
    pub(super) async fn exchange(self: &Arc<Self>, msg: &Outgoing, body: Vec<u8>) -> Result<()> {
        if let Some(version) = self.era() {
            // Boxed, so that the future of every exchange is not as large as both.
            let what = msg.method.as_deref().unwrap_or("response");
            return boxed_apart(|| self.exchange_modern(msg, &body, version, what)).await;
        }
        let is_init = msg.method.as_deref() == Some("initialize");
        if is_init {
            self.session.write().unwrap_or_else(|p| p.into_inner()).init_body = Some(Bytes::copy_from_slice(&body));
        }
        if let Some(m @ ("logging/setLevel" | "resources/subscribe" | "resources/unsubscribe")) = msg.method.as_deref()
        {
            self.remember_for_replay(m, &body);
        }
        let generation = self.settled_generation().await;
        let (resp, had_session) = self.post(&body, &HeaderMap::new()).await?;
        drop(body);
        let status = resp.status();
        if status == StatusCode::NOT_FOUND && had_session {
            // The fresh session is ready (or the connection failed) before this
            // request reports the expiry, so a retry by the caller goes to it.
            boxed_apart(|| self.renew_session(generation)).await;
            return Err(Error::new(
                Status::MCPC_ERR_SESSION_EXPIRED,
                "the HTTP session expired (404); a fresh session was started",
            ));
        }
        if !status.is_success() {
            return Err(boxed_apart(|| status_error(resp)).await);
        }
        if is_init {
            if let Some(id) = resp.header(MCP_SESSION_ID) {
                let Some(id) = session_id(id) else {
                    return Err(Error::new(
                        Status::MCPC_ERR_PROTOCOL,
                        "the server's session id is not visible ASCII",
                    ));
                };
                self.session.write().unwrap_or_else(|p| p.into_inner()).id = Some(id);
            }
        }
        if msg.id.is_none() || status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Ok(());
        }
        self.read_reply(resp, is_init, msg.id).await
    }

    /// The stateless 2026-07-28 exchange: request metadata headers on every POST, no
    /// session, no client notifications (closing the reply stream is the cancel), and
    /// JSON-RPC errors in 400/404 replies delivered as the request's response.
    pub(super) async fn exchange_modern(
        self: &Arc<Self>,
        msg: &Outgoing,
        body: &[u8],
        version: &'static str,
        what: &str,
    ) -> Result<()> {
        let Some(id) = msg.id else {
            return Ok(()); // this revision has no client notifications over HTTP
        };
        let mut extra = HeaderMap::new();
        extra.insert(
            HeaderName::from_static(MCP_PROTOCOL_VERSION),
            HeaderValue::from_static(version),
        );
        if let Some(m) = msg.method.as_deref().and_then(|m| HeaderValue::from_str(m).ok()) {
            extra.insert(HeaderName::from_static(MCP_METHOD), m);
        }
        for (k, v) in &msg.headers {
            let (Ok(k), Ok(v)) = (HeaderName::from_bytes(k.as_bytes()), HeaderValue::from_str(v)) else {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("{what}: header {k:?} is not valid"),
                ));
            };
            extra.insert(k, v);
        }
        let (resp, _) = self.post(body, &extra).await?;
        let status = resp.status();
        if status == StatusCode::BAD_REQUEST || status == StatusCode::NOT_FOUND {
            let mut resp = resp;
            let body = read_limited(&mut resp, 64 * 1024).await;
            if let Some(reply) = error_reply_for(body.as_deref().unwrap_or_default(), id) {
                self.route(Body::Lent(&reply), false).await?;
                return Ok(());
            }
            let mut err = Error::new(Status::MCPC_ERR_HTTP, format!("HTTP {status}"));
            err.http_status = Some(status.as_u16());
            return Err(err);
        }
        if !status.is_success() {
            return Err(boxed_apart(|| status_error(resp)).await);
        }
        if status == StatusCode::ACCEPTED || status == StatusCode::NO_CONTENT {
            return Ok(());
        }
        self.read_reply(resp, false, None).await
    }

    pub(super) fn dispatch(self: &Arc<Self>, mut msg: Outgoing) {
        let me = self.clone();
        let id = msg.id;
        // Lent to the HTTP client, never copied (a retry after a 401 resends it).
        let body = std::mem::take(&mut msg.body);
        // Boxed at once: the exchange's future is large, and moving it unboxed
        // (into the caller's claim or out again, into a task, its end stored in the
        // task's cell) would copy all of it each time.
        let task: Exchange = Box::pin(async move {
            let outcome = me.exchange(&msg, body).await;
            match (outcome, msg.id) {
                (Err(e), Some(id)) => me.sink.fail_request(id, e),
                (Err(e), None) => log::debug!("a message to the server failed: {e}"),
                (Ok(()), Some(id)) => {
                    // No-op when the reply carried the response.
                    me.sink.fail_request(
                        id,
                        Error::new(
                            Status::MCPC_ERR_PROTOCOL,
                            "the HTTP reply carried no response to the request",
                        ),
                    );
                }
                (Ok(()), None) => {}
            }
            if let Some(id) = msg.id {
                me.inflight.lock().unwrap_or_else(|p| p.into_inner()).remove(&id);
            }
        });
        match id {
            Some(id) => {
                if let Some(task) = here::stash(Owner::of(self), id, task) {
                    self.spawn_exchange(id, task);
                }
            }
            None => self.spawn_background(task, false),
        }
    }

    /// Runs request `id`'s exchange on the runtime, where [`Transport::abandon`] can
    /// abort it.
    pub(super) fn spawn_exchange(&self, id: i64, task: Exchange) {
        if self.closed.load(Ordering::Acquire) {
            return; // dropped: closing aborts every exchange
        }
        // Registered under the lock, so the task's own removal comes after.
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        let handle = crate::drive::runtime::handle().spawn(task);
        inflight.insert(id, handle.abort_handle());
    }

    /// The session's generation, read while no fresh session is being started (one
    /// under way is waited out, so that its generation comes with its session id).
    pub(super) async fn settled_generation(&self) -> u64 {
        loop {
            if self.renewing.load(Ordering::Acquire) {
                drop(self.renew_gate.read().await);
            }
            let generation = self.session.read().unwrap_or_else(|p| p.into_inner()).generation;
            // A renewal sets the flag before it bumps the generation and clears it
            // once its session id is in: read after the session, a clear flag means
            // the generation read is not one whose renewal is still under way.
            if !self.renewing.load(Ordering::Acquire) {
                return generation;
            }
        }
    }

    /// Keeps what a fresh session must be told again: the log level, and the
    /// subscriptions in force (an unsubscribe ends one).
    fn remember_for_replay(&self, method: &str, body: &[u8]) {
        let key = match method {
            "logging/setLevel" => None,
            _ => match serde_json::from_slice::<serde_json::Value>(body) {
                Ok(v) => v["params"]["uri"].as_str().map(str::to_string),
                Err(_) => return,
            },
        };
        if method != "logging/setLevel" && key.is_none() {
            return;
        }
        let mut s = self.session.write().unwrap_or_else(|p| p.into_inner());
        s.replay.retain(|(k, _)| *k != key);
        if method != "resources/unsubscribe" {
            s.replay.push((key, Bytes::copy_from_slice(body)));
        }
    }

    /// Starts a fresh session after a 404: initialize again (without the old session
    /// id), then notifications/initialized, then the log level and subscriptions the
    /// old one had. Only the first 404 of a generation does it.
    pub(super) async fn renew_session(&self, expired: u64) {
        let _gate = self.renew_gate.write().await;
        /// Clears the flag when the renewal ends or is dropped (before the gate opens).
        struct Renewing<'a>(&'a AtomicBool);
        impl Drop for Renewing<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        self.renewing.store(true, Ordering::Release);
        let _renewing = Renewing(&self.renewing);
        let (init_body, replay) = {
            let mut s = self.session.write().unwrap_or_else(|p| p.into_inner());
            if s.generation != expired || self.closed.load(Ordering::Acquire) {
                return;
            }
            s.generation += 1;
            s.id = None;
            (s.init_body.clone(), s.replay.clone())
        };
        let Some(body) = init_body else { return };
        let fresh = async {
            let (resp, _) = self
                .post(&body, &HeaderMap::new())
                .await
                .map_err(|e| e.context("initialize"))?;
            if !resp.status().is_success() {
                return Err(boxed_apart(|| status_error(resp)).await.context("initialize"));
            }
            if let Some(id) = resp.header(MCP_SESSION_ID).and_then(session_id) {
                self.session.write().unwrap_or_else(|p| p.into_inner()).id = Some(id);
            }
            // The reply repeats a result the core already has: read and drop it.
            let mut resp = resp;
            let _ = read_limited(&mut resp, self.cfg.max_message_size).await;
            let note = crate::jsonrpc::encode_notification::<()>("notifications/initialized", None);
            let (resp, _) = self.post(&note, &HeaderMap::new()).await?;
            drop(resp);
            // Their answers carry ids the client no longer waits for: read and dropped.
            for (_, body) in &replay {
                match self.post(body, &HeaderMap::new()).await {
                    Ok((mut resp, _)) => {
                        let _ = read_limited(&mut resp, self.cfg.max_message_size).await;
                    }
                    Err(e) => log::debug!("replaying session state in the fresh session failed: {e}"),
                }
            }
            Ok(())
        };
        if let Err(e) = fresh.await {
            self.sink
                .closed(e.context("the HTTP session expired and a fresh one could not be started"));
        }
    }

    /// The standalone GET stream: server notifications and requests outside any
    /// request. 405 means the server offers none. Reconnects with backoff, honouring
    /// `retry` and sending `Last-Event-ID`; never replays requests.
    pub(super) async fn standalone_stream(self: Arc<Self>) {
        let mut last_id: Option<String> = None;
        let mut backoff = Duration::from_millis(500);
        while !self.closed.load(Ordering::Acquire) {
            let mut headers = HeaderMap::new();
            if let Some(id) = last_id.as_deref().and_then(|i| HeaderValue::from_str(i).ok()) {
                headers.insert(HeaderName::from_static(LAST_EVENT_ID), id);
            }
            let mut retry = None;
            let answer = self.request(Method::GET, None, &headers).await;
            self.stream_tried.send_replace(true);
            match answer {
                Ok(resp) if resp.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                Ok(resp) if resp.status().is_success() => {
                    backoff = Duration::from_millis(500);
                    if let Ok(StreamEnd::Ended { last_id: id, retry: r }) = self.read_sse(resp, false).await {
                        last_id = id.or(last_id);
                        retry = r;
                    }
                }
                Ok(resp) => log::debug!("the standalone GET stream got HTTP {}", resp.status()),
                Err(e) => log::debug!("the standalone GET stream failed: {e}"),
            }
            let wait = retry.unwrap_or(backoff);
            backoff = (backoff * 2).min(MAX_BACKOFF);
            tokio::time::sleep(wait).await;
        }
    }
}
