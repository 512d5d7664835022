//! Negotiation against in-memory servers of each generation that start late or
//! answer the probe late: no timing may end in a wrong version, and the connect
//! timeout bounds the whole.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::{Client, Control, Options};
use crate::drive::runtime;
use crate::error::{Result, Status};
use crate::protocol::Negotiation;
use crate::transport::{BoxFuture, Delivery, Outgoing, SinkRef, Transport};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Era {
    /// Answers the probe -32601, as most older servers do.
    Legacy,
    /// An older server that never answers the probe.
    SilentLegacy,
    /// 2026-07-28 only: refuses `initialize` with -32022.
    Modern,
    /// 2026-07-28 only, and loses the first probe.
    ModernLosesFirstProbe,
    /// Both generations.
    Dual,
    /// Answers nothing at all.
    Mute,
}

/// How the server behaves: what it speaks, when it starts reading, and how late
/// it answers the probe.
#[derive(Clone, Copy, Debug)]
struct Server {
    era: Era,
    start: Duration,
    probe_late: Duration,
}

/// A transport whose peer reads nothing until its start, then answers each
/// message in order (the probe, maybe, later); it records what it received.
struct Staged {
    queue: mpsc::UnboundedSender<Value>,
}

impl Transport for Staged {
    fn send(&self, msg: Outgoing) -> Result<()> {
        let _ = self
            .queue
            .send(serde_json::from_slice(&msg.body).expect("the client sends JSON"));
        Ok(())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

fn answer(server: Server, m: &Value, probes_seen: usize) -> Option<String> {
    let id = &m["id"];
    let refuse = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32022,"message":"Unsupported protocol version","data":{{"supported":["2026-07-28"]}}}}}}"#
    );
    let init_ok = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{}},"serverInfo":{{"name":"staged","version":"1"}}}}}}"#
    );
    let discover_ok = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{{}}}}}}"#
    );
    let not_found = format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"Method not found"}}}}"#);
    match (server.era, m["method"].as_str()?) {
        (Era::Mute, _) | (Era::SilentLegacy, "server/discover") => None,
        (Era::ModernLosesFirstProbe, "server/discover") if probes_seen == 1 => None,
        (Era::Legacy, "server/discover") => Some(not_found),
        (Era::Modern | Era::ModernLosesFirstProbe | Era::Dual, "server/discover") => Some(discover_ok),
        (Era::Modern | Era::ModernLosesFirstProbe, "initialize") => Some(refuse),
        (_, "initialize") => Some(init_ok),
        _ => None,
    }
}

/// Connects to `server` with this probe window and connect timeout; gives the
/// outcome, how long it took, and the methods the server received.
fn connect(server: Server, window: Duration, timeout: Duration) -> (Result<Client>, Duration, Vec<String>) {
    let received = Arc::new(Mutex::new(Vec::new()));
    let seen = received.clone();
    let connector = move |sink: SinkRef| -> Result<Arc<dyn Transport>> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let seen = seen.clone();
        runtime::handle().spawn(async move {
            tokio::time::sleep(server.start).await;
            let mut probes = 0;
            while let Some(m) = rx.recv().await {
                let method = m["method"].as_str().unwrap_or("").to_string();
                probes += usize::from(method == "server/discover");
                seen.lock().unwrap().push(method.clone());
                let Some(reply) = answer(server, &m, probes) else {
                    continue;
                };
                let sink = sink.clone();
                let late = if method == "server/discover" {
                    server.probe_late
                } else {
                    Duration::ZERO
                };
                let deliver = move || {
                    let _ = sink.deliver(Delivery::any(reply.as_bytes(), None));
                };
                if late.is_zero() {
                    deliver();
                } else {
                    runtime::handle().spawn(async move {
                        tokio::time::sleep(late).await;
                        deliver();
                    });
                }
            }
        });
        Ok(Arc::new(Staged { queue: tx }))
    };
    let options = Options {
        negotiation: Negotiation::Auto,
        timeout,
        probe_window: window,
        ..Options::default()
    };
    let started = Instant::now();
    let outcome =
        runtime::block_on(Client::connect(&connector, options, &Control::default())).expect("not a runtime thread");
    let took = started.elapsed();
    let methods = received.lock().unwrap().clone();
    (outcome, took, methods)
}

const WINDOW: Duration = Duration::from_millis(150);
const TIMEOUT: Duration = Duration::from_secs(5);

fn expect_version(server: Server, version: &str, how: &str) {
    let (outcome, _, methods) = connect(server, WINDOW, TIMEOUT);
    let client = outcome.unwrap_or_else(|e| panic!("{server:?}: {} ({methods:?})", e.message));
    assert_eq!(
        (client.session.version.as_str(), client.session.negotiated_by),
        (version, how),
        "{server:?}: {methods:?}"
    );
    assert_eq!(client.is_modern(), version == "2026-07-28");
}

#[test]
fn each_generation_is_spoken_to_in_its_version_whenever_it_starts() {
    for start in [Duration::ZERO, Duration::from_millis(1200)] {
        let at = |era| Server {
            era,
            start,
            probe_late: Duration::ZERO,
        };
        expect_version(at(Era::Legacy), "2025-11-25", "fallback");
        expect_version(at(Era::SilentLegacy), "2025-11-25", "fallback");
        expect_version(at(Era::Modern), "2026-07-28", "discover");
        expect_version(at(Era::ModernLosesFirstProbe), "2026-07-28", "discover");
        expect_version(at(Era::Dual), "2026-07-28", "discover");
    }
}

#[test]
fn a_late_answer_to_the_probe_is_still_an_answer() {
    // initialize is refused at once with -32022 listing 2026-07-28, and the probe's
    // answer comes after it: 2026-07-28, not an unsupported version.
    for late in [Duration::from_millis(400), Duration::from_millis(1500)] {
        for era in [Era::Modern, Era::Dual] {
            let server = Server {
                era,
                start: Duration::ZERO,
                probe_late: late,
            };
            let (outcome, _, methods) = connect(server, WINDOW, TIMEOUT);
            let client = outcome.unwrap_or_else(|e| panic!("{server:?}: {} ({methods:?})", e.message));
            if era == Era::Modern {
                assert_eq!(client.session.version, "2026-07-28", "{methods:?}");
                assert!(
                    methods.contains(&"initialize".to_string()),
                    "the fallback went out: {methods:?}"
                );
            } else {
                // A dual server's initialize result comes first: its older version is a right outcome too.
                assert!(["2026-07-28", "2025-11-25"].contains(&client.session.version.as_str()));
            }
        }
    }
}

#[test]
fn the_connect_timeout_bounds_the_whole() {
    let timeout = Duration::from_millis(600);
    for era in [Era::Mute, Era::Modern] {
        // Mute never answers; Modern starts after the timeout.
        let server = Server {
            era,
            start: if era == Era::Mute {
                Duration::ZERO
            } else {
                Duration::from_secs(3)
            },
            probe_late: Duration::ZERO,
        };
        let (outcome, took, methods) = connect(server, Duration::from_millis(500), timeout);
        let err = outcome.err().expect("no answer in time");
        assert_eq!(err.status, Status::MCPC_ERR_TIMEOUT, "{}", err.message);
        assert!(took < Duration::from_millis(1000), "{took:?} {methods:?}");
    }
}
