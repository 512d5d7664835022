//! OAuth against authorization servers and servers that misbehave, through the C
//! ABI: what the conformance suite does not cover. Each test starts its own
//! loopback servers (an MCP server that wants a token, an authorization server,
//! and where it matters a third origin), plays the user in the authorize
//! callback, and checks the status, what each server saw, and that the access
//! token reached no one but the MCP server.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

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

/// A loopback HTTP/1.1 server: one thread per connection, one request each.
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
                let Ok(mut conn) = conn else { return };
                let (handler, log) = (handler.clone(), log.clone());
                std::thread::spawn(move || {
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
                    let seen = Seen {
                        method,
                        target,
                        headers,
                        body: String::from_utf8_lossy(&body).into_owned(),
                    };
                    log.lock().unwrap().push(seen.clone());
                    let reply = handler(&seen);
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
    connect_with(url, |a| unsafe {
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
    })
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
    unsafe {
        let o = mcpc_options_new();
        mcpc_options_set_timeout_ms(o, timeout_ms);
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

#[test]
fn a_login_works_and_the_token_goes_only_to_the_server() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let h = host(User::Approve);
    let (st, msg, c) = connect(&m.url, &h, false);
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    assert_eq!(call(c.as_ref().unwrap()), (Status::MCPC_OK, "ok".to_string()));
    assert_eq!(h.logins.load(Ordering::SeqCst), 1);
    token_stayed(&[&a]);
    // The secret went only to the token endpoint, and never into a message.
    let tokens: Vec<Seen> = a.seen().into_iter().filter(|s| s.path() == "/token").collect();
    assert_eq!(tokens.len(), 1);
    assert_eq!(tokens[0].method, "POST");
    assert_eq!(tokens[0].form("client_secret").as_deref(), Some("the-client-secret"));
    assert_eq!(
        tokens[0].form("resource").as_deref(),
        Some(format!("{}/mcp", m.url).as_str())
    );
    assert!(tokens[0].form("code_verifier").is_some());
    assert!(m.seen().iter().all(|s| !format!("{s:?}").contains("the-client-secret")));
}

#[test]
fn stored_tokens_serve_headless_and_none_is_login_required() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let h = host(User::Approve);
    let (st, msg, _) = connect(&m.url, &h, true);
    assert_eq!(st, Status::MCPC_ERR_LOGIN_REQUIRED, "{msg}");
    assert_eq!(h.logins.load(Ordering::SeqCst), 0);
    // Nothing was registered for a login that could not happen.
    assert_eq!(a.count("/register"), 0);
    let (st, msg, c) = connect(&m.url, &h, false);
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    drop(c);
    assert!(h.store.lock().unwrap().keys().any(|k| k.starts_with("tokens ")));
    // Stored tokens: headless works, with no login and no token request.
    let before = a.count("/token");
    let (st, msg, c) = connect(&m.url, &h, true);
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    assert_eq!(call(c.as_ref().unwrap()).0, Status::MCPC_OK);
    assert_eq!(h.logins.load(Ordering::SeqCst), 1);
    assert_eq!(a.count("/token"), before);
}

#[test]
fn a_cancelled_login_is_its_own_status() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let (st, msg, _) = connect(&m.url, &host(User::Cancel), false);
    assert_eq!(st, Status::MCPC_ERR_LOGIN_CANCELLED, "{msg}");
    assert_eq!(a.count("/token"), 0);
}

#[test]
fn a_wrong_iss_is_refused_before_the_code_is_redeemed() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let (st, msg, _) = connect(&m.url, &host(User::WrongIss), false);
    assert_eq!(st, Status::MCPC_ERR_AUTH_SERVER, "{msg}");
    assert!(msg.contains("iss"), "{msg}");
    assert_eq!(a.count("/token"), 0);
}

#[test]
fn a_server_without_s256_is_refused_before_any_login() {
    let (a, _) = auth_server(Fault::NoS256);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let h = host(User::Approve);
    let (st, msg, _) = connect(&m.url, &h, false);
    assert_eq!(st, Status::MCPC_ERR_AUTH_SERVER, "{msg}");
    assert!(msg.contains("S256"), "{msg}");
    assert_eq!(h.logins.load(Ordering::SeqCst), 0);
}

#[test]
fn bad_token_responses_are_authorization_server_errors() {
    for (fault, words) in [
        (Fault::TokenError, "invalid_request"),
        (Fault::NoTokenType, "malformed"),
        (Fault::Oversized, "bytes"),
    ] {
        let (a, _) = auth_server(fault);
        let m = mcp_server(a.url.clone(), bearer(issued), None);
        let (st, msg, _) = connect(&m.url, &host(User::Approve), false);
        assert_eq!(st, Status::MCPC_ERR_AUTH_SERVER, "{msg}");
        assert!(msg.contains(words), "{words}: {msg}");
        assert!(!msg.contains("the-client-secret"), "{msg}");
    }
}

#[test]
fn metadata_for_another_resource_is_refused() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), Some("http://127.0.0.1:1/mcp".into()));
    let h = host(User::Approve);
    let (st, msg, _) = connect(&m.url, &h, false);
    assert_eq!(st, Status::MCPC_ERR_AUTH_SERVER, "{msg}");
    assert_eq!(h.logins.load(Ordering::SeqCst), 0);
    assert_eq!(a.seen().len(), 0);
}

/// 16 calls meet a revoked token at once: one refresh is made, and all see it.
fn revoked_under_load(fault: Fault) -> (Vec<(Status, String)>, usize) {
    let (a, st) = auth_server(fault);
    let revoked = Arc::new(AtomicUsize::new(usize::MAX));
    let (r, counts) = (revoked.clone(), st.clone());
    let valid = move |t: &str| {
        let ok = t
            .strip_prefix("secret-token-")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| r.load(Ordering::SeqCst) != n);
        if !ok && t == "secret-token-0" {
            *counts.refused.0.lock().unwrap() += 1;
            counts.refused.1.notify_all();
        }
        ok
    };
    let m = mcp_server(a.url.clone(), bearer(valid), None);
    let h = host(User::Approve);
    let (s, msg, c) = connect(&m.url, &h, false);
    assert_eq!(s, Status::MCPC_OK, "{msg}");
    let c = Arc::new(c.unwrap());
    let before = st.tokens.load(Ordering::SeqCst);
    st.hold.store(16, Ordering::SeqCst);
    revoked.store(0, Ordering::SeqCst);
    let outcomes: Vec<(Status, String)> = (0..16)
        .map(|_| {
            let c = c.clone();
            std::thread::spawn(move || call(&c))
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    (outcomes, st.tokens.load(Ordering::SeqCst) - before)
}

#[test]
fn one_refresh_serves_sixteen_concurrent_calls() {
    let (outcomes, refreshes) = revoked_under_load(Fault::None);
    assert!(outcomes.iter().all(|o| o.0 == Status::MCPC_OK), "{outcomes:?}");
    assert_eq!(refreshes, 1);
}

#[test]
fn a_failed_refresh_is_one_refresh_and_every_call_sees_it() {
    let (outcomes, refreshes) = revoked_under_load(Fault::RefreshFails);
    assert_eq!(refreshes, 1);
    for (st, msg) in &outcomes {
        assert_eq!(*st, Status::MCPC_ERR_AUTH_SERVER, "{msg}");
        assert!(msg.contains("refreshing"), "{msg}");
    }
}

/// The claims of a DPoP proof, verified with the key it embeds.
fn proof_claims(proof: &str) -> serde_json::Value {
    let header = jsonwebtoken::decode_header(proof).unwrap();
    assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
    let key = jsonwebtoken::DecodingKey::from_jwk(&header.jwk.unwrap()).unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.required_spec_claims.clear();
    v.validate_exp = false;
    jsonwebtoken::decode::<serde_json::Value>(proof, &key, &v)
        .unwrap()
        .claims
}

#[test]
fn a_dpop_bound_token_goes_only_with_a_fresh_proof() {
    use base64::Engine;
    let (a, _) = auth_server(Fault::Dpop);
    let jtis = Arc::new(Mutex::new(Vec::new()));
    let seen = jtis.clone();
    let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
        let Some(auth) = r.headers.get("authorization") else {
            return Some(unauthorized(base));
        };
        let token = auth
            .strip_prefix("DPoP ")
            .expect("a DPoP-bound token is never sent as bearer");
        let c = proof_claims(&r.headers["dpop"]);
        assert_eq!(c["htm"], "POST");
        assert_eq!(c["htu"], format!("{base}/mcp"));
        let hash = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
        assert_eq!(
            c["ath"],
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hash.as_ref())
        );
        seen.lock().unwrap().push(c["jti"].as_str().unwrap().to_string());
        None
    });
    let m = mcp_server(a.url.clone(), gate, None);
    let (st, msg, c) = connect(&m.url, &host(User::Approve), false);
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    for _ in 0..3 {
        assert_eq!(call(c.as_ref().unwrap()).0, Status::MCPC_OK);
    }
    // The token request carried a proof for the token endpoint, without a token.
    let t = a.seen().into_iter().find(|s| s.path() == "/token").unwrap();
    let tc = proof_claims(&t.headers["dpop"]);
    assert_eq!(tc["htu"], format!("{}/token", a.url));
    assert!(tc.get("ath").is_none());
    let jtis = jtis.lock().unwrap();
    assert!(jtis.len() >= 4, "{jtis:?}");
    let unique: std::collections::HashSet<_> = jtis.iter().collect();
    assert_eq!(unique.len(), jtis.len(), "a proof was used twice");
}

#[test]
fn a_nonce_that_changes_every_time_is_bounded() {
    let (a, _) = auth_server(Fault::Dpop);
    let n = Arc::new(AtomicUsize::new(0));
    let count = n.clone();
    let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
        if !r.headers.contains_key("authorization") {
            return Some(unauthorized(base));
        }
        let i = count.fetch_add(1, Ordering::SeqCst);
        let mut rep = json(401, serde_json::json!({"error": "use_dpop_nonce"}));
        rep.headers
            .push(("www-authenticate".into(), "DPoP error=\"use_dpop_nonce\"".into()));
        rep.headers.push(("dpop-nonce".into(), format!("nonce-{i}")));
        Some(rep)
    });
    let m = mcp_server(a.url.clone(), gate, None);
    let (st, msg, _) = connect(&m.url, &host(User::Approve), false);
    assert_eq!(st, Status::MCPC_ERR_AUTH, "{msg}");
    assert!(n.load(Ordering::SeqCst) <= 6, "{} tries", n.load(Ordering::SeqCst));
}

/// Gives the assertion in `ud` (a NUL-terminated string), or none for NULL.
unsafe extern "C" fn give_assertion(ud: *mut c_void, buf: *mut c_char, len: usize) -> i32 {
    CALLS.fetch_add(1, Ordering::SeqCst);
    if ud.is_null() {
        return 1;
    }
    let jwt = unsafe { CStr::from_ptr(ud as *const c_char) }.to_bytes_with_nul();
    assert!(jwt.len() <= len);
    unsafe { std::ptr::copy_nonoverlapping(jwt.as_ptr(), buf.cast(), jwt.len()) };
    0
}
static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Connects with the JWT bearer grant and `give_assertion(jwt)`.
fn connect_jwt_bearer(url: &str, jwt: Option<&CStr>) -> (Status, String) {
    let (st, msg, _) = connect_with(url, |a| unsafe {
        assert_eq!(mcpc_oauth_set_grant(a, MCPC_OAUTH_JWT_BEARER), Status::MCPC_OK);
        let ud = jwt.map_or(std::ptr::null_mut(), |j| j.as_ptr() as *mut c_void);
        assert_eq!(
            mcpc_oauth_set_assertion_callback(a, Some(give_assertion), ud, None),
            Status::MCPC_OK
        );
    });
    (st, msg)
}

#[test]
fn an_assertion_callback_with_none_is_login_required_and_asks_nothing() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let (st, msg) = connect_jwt_bearer(&m.url, None);
    assert_eq!(st, Status::MCPC_ERR_LOGIN_REQUIRED, "{msg}");
    assert_eq!(CALLS.load(Ordering::SeqCst), 1);
    assert_eq!(a.count("/token"), 0, "a token request was made without an assertion");
    // The same server with an assertion: it is what the token request carries.
    let (st, msg) = connect_jwt_bearer(&m.url, Some(c"the-workload-jwt"));
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    let t = a.seen().into_iter().find(|s| s.path() == "/token").unwrap();
    assert_eq!(
        t.form("grant_type").as_deref(),
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer")
    );
    assert_eq!(t.form("assertion").as_deref(), Some("the-workload-jwt"));
    token_stayed(&[&a]);
}

/// Blocks until the test lets it go, then gives no assertion.
unsafe extern "C" fn hang_assertion(_ud: *mut c_void, _buf: *mut c_char, _len: usize) -> i32 {
    let (lock, cv) = &HANG;
    let mut state = lock.lock().unwrap();
    state.0 = true;
    cv.notify_all();
    while !state.1 {
        state = cv.wait(state).unwrap();
    }
    state.0 = false;
    cv.notify_all();
    1
}
/// (the callback is running, the test let it go)
static HANG: (Mutex<(bool, bool)>, Condvar) = (Mutex::new((false, false)), Condvar::new());

#[test]
fn a_hanging_assertion_callback_ends_with_the_timeout_and_nothing_waits_on_it() {
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let (st, msg, c) = connect_within(&m.url, 1000, |o| unsafe {
        assert_eq!(mcpc_oauth_set_grant(o, MCPC_OAUTH_JWT_BEARER), Status::MCPC_OK);
        let cb = mcpc_oauth_set_assertion_callback(o, Some(hang_assertion), std::ptr::null_mut(), None);
        assert_eq!(cb, Status::MCPC_OK);
    });
    assert_eq!(st, Status::MCPC_ERR_TIMEOUT, "{msg}");
    assert!(c.is_none());
    assert_eq!(a.count("/token"), 0, "a token request was made without an assertion");
    // The callback is still blocked in the host: let it go and see it return.
    let (lock, cv) = &HANG;
    let mut state = lock.lock().unwrap();
    assert!(state.0, "the timeout came before the callback was called");
    state.1 = true;
    cv.notify_all();
    while state.0 {
        state = cv.wait(state).unwrap();
    }
    drop(state);
    // Its late "none" is nobody's answer: a new client with an assertion connects.
    let (st, msg) = connect_jwt_bearer(&m.url, Some(c"the-workload-jwt"));
    assert_eq!(st, Status::MCPC_OK, "{msg}");
}
