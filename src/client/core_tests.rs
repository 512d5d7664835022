//! The client core against an in-memory transport, below the C layer: the router,
//! the deadline queue and direct calls. A change to the core fails here before any
//! C test runs.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::router::Reply;
use super::{read_tool, Ask, Call, Client, Control, Options};
use crate::drive::runtime;
use crate::error::{Result, Status};
use crate::protocol::Negotiation;
use crate::result::{parse_arguments, Arguments, CallResult};
use crate::transport::{BoxFuture, Delivered, Delivery, Outgoing, SinkRef, Transport};

/// How the in-memory server answers one message: the messages it sends back.
type Script = dyn Fn(&Value) -> Vec<String> + Send + Sync;

/// A transport whose peer is a closure: each message sent is recorded, and what
/// the closure answers is delivered from a runtime task, as a real transport's
/// reader would.
struct Memory {
    sink: SinkRef,
    script: Arc<Script>,
    sent: Arc<Mutex<Vec<Value>>>,
}

impl Transport for Memory {
    fn send(&self, msg: Outgoing) -> Result<()> {
        let value: Value = serde_json::from_slice(&msg.body).expect("the client sends JSON");
        let replies = (self.script)(&value);
        self.sent.lock().unwrap().push(value);
        let sink = self.sink.clone();
        let sent = self.sent.clone();
        runtime::handle().spawn(async move {
            for r in replies {
                if let Ok(Delivered::Reply(reply)) = sink.deliver(Delivery::any(r.as_bytes(), None)) {
                    sent.lock().unwrap().push(serde_json::from_slice(&reply.body).unwrap());
                }
            }
        });
        Ok(())
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// The answers of a server of the `initialize` revisions with one tool, `echo`;
/// `slow` is never answered.
fn server(extra: impl Fn(&Value) -> Vec<String> + Send + Sync + 'static) -> Arc<Script> {
    Arc::new(move |m: &Value| {
        let id = &m["id"];
        match m["method"].as_str() {
            Some("initialize") => vec![format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-11-25","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"memory","version":"1"}}}}}}"#
            )],
            Some("tools/list") => vec![format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{{"name":"echo","inputSchema":{{"type":"object"}}}}]}}}}"#
            )],
            Some("tools/call") if m["params"]["name"] == "echo" => vec![format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"hi"}}]}}}}"#
            )],
            _ => extra(m),
        }
    })
}

fn connect(
    script: Arc<Script>,
    on_notification: Option<super::NotificationFn>,
) -> (Arc<Client>, Arc<Mutex<Vec<Value>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let recorded = sent.clone();
    let connector = move |sink: SinkRef| -> Result<Arc<dyn Transport>> {
        Ok(Arc::new(Memory {
            sink,
            script: script.clone(),
            sent: recorded.clone(),
        }))
    };
    let options = Options {
        negotiation: Negotiation::Legacy,
        timeout: Duration::from_secs(10),
        on_notification,
        ..Options::default()
    };
    let client = runtime::block_on(Client::connect(&connector, options, &Control::default()))
        .expect("not a runtime thread")
        .expect("connected");
    (Arc::new(client), sent)
}

/// The methods the client sent, in order, with the request ids they name.
fn sent_methods(sent: &Mutex<Vec<Value>>) -> Vec<(String, Value)> {
    sent.lock()
        .unwrap()
        .iter()
        .map(|m| {
            let id = if m["method"] == "notifications/cancelled" {
                m["params"]["requestId"].clone()
            } else {
                m["id"].clone()
            };
            (m["method"].as_str().unwrap_or("response").to_string(), id)
        })
        .collect()
}

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn responses_reach_their_requests_and_the_rest_is_routed() {
    let notes = Arc::new(Mutex::new(Vec::new()));
    let seen = notes.clone();
    let on_note: super::NotificationFn = Arc::new(move |method: &str, params: Option<&str>| {
        seen.lock()
            .unwrap()
            .push((method.to_string(), params.map(str::to_string)));
    });
    // With the listing's answer: a response to an id nobody asked for, a
    // notification and a server request, before the real response.
    let (client, sent) = connect(
        server(|m| match m["method"].as_str() {
            Some("tools/call") => vec![
                r#"{"jsonrpc":"2.0","id":9999,"result":{}}"#.into(),
                r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#.into(),
                r#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#.into(),
                format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[{{"type":"text","text":"late"}}]}}}}"#,
                    m["id"]
                ),
            ],
            _ => vec![],
        }),
        Some(on_note),
    );
    let tools = runtime::block_on(client.list_tools(&Control::default()))
        .unwrap()
        .unwrap();
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["echo"]);
    let args = parse_arguments(Some("{}")).unwrap();
    let r = runtime::block_on(call_tool(&client, "other", args, &Control::default()))
        .unwrap()
        .unwrap();
    assert_eq!(r.text_blocks().as_slice(), ["late\0"]);
    assert_eq!(
        notes.lock().unwrap().as_slice(),
        [(
            "notifications/message".to_string(),
            Some(r#"{"level":"info","data":"x"}"#.to_string())
        )]
    );
    // The ping was answered, with its own id, before the response came.
    let answered = sent
        .lock()
        .unwrap()
        .iter()
        .any(|m| m["id"] == "p1" && m["result"] == serde_json::json!({}));
    assert!(answered, "{:?}", sent.lock().unwrap());
}

/// Starts a direct call of `name` with `timeout`; its outcome goes to `tx` with `tag`.
fn direct(
    client: &Client,
    name: &str,
    timeout: Duration,
    tag: &'static str,
    tx: &mpsc::Sender<(&'static str, Result<CallResult>)>,
) -> super::direct::DirectCall {
    let ctl = Control {
        timeout: Some(timeout),
        ..Control::default()
    };
    assert!(client.can_call_direct(&ctl));
    let tx = tx.clone();
    let owned = name.to_string();
    let reply = Reply::Call(Box::new(move |outcome| {
        let _ = tx.send((tag, read_tool(outcome, &owned)));
    }));
    let ask = Ask::Tool { name, arguments: None };
    super::direct::DirectCall::new(client.start_direct(ask, &ctl, reply), client)
}

/// Calls tool `name` on the general path (no direct call).
async fn call_tool(client: &Client, name: &str, arguments: Option<Arguments<'_>>, ctl: &Control) -> Result<CallResult> {
    read_tool(Call::new(client, Ask::Tool { name, arguments }, ctl).run().await, name)
}

#[test]
fn direct_calls_time_out_in_deadline_order_and_send_cancelled() {
    let (client, sent) = connect(server(|_| vec![]), None);
    let (tx, rx) = mpsc::channel();
    let _long = direct(&client, "slow", Duration::from_millis(600), "long", &tx);
    let _short = direct(&client, "slow", Duration::from_millis(100), "short", &tx);
    let _echo = direct(&client, "echo", Duration::from_secs(10), "echo", &tx);
    let mut order = Vec::new();
    for _ in 0..3 {
        let (tag, outcome) = rx.recv_timeout(WAIT).expect("every call completes");
        match tag {
            "echo" => assert_eq!(outcome.unwrap().text_blocks().as_slice(), ["hi\0"]),
            _ => assert_eq!(outcome.unwrap_err().status, Status::MCPC_ERR_TIMEOUT),
        }
        order.push(tag);
    }
    assert_eq!(order, ["echo", "short", "long"]);
    assert!(
        rx.recv_timeout(Duration::from_millis(50)).is_err(),
        "one completion each"
    );
    // Each timed-out request was cancelled at the server, the shorter one first.
    let methods = sent_methods(&sent);
    let calls: Vec<&Value> = methods
        .iter()
        .filter(|(m, _)| m == "tools/call")
        .map(|(_, id)| id)
        .collect();
    let cancels: Vec<&Value> = methods
        .iter()
        .filter(|(m, _)| m == "notifications/cancelled")
        .map(|(_, id)| id)
        .collect();
    assert_eq!(cancels, [calls[1], calls[0]], "{methods:?}");
}

#[test]
fn a_cancelled_direct_call_completes_once() {
    // The server answers a cancelled request anyway, late: the answer is dropped.
    let answered = Arc::new(Mutex::new(None::<Value>));
    let keep = answered.clone();
    let (client, sent) = connect(
        server(move |m| {
            if m["method"] == "tools/call" {
                *keep.lock().unwrap() = Some(m["id"].clone());
            }
            if m["method"] == "notifications/cancelled" {
                return vec![format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[]}}}}"#,
                    m["params"]["requestId"]
                )];
            }
            vec![]
        }),
        None,
    );
    let (tx, rx) = mpsc::channel();
    let call = direct(&client, "slow", Duration::from_secs(10), "slow", &tx);
    call.cancel();
    call.cancel();
    let (_, outcome) = rx.recv_timeout(WAIT).expect("the call completes");
    assert_eq!(outcome.unwrap_err().status, Status::MCPC_ERR_CANCELLED);
    // A call after it still works, and the late answer never completed the first twice.
    let _echo = direct(&client, "echo", Duration::from_secs(10), "echo", &tx);
    let (tag, outcome) = rx.recv_timeout(WAIT).expect("the next call completes");
    assert_eq!((tag, outcome.is_ok()), ("echo", true));
    assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
    let id = answered.lock().unwrap().clone().expect("the call was sent");
    let cancels = sent_methods(&sent)
        .into_iter()
        .filter(|(m, _)| m == "notifications/cancelled")
        .map(|(_, i)| i)
        .collect::<Vec<_>>();
    assert_eq!(cancels, [id], "one cancel, for the call");
}

#[test]
fn close_fails_what_is_in_flight_and_refuses_what_comes_after() {
    let (client, _sent) = connect(server(|_| vec![]), None);
    let (tx, rx) = mpsc::channel();
    let _slow = direct(&client, "slow", Duration::from_secs(10), "slow", &tx);
    runtime::block_on(client.close()).unwrap();
    let (_, outcome) = rx.recv_timeout(WAIT).expect("close ends the call");
    assert_eq!(outcome.unwrap_err().status, Status::MCPC_ERR_CLOSED);
    assert!(client.is_closed());
    let after = runtime::block_on(client.list_tools(&Control::default())).unwrap();
    assert_eq!(after.unwrap_err().status, Status::MCPC_ERR_CLOSED);
}

#[test]
fn a_malformed_response_fails_its_request_at_once() {
    // Each malformed answer is followed by a valid one to the same id, which comes
    // too late; one with an id nobody asked for is only dropped.
    let (client, _sent) = connect(
        server(|m| {
            let id = &m["id"];
            let valid = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[]}}}}"#);
            let bad = match m["params"]["name"].as_str() {
                Some("both") => {
                    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}},"error":{{"code":1,"message":"x"}}}}"#)
                }
                Some("neither") => format!(r#"{{"jsonrpc":"2.0","id":{id}}}"#),
                _ => return vec![],
            };
            vec![r#"{"jsonrpc":"2.0","id":987654}"#.into(), bad, valid]
        }),
        None,
    );
    let ctl = Control {
        timeout: Some(Duration::from_secs(30)),
        ..Control::default()
    };
    for (name, why) in [
        ("both", "carries both result and error"),
        ("neither", "carries neither result nor error"),
    ] {
        let started = std::time::Instant::now();
        let args = parse_arguments(Some("{}")).unwrap();
        let err = runtime::block_on(call_tool(&client, name, args, &ctl))
            .unwrap()
            .unwrap_err();
        assert_eq!(err.status, Status::MCPC_ERR_PROTOCOL, "{}", err.message);
        assert!(err.message.contains(why), "{}", err.message);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "at once, not at the timeout"
        );
        // The same for a direct call.
        let (tx, rx) = mpsc::channel();
        let _call = direct(&client, name, Duration::from_secs(30), "direct", &tx);
        let (_, outcome) = rx.recv_timeout(WAIT).expect("the call completes");
        let err = outcome.unwrap_err();
        assert_eq!(err.status, Status::MCPC_ERR_PROTOCOL);
        assert!(err.message.contains(why), "{}", err.message);
        // The late valid response completed nothing a second time.
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        let args = parse_arguments(Some("{}")).unwrap();
        let ok = runtime::block_on(call_tool(&client, "echo", args, &ctl))
            .unwrap()
            .unwrap();
        assert_eq!(ok.text_blocks().as_slice(), ["hi\0"]);
    }
}
