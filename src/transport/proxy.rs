//! Which proxy, if any, a request to an endpoint goes through: the environment's
//! (`https_proxy`, `http_proxy`, `all_proxy`, `no_proxy`, each also upper case, as
//! curl reads them) or the caller's explicit choice, and the `CONNECT` that opens a
//! tunnel through it. Decided once per origin, before anything connects.

use std::net::IpAddr;

use base64::Engine;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use url::Url;

use crate::error::{quote, Error, Result, Status};

/// Longest `CONNECT` response head read before the proxy is given up on.
pub(crate) const MAX_CONNECT_HEAD: usize = 16 * 1024;

/// The caller's proxy settings, as the options hold them.
#[derive(Clone, Default)]
pub struct ProxySettings {
    /// None: the environment decides. Some(None): no proxy at all. Some(Some(url)):
    /// this proxy for every host outside `no_proxy`.
    pub explicit: Option<Option<String>>,
    /// The explicit no-proxy list (None: the environment's, when the proxy is too).
    pub no_proxy: Option<String>,
    /// `user:password` for Basic authentication at the proxy (overrides the URL's).
    pub credentials: Option<String>,
}

impl std::fmt::Debug for ProxySettings {
    // Never the credentials, nor a proxy URL's userinfo.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Read as `parse_proxy` reads it, so that a userinfo without a scheme is not
        // taken for one.
        let shown = |p: &str| {
            Url::parse(&with_scheme(p)).map_or_else(|_| "(not a URL)".to_string(), |u| crate::url_policy::redact(&u))
        };
        f.debug_struct("ProxySettings")
            .field("explicit", &self.explicit.as_ref().map(|p| p.as_deref().map(shown)))
            .field("no_proxy", &self.no_proxy)
            .field("credentials", &self.credentials.as_ref().map(|_| "(set)"))
            .finish()
    }
}

/// One proxy to go through.
#[derive(Clone)]
pub struct Proxy {
    pub tls: bool,
    pub host: url::Host<String>,
    pub port: u16,
    /// `host[:port]`, for the error messages and TLS with the proxy.
    pub authority: String,
    /// The `Proxy-Authorization` value, when there are credentials.
    pub authorization: Option<String>,
}

impl Proxy {
    /// The proxy's host, borrowed.
    pub fn host_ref(&self) -> url::Host<&str> {
        match &self.host {
            url::Host::Domain(d) => url::Host::Domain(d.as_str()),
            url::Host::Ipv4(ip) => url::Host::Ipv4(*ip),
            url::Host::Ipv6(ip) => url::Host::Ipv6(*ip),
        }
    }
}

impl std::fmt::Debug for Proxy {
    // Never the credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", if self.tls { "https" } else { "http" }, self.authority)
    }
}

fn invalid(msg: String) -> Error {
    Error::new(Status::MCPC_ERR_INVALID_ARG, msg)
}

/// The first of `names` set to something non-empty in `env`.
fn env_var(env: &dyn Fn(&str) -> Option<String>, names: &[&str]) -> Option<String> {
    names.iter().find_map(|n| env(n).filter(|v| !v.trim().is_empty()))
}

/// A proxy URL as written, trimmed, with `http://` before a `host:port` (curl's
/// reading of a proxy named without a scheme).
fn with_scheme(text: &str) -> String {
    let text = text.trim();
    if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}")
    }
}

/// Parses a proxy URL (`http://`, `https://`, or `host:port` meaning `http://`),
/// with `credentials` (`user:password`) overriding those in the URL. `what` names
/// where it came from, for the message.
pub fn parse_proxy(text: &str, credentials: Option<&str>, what: &str) -> Result<Proxy> {
    let with_scheme = with_scheme(text);
    let url = Url::parse(&with_scheme).map_err(|e| invalid(format!("{what}: not a proxy URL ({e})")))?;
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => {
            return Err(Error::new(
                Status::MCPC_ERR_NOT_SUPPORTED,
                format!(
                    "{what}: proxy scheme {} is not supported (http:// or https://)",
                    quote(other)
                ),
            ))
        }
    };
    let host = url
        .host()
        .ok_or_else(|| invalid(format!("{what}: the proxy URL has no host")))?
        .to_owned();
    // curl's default port for an http:// proxy named without one is 1080. `Url`
    // forgets a port that is its scheme's default, so the text says whether one was
    // written (after any userinfo and IPv6 brackets).
    let written = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
    let written = written.split(['/', '?', '#']).next().unwrap_or("");
    let written = written.rsplit_once('@').map_or(written, |(_, a)| a);
    let written = written
        .rsplit_once(']')
        .map_or(written, |(_, after)| after)
        .contains(':');
    let port = match url.port_or_known_default() {
        Some(p) if written || tls => p,
        _ => 1080,
    };
    let authority = format!("{}:{port}", url.host_str().unwrap_or_default());
    let decode = |s: &str| percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned();
    let userinfo = match credentials {
        Some(c) => Some(c.to_string()),
        None if !url.username().is_empty() || url.password().is_some() => Some(format!(
            "{}:{}",
            decode(url.username()),
            decode(url.password().unwrap_or_default())
        )),
        None => None,
    };
    let authorization = userinfo.map(|u| {
        format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(u.as_bytes())
        )
    });
    Ok(Proxy {
        tls,
        host,
        port,
        authority,
        authorization,
    })
}

/// True for 127.0.0.0/8, ::1 (and IPv4-mapped loopback), `localhost` and its
/// subdomains: never sent to a proxy from the environment.
fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v| v.is_loopback()),
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
    }
}

/// Whether `list` (curl's `NO_PROXY` syntax: comma- or space-separated host names,
/// which match themselves and their subdomains with or without a leading dot, IP
/// addresses, CIDR ranges, or `*` for everything) names `host`.
pub fn no_proxy_matches(list: &str, host: &url::Host<&str>) -> bool {
    let ip: Option<IpAddr> = match host {
        url::Host::Ipv4(ip) => Some((*ip).into()),
        url::Host::Ipv6(ip) => Some((*ip).into()),
        url::Host::Domain(_) => None,
    };
    let name = match host {
        url::Host::Domain(d) => d.trim_end_matches('.').to_ascii_lowercase(),
        _ => String::new(),
    };
    list.split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            if let Some((net, bits)) = entry.split_once('/') {
                let (Ok(net), Ok(bits), Some(ip)) = (net.parse::<IpAddr>(), bits.parse::<u32>(), ip) else {
                    return false;
                };
                return in_cidr(ip, net, bits);
            }
            let bare = entry.trim_start_matches('[').trim_end_matches(']');
            if let (Ok(e), Some(ip)) = (bare.parse::<IpAddr>(), ip) {
                return e == ip;
            }
            if name.is_empty() {
                return false;
            }
            let e = entry.trim_start_matches('.').trim_end_matches('.').to_ascii_lowercase();
            name == e || name.ends_with(&format!(".{e}"))
        })
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u32) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(n)) if bits <= 32 => {
            let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
            u32::from(a) & mask == u32::from(n) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(n)) if bits <= 128 => {
            let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
            u128::from(a) & mask == u128::from(n) & mask
        }
        _ => false,
    }
}

impl ProxySettings {
    /// The proxy for requests to `url`, or None for a direct connection.
    pub fn for_url(&self, url: &Url) -> Result<Option<Proxy>> {
        self.for_url_in(url, &|name| std::env::var(name).ok())
    }

    /// As [`for_url`](Self::for_url), with the environment read through `env`.
    pub(crate) fn for_url_in(&self, url: &Url, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Proxy>> {
        let Some(host) = url.host() else { return Ok(None) };
        let credentials = self.credentials.as_deref();
        if let Some(explicit) = &self.explicit {
            let Some(proxy) = explicit else { return Ok(None) };
            if self.no_proxy.as_deref().is_some_and(|l| no_proxy_matches(l, &host)) {
                return Ok(None);
            }
            let proxy = parse_proxy(proxy, credentials, "the proxy option")?;
            // A loopback endpoint is on this machine: only a proxy on this machine can
            // reach it, and a plain-http request to one elsewhere would cross the
            // network in clear.
            if is_loopback(&host) && !is_loopback(&proxy.host_ref()) {
                return Ok(None);
            }
            return Ok(Some(proxy));
        }
        if is_loopback(&host) {
            return Ok(None);
        }
        let no_proxy = self
            .no_proxy
            .clone()
            .or_else(|| env_var(env, &["no_proxy", "NO_PROXY"]));
        if no_proxy.as_deref().is_some_and(|l| no_proxy_matches(l, &host)) {
            return Ok(None);
        }
        let (names, what): (&[&str], &str) = if url.scheme() == "https" {
            (&["https_proxy", "HTTPS_PROXY"], "HTTPS_PROXY")
        } else {
            (&["http_proxy", "HTTP_PROXY"], "HTTP_PROXY")
        };
        if let Some(p) = env_var(env, names) {
            return parse_proxy(&p, credentials, what).map(Some);
        }
        match env_var(env, &["all_proxy", "ALL_PROXY"]) {
            Some(p) => parse_proxy(&p, credentials, "ALL_PROXY").map(Some),
            None => Ok(None),
        }
    }
}

/// Why a tunnel did not open.
#[derive(Debug)]
pub enum TunnelError {
    Io(std::io::Error),
    /// The proxy answered with this status (407: it wants credentials).
    Refused(u16),
    /// What came back was not an HTTP response.
    Garbled(String),
}

/// Asks the proxy on `io` for a tunnel to `authority` (`host:port`) and reads its
/// answer; Ok once it said 2xx, with nothing of the tunnel read.
pub async fn connect_tunnel<S>(io: &mut S, authority: &str, authorization: Option<&str>) -> Result<(), TunnelError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut head = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
    if let Some(a) = authorization {
        head.push_str(&format!("Proxy-Authorization: {a}\r\n"));
    }
    head.push_str("\r\n");
    io.write_all(head.as_bytes()).await.map_err(TunnelError::Io)?;
    io.flush().await.map_err(TunnelError::Io)?;
    // Byte by byte: what follows the head belongs to the tunnel, and a proxy speaks
    // only once asked, so nothing may be read past the head's end.
    let mut buf = Vec::with_capacity(256);
    // The head ends at its first empty line, whichever line ends (CRLF or LF).
    while !buf.ends_with(b"\n\n") && !buf.ends_with(b"\n\r\n") {
        if buf.len() >= MAX_CONNECT_HEAD {
            return Err(TunnelError::Garbled(format!(
                "the CONNECT response head is longer than {MAX_CONNECT_HEAD} bytes"
            )));
        }
        let mut b = [0u8; 1];
        if io.read(&mut b).await.map_err(TunnelError::Io)? == 0 {
            return Err(TunnelError::Garbled(
                "the proxy closed the connection before answering CONNECT".into(),
            ));
        }
        buf.push(b[0]);
    }
    let mut fields = [httparse::EMPTY_HEADER; 100];
    let mut resp = httparse::Response::new(&mut fields);
    match resp.parse(&buf) {
        Ok(httparse::Status::Complete(_)) => {}
        _ => {
            return Err(TunnelError::Garbled(
                "the answer to CONNECT is not an HTTP response".into(),
            ))
        }
    }
    match resp.code {
        Some(c) if (200..300).contains(&c) => Ok(()),
        Some(c) => Err(TunnelError::Refused(c)),
        None => Err(TunnelError::Garbled("the answer to CONNECT has no status".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(s: &str) -> url::Host<String> {
        url::Host::parse(s).unwrap()
    }

    fn matches(list: &str, h: &str) -> bool {
        let h = host(h);
        no_proxy_matches(
            list,
            &match &h {
                url::Host::Domain(d) => url::Host::Domain(d.as_str()),
                url::Host::Ipv4(ip) => url::Host::Ipv4(*ip),
                url::Host::Ipv6(ip) => url::Host::Ipv6(*ip),
            },
        )
    }

    #[test]
    fn settings_never_show_credentials() {
        let s = ProxySettings {
            explicit: Some(Some("http://user:s3cretpw@proxy.corp:3128".into())),
            no_proxy: Some("a.org".into()),
            credentials: Some("other:pa55word".into()),
        };
        let shown = format!("{s:?}");
        assert!(shown.contains("proxy.corp:3128") && shown.contains("a.org"), "{shown}");
        for secret in ["s3cretpw", "user", "pa55word", "other"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        // Without a scheme, as the environment often gives it.
        let s = ProxySettings {
            explicit: Some(Some("user:s3cretpw@proxy.corp:3128".into())),
            ..Default::default()
        };
        let shown = format!("{s:?}");
        assert!(
            shown.contains("proxy.corp:3128") && !shown.contains("user") && !shown.contains("s3cretpw"),
            "{shown}"
        );
    }

    #[test]
    fn no_proxy_lists() {
        assert!(matches("example.com", "example.com"));
        assert!(matches("example.com", "api.example.com"));
        assert!(matches(".example.com", "api.example.com"));
        assert!(matches(".example.com", "example.com"));
        assert!(!matches("example.com", "notexample.com"));
        assert!(matches("a.org, example.com", "EXAMPLE.com"));
        assert!(matches("*", "anything.net"));
        assert!(matches("10.0.0.0/8", "10.1.2.3"));
        assert!(!matches("10.0.0.0/8", "11.1.2.3"));
        assert!(matches("192.168.1.7", "192.168.1.7"));
        assert!(matches("fd00::/8", "[fd12::1]"));
        assert!(matches("[::2]", "[::2]"));
        assert!(!matches("10.0.0.0/8", "ten.example"));
        assert!(!matches("", "example.com"));
    }

    #[test]
    fn proxy_urls() {
        let p = parse_proxy("http://u%40x:p%3Aw@proxy.corp:3128", None, "t").unwrap();
        assert!(!p.tls);
        assert_eq!(p.authority, "proxy.corp:3128");
        assert_eq!(
            p.authorization.as_deref(),
            Some(format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("u@x:p:w")).as_str())
        );
        assert_eq!(format!("{p:?}"), "http://proxy.corp:3128");
        let p = parse_proxy("proxy.corp", Some("a:b"), "t").unwrap();
        assert_eq!((p.port, p.tls), (1080, false));
        assert!(p.authorization.is_some());
        let p = parse_proxy("https://proxy.corp", None, "t").unwrap();
        assert_eq!((p.port, p.tls), (443, true));
        assert_eq!(parse_proxy("http://proxy.corp:80", None, "t").unwrap().port, 80);
        assert_eq!(parse_proxy("u:p@proxy.corp:80", None, "t").unwrap().port, 80);
        assert_eq!(parse_proxy("http://u:p@proxy.corp", None, "t").unwrap().port, 1080);
        assert_eq!(parse_proxy("http://[::1]:80", None, "t").unwrap().port, 80);
        assert_eq!(parse_proxy("http://[::1]", None, "t").unwrap().port, 1080);
        assert_eq!(
            parse_proxy("socks5://p:1", None, "t").unwrap_err().status,
            Status::MCPC_ERR_NOT_SUPPORTED
        );
        assert_eq!(
            parse_proxy("http://", None, "t").unwrap_err().status,
            Status::MCPC_ERR_INVALID_ARG
        );
    }

    #[test]
    fn explicit_choice() {
        let url = Url::parse("https://mcp.example.com/mcp").unwrap();
        let off = ProxySettings {
            explicit: Some(None),
            ..Default::default()
        };
        assert!(off.for_url(&url).unwrap().is_none());
        let on = ProxySettings {
            explicit: Some(Some("http://127.0.0.1:3128".into())),
            no_proxy: Some("other.org".into()),
            credentials: None,
        };
        assert_eq!(on.for_url(&url).unwrap().unwrap().authority, "127.0.0.1:3128");
        // An explicit proxy on this machine takes loopback too, unless its list says
        // otherwise; one elsewhere never does.
        let local = Url::parse("http://127.0.0.1:9/mcp").unwrap();
        assert!(on.for_url(&local).unwrap().is_some());
        let remote = ProxySettings {
            explicit: Some(Some("http://proxy.corp:3128".into())),
            ..Default::default()
        };
        assert!(remote.for_url(&local).unwrap().is_none());
        assert!(remote.for_url(&url).unwrap().is_some());
        let skip = ProxySettings {
            no_proxy: Some("mcp.example.com".into()),
            ..on
        };
        assert!(skip.for_url(&url).unwrap().is_none());
    }

    #[test]
    fn environment_precedence() {
        let pick = |vars: &[(&str, &str)], url: &str| {
            let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            let env = move |n: &str| vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
            ProxySettings::default()
                .for_url_in(&Url::parse(url).unwrap(), &env)
                .unwrap()
                .map(|p| p.authority)
        };
        let remote = "https://mcp.example.com/mcp";
        assert_eq!(pick(&[], remote), None);
        assert_eq!(pick(&[("HTTPS_PROXY", "http://a:1")], remote).as_deref(), Some("a:1"));
        // Lower case first, as curl; then all_proxy.
        assert_eq!(
            pick(&[("HTTPS_PROXY", "http://a:1"), ("https_proxy", "http://b:2")], remote).as_deref(),
            Some("b:2")
        );
        assert_eq!(
            pick(&[("ALL_PROXY", "http://c:3"), ("https_proxy", "http://b:2")], remote).as_deref(),
            Some("b:2")
        );
        assert_eq!(pick(&[("ALL_PROXY", "http://c:3")], remote).as_deref(), Some("c:3"));
        // http_proxy is not for https endpoints, nor https_proxy for http ones.
        assert_eq!(pick(&[("http_proxy", "http://d:4")], remote), None);
        assert_eq!(
            pick(&[("https_proxy", "http://b:2")], "http://mcp.example.com/mcp"),
            None
        );
        assert_eq!(
            pick(&[("http_proxy", "http://d:4")], "http://mcp.example.com/mcp").as_deref(),
            Some("d:4")
        );
        // no_proxy, and loopback never.
        let all = [("all_proxy", "http://c:3"), ("NO_PROXY", ".example.com")];
        assert_eq!(pick(&all, remote), None);
        assert_eq!(pick(&all, "https://other.org/mcp").as_deref(), Some("c:3"));
        for local in [
            "https://127.0.0.1/mcp",
            "https://[::1]/mcp",
            "https://localhost:9/mcp",
            "https://a.localhost/",
        ] {
            assert_eq!(pick(&[("ALL_PROXY", "http://c:3")], local), None, "{local}");
        }
        // An empty variable is no proxy.
        assert_eq!(
            pick(&[("https_proxy", " "), ("HTTPS_PROXY", "http://a:1")], remote).as_deref(),
            Some("a:1")
        );
    }

    #[tokio::test]
    async fn tunnel_answers() {
        for (answer, want) in [
            ("HTTP/1.1 200 Connection established\r\n\r\n", Ok(())),
            (
                "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n",
                Err(407),
            ),
            ("garbage\r\n\r\n", Err(0)),
        ] {
            let (mut a, mut b) = tokio::io::duplex(4096);
            let server = tokio::spawn(async move {
                let mut got = vec![0u8; 4096];
                let n = b.read(&mut got).await.unwrap();
                b.write_all(answer.as_bytes()).await.unwrap();
                String::from_utf8_lossy(&got[..n]).into_owned()
            });
            let r = connect_tunnel(&mut a, "h:443", Some("Basic eA==")).await;
            let sent = server.await.unwrap();
            assert!(sent.starts_with("CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\nProxy-Authorization: Basic eA==\r\n"));
            match (r, want) {
                (Ok(()), Ok(())) => {}
                (Err(TunnelError::Refused(c)), Err(w)) => assert_eq!(c, w),
                (Err(TunnelError::Garbled(_)), Err(0)) => {}
                (r, w) => panic!("{r:?} vs {w:?}"),
            }
        }
    }
}
