//! The claim and the parked connection (`driven`): sequential calls on a caller's
//! thread, what takes a parked connection up, and what keeps one from being parked.

use super::*;

/// An echo server whose connection is dropped, without a GOAWAY, at each message
/// on the first channel; the second says when it is closed.
fn server_dropping() -> (
    u16,
    Arc<AtomicUsize>,
    mpsc::UnboundedSender<()>,
    mpsc::UnboundedReceiver<()>,
) {
    let (drop_tx, drop_rx) = mpsc::unbounded_channel::<()>();
    let (done_tx, done) = mpsc::unbounded_channel();
    let drops = Arc::new(tokio::sync::Mutex::new(drop_rx));
    let (port, conns) = accept_each(move |tcp| {
        let (drops, done) = (drops.clone(), done_tx.clone());
        Box::pin(async move {
            let Ok(mut conn) = h2::server::handshake(tcp).await else {
                return;
            };
            let mut drops = drops.lock().await;
            loop {
                tokio::select! {
                    got = conn.accept() => match got {
                        Some(Ok((req, respond))) => {
                            tokio::spawn(echo()(req, respond));
                        }
                        _ => return,
                    },
                    _ = drops.recv() => break,
                }
            }
            drop(conn);
            let _ = done.send(());
        })
    });
    (port, conns, drop_tx, done)
}

/// Whether the connection is parked (see `driven`).
fn parked(c: &Client) -> bool {
    let slot = c.conn.try_lock().unwrap();
    slot.as_ref().is_some_and(|(_, d)| d.is_parked())
}

/// One call on this thread as a blocked caller's runs: it drives the connection.
fn call_here(c: &Client, port: u16, body: &[u8]) -> Vec<u8> {
    crate::drive::here::block_here(async {
        let mut r = post(c, port, "/mcp", body).await;
        r.rest().await.unwrap().to_vec()
    })
}

/// Sequential calls on a caller's thread leave the connection parked between
/// them (no task woken); a call from the runtime takes it up again, and the calls
/// after it park it again, all on one connection.
#[test]
fn sequential_calls_park_the_connection_between_them() {
    let (port, conns) = server(echo());
    let c = Arc::new(client(port));
    let mut task_polls = 0;
    for i in 0..20 {
        let body = format!("{{\"n\":{i}}}");
        assert_eq!(call_here(&c, port, body.as_bytes()), body.as_bytes());
        assert!(parked(&c), "parked after call {i}");
        let polls = c.conn.try_lock().unwrap().as_ref().unwrap().1.task_polls();
        if i > 0 {
            assert_eq!(polls, task_polls, "the task woken by call {i}");
        }
        task_polls = polls;
    }
    let async_call = {
        let c = c.clone();
        handle().spawn(async move {
            let mut r = post(&c, port, "/mcp", b"{\"on\":\"runtime\"}").await;
            r.rest().await.unwrap().to_vec()
        })
    };
    let got = handle().block_on(async_call).unwrap();
    assert_eq!(got, b"{\"on\":\"runtime\"}");
    assert!(!parked(&c), "taken up by the call from the runtime");
    assert_eq!(call_here(&c, port, b"{}"), b"{}");
    assert!(parked(&c));
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}

/// A request made on a caller's thread while its earlier reply, which holds the
/// claim, is kept unread (as a 404 is while the session is renewed): the thread
/// drives the connection for the later request too.
#[test]
fn a_request_beside_a_kept_claimed_reply_goes_through() {
    let (port, _) = server(echo());
    let c = Arc::new(client(port));
    let (done_tx, done) = std::sync::mpsc::channel();
    let caller = c.clone();
    std::thread::spawn(move || {
        let got = crate::drive::here::block_here(async {
            let mut first = post(&caller, port, "/mcp", b"{\"n\":1}").await;
            let mut second = post(&caller, port, "/mcp", b"{\"n\":2}").await;
            let two = second.rest().await.unwrap().to_vec();
            let one = first.rest().await.unwrap().to_vec();
            (one, two)
        });
        done_tx.send(got).unwrap();
    });
    let got = done
        .recv_timeout(Duration::from_secs(10))
        .expect("the second request stalled");
    assert_eq!(got, (b"{\"n\":1}".to_vec(), b"{\"n\":2}".to_vec()));
}

/// A request from the runtime while a caller's thread holds the claim and waits
/// for a slow answer: it is handed to that thread, which sends it and reads its
/// answer at once, not when its own answer comes.
#[test]
fn a_request_beside_a_waiting_claim_is_sent_at_once() {
    let (release_tx, release) = std::sync::mpsc::channel::<()>();
    let release = Arc::new(std::sync::Mutex::new(release));
    let (arrived_tx, arrived) = std::sync::mpsc::channel::<()>();
    let answer: Answer = Arc::new(move |req, respond| {
        let release = release.clone();
        let arrived = arrived_tx.clone();
        Box::pin(async move {
            if req.uri().path() == "/slow" {
                arrived.send(()).unwrap();
                // Held until the test lets it go (off the runtime's threads).
                tokio::task::spawn_blocking(move || release.lock().unwrap().recv().unwrap())
                    .await
                    .unwrap();
            }
            let mut respond = respond;
            let resp = Response::builder().body(()).unwrap();
            let mut out = respond.send_response(resp, false).unwrap();
            out.send_data(Bytes::from(req.uri().path().to_string()), true).unwrap();
        })
    });
    let (port, _) = server(answer);
    let c = Arc::new(client(port));
    // The connection settled first (the server's SETTINGS in and acknowledged), so
    // that nothing but the hand-over may wake the waiting thread.
    assert_eq!(call_path_here(&c, port, "/warm"), b"/warm");
    let caller = c.clone();
    let slow = std::thread::spawn(move || call_path_here(&caller, port, "/slow"));
    arrived.recv_timeout(Duration::from_secs(10)).unwrap();
    let fast = handle().block_on(async {
        let call = async {
            let mut r = post(&c, port, "/fast", b"{}").await;
            r.rest().await.unwrap().to_vec()
        };
        tokio::time::timeout(Duration::from_secs(10), call).await
    });
    // The slow answer is let go only now: before, the fast one had to come alone.
    release_tx.send(()).unwrap();
    assert_eq!(fast.expect("the request waited for the claim's answer"), b"/fast");
    assert_eq!(slow.join().unwrap(), b"/slow");
}

/// One call to `path` on this thread as a blocked caller's runs.
fn call_path_here(c: &Client, port: u16, path: &str) -> Vec<u8> {
    crate::drive::here::block_here(async {
        let mut r = post(c, port, path, b"{}").await;
        r.rest().await.unwrap().to_vec()
    })
}

/// A connection closed by the client (`close_idle`) while a caller's claimed reply
/// is read is not parked at the reply's end: the task polls it to its close.
#[test]
fn a_connection_closed_under_a_claim_is_not_parked() {
    let (port, conns, mut ended) = server_watched(echo(), usize::MAX);
    let c = client(port);
    let driven = crate::drive::here::block_here(async {
        let mut r = post(&c, port, "/mcp", b"{}").await;
        let driven = c.conn.try_lock().unwrap().as_ref().unwrap().1.clone();
        c.close_idle();
        assert_eq!(r.rest().await.unwrap(), b"{}");
        driven
    });
    assert!(!driven.is_parked());
    handle().block_on(async {
        let wait = Duration::from_secs(10);
        tokio::time::timeout(wait, ended.recv())
            .await
            .expect("the connection closed");
    });
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}

/// A caller's thread that takes up a parked connection claims it even when another
/// request started meanwhile (which, finding it taken up, does not claim it): else
/// nothing would drive the connection.
#[test]
fn who_takes_up_a_parked_connection_drives_it() {
    let (port, _) = server(echo());
    let c = client(port);
    assert_eq!(call_here(&c, port, b"{}"), b"{}");
    assert!(parked(&c));
    let driven = c.conn.try_lock().unwrap().as_ref().unwrap().1.clone();
    crate::drive::here::block_here(async {
        let mut first = Wait::new(driven.clone());
        let mut second = Wait::new(driven.clone());
        second.claim();
        first.claim();
        assert!(
            driven.driven_by_a_caller(),
            "the parked connection was taken up by nobody"
        );
        drop((first, second));
    });
    assert!(!driven.driven_by_a_caller());
    assert_eq!(call_here(&c, port, b"{\"after\":1}"), b"{\"after\":1}");
}

/// Many callers' threads starting at once on a parked connection: the first takes
/// it up and drives it, whatever the others do meanwhile, and every call ends.
#[test]
fn callers_that_start_at_once_on_a_parked_connection_all_end() {
    let (port, conns) = server(echo());
    let c = Arc::new(client(port));
    for round in 0..20 {
        assert_eq!(call_here(&c, port, b"{}"), b"{}");
        assert!(parked(&c));
        let start = Arc::new(std::sync::Barrier::new(8));
        let (done_tx, done) = std::sync::mpsc::channel();
        for i in 0..8 {
            let (c, start, done) = (c.clone(), start.clone(), done_tx.clone());
            std::thread::spawn(move || {
                let body = format!("{{\"round\":{round},\"n\":{i}}}");
                start.wait();
                let got = call_here(&c, port, body.as_bytes());
                done.send(got == body.as_bytes()).unwrap();
            });
        }
        for _ in 0..8 {
            let ok = done.recv_timeout(Duration::from_secs(10));
            assert_eq!(ok, Ok(true), "round {round}: a call stalled or came back wrong");
        }
    }
    assert_eq!(conns.load(Ordering::SeqCst), 1);
}

/// A parked connection the server sent away (GOAWAY, then closed) is found so by
/// the next call, which goes on a new one; a client dropped with its connection
/// parked closes it.
#[test]
fn a_parked_connection_gone_away_is_replaced_and_closed_at_the_end() {
    let (port, conns, mut ended) = server_watched(echo(), 1);
    let c = client(port);
    for i in 0..4 {
        let body = format!("{{\"n\":{i}}}");
        assert_eq!(call_here(&c, port, body.as_bytes()), body.as_bytes());
    }
    assert_eq!(conns.load(Ordering::SeqCst), 4, "one connection a call");
    let (port, _, mut ended_here) = server_watched(echo(), usize::MAX);
    let c2 = client(port);
    assert_eq!(call_here(&c2, port, b"{}"), b"{}");
    assert!(parked(&c2));
    drop((c, c2));
    handle().block_on(async {
        let wait = Duration::from_secs(10);
        tokio::time::timeout(wait, ended_here.recv())
            .await
            .expect("the parked connection closed");
        for _ in 0..4 {
            tokio::time::timeout(wait, ended.recv())
                .await
                .expect("every connection closed");
        }
    });
}

/// A parked connection whose server closed it without a word (no GOAWAY) is found
/// closed before the next call goes out on it: that call goes on a new one.
#[test]
fn a_parked_connection_closed_meanwhile_is_replaced() {
    let (port, conns, drop_conn, mut dropped) = server_dropping();
    let c = client(port);
    for i in 0..3 {
        let body = format!("{{\"n\":{i}}}");
        assert_eq!(call_here(&c, port, body.as_bytes()), body.as_bytes());
        assert!(parked(&c));
        drop_conn.send(()).unwrap();
        handle().block_on(dropped.recv()).unwrap();
    }
    assert_eq!(call_here(&c, port, b"{}"), b"{}");
    assert_eq!(
        conns.load(Ordering::SeqCst),
        4,
        "a connection for each call after a close"
    );
}
