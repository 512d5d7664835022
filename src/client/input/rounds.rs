//! Under 2026-07-28: the `inputRequests` of an `input_required` result, answered by
//! the host's handlers (or, for a kind without one, as a client without it would)
//! before the next round is sent, within the call's deadline.

use serde_json::value::RawValue;
use serde_json::{json, Map, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::{hand_over, Outcome, Pending, ENDED, MAX_OUTSTANDING, TIMED_OUT};
use crate::client::Client;
use crate::error::{quote, Error, Result, Status};
use crate::protocol::{self, ResultKind};

/// The `requestState` and `inputResponses` of an `input_required` round.
pub(in crate::client) type InputRound = (Option<String>, Option<Box<RawValue>>);

/// The error of a request whose server still asks for input after the last round.
pub(in crate::client) fn too_many_rounds() -> Error {
    Error::new(
        Status::MCPC_ERR_INPUT_REQUIRED,
        format!(
            "the server still asked for input after {} rounds",
            crate::client::MAX_INPUT_ROUNDS
        ),
    )
}

/// What a client without a handler answers: it declines an elicitation (so the
/// server may go on without it) and cannot answer anything else.
fn without_handler(key: &str, method: Option<&str>) -> Result<Value> {
    match method {
        Some(super::ELICITATION) => Ok(json!({"action": "decline"})),
        Some(other) => Err(Error::new(
            Status::MCPC_ERR_INPUT_REQUIRED,
            format!("the server asks for {other}, which this client does not provide"),
        )),
        None => Err(Error::new(
            Status::MCPC_ERR_INPUT_REQUIRED,
            format!("the server sent a malformed input request {}", quote(key)),
        )),
    }
}

/// One request waiting for the host, and where its answer arrives.
struct Asked {
    key: String,
    pending: Pending,
    answer: oneshot::Receiver<Outcome>,
}

/// What follows a 2026-07-28 result: nothing (it is complete), another round with
/// its `requestState` and answers, or following the task it is.
pub(in crate::client) enum Next {
    Complete,
    Round(InputRound),
    Task,
}

impl Client {
    /// Under 2026-07-28, what follows the result `raw`: another round for an
    /// `input_required` result (its `requestState` and the answers to its
    /// `inputRequests`), the task for a task, or nothing; always nothing before
    /// 2026-07-28. The host's handlers have until `deadline`; `cancel` ends the wait.
    /// After the `last` round allowed, a request for more input is an error, and the
    /// host is not asked for input never sent.
    pub(in crate::client) async fn input_round(
        &self,
        raw: &str,
        deadline: Instant,
        cancel: Option<&CancellationToken>,
        last: bool,
    ) -> Result<Next> {
        if !self.is_modern() {
            return Ok(Next::Complete);
        }
        let (request_state, requests) = match protocol::result_kind(raw)? {
            ResultKind::Complete => return Ok(Next::Complete),
            ResultKind::Task => return Ok(Next::Task),
            ResultKind::InputRequired {
                request_state,
                input_requests,
            } if !last => (request_state, input_requests),
            ResultKind::InputRequired { .. } => return Err(too_many_rounds()),
        };
        let Some(requests) = requests else {
            return Ok(Next::Round((request_state, None)));
        };
        let answers = self.answer_inputs(&requests, deadline, cancel).await?;
        Ok(Next::Round((request_state, Some(answers))))
    }

    /// The host's answers to `requests` (input requests by key), as an
    /// `inputResponses` object: each asked of its handler (or answered as a client
    /// without one would), all at once, until `deadline` or `cancel`.
    pub(in crate::client) async fn answer_inputs(
        &self,
        requests: &Map<String, Value>,
        deadline: Instant,
        cancel: Option<&CancellationToken>,
    ) -> Result<Box<RawValue>> {
        if requests.len() > MAX_OUTSTANDING {
            return Err(Error::new(
                Status::MCPC_ERR_PROTOCOL,
                format!(
                    "the server asked for {} inputs in one round, over {MAX_OUTSTANDING}",
                    requests.len()
                ),
            ));
        }
        let mut out = Map::new();
        let mut asked = Vec::new();
        let handlers = &self.inbox().handlers;
        let server = self.inbox().server();
        for (key, req) in requests {
            let method = req.get("method").and_then(Value::as_str);
            let Some(handler) = method.and_then(|m| handlers.for_method(m)) else {
                out.insert(key.clone(), without_handler(key, method)?);
                continue;
            };
            let params = req
                .get("params")
                .map(|p| serde_json::value::to_raw_value(p).expect("a JSON value serializes"));
            let request = handlers
                .read(method.unwrap_or_default(), params.as_deref(), &server)
                .map_err(|why| {
                    Error::new(
                        Status::MCPC_ERR_PROTOCOL,
                        format!("input request {}: {why}", quote(key)),
                    )
                })?;
            let (tx, rx) = oneshot::channel();
            let pending = Pending::new(
                request,
                Box::new(move |outcome| {
                    tx.send(outcome)
                        .map_err(|_| Error::new(Status::MCPC_ERR_CLOSED, ENDED.1))
                }),
            );
            asked.push(Asked {
                key: key.clone(),
                pending: pending.clone(),
                answer: rx,
            });
            hand_over(handler, pending);
        }
        let waiting: Vec<Pending> = asked.iter().map(|a| a.pending.clone()).collect();
        let answers = async {
            for a in asked {
                let method = a.pending.request().method;
                match a.answer.await {
                    Ok(Outcome::Result(v)) => {
                        out.insert(a.key, v);
                    }
                    Ok(Outcome::Error(_, why)) => {
                        return Err(Error::new(
                            Status::MCPC_ERR_INPUT_REQUIRED,
                            format!("the host refused {method} ({}): {why}", quote(&a.key)),
                        ))
                    }
                    Err(_) => unreachable!("a pending request answers before it is dropped"),
                }
            }
            Ok(out)
        };
        let cancelled = async {
            match cancel {
                Some(t) => t.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            r = answers => r,
            _ = tokio::time::sleep_until(deadline) => {
                Err(Error::new(Status::MCPC_ERR_TIMEOUT, "timed out waiting for the host to answer the server's input requests"))
            }
            _ = cancelled => Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled while the host answered input requests")),
            _ = self.shared.gone.cancelled() => Err(self.shared.dropped_error()),
        };
        // Whatever is still open can no longer be answered.
        let why = match &outcome {
            Err(e) if e.status == Status::MCPC_ERR_TIMEOUT => TIMED_OUT,
            _ => ENDED,
        };
        for p in &waiting {
            p.expire(why);
        }
        let out = outcome?;
        let text = serde_json::to_string(&out).expect("a map of JSON values serializes");
        Ok(RawValue::from_string(text).expect("serialized JSON is valid"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_handler_as_before() {
        assert_eq!(
            without_handler("q", Some("elicitation/create")).unwrap(),
            json!({"action": "decline"})
        );
        let e = without_handler("s", Some("sampling/createMessage")).unwrap_err();
        assert_eq!(e.status, Status::MCPC_ERR_INPUT_REQUIRED);
        assert!(e.message.contains("sampling/createMessage"));
        assert!(without_handler("k", None).is_err());
    }
}
