// The loopback servers, the host's callbacks and the client set-up the OAuth
// tests share, included by each of them.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcpc::ffi::client::*;
use mcpc::ffi::error::*;
use mcpc::ffi::oauth::*;
use mcpc::ffi::options::*;
use mcpc::ffi::result::*;
use mcpc::Status;

/// One request a test server saw.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    target: String,
    headers: HashMap<String, String>,
    body: String,
    /// "1.1", or "2" for a request that came over HTTP/2.
    version: &'static str,
}

impl Seen {
    fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }
    fn form(&self, key: &str) -> Option<String> {
        url::form_urlencoded::parse(self.body.as_bytes())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    }
}

struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn json(status: u16, v: serde_json::Value) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: v.to_string().into_bytes(),
    }
}

type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;
/// A handler that also logs what it saw.
type Answer = Arc<dyn Fn(Seen) -> Reply + Send + Sync>;

/// A loopback server: one thread per connection, over HTTP/1.1 one request each;
/// a connection that opens with HTTP/2's preface is served over HTTP/2 (h2c),
/// every request on it.
struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start(handler: Handler) -> Server {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        std::thread::spawn(move || {
            for conn in l.incoming() {
                let Ok(conn) = conn else { return };
                let (handler, log) = (handler.clone(), log.clone());
                let answer: Answer = Arc::new(move |seen: Seen| {
                    log.lock().unwrap().push(seen.clone());
                    handler(&seen)
                });
                std::thread::spawn(move || {
                    if opens_http2(&conn) {
                        serve_http2(conn, answer);
                    } else {
                        serve_http11(conn, answer);
                    }
                });
            }
        });
        Server { url, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    fn count(&self, path: &str) -> usize {
        self.seen().iter().filter(|s| s.path() == path).count()
    }
}

/// True when the connection starts with HTTP/2's preface ("PRI * HTTP/2.0...").
fn opens_http2(conn: &std::net::TcpStream) -> bool {
    let mut buf = [0u8; 3];
    loop {
        match conn.peek(&mut buf) {
            Ok(n) if n < buf.len() && buf[..n] == b"PRI"[..n] && n > 0 => continue,
            Ok(n) => return n == buf.len() && &buf == b"PRI",
            Err(_) => return false,
        }
    }
}

/// One HTTP/1.1 request, answered by `answer`, then the connection closes.
fn serve_http11(mut conn: std::net::TcpStream, answer: Answer) {
    let mut r = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if r.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, target) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("").to_string(),
    );
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let n: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; n];
    let _ = r.read_exact(&mut body);
    let reply = answer(Seen {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        version: "1.1",
    });
    let mut out = format!(
        "HTTP/1.1 {} X\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let _ = conn.write_all(out.as_bytes());
    let _ = conn.write_all(&reply.body);
}

/// Every request of an HTTP/2 connection (h2c), each on a task of its own, answered
/// by `answer`.
fn serve_http2(conn: std::net::TcpStream, answer: Answer) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        conn.set_nonblocking(true).unwrap();
        let tcp = tokio::net::TcpStream::from_std(conn).unwrap();
        let Ok(mut h2) = h2::server::handshake(tcp).await else {
            return;
        };
        while let Some(Ok((req, mut respond))) = h2.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let (parts, mut recv) = req.into_parts();
                let mut body = Vec::new();
                while let Some(Ok(piece)) = recv.data().await {
                    let _ = recv.flow_control().release_capacity(piece.len());
                    body.extend_from_slice(&piece);
                }
                let headers = parts
                    .headers
                    .iter()
                    .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                    .collect();
                let target = parts.uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
                let reply = answer(Seen {
                    method: parts.method.to_string(),
                    target,
                    headers,
                    body: String::from_utf8_lossy(&body).into_owned(),
                    version: "2",
                });
                let mut head = http::Response::builder()
                    .status(reply.status)
                    .header("content-length", reply.body.len());
                for (k, v) in &reply.headers {
                    head = head.header(k.as_str(), v.as_str());
                }
                let Ok(mut out) = respond.send_response(head.body(()).unwrap(), reply.body.is_empty()) else {
                    return;
                };
                if !reply.body.is_empty() {
                    let _ = out.send_data(bytes::Bytes::from(reply.body), true);
                }
            });
        }
    });
}

/// How the authorization server misbehaves.
#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    NoS256,
    TokenError,
    NoTokenType,
    Oversized,
    /// Refreshing a token fails with HTTP 500.
    RefreshFails,
    /// The server accepts DPoP proofs (ES256) and binds tokens to them.
    Dpop,
}

struct Auth {
    fault: Fault,
    tokens: AtomicUsize,
    /// A refresh is answered only once the MCP server refused this many requests
    /// (`refused`), so that all of them are on their way before it (0: at once).
    hold: AtomicUsize,
    refused: (Mutex<usize>, std::sync::Condvar),
}

fn auth_server(fault: Fault) -> (Server, Arc<Auth>) {
    let st = Arc::new(Auth {
        fault,
        tokens: AtomicUsize::new(0),
        hold: AtomicUsize::new(0),
        refused: (Mutex::new(0), std::sync::Condvar::new()),
    });
    let s = st.clone();
    let issuer = Arc::new(Mutex::new(String::new()));
    let iss = issuer.clone();
    let server = Server::start(Arc::new(move |r: &Seen| {
        let issuer = iss.lock().unwrap().clone();
        match r.path() {
            "/.well-known/oauth-authorization-server" => {
                let mut m = serde_json::json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{issuer}/authorize"),
                    "token_endpoint": format!("{issuer}/token"),
                    "registration_endpoint": format!("{issuer}/register"),
                    "code_challenge_methods_supported": ["S256"],
                    "authorization_response_iss_parameter_supported": true,
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                });
                if s.fault == Fault::Dpop {
                    m["dpop_signing_alg_values_supported"] = serde_json::json!(["ES256"]);
                }
                if s.fault == Fault::NoS256 {
                    m.as_object_mut().unwrap().remove("code_challenge_methods_supported");
                }
                json(200, m)
            }
            "/register" => json(
                201,
                serde_json::json!({"client_id": "cid", "client_secret": "the-client-secret"}),
            ),
            "/token" => {
                let n = s.tokens.fetch_add(1, Ordering::SeqCst);
                let refresh = r.form("grant_type").as_deref() == Some("refresh_token");
                if refresh {
                    let (lock, cv) = &s.refused;
                    let hold = s.hold.load(Ordering::SeqCst);
                    let n = lock.lock().unwrap();
                    let _ = cv
                        .wait_timeout_while(n, std::time::Duration::from_secs(10), |n| *n < hold)
                        .unwrap();
                }
                match s.fault {
                    Fault::TokenError => json(
                        400,
                        serde_json::json!({"error": "invalid_request", "error_description": "nope"}),
                    ),
                    Fault::NoTokenType => json(200, serde_json::json!({"access_token": "t"})),
                    Fault::Oversized => json(
                        200,
                        serde_json::json!({"access_token": "x".repeat(300 * 1024), "token_type": "Bearer"}),
                    ),
                    Fault::RefreshFails if refresh => json(500, serde_json::json!({"error": "server_error"})),
                    _ => {
                        let kind = if s.fault == Fault::Dpop && r.headers.contains_key("dpop") {
                            "DPoP"
                        } else {
                            "Bearer"
                        };
                        json(
                            200,
                            serde_json::json!({"access_token": format!("secret-token-{n}"), "token_type": kind,
                                "expires_in": 3600, "refresh_token": format!("refresh-{n}")}),
                        )
                    }
                }
            }
            _ => json(404, serde_json::json!({})),
        }
    }));
    *issuer.lock().unwrap() = server.url.clone();
    (server, st)
}

/// Judges a request's credentials: None lets it through, else the answer.
type Gatekeeper = Arc<dyn Fn(&Seen, &str) -> Option<Reply> + Send + Sync>;

/// The 401 that names the resource metadata at `base`.
fn unauthorized(base: &str) -> Reply {
    let mut rep = json(401, serde_json::json!({"error": "invalid_token"}));
    rep.headers.push((
        "www-authenticate".into(),
        format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""),
    ));
    rep
}

/// A gatekeeper for bearer tokens that `valid` accepts.
fn bearer(valid: impl Fn(&str) -> bool + Send + Sync + 'static) -> Gatekeeper {
    Arc::new(move |r: &Seen, base: &str| {
        let token = r
            .headers
            .get("authorization")
            .and_then(|a| a.strip_prefix("Bearer "))
            .unwrap_or("");
        (!valid(token)).then(|| unauthorized(base))
    })
}

/// The MCP server: lets through what `gate` accepts, speaks the initialize
/// revisions, and names its metadata in 401s.
fn mcp_server(as_url: String, gate: Gatekeeper, resource: Option<String>) -> Server {
    let me = Arc::new(Mutex::new(String::new()));
    let m = me.clone();
    let server = Server::start(Arc::new(move |r: &Seen| {
        let base = m.lock().unwrap().clone();
        if r.path() == "/.well-known/oauth-protected-resource/mcp" {
            let res = resource.clone().unwrap_or(format!("{base}/mcp"));
            return json(
                200,
                serde_json::json!({"resource": res, "authorization_servers": [as_url]}),
            );
        }
        if let Some(refused) = gate(r, &base) {
            return refused;
        }
        let msg: serde_json::Value = serde_json::from_str(&r.body).unwrap_or_default();
        let Some(id) = msg.get("id").cloned() else {
            return Reply {
                status: 202,
                headers: vec![],
                body: vec![],
            };
        };
        let result = match msg["method"].as_str().unwrap_or("") {
            "initialize" => serde_json::json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "auth-fixture", "version": "1"}}),
            "tools/list" => serde_json::json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}),
            "tools/call" => serde_json::json!({"content": [{"type": "text", "text": "ok"}]}),
            _ => {
                return json(
                    200,
                    serde_json::json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
                )
            }
        };
        json(200, serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }));
    *me.lock().unwrap() = server.url.clone();
    server
}

/// What the user does at the authorization server.
#[derive(Clone, Copy, PartialEq)]
enum User {
    Approve,
    WrongIss,
    Cancel,
}

struct Host {
    user: User,
    logins: AtomicUsize,
    store: Mutex<HashMap<String, String>>,
}

unsafe extern "C" fn on_authorize(ud: *mut c_void, req: *mut mcpc_auth_request_t) {
    let host = unsafe { &*(ud as *const Host) };
    host.logins.fetch_add(1, Ordering::SeqCst);
    let url = unsafe { CStr::from_ptr(mcpc_auth_request_url(req)) }
        .to_str()
        .unwrap()
        .to_string();
    let u = url::Url::parse(&url).unwrap();
    let q: HashMap<String, String> = u.query_pairs().into_owned().collect();
    if host.user == User::Cancel {
        assert_eq!(unsafe { mcpc_auth_request_cancel(req) }, Status::MCPC_OK);
        return;
    }
    let iss = if host.user == User::WrongIss {
        "http://127.0.0.1:1".to_string()
    } else {
        u.origin().ascii_serialization()
    };
    let mut back = url::Url::parse(&q["redirect_uri"]).unwrap();
    back.query_pairs_mut()
        .append_pair("code", "c")
        .append_pair("state", &q["state"])
        .append_pair("iss", &iss);
    let back = CString::new(back.to_string()).unwrap();
    assert_eq!(
        unsafe { mcpc_auth_request_complete(req, back.as_ptr()) },
        Status::MCPC_OK
    );
}

unsafe extern "C" fn store_load(ud: *mut c_void, key: *const c_char, buf: *mut c_char, len: usize) -> i32 {
    let host = unsafe { &*(ud as *const Host) };
    let key = unsafe { CStr::from_ptr(key) }.to_str().unwrap();
    let Some(v) = host.store.lock().unwrap().get(key).cloned() else {
        return 1;
    };
    assert!(v.len() < len);
    unsafe {
        std::ptr::copy_nonoverlapping(v.as_ptr(), buf.cast(), v.len());
        *buf.add(v.len()) = 0;
    }
    0
}

unsafe extern "C" fn store_save(ud: *mut c_void, key: *const c_char, value: *const c_char) {
    let host = unsafe { &*(ud as *const Host) };
    let key = unsafe { CStr::from_ptr(key) }.to_str().unwrap().to_string();
    let mut s = host.store.lock().unwrap();
    if value.is_null() {
        s.remove(&key);
    } else {
        s.insert(key, unsafe { CStr::from_ptr(value) }.to_str().unwrap().to_string());
    }
}

fn host(user: User) -> Arc<Host> {
    Arc::new(Host {
        user,
        logins: AtomicUsize::new(0),
        store: Mutex::new(HashMap::new()),
    })
}

struct Client(*mut mcpc_client_t);
// SAFETY: a client handle may be used from any thread.
unsafe impl Send for Client {}
unsafe impl Sync for Client {}

impl Drop for Client {
    fn drop(&mut self) {
        unsafe { mcpc_client_free(self.0) }
    }
}

/// Connects to `url` with OAuth as a host configures it; the status and message.
fn connect(url: &str, host: &Arc<Host>, headless: bool) -> (Status, String, Option<Client>) {
    connect_as(url, host, headless, |_| {})
}

/// As `connect`, with more settings made by `more`.
fn connect_as(
    url: &str,
    host: &Arc<Host>,
    headless: bool,
    more: impl FnOnce(*mut mcpc_oauth_t),
) -> (Status, String, Option<Client>) {
    connect_with(url, oauth_of(host, headless, more))
}

/// The OAuth settings a host makes: its authorize callback and store, `headless`,
/// and what `more` adds.
fn oauth_of<'a>(
    host: &'a Arc<Host>,
    headless: bool,
    more: impl FnOnce(*mut mcpc_oauth_t) + 'a,
) -> impl FnOnce(*mut mcpc_oauth_t) + 'a {
    move |a| unsafe {
        let redirect = CString::new("http://127.0.0.1:9/callback").unwrap();
        mcpc_oauth_set_redirect_uri(a, redirect.as_ptr());
        mcpc_oauth_set_authorize_callback(a, Some(on_authorize), Arc::as_ptr(host) as *mut c_void, None);
        mcpc_oauth_set_store(
            a,
            Some(store_load),
            Some(store_save),
            Arc::as_ptr(host) as *mut c_void,
            None,
        );
        mcpc_oauth_set_headless(a, headless as i32);
        more(a);
    }
}

/// Connects to `url` with the OAuth settings `configure` makes.
fn connect_with(url: &str, configure: impl FnOnce(*mut mcpc_oauth_t)) -> (Status, String, Option<Client>) {
    connect_within(url, 10_000, configure)
}

/// As `connect_with`, with the client's timeout `timeout_ms`.
fn connect_within(
    url: &str,
    timeout_ms: i64,
    configure: impl FnOnce(*mut mcpc_oauth_t),
) -> (Status, String, Option<Client>) {
    connect_using(url, timeout_ms, |_| {}, configure)
}

/// As `connect_within`, with more client options set by `options`.
fn connect_using(
    url: &str,
    timeout_ms: i64,
    options: impl FnOnce(*mut mcpc_options_t),
    configure: impl FnOnce(*mut mcpc_oauth_t),
) -> (Status, String, Option<Client>) {
    unsafe {
        let o = mcpc_options_new();
        mcpc_options_set_timeout_ms(o, timeout_ms);
        options(o);
        let a = mcpc_oauth_new();
        configure(a);
        assert_eq!(mcpc_options_set_oauth(o, a), Status::MCPC_OK);
        mcpc_oauth_free(a);
        let url = CString::new(format!("{url}/mcp")).unwrap();
        let mut c = std::ptr::null_mut();
        let st = mcpc_client_connect_http(url.as_ptr(), o, &mut c);
        let msg = CStr::from_ptr(mcpc_last_error_message()).to_string_lossy().into_owned();
        mcpc_options_free(o);
        (st, msg, (!c.is_null()).then_some(Client(c)))
    }
}

fn call(c: &Client) -> (Status, String) {
    unsafe {
        let name = CString::new("echo").unwrap();
        let mut r = std::ptr::null_mut();
        let st = mcpc_client_call_tool(c.0, name.as_ptr(), std::ptr::null(), std::ptr::null(), &mut r);
        let msg = if st == Status::MCPC_OK {
            CStr::from_ptr(mcpc_result_text(r, std::ptr::null_mut()))
                .to_string_lossy()
                .into_owned()
        } else {
            CStr::from_ptr(mcpc_last_error_message()).to_string_lossy().into_owned()
        };
        mcpc_result_free(r);
        (st, msg)
    }
}

fn issued(t: &str) -> bool {
    t.starts_with("secret-token-")
}

/// No server but the MCP server saw an access token.
fn token_stayed(servers: &[&Server]) {
    for s in servers {
        for r in s.seen() {
            let all = format!("{:?} {} {}", r.headers, r.target, r.body);
            assert!(
                !all.contains("secret-token-"),
                "an access token reached {}: {all}",
                s.url
            );
        }
    }
}
