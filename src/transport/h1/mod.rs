//! HTTP/1.1 exchanges with one endpoint's origin, with a pool of kept-alive
//! connections.
//!
//! Why mcpc's own and not a full HTTP client or hyper's connection API: the future
//! that makes a request reads and writes its connection itself, so a request is one
//! task, and one that a blocked caller polls runs on the caller's own thread
//! (docs/decisions/0001-own-http1.md has the measurements). What is left to write is
//! small: a request head is the request line, `Host`, `Content-Length` and the
//! header lines it is given; response heads and chunk sizes are parsed by
//! `httparse` ([`parse`]), and the body is framed by `Content-Length`, chunks or the
//! connection's end (RFC 9112, section 6).
//!
//! A connection belongs to one request at a time: taken from the pool (or opened),
//! it goes back once the response body has been read to its end. A request dropped
//! before that drops its connection, which closes it.

use std::sync::Arc;
use std::time::Duration;

use http::{Method, Uri};
use url::Url;

use crate::drive::runtime::boxed_apart;
use crate::transport::net::{Origin, Stream};

mod conn;
mod parse;
mod reply;

pub use crate::transport::net::Route;
use conn::*;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use parse::read_from;
pub(crate) use parse::same_text;
pub use parse::Failure;
use parse::*;
pub use reply::Reply;

/// HTTP/1.1 to one origin. Cheap to share; every method may be called from any
/// thread, in any task.
pub struct Client {
    origin: Origin,
    connect_timeout: Duration,
    pool: Arc<Pool>,
}

impl Client {
    /// A client for `url`'s origin (no connection yet). TLS (with `tls`) for
    /// `https`, plain TCP for `http`, through `route`'s proxy when given. None if
    /// the URL has no host.
    pub fn new(
        url: &Url,
        tls: Option<Arc<rustls::ClientConfig>>,
        connect_timeout: Duration,
        route: Option<Route>,
    ) -> Option<Client> {
        Some(Client {
            origin: Origin::new(url, tls, route)?,
            connect_timeout,
            pool: Arc::default(),
        })
    }

    /// Closes the connections kept alive (those in use close when their request ends).
    pub fn close_idle(&self) {
        self.pool.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The start of a request's head: the request line, `Host`, then `fields`
    /// (`name: value` lines, which must carry none of `Host`, `Content-Length` and
    /// `Transfer-Encoding`). [`Client::send`] ends it. The same for every request
    /// with the same method, path and fields, so a caller may keep it.
    pub fn request_head(&self, method: &Method, path: &Uri, fields: &[u8]) -> Vec<u8> {
        let mut h = Vec::with_capacity(64 + self.origin.authority.len() + fields.len());
        h.extend_from_slice(method.as_str().as_bytes());
        h.push(b' ');
        // A plain-http origin behind a proxy is asked in absolute form, with the
        // proxy's credentials (a tunnelled one never shows them to the origin).
        let via = self.origin.via_proxy();
        if via.is_some() {
            h.extend_from_slice(b"http://");
            h.extend_from_slice(self.origin.authority.as_bytes());
        }
        h.extend_from_slice(path.path_and_query().map_or("/", |p| p.as_str()).as_bytes());
        h.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        h.extend_from_slice(self.origin.authority.as_bytes());
        h.extend_from_slice(b"\r\n");
        if let Some(auth) = via.and_then(|r| r.proxy.authorization.as_deref()) {
            h.extend_from_slice(b"proxy-authorization: ");
            h.extend_from_slice(auth.as_bytes());
            h.extend_from_slice(b"\r\n");
        }
        h.extend_from_slice(fields);
        h
    }

    /// Sends one request (`head` from [`Client::request_head`] with the same
    /// `method`) and waits for the response head. `Content-Length` ends the head when
    /// there is a body (or it is a POST). A kept-alive connection that turns out
    /// closed before the request went out is dropped and the request goes on
    /// another. A request that a reused connection's end cut off before any byte of
    /// a response came goes again, once, on a fresh connection: the server closed
    /// an idle connection as the request crossed it, and did not see the request
    /// (docs/decisions/0012-h1-resend.md says when that is proven).
    pub async fn send(&self, method: &Method, head: &[u8], body: &[u8]) -> Result<Reply, Failure> {
        self.send_on(None, method, head, body).await
    }

    /// The same, on `fresh` first when given: a stream just opened to this origin
    /// (one on which ALPN chose HTTP/1.1 when HTTP/2 was offered too).
    pub async fn send_over(
        &self,
        fresh: (Stream, Arc<std::sync::atomic::AtomicBool>),
        method: &Method,
        head: &[u8],
        body: &[u8],
    ) -> Result<Reply, Failure> {
        self.send_on(Some(Conn::over(fresh.0, fresh.1)), method, head, body)
            .await
    }

    async fn send_on(
        &self,
        mut fresh: Option<Box<Conn>>,
        method: &Method,
        head: &[u8],
        body: &[u8],
    ) -> Result<Reply, Failure> {
        let mut end = [0u8; 48];
        let end = head_end(&mut end, body.len(), method == Method::POST);
        let mut resent = false;
        loop {
            let (mut conn, reused) = match fresh.take() {
                Some(c) => (c, false),
                None => match (!resent).then(|| self.pool.take()).flatten() {
                    Some(c) => (c, true),
                    // Boxed: connecting (with TLS) is a large future, and rare; inline,
                    // it would make every request's future larger, and dearer to move.
                    None => (
                        boxed_apart(|| Conn::open(&self.origin, self.connect_timeout)).await?,
                        false,
                    ),
                },
            };
            // The server may have closed it while it sat idle, unwatched.
            if reused && !conn.still_open().await {
                continue;
            }
            match conn.write([head, end, body]).await {
                Ok(()) => {}
                Err((_, false)) if reused => continue, // closed meanwhile; nothing went out
                // Cut off part way: the server never had the whole request.
                Err(_) if reused => {
                    resent = true;
                    continue;
                }
                Err((e, _)) => return Err(Failure::Http(e)),
            }
            let h = match conn.read_head(method).await {
                Ok(h) => h,
                Err((f, true)) if reused => {
                    log::debug!("a kept-alive connection ended before any response came ({f}): sending again");
                    resent = true;
                    continue;
                }
                Err((f, _)) => return Err(f),
            };
            conn.keep_alive = h.keep_alive;
            let mut reply = Reply {
                status: h.status,
                fields: h.fields,
                framing: h.framing,
                // What the head framed, before any of the body is read.
                length: match h.framing {
                    Framing::Length(n) => Some(n),
                    Framing::Done => Some(0),
                    _ => None,
                },
                conn: Some(conn),
                lent: 0,
                pool: self.pool.clone(),
            };
            if reply.framing == Framing::Done {
                reply.finish(); // no body: the connection is free at once
            }
            return Ok(reply);
        }
    }
}

/// The end of a request's head, written into `room`: `Content-Length` when there is
/// a body of `len` bytes (or `always`), then the empty line.
fn head_end(room: &mut [u8; 48], len: usize, always: bool) -> &[u8] {
    let mut n = 0;
    let mut put = |b: &[u8]| {
        room[n..n + b.len()].copy_from_slice(b);
        n += b.len();
    };
    if len > 0 || always {
        put(b"content-length: ");
        put(itoa::Buffer::new().format(len).as_bytes());
        put(b"\r\n");
    }
    put(b"\r\n");
    &room[..n]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;

    /// `same_text` agrees with `eq_ignore_ascii_case` for every byte a field's name
    /// or value may hold (tab, then 0x20 to 0xFF but DEL), in every position.
    #[test]
    fn same_text_is_case_folding_exactly() {
        let allowed = std::iter::once(b'\t').chain((0x20..=0xFF).filter(|&b| b != 0x7F));
        for lower in ["content-length", "application/json", "x.1"] {
            let want = lower.as_bytes();
            for at in 0..want.len() {
                for b in allowed.clone() {
                    let mut text = want.to_vec();
                    text[at] = b;
                    assert_eq!(
                        same_text(&text, want),
                        text.eq_ignore_ascii_case(want),
                        "{lower} with {b:#x} at {at}"
                    );
                }
            }
            assert!(!same_text(&want[1..], want) && same_text(lower.to_uppercase().as_bytes(), want));
        }
    }

    /// A head with more fields than the first parse has room for is parsed again
    /// with room for all it may have; one with more than that is refused.
    #[test]
    fn heads_with_many_fields() {
        let head = |n: usize| {
            let mut h = String::from("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n");
            for i in 1..n {
                h.push_str(&format!("X-Field-{i}: value {i}\r\n"));
            }
            h + "\r\n{}"
        };
        for n in [1, FEW_FIELDS, FEW_FIELDS + 1, 40, MAX_FIELDS] {
            let (status, fields, body, _, _) = read_from(&[head(n).as_bytes()]).unwrap();
            assert_eq!((status, fields.len(), &body[..]), (200, n, &b"{}"[..]));
            assert_eq!(
                fields[n - 1].1,
                if n == 1 {
                    b"2".to_vec()
                } else {
                    format!("value {}", n - 1).into_bytes()
                }
            );
        }
        let err = read_from(&[head(MAX_FIELDS + 1).as_bytes()]).unwrap_err();
        assert!(err.contains("not valid HTTP/1.1"), "{err}");
    }

    /// A server that answers one request per connection, then, when told to, closes
    /// the connection and says it has.
    fn one_answer_per_connection(
        conns: usize,
    ) -> (
        u16,
        std::sync::mpsc::Sender<()>,
        std::sync::mpsc::Receiver<()>,
        std::thread::JoinHandle<()>,
    ) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (close_tx, close_rx) = std::sync::mpsc::channel();
        let (closed_tx, closed_rx) = std::sync::mpsc::channel();
        let server = std::thread::spawn(move || {
            for _ in 0..conns {
                let (mut s, _) = listener.accept().unwrap();
                let mut got = Vec::new();
                let mut buf = [0u8; 1024];
                // The request: a head, then a body of 2 bytes.
                while !got.windows(4).any(|w| w == b"\r\n\r\n") || !got.ends_with(b"{}") {
                    let n = s.read(&mut buf).unwrap();
                    assert!(n > 0, "the client closed early");
                    got.extend_from_slice(&buf[..n]);
                }
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
                close_rx.recv().unwrap();
                drop(s);
                closed_tx.send(()).unwrap();
            }
        });
        (port, close_tx, closed_rx, server)
    }

    /// How a test reads a body.
    #[derive(Clone, Copy, Debug)]
    enum How {
        /// With `rest`, if its length is known (else as `Pieces`).
        Whole,
        /// With `chunk`.
        Pieces,
        /// With `chunk_lent`.
        Lent,
    }

    /// Posts `{}` and reads the reply's body as `how` says.
    async fn post(client: &Client, how: How) -> Result<Vec<u8>, Failure> {
        let mut reply = client
            .send(
                &Method::POST,
                &client.request_head(&Method::POST, &Uri::from_static("/mcp"), b""),
                b"{}",
            )
            .await?;
        let mut body = Vec::new();
        match how {
            How::Whole if reply.content_length().is_some() => body.extend_from_slice(reply.rest().await?),
            How::Lent => {
                while let Some((piece, _)) = reply.chunk_lent().await? {
                    body.extend_from_slice(piece);
                }
            }
            _ => {
                while let Some(c) = reply.chunk().await? {
                    body.extend_from_slice(&c);
                }
            }
        }
        Ok(body)
    }

    #[test]
    fn a_connection_closed_while_idle_is_not_used_again() {
        let (port, close, closed, server) = one_answer_per_connection(4);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
        // On a caller's thread (no reactor), then in a runtime task.
        for here in [true, false] {
            for _ in 0..2 {
                let body = run_here_or_not(here, post(&client, How::Lent));
                assert_eq!(body.unwrap(), b"ok", "on a caller's thread: {here}");
                // The connection is back in the pool, idle: the server closes it.
                close.send(()).unwrap();
                closed.recv().unwrap();
            }
        }
        server.join().unwrap();
    }

    /// A server that answers the first request on each connection, then closes the
    /// connection: at once after the response (`at_once`), or as the next request
    /// on it arrives, unanswered (an idle close that crossed that request). Ends
    /// after `conns` connections.
    fn closes_after_each_response(conns: usize, at_once: bool) -> (u16, std::thread::JoinHandle<()>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let request = |s: &mut std::net::TcpStream| {
                let (mut got, mut buf) = (Vec::new(), [0u8; 1024]);
                while !got.windows(4).any(|w| w == b"\r\n\r\n") || !got.ends_with(b"{}") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return false,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                true
            };
            for _ in 0..conns {
                let (mut s, _) = listener.accept().unwrap();
                if !request(&mut s) {
                    continue;
                }
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").unwrap();
                if !at_once {
                    request(&mut s);
                }
            }
        });
        (port, server)
    }

    #[test]
    fn a_request_cut_off_on_a_reused_connection_goes_again_once() {
        // Each request after the first meets a connection that ends under it, before
        // any response byte: it goes again on a fresh connection, and succeeds.
        let (port, server) = closes_after_each_response(4, false);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
        for i in 0..4 {
            let body = run_here_or_not(i % 2 == 0, post(&client, How::Whole));
            assert_eq!(body.expect("sent again on a fresh connection"), b"ok", "request {i}");
        }
        drop(client);
        server.join().unwrap();
        // Once only: a fresh connection that ends before a response is an error.
        let (port, server) = scripted::<&[u8]>(vec![(b"", true)]);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
        let err = crate::drive::runtime::handle()
            .block_on(post(&client, How::Whole))
            .unwrap_err();
        assert!(err.to_string().contains("before a response came"), "{err}");
        server.join().unwrap();
    }

    #[test]
    fn a_server_that_closes_each_connection_after_its_response() {
        // The close races the next request's reuse of the connection; every request
        // succeeds whichever wins.
        const REQUESTS: usize = 200;
        let (port, server) = closes_after_each_response(REQUESTS, true);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
        for i in 0..REQUESTS {
            let body = crate::drive::runtime::handle().block_on(post(&client, How::Whole));
            assert_eq!(body.unwrap_or_else(|e| panic!("request {i}: {e}")), b"ok");
        }
        drop(client);
        server.join().unwrap();
    }

    /// A server that answers requests (a head and the body `{}`), in order, with
    /// `replies`, each written a byte at a time so the client meets every split;
    /// after a reply marked `true` it closes the connection. It ends after the last
    /// reply and says how many connections it accepted.
    fn scripted<R: AsRef<[u8]> + Send + 'static>(replies: Vec<(R, bool)>) -> (u16, std::thread::JoinHandle<usize>) {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let mut replies = replies.into_iter();
            let mut conns = 0;
            'conns: while replies.len() > 0 {
                let (mut s, _) = listener.accept().unwrap();
                s.set_nodelay(true).unwrap();
                conns += 1;
                loop {
                    let mut got = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !got.windows(4).any(|w| w == b"\r\n\r\n") || !got.ends_with(b"{}") {
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => continue 'conns, // the client left this one
                            Ok(n) => got.extend_from_slice(&buf[..n]),
                        }
                    }
                    let Some((reply, close)) = replies.next() else {
                        break 'conns;
                    };
                    for b in reply.as_ref() {
                        if s.write_all(&[*b]).is_err() {
                            break;
                        }
                    }
                    if close || replies.len() == 0 {
                        continue 'conns;
                    }
                }
            }
            conns
        });
        (port, server)
    }

    fn run_here_or_not<T>(here: bool, fut: impl Future<Output = T>) -> T {
        if here {
            crate::drive::here::block_here(fut)
        } else {
            crate::drive::runtime::handle().block_on(fut)
        }
    }

    #[test]
    fn bodies_are_framed_by_chunks_length_or_close() {
        for here in [true, false] {
            let (port, server) =
                scripted::<&[u8]>(vec![
                // A 1xx head first; chunks with an extension and a trailer.
                (
                    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                      5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
                    false,
                ),
                (b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello", false),
                // Said to be the last on its connection: the next request opens another.
                (b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc", true),
                (b"HTTP/1.1 200 OK\r\n\r\nuntil the end", true),
                // Chunked with a length beside it: read as chunked, not used again.
                (
                    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 99\r\n\r\n2\r\nok\r\n0\r\n\r\n",
                    false,
                ),
                (b"HTTP/1.1 204 No Content\r\n\r\n", false),
            ]);
            let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
            let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
            let bodies: Vec<Vec<u8>> = (0..6)
                .map(|i| run_here_or_not(here, post(&client, [How::Pieces, How::Whole, How::Lent][i % 3])).unwrap())
                .collect();
            let want: [&[u8]; 6] = [b"hello world", b"hello", b"abc", b"until the end", b"ok", b""];
            assert_eq!(bodies, want, "on a caller's thread: {here}");
            assert_eq!(server.join().unwrap(), 4, "on a caller's thread: {here}");
        }
    }

    #[test]
    fn broken_framing_is_an_error() {
        let cases: [(&[u8], &str); 6] = [
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabc",
                "two different Content-Length",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: -3\r\n\r\n",
                "Content-Length is not a number",
            ),
            (
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
                "closed before the response body's end",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                "chunk size",
            ),
            (
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n",
                "does not end where its size says",
            ),
            (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched protocols"),
        ];
        for here in [true, false] {
            let (port, server) = scripted(cases.iter().map(|(r, _)| (*r, true)).collect());
            let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
            let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
            for (reply, want) in cases {
                let got = run_here_or_not(here, post(&client, How::Whole));
                let text = got.expect_err(&String::from_utf8_lossy(reply)).to_string();
                assert!(text.contains(want), "{text:?} should say {want:?}");
            }
            assert_eq!(server.join().unwrap(), cases.len());
        }
    }

    #[test]
    fn a_response_head_that_is_not_http_is_an_error() {
        let (port, server) = scripted(vec![(b"SSH-2.0-OpenSSH\r\n\r\n", true)]);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
        let err = crate::drive::runtime::handle()
            .block_on(post(&client, How::Pieces))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not valid HTTP/1.1"), "{err}");
        server.join().unwrap();
    }

    /// Random bodies, sent in chunks of random sizes (with extensions, and trailers
    /// at the end), come back whole, and the connection carries them all.
    #[test]
    fn random_chunked_bodies_come_back_whole() {
        let mut rng = crate::testing::XorShift::new(0x9e37_79b9);
        let mut rand = move |n: u64| rng.below(n);
        let mut bodies = Vec::new();
        let mut replies = Vec::new();
        for case in 0..24 {
            let body: Vec<u8> = (0..rand(3000)).map(|_| b"ab\r\n0;x\"{}"[rand(10) as usize]).collect();
            let mut reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            let mut rest = &body[..];
            while !rest.is_empty() {
                let n = (1 + rand(400) as usize).min(rest.len());
                let ext = if rand(3) == 0 { ";name=\"v\"" } else { "" };
                reply.extend_from_slice(format!("{n:x}{ext}\r\n").as_bytes());
                reply.extend_from_slice(&rest[..n]);
                reply.extend_from_slice(b"\r\n");
                rest = &rest[n..];
            }
            reply.extend_from_slice(if case % 2 == 0 {
                b"0\r\n\r\n"
            } else {
                b"0\r\nX-A: 1\r\nX-B: 2\r\n\r\n"
            });
            bodies.push(body);
            replies.push((reply, false));
        }
        let (port, server) = scripted(replies);
        let url = Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
        let client = Client::new(&url, None, Duration::from_secs(10), None).unwrap();
        for (i, want) in bodies.iter().enumerate() {
            let how = if i % 4 < 2 { How::Pieces } else { How::Lent };
            let got = run_here_or_not(i % 2 == 0, post(&client, how)).unwrap();
            assert!(&got == want, "body {i} differs");
        }
        assert_eq!(server.join().unwrap(), 1);
    }
}
