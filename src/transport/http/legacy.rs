//! The HTTP+SSE transport of 2024-11-05, for servers that offer nothing newer: a
//! GET opens the event stream; its `endpoint` event names the URL (same origin
//! only) that each client message is POSTed to; responses, notifications and the
//! server's requests come back as `message` events on the stream. Close ends the
//! stream after what was queued before it went out (bounded).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use ::http::{Method, Uri};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::{hx, path_of, read_limited, status_error, tls_config, HttpConfig, CLOSE_WAIT};
use crate::error::{quote, Error, Result, Status};
use crate::sse::SseParser;
use crate::transport::{BoxFuture, Delivered, Delivery, Outgoing, ProbeKind, SinkRef, Transport};
use crate::url_policy;

/// The endpoint an `endpoint` event names: `data` resolved against the stream's
/// URL `base`, refused unless it is on the same origin; the path to POST to on the
/// stream's own origin (server data: the `legacy_endpoint` fuzz target).
pub(crate) fn legacy_endpoint(base: &url::Url, data: &str) -> std::result::Result<Uri, Error> {
    let url = base.join(data.trim()).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!("the endpoint event's URL is not valid ({e}): {}", quote(data)),
        )
    })?;
    if url.origin() != base.origin() {
        return Err(Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!(
                "the endpoint event names another origin ({}); refused",
                url_policy::redact(&url)
            ),
        ));
    }
    path_of(&url)
}

/// Where the messages go, once the stream said it: the path, or why there is none.
type Endpoint = Option<std::result::Result<Uri, Error>>;

struct Inner {
    http: hx::Client,
    cfg: HttpConfig,
    sink: SinkRef,
    endpoint: watch::Sender<Endpoint>,
    /// Taken at close, so the writer ends once it has sent what was queued.
    queue: Mutex<Option<mpsc::UnboundedSender<Outgoing>>>,
    closed: AtomicBool,
    reader: Mutex<Option<JoinHandle<()>>>,
    writer: Mutex<Option<JoinHandle<()>>>,
    /// The bearer token every request carries (the callback's first), got once before
    /// the GET: the writer starts only after the stream named its endpoint.
    token: std::sync::OnceLock<Option<String>>,
}

/// The 2024-11-05 HTTP+SSE transport.
pub struct LegacySseTransport {
    inner: Arc<Inner>,
}

fn transport_error(msg: String) -> Error {
    Error::new(Status::MCPC_ERR_TRANSPORT, msg)
}

impl LegacySseTransport {
    /// Opens the event stream of `cfg.url` and starts the writer, which waits for
    /// the stream's `endpoint` event.
    pub fn connect(cfg: HttpConfig, sink: SinkRef) -> Result<Arc<dyn Transport>> {
        let https = cfg.url.scheme() == "https";
        let tls = tls_config(&cfg.ca_pem, https)?;
        let tls = https.then(|| Arc::new(tls));
        let route = hx::Route::for_url(&cfg.proxy, &cfg.url, || tls_config(&cfg.ca_pem, true).map(Arc::new))?;
        let http = hx::Client::new(&cfg.url, tls, cfg.connect_timeout, route, cfg.http_version)
            .ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "the URL has no usable host"))?;
        let (tx, rx) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            http,
            cfg,
            sink,
            endpoint: watch::channel(None).0,
            queue: Mutex::new(Some(tx)),
            closed: AtomicBool::new(false),
            reader: Mutex::new(None),
            writer: Mutex::new(None),
            token: std::sync::OnceLock::new(),
        });
        let rt = crate::drive::runtime::handle();
        let me = inner.clone();
        *inner.reader.lock().unwrap_or_else(|p| p.into_inner()) = Some(rt.spawn(async move { me.read_stream().await }));
        let me = inner.clone();
        *inner.writer.lock().unwrap_or_else(|p| p.into_inner()) = Some(rt.spawn(async move { me.write(rx).await }));
        Ok(Arc::new(LegacySseTransport { inner }))
    }
}

impl Inner {
    /// The bearer token: the options', else the callback's first, asked on the
    /// blocking pool (the callback may block) and checked as a header value.
    async fn fetch_token(&self) -> Result<Option<String>> {
        let token = match (&self.cfg.bearer, &self.cfg.token_fn) {
            (Some(t), _) => Some(t.clone()),
            (None, Some(f)) => {
                let f = f.clone();
                tokio::task::spawn_blocking(move || f(None)).await.ok().flatten()
            }
            (None, None) => None,
        };
        if let Some(t) = &token {
            if ::http::HeaderValue::from_str(&format!("Bearer {t}")).is_err() {
                return Err(Error::new(
                    Status::MCPC_ERR_AUTH,
                    "the bearer token is not a valid header value",
                ));
            }
        }
        Ok(token)
    }

    /// The header lines every request carries: the caller's headers and the bearer
    /// token got before the GET.
    fn fields(&self, extra: &str) -> Vec<u8> {
        let mut f = extra.as_bytes().to_vec();
        for (name, value) in &self.cfg.headers {
            f.extend_from_slice(name.as_str().as_bytes());
            f.extend_from_slice(b": ");
            f.extend_from_slice(value.as_bytes());
            f.extend_from_slice(b"\r\n");
        }
        if let Some(Some(t)) = self.token.get() {
            f.extend_from_slice(format!("authorization: Bearer {t}\r\n").as_bytes());
        }
        f
    }

    fn failed(&self, err: Error) {
        if self.endpoint.borrow().is_none() {
            self.endpoint.send_replace(Some(Err(err.clone())));
        }
        self.sink.closed(err);
    }

    /// Reads the event stream until it ends: the endpoint first, then messages.
    async fn read_stream(self: Arc<Self>) {
        let url = &self.cfg.url;
        match self.fetch_token().await {
            Ok(t) => {
                let _ = self.token.set(t);
            }
            Err(e) => return self.failed(e),
        }
        let head = self.http.request_head(
            &Method::GET,
            &match path_of(url) {
                Ok(p) => p,
                Err(e) => return self.failed(e),
            },
            &self.fields("accept: text/event-stream\r\ncache-control: no-cache\r\n"),
        );
        let mut resp = match self.http.send(&Method::GET, &head, &[]).await {
            Ok(r) => r,
            Err(e) => return self.failed(super::classify(e, url)),
        };
        if !resp.status().is_success() {
            return self.failed(status_error(resp).await);
        }
        let is_sse = resp
            .header_str("content-type")
            .is_some_and(|t| t.trim_start().to_ascii_lowercase().starts_with("text/event-stream"));
        if !is_sse {
            return self.failed(Error::new(
                Status::MCPC_ERR_HTTP,
                format!("the GET of {} is not an event stream", url_policy::redact(url)),
            ));
        }
        let mut parser = SseParser::new(self.cfg.max_message_size);
        let mut events = Vec::new();
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => return self.failed(transport_error(format!("the event stream failed: {e}"))),
            };
            if let Err(too) = parser.feed(&chunk, |e| events.push(e)) {
                return self.failed(Error::new(
                    Status::MCPC_ERR_MESSAGE_TOO_LARGE,
                    format!("an SSE event is over the {} byte limit", too.limit),
                ));
            }
            for e in events.drain(..) {
                if e.event == "endpoint" {
                    if self.endpoint.borrow().is_some() {
                        continue; // the first one stands
                    }
                    match legacy_endpoint(&self.cfg.url, &e.data) {
                        Ok(uri) => {
                            self.endpoint.send_replace(Some(Ok(uri)));
                        }
                        Err(err) => return self.failed(err),
                    }
                } else if e.event == "message" && !e.data.is_empty() {
                    match self.sink.deliver(Delivery::any(e.data.as_bytes(), None)) {
                        Ok(Delivered::Reply(reply)) => self.queue_out(reply),
                        Ok(_) => {}
                        Err(err) => log::warn!("dropped an SSE event: {err}"),
                    }
                }
            }
        }
        if !self.closed.load(Ordering::Acquire) {
            self.failed(transport_error("the server ended the event stream".into()));
        }
    }

    fn queue_out(&self, msg: Outgoing) {
        if let Some(q) = self.queue.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            let _ = q.send(msg);
        }
    }

    /// POSTs each queued message, in order, once the endpoint is known.
    async fn write(self: Arc<Self>, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
        let mut known = self.endpoint.subscribe();
        let endpoint = match known.wait_for(Option::is_some).await {
            Ok(e) => e.clone().expect("waited for it"),
            Err(_) => return,
        };
        let path = match endpoint {
            Ok(p) => p,
            Err(err) => {
                while let Ok(msg) = rx.try_recv() {
                    if let Some(id) = msg.id {
                        self.sink.fail_request(id, err.clone());
                    }
                }
                return;
            }
        };
        let head = self.http.request_head(
            &Method::POST,
            &path,
            &self.fields("content-type: application/json\r\naccept: application/json, text/event-stream\r\n"),
        );
        while let Some(msg) = rx.recv().await {
            if let Err(err) = self.post(&head, &msg.body).await {
                match msg.id {
                    Some(id) => self.sink.fail_request(id, err),
                    None => log::warn!("a message to the server was lost: {err}"),
                }
            }
        }
    }

    async fn post(&self, head: &[u8], body: &[u8]) -> Result<()> {
        let mut resp = self
            .http
            .send(&Method::POST, head, body)
            .await
            .map_err(|e| super::classify(e, &self.cfg.url))?;
        if !resp.status().is_success() {
            return Err(status_error(resp).await);
        }
        // The answer comes on the stream; this body (usually "Accepted") is read to
        // free the connection.
        read_limited(&mut resp, 64 * 1024).await.map(drop)
    }
}

impl Transport for LegacySseTransport {
    fn send(&self, msg: Outgoing) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the HTTP+SSE transport is closed"));
        }
        match self.inner.queue.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(q) if q.send(msg).is_ok() => Ok(()),
            _ => Err(Error::new(Status::MCPC_ERR_CLOSED, "the HTTP+SSE transport is closed")),
        }
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let inner = &self.inner;
            if inner.closed.swap(true, Ordering::AcqRel) {
                return;
            }
            // What was queued before close goes out (a cancel, say), within the grace.
            drop(inner.queue.lock().unwrap_or_else(|p| p.into_inner()).take());
            // Unless the stream never named where to: then nothing can go out, and the
            // writer ends now rather than at the grace's end.
            inner.endpoint.send_if_modified(|e| {
                if e.is_some() {
                    return false;
                }
                *e = Some(Err(Error::new(Status::MCPC_ERR_CLOSED, "the client is closed")));
                true
            });
            let writer = inner.writer.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(mut w) = writer {
                if tokio::time::timeout(CLOSE_WAIT, &mut w).await.is_err() {
                    w.abort();
                }
            }
            if let Some(r) = inner.reader.lock().unwrap_or_else(|p| p.into_inner()).take() {
                r.abort();
            }
            inner.http.close_idle();
            inner
                .sink
                .closed(Error::new(Status::MCPC_ERR_CLOSED, "the client is closed"));
        })
    }

    fn probe_kind(&self) -> ProbeKind {
        // Answers come on the stream, as over stdio: a server that ignores the probe
        // is weighed as silence.
        ProbeKind::Stream { restartable: false }
    }
}
