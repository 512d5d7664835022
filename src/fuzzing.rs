//! Entry points for the fuzz targets (`fuzz/`), also replayed over their corpora by
//! `tests/fuzz_corpus.rs` in the normal test run, so a crash once found stays fixed.
//! Each takes arbitrary bytes and panics only when an invariant breaks.

use serde_json::value::RawValue;

use crate::framing::LineFramer;
use crate::sse::SseParser;

/// Split points from the input's first bytes; the rest is the stream.
fn split(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let n = (n % 4) as usize;
    if rest.len() < n {
        return (Vec::new(), rest);
    }
    let (cuts, stream) = rest.split_at(n);
    let mut points: Vec<usize> = cuts.iter().map(|&c| (c as usize * stream.len()) / 255).collect();
    points.sort_unstable();
    (points, stream)
}

fn chunks<'a>(stream: &'a [u8], points: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    for &p in points {
        out.push(&stream[at..p]);
        at = p;
    }
    out.push(&stream[at..]);
    out
}

/// The line framer gives the same lines (or the same error) however the stream is split.
pub fn framer(data: &[u8]) {
    let (points, stream) = split(data);
    let run = |parts: &[&[u8]]| {
        let mut f = LineFramer::new(64);
        let mut lines = Vec::new();
        for p in parts {
            if f.feed(p, |l, _| lines.push(l.to_vec())).is_err() {
                return Err(());
            }
        }
        Ok(lines)
    };
    let whole = run(&[stream]);
    let parts = run(&chunks(stream, &points));
    assert_eq!(whole, parts, "framer output depends on the split");
}

/// The SSE parser gives the same events however the stream is split.
pub fn sse(data: &[u8]) {
    let (points, stream) = split(data);
    let run = |parts: &[&[u8]], told: &[usize]| {
        let mut p = SseParser::with_long_line(256, 8);
        let mut events = Vec::new();
        for (i, c) in parts.iter().enumerate() {
            p.expect(told.get(i).map_or(0, |t| t * 37));
            if p.feed(c, |e| events.push(e)).is_err() {
                return Err(events.len());
            }
        }
        Ok((events, p.last_id().map(str::to_string), p.retry_ms()))
    };
    let whole = run(&[stream], &[]);
    let parts = chunks(stream, &points);
    // Told at each piece a number of bytes to follow, true or not (from the split
    // points): lines of 8 bytes and more grow by it, and what is read never changes.
    for told in [&[][..], &points[..]] {
        let pieces = run(&parts, told);
        match (&whole, &pieces) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "SSE events depend on the split"),
            // The cap may trip at a different event when lines arrive in pieces, never not at all.
            (Err(_), Err(_)) => {}
            _ => panic!("SSE cap result depends on the split: {whole:?} vs {pieces:?}"),
        }
    }
}

/// An HTTP/1.1 response reads the same (status, fields, body, reuse, what follows
/// it) or fails the same way, however the stream is split into reads.
pub fn http1(data: &[u8]) {
    let (points, stream) = split(data);
    let whole = crate::transport::h1::read_from(&[stream]);
    let parts = crate::transport::h1::read_from(&chunks(stream, &points));
    assert_eq!(whole, parts, "the response read depends on the split");
}

/// Decoding any bytes as JSON-RPC never panics. A response whose result is valid
/// JSON decodes exactly as serde alone decodes it (the usual shape is read without
/// serde, and its result checked only by its reader). A response that the router
/// reads in one pass as a call result is a response to the same id, whose result
/// serde reads the same.
pub fn jsonrpc(data: &[u8]) {
    use crate::jsonrpc::{decode, decode_parsed, Incoming};
    if let Some((id, rest)) = crate::jsonrpc::response_head(data) {
        one_pass_readings_agree(data, id, rest);
    }
    // Also handed over whole: the result kept as a slice reads the same.
    let owner = bytes::Bytes::copy_from_slice(data);
    if let Ok(Incoming::Response {
        outcome: Ok(shared), ..
    }) = crate::jsonrpc::decode_in(&owner, Some(&owner))
    {
        let Ok(Incoming::Response {
            outcome: Ok(copied), ..
        }) = decode(data)
        else {
            panic!("decoded whole, not copied")
        };
        assert_eq!(shared.get(), copied.get(), "the kept result depends on how it is kept");
    }
    let Ok(Incoming::Response { id, outcome: Ok(json) }) = decode(data) else {
        return;
    };
    let text = json.get().to_string();
    if crate::result::ResultJson::from(json).into_raw().is_err() {
        return;
    }
    match decode_parsed(std::str::from_utf8(data).expect("decoded, so UTF-8")) {
        Ok(Incoming::Response {
            id: id2,
            outcome: Ok(json2),
        }) => assert_eq!((id, text.as_str()), (id2, json2.get()), "the two readings differ"),
        other => panic!("serde reads the message otherwise: {other:?}"),
    }
}

/// What the router reads in one pass (see `jsonrpc::response_head`), as a call
/// result or as a page, is a response to the same id, whose result serde reads the
/// same.
fn one_pass_readings_agree(data: &[u8], id: i64, rest: std::ops::Range<usize>) {
    use crate::jsonrpc::{decode_parsed, Incoming};
    // The message handed over whole, as a large HTTP body is: a result that is most
    // of it is kept as a slice of it.
    let owner = bytes::Bytes::copy_from_slice(data);
    let Ok(rest) = std::str::from_utf8(&owner[rest]) else {
        return;
    };
    let (call, page) = (
        crate::result::call_result_read(rest, Some(&owner)),
        crate::result::page_read(rest),
    );
    if let Some(call) = &call {
        let copied = crate::result::call_result_read(rest, None).expect("read either way");
        assert_eq!(&*call.raw, &*copied.raw, "the kept result depends on how it is kept");
    }
    if call.is_none() && page.is_none() {
        return;
    }
    let text = std::str::from_utf8(data).expect("read in one pass, so UTF-8");
    let Ok(Incoming::Response {
        id: id2,
        outcome: Ok(json),
    }) = decode_parsed(text)
    else {
        panic!("read in one pass, but serde reads no result in {text:?}")
    };
    assert_eq!(id, id2, "the two readings' ids differ");
    if let Some(read) = call {
        let parsed = crate::result::parse_call_result(json.into()).expect("serde reads the call result too");
        assert_eq!(
            (&*read.raw, read.structured(), read.is_error, read.text_blocks()),
            (&*parsed.raw, parsed.structured(), parsed.is_error, parsed.text_blocks()),
            "the two readings of a call's response differ"
        );
    } else if let Some(read) = page {
        let parsed = crate::result::parse_page(json.get());
        let shown = |p: &crate::result::PageRead| match p {
            Ok(p) => Ok((
                p.tools
                    .iter()
                    .map(|t| (t.name.clone(), t.json().to_string()))
                    .collect::<Vec<_>>(),
                p.next_cursor.clone(),
            )),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(
            shown(&read),
            shown(&parsed),
            "the two readings of a page's response differ"
        );
    }
}

/// The scan's check of JSON agrees with serde's, up to the depth it follows, and so
/// do its readings of a page and a call result (of any text: they check the text as
/// they read) and its unescaping of a string;
/// normalising any JSON as a tools/call result, a tools/list page, a discover result
/// or a result type never panics; a normalised result's texts come from its JSON; a
/// tool's name scanned for is the name serde reads.
pub fn results(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let end = crate::scan::checked_value_end(data, 0).filter(|&end| crate::scan::skip_ws(data, end) == data.len());
    let scanned = end.is_some();
    let parsed = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    // Brackets counted anywhere bound the depth from above.
    let shallow = data.iter().filter(|&&c| c == b'[' || c == b'{').count() <= crate::scan::CHECKED_DEPTH as usize;
    assert!(
        scanned == parsed || (!scanned && !shallow),
        "the scan finds {text:?} {}valid, serde {}valid",
        if scanned { "" } else { "in" },
        if parsed { "" } else { "in" }
    );
    // The scans that read a page and a call result in one pass agree with serde.
    if let Some(parts) = crate::result::page_scanned(text) {
        assert_eq!(
            Some(parts),
            crate::result::page_parsed(text).ok(),
            "the two readings of a page differ"
        );
    }
    if let Some(fields) = crate::result::call_fields_scanned(text) {
        assert_eq!(
            Some(fields),
            crate::result::call_fields_parsed(text).ok(),
            "the two readings of a call result differ"
        );
    }
    // Unescaping a string's contents gives what serde gives, or fails where it fails.
    if let (Some(b'"'), Some(end)) = (data.first(), end) {
        let ours = crate::unescape::unescape_nul(&text[1..end - 1]);
        let serde = serde_json::from_str::<String>(text).ok().map(|t| t + "\0");
        assert_eq!(ours, serde, "the two unescapings of {text:?} differ");
    }
    let Ok(raw) = RawValue::from_string(text.to_string()) else {
        return;
    };
    let _ = crate::result::parse_page(raw.get());
    // A tool's name is scanned for, not parsed: both ways agree on valid JSON.
    assert_eq!(
        crate::result::tool_name(raw.get()).ok(),
        crate::result::tool_name_parsed(raw.get()).ok(),
        "the two readings of a tool's name differ"
    );
    let _ = crate::protocol::result_kind(raw.get());
    let _ = crate::protocol::accept_discover(raw.clone(), "discover");
    let _ = crate::protocol::accept_initialize(raw.clone(), "initialize");
    if let Ok(r) = crate::result::parse_call_result(raw.into()) {
        assert!(r.text_nul().ends_with('\0'));
        assert!(r.text_blocks().iter().all(|t| t.ends_with('\0')));
    }
}

/// The URL policy never panics, and never lets plain http reach a non-loopback host.
pub fn url_policy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(url) = crate::url_policy::check_endpoint(text) {
        assert!(url.scheme() == "https" || crate::url_policy::is_loopback(&url), "{url}");
        assert!(url.username().is_empty() && url.password().is_none());
    }
}

/// Header values come out as valid header text, and a base64 sentinel decodes back
/// to the input; schema annotations never panic.
pub fn headers(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let enc = crate::headers::encode_value(text);
        assert!(enc.bytes().all(|b| b == b' ' || (0x21..=0x7e).contains(&b)), "{enc:?}");
        if let Some(inner) = enc.strip_prefix("=?base64?").and_then(|s| s.strip_suffix("?=")) {
            use base64::Engine as _;
            let back = base64::engine::general_purpose::STANDARD
                .decode(inner)
                .expect("valid base64");
            assert_eq!(back, text.as_bytes());
        } else {
            assert_eq!(enc, text);
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            if let Ok(hs) = crate::headers::param_headers(&v) {
                let _ = crate::headers::param_values(&v, &hs);
            }
        }
    }
}

/// A proxy's answer to `CONNECT`: the tunnel opens only on a 2xx status line, the
/// client reads the answer's head and not one byte past it (the rest is the
/// tunnel's), never more than the head limit, and sends only the `CONNECT`.
pub fn tunnel(data: &[u8]) {
    use crate::transport::proxy::{connect_tunnel, TunnelError, MAX_CONNECT_HEAD};
    const AUTH: &str = "Basic dXNlcjpwYXNz";
    // The proxy: its answer to be read, and what the client writes, kept.
    let mut peer = tokio::io::join(data, Vec::new());
    let outcome = crate::drive::runtime::handle().block_on(connect_tunnel(&mut peer, "origin.example:443", Some(AUTH)));
    let asked = format!(
        "CONNECT origin.example:443 HTTP/1.1\r\nHost: origin.example:443\r\nProxy-Authorization: {AUTH}\r\n\r\n"
    );
    assert_eq!(peer.writer(), asked.as_bytes());
    let read = data.len() - peer.reader().len();
    // Where the head ends: the first empty line, after a line that ends in LF.
    let end = (1..=data.len()).find(|&i| data[..i].ends_with(b"\n\n") || data[..i].ends_with(b"\n\r\n"));
    // httparse, which reads the head, agrees on its end (for an answer that does
    // not open with empty lines, which httparse skips).
    if !data.starts_with(b"\r") && !data.starts_with(b"\n") {
        let mut fields = [httparse::EMPTY_HEADER; 100];
        if let Ok(httparse::Status::Complete(n)) = httparse::Response::new(&mut fields).parse(data) {
            if n <= MAX_CONNECT_HEAD {
                assert_eq!(end, Some(n), "httparse ends the head elsewhere");
            }
        }
    }
    match end {
        Some(end) if end <= MAX_CONNECT_HEAD => assert_eq!(read, end, "read past the head"),
        _ => {
            assert!(matches!(outcome, Err(TunnelError::Garbled(_))), "{outcome:?}");
            assert!(read <= MAX_CONNECT_HEAD);
        }
    }
    let head = &data[..read];
    match outcome {
        Ok(()) => {
            // The status line, read here without httparse: `HTTP/1.x 2xx`, after
            // any empty lines (which httparse skips, as RFC 9112 lets a reader).
            let start = head
                .iter()
                .position(|&b| b != b'\r' && b != b'\n')
                .unwrap_or(head.len());
            let line = head[start..].split(|&b| b == b'\n').next().unwrap_or_default();
            assert!(line.starts_with(b"HTTP/1."), "{:?}", String::from_utf8_lossy(line));
            let code = line.get(9..12).unwrap_or_default();
            assert!(
                line.get(8) == Some(&b' ') && code.first() == Some(&b'2'),
                "{:?}",
                String::from_utf8_lossy(line)
            );
            assert!(code.iter().all(u8::is_ascii_digit));
        }
        Err(TunnelError::Refused(code)) => assert!(!(200..300).contains(&code)),
        Err(TunnelError::Garbled(_)) => {}
        Err(TunnelError::Io(e)) => panic!("an in-memory stream failed: {e}"),
    }
}

/// True for the hosts that never go through a proxy from the environment, decided
/// here apart from the code under test: 127.0.0.0/8, ::1 (also IPv4-mapped),
/// `localhost` and its subdomains.
fn loopback_host(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(ip) => ip.octets()[0] == 127,
        url::Host::Ipv6(ip) => {
            let s = ip.segments();
            *ip == std::net::Ipv6Addr::LOCALHOST || (s[..5] == [0; 5] && s[5] == 0xffff && s[6] >> 8 == 127)
        }
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
    }
}

/// Proxy settings from the environment and the options (the input's lines: the
/// endpoint, `https_proxy`, `no_proxy`, then the explicit proxy and its no-proxy
/// list): never a panic; a loopback endpoint never goes through a proxy from the
/// environment, nor through an explicit one elsewhere; `*` spares every host; and
/// the proxy's password is in no message and no debug form.
pub fn proxy_settings(data: &[u8]) {
    use crate::transport::proxy::{no_proxy_matches, parse_proxy, ProxySettings};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut lines = text.split('\n');
    let mut next = || lines.next().unwrap_or_default();
    let (endpoint, env_proxy, env_no, explicit, explicit_no) = (next(), next(), next(), next(), next());
    // The password of the proxy URL's userinfo, when it has one worth looking for.
    let authority = env_proxy.split_once("://").map_or(env_proxy, |(_, r)| r);
    let authority = authority.split(['/', '?', '#']).next().unwrap_or_default();
    let password = authority
        .rsplit_once('@')
        .and_then(|(userinfo, _)| userinfo.split_once(':'))
        .map(|(_, p)| p)
        .filter(|p| p.len() >= 8 && p.bytes().all(|b| b.is_ascii_alphanumeric()) && env_proxy.matches(*p).count() == 1);
    let shows = |text: &str, pw: &str| match parse_proxy(text, None, "HTTPS_PROXY") {
        Ok(p) => {
            let shown = format!("{p:?}");
            assert!(!shown.contains("Basic"), "{shown}");
            shown.contains(pw)
        }
        Err(e) => e.message.contains(pw),
    };
    if let Some(pw) = password {
        // Shown only where the same text with another password shows it too: the
        // words of a message, never the input's secret.
        let other = env_proxy.replacen(pw, &"Z".repeat(pw.len()), 1);
        assert!(
            !shows(env_proxy, pw) || shows(&other, pw),
            "the password of {env_proxy:?} is shown"
        );
    } else {
        shows(env_proxy, "");
    }
    let Ok(url) = url::Url::parse(endpoint) else { return };
    let Some(host) = url.host() else { return };
    if env_no.split([',', ' ', '\t']).any(|e| e.trim() == "*") {
        assert!(no_proxy_matches(env_no, &host));
    }
    let env = |name: &str| match name {
        "https_proxy" | "http_proxy" | "all_proxy" => Some(env_proxy.to_string()),
        "no_proxy" => Some(env_no.to_string()),
        _ => None,
    };
    let from_env = ProxySettings::default().for_url_in(&url, &env);
    if loopback_host(&host) || no_proxy_matches(env_no, &host) {
        assert!(matches!(from_env, Ok(None)), "{from_env:?}");
    }
    let settings = ProxySettings {
        explicit: Some((!explicit.is_empty()).then(|| explicit.to_string())),
        no_proxy: (!explicit_no.is_empty()).then(|| explicit_no.to_string()),
        credentials: None,
    };
    if let Ok(Some(p)) = settings.for_url_in(&url, &env) {
        assert!(
            !loopback_host(&host) || loopback_host(&p.host_ref()),
            "{p:?} for {host}"
        );
        assert!(!explicit.is_empty());
    }
}

/// The `endpoint` event of the HTTP+SSE transport: never a panic, and what it
/// yields is a path for the stream's own origin (origin form), never another URL.
pub fn legacy_endpoint(data: &[u8]) {
    const BASES: [&str; 3] = [
        "http://127.0.0.1:8080/sse",
        "https://mcp.example.com/a/b/sse?x=1",
        "http://[::1]:9/",
    ];
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let base = url::Url::parse(BASES[pick as usize % BASES.len()]).expect("a valid base");
    if let Ok(uri) = crate::transport::http::legacy_endpoint(&base, text) {
        assert!(uri.scheme().is_none() && uri.authority().is_none(), "{uri}");
        assert!(uri.path().starts_with('/'), "{uri}");
        let joined = base.join(text.trim()).expect("it resolved");
        assert_eq!(joined.origin(), base.origin());
        // The very place the event named, path and query, on the stream's origin.
        assert_eq!(uri.path(), joined.path());
        assert_eq!(uri.query(), joined.query());
    }
}

/// The connections the `h2_reply` server has accepted.
static H2_ACCEPTED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The HTTP/2 server of the `h2_reply` target: its port, and what it answers.
static H2_SERVER: std::sync::OnceLock<(u16, std::sync::Mutex<std::sync::Arc<Vec<u8>>>)> = std::sync::OnceLock::new();

/// An HTTP/2 server on loopback, one for the process (a listener for each input
/// would use up the loopback ports over a long run), that answers every connection
/// with `answer` from now on: those bytes once the client's request has come, then
/// the end of its side, then it reads until the client goes. Its port.
fn h2_server(answer: Vec<u8>) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (port, current) = H2_SERVER.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let port = listener.local_addr().expect("its address").port();
        crate::drive::runtime::handle().spawn(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("a listener");
            loop {
                // An accept that fails (out of descriptors, say) is not the end.
                let Ok((mut tcp, _)) = listener.accept().await else {
                    continue;
                };
                H2_ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some((_, current)) = H2_SERVER.get() else { return };
                let answer = current.lock().unwrap_or_else(|e| e.into_inner()).clone();
                tokio::spawn(async move {
                    // Answers once the request has come whole (its stream ended), so
                    // that the answer is to a stream the client has opened.
                    crate::transport::h2::read_request(&mut tcp).await;
                    let _ = tcp.write_all(&answer).await;
                    let _ = tcp.shutdown().await;
                    let mut buf = [0u8; 4096];
                    while matches!(tcp.read(&mut buf).await, Ok(n) if n > 0) {}
                });
            }
        });
        (port, std::sync::Mutex::new(std::sync::Arc::new(Vec::new())))
    });
    *current.lock().unwrap_or_else(|e| e.into_inner()) = std::sync::Arc::new(answer);
    *port
}

/// Whatever an HTTP/2 server sends once the request has come, the request ends,
/// as a reply or an error, and does not wait past the server's end; a body read
/// whole is as long as its `content-length` (but for 204 and 304, which have none).
pub fn h2_reply(data: &[u8]) {
    use crate::transport::h2::{Client, Sent};
    use crate::transport::net::Origin;
    let port = h2_server(data.to_vec());
    let accepted = H2_ACCEPTED.load(std::sync::atomic::Ordering::SeqCst);
    let url = url::Url::parse(&format!("http://127.0.0.1:{port}/mcp")).expect("a URL");
    let origin = Origin::new(&url, None, None).expect("an origin");
    let client = Client::new(origin, std::time::Duration::from_secs(5), true, false);
    let head = format!("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: application/json\r\n");
    let rt = crate::drive::runtime::handle();
    let request = async {
        match client.send(&http::Method::POST, head.as_bytes(), b"{}").await {
            Ok(Sent::Reply(mut reply)) => {
                let length = reply.content_length();
                // 204 and 304 have no body, whatever their length says.
                let bodiless = matches!(reply.status().as_u16(), 204 | 304);
                match length {
                    // `rest` makes room for the whole length at once: its callers
                    // check the length against the message limit first, as here.
                    Some(n) if n > 1 << 20 => while let Ok(Some(_)) = reply.chunk().await {},
                    _ => {
                        if let (Ok(body), Some(n), false) = (reply.rest().await, length, bodiless) {
                            assert_eq!(body.len() as u64, n, "a body unlike its content-length");
                        }
                    }
                }
            }
            Ok(Sent::Http11(_)) => panic!("prior knowledge fell back to HTTP/1.1"),
            Err(_) => {}
        }
    };
    // The timer is made inside the runtime, which it needs.
    let ended = rt.block_on(async { tokio::time::timeout(std::time::Duration::from_secs(10), request).await });
    assert!(ended.is_ok(), "the request neither ended nor failed");
    // Whatever the outcome, it came from the server, not from a connection refused.
    assert!(
        H2_ACCEPTED.load(std::sync::atomic::Ordering::SeqCst) > accepted,
        "the server was not reached"
    );
}

/// A `WWW-Authenticate` value (an HTTP server's, so untrusted): never a panic;
/// nothing is read outside a Bearer or DPoP challenge; and a value read is the
/// input's own text wherever the input escapes nothing.
pub fn www_authenticate(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let c = crate::auth::challenge::parse(text);
    let lower = text.to_ascii_lowercase();
    if !lower.contains("bearer") && !lower.contains("dpop") {
        assert_eq!(c, Default::default(), "read outside a Bearer or DPoP challenge");
    }
    if !text.contains('\\') {
        for v in [&c.resource_metadata, &c.scope, &c.error].into_iter().flatten() {
            assert!(text.contains(v.as_str()), "{v:?} is not in {text:?}");
        }
    }
}

/// A fuzz target's entry point.
pub type Target = fn(&[u8]);

/// Every target by name, for the corpus replay.
pub const TARGETS: &[(&str, Target)] = &[
    ("framer", framer),
    ("http1", http1),
    ("sse", sse),
    ("jsonrpc", jsonrpc),
    ("results", results),
    ("url_policy", url_policy),
    ("headers", headers),
    ("tunnel", tunnel),
    ("proxy_settings", proxy_settings),
    ("legacy_endpoint", legacy_endpoint),
    ("h2_reply", h2_reply),
    ("www_authenticate", www_authenticate),
];
