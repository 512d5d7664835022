//! OAuth against authorization servers and servers that misbehave, through the C
//! ABI: what the conformance suite does not cover. Each test starts its own
//! loopback servers (an MCP server that wants a token, an authorization server,
//! and where it matters a third origin), plays the user in the authorize
//! callback, and checks the status, what each server saw, and that the access
//! token reached no one but the MCP server.
#![allow(dead_code)] // parts of the shared harness serve other test files

include!("auth_support/harness.rs");

use std::sync::Condvar;

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
        t.strip_prefix("secret-token-")
            .and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| r.load(Ordering::SeqCst) != n)
    };
    let gate = bearer(valid);
    // Only the 16 calls count towards the hold: a notification that connect left
    // in flight may be refused too, and counting it would let the refresh answer
    // before every call went out.
    let counted: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
        let refused = gate(r, base);
        let token = r.headers.get("authorization").map(String::as_str);
        if refused.is_some() && token == Some("Bearer secret-token-0") && r.body.contains("\"tools/call\"") {
            *counts.refused.0.lock().unwrap() += 1;
            counts.refused.1.notify_all();
        }
        refused
    });
    let m = mcp_server(a.url.clone(), counted, None);
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
