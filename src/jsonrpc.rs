//! JSON-RPC 2.0 messages: encoding what the client sends, classifying what it receives.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};

pub const METHOD_NOT_FOUND: i64 = -32601;

#[derive(Serialize)]
struct RequestOut<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct NotificationOut<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

/// Serializes a request. Compact output, so it never holds a raw newline.
/// `params_len` is roughly how long the params will be (0 if small): a large
/// request is then written into one buffer of the right size, with room for a line end.
pub fn encode_request<P: Serialize + ?Sized>(id: i64, method: &str, params: Option<&P>, params_len: usize) -> Vec<u8> {
    let msg = RequestOut {
        jsonrpc: "2.0",
        id,
        method,
        params,
    };
    let mut out = Vec::with_capacity(params_len + 256);
    serde_json::to_writer(&mut out, &msg).expect("serializing a request cannot fail");
    out
}

pub fn encode_notification<P: Serialize + ?Sized>(method: &str, params: Option<&P>) -> Vec<u8> {
    let msg = NotificationOut {
        jsonrpc: "2.0",
        method,
        params,
    };
    serde_json::to_vec(&msg).expect("serializing a notification cannot fail")
}

#[derive(Serialize)]
struct ResponseOut<'a> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<ErrorOut<'a>>,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    code: i64,
    message: &'a str,
}

/// A response to a server request: a result, or an error `(code, message)`.
pub fn encode_response(id: &RawValue, outcome: std::result::Result<&RawValue, (i64, &str)>) -> Vec<u8> {
    let (result, error) = match outcome {
        Ok(r) => (Some(r), None),
        Err((code, message)) => (None, Some(ErrorOut { code, message })),
    };
    serde_json::to_vec(&ResponseOut {
        jsonrpc: "2.0",
        id,
        result,
        error,
    })
    .expect("serializing a response cannot fail")
}

/// The error object of a JSON-RPC error response.
#[derive(Debug, Deserialize, Clone)]
pub struct RpcError {
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub data: Option<Box<RawValue>>,
}

impl RpcError {
    /// The error for the caller. The error codes of 2026-07-28 get their own statuses;
    /// an unsupported-version error names the versions the server listed.
    pub fn into_error(self) -> Error {
        let mut text = format!("server error {}: {}", self.code, quote(&self.message));
        let status = match self.code {
            crate::protocol::HEADER_MISMATCH => Status::MCPC_ERR_HEADER_MISMATCH,
            crate::protocol::MISSING_CAPABILITIES => Status::MCPC_ERR_MISSING_CAPABILITY,
            crate::protocol::UNSUPPORTED_VERSION => {
                #[derive(Deserialize)]
                struct Data {
                    #[serde(default)]
                    supported: Vec<String>,
                }
                if let Some(d) = self
                    .data
                    .as_deref()
                    .and_then(|d| serde_json::from_str::<Data>(d.get()).ok())
                {
                    text.push_str(&format!(" (the server supports: {})", quote(&d.supported.join(", "))));
                }
                Status::MCPC_ERR_UNSUPPORTED_VERSION
            }
            _ => Status::MCPC_ERR_RPC,
        };
        let mut err = Error::rpc(self.code, text).with_status(status);
        err.rpc_data = self.data.map(|d| d.get().to_string());
        err
    }
}

/// The fields of any incoming message, borrowed from the input buffer where possible.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
    #[serde(default, borrow)]
    result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    error: Option<&'a RawValue>,
}

/// What an incoming message is.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A response to one of our requests: its id and outcome.
    Response {
        id: i64,
        outcome: std::result::Result<Box<RawValue>, RpcError>,
    },
    /// A request from the server.
    Request {
        id: &'a RawValue,
        method: std::borrow::Cow<'a, str>,
    },
    /// A notification from the server.
    Notification {
        method: std::borrow::Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
}

/// Parses and classifies one message. An error here concerns this message only.
pub fn decode(bytes: &[u8]) -> Result<Incoming<'_>> {
    // One UTF-8 check of the whole message up front (fast for ASCII): parsing from
    // text then checks no string, and no captured value, a second time.
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Error::new(Status::MCPC_ERR_PROTOCOL, format!("message is not valid UTF-8: {e}")))?;
    let env: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!("message is not a JSON-RPC object: {e}"),
        )
    })?;
    let id = env.id.filter(|raw| raw.get() != "null");
    if let Some(method) = env.method {
        return Ok(match id {
            Some(id) => Incoming::Request { id, method },
            None => Incoming::Notification {
                method,
                params: env.params,
            },
        });
    }
    let Some(id) = id else {
        return Err(Error::new(
            Status::MCPC_ERR_PROTOCOL,
            "message has neither method nor id",
        ));
    };
    let id: i64 = id.get().parse().map_err(|_| {
        Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!("response id {} matches no request", quote(id.get())),
        )
    })?;
    let result = env.result.filter(|raw| raw.get() != "null");
    let outcome = match (result, env.error) {
        (Some(_), Some(_)) => {
            return Err(Error::new(
                Status::MCPC_ERR_PROTOCOL,
                format!("response {id} carries both result and error"),
            ))
        }
        (Some(r), None) => Ok(r.to_owned()),
        (None, Some(e)) => Err(serde_json::from_str::<RpcError>(e.get()).map_err(|e| {
            Error::new(
                Status::MCPC_ERR_PROTOCOL,
                format!("response {id} has a malformed error object: {e}"),
            )
        })?),
        (None, None) => {
            return Err(Error::new(
                Status::MCPC_ERR_PROTOCOL,
                format!("response {id} carries neither result nor error"),
            ))
        }
    };
    Ok(Incoming::Response { id, outcome })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        match decode(br#"{"jsonrpc":"2.0","id":7,"result":{"x":1}}"#).unwrap() {
            Incoming::Response { id: 7, outcome: Ok(r) } => assert_eq!(r.get(), r#"{"x":1}"#),
            other => panic!("{other:?}"),
        }
        match decode(br#"{"jsonrpc":"2.0","id":8,"error":{"code":-32602,"message":"bad"}}"#).unwrap() {
            Incoming::Response { id: 8, outcome: Err(e) } => assert_eq!(e.code, -32602),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","id":"s1","method":"ping"}"#).unwrap(),
            Incoming::Request { .. }
        ));
        assert!(matches!(
            decode(br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#).unwrap(),
            Incoming::Notification { .. }
        ));
    }

    #[test]
    fn modern_error_codes_get_their_statuses() {
        let e = match decode(
            br#"{"id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"x"}}}"#,
        )
        .unwrap()
        {
            Incoming::Response { outcome: Err(e), .. } => e.into_error(),
            other => panic!("{other:?}"),
        };
        assert_eq!(e.status, Status::MCPC_ERR_UNSUPPORTED_VERSION);
        assert_eq!(e.rpc_code, Some(-32022));
        assert!(e.message.contains("2026-07-28"), "{}", e.message);
        let hm = RpcError {
            code: -32020,
            message: "m".into(),
            data: None,
        }
        .into_error();
        assert_eq!(hm.status, Status::MCPC_ERR_HEADER_MISMATCH);
    }

    #[test]
    fn rejects_bad_responses() {
        for bad in [
            &br#"{"id":1,"result":{},"error":{"code":1,"message":"x"}}"#[..],
            br#"{"id":1}"#,
            br#"{"id":"abc","result":{}}"#,
            br#"{"result":{}}"#,
            br#"{"id":1,"error":"nope"}"#,
            b"not json",
            b"[1,2]",
        ] {
            let e = decode(bad).unwrap_err();
            assert_eq!(e.status, Status::MCPC_ERR_PROTOCOL, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn encodes_compactly() {
        let v = serde_json::json!({"text": "a\nb"});
        let out = encode_request(3, "tools/call", Some(&v), 0);
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"text":"a\nb"}}"#
        );
        assert!(!out.contains(&b'\n'));
        let id: &RawValue = serde_json::from_str("\"s1\"").unwrap();
        let ok = encode_response(id, Ok(serde_json::from_str("{}").unwrap()));
        assert_eq!(ok, br#"{"jsonrpc":"2.0","id":"s1","result":{}}"#);
        let err = encode_response(id, Err((-32601, "nope")));
        assert_eq!(
            err,
            br#"{"jsonrpc":"2.0","id":"s1","error":{"code":-32601,"message":"nope"}}"#
        );
    }
}
