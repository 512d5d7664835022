//! The fuzz targets of what the network brings in from outside: a proxy's answer
//! to `CONNECT`, the proxy settings from the environment and the options, the
//! HTTP+SSE transport's `endpoint` event, and an HTTP/2 server's reply.

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
