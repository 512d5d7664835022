//! Before 2026-07-28: the server's own requests (on stdio, a POST's SSE stream or the
//! standalone GET stream), answered with a JSON-RPC response whenever the host
//! answers, or with an error at the client's timeout.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;

use super::{hand_over, Handlers, Outcome, Pending, MAX_OUTSTANDING, TIMED_OUT};
use crate::error::{Error, Status};
use crate::jsonrpc::{self, INVALID_PARAMS};
use crate::transport::{Outgoing, Transport};

/// What the router needs to serve input requests: the handlers, and where answers go.
pub(crate) struct Inbox {
    pub(crate) handlers: Handlers,
    timeout: Duration,
    /// Who asks, as the host is shown it.
    server: Mutex<String>,
    /// The transport answers go out on (weak: the transport holds the router).
    transport: Mutex<Option<Weak<dyn Transport>>>,
    /// Requests handed to the host and not yet answered.
    outstanding: Arc<AtomicUsize>,
}

/// What became of a server request.
pub(crate) enum Served {
    /// Handed to the host, who answers later.
    Handed,
    /// Answered at once (a malformed request).
    Reply(Outgoing),
}

impl Inbox {
    pub(crate) fn new(handlers: Handlers, timeout: Duration) -> Arc<Self> {
        Arc::new(Inbox {
            handlers,
            timeout,
            server: Mutex::new(String::new()),
            transport: Mutex::new(None),
            outstanding: Arc::new(AtomicUsize::new(0)),
        })
    }

    pub(crate) fn set_transport(&self, t: &Arc<dyn Transport>) {
        *self.transport.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::downgrade(t));
    }

    pub(crate) fn set_server(&self, init_result: &str) {
        *self.server.lock().unwrap_or_else(|p| p.into_inner()) = server_name(init_result);
    }

    pub(crate) fn server(&self) -> String {
        self.server.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Serves a request whose method has a handler (see [`Handlers::for_method`]).
    pub(crate) fn serve(&self, id: &RawValue, method: &str, params: Option<&RawValue>) -> Served {
        let request = match self.handlers.read(method, params, &self.server()) {
            Ok(r) => r,
            Err(why) => {
                log::warn!("refused the server's {method}: {why}");
                let body = jsonrpc::encode_response(id, Err((INVALID_PARAMS, &why)));
                return Served::Reply(Outgoing::response(body));
            }
        };
        if self.outstanding.fetch_add(1, Ordering::AcqRel) >= MAX_OUTSTANDING {
            self.outstanding.fetch_sub(1, Ordering::AcqRel);
            log::warn!("refused the server's {method}: {MAX_OUTSTANDING} requests are waiting for the host");
            let why = format!("the client already has {MAX_OUTSTANDING} requests waiting for an answer");
            let body = jsonrpc::encode_response(id, Err((-32603, &why)));
            return Served::Reply(Outgoing::response(body));
        }
        let outstanding = self.outstanding.clone();
        let handler = self
            .handlers
            .for_method(method)
            .expect("served only with a handler")
            .clone();
        let id = id.to_owned();
        let transport = self.transport.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let pending = Pending::new(
            request,
            Box::new(move |outcome| {
                outstanding.fetch_sub(1, Ordering::AcqRel);
                let body = match &outcome {
                    Outcome::Result(v) => {
                        let raw = serde_json::value::to_raw_value(v).expect("a JSON value serializes");
                        jsonrpc::encode_response(&id, Ok(&raw))
                    }
                    Outcome::Error(code, msg) => jsonrpc::encode_response(&id, Err((*code, msg))),
                };
                let t = transport
                    .as_ref()
                    .and_then(Weak::upgrade)
                    .ok_or_else(|| Error::new(Status::MCPC_ERR_CLOSED, "the client was freed"))?;
                t.send(Outgoing::response(body))
            }),
        );
        let slot = pending.downgrade();
        let timeout = self.timeout;
        crate::drive::runtime::handle().spawn(async move {
            tokio::time::sleep(timeout).await;
            if let Some(s) = slot.upgrade() {
                Pending(s).expire(TIMED_OUT);
            }
        });
        hand_over(&handler, pending);
        Served::Handed
    }
}

/// The name a server gave itself: `serverInfo` of `initialize`, or the `_meta` of
/// `server/discover`; its `title` when it has one.
pub(crate) fn server_name(init_result: &str) -> String {
    let v: Value = serde_json::from_str(init_result).unwrap_or(Value::Null);
    let info = [
        v.get("serverInfo"),
        v.pointer("/_meta/serverInfo"),
        v.get("_meta").and_then(|m| m.get("io.modelcontextprotocol/serverInfo")),
    ]
    .into_iter()
    .flatten()
    .next();
    info.and_then(|i| i.get("title").or_else(|| i.get("name")))
        .and_then(Value::as_str)
        .unwrap_or("the server")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outstanding_requests_are_bounded() {
        use std::sync::mpsc;
        let (tx, rx) = mpsc::channel::<Pending>();
        let tx = Mutex::new(tx);
        let handler: super::super::Handler = Arc::new(move |p| tx.lock().unwrap().send(p).unwrap());
        let inbox = Inbox::new(
            Handlers {
                roots: Some(handler),
                ..Handlers::default()
            },
            Duration::from_secs(60),
        );
        let id = RawValue::from_string("1".into()).unwrap();
        let mut kept = Vec::new();
        for _ in 0..MAX_OUTSTANDING {
            assert!(matches!(inbox.serve(&id, super::super::ROOTS, None), Served::Handed));
            kept.push(rx.recv().unwrap());
        }
        match inbox.serve(&id, super::super::ROOTS, None) {
            Served::Reply(r) => assert!(String::from_utf8_lossy(&r.body).contains("-32603")),
            Served::Handed => panic!("over the bound"),
        }
        // An answer (here: letting go) makes room again.
        drop(kept.pop());
        assert!(matches!(inbox.serve(&id, super::super::ROOTS, None), Served::Handed));
    }

    #[test]
    fn names_the_server() {
        assert_eq!(server_name(r#"{"serverInfo":{"name":"a","version":"1"}}"#), "a");
        assert_eq!(
            server_name(r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b","title":"B"}}}"#),
            "B"
        );
        assert_eq!(server_name("{}"), "the server");
    }
}
