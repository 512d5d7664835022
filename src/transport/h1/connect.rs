//! Opening a connection to the origin: TCP to it or to its proxy, the proxy's TLS
//! (an `https://` proxy), the `CONNECT` tunnel (an `https://` origin behind a
//! proxy), then TLS with the origin, end to end, with the same checks as without a
//! proxy. An `http://` origin behind a proxy is asked in absolute form instead
//! (no tunnel), as curl does.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use bytes::BytesMut;
use rustls_pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

use super::conn::{Conn, Stream};
use super::{Client, Failure};
use crate::drive::runtime::boxed_apart;
use crate::drive::socket::Tcp;
use crate::transport::proxy::{connect_tunnel, Proxy, ProxySettings, TunnelError};

/// The proxy an origin is reached through, and TLS with it when it is `https://`.
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
        url::Host::Domain(d) => boxed_apart(|| TcpStream::connect((d.as_str(), port))).await,
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

impl Client {
    pub(super) async fn connect(&self) -> Result<Box<Conn>, Failure> {
        let o = &self.origin;
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
            let mut io = io;
            io.wait_in_place(true);
            Ok(Box::new(Conn {
                io,
                buf: BytesMut::new(),
                keep_alive: true,
                idle_since: Instant::now(),
                recheck,
            }))
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(c) => c,
            Err(_) => Err(Failure::Connect(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no connection within {} ms", self.connect_timeout.as_millis()),
            ))),
        }
    }
}
