//! HTTP/2 against a server of the h2 crate's own, with prior knowledge on loopback.
//! (ALPN and the fallback to HTTP/1.1 are tested against real servers, in
//! tests/c/test_peers.c.)

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use h2::server::SendResponse;
use h2::{Reason, RecvStream};
use http::{Method, Request, Response};
use tokio::sync::mpsc;

use super::exchange::request_for;
use super::*;
use crate::drive::runtime::handle;
use crate::drive::BoxFuture;

type Answer = Arc<dyn Fn(Request<RecvStream>, SendResponse<Bytes>) -> BoxFuture<'static, ()> + Send + Sync>;

/// An h2c server on loopback that answers each request with `answer`, on a task
/// of its own; with how many connections it has accepted.
fn server(answer: Answer) -> (u16, Arc<AtomicUsize>) {
    server_closing_after(answer, usize::MAX)
}

/// The same, but each connection goes away (GOAWAY, then closed) after `per_conn`
/// requests.
fn server_closing_after(answer: Answer, per_conn: usize) -> (u16, Arc<AtomicUsize>) {
    let (port, conns, _) = server_watched(answer, per_conn);
    (port, conns)
}

/// The same, and a message each time a connection has ended.
fn server_watched(answer: Answer, per_conn: usize) -> (u16, Arc<AtomicUsize>, mpsc::UnboundedReceiver<()>) {
    let (ended_tx, ended) = mpsc::unbounded_channel();
    let (port, conns) = accept_each(move |tcp| {
        let answer = answer.clone();
        let ended = ended_tx.clone();
        Box::pin(async move {
            let Ok(mut conn) = h2::server::handshake(tcp).await else {
                return;
            };
            let mut served = 0;
            while let Some(Ok((req, respond))) = conn.accept().await {
                tokio::spawn(answer(req, respond));
                served += 1;
                if served == per_conn {
                    conn.graceful_shutdown();
                }
            }
            let _ = ended.send(());
        })
    });
    (port, conns, ended)
}

/// A loopback listener that runs `serve` on a task for each connection; with how
/// many connections it has accepted.
fn accept_each(
    serve: impl Fn(tokio::net::TcpStream) -> BoxFuture<'static, ()> + Send + 'static,
) -> (u16, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let conns = Arc::new(AtomicUsize::new(0));
    let counted = conns.clone();
    handle().spawn(async move {
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        while let Ok((tcp, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(tcp));
        }
    });
    (port, conns)
}

/// The whole request body, its window given back as it comes.
async fn read_body(body: &mut RecvStream) -> Vec<u8> {
    let mut all = Vec::new();
    while let Some(piece) = body.data().await {
        let piece = piece.unwrap();
        let _ = body.flow_control().release_capacity(piece.len());
        all.extend_from_slice(&piece);
    }
    all
}

/// Sends `data` as the client's window allows, and ends the stream.
async fn send_all(out: &mut h2::SendStream<Bytes>, mut data: Bytes) {
    while !data.is_empty() {
        out.reserve_capacity(data.len());
        let room = std::future::poll_fn(|cx| out.poll_capacity(cx)).await.unwrap().unwrap();
        let piece = data.split_to(room.min(data.len()));
        out.send_data(piece, data.is_empty()).unwrap();
    }
}

/// Echoes each request's body back, with its length, and the path in a field.
fn echo() -> Answer {
    Arc::new(|req, mut respond| {
        Box::pin(async move {
            let path = req.uri().path().to_string();
            let mut body = req.into_body();
            let got = read_body(&mut body).await;
            let resp = Response::builder()
                .header("content-type", "application/json")
                .header("content-length", got.len())
                .header("x-path", path)
                .body(())
                .unwrap();
            let mut out = respond.send_response(resp, got.is_empty()).unwrap();
            if !got.is_empty() {
                send_all(&mut out, Bytes::from(got)).await;
            }
        })
    })
}

fn client(port: u16) -> Client {
    let url = url::Url::parse(&format!("http://127.0.0.1:{port}/mcp")).unwrap();
    Client::new(
        Origin::new(&url, None, None).unwrap(),
        Duration::from_secs(10),
        true,
        false,
    )
}

/// The error one POST to `/mcp` ends in, as its message.
fn post_error(c: &Client, port: u16) -> String {
    match handle().block_on(c.send(&Method::POST, &head(port, "/mcp"), b"{}")) {
        Err(Failure::Http(e)) => e.to_string(),
        Err(_) => panic!("not an HTTP failure"),
        Ok(_) => panic!("the request went through"),
    }
}

fn head(port: u16, path: &str) -> Vec<u8> {
    format!("POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: application/json\r\nconnection: keep-alive\r\n")
        .into_bytes()
}

async fn post(c: &Client, port: u16, path: &str, body: &[u8]) -> Reply {
    match c.send(&Method::POST, &head(port, path), body).await.unwrap() {
        Sent::Reply(r) => r,
        Sent::Http11(_) => panic!("prior knowledge fell back to HTTP/1.1"),
    }
}

#[test]
fn calls_in_flight_share_one_connection() {
    let (port, conns) = server(echo());
    let c = Arc::new(client(port));
    handle().block_on(async {
        let mut tasks = Vec::new();
        for i in 0..64 {
            let c = c.clone();
            tasks.push(tokio::spawn(async move {
                let body = format!("{{\"call\":{i}}}");
                let mut r = post(&c, port, &format!("/mcp/{i}"), body.as_bytes()).await;
                assert_eq!(r.status(), 200);
                assert_eq!(r.header("x-path"), Some(format!("/mcp/{i}").as_bytes()));
                assert_eq!(r.content_length(), Some(body.len() as u64));
                assert_eq!(r.rest().await.unwrap(), body.as_bytes());
                assert_eq!(r.take_rest(), body.as_bytes(), "a body in one piece, taken whole");
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(conns.load(Ordering::SeqCst), 1, "every call on one connection");
}

#[test]
fn large_bodies_flow_past_the_default_windows() {
    // 4 MiB each way: 64 times the protocol's default window.
    let (port, _) = server(echo());
    let c = client(port);
    let body: Vec<u8> = (0..4 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    handle().block_on(async {
        let mut r = post(&c, port, "/mcp", &body).await;
        assert_eq!(r.content_length(), Some(body.len() as u64));
        let got = r.rest().await.unwrap();
        assert!(got == &body[..], "the body came back whole");
        assert_eq!(r.take_rest().len(), body.len());
        // Read in pieces too.
        let mut r = post(&c, port, "/mcp", &body).await;
        let mut all = Vec::new();
        while let Some(p) = r.chunk().await.unwrap() {
            all.extend_from_slice(&p);
        }
        assert!(all == body);
    });
}

/// A body larger than what the poller moves ahead of the reader, all of it sent
/// before the server closed the connection, is read whole after the close.
#[test]
fn a_body_that_came_before_the_close_is_read_whole() {
    let (port, _, mut ended) = server_watched(echo(), 1);
    let c = client(port);
    let body: Vec<u8> = (0..4 << 20).map(|i| b'a' + (i % 26) as u8).collect();
    handle().block_on(async {
        let mut r = post(&c, port, "/mcp", &body).await;
        // Unread until the server has gone and the client has seen the end.
        ended.recv().await.unwrap();
        let driven = c.conn.lock().await.as_ref().unwrap().1.clone();
        tokio::time::timeout(Duration::from_secs(10), async {
            while !driven.has_ended() {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
        .await
        .expect("the client saw the connection end");
        let got = r.rest().await.unwrap();
        assert!(got == &body[..], "the body came back whole ({} bytes)", got.len());
    });
}

/// A request waiting for a place under the server's limit on streams, cancelled
/// meanwhile, never goes out; the requests after it do.
#[test]
fn a_request_cancelled_while_waiting_for_a_stream_never_goes_out() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let (release_tx, release) = tokio::sync::watch::channel(false);
    let saw = seen.clone();
    let (port, _) = accept_each(move |tcp| {
        let saw = saw.clone();
        let release = release.clone();
        Box::pin(async move {
            let Ok(mut conn) = h2::server::Builder::new()
                .max_concurrent_streams(1)
                .handshake(tcp)
                .await
            else {
                return;
            };
            while let Some(Ok((req, mut respond))) = conn.accept().await {
                let path = req.uri().path().to_string();
                saw.lock().unwrap().push(path.clone());
                let mut release = release.clone();
                tokio::spawn(async move {
                    if path == "/first" {
                        let _ = release.wait_for(|r| *r).await;
                    }
                    let resp = Response::builder().body(()).unwrap();
                    let mut out = respond.send_response(resp, false).unwrap();
                    out.send_data(Bytes::from(path), true).unwrap();
                });
            }
        })
    });
    let c = Arc::new(client(port));
    handle().block_on(async {
        // The connection settled, so that the server's limit is known.
        let mut warm = post(&c, port, "/warm", b"{}").await;
        assert_eq!(warm.rest().await.unwrap(), b"/warm");
        drop(warm);
        let first = {
            let c = c.clone();
            tokio::spawn(async move {
                let mut r = post(&c, port, "/first", b"{}").await;
                r.rest().await.unwrap().to_vec()
            })
        };
        while !seen.lock().unwrap().iter().any(|p| p == "/first") {
            tokio::task::yield_now().await;
        }
        let waiting = {
            let c = c.clone();
            tokio::spawn(async move { post(&c, port, "/cancelled", b"{}").await })
        };
        // Handed over and held back by the limit, then cancelled.
        let driven = c.conn.lock().await.as_ref().unwrap().1.clone();
        let held = async {
            while driven.held_back() == 0 {
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(Duration::from_secs(10), held)
            .await
            .expect("held back by the server's limit");
        waiting.abort();
        let _ = waiting.await;
        release_tx.send(true).unwrap();
        assert_eq!(first.await.unwrap(), b"/first");
        let mut after = post(&c, port, "/after", b"{}").await;
        assert_eq!(after.rest().await.unwrap(), b"/after");
    });
    assert_eq!(*seen.lock().unwrap(), ["/warm", "/first", "/after"]);
}

/// A dropped reply, or a request dropped before its answer, resets its own stream
/// with CANCEL; the calls beside it complete on the same connection.
#[test]
fn a_cancel_resets_only_its_own_stream() {
    let (resets_tx, mut resets) = mpsc::unbounded_channel::<(String, Reason)>();
    let (arrived_tx, mut arrived) = mpsc::unbounded_channel::<String>();
    let answer: Answer = Arc::new(move |req, mut respond| {
        let resets = resets_tx.clone();
        let arrived = arrived_tx.clone();
        Box::pin(async move {
            let path = req.uri().path().to_string();
            match path.as_str() {
                // A head and part of the body, then nothing more until reset.
                "/part" => {
                    let resp = Response::builder().body(()).unwrap();
                    let mut out = respond.send_response(resp, false).unwrap();
                    out.send_data(Bytes::from_static(b"{\"partial\":"), false).unwrap();
                    let reason = std::future::poll_fn(|cx| out.poll_reset(cx)).await.unwrap();
                    resets.send((path, reason)).unwrap();
                }
                // No answer at all until reset.
                "/never" => {
                    arrived.send(path.clone()).unwrap();
                    let reason = std::future::poll_fn(|cx| respond.poll_reset(cx)).await.unwrap();
                    resets.send((path, reason)).unwrap();
                }
                _ => {
                    let resp = Response::builder().body(()).unwrap();
                    let mut out = respond.send_response(resp, false).unwrap();
                    out.send_data(Bytes::from(path), true).unwrap();
                }
            }
        })
    });
    let (port, conns) = server(answer);
    let c = Arc::new(client(port));
    handle().block_on(async {
        let part = post(&c, port, "/part", b"{}").await;
        let waiting = {
            let c = c.clone();
            tokio::spawn(async move { post(&c, port, "/never", b"{}").await })
        };
        assert_eq!(arrived.recv().await.unwrap(), "/never");
        let mut others = Vec::new();
        for i in 0..8 {
            let c = c.clone();
            others.push(tokio::spawn(async move {
                let mut r = post(&c, port, &format!("/ok{i}"), b"{}").await;
                r.chunk().await.unwrap().unwrap()
            }));
        }
        drop(part);
        let got = resets.recv().await.unwrap();
        assert_eq!(got, ("/part".to_string(), Reason::CANCEL));
        waiting.abort();
        let got = resets.recv().await.unwrap();
        assert_eq!(got, ("/never".to_string(), Reason::CANCEL));
        for (i, t) in others.into_iter().enumerate() {
            assert_eq!(t.await.unwrap(), format!("/ok{i}").as_bytes());
        }
        // The connection goes on.
        let mut r = post(&c, port, "/after", b"{}").await;
        assert_eq!(r.chunk().await.unwrap().unwrap(), &b"/after"[..]);
        assert!(r.chunk().await.unwrap().is_none());
    });
    assert_eq!(conns.load(Ordering::SeqCst), 1);
    // Every stream, ended or reset, has left the connection's poller.
    let driven = c.conn.try_lock().unwrap().as_ref().unwrap().1.clone();
    assert_eq!(driven.live_streams(), 0);
}

/// A server that answers before the request's body has arrived, and resets the
/// rest (NO_ERROR): each answer stands, and the calls beside them complete.
#[test]
fn an_answer_before_the_whole_request_stands() {
    let answer: Answer = Arc::new(|req, mut respond| {
        Box::pin(async move {
            let path = req.uri().path().to_string();
            let resp = Response::builder().body(()).unwrap();
            let mut out = respond.send_response(resp, false).unwrap();
            out.send_data(Bytes::from(path), true).unwrap();
            // Dropping the request's body unread resets the stream with NO_ERROR.
            drop(req);
        })
    });
    let (port, conns) = server(answer);
    let c = Arc::new(client(port));
    // 1 MiB: sixteen times the server's default window, so the answer comes
    // while most of the body waits to be sent.
    let big: Arc<Vec<u8>> = Arc::new(vec![b'x'; 1 << 20]);
    handle().block_on(async {
        let mut tasks = Vec::new();
        for i in 0..16 {
            let (c, big) = (c.clone(), big.clone());
            tasks.push(tokio::spawn(async move {
                let body: &[u8] = if i % 2 == 0 { &big } else { b"{}" };
                let mut r = post(&c, port, &format!("/early{i}"), body).await;
                assert_eq!(r.status(), 200);
                assert_eq!(r.rest().await.unwrap(), format!("/early{i}").as_bytes());
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}

/// A connection the server sent away is replaced by the next request, and one
/// closed here (`close_idle`) by the one after.
#[test]
fn a_connection_gone_away_is_replaced() {
    let (port, conns) = server_closing_after(echo(), 1);
    let c = client(port);
    handle().block_on(async {
        for i in 0..4 {
            let body = format!("{{\"n\":{i}}}");
            let mut r = post(&c, port, "/mcp", body.as_bytes()).await;
            assert_eq!(r.rest().await.unwrap(), body.as_bytes());
        }
    });
    assert_eq!(conns.load(Ordering::SeqCst), 4, "one connection a request");
    let (port, conns) = server(echo());
    let c = client(port);
    handle().block_on(async {
        let mut r = post(&c, port, "/mcp", b"{}").await;
        assert_eq!(r.rest().await.unwrap(), b"{}");
        c.close_idle();
        let mut r = post(&c, port, "/mcp", b"{}").await;
        assert_eq!(r.rest().await.unwrap(), b"{}");
    });
    assert_eq!(conns.load(Ordering::SeqCst), 2);
}

/// What went wrong is said in the specification's words: a stream the server
/// refused (tried twice, then given up), and a body unlike its content-length.
#[test]
fn failures_name_who_and_why() {
    let (port, conns) = server(Arc::new(|_, mut respond| {
        Box::pin(async move { respond.send_reset(Reason::REFUSED_STREAM) })
    }));
    let c = client(port);
    assert_eq!(
        post_error(&c, port),
        "HTTP/2: the server reset the stream (RST_STREAM, REFUSED_STREAM)"
    );
    assert_eq!(
        conns.load(Ordering::SeqCst),
        2,
        "tried again once, on a fresh connection"
    );
    let (port, _) = server(Arc::new(|_, mut respond| {
        Box::pin(async move {
            let resp = Response::builder().header("content-length", "5").body(()).unwrap();
            let mut out = respond.send_response(resp, false).unwrap();
            out.send_data(Bytes::from_static(b"{}"), true).unwrap();
        })
    }));
    let c = client(port);
    let e = handle().block_on(async { post(&c, port, "/mcp", b"{}").await.rest().await.err() });
    let Some(Failure::Http(e)) = e else {
        panic!("a body shorter than its length was read")
    };
    assert!(
        e.to_string().starts_with("HTTP/2: the server's response was refused ("),
        "{e}"
    );
    assert!(e.to_string().ends_with(", PROTOCOL_ERROR) and its stream reset"), "{e}");
}

/// A server's GOAWAY is told with the words it gave, quoted.
#[test]
fn a_goaway_is_told_with_the_servers_words() {
    let (port, _) = accept_each(|mut tcp| {
        Box::pin(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut buf = [0u8; 1024];
            // After the request, so that the GOAWAY leaves out a stream that is open.
            if !read_request(&mut tcp).await {
                return;
            }
            let said = b"down for \x01maintenance";
            let mut out = vec![0, 0, 0, 4, 0, 0, 0, 0, 0]; // SETTINGS, empty
            out.extend_from_slice(&[0, 0, 8 + said.len() as u8, 7, 0, 0, 0, 0, 0]); // GOAWAY
            out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]); // last stream 0, NO_ERROR
            out.extend_from_slice(said);
            let _ = tcp.write_all(&out).await;
            while matches!(tcp.read(&mut buf).await, Ok(n) if n > 0) {}
        })
    });
    let c = client(port);
    assert_eq!(
        post_error(&c, port),
        r#"HTTP/2: the server ended the connection (GOAWAY, NO_ERROR: "down for \x01maintenance")"#
    );
}

/// A response head over the size mcpc allows is refused here, said so, and the
/// request, which the server did process, is not sent again.
#[test]
fn a_response_head_too_large_is_not_a_refusal() {
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let (port, conns) = server(Arc::new(move |_, mut respond| {
        count.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let big = "x".repeat(MAX_HEADERS as usize + 1024);
            let resp = Response::builder().header("x-big", big).body(()).unwrap();
            let _ = respond.send_response(resp, true);
        })
    }));
    let c = client(port);
    let e = post_error(&c, port);
    assert!(e.starts_with("HTTP/2: the server's response was refused ("), "{e}");
    assert_eq!(served.load(Ordering::SeqCst), 1, "a processed request was sent again");
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}

#[test]
fn request_heads_become_http2_requests() {
    let c = client(8080);
    let head = b"POST /mcp?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nconnection: keep-alive\r\nte: gzip\r\n\
                 mcp-session-id: s1\r\nauthorization: Bearer t\r\naccept: a, b\r\n";
    let req = request_for(&c.request_of(&Method::POST, head).unwrap(), 7);
    assert_eq!(req.uri().to_string(), "http://127.0.0.1:8080/mcp?x=1");
    assert_eq!(req.version(), http::Version::HTTP_2);
    let names: Vec<&str> = req.headers().keys().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        ["mcp-session-id", "authorization", "accept", "content-length"],
        "host, connection and te: gzip are left out"
    );
    assert_eq!(req.headers()["accept"], "a, b");
    assert_eq!(req.headers()["content-length"], "7");
    assert!(c
        .request_of(&Method::POST, b"POST /mcp HTTP/1.1\r\nno colon\r\n")
        .is_err());
    // A head sent again is built from the kept request, with its own length: a
    // POST always has one, a GET only with a body (never the head's own).
    let get = b"GET /other HTTP/1.1\r\naccept: x\r\ncontent-length: 5\r\n";
    let cases = [
        (Method::POST, 7, &head[..], Some("7")),
        (Method::POST, 9, &head[..], Some("9")),
        (Method::POST, 0, &head[..], Some("0")),
        (Method::GET, 3, get, Some("3")),
        (Method::GET, 0, get, None),
    ];
    for (method, len, head, want) in cases {
        let kept = request_for(&c.request_kept(&method, head).unwrap(), len);
        let fresh = request_for(&c.request_of(&method, head).unwrap(), len);
        assert_eq!(kept.method(), fresh.method());
        assert_eq!(kept.uri(), fresh.uri());
        assert_eq!(kept.headers(), fresh.headers());
        let length = kept.headers().get_all("content-length").iter();
        assert_eq!(
            length.map(|v| v.to_str().unwrap()).collect::<Vec<_>>(),
            Vec::from_iter(want)
        );
    }
}

// A caller's thread claims and parks a connection only on Linux.
#[cfg(target_os = "linux")]
mod parking;
