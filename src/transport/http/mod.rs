//! The Streamable HTTP transport: each client message is a POST to the endpoint;
//! a request's reply is JSON or an SSE stream (which may carry server requests and
//! notifications before the response). Sessions (`Mcp-Session-Id`), the
//! `MCP-Protocol-Version` header, session expiry with a fresh session, SSE
//! resumption, the optional standalone GET stream, caller-supplied auth, DELETE on
//! close. TLS is always verified (rustls): system roots plus caller CAs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::http::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use ::http::{Method, Uri};
use bytes::Bytes;
use tokio::task::{AbortHandle, JoinHandle};
use url::Url;

use super::hx;
use super::{BoxFuture, Outgoing, SinkRef, Transport};
use crate::drive::here::{self, Owner, Ran};
use crate::drive::park::Parker;
use crate::drive::Drive;
use crate::error::{Error, Result, Status};

mod auth;
mod legacy;
mod reply;
mod request;
mod session;
mod tls;

pub use auth::Authorizer;
#[cfg(feature = "fuzzing")]
pub(crate) use legacy::legacy_endpoint;
pub use legacy::LegacySseTransport;
use reply::*;
use request::*;
pub(crate) use tls::tls_config;
#[cfg(test)]
use tls::*;

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
    /// Obtains tokens itself (OAuth); when set, `bearer` and `token_fn` are unused.
    pub authorizer: Option<Arc<dyn Authorizer>>,
    /// Extra trusted CA certificates, PEM.
    pub ca_pem: Vec<Vec<u8>>,
    pub max_message_size: usize,
    /// Open the optional standalone GET stream for server notifications.
    pub standalone_stream: bool,
    pub connect_timeout: Duration,
    /// Which proxy, if any, each origin is reached through.
    pub proxy: crate::transport::proxy::ProxySettings,
    /// Which HTTP versions may carry the messages.
    pub http_version: hx::Version,
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
    /// Session state the client set up, replayed in a fresh session after
    /// `initialize`: the last `logging/setLevel` (key None) and each resource
    /// subscription still in force (key: its URI).
    replay: Vec<(Option<String>, Bytes)>,
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
    http: hx::Client,
    /// The endpoint's path and query, as requests carry it.
    path: Uri,
    cfg: HttpConfig,
    sink: SinkRef,
    /// Never held across an await (a std lock: a request reads it three times).
    session: std::sync::RwLock<Session>,
    /// Held (write) while a fresh session is being started; requests wait it out.
    renew_gate: tokio::sync::RwLock<()>,
    /// True while the gate is held (write), so that a request waits at the gate
    /// only then, rather than taking it (read) for every request.
    renewing: AtomicBool,
    token: Mutex<Option<String>>,
    token_fetched: AtomicBool,
    /// The head of a classic POST with no fields of its own, kept while what it
    /// carries of the token and the session holds (see [`Inner::request_head`]).
    kept_head: Mutex<Option<KeptHead>>,
    /// Keyed by the client's own ids: a fast hash (a sequential call's exchange
    /// looks its id up here as it ends, run on the runtime or not).
    inflight: Mutex<rustc_hash::FxHashMap<i64, AbortHandle>>,
    /// Tasks of no request: messages without an id (notifications, answers to
    /// server requests), which close lets finish, and the standalone GET stream
    /// (`true`), which never ends by itself and which close stops.
    background: Mutex<Vec<(JoinHandle<()>, bool)>>,
    closed: AtomicBool,
    /// `Some(version)` under the stateless 2026-07-28 rules.
    era: Mutex<Option<&'static str>>,
    /// True once the standalone GET stream's first attempt has its answer.
    stream_tried: tokio::sync::watch::Sender<bool>,
}

pub struct HttpTransport {
    inner: Arc<Inner>,
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
        // within its origin: no need to read the system's certificate store (slow and
        // large the first time).
        let tls = tls_config(&cfg.ca_pem, cfg.url.scheme() == "https")?;
        let tls = (cfg.url.scheme() == "https").then(|| Arc::new(tls));
        let route = hx::Route::for_url(&cfg.proxy, &cfg.url, || tls_config(&cfg.ca_pem, true).map(Arc::new))?;
        if cfg.http_version == hx::Version::Http2PriorKnowledge && route.is_some() && tls.is_none() {
            // Through a proxy a plain-http endpoint is asked in HTTP/1.1's absolute form.
            return Err(Error::new(
                Status::MCPC_ERR_NOT_SUPPORTED,
                "HTTP/2 with prior knowledge cannot go through a proxy to an http:// endpoint",
            ));
        }
        let http = hx::Client::new(&cfg.url, tls, cfg.connect_timeout, route, cfg.http_version)
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
            stream_tried: tokio::sync::watch::channel(false).0,
        })
    }
}

impl Inner {
    /// Runs a task of no request; `endless` for the standalone stream.
    fn spawn_background(self: &Arc<Self>, fut: impl std::future::Future<Output = ()> + Send + 'static, endless: bool) {
        let handle = crate::drive::runtime::handle().spawn(fut);
        let mut bg = self.background.lock().unwrap_or_else(|p| p.into_inner());
        bg.retain(|(h, _)| !h.is_finished());
        bg.push((handle, endless));
    }

    fn era(&self) -> Option<&'static str> {
        *self.era.lock().unwrap_or_else(|p| p.into_inner())
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

    /// Before 2026-07-28 they come only on the optional GET stream, which may be off
    /// or refused, and a session renewed after a 404 starts afresh: never trusted.
    fn hears_unsolicited(&self) -> bool {
        false
    }

    fn driver(&self) -> Option<&dyn Drive> {
        Some(self)
    }

    fn send(&self, msg: Outgoing) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the HTTP transport is closed"));
        }
        let start_stream = self.inner.cfg.standalone_stream
            && msg.method.as_deref() == Some("notifications/initialized")
            && self.inner.era().is_none();
        self.inner.dispatch(msg);
        if start_stream {
            let me = self.inner.clone();
            self.inner
                .spawn_background(async move { me.standalone_stream().await }, true);
        }
        Ok(())
    }

    fn settled(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if !self.inner.cfg.standalone_stream || self.inner.era().is_some() {
                return;
            }
            let mut tried = self.inner.stream_tried.subscribe();
            let _ = tried.wait_for(|t| *t).await;
        })
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
            // Messages decided before close (a cancel, say) go out before the
            // session ends, within the grace; only the GET stream is stopped.
            let background = std::mem::take(&mut *self.inner.background.lock().unwrap_or_else(|p| p.into_inner()));
            let mut waiting = Vec::with_capacity(background.len());
            for (h, endless) in background {
                if endless {
                    h.abort();
                } else {
                    waiting.push(h);
                }
            }
            let delivered = tokio::time::timeout(CLOSE_WAIT, async {
                for h in waiting.iter_mut() {
                    let _ = h.await;
                }
            })
            .await;
            if delivered.is_err() {
                log::debug!("messages queued before close did not go out within {CLOSE_WAIT:?}");
                waiting.iter().for_each(JoinHandle::abort);
            }
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
    use ::http::header::AUTHORIZATION;

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
        fn deliver(&self, _d: super::super::Delivery<'_>) -> Result<super::super::Delivered> {
            Ok(super::super::Delivered::Done)
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
            authorizer: None,
            ca_pem: Vec::new(),
            max_message_size: 1 << 20,
            standalone_stream: false,
            connect_timeout: Duration::from_secs(1),
            proxy: Default::default(),
            http_version: Default::default(),
        }
    }

    fn lines_of(inner: &Inner, method: Method, posting: bool, content_type: bool, extra: &HeaderMap) -> Vec<String> {
        let ident = crate::drive::runtime::handle().block_on(inner.ident()).unwrap();
        let fields = inner
            .request_fields(&ident, None, &method, posting, content_type, extra)
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
