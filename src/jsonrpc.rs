//! JSON-RPC 2.0 messages: encoding what the client sends, classifying what it receives.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};
use crate::scan::{object_end, skip_ws, skip_ws_back};
use crate::text::Text;

pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC 2.0: an internal error.
pub const INTERNAL_ERROR: i64 = -32603;
/// Error codes of the 2026-07-28 revision, which get statuses of their own.
pub const HEADER_MISMATCH: i64 = -32020;
pub const MISSING_CAPABILITIES: i64 = -32021;
pub const UNSUPPORTED_VERSION: i64 = -32022;

#[derive(Serialize)]
struct NotificationOut<'a, P: Serialize + ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

/// A request's params, as they go into its body.
pub trait Params {
    /// Writes the params as compact JSON (never a raw newline) at the end of `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

/// Params written by serde.
pub struct Serialized<'a, T: ?Sized>(pub &'a T);

impl<T: Serialize + ?Sized> Params for Serialized<'_, T> {
    fn write_json(&self, out: &mut Vec<u8>) {
        serde_json::to_writer(out, self.0).expect("serializing params cannot fail");
    }
}

/// Serializes a request. Compact output, so it never holds a raw newline.
/// `params_len` is roughly how long the params will be (0 if small): a large
/// request is then written into one buffer of the right size, with room for a line end.
/// The envelope's fixed keys are written as they are, and only the values go
/// through serde: serializing the envelope as a struct would escape every key on
/// every call.
pub fn encode_request<P: Params + ?Sized>(id: i64, method: &str, params: Option<&P>, params_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(params_len + 256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
    out.extend_from_slice(br#","method":"#);
    write_json_str(&mut out, method);
    if let Some(params) = params {
        out.extend_from_slice(br#","params":"#);
        params.write_json(&mut out);
    }
    out.push(b'}');
    out
}

/// Writes `s` as a JSON string. Text that needs no escape (a method, most tool
/// names) is copied as it is; serde escapes the rest, and costs as much when nothing
/// needs escaping.
pub fn write_json_str(out: &mut Vec<u8>, s: &str) {
    if crate::scan::needs_no_escape(s.as_bytes()) {
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        serde_json::to_writer(out, s).expect("writing to a vector cannot fail");
    }
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

/// A response's `result`, as the server sent it.
///
/// A response in the usual shape (see [`fast_response`]) has its envelope read
/// and its result's extent found without parsing the result: every reader of a
/// result parses all of it with serde anyway (and so rejects bad JSON), so a result
/// is parsed once, not twice.
#[derive(Debug)]
pub enum RawResult {
    /// Parsed already (a response read by serde).
    Checked(Box<RawValue>),
    /// Only its extent is known.
    Unchecked(Text),
}

impl RawResult {
    /// The JSON text.
    #[cfg(any(test, feature = "fuzzing"))]
    pub fn get(&self) -> &str {
        match self {
            RawResult::Checked(raw) => raw.get(),
            RawResult::Unchecked(text) => text,
        }
    }
}

/// What an incoming message is.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// A response to one of our requests: its id and outcome.
    Response {
        id: i64,
        outcome: std::result::Result<RawResult, RpcError>,
    },
    /// A request from the server.
    Request {
        id: &'a RawValue,
        method: std::borrow::Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A notification from the server.
    Notification {
        method: std::borrow::Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A message with a response's integer id that is no valid response (both
    /// `result` and `error`, neither, or a malformed error object): it fails that
    /// request, if pending, with `why`.
    Malformed { id: i64, why: Error },
}

/// The usual shape of a response, read without serde: an object whose members are
/// `"jsonrpc":"2.0"` (optional), an `id` that is a non-negative integer and a
/// `result` that is an object, each once, with keys that hold no escapes. Gives
/// the id and where the result lies, or `None` for anything else (which serde
/// then reads). Everything but the result is checked here; the result's own
/// syntax is checked by its reader (see [`ResultJson`]). Reading the envelope with
/// serde would parse the whole result on the way
/// (docs/decisions/0002-scanner-for-results.md).
fn fast_response(b: &[u8]) -> Option<(i64, std::ops::Range<usize>)> {
    fast_envelope(b, false)
}

/// The id of a response in the usual shape (see [`fast_response`]) whose `result`
/// comes after its id and may be its last member: the message ends in `}`, white
/// space, `}`. Gives the id and the text from the result's start up to the
/// envelope's closing brace, which is the result exactly if it is one JSON value;
/// nothing past the result's start is checked or scanned here. A reader that checks
/// that text as one value (see `result::call_result_read`) so reads the response
/// in one pass; if it is not one value, the message goes through [`decode`].
pub(crate) fn response_head(b: &[u8]) -> Option<(i64, std::ops::Range<usize>)> {
    fast_envelope(b, true)
}

const COMPACT_HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

/// The non-negative integer id at the start of `b`, and its length: no leading zero
/// (not JSON), and never past what an i64 holds.
fn id_digits(b: &[u8]) -> Option<(i64, usize)> {
    let len = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if len == 0 || len > 18 || (len > 1 && b[0] == b'0') {
        return None;
    }
    Some((b[..len].iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')), len))
}

fn fast_envelope(b: &[u8], head_only: bool) -> Option<(i64, std::ops::Range<usize>)> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    let (mut id, mut result, mut version) = (None, None, false);
    // The compact start that most servers write, `{"jsonrpc":"2.0","id":N,`, read
    // at once, cheaper than member by member.
    if let Some(rest) = b.strip_prefix(COMPACT_HEAD) {
        if let Some((n, len)) = id_digits(rest).filter(|&(_, len)| rest.get(len) == Some(&b',')) {
            (id, version) = (Some(n), true);
            i = COMPACT_HEAD.len() + len + 1;
        }
    }
    loop {
        i = skip_ws(b, i);
        // The key that follows the compact start, in its compact form, at once.
        let key: &[u8] = if b[i..].starts_with(br#""result":"#) {
            i = skip_ws(b, i + 9);
            b"result"
        } else {
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let key_end = i + 1 + b[i + 1..].iter().position(|&c| c == b'"' || c == b'\\')?;
            if b[key_end] != b'"' {
                return None;
            }
            let key = &b[i + 1..key_end];
            i = skip_ws(b, key_end + 1);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(b, i + 1);
            key
        };
        match key {
            b"jsonrpc" if !version && b[i..].starts_with(b"\"2.0\"") => {
                version = true;
                i += 5;
            }
            b"id" if id.is_none() => {
                let (n, len) = id_digits(&b[i..])?;
                id = Some(n);
                i += len;
            }
            b"result" if head_only => {
                if b.get(i) != Some(&b'{') {
                    return None;
                }
                let close = skip_ws_back(b, b.len()).checked_sub(1)?;
                let inner = skip_ws_back(b, close);
                let last = b[close] == b'}' && inner > i + 1 && b[inner - 1] == b'}';
                return last.then_some((id?, i..close));
            }
            b"result" if result.is_none() && b.get(i) == Some(&b'{') => {
                let end = object_end(b, i)?;
                result = Some(i..end);
                i = end;
            }
            _ => return None,
        }
        i = skip_ws(b, i);
        match b.get(i)? {
            b',' => i += 1,
            b'}' => break,
            _ => return None,
        }
    }
    if skip_ws(b, i + 1) != b.len() {
        return None;
    }
    Some((id?, result?))
}

#[cfg(any(test, feature = "fuzzing"))]
/// Parses and classifies one message. An error here concerns this message only.
pub fn decode(bytes: &[u8]) -> Result<Incoming<'_>> {
    decode_in(bytes, None)
}

/// [`decode`], where `owner`, when given, holds `bytes` themselves: a result that is
/// most of the message is then kept as a slice of it, not copied.
pub fn decode_in<'a>(bytes: &'a [u8], owner: Option<&bytes::Bytes>) -> Result<Incoming<'a>> {
    // One UTF-8 check of the whole message up front (fast for ASCII): parsing from
    // text then checks no string, and no captured value, a second time.
    let text =
        utf8(bytes).map_err(|e| Error::new(Status::MCPC_ERR_PROTOCOL, format!("message is not valid UTF-8: {e}")))?;
    if let Some((id, result)) = fast_response(bytes) {
        return Ok(Incoming::Response {
            id,
            outcome: Ok(RawResult::Unchecked(Text::kept(owner, &text[result]))),
        });
    }
    decode_parsed(text)
}

/// The UTF-8 check of a message's text: simdutf8's (SIMD; std's below 64 bytes),
/// much cheaper than std's on a large message.
/// Its error says nothing more, so std checks a failure again for the message.
pub(crate) fn utf8(bytes: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    simdutf8::basic::from_utf8(bytes).or_else(|_| std::str::from_utf8(bytes))
}

/// [`decode`] with serde alone: for every shape of message.
pub(crate) fn decode_parsed(text: &str) -> Result<Incoming<'_>> {
    let env: Envelope<'_> = serde_json::from_str(text).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!("message is not a JSON-RPC object: {e}"),
        )
    })?;
    let id = env.id.filter(|raw| raw.get() != "null");
    if let Some(method) = env.method {
        return Ok(match id {
            Some(id) => Incoming::Request {
                id,
                method,
                params: env.params,
            },
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
    let malformed = |why: String| {
        Ok(Incoming::Malformed {
            id,
            why: Error::new(Status::MCPC_ERR_PROTOCOL, why),
        })
    };
    let outcome = match (result, env.error) {
        (Some(_), Some(_)) => return malformed(format!("response {id} carries both result and error")),
        (Some(r), None) => Ok(RawResult::Checked(r.to_owned())),
        (None, Some(e)) => match serde_json::from_str::<RpcError>(e.get()) {
            Ok(e) => Err(e),
            Err(e) => return malformed(format!("response {id} has a malformed error object: {e}")),
        },
        (None, None) => return malformed(format!("response {id} carries neither result nor error")),
    };
    Ok(Incoming::Response { id, outcome })
}

/// The error for the caller of a JSON-RPC error response. The error codes of 2026-07-28 get their own statuses;
/// an unsupported-version error names the versions the server listed.
pub fn rpc_error(e: RpcError) -> Error {
    let mut text = format!("server error {}: {}", e.code, quote(&e.message));
    let status = match e.code {
        HEADER_MISMATCH => Status::MCPC_ERR_HEADER_MISMATCH,
        MISSING_CAPABILITIES => Status::MCPC_ERR_MISSING_CAPABILITY,
        UNSUPPORTED_VERSION => {
            #[derive(Deserialize)]
            struct Data {
                #[serde(default)]
                supported: Vec<String>,
            }
            if let Some(d) = e
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
    let mut err = Error::rpc(e.code, text).with_status(status);
    err.rpc_data = e.data.map(|d| d.get().to_string());
    err
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

    /// The usual shape is read without serde, exactly as serde reads it; any other
    /// shape goes to serde.
    #[test]
    fn usual_responses_read_as_serde_reads_them() {
        let usual = [
            &br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\"}{b"}]}}"#[..],
            br#" { "id" : 0 , "result" : { "a" : { "b" : [ "}" , { } ] } } , "jsonrpc" : "2.0" }"#,
            b"{\"result\":{\"x\":\"\\\\\"},\"id\":123456789012345678}\r\n",
        ];
        for msg in usual {
            let fast = fast_response(msg).expect("the usual shape");
            let Incoming::Response { id, outcome: Ok(json) } =
                decode_parsed(std::str::from_utf8(msg).unwrap()).unwrap()
            else {
                panic!("serde reads no response")
            };
            assert_eq!((fast.0, &msg[fast.1]), (id, json.get().as_bytes()));
        }
        for other in [
            &br#"{"jsonrpc":"2.0","id":"s","result":{}}"#[..],
            br#"{"jsonrpc":"2.0","id":-1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":01,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":[]}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":null}"#,
            br#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"id":2}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{},"extra":true}"#,
            br#"{"jsonrpc":"2.0","i\u0064":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"a":"}"#,
            br#"{"jsonrpc":"2.0","id":1}"#,
            br#"{"jsonrpc":"2.0","result":{}}"#,
            br#"{}"#,
            br#"{"id":1,"result":{"a":"\"#,
        ] {
            assert!(fast_response(other).is_none(), "{}", String::from_utf8_lossy(other));
        }
    }

    /// The head of a response whose result may be its last member: the id, and the
    /// text up to the envelope's closing brace; anything else is left to `decode`.
    #[test]
    fn response_heads() {
        for (msg, id, rest) in [
            (&br#"{"jsonrpc":"2.0","id":7,"result":{"a":1}}"#[..], 7, r#"{"a":1}"#),
            (b"{ \"id\" : 0 , \"result\" : { } \n}\r\n", 0, "{ } \n"),
            // Not one value: the reader refuses it, and decode reads the message.
            (
                br#"{"id":1,"result":{},"error":{"code":1,"message":"x"}}"#,
                1,
                r#"{},"error":{"code":1,"message":"x"}"#,
            ),
        ] {
            let (got_id, range) = response_head(msg).expect("a head");
            assert_eq!((got_id, &msg[range]), (id, rest.as_bytes()));
        }
        for other in [
            &br#"{"result":{"a":1},"id":7}"#[..],
            br#"{"jsonrpc":"2.0","id":7,"result":{"a":1},"x":2}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":{}"#,
            br#"{"jsonrpc":"2.0","id":7,"result":}"#,
            br#"{"jsonrpc":"2.0","id":7,"error":{}}"#,
            br#"{"jsonrpc":"2.0","method":"x","params":{}}"#,
        ] {
            assert!(response_head(other).is_none(), "{}", String::from_utf8_lossy(other));
        }
    }

    /// A message with a response's id that is no valid response names its id and
    /// what is wrong, so that it fails that request.
    #[test]
    fn malformed_responses_name_their_id() {
        for (bad, why) in [
            (
                &br#"{"id":1,"result":{},"error":{"code":1,"message":"x"}}"#[..],
                "both result and error",
            ),
            (br#"{"jsonrpc":"2.0","id":1}"#, "neither result nor error"),
            (br#"{"id":1,"result":null}"#, "neither result nor error"),
            (br#"{"id":1,"error":"nope"}"#, "malformed error object"),
        ] {
            match decode(bad).unwrap() {
                Incoming::Malformed { id: 1, why: e } => {
                    assert_eq!(e.status, Status::MCPC_ERR_PROTOCOL);
                    assert!(e.message.contains(why), "{}", e.message);
                }
                other => panic!("{}: {other:?}", String::from_utf8_lossy(bad)),
            }
        }
    }

    #[test]
    fn rejects_bad_responses() {
        for bad in [
            &br#"{"id":"abc","result":{}}"#[..],
            br#"{"result":{}}"#,
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
        let out = encode_request(3, "tools/call", Some(&Serialized(&v)), 0);
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"text":"a\nb"}}"#
        );
        assert!(!out.contains(&b'\n'));
        assert_eq!(
            encode_request(-2, "a\"b", None::<&Serialized<()>>, 0),
            br#"{"jsonrpc":"2.0","id":-2,"method":"a\"b"}"#
        );
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
