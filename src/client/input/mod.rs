//! Input for the server: elicitation, sampling and roots. The host registers a
//! handler per kind ([`Handlers`]); each request the server makes reaches it as a
//! [`Pending`], which the host answers exactly once, now or later, from any thread.
//!
//! Under 2026-07-28 the requests come as the `inputRequests` of an `input_required`
//! result and their answers go back in the next round ([`rounds`]); before it, they
//! are JSON-RPC requests from the server, answered by a response ([`served`]). Either
//! way a request is checked before the host sees it and an answer before it is sent
//! ([`schema`] for elicitation), and a request nobody answers ends at a deadline.

use std::sync::{Arc, Mutex};

use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::error::{quote, Error, Result, Status};

pub(in crate::client) mod rounds;
pub mod schema;
pub(super) mod served;

/// Most input requests waiting for the host at once: before 2026-07-28 per client
/// (more are refused with an error to the server), under 2026-07-28 per round (more
/// fail the call). A server cannot make the host's queue grow without bound.
pub const MAX_OUTSTANDING: usize = 64;

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `elicitation/create` in form mode: fill in the requested schema.
    ElicitForm,
    /// `elicitation/create` in URL mode: consent to open a URL.
    ElicitUrl,
    /// `sampling/createMessage`.
    Sampling,
    /// `roots/list`.
    Roots,
}

pub const ELICITATION: &str = "elicitation/create";
pub const SAMPLING: &str = "sampling/createMessage";
pub const ROOTS: &str = "roots/list";

/// One request from the server, checked, as the host sees it.
#[derive(Debug)]
pub struct Request {
    pub kind: Kind,
    pub method: &'static str,
    /// The request's `params` as the server sent them (`{}` when it sent none).
    pub params: Box<RawValue>,
    /// The name the server gave itself (its `serverInfo`), to show who asks.
    pub server: String,
    /// The host's name for the server (its configuration's), when a host runs it.
    pub host_server: Option<Arc<str>>,
    /// An elicitation's `message`.
    pub message: Option<String>,
    /// A form's `requestedSchema`, as sent.
    pub schema: Option<Box<RawValue>>,
    /// A URL elicitation's `url`.
    pub url: Option<String>,
    form: Option<schema::Form>,
}

/// Called with each request of its kind; runs on an mcpc blocking-pool thread.
pub type Handler = Arc<dyn Fn(Pending) + Send + Sync>;

/// The host's handlers. A kind without one is not declared as a capability, and its
/// requests are handled as by a client without it.
#[derive(Clone, Default)]
pub struct Handlers {
    pub elicitation: Option<Handler>,
    pub elicit_form: bool,
    pub elicit_url: bool,
    pub sampling: Option<Handler>,
    /// Sampling requests may carry tools.
    pub sampling_tools: bool,
    pub roots: Option<Handler>,
    /// The host's name for the server these handlers answer, when a host runs it.
    pub host_server: Option<Arc<str>>,
}

impl Handlers {
    /// The client capabilities these handlers declare: exactly the kinds that have a
    /// handler. Under 2026-07-28 roots have no `listChanged` (the server asks each round).
    pub fn capabilities(&self, modern: bool) -> Box<RawValue> {
        let mut caps = serde_json::Map::new();
        if self.elicitation.is_some() {
            let mut modes = serde_json::Map::new();
            if self.elicit_form {
                modes.insert("form".into(), json!({}));
            }
            if self.elicit_url {
                modes.insert("url".into(), json!({}));
            }
            caps.insert("elicitation".into(), Value::Object(modes));
        }
        if self.sampling.is_some() {
            let sampling = if self.sampling_tools {
                json!({"tools": {}})
            } else {
                json!({})
            };
            caps.insert("sampling".into(), sampling);
        }
        if self.roots.is_some() {
            let roots = if modern {
                json!({})
            } else {
                json!({"listChanged": true})
            };
            caps.insert("roots".into(), roots);
        }
        let text = serde_json::to_string(&caps).expect("a map of JSON values serializes");
        RawValue::from_string(text).expect("serialized JSON is valid")
    }

    /// True when any handler is registered.
    pub fn any(&self) -> bool {
        self.elicitation.is_some() || self.sampling.is_some() || self.roots.is_some()
    }

    /// The handler for `method`, if one is registered.
    pub fn for_method(&self, method: &str) -> Option<&Handler> {
        match method {
            ELICITATION => self.elicitation.as_ref(),
            SAMPLING => self.sampling.as_ref(),
            ROOTS => self.roots.as_ref(),
            _ => None,
        }
    }

    /// Reads and checks one request of a method that has a handler. `Err` is the
    /// server's mistake (a JSON-RPC error code and message).
    pub fn read(&self, method: &str, params: Option<&RawValue>, server: &str) -> std::result::Result<Request, String> {
        let params: Box<RawValue> = match params {
            Some(p) => p.to_owned(),
            None => RawValue::from_string("{}".into()).expect("static JSON"),
        };
        let value: Value = serde_json::from_str(params.get()).map_err(|e| format!("params are malformed: {e}"))?;
        let Value::Object(obj) = &value else {
            return Err("params are not an object".into());
        };
        let text = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        let mut req = Request {
            kind: Kind::Roots,
            method: ROOTS,
            params,
            server: server.to_string(),
            host_server: self.host_server.clone(),
            message: None,
            schema: None,
            url: None,
            form: None,
        };
        match method {
            ELICITATION => {
                req.method = ELICITATION;
                req.message = Some(text("message").ok_or("the elicitation has no message")?);
                match obj.get("mode").map(|m| m.as_str()) {
                    None | Some(Some("form")) => {
                        if !self.elicit_form {
                            return Err("form elicitation was not declared".into());
                        }
                        let raw = obj.get("requestedSchema").ok_or("the form has no requestedSchema")?;
                        req.form = Some(schema::Form::read(raw)?);
                        req.schema = Some(RawValue::from_string(raw.to_string()).expect("serialized JSON is valid"));
                        req.kind = Kind::ElicitForm;
                    }
                    Some(Some("url")) => {
                        if !self.elicit_url {
                            return Err("URL elicitation was not declared".into());
                        }
                        req.url = Some(text("url").ok_or("the URL elicitation has no url")?);
                        req.kind = Kind::ElicitUrl;
                    }
                    Some(other) => {
                        return Err(format!(
                            "unknown elicitation mode {}",
                            other.map_or_else(|| "(not a string)".into(), quote)
                        ))
                    }
                }
            }
            SAMPLING => {
                req.method = SAMPLING;
                req.kind = Kind::Sampling;
                if !obj.get("messages").is_some_and(Value::is_array) {
                    return Err("the sampling request has no messages array".into());
                }
            }
            ROOTS => {}
            other => return Err(format!("{} is not an input request", quote(other))),
        }
        Ok(req)
    }
}

/// What the host answered (or what stands for its answer).
#[derive(Debug)]
pub enum Outcome {
    Result(Value),
    /// A JSON-RPC error code and message (the host refused, or never answered).
    Error(i64, String),
}

/// Delivers an answer to where the request came from: a response to the server, or
/// the next round of a call.
pub type Responder = Box<dyn FnOnce(Outcome) -> Result<()> + Send>;

enum Answer {
    Open(Responder),
    /// Answered; a later answer fails with this status.
    Done(Status, &'static str),
}

struct Slot {
    request: Request,
    answer: Mutex<Answer>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        // The host let go of a request it never answered: tell the server now rather
        // than at the deadline.
        let answer = std::mem::replace(
            self.answer.get_mut().unwrap_or_else(|p| p.into_inner()),
            Answer::Done(Status::MCPC_ERR_CLOSED, ""),
        );
        if let Answer::Open(respond) = answer {
            let _ = respond(Outcome::Error(
                REFUSED,
                "the client dropped the request unanswered".into(),
            ));
        }
    }
}

/// The JSON-RPC error code of a request the host refused (the spec's sampling
/// example uses -1 for a user's rejection).
pub const REFUSED: i64 = -1;

/// One request waiting for the host's answer. Clones share it; the first answer wins.
#[derive(Clone)]
pub struct Pending(Arc<Slot>);

impl Pending {
    pub fn new(request: Request, respond: Responder) -> Self {
        Pending(Arc::new(Slot {
            request,
            answer: Mutex::new(Answer::Open(respond)),
        }))
    }

    pub fn request(&self) -> &Request {
        &self.0.request
    }

    fn downgrade(&self) -> std::sync::Weak<Slot> {
        Arc::downgrade(&self.0)
    }

    /// Takes the responder, or says why there is none any more.
    fn take(&self, done: (Status, &'static str)) -> Result<Responder> {
        let mut answer = self.0.answer.lock().unwrap_or_else(|p| p.into_inner());
        match std::mem::replace(&mut *answer, Answer::Done(done.0, done.1)) {
            Answer::Open(respond) => Ok(respond),
            Answer::Done(status, why) => {
                *answer = Answer::Done(status, why);
                Err(Error::new(status, why).context(self.0.request.method))
            }
        }
    }

    /// Answers with a result: checked against the request first (an elicitation's
    /// content against its schema, with the schema's defaults filled in), so that a
    /// mistake is `MCPC_ERR_INPUT_INVALID` and the request stays open.
    pub fn complete(&self, result: Value) -> Result<()> {
        let result = self
            .check(result)
            .map_err(|why| Error::new(Status::MCPC_ERR_INPUT_INVALID, why).context(self.0.request.method))?;
        let respond = self.take(ANSWERED)?;
        respond(Outcome::Result(result))
    }

    /// Answers an elicitation: `action` is `accept`, `decline` or `cancel`; `content`
    /// only with `accept` of a form.
    pub fn elicit(&self, action: &str, content: Option<Value>) -> Result<()> {
        let mut result = json!({ "action": action });
        if let Some(c) = content {
            result["content"] = c;
        } else if action == "accept" && self.0.request.kind == Kind::ElicitForm {
            result["content"] = json!({});
        }
        self.complete(result)
    }

    /// Refuses the request: the server gets an error (under 2026-07-28 the call
    /// fails instead, as there is no error to send back).
    pub fn fail(&self, message: &str) -> Result<()> {
        let respond = self.take(ANSWERED)?;
        respond(Outcome::Error(REFUSED, message.to_string()))
    }

    /// Ends the request unanswered (its deadline passed, or its call ended). Nothing
    /// happens if it was answered.
    pub(super) fn expire(&self, why: (Status, &'static str)) {
        if let Ok(respond) = self.take(why) {
            let _ = respond(Outcome::Error(-32603, why.1.to_string()));
        }
    }

    fn check(&self, result: Value) -> std::result::Result<Value, String> {
        let req = &self.0.request;
        let Value::Object(mut obj) = result else {
            return Err("the result is not a JSON object".into());
        };
        match req.kind {
            Kind::ElicitForm | Kind::ElicitUrl => {
                let action = obj.get("action").and_then(Value::as_str).unwrap_or("").to_string();
                if !["accept", "decline", "cancel"].contains(&action.as_str()) {
                    return Err(format!(
                        "the action must be accept, decline or cancel, not {}",
                        quote(&action)
                    ));
                }
                let content = obj.remove("content");
                if action == "accept" && req.kind == Kind::ElicitForm {
                    let form = req.form.as_ref().expect("a form request has its schema");
                    let filled = form.check(content.unwrap_or_else(|| json!({})))?;
                    obj.insert("content".into(), filled);
                } else if content.is_some() {
                    return Err("only an accepted form carries content".into());
                }
            }
            Kind::Sampling => {
                for key in ["role", "content", "model"] {
                    if !obj.contains_key(key) {
                        return Err(format!("the sampling result has no {key}"));
                    }
                }
                if !obj["model"].is_string() || !(obj["content"].is_object() || obj["content"].is_array()) {
                    return Err("the sampling result needs a string model and a content object".into());
                }
            }
            Kind::Roots => {
                let roots = obj
                    .get("roots")
                    .and_then(Value::as_array)
                    .ok_or("the result has no roots array")?;
                for root in roots {
                    let uri = root.get("uri").and_then(Value::as_str).unwrap_or("");
                    if !uri.starts_with("file://") {
                        return Err(format!("root uri {} is not a file:// URI", quote(uri)));
                    }
                }
            }
        }
        Ok(Value::Object(obj))
    }
}

const ANSWERED: (Status, &str) = (Status::MCPC_ERR_ALREADY_COMPLETED, "the request was already answered");
/// What an answer after the deadline gets.
pub(super) const TIMED_OUT: (Status, &str) = (Status::MCPC_ERR_TIMEOUT, "the request timed out before it was answered");
/// What an answer after its call ended gets.
pub(super) const ENDED: (Status, &str) = (Status::MCPC_ERR_CLOSED, "the call that asked for it has ended");

/// Hands a request to its handler on a blocking-pool thread, where the host may block
/// (a terminal prompt) and blocking mcpc calls return MCPC_ERR_WOULD_DEADLOCK.
pub(super) fn hand_over(handler: &Handler, pending: Pending) {
    let handler = handler.clone();
    crate::drive::runtime::handle().spawn_blocking(move || handler(pending));
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn handlers() -> Handlers {
        let h: Handler = Arc::new(|_| {});
        Handlers {
            elicitation: Some(h.clone()),
            elicit_form: true,
            elicit_url: false,
            sampling: None,
            sampling_tools: false,
            roots: Some(h),
            host_server: None,
        }
    }

    #[test]
    fn capabilities_are_the_handlers() {
        assert_eq!(Handlers::default().capabilities(true).get(), "{}");
        assert_eq!(
            handlers().capabilities(false).get(),
            r#"{"elicitation":{"form":{}},"roots":{"listChanged":true}}"#
        );
        assert_eq!(
            handlers().capabilities(true).get(),
            r#"{"elicitation":{"form":{}},"roots":{}}"#
        );
    }

    fn pending(method: &str, params: &str) -> (Pending, mpsc::Receiver<Outcome>) {
        let raw = RawValue::from_string(params.into()).unwrap();
        let req = handlers().read(method, Some(&raw), "srv").unwrap();
        let (tx, rx) = mpsc::channel();
        let p = Pending::new(
            req,
            Box::new(move |o| {
                tx.send(o).unwrap();
                Ok(())
            }),
        );
        (p, rx)
    }

    #[test]
    fn answered_once_and_checked() {
        let form =
            r#"{"message":"m","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","default":3}}}}"#;
        let (p, rx) = pending(ELICITATION, form);
        assert_eq!(p.request().kind, Kind::ElicitForm);
        let bad = p.elicit("accept", Some(json!({"n": "x"}))).unwrap_err();
        assert_eq!(bad.status, Status::MCPC_ERR_INPUT_INVALID);
        p.elicit("accept", None).unwrap();
        match rx.recv().unwrap() {
            Outcome::Result(v) => assert_eq!(v, json!({"action": "accept", "content": {"n": 3}})),
            o => panic!("{o:?}"),
        }
        assert_eq!(p.fail("x").unwrap_err().status, Status::MCPC_ERR_ALREADY_COMPLETED);
        p.expire(TIMED_OUT);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn dropped_or_expired_answers_the_server() {
        let (p, rx) = pending(ROOTS, "{}");
        assert_eq!(
            p.complete(json!({"roots": [{"uri": "/tmp"}]})).unwrap_err().status,
            Status::MCPC_ERR_INPUT_INVALID
        );
        drop(p);
        assert!(matches!(rx.recv().unwrap(), Outcome::Error(REFUSED, _)));
        let (p, rx) = pending(ROOTS, "{}");
        p.expire(TIMED_OUT);
        assert!(matches!(rx.recv().unwrap(), Outcome::Error(-32603, _)));
        assert_eq!(
            p.complete(json!({"roots": []})).unwrap_err().status,
            Status::MCPC_ERR_TIMEOUT
        );
    }

    #[test]
    fn bad_requests_are_the_servers() {
        let h = handlers();
        let raw = |s: &str| RawValue::from_string(s.into()).unwrap();
        assert!(h
            .read(ELICITATION, Some(&raw(r#"{"message":"m","requestedSchema":[1]}"#)), "")
            .is_err());
        assert!(h
            .read(
                ELICITATION,
                Some(&raw(r#"{"message":"m","mode":"url","url":"https://x"}"#)),
                ""
            )
            .is_err());
        assert!(h.read(ELICITATION, Some(&raw("[]")), "").is_err());
        assert!(h.read(ROOTS, None, "").is_ok());
    }
}
