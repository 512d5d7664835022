//! Why an exchange failed, in the words both HTTP versions use.

use std::io;

/// Why an exchange failed.
#[derive(Debug)]
pub enum Failure {
    /// Name lookup or TCP connect (a timeout is `io::ErrorKind::TimedOut`).
    Connect(io::Error),
    /// The TLS handshake (a certificate that is not trusted, for example).
    Tls(io::Error),
    /// HTTP on an open connection: reading or writing it failed, or the server's
    /// response broke HTTP/1.1.
    Http(io::Error),
    /// The proxy: not reached, or it would not open the tunnel (its status, when it
    /// answered one: 407 wants credentials). The message names the proxy, never its
    /// credentials.
    Proxy(String, Option<u16>),
}

impl Failure {
    pub fn is_tls(&self) -> bool {
        matches!(self, Failure::Tls(_))
    }

    /// No connection (nor tunnel) within the connect timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(self, Failure::Connect(e) if e.kind() == io::ErrorKind::TimedOut)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The innermost cause says the most ("connection refused", "UnknownIssuer").
        let (mut text, mut source) = match self {
            Failure::Proxy(m, _) => return f.write_str(m),
            Failure::Connect(e) | Failure::Tls(e) | Failure::Http(e) => (
                e.to_string(),
                e.get_ref().map(|e| e as &(dyn std::error::Error + 'static)),
            ),
        };
        while let Some(s) = source {
            text = s.to_string();
            source = s.source();
        }
        f.write_str(&text)
    }
}
