//! The Streamable HTTP transport: each client message is a POST to the endpoint;
//! a request's reply is JSON or an SSE stream (which may carry server requests and
//! notifications before the response). Sessions (`Mcp-Session-Id`), the
//! `MCP-Protocol-Version` header, session expiry with a fresh session, SSE
//! resumption, the optional standalone GET stream, caller-supplied auth, DELETE on
//! close. TLS is always verified (rustls): system roots plus caller CAs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ::http::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST, LOCATION,
    TRANSFER_ENCODING, WWW_AUTHENTICATE,
};
use ::http::{Method, StatusCode, Uri};
use bytes::Bytes;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::CertificateDer;
use serde::Deserialize;
use tokio::task::{AbortHandle, JoinHandle};
use url::Url;

use super::h1::{self, Failure, Reply};
use super::{BoxFuture, Outgoing, SinkRef, Transport};
use crate::drive::here::{self, Exchange, Owner, Ran};
use crate::drive::park::Parker;
use crate::drive::runtime::boxed_apart;
use crate::drive::Drive;
use crate::error::{quote, Error, Result, Status};
use crate::sse::SseParser;
use crate::url_policy;

/// Gives the current bearer token: called with `None` for the first token and with
/// the `WWW-Authenticate` value after a 401. `None` back means no token.
pub type TokenFn = Arc<dyn Fn(Option<&str>) -> Option<String> + Send + Sync>;

/// Settings of one HTTP connection.
#[derive(Clone)]
pub struct HttpConfig {
    pub url: Url,
    /// Extra headers on every request (checked: no reserved names).
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub bearer: Option<String>,
    pub token_fn: Option<TokenFn>,
    /// Extra trusted CA certificates, PEM.
    pub ca_pem: Vec<Vec<u8>>,
    pub max_message_size: usize,
    /// Open the optional standalone GET stream for server notifications.
    pub standalone_stream: bool,
    pub connect_timeout: Duration,
}

const MCP_SESSION_ID: &str = "mcp-session-id";
const MCP_PROTOCOL_VERSION: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";
const MCP_METHOD: &str = "mcp-method";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// Bound on DELETE at close, and on notifications still going out.
const CLOSE_WAIT: Duration = Duration::from_secs(2);
/// How often a request's SSE stream may be resumed before it fails.
const MAX_RESUMES: usize = 5;
const DEFAULT_RETRY: Duration = Duration::from_millis(1000);
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// Header names the transport sets itself; callers may not override them.
pub fn is_reserved_header(name: &HeaderName) -> bool {
    [
        CONTENT_TYPE,
        ACCEPT,
        ::http::header::HOST,
        ::http::header::CONTENT_LENGTH,
        ::http::header::TRANSFER_ENCODING,
    ]
    .contains(name)
        || name.as_str() == MCP_SESSION_ID
        || name.as_str() == MCP_PROTOCOL_VERSION
        || name.as_str() == LAST_EVENT_ID
}

#[derive(Default)]
struct Session {
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
    /// Bumped at each fresh session; a 404 renews only the generation it saw.
    generation: u64,
    /// The initialize request, kept to start a fresh session after expiry.
    init_body: Option<Bytes>,
}

/// What a request's head carries of who sends it: the bearer token, the session id
/// and the protocol version.
struct Ident {
    token: Option<String>,
    id: Option<HeaderValue>,
    version: Option<HeaderValue>,
}

/// A head kept for use again, and what it carries.
struct KeptHead {
    ident: Ident,
    head: Bytes,
}

struct Inner {
    http: h1::Client,
    /// The endpoint's path and query, as requests carry it.
    path: Uri,
    cfg: HttpConfig,
    sink: SinkRef,
    /// Never held across an await (a std lock: a request reads it three times).
    session: std::sync::RwLock<Session>,
    /// Held (write) while a fresh session is being started; requests wait it out.
    renew_gate: tokio::sync::RwLock<()>,
    /// True while the gate is held (write), so that a request waits at the gate
    /// only then: taking it (read) for every request cost about 180 instructions.
    renewing: AtomicBool,
    token: Mutex<Option<String>>,
    token_fetched: AtomicBool,
    /// The head of a classic POST with no fields of its own, kept while what it
    /// carries of the token and the session holds (see [`Inner::request_head`]).
    kept_head: Mutex<Option<KeptHead>>,
    /// Keyed by the client's own ids: a fast hash (a sequential call's exchange
    /// looks its id up here as it ends, run on the runtime or not).
    inflight: Mutex<rustc_hash::FxHashMap<i64, AbortHandle>>,
    background: Mutex<Vec<JoinHandle<()>>>,
    closed: AtomicBool,
    /// `Some(version)` under the stateless 2026-07-28 rules.
    era: Mutex<Option<&'static str>>,
}

pub struct HttpTransport {
    inner: Arc<Inner>,
}

/// The system's roots, read and parsed once for the process, and shared by every
/// client that adds no CA of its own: made for each client, the store took about
/// 100 µs and 88 kB (200 configurations built in one process, 145 system roots).
fn native_roots() -> Arc<rustls::RootCertStore> {
    static ROOTS: OnceLock<Arc<rustls::RootCertStore>> = OnceLock::new();
    ROOTS
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
            Arc::new(roots)
        })
        .clone()
}

/// The TLS settings: the system's roots (unless `system_roots` is false) plus the
/// caller's CAs.
fn tls_config(extra_pem: &[Vec<u8>], system_roots: bool) -> Result<rustls::ClientConfig> {
    let roots = if extra_pem.is_empty() && system_roots {
        native_roots()
    } else {
        Arc::new(own_roots(extra_pem, system_roots)?)
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(Status::MCPC_ERR_TLS, format!("TLS setup failed: {e}")))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// A client's own roots: the system's (unless `system_roots` is false) and the
/// caller's CAs.
fn own_roots(extra_pem: &[Vec<u8>], system_roots: bool) -> Result<rustls::RootCertStore> {
    let mut roots = if system_roots {
        (*native_roots()).clone()
    } else {
        rustls::RootCertStore::empty()
    };
    for pem in extra_pem {
        let mut added = 0;
        for cert in CertificateDer::pem_slice_iter(pem) {
            let cert = cert.map_err(|e| {
                Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("CA certificate PEM is malformed: {e}"),
                )
            })?;
            roots.add(cert).map_err(|e| {
                Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("CA certificate is not usable: {e}"),
                )
            })?;
            added += 1;
        }
        if added == 0 {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "CA PEM holds no certificate"));
        }
    }
    Ok(roots)
}

/// How many redirects a request may follow (within the endpoint's origin only).
const MAX_REDIRECTS: usize = 5;

/// Turns a failed exchange into our error: TLS failures are their own status;
/// messages never carry the URL's query or credentials.
fn classify(e: Failure, url: &Url) -> Error {
    if e.is_tls() {
        Error::new(
            Status::MCPC_ERR_TLS,
            format!("TLS with {} failed: {e}", url_policy::redact(url)),
        )
    } else {
        Error::new(
            Status::MCPC_ERR_TRANSPORT,
            format!("HTTP request to {} failed: {e}", url_policy::redact(url)),
        )
    }
}

/// The path and query of `url`, as a request line carries them.
fn path_of(url: &Url) -> Result<Uri> {
    let mut p = url.path().to_string();
    if let Some(q) = url.query() {
        p.push('?');
        p.push_str(q);
    }
    Uri::try_from(p).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("the URL's path is not usable: {e}"),
        )
    })
}

/// A session id must be visible ASCII (0x21 to 0x7E).
/// A session id, as its header value (kept out of logs), if it is valid.
fn session_id(v: &[u8]) -> Option<HeaderValue> {
    if v.is_empty() || !v.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return None;
    }
    let mut id = HeaderValue::from_bytes(v).ok()?;
    id.set_sensitive(true);
    Some(id)
}

#[derive(Deserialize)]
struct InitResultPeek<'a> {
    #[serde(borrow)]
    result: Option<InitFields<'a>>,
}

#[derive(Deserialize)]
struct InitFields<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    protocol_version: Option<std::borrow::Cow<'a, str>>,
}

/// Builds a short error from an HTTP error status and its body.
async fn status_error(mut resp: Reply) -> Error {
    let status = resp.status();
    let body = read_limited(&mut resp, 64 * 1024).await;
    let body = body.as_deref().unwrap_or_default();
    #[derive(Deserialize)]
    struct E {
        error: crate::jsonrpc::RpcError,
    }
    let mut err = Error::new(Status::MCPC_ERR_HTTP, format!("HTTP {status}"));
    err.http_status = Some(status.as_u16());
    if let Ok(e) = serde_json::from_slice::<E>(body) {
        // The 2026-07-28 error codes keep their own statuses (an older client meeting a
        // newer server gets "unsupported version", with the versions it lists).
        let rpc = e.error.into_error();
        if rpc.status != Status::MCPC_ERR_RPC {
            err.status = rpc.status;
        }
        err.message.push_str(&format!(" ({})", rpc.message));
        err.rpc_code = rpc.rpc_code;
    }
    err
}

/// A JSON-RPC error in an HTTP error reply, as the response to request `id` (the
/// server may leave the id out or null).
fn error_reply_for(body: &[u8], id: i64) -> Option<Vec<u8>> {
    #[derive(Deserialize)]
    struct E<'a> {
        #[serde(borrow)]
        error: &'a serde_json::value::RawValue,
    }
    let e: E<'_> = serde_json::from_slice(body).ok()?;
    serde_json::from_str::<crate::jsonrpc::RpcError>(e.error.get()).ok()?;
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{}}}"#, e.error.get()).into_bytes())
}

/// A response body: lent from its connection's buffer, or gathered from pieces.
enum Body<'a> {
    Lent(&'a [u8]),
    Gathered(Bytes),
}

impl std::ops::Deref for Body<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Lent(b) => b,
            Body::Gathered(b) => b,
        }
    }
}

impl Body<'_> {
    /// The body's own buffer, when it was handed over whole.
    fn whole(&self) -> Option<&Bytes> {
        match self {
            Body::Lent(_) => None,
            Body::Gathered(b) => Some(b),
        }
    }
}

/// Bodies and SSE events larger than this are handed to the sink whole
/// ([`Sink::deliver_whole`]); smaller ones are lent.
const OWN_ABOVE: usize = 64 * 1024;

/// The response body, up to `max` bytes. A body of known length is read in place
/// into its connection's buffer and lent from there; any other is gathered from
/// its pieces (one that comes in one piece is that piece, not a copy of it).
async fn read_limited(resp: &mut Reply, max: usize) -> Result<Body<'_>> {
    let too_large = || {
        Error::new(
            Status::MCPC_ERR_MESSAGE_TOO_LARGE,
            format!("the HTTP response is over the {max} byte limit"),
        )
    };
    let failed = |e: Failure| {
        Error::new(
            Status::MCPC_ERR_TRANSPORT,
            format!("reading the HTTP response failed: {e}"),
        )
    };
    if let Some(n) = resp.content_length() {
        if n > max as u64 {
            return Err(too_large());
        }
        if n > OWN_ABOVE as u64 {
            // Handed over whole, so that the result kept for the caller can be a
            // slice of it rather than a copy (see `Sink::deliver_whole`).
            resp.rest().await.map_err(failed)?;
            return Ok(Body::Gathered(resp.take_rest()));
        }
        return resp.rest().await.map(Body::Lent).map_err(failed);
    }
    let Some(first) = resp.chunk().await.map_err(failed)? else {
        return Ok(Body::Lent(&[]));
    };
    if first.len() > max {
        return Err(too_large());
    }
    let Some(second) = resp.chunk().await.map_err(failed)? else {
        return Ok(Body::Gathered(first));
    };
    let mut body = Vec::with_capacity(first.len() + second.len());
    let mut chunk = Some(second);
    body.extend_from_slice(&first);
    while let Some(c) = chunk {
        if body.len() + c.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&c);
        chunk = resp.chunk().await.map_err(failed)?;
    }
    Ok(Body::Gathered(body.into()))
}

/// How an SSE stream ended.
enum StreamEnd {
    /// Ended normally, or the connection dropped: resumable if an id was seen.
    Ended {
        last_id: Option<String>,
        retry: Option<Duration>,
    },
}

impl HttpTransport {
    /// Makes the transport (no connection yet: the first POST opens one).
    pub fn connect(cfg: HttpConfig, sink: SinkRef) -> Result<Arc<dyn Transport>> {
        Ok(Arc::new(HttpTransport {
            inner: Arc::new(Inner::new(cfg, sink)?),
        }))
    }
}

impl Inner {
    fn new(cfg: HttpConfig, sink: SinkRef) -> Result<Inner> {
        // A plain-http endpoint (loopback only) never does TLS itself, and redirects stay
        // within its origin: no need to read the system's certificate store (7-40 ms and
        // about 4 MB the first time).
        let tls = tls_config(&cfg.ca_pem, cfg.url.scheme() == "https")?;
        let tls = (cfg.url.scheme() == "https").then(|| Arc::new(tls));
        let http = h1::Client::new(&cfg.url, tls, cfg.connect_timeout)
            .ok_or_else(|| Error::new(Status::MCPC_ERR_INVALID_ARG, "the URL has no usable host"))?;
        let path = path_of(&cfg.url)?;
        let token = cfg.bearer.clone();
        Ok(Inner {
            http,
            path,
            cfg,
            sink,
            session: std::sync::RwLock::new(Session::default()),
            renew_gate: tokio::sync::RwLock::new(()),
            renewing: AtomicBool::new(false),
            token_fetched: AtomicBool::new(token.is_some()),
            token: Mutex::new(token),
            kept_head: Mutex::new(None),
            inflight: Mutex::default(),
            background: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            era: Mutex::new(None),
        })
    }
}

impl Inner {
    fn spawn_background(self: &Arc<Self>, fut: impl std::future::Future<Output = ()> + Send + 'static) {
        let handle = crate::drive::runtime::handle().spawn(fut);
        let mut bg = self.background.lock().unwrap_or_else(|p| p.into_inner());
        bg.retain(|h| !h.is_finished());
        bg.push(handle);
    }

    /// Asks the token callback (on a blocking thread) for the first token, once.
    async fn token_ready(&self) {
        if !self.token_fetched.load(Ordering::Acquire) {
            if let Some(f) = self.cfg.token_fn.clone() {
                let t = tokio::task::spawn_blocking(move || f(None)).await.ok().flatten();
                *self.token.lock().unwrap_or_else(|p| p.into_inner()) = t;
            }
            self.token_fetched.store(true, Ordering::Release);
        }
    }

    /// The token, the session id and the protocol version as they are now.
    async fn ident(&self) -> Ident {
        self.token_ready().await;
        let token = self.token.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let s = self.session.read().unwrap_or_else(|p| p.into_inner());
        Ident {
            token,
            id: s.id.clone(),
            version: s.version.clone(),
        }
    }

    /// After a 401: asks the callback once for a fresh token. False when there is none.
    async fn refresh_token(&self, challenge: Option<String>) -> bool {
        let Some(f) = self.cfg.token_fn.clone() else {
            return false;
        };
        let fresh = tokio::task::spawn_blocking(move || f(challenge.as_deref()))
            .await
            .ok()
            .flatten();
        let ok = fresh.is_some();
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
        ok
    }

    /// One POST with its auth retry. Returns the successful response, or the error.
    async fn post(&self, body: &[u8], extra: &HeaderMap) -> Result<(Reply, bool)> {
        let mut refreshed = false;
        loop {
            let had_session = self.session.read().unwrap_or_else(|p| p.into_inner()).id.is_some();
            let resp = self.request(Method::POST, Some(body), extra).await?;
            let status = resp.status();
            if status == StatusCode::UNAUTHORIZED {
                let challenge = resp.header_str(WWW_AUTHENTICATE.as_str()).map(str::to_string);
                if !refreshed && self.refresh_token(challenge).await {
                    refreshed = true;
                    continue;
                }
                return Err(Error::new(Status::MCPC_ERR_AUTH, "HTTP 401 Unauthorized".to_string()));
            }
            if status == StatusCode::FORBIDDEN {
                return Err(Error::new(Status::MCPC_ERR_AUTH, "HTTP 403 Forbidden"));
            }
            if status.is_redirection() {
                return Err(Error::new(
                    Status::MCPC_ERR_HTTP,
                    format!("HTTP {status}: a redirect to another origin was refused"),
                ));
            }
            return Ok((resp, had_session));
        }
    }

    fn era(&self) -> Option<&'static str> {
        *self.era.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sends one message and routes what comes back. Errors belong to the message.
    /// The body is dropped once the server has answered, before the reply's body is
    /// read: no retry can need it then, and a large request's memory is free again
    /// before the response's.
    async fn exchange(self: &Arc<Self>, msg: &Outgoing, body: Vec<u8>) -> Result<()> {
        if let Some(version) = self.era() {
            // Boxed, so that the future of every exchange is not as large as both.
            let what = msg.method.unwrap_or("response");
            return boxed_apart(|| self.exchange_modern(msg, &body, version, what)).await;
        }
        let is_init = msg.method == Some("initialize");
        if is_init {
            self.session.write().unwrap_or_else(|p| p.into_inner()).init_body = Some(Bytes::copy_from_slice(&body));
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
    async fn exchange_modern(
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
        if let Some(m) = msg.method.and_then(|m| HeaderValue::from_str(m).ok()) {
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

    /// Reads a request's reply, JSON or SSE, resuming a dropped SSE stream when
    /// `resumable` (never under 2026-07-28, where a broken stream loses the request).
    /// `resume_for` is the request whose response a dropped stream may still bring
    /// (`None` under 2026-07-28, where a broken stream loses the request).
    async fn read_reply(self: &Arc<Self>, mut resp: Reply, is_init: bool, resume_for: Option<i64>) -> Result<()> {
        let ctype = resp.header(CONTENT_TYPE.as_str()).unwrap_or_default();
        let is = |t: &str| ctype.len() >= t.len() && h1::same_text(&ctype[..t.len()], t.as_bytes());
        if is("application/json") {
            let body = read_limited(&mut resp, self.cfg.max_message_size).await?;
            self.route(body, is_init).await?;
            return Ok(());
        }
        if !is("text/event-stream") {
            return Err(Error::new(
                Status::MCPC_ERR_HTTP,
                format!(
                    "unexpected content type {} in the HTTP reply",
                    quote(&String::from_utf8_lossy(ctype))
                ),
            ));
        }
        // Boxed: a stream and its resumption are a large future that a JSON reply
        // would otherwise carry (and move) too.
        boxed_apart(|| self.sse_reply(resp, is_init, resume_for)).await
    }

    /// An SSE reply's events, and the stream resumed while it ends before the
    /// response to `resume_for`.
    async fn sse_reply(self: &Arc<Self>, resp: Reply, is_init: bool, resume_for: Option<i64>) -> Result<()> {
        let mut end = self.read_sse(resp, is_init).await?;
        let Some(id) = resume_for else { return Ok(()) };
        for _ in 0..MAX_RESUMES {
            // Resume only a stream that ended before its response: a finished one
            // has nothing left to give (and a server may replay others' events).
            if !self.sink.is_pending(id) {
                return Ok(());
            }
            let StreamEnd::Ended { last_id, retry } = end;
            let Some(last_id) = last_id else {
                return Ok(());
            };
            tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
            let resp = self.resume(&last_id).await?;
            if !resp.status().is_success() {
                return Err(boxed_apart(|| status_error(resp))
                    .await
                    .context("resuming the SSE stream"));
            }
            end = self.read_sse(resp, is_init).await?;
        }
        Ok(())
    }

    async fn resume(&self, last_id: &str) -> Result<Reply> {
        let mut headers = HeaderMap::new();
        let v = HeaderValue::from_str(last_id).map_err(|_| {
            Error::new(
                Status::MCPC_ERR_PROTOCOL,
                "the SSE event id is not a valid header value",
            )
        })?;
        headers.insert(HeaderName::from_static(LAST_EVENT_ID), v);
        let resp = self.request(Method::GET, None, &headers).await?;
        Ok(resp)
    }

    /// Sends one HTTP request with everything the endpoint needs: the caller's
    /// headers, the bearer token, the session id and the protocol version.
    async fn request(&self, mut method: Method, body: Option<&[u8]>, extra: &HeaderMap) -> Result<Reply> {
        let posting = body.is_some() && method != Method::GET;
        let first = method.clone();
        let mut head = self.request_head(&first, posting, extra).await?;
        let mut body = match body {
            Some(b) if posting => b,
            _ => &[],
        };
        let mut url: Option<Url> = None; // after a redirect
        let mut redirects = 0;
        loop {
            let resp = self
                .http
                .send(&method, &head, body)
                .await
                .map_err(|e| classify(e, url.as_ref().unwrap_or(&self.cfg.url)))?;
            let status = resp.status();
            if !status.is_redirection() || redirects == MAX_REDIRECTS {
                return Ok(resp);
            }
            // Followed only within the endpoint's origin (so never from https to
            // http, and credentials never leave it); otherwise the caller sees the
            // redirect itself.
            let current = url.as_ref().unwrap_or(&self.cfg.url);
            let Some(next) = resp
                .header_str(LOCATION.as_str())
                .and_then(|l| current.join(l).ok())
                .filter(|next| url_policy::same_origin(&self.cfg.url, next))
            else {
                return Ok(resp);
            };
            let path = path_of(&next)?;
            url = Some(next);
            redirects += 1;
            // As browsers do: 307 and 308 repeat the request; the others fetch the
            // new place with GET, without a body or its Content-Type.
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT {
                method = Method::GET;
                body = &[];
            }
            // Made again: the token or the session may have changed meanwhile.
            let fields = self.request_fields(&self.ident().await, &first, posting, method == first, extra)?;
            head = Bytes::from(self.http.request_head(&method, &path, &fields));
        }
    }

    /// The head of a request to the endpoint, but its end (see
    /// `h1::Client::request_head`). The one every classic message sends, a POST with
    /// no fields of its own, is made once and kept while the token, the session id
    /// and the protocol version it carries stay the same: made for each request, it
    /// cost about 750 instructions of a sequential call's 13,600 (callgrind).
    async fn request_head(&self, method: &Method, posting: bool, extra: &HeaderMap) -> Result<Bytes> {
        let keep = posting && *method == Method::POST && extra.is_empty();
        if keep {
            self.token_ready().await;
            if let Some(head) = self.kept_head() {
                return Ok(head);
            }
        }
        let ident = self.ident().await;
        let fields = self.request_fields(&ident, method, posting, true, extra)?;
        let head = Bytes::from(self.http.request_head(method, &self.path, &fields));
        if keep {
            *self.kept_head.lock().unwrap_or_else(|p| p.into_inner()) = Some(KeptHead {
                ident,
                head: head.clone(),
            });
        }
        Ok(head)
    }

    /// The kept head, if the token and the session it carries are still the current ones.
    fn kept_head(&self) -> Option<Bytes> {
        let kept = self.kept_head.lock().unwrap_or_else(|p| p.into_inner());
        let kept = kept.as_ref()?;
        if *self.token.lock().unwrap_or_else(|p| p.into_inner()) != kept.ident.token {
            return None;
        }
        let s = self.session.read().unwrap_or_else(|p| p.into_inner());
        (s.id == kept.ident.id && s.version == kept.ident.version).then(|| kept.head.clone())
    }

    /// The header fields of a request, as its head carries them (`name: value`
    /// lines): the caller's, the configured ones, the bearer token, the session id,
    /// the protocol version and what it accepts. Those mcpc sets replace any of the
    /// same name that the caller or the configuration gives; `Content-Type` is left
    /// out entirely when `content_type` is false (a request turned into a GET).
    /// Written straight from the values, not through a header map: building one
    /// per request, then writing it, cost about 2,600 instructions a call
    /// (callgrind).
    fn request_fields(
        &self,
        ident: &Ident,
        method: &Method,
        posting: bool,
        content_type: bool,
        extra: &HeaderMap,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(256);
        let mut field = |name: &[u8], value: &[u8]| {
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        };
        let token = &ident.token;
        if let Some(token) = token {
            let v = format!("Bearer {token}");
            HeaderValue::from_str(&v)
                .map_err(|_| Error::new(Status::MCPC_ERR_AUTH, "the bearer token is not a valid header value"))?;
            field(AUTHORIZATION.as_str().as_bytes(), v.as_bytes());
        }
        if let Some(id) = &ident.id {
            field(MCP_SESSION_ID.as_bytes(), id.as_bytes());
        }
        if let Some(v) = &ident.version {
            field(MCP_PROTOCOL_VERSION.as_bytes(), v.as_bytes());
        }
        let (has_id, has_version) = (ident.id.is_some(), ident.version.is_some());
        let accept = if posting {
            Some(ACCEPT_BOTH)
        } else if *method == Method::GET {
            Some("text/event-stream")
        } else {
            None
        };
        if let Some(a) = accept {
            field(ACCEPT.as_str().as_bytes(), a.as_bytes());
        }
        if posting && content_type {
            field(CONTENT_TYPE.as_str().as_bytes(), b"application/json");
        }
        let set_here = |name: &HeaderName| {
            (token.is_some() && name == AUTHORIZATION)
                || (has_id && name.as_str() == MCP_SESSION_ID)
                || (has_version && name.as_str() == MCP_PROTOCOL_VERSION)
                || (accept.is_some() && name == ACCEPT)
                || name == CONTENT_TYPE && (posting || !content_type)
                // The HTTP client writes these itself (the body is framed by length).
                || name == HOST
                || name == CONTENT_LENGTH
                || name == TRANSFER_ENCODING
        };
        let configured = self.cfg.headers.iter().map(|(k, v)| (k, v));
        for (name, value) in extra.iter().chain(configured) {
            if !set_here(name) {
                field(name.as_str().as_bytes(), value.as_bytes());
            }
        }
        Ok(out)
    }

    /// Routes one SSE stream's events until it ends. A dropped connection is an end
    /// like any other: whether to resume is the caller's choice.
    async fn read_sse(self: &Arc<Self>, mut resp: Reply, is_init: bool) -> Result<StreamEnd> {
        let mut parser = SseParser::new(self.cfg.max_message_size);
        // A reply's events, usually one: no allocation for them then.
        let mut events = smallvec::SmallVec::<[_; 2]>::new();
        loop {
            let (chunk, left) = match resp.chunk_lent().await {
                Ok(Some(c)) => c,
                Ok(None) | Err(_) => break,
            };
            parser.expect(usize::try_from(left).unwrap_or(usize::MAX));
            parser.feed(chunk, |e| events.push(e)).map_err(|too| {
                Error::new(
                    Status::MCPC_ERR_MESSAGE_TOO_LARGE,
                    format!("an SSE event is over the {} byte limit", too.limit),
                )
            })?;
            for e in events.drain(..) {
                if e.data.is_empty() || e.event != "message" {
                    continue; // a priming event, or an event type MCP does not use
                }
                let data = if e.data.len() > OWN_ABOVE {
                    Body::Gathered(Bytes::from(e.data))
                } else {
                    Body::Lent(e.data.as_bytes())
                };
                if let Err(err) = self.route(data, is_init).await {
                    log::warn!("dropped an SSE event: {err}");
                }
            }
        }
        Ok(StreamEnd::Ended {
            last_id: parser.last_id().map(str::to_string),
            retry: parser.retry_ms().map(Duration::from_millis),
        })
    }

    /// Delivers one message to the client core; answers to server requests go out
    /// as new POSTs. For the initialize reply, notes the negotiated version.
    async fn route(self: &Arc<Self>, body: Body<'_>, is_init: bool) -> Result<()> {
        let msg: &[u8] = &body;
        if is_init {
            if let Ok(peek) = serde_json::from_slice::<InitResultPeek<'_>>(msg) {
                if let Some(v) = peek.result.and_then(|r| r.protocol_version) {
                    if let Ok(v) = HeaderValue::from_str(&v) {
                        self.session.write().unwrap_or_else(|p| p.into_inner()).version = Some(v);
                    }
                }
            }
        }
        if here::polling() {
            // No callback runs on a blocked caller's thread: anything but a response
            // moves this exchange to the runtime first (and it stays there, so what
            // follows is delivered in order).
            if let Some(delivered) = self.sink.deliver_response_whole(msg, body.whole()) {
                return delivered;
            }
            here::to_runtime().await;
        }
        if let Some(reply) = self.sink.deliver_whole(msg, body.whole())? {
            self.dispatch(reply);
        }
        Ok(())
    }

    fn dispatch(self: &Arc<Self>, mut msg: Outgoing) {
        let me = self.clone();
        let id = msg.id;
        // Lent to the HTTP client, never copied (a retry after a 401 resends it).
        let body = std::mem::take(&mut msg.body);
        // Boxed at once: the exchange's future is a few KB, and moving it unboxed
        // (into the caller's claim or out again, into a task, its end stored in the
        // task's cell) copied all of it each time, about 4,500 instructions a call.
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
            None => self.spawn_background(task),
        }
    }

    /// Runs request `id`'s exchange on the runtime, where [`Transport::abandon`] can
    /// abort it.
    fn spawn_exchange(&self, id: i64, task: Exchange) {
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
    async fn settled_generation(&self) -> u64 {
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

    /// Starts a fresh session after a 404: initialize again (without the old session
    /// id), then notifications/initialized. Only the first 404 of a generation does it.
    async fn renew_session(&self, expired: u64) {
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
        let init_body = {
            let mut s = self.session.write().unwrap_or_else(|p| p.into_inner());
            if s.generation != expired || self.closed.load(Ordering::Acquire) {
                return;
            }
            s.generation += 1;
            s.id = None;
            s.init_body.clone()
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
    async fn standalone_stream(self: Arc<Self>) {
        let mut last_id: Option<String> = None;
        let mut backoff = Duration::from_millis(500);
        while !self.closed.load(Ordering::Acquire) {
            let mut headers = HeaderMap::new();
            if let Some(id) = last_id.as_deref().and_then(|i| HeaderValue::from_str(i).ok()) {
                headers.insert(HeaderName::from_static(LAST_EVENT_ID), id);
            }
            let mut retry = None;
            match self.request(Method::GET, None, &headers).await {
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

/// A caller's thread blocked in a call runs its own request's exchange (see
/// [`crate::drive::here`]).
impl Drive for HttpTransport {
    fn claim(&self, parker: &Parker) -> bool {
        here::claim(Owner::of(&self.inner), parker)
    }

    fn drive(&self, parker: &Parker) -> bool {
        match here::run(Owner::of(&self.inner), parker) {
            Ran::Nothing => false,
            Ran::Waited => true,
            Ran::Move((id, task)) => {
                self.inner.spawn_exchange(id, task);
                true
            }
        }
    }

    fn release(&self, _parker: &Parker) {
        if let Some((id, task)) = here::release(Owner::of(&self.inner)) {
            self.inner.spawn_exchange(id, task);
        }
    }
}

impl Transport for HttpTransport {
    fn set_era(&self, modern: Option<&'static str>) {
        *self.inner.era.lock().unwrap_or_else(|p| p.into_inner()) = modern;
    }

    fn probe_kind(&self) -> super::ProbeKind {
        super::ProbeKind::Http
    }

    fn driver(&self) -> Option<&dyn Drive> {
        Some(self)
    }

    fn send(&self, msg: Outgoing) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the HTTP transport is closed"));
        }
        let start_stream = self.inner.cfg.standalone_stream
            && msg.method == Some("notifications/initialized")
            && self.inner.era().is_none();
        self.inner.dispatch(msg);
        if start_stream {
            let me = self.inner.clone();
            self.inner.spawn_background(async move { me.standalone_stream().await });
        }
        Ok(())
    }

    fn abandon(&self, id: i64) {
        if here::drop_stashed(Owner::of(&self.inner), id) {
            return;
        }
        if let Some(h) = self
            .inner
            .inflight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id)
        {
            h.abort();
        }
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.inner.closed.swap(true, Ordering::AcqRel) {
                return;
            }
            for (_, h) in self.inner.inflight.lock().unwrap_or_else(|p| p.into_inner()).drain() {
                h.abort();
            }
            // Let notifications already queued (a cancel, say) go out, briefly.
            let background = std::mem::take(&mut *self.inner.background.lock().unwrap_or_else(|p| p.into_inner()));
            let _ = tokio::time::timeout(CLOSE_WAIT, async {
                for h in &background {
                    if !h.is_finished() {
                        // The GET stream never finishes by itself: stop it.
                        h.abort();
                    }
                }
                for h in background {
                    let _ = h.await;
                }
            })
            .await;
            let has_session = self
                .inner
                .session
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .id
                .is_some();
            if has_session {
                match tokio::time::timeout(CLOSE_WAIT, self.inner.request(Method::DELETE, None, &HeaderMap::new()))
                    .await
                {
                    Ok(Ok(resp)) => log::debug!("DELETE of the HTTP session: {}", resp.status()),
                    Ok(Err(e)) => log::debug!("DELETE of the HTTP session failed: {e}"),
                    Err(_) => log::debug!("DELETE of the HTTP session timed out"),
                }
            }
            self.inner.http.close_idle();
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_must_be_visible_ascii() {
        assert!(session_id(b"abc-123_~").is_some_and(|v| v.is_sensitive()));
        assert!(session_id(b"a b").is_none());
        assert!(session_id(b"").is_none());
        assert!(session_id(b"caf\xc3\xa9").is_none());
    }

    /// A sink that is never used: `request_fields` delivers nothing.
    struct NoSink;

    impl super::super::Sink for NoSink {
        fn deliver(&self, _msg: &[u8]) -> Result<Option<Outgoing>> {
            Ok(None)
        }
        fn deliver_response(&self, _msg: &[u8]) -> Option<Result<()>> {
            None
        }
        fn fail_request(&self, _id: i64, _err: Error) {}
        fn is_pending(&self, _id: i64) -> bool {
            false
        }
        fn closed(&self, _err: Error) {}
    }

    /// A configuration for an endpoint on a port nothing listens on.
    fn config(bearer: Option<&str>, headers: Vec<(HeaderName, HeaderValue)>) -> HttpConfig {
        HttpConfig {
            url: Url::parse("http://127.0.0.1:9/mcp").unwrap(),
            headers,
            bearer: bearer.map(str::to_string),
            token_fn: None,
            ca_pem: Vec::new(),
            max_message_size: 1 << 20,
            standalone_stream: false,
            connect_timeout: Duration::from_secs(1),
        }
    }

    fn lines_of(inner: &Inner, method: Method, posting: bool, content_type: bool, extra: &HeaderMap) -> Vec<String> {
        let ident = crate::drive::runtime::handle().block_on(inner.ident());
        let fields = inner
            .request_fields(&ident, &method, posting, content_type, extra)
            .unwrap();
        let text = String::from_utf8(fields).unwrap();
        assert!(text.is_empty() || text.ends_with("\r\n"), "{text:?}");
        text.split_terminator("\r\n").map(str::to_string).collect()
    }

    /// The fields mcpc sets replace the caller's and the configuration's of the same
    /// name; the others go through; a request turned into a GET has no Content-Type.
    #[test]
    fn request_fields_replace_the_callers_own() {
        let h = |n: &'static str, v: &'static str| (HeaderName::from_static(n), HeaderValue::from_static(v));
        let cfg = |bearer| config(bearer, vec![h("x-api-key", "k"), h("authorization", "Basic abc")]);
        let mut extra = HeaderMap::new();
        for (n, v) in [
            h("mcp-name", "echo"),
            h("accept", "text/html"),
            h("content-type", "text/plain"),
            h("host", "elsewhere"),
            h("content-length", "7"),
            h("mcp-session-id", "theirs"),
        ] {
            extra.append(n, v);
        }

        let inner = Inner::new(cfg(Some("tok")), Arc::new(NoSink)).unwrap();
        {
            let mut s = inner.session.write().unwrap();
            s.id = Some(HeaderValue::from_static("s1"));
            s.version = Some(HeaderValue::from_static("2025-11-25"));
        }
        let post = lines_of(&inner, Method::POST, true, true, &extra);
        let mut want = vec![
            "authorization: Bearer tok",
            "mcp-session-id: s1",
            "mcp-protocol-version: 2025-11-25",
            "accept: application/json, text/event-stream",
            "content-type: application/json",
            "mcp-name: echo",
            "x-api-key: k",
        ];
        let mut got: Vec<&str> = post.iter().map(String::as_str).collect();
        got.sort_unstable();
        want.sort_unstable();
        assert_eq!(got, want);

        // After a 303: the same request as a GET, with no Content-Type at all.
        let get = lines_of(&inner, Method::POST, true, false, &extra);
        assert!(!get.iter().any(|l| l.starts_with("content-type")), "{get:?}");
        assert_eq!(get.len(), want.len() - 1, "{get:?}");

        // Without a token, the configured Authorization goes through.
        let inner = Inner::new(cfg(None), Arc::new(NoSink)).unwrap();
        let lines = lines_of(&inner, Method::GET, false, true, &HeaderMap::new());
        let mut got: Vec<&str> = lines.iter().map(String::as_str).collect();
        got.sort_unstable();
        assert_eq!(
            got,
            ["accept: text/event-stream", "authorization: Basic abc", "x-api-key: k"]
        );
    }

    /// A request that starts while a fresh session is being started waits until it
    /// is in, and then reads the fresh generation; otherwise it does not wait.
    #[test]
    fn a_request_waits_out_a_renewal_under_way() {
        use std::future::Future;
        struct Nop;
        impl std::task::Wake for Nop {
            fn wake(self: Arc<Self>) {}
        }
        let waker = std::task::Waker::from(Arc::new(Nop));
        let mut cx = std::task::Context::from_waker(&waker);
        let cfg = config(None, Vec::new());
        let inner = Inner::new(cfg, Arc::new(NoSink)).unwrap();
        let read = |cx: &mut std::task::Context<'_>| std::pin::pin!(inner.settled_generation()).poll(cx);
        assert_eq!(read(&mut cx), std::task::Poll::Ready(0));

        // As `renew_session` does: the gate, the flag, the new generation, then both off.
        let gate = inner.renew_gate.try_write().unwrap();
        inner.renewing.store(true, Ordering::Release);
        let mut waiting = std::pin::pin!(inner.settled_generation());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        inner.session.write().unwrap().generation = 1;
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        inner.renewing.store(false, Ordering::Release);
        drop(gate);
        assert_eq!(waiting.as_mut().poll(&mut cx), std::task::Poll::Ready(1));
    }

    /// A classic POST's head is kept while nothing it carries changes, and made
    /// again when the token, the session id or the protocol version does.
    #[test]
    fn a_kept_head_follows_the_token_and_the_session() {
        let cfg = config(Some("t1"), Vec::new());
        let inner = Inner::new(cfg, Arc::new(NoSink)).unwrap();
        let none = HeaderMap::new();
        let head = |method: Method, extra: &HeaderMap| {
            let head = crate::drive::runtime::handle()
                .block_on(inner.request_head(&method, method == Method::POST, extra))
                .unwrap();
            (String::from_utf8(head.to_vec()).unwrap(), head.as_ptr())
        };
        let (first, at) = head(Method::POST, &none);
        assert!(
            first.starts_with("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:9\r\n"),
            "{first:?}"
        );
        assert!(first.contains("authorization: Bearer t1\r\n") && !first.contains("mcp-session-id"));
        assert_eq!(head(Method::POST, &none).1, at, "made again with nothing changed");
        // Other requests are made each time and leave the kept one alone.
        let mut extra = HeaderMap::new();
        extra.insert(HeaderName::from_static("mcp-method"), HeaderValue::from_static("x"));
        assert!(head(Method::POST, &extra).0.contains("mcp-method: x"));
        assert!(head(Method::GET, &none).0.starts_with("GET "));
        assert_eq!(head(Method::POST, &none).1, at);

        inner.session.write().unwrap().id = Some(HeaderValue::from_static("s1"));
        let (with_id, _) = head(Method::POST, &none);
        assert!(with_id.contains("mcp-session-id: s1\r\n"), "{with_id:?}");
        inner.session.write().unwrap().version = Some(HeaderValue::from_static("2025-11-25"));
        assert!(head(Method::POST, &none)
            .0
            .contains("mcp-protocol-version: 2025-11-25\r\n"));
        *inner.token.lock().unwrap() = Some("t2".into());
        let (fresh, _) = head(Method::POST, &none);
        assert!(fresh.contains("authorization: Bearer t2\r\n") && fresh.contains("mcp-session-id: s1\r\n"));
        inner.session.write().unwrap().id = Some(HeaderValue::from_static("s2"));
        assert!(head(Method::POST, &none).0.contains("mcp-session-id: s2\r\n"));
    }

    /// The system's roots are shared as they are, and copied, not replaced, for a
    /// client that adds a CA of its own (which then still trusts the public ones).
    #[test]
    fn system_roots_are_shared_and_kept_beside_own_cas() {
        assert!(Arc::ptr_eq(&native_roots(), &native_roots()));
        let system = native_roots().len();
        let der = rustls_native_certs::load_native_certs().certs;
        assert!(
            system > 0 && !der.is_empty(),
            "this machine has no system root certificates"
        );
        // One of them again, as a caller's PEM.
        const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut pem = b"-----BEGIN CERTIFICATE-----\n".to_vec();
        for (i, chunk) in der[0].as_ref().chunks(3).enumerate() {
            let n = chunk.iter().fold(0u32, |n, &b| n << 8 | u32::from(b)) << (8 * (3 - chunk.len()));
            for k in 0..4 {
                pem.push(if k <= chunk.len() {
                    B64[(n >> (18 - 6 * k) & 63) as usize]
                } else {
                    b'='
                });
            }
            if i % 16 == 15 {
                pem.push(b'\n');
            }
        }
        pem.extend_from_slice(b"\n-----END CERTIFICATE-----\n");
        assert_eq!(own_roots(&[pem.clone()], false).unwrap().len(), 1);
        // The same root twice is kept twice: the copy has all of the system's and the caller's.
        assert_eq!(own_roots(&[pem.clone()], true).unwrap().len(), system + 1);
        assert!(tls_config(&[pem], true).is_ok());
    }

    #[test]
    fn reserved_headers() {
        for h in [
            "content-type",
            "accept",
            "mcp-session-id",
            "MCP-Protocol-Version",
            "host",
        ] {
            assert!(
                is_reserved_header(&HeaderName::from_bytes(h.as_bytes()).unwrap()),
                "{h}"
            );
        }
        assert!(!is_reserved_header(&HeaderName::from_static("x-api-key")));
        assert!(!is_reserved_header(&AUTHORIZATION));
    }

    #[test]
    fn pem_checks() {
        assert_eq!(
            tls_config(&[b"not a pem".to_vec()], false).unwrap_err().status,
            Status::MCPC_ERR_INVALID_ARG
        );
        assert!(tls_config(&[], true).is_ok());
    }
}
