//! MCP Apps: a view's JSON-RPC messages relayed to its server. The host hands over
//! one message from the view and hands back the reply. Only what a view may ask goes
//! to the server: `tools/call` of a tool of this server the view may call (its
//! visibility includes `app`), `resources/read` and `ping`, and the notification
//! `notifications/message`; anything else is answered with a JSON-RPC error and never
//! reaches the server, and `ui/*` is left to the host.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::apps::{tool_ui, APP};
use super::call::{Ask, Call};
use super::{Client, Control, Reader};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc;

/// The largest message a view may hand over.
pub const MAX_RELAY_BYTES: usize = 1 << 20;

/// What the relay made of a view's message.
#[derive(Debug, PartialEq, Eq)]
pub enum Relayed {
    /// The reply to hand back to the view (a JSON-RPC response with the view's id).
    Reply(String),
    /// A notification passed on to the server; nothing to hand back.
    Passed,
    /// A `ui/*` message: the host's own to answer.
    Host,
}

fn refused(why: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_INVALID_ARG, why)
}

/// A JSON-RPC response to the view.
fn reply(id: &RawValue, outcome: std::result::Result<&RawValue, (i64, &str)>) -> Relayed {
    let body = jsonrpc::encode_response(id, outcome);
    Relayed::Reply(String::from_utf8(body).expect("serialized JSON is UTF-8"))
}

impl Client {
    /// Relays one message of a view (see the module): its reply, a notification
    /// passed on, or a message that is the host's. A message that is not one JSON-RPC
    /// request or notification (not JSON, a batch, a response, over
    /// [`MAX_RELAY_BYTES`]) is `MCPC_ERR_INVALID_ARG`; a notification other than
    /// `notifications/message` is `MCPC_ERR_NOT_SUPPORTED`. A request that fails
    /// (the server's error, a timeout, a cancel) is answered with a JSON-RPC error.
    pub async fn relay_ui(&self, message: &str, ctl: &Control) -> Result<Relayed> {
        if message.len() > MAX_RELAY_BYTES {
            return Err(refused(format!(
                "the view's message is {} bytes, over {MAX_RELAY_BYTES}",
                message.len()
            )));
        }
        let value: Value =
            serde_json::from_str(message).map_err(|e| refused(format!("the view's message is not JSON: {e}")))?;
        let fields = match value {
            Value::Object(m) => m,
            Value::Array(_) => return Err(refused("the view sent a batch, which the relay does not carry")),
            _ => return Err(refused("the view's message is not a JSON-RPC message")),
        };
        if fields.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(refused("the view's message is not JSON-RPC 2.0"));
        }
        let Some(method) = fields.get("method").and_then(Value::as_str) else {
            return Err(refused(
                "the view's message is no request or notification (the relay carries only those)",
            ));
        };
        if method.starts_with("ui/") {
            return Ok(Relayed::Host);
        }
        let params = match fields.get("params") {
            None | Some(Value::Null) => Some(Map::new()),
            Some(Value::Object(p)) => Some(p.clone()),
            Some(_) => None,
        };
        let id = match fields.get("id") {
            Some(id @ (Value::String(_) | Value::Number(_))) => {
                serde_json::value::to_raw_value(id).expect("an id serializes")
            }
            Some(_) => return Err(refused("the view's request id is not a string or a number")),
            None => {
                if method != "notifications/message" {
                    return Err(Error::new(
                        Status::MCPC_ERR_NOT_SUPPORTED,
                        format!("the view's notification {} is not relayed", quote(method)),
                    ));
                }
                let params = params.ok_or_else(|| refused("the view's notification has params that are no object"))?;
                self.notify_raw(method, Some(&Value::Object(params).to_string()))?;
                return Ok(Relayed::Passed);
            }
        };
        let Some(params) = params else {
            return Ok(reply(&id, Err((jsonrpc::INVALID_PARAMS, "params must be an object"))));
        };
        match method {
            "tools/call" => {
                let Some(name) = params.get("name").and_then(Value::as_str) else {
                    return Ok(reply(
                        &id,
                        Err((jsonrpc::INVALID_PARAMS, "tools/call needs a tool name")),
                    ));
                };
                // Only a tool of this server the view may call: one it lists with `app`.
                let callable = match self.listed_tool(name, ctl).await {
                    Ok(tool) => tool.is_some_and(|t| tool_ui(t.json()).visibility & APP != 0),
                    Err(e) => return Ok(reply(&id, Err((jsonrpc::INTERNAL_ERROR, &e.to_string())))),
                };
                if !callable {
                    let why = format!("Unknown tool: {}", quote(name));
                    return Ok(reply(&id, Err((jsonrpc::INVALID_PARAMS, &why))));
                }
            }
            "resources/read" | "ping" => {}
            _ => return Ok(reply(&id, Err((jsonrpc::METHOD_NOT_FOUND, "Method not found")))),
        }
        let ask = Ask::Method {
            method,
            params: &params,
            reader: Reader::Json,
        };
        let call = crate::drive::runtime::boxed_apart(|| async move { Call::new(self, ask, ctl).wait().await });
        Ok(match call.await.and_then(|json| json.into_raw()) {
            Ok(raw) => reply(&id, Ok(&raw)),
            Err(e) => {
                let code = e.rpc_code.unwrap_or(jsonrpc::INTERNAL_ERROR);
                reply(&id, Err((code, &e.message)))
            }
        })
    }
}
