//! Which endpoints the HTTP transport may talk to: `https://` anywhere, `http://`
//! only on loopback. Decided before any connection is made.

use std::net::IpAddr;

use url::Url;

use crate::error::{quote, Error, Result, Status};

/// True for 127.0.0.0/8, ::1 (and IPv4-mapped loopback), and the name `localhost`.
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.');
            d.eq_ignore_ascii_case("localhost") || d.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        None => false,
    }
}

/// Parses and checks an MCP endpoint URL.
pub fn check_endpoint(text: &str) -> Result<Url> {
    let mut url = Url::parse(text).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("not a valid URL ({e}): {}", quote(&redact_str(text))),
        )
    })?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            "the URL carries credentials; pass them as a header or bearer token instead",
        ));
    }
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(&url) => {}
        "http" => {
            return Err(Error::new(
                Status::MCPC_ERR_INSECURE_URL,
                format!(
                    "refusing plain http:// to {}: only loopback hosts may use http; use https://",
                    redact(&url)
                ),
            ))
        }
        other => {
            return Err(Error::new(
                Status::MCPC_ERR_INSECURE_URL,
                format!(
                    "unsupported URL scheme {}: use https:// (or http:// on loopback)",
                    quote(other)
                ),
            ))
        }
    }
    if url.host().is_none() {
        return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "the URL has no host"));
    }
    url.set_fragment(None);
    Ok(url)
}

/// Same scheme, host and port.
pub fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// The URL for messages: scheme, host, port and path; never credentials or query.
pub fn redact(url: &Url) -> String {
    let mut s = format!("{}://{}", url.scheme(), url.host_str().unwrap_or(""));
    if let Some(port) = url.port() {
        s.push_str(&format!(":{port}"));
    }
    s.push_str(url.path());
    s
}

fn redact_str(text: &str) -> String {
    let cut = text.find(['?', '#']).unwrap_or(text.len());
    let text = &text[..cut];
    match (text.find("://"), text.find('@')) {
        (Some(s), Some(at)) if at > s => format!("{}{}", &text[..s + 3], &text[at + 1..]),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_anywhere_http_only_on_loopback() {
        for ok in [
            "https://example.com/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://127.4.5.6/mcp",
            "http://[::1]:9/mcp",
            "http://localhost/mcp",
            "http://LOCALHOST./mcp",
            "https://10.0.0.1/mcp",
        ] {
            assert!(check_endpoint(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.com/mcp",
            "http://10.0.0.1/mcp",
            "http://192.168.1.1/mcp",
            "http://169.254.169.254/latest",
            "http://[::2]/mcp",
            "http://localhost.example.com/mcp",
            "http://127.0.0.1.nip.io/mcp",
            "ftp://127.0.0.1/mcp",
            "file:///etc/passwd",
        ] {
            assert_eq!(
                check_endpoint(bad).unwrap_err().status,
                Status::MCPC_ERR_INSECURE_URL,
                "{bad}"
            );
        }
        for bad in ["not a url", "https://user:secret@example.com/mcp", "https://"] {
            let e = check_endpoint(bad).unwrap_err();
            assert!(!e.message.contains("secret"), "{}", e.message);
        }
    }

    #[test]
    fn origins_and_redaction() {
        let a = Url::parse("https://h.example:443/mcp?token=x").unwrap();
        let b = Url::parse("https://h.example/other").unwrap();
        let c = Url::parse("http://h.example/mcp").unwrap();
        assert!(same_origin(&a, &b));
        assert!(!same_origin(&a, &c));
        assert_eq!(redact(&a), "https://h.example/mcp");
        assert_eq!(redact_str("https://u:p@h/x?q=1"), "https://h/x");
    }
}
