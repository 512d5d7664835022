//! Connections to an origin, for HTTP/1.1 and HTTP/2 alike: TCP to it or to its
//! proxy, addresses raced (RFC 8305), the proxy's TLS (an `https://` proxy), the
//! `CONNECT` tunnel (an `https://` origin behind a proxy), then TLS with the
//! origin, end to end, with the same checks as without a proxy. An `http://`
//! origin behind a proxy is asked in absolute form instead (no tunnel), as curl
//! does. Nothing here knows HTTP beyond the tunnel's `CONNECT`.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use crate::drive::runtime::boxed_apart;
use crate::drive::socket::Tcp;
use crate::transport::proxy::{connect_tunnel, Proxy, ProxySettings, TunnelError};

mod failure;
mod stream;

pub use failure::Failure;
pub use stream::Stream;

/// Where the requests go: one origin, and how it is reached.
pub struct Origin {
    /// For connecting.
    pub host: url::Host<String>,
    pub port: u16,
    /// The `Host` header's value (HTTP/2's `:authority`).
    pub authority: String,
    pub tls: Option<TlsConnector>,
    /// The proxy it is reached through, if any.
    pub route: Option<Route>,
}

impl Origin {
    /// `url`'s origin, with TLS (with `tls`) for `https`, through `route`'s proxy
    /// when given. None if the URL has no usable host.
    pub fn new(url: &url::Url, tls: Option<Arc<rustls::ClientConfig>>, route: Option<Route>) -> Option<Origin> {
        let host = url.host()?.to_owned();
        let port = url.port_or_known_default()?;
        let mut authority = url.host_str()?.to_string();
        if let Some(p) = url.port() {
            authority.push_str(&format!(":{p}"));
        }
        http::HeaderValue::from_str(&authority).ok()?;
        Some(Origin {
            host,
            port,
            authority,
            tls: tls.map(TlsConnector::from),
            route,
        })
    }

    /// True when requests go to a proxy in absolute form (a plain-http origin
    /// behind a proxy): no tunnel, and the proxy's credentials in each request.
    pub fn via_proxy(&self) -> Option<&Route> {
        self.route.as_ref().filter(|_| self.tls.is_none())
    }
}

/// The proxy an origin is reached through, and TLS with it when it is `https://`.
#[derive(Clone)]
pub struct Route {
    pub proxy: Proxy,
    pub tls: Option<TlsConnector>,
}

impl Route {
    /// The route to `url` that `settings` choose (None: direct); `tls` makes the
    /// settings for TLS with an `https://` proxy, only when one is chosen.
    pub fn for_url(
        settings: &ProxySettings,
        url: &url::Url,
        tls: impl FnOnce() -> crate::error::Result<Arc<rustls::ClientConfig>>,
    ) -> crate::error::Result<Option<Route>> {
        let Some(proxy) = settings.for_url(url)? else {
            return Ok(None);
        };
        let tls = if proxy.tls {
            Some(TlsConnector::from(tls()?))
        } else {
            None
        };
        Ok(Some(Route { proxy, tls }))
    }
}

fn server_name(host: &url::Host<String>) -> Result<ServerName<'static>, Failure> {
    Ok(match host {
        url::Host::Ipv4(ip) => ServerName::IpAddress((*ip).into()),
        url::Host::Ipv6(ip) => ServerName::IpAddress((*ip).into()),
        url::Host::Domain(d) => {
            ServerName::try_from(d.clone()).map_err(|e| Failure::Tls(io::Error::new(io::ErrorKind::InvalidInput, e)))?
        }
    })
}

async fn tcp_to(host: &url::Host<String>, port: u16) -> io::Result<TcpStream> {
    match host {
        url::Host::Ipv4(ip) => TcpStream::connect(SocketAddr::from((*ip, port))).await,
        url::Host::Ipv6(ip) => TcpStream::connect(SocketAddr::from((*ip, port))).await,
        // Apart, as the handshake below: a name lookup is a large future.
        url::Host::Domain(d) => {
            boxed_apart(|| async move {
                let addrs: Vec<SocketAddr> = tokio::net::lookup_host((d.as_str(), port)).await?.collect();
                happy_eyeballs(interleave(addrs), ATTEMPT_DELAY).await
            })
            .await
        }
    }
}

/// How long a connection attempt has before the next address is tried beside it
/// (RFC 8305's Connection Attempt Delay; IPv6's head start).
const ATTEMPT_DELAY: Duration = Duration::from_millis(250);

/// The addresses in the order they are tried (RFC 8305, section 4): families
/// alternating, IPv6 first, each family in the resolver's order.
fn interleave(addrs: Vec<SocketAddr>) -> Vec<SocketAddr> {
    let (v6, v4): (Vec<_>, Vec<_>) = addrs.into_iter().partition(SocketAddr::is_ipv6);
    let (mut v6, mut v4) = (v6.into_iter(), v4.into_iter());
    let mut out = Vec::new();
    loop {
        match (v6.next(), v4.next()) {
            (None, None) => return out,
            (a, b) => out.extend(a.into_iter().chain(b)),
        }
    }
}

/// Connects to the first of `addrs` that answers (RFC 8305): one attempt at a
/// time, the next started when the last fails or has had `delay`, earlier ones
/// kept going; the first connection made wins and the others are dropped. Every
/// address is tried; the caller's timeout bounds the whole.
async fn happy_eyeballs(addrs: Vec<SocketAddr>, delay: Duration) -> io::Result<TcpStream> {
    type Attempt = Pin<Box<dyn Future<Output = io::Result<TcpStream>> + Send>>;
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut rest = addrs.into_iter();
    let mut last_error: Option<io::Error> = None;
    let mut timer = Box::pin(tokio::time::sleep(delay));
    let mut start_next = |attempts: &mut Vec<Attempt>, timer: &mut Pin<Box<tokio::time::Sleep>>| match rest.next() {
        Some(a) => {
            attempts.push(Box::pin(TcpStream::connect(a)));
            timer.as_mut().reset(tokio::time::Instant::now() + delay);
            true
        }
        None => false,
    };
    let mut more = start_next(&mut attempts, &mut timer);
    loop {
        if attempts.is_empty() {
            return Err(
                last_error.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "the name has no address"))
            );
        }
        let event = std::future::poll_fn(|cx| {
            for (i, a) in attempts.iter_mut().enumerate() {
                if let Poll::Ready(r) = a.as_mut().poll(cx) {
                    return Poll::Ready(Some((i, r)));
                }
            }
            if more && timer.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            Poll::Pending
        })
        .await;
        match event {
            Some((_, Ok(tcp))) => return Ok(tcp),
            Some((i, Err(e))) => {
                drop(attempts.swap_remove(i));
                last_error = Some(e);
                more = more && start_next(&mut attempts, &mut timer);
            }
            None => more = start_next(&mut attempts, &mut timer),
        }
    }
}

/// TLS over `io` with `host`. Made apart: inline, the handshake's large future
/// would sit in the caller's frame, on the stack of every caller's thread that
/// connects.
async fn handshake<S>(tls: &TlsConnector, host: &url::Host<String>, io: S) -> Result<TlsStream<S>, Failure>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let name = server_name(host)?;
    boxed_apart(|| tls.connect(name, io)).await.map_err(Failure::Tls)
}

/// The tunnel through the proxy to `authority`, or why not.
async fn tunnel<S>(io: &mut S, route: &Route, authority: &str) -> Result<(), Failure>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let with_port = if authority.contains(':') && !authority.ends_with(']') {
        authority.to_string()
    } else {
        format!("{authority}:443")
    };
    let proxy = &route.proxy;
    connect_tunnel(io, &with_port, proxy.authorization.as_deref())
        .await
        .map_err(|e| match e {
            TunnelError::Io(e) => Failure::Proxy(format!("proxy {proxy:?}: {e}"), None),
            // Some proxies (tinyproxy among them) say 401 where RFC 9110 says 407.
            TunnelError::Refused(c @ (401 | 407)) => Failure::Proxy(
                format!(
                    "proxy {proxy:?} wants credentials ({c}){}",
                    if proxy.authorization.is_some() {
                        ": those given were refused"
                    } else {
                        ""
                    }
                ),
                Some(407),
            ),
            TunnelError::Refused(c) => Failure::Proxy(
                format!("proxy {proxy:?} refused the tunnel to {with_port} ({c})"),
                Some(c),
            ),
            TunnelError::Garbled(m) => Failure::Proxy(format!("proxy {proxy:?}: {m}"), None),
        })
}

/// Opens a connection to `o`, within `timeout`: the stream, and the flag it shares
/// with its socket (see `Tcp::recheck`). A TLS stream says which protocol ALPN
/// agreed on.
pub async fn open(o: &Origin, timeout: Duration) -> Result<(Stream, Arc<AtomicBool>), Failure> {
    let connect = async {
        let (host, port) = match &o.route {
            Some(r) => (&r.proxy.host, r.proxy.port),
            None => (&o.host, o.port),
        };
        let tcp = tcp_to(host, port).await.map_err(|e| match &o.route {
            Some(r) => Failure::Proxy(format!("proxy {:?}: {e}", r.proxy), None),
            None => Failure::Connect(e),
        })?;
        let _ = tcp.set_nodelay(true);
        let recheck = Arc::new(AtomicBool::new(false));
        let mut tcp = Tcp::new(tcp, recheck.clone()).map_err(Failure::Connect)?;
        let io = match (&o.route, &o.tls) {
            (None, None) => Stream::Plain(tcp),
            (None, Some(tls)) => Stream::Tls(Box::new(handshake(tls, &o.host, tcp).await?)),
            (Some(r), origin_tls) => match &r.tls {
                None => match origin_tls {
                    None => Stream::Plain(tcp),
                    Some(tls) => {
                        tunnel(&mut tcp, r, &o.authority).await?;
                        Stream::Tls(Box::new(handshake(tls, &o.host, tcp).await?))
                    }
                },
                Some(proxy_tls) => {
                    let mut to_proxy = handshake(proxy_tls, &r.proxy.host, tcp).await.map_err(|f| match f {
                        Failure::Tls(e) => {
                            Failure::Tls(io::Error::new(e.kind(), format!("with proxy {:?}: {e}", r.proxy)))
                        }
                        other => other,
                    })?;
                    match origin_tls {
                        None => Stream::Tls(Box::new(to_proxy)),
                        Some(tls) => {
                            tunnel(&mut to_proxy, r, &o.authority).await?;
                            Stream::TlsInTls(Box::new(handshake(tls, &o.host, to_proxy).await?))
                        }
                    }
                }
            },
        };
        Ok((io, recheck))
    };
    match tokio::time::timeout(timeout, connect).await {
        Ok(c) => c,
        // A proxy that never answers its CONNECT times out as a silent server does.
        Err(_) => Err(Failure::Connect(io::Error::new(
            io::ErrorKind::TimedOut,
            match &o.route {
                Some(r) => format!("proxy {:?} did not answer within {} ms", r.proxy, timeout.as_millis()),
                None => format!("no connection within {} ms", timeout.as_millis()),
            },
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_alternate_ipv6_first() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let got = interleave(vec![
            a("1.1.1.1:1"),
            a("2.2.2.2:1"),
            a("[::1]:1"),
            a("3.3.3.3:1"),
            a("[::2]:1"),
        ]);
        let want = vec![
            a("[::1]:1"),
            a("1.1.1.1:1"),
            a("[::2]:1"),
            a("2.2.2.2:1"),
            a("3.3.3.3:1"),
        ];
        assert_eq!(got, want);
    }

    /// A listener whose accept queue is full: a connection to it never completes
    /// (the kernel drops the SYN), as with an address that does not answer.
    /// (Windows refuses such a connection instead: Unix only.)
    #[cfg(unix)]
    fn silent_listener() -> (std::net::TcpListener, SocketAddr, std::net::TcpStream) {
        use nix::sys::socket::{listen, Backlog};
        let l = std::net::TcpListener::bind("[::1]:0")
            .or_else(|_| std::net::TcpListener::bind("127.0.0.2:0"))
            .unwrap();
        // Listening again with room for one connection in the queue.
        listen(&l, Backlog::new(0).unwrap()).unwrap();
        let addr = l.local_addr().unwrap();
        let held = std::net::TcpStream::connect(addr).unwrap();
        (l, addr, held)
    }

    #[cfg(unix)]
    #[test]
    fn a_silent_address_gives_way_to_the_next() {
        crate::drive::runtime::handle().block_on(async {
            let (_l, silent, _held) = silent_listener();
            let good = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let good_addr = good.local_addr().unwrap();
            let t0 = tokio::time::Instant::now();
            let tcp = tokio::time::timeout(
                Duration::from_secs(5),
                happy_eyeballs(vec![silent, good_addr], ATTEMPT_DELAY),
            )
            .await
            .expect("the second address was tried while the first hung")
            .unwrap();
            assert_eq!(tcp.peer_addr().unwrap(), good_addr);
            assert!(t0.elapsed() >= ATTEMPT_DELAY, "the first address had its head start");
            // A refused address gives way at once, and a list that all fails says why.
            let refused = {
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                l.local_addr().unwrap()
            };
            let t0 = tokio::time::Instant::now();
            let tcp = happy_eyeballs(vec![refused, good_addr], Duration::from_secs(30))
                .await
                .unwrap();
            assert_eq!(tcp.peer_addr().unwrap(), good_addr);
            assert!(t0.elapsed() < Duration::from_secs(5));
            assert!(happy_eyeballs(vec![refused], ATTEMPT_DELAY).await.is_err());
            assert!(happy_eyeballs(vec![], ATTEMPT_DELAY).await.is_err());
        });
    }
}
