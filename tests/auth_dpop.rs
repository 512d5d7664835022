//! DPoP and signing keys through the C ABI, against loopback servers that check
//! what the conformance suite does not: proofs signed by the host's signer,
//! servers that refuse a proof (replayed, or out of their clock's window), nonces
//! that never settle, and `private_key_jwt` assertions signed by the host. Every
//! proof and assertion is verified with jsonwebtoken, not with mcpc's own code.
#![allow(dead_code)] // parts of the shared harness serve other test files

include!("auth_support/harness.rs");

use std::collections::HashSet;

use base64::Engine;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{DecodePrivateKey, EncodePublicKey};

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

/// The claims of the DPoP proof that goes with `r`'s DPoP-bound token, checked to be
/// for this request (htm, htu, and ath for the token), its jti added to `jtis`; the
/// 401 that starts authorization when `r` has no token.
fn bound_proof(r: &Seen, base: &str, jtis: &Mutex<Vec<String>>) -> Result<serde_json::Value, Reply> {
    let Some(auth) = r.headers.get("authorization") else {
        return Err(unauthorized(base));
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
    jtis.lock().unwrap().push(c["jti"].as_str().unwrap().to_string());
    Ok(c)
}

#[test]
fn a_dpop_bound_token_goes_only_with_a_fresh_proof() {
    let (a, _) = auth_server(Fault::Dpop);
    let jtis = Arc::new(Mutex::new(Vec::new()));
    let seen = jtis.clone();
    let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| bound_proof(r, base, &seen).err());
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

/// The JWK in a proof's header, as (x, y).
fn proof_key(proof: &str) -> (String, String) {
    let jwk = jsonwebtoken::decode_header(proof).unwrap().jwk.unwrap();
    let jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(ec) = jwk.algorithm else {
        panic!("not an EC key")
    };
    (ec.x, ec.y)
}

/// How the test's signer answers.
#[derive(Clone, Copy, PartialEq)]
enum Signs {
    Raw,
    Der,
    /// With another key than the public key it was given with.
    WrongKey,
    Fails,
}

/// A host's signer: a key mcpc never sees, and how many times it signed.
struct HostKey {
    key: SigningKey,
    other: SigningKey,
    signs: Signs,
    calls: AtomicUsize,
}

fn fresh_key() -> SigningKey {
    let rng = ring::rand::SystemRandom::new();
    let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
    let der = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
    SigningKey::from_pkcs8_der(der.as_ref()).unwrap()
}

impl HostKey {
    fn new(signs: Signs) -> Arc<HostKey> {
        Arc::new(HostKey {
            key: fresh_key(),
            other: fresh_key(),
            signs,
            calls: AtomicUsize::new(0),
        })
    }

    fn public_pem(&self) -> CString {
        CString::new(self.key.verifying_key().to_public_key_pem(Default::default()).unwrap()).unwrap()
    }

    /// The public key's JWK coordinates, as a proof's header must carry them.
    fn xy(&self) -> (String, String) {
        let p = self.key.verifying_key().to_encoded_point(false);
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        (b64(p.x().unwrap()), b64(p.y().unwrap()))
    }

    /// Hands the signer to mcpc with `set` (one of the signer setters); the
    /// userdata holds a reference, dropped by `userdata_free`.
    unsafe fn give(
        self: &Arc<Self>,
        set: unsafe extern "C" fn(
            *mut mcpc_oauth_t,
            *const c_char,
            mcpc::ffi::signer::mcpc_sign_cb,
            *mut c_void,
            mcpc::ffi::userdata::mcpc_free_cb,
        ) -> Status,
        a: *mut mcpc_oauth_t,
    ) {
        let ud = Arc::into_raw(self.clone()) as *mut c_void;
        let st = unsafe { set(a, self.public_pem().as_ptr(), Some(host_sign), ud, Some(drop_host_key)) };
        assert_eq!(st, Status::MCPC_OK);
    }
}

unsafe extern "C" fn host_sign(ud: *mut c_void, data: *const u8, len: usize, sig: *mut u8, sig_len: *mut usize) -> i32 {
    let k = unsafe { &*(ud as *const HostKey) };
    k.calls.fetch_add(1, Ordering::SeqCst);
    let data = unsafe { std::slice::from_raw_parts(data, len) };
    let out: Vec<u8> = match k.signs {
        Signs::Fails => return 1,
        Signs::Raw => Signature::to_vec(&k.key.sign(data)),
        Signs::Der => {
            let s: Signature = k.key.sign(data);
            s.to_der().as_bytes().to_vec()
        }
        Signs::WrongKey => Signature::to_vec(&k.other.sign(data)),
    };
    assert!(out.len() <= unsafe { *sig_len });
    unsafe {
        std::ptr::copy_nonoverlapping(out.as_ptr(), sig, out.len());
        *sig_len = out.len();
    }
    0
}

unsafe extern "C" fn drop_host_key(ud: *mut c_void) {
    drop(unsafe { Arc::from_raw(ud as *const HostKey) });
}

#[test]
fn a_host_signer_signs_every_proof_with_the_key_it_named() {
    use mcpc::ffi::signer::mcpc_oauth_set_dpop_signer;
    for signs in [Signs::Raw, Signs::Der] {
        let key = HostKey::new(signs);
        let (a, _) = auth_server(Fault::Dpop);
        let keys = Arc::new(Mutex::new(Vec::new()));
        let seen = keys.clone();
        let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
            let auth = r.headers.get("authorization")?;
            assert!(auth.starts_with("DPoP "), "a DPoP-bound token is never sent as bearer");
            let proof = &r.headers["dpop"];
            proof_claims(proof);
            seen.lock().unwrap().push(proof_key(proof));
            let _ = base;
            None
        });
        let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
            if !r.headers.contains_key("authorization") {
                return Some(unauthorized(base));
            }
            gate(r, base)
        });
        let m = mcp_server(a.url.clone(), gate, None);
        let (st, msg, c) = connect_as(&m.url, &host(User::Approve), false, |o| unsafe {
            key.give(mcpc_oauth_set_dpop_signer, o)
        });
        assert_eq!(st, Status::MCPC_OK, "{msg}");
        for _ in 0..3 {
            assert_eq!(call(c.as_ref().unwrap()).0, Status::MCPC_OK);
        }
        let t = a.seen().into_iter().find(|s| s.path() == "/token").unwrap();
        assert_eq!(proof_key(&t.headers["dpop"]), key.xy());
        let keys = keys.lock().unwrap();
        assert!(keys.len() >= 4 && keys.iter().all(|k| *k == key.xy()));
        assert!(key.calls.load(Ordering::SeqCst) >= 5);
        // The client and the settings hold the userdata until the client is freed.
        drop(c);
        assert_eq!(Arc::strong_count(&key), 1, "userdata_free did not run");
    }
}

#[test]
fn a_signer_that_fails_or_signs_with_another_key_sends_nothing() {
    use mcpc::ffi::signer::mcpc_oauth_set_dpop_signer;
    for (signs, want) in [
        (Signs::Fails, "gave no signature"),
        (Signs::WrongKey, "does not verify"),
    ] {
        let key = HostKey::new(signs);
        let (a, _) = auth_server(Fault::Dpop);
        let m = mcp_server(a.url.clone(), bearer(issued), None);
        let (st, msg, _) = connect_as(&m.url, &host(User::Approve), false, |o| unsafe {
            key.give(mcpc_oauth_set_dpop_signer, o)
        });
        assert_eq!(st, Status::MCPC_ERR_AUTH, "{msg}");
        assert!(msg.contains(want), "{msg}");
        assert_eq!(a.count("/token"), 0, "a token request went without a good proof");
        assert!(key.calls.load(Ordering::SeqCst) >= 1);
    }
}

#[test]
fn a_refused_proof_is_never_sent_again() {
    // The server takes each nonce once and refuses a proof whose jti it has seen:
    // every call's first proof is refused, and the one that follows must be new.
    let (a, _) = auth_server(Fault::Dpop);
    let state = Arc::new(Mutex::new((HashSet::<String>::new(), 0usize, 0usize)));
    let s = state.clone();
    let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
        if !r.headers.contains_key("authorization") {
            return Some(unauthorized(base));
        }
        let c = proof_claims(&r.headers["dpop"]);
        let mut s = s.lock().unwrap();
        let jti = c["jti"].as_str().unwrap().to_string();
        if !s.0.insert(jti) {
            let mut rep = json(401, serde_json::json!({"error": "invalid_dpop_proof"}));
            rep.headers.push((
                "www-authenticate".into(),
                "DPoP error=\"invalid_dpop_proof\", error_description=\"replayed\"".into(),
            ));
            return Some(rep);
        }
        let current = format!("nonce-{}", s.1);
        if c["nonce"] == current.as_str() {
            s.1 += 1; // spent
            return None;
        }
        s.2 += 1;
        let mut rep = json(401, serde_json::json!({"error": "use_dpop_nonce"}));
        rep.headers
            .push(("www-authenticate".into(), "DPoP error=\"use_dpop_nonce\"".into()));
        rep.headers.push(("dpop-nonce".into(), current));
        Some(rep)
    });
    let m = mcp_server(a.url.clone(), gate, None);
    let (st, msg, c) = connect(&m.url, &host(User::Approve), false);
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    for _ in 0..5 {
        let (st, msg) = call(c.as_ref().unwrap());
        assert_eq!(st, Status::MCPC_OK, "{msg}");
    }
    let s = state.lock().unwrap();
    assert!(s.2 >= 6, "only {} refusals: the test did not refuse each call", s.2);
}

/// A server whose clock runs ten minutes ahead of this machine's: it refuses a
/// proof whose `iat` is more than a minute off its clock, unless (`nonces`) the
/// proof carries the nonce it gave, which then stands for freshness (RFC 9449
/// §11.1). The count of requests it refused.
fn skewed_server(a: &Server, nonces: bool) -> (Server, Arc<AtomicUsize>) {
    let refused = Arc::new(AtomicUsize::new(0));
    let n = refused.clone();
    let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
        if !r.headers.contains_key("authorization") {
            return Some(unauthorized(base));
        }
        let c = proof_claims(&r.headers["dpop"]);
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            + 600;
        let fresh = c["iat"].as_u64().unwrap().abs_diff(clock) <= 60;
        if fresh || (nonces && c["nonce"] == "the-servers-nonce") {
            return None;
        }
        n.fetch_add(1, Ordering::SeqCst);
        let error = if nonces { "use_dpop_nonce" } else { "invalid_dpop_proof" };
        let mut rep = json(401, serde_json::json!({"error": error}));
        rep.headers
            .push(("www-authenticate".into(), format!("DPoP error=\"{error}\"")));
        if nonces {
            rep.headers.push(("dpop-nonce".into(), "the-servers-nonce".into()));
        }
        Some(rep)
    });
    (mcp_server(a.url.clone(), gate, None), refused)
}

#[test]
fn a_server_with_a_skewed_clock_is_reached_through_its_nonce() {
    let (a, _) = auth_server(Fault::Dpop);
    let (m, refused) = skewed_server(&a, true);
    let (st, msg, c) = connect(&m.url, &host(User::Approve), false);
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    for _ in 0..3 {
        assert_eq!(call(c.as_ref().unwrap()).0, Status::MCPC_OK);
    }
    assert_eq!(
        refused.load(Ordering::SeqCst),
        1,
        "the nonce was not kept for later requests"
    );
}

#[test]
fn a_server_with_a_skewed_clock_and_no_nonce_is_a_bounded_auth_error() {
    let (a, _) = auth_server(Fault::Dpop);
    let (m, refused) = skewed_server(&a, false);
    let (st, msg, _) = connect(&m.url, &host(User::Approve), false);
    assert_eq!(st, Status::MCPC_ERR_AUTH, "{msg}");
    assert!(msg.contains("invalid_dpop_proof"), "{msg}");
    assert!(
        refused.load(Ordering::SeqCst) <= 6,
        "{} tries",
        refused.load(Ordering::SeqCst)
    );
}

#[test]
fn private_key_jwt_assertions_are_signed_by_the_hosts_signer() {
    use mcpc::ffi::signer::mcpc_oauth_set_client_signer;
    let key = HostKey::new(Signs::Raw);
    let (a, _) = auth_server(Fault::None);
    let m = mcp_server(a.url.clone(), bearer(issued), None);
    let (st, msg, c) = connect_with(&m.url, |o| unsafe {
        let id = CString::new("the-client").unwrap();
        assert_eq!(mcpc_oauth_set_client(o, id.as_ptr(), std::ptr::null()), Status::MCPC_OK);
        assert_eq!(mcpc_oauth_set_grant(o, MCPC_OAUTH_CLIENT_CREDENTIALS), Status::MCPC_OK);
        key.give(mcpc_oauth_set_client_signer, o);
    });
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    assert_eq!(call(c.as_ref().unwrap()).0, Status::MCPC_OK);
    let t = a.seen().into_iter().find(|s| s.path() == "/token").unwrap();
    assert_eq!(
        t.form("client_assertion_type").as_deref(),
        Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
    );
    let jwt = t.form("client_assertion").unwrap();
    let (x, y) = key.xy();
    let dk = jsonwebtoken::DecodingKey::from_ec_components(&x, &y).unwrap();
    let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
    v.set_audience(&[a.url.as_str()]);
    let claims = jsonwebtoken::decode::<serde_json::Value>(&jwt, &dk, &v).unwrap().claims;
    assert_eq!(claims["iss"], "the-client");
    assert_eq!(claims["sub"], "the-client");
    assert_eq!(key.calls.load(Ordering::SeqCst), 1);
    assert!(t.form("client_secret").is_none());
}

/// Over HTTP/2 (prior knowledge, h2c): the 401 that starts authorization, the
/// DPoP proofs, a nonce the server asks for and the calls all go on the HTTP/2
/// connection, each proof for this request (htm, htu, ath) and never used twice;
/// the authorization server is asked over HTTP/1.1.
#[test]
fn dpop_and_its_nonce_over_http2() {
    let (a, _) = auth_server(Fault::Dpop);
    let jtis = Arc::new(Mutex::new(Vec::new()));
    let seen = jtis.clone();
    let gate: Gatekeeper = Arc::new(move |r: &Seen, base: &str| {
        let c = match bound_proof(r, base, &seen) {
            Ok(c) => c,
            Err(refused) => return Some(refused),
        };
        if c["nonce"] != "h2-nonce" {
            let mut rep = json(401, serde_json::json!({"error": "use_dpop_nonce"}));
            rep.headers
                .push(("www-authenticate".into(), "DPoP error=\"use_dpop_nonce\"".into()));
            rep.headers.push(("dpop-nonce".into(), "h2-nonce".into()));
            return Some(rep);
        }
        None
    });
    let m = mcp_server(a.url.clone(), gate, None);
    let prior_knowledge = |o| unsafe {
        assert_eq!(
            mcpc_options_set_http_version(o, MCPC_HTTP_VERSION_2_PRIOR_KNOWLEDGE),
            Status::MCPC_OK
        );
    };
    let h = host(User::Approve);
    let (st, msg, c) = connect_using(&m.url, 10_000, prior_knowledge, oauth_of(&h, false, |_| {}));
    assert_eq!(st, Status::MCPC_OK, "{msg}");
    for _ in 0..3 {
        assert_eq!(call(c.as_ref().unwrap()), (Status::MCPC_OK, "ok".to_string()));
    }
    drop(c);
    let mcp: Vec<Seen> = m.seen().into_iter().filter(|s| s.path() == "/mcp").collect();
    assert!(mcp.iter().all(|s| s.version == "2"), "every MCP request over HTTP/2");
    let with_nonce = mcp.iter().filter(|s| {
        s.headers
            .get("dpop")
            .is_some_and(|p| proof_claims(p)["nonce"] == "h2-nonce")
    });
    assert!(with_nonce.count() >= 4, "the nonce kept once given");
    assert!(a.seen().iter().all(|s| s.version == "1.1"));
    let jtis = jtis.lock().unwrap();
    let unique: HashSet<_> = jtis.iter().collect();
    assert_eq!(unique.len(), jtis.len(), "a proof was used twice");
    token_stayed(&[&a]);
}
