//! The results of `resources/read`, `prompts/get` and `completion/complete`,
//! checked. Everything here is untrusted input: a shape the specification does not
//! allow is `MCPC_ERR_PROTOCOL` naming what was wrong, never a guess.

use base64::Engine;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};

/// Most values a completion may hold (the specification's limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

fn protocol(what: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_PROTOCOL, what)
}

/// What one resource content holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Body {
    /// `text`, as sent.
    Text(String),
    /// `blob`, decoded from base64.
    Blob(Vec<u8>),
}

/// One entry of a read's `contents`.
#[derive(Debug)]
pub struct Content {
    pub uri: String,
    pub mime_type: Option<String>,
    pub body: Body,
    /// Its `_meta` as JSON, when it has one.
    pub meta: Option<String>,
}

/// A `ReadResourceResult`: its contents, and the result as the server sent it.
#[derive(Debug)]
pub struct Contents {
    pub items: Vec<Content>,
    pub json: String,
}

#[derive(Deserialize)]
struct RawContent {
    uri: Option<serde_json::Value>,
    #[serde(rename = "mimeType")]
    mime_type: Option<serde_json::Value>,
    text: Option<serde_json::Value>,
    blob: Option<serde_json::Value>,
    #[serde(rename = "_meta")]
    meta: Option<Box<RawValue>>,
}

fn opt_string(v: Option<serde_json::Value>, what: &str, n: usize) -> Result<Option<String>> {
    match v {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(protocol(format!("contents[{n}].{what} is not a string"))),
    }
}

fn content(n: usize, c: RawContent) -> Result<Content> {
    let uri = opt_string(c.uri, "uri", n)?.ok_or_else(|| protocol(format!("contents[{n}] has no uri")))?;
    let mime_type = opt_string(c.mime_type, "mimeType", n)?;
    let text = opt_string(c.text, "text", n)?;
    let blob = opt_string(c.blob, "blob", n)?;
    let body = match (text, blob) {
        (Some(t), None) => Body::Text(t),
        (None, Some(b)) => Body::Blob(
            base64::engine::general_purpose::STANDARD
                .decode(b.as_bytes())
                .map_err(|e| protocol(format!("contents[{n}].blob of {} is not base64: {e}", quote(&uri))))?,
        ),
        (Some(_), Some(_)) => return Err(protocol(format!("contents[{n}] has both text and blob"))),
        (None, None) => return Err(protocol(format!("contents[{n}] has neither text nor blob"))),
    };
    let meta = match c.meta {
        Some(m) if m.get() != "null" => {
            if !m.get().starts_with('{') {
                return Err(protocol(format!("contents[{n}]._meta is not an object")));
            }
            Some(m.get().to_string())
        }
        _ => None,
    };
    Ok(Content {
        uri,
        mime_type,
        body,
        meta,
    })
}

/// Reads a `resources/read` result: `contents` must be an array of text or blob
/// contents, each with its `uri`; a blob is decoded.
pub fn parse_contents(json: &str) -> Result<Contents> {
    #[derive(Deserialize)]
    struct Read {
        contents: Option<Vec<serde_json::Value>>,
    }
    let read: Read =
        serde_json::from_str(json).map_err(|e| protocol(format!("the result is not a read result: {e}")))?;
    let raw = read.contents.ok_or_else(|| protocol("the result has no contents"))?;
    let mut items = Vec::with_capacity(raw.len());
    for (n, v) in raw.into_iter().enumerate() {
        let c: RawContent =
            serde_json::from_value(v).map_err(|_| protocol(format!("contents[{n}] is not an object")))?;
        items.push(content(n, c)?);
    }
    Ok(Contents {
        items,
        json: json.to_string(),
    })
}

/// Checks a `prompts/get` result: `messages` is an array of messages, each with a
/// string `role` and a `content` object that has a string `type`. Content is kept
/// verbatim, so types this version does not know pass through.
pub fn check_prompt(json: &str) -> Result<()> {
    #[derive(Deserialize)]
    struct Message {
        role: Option<serde_json::Value>,
        content: Option<serde_json::Value>,
    }
    #[derive(Deserialize)]
    struct Get {
        messages: Option<Vec<serde_json::Value>>,
    }
    let get: Get = serde_json::from_str(json).map_err(|e| protocol(format!("the result is not a prompt: {e}")))?;
    let messages = get.messages.ok_or_else(|| protocol("the result has no messages"))?;
    for (n, m) in messages.into_iter().enumerate() {
        let m: Message = serde_json::from_value(m).map_err(|_| protocol(format!("messages[{n}] is not an object")))?;
        if !matches!(m.role, Some(serde_json::Value::String(_))) {
            return Err(protocol(format!("messages[{n}] has no string role")));
        }
        let typed = m
            .content
            .as_ref()
            .and_then(|c| c.get("type"))
            .is_some_and(serde_json::Value::is_string);
        if !typed {
            return Err(protocol(format!("messages[{n}].content has no string type")));
        }
    }
    Ok(())
}

/// Checks a `completion/complete` result: `completion.values` is an array of at
/// most [`MAX_COMPLETION_VALUES`] strings; `total` (a number) and `hasMore` (a
/// boolean) are optional.
pub fn check_completion(json: &str) -> Result<()> {
    #[derive(Deserialize)]
    struct Completion {
        values: Option<serde_json::Value>,
        total: Option<serde_json::Value>,
        #[serde(rename = "hasMore")]
        has_more: Option<serde_json::Value>,
    }
    #[derive(Deserialize)]
    struct Complete {
        completion: Option<Completion>,
    }
    let done: Complete =
        serde_json::from_str(json).map_err(|e| protocol(format!("the result is not a completion: {e}")))?;
    let c = done
        .completion
        .ok_or_else(|| protocol("the result has no completion"))?;
    let Some(serde_json::Value::Array(values)) = c.values else {
        return Err(protocol("completion.values is not an array"));
    };
    if values.len() > MAX_COMPLETION_VALUES {
        return Err(protocol(format!(
            "completion.values holds {} values, more than {MAX_COMPLETION_VALUES}",
            values.len()
        )));
    }
    if !values.iter().all(serde_json::Value::is_string) {
        return Err(protocol("completion.values holds a value that is not a string"));
    }
    if c.total.as_ref().is_some_and(|t| !t.is_u64()) {
        return Err(protocol("completion.total is not a whole number"));
    }
    if c.has_more.as_ref().is_some_and(|h| !h.is_boolean()) {
        return Err(protocol("completion.hasMore is not a boolean"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(r: Result<impl std::fmt::Debug>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.status, Status::MCPC_ERR_PROTOCOL);
        e.message
    }

    #[test]
    fn contents_text_and_blob() {
        let c = parse_contents(
            r#"{"contents":[{"uri":"a://1","mimeType":"text/plain","text":"hi","_meta":{"k":1}},
                            {"uri":"a://2","blob":"AAEC/w=="}]}"#,
        )
        .unwrap();
        assert_eq!(c.items.len(), 2);
        assert_eq!(c.items[0].body, Body::Text("hi".into()));
        assert_eq!(c.items[0].mime_type.as_deref(), Some("text/plain"));
        assert_eq!(c.items[0].meta.as_deref(), Some(r#"{"k":1}"#));
        assert_eq!(c.items[1].body, Body::Blob(vec![0, 1, 2, 255]));
        assert_eq!(c.items[1].mime_type, None);
        assert!(parse_contents(r#"{"contents":[]}"#).unwrap().items.is_empty());
    }

    #[test]
    fn contents_refused() {
        assert!(err(parse_contents(r#"{}"#)).contains("no contents"));
        assert!(err(parse_contents(r#"{"contents":[{"uri":"a://1","blob":"%%%"}]}"#)).contains("not base64"));
        assert!(err(parse_contents(r#"{"contents":[{"uri":"a://1"}]}"#)).contains("neither"));
        assert!(err(parse_contents(r#"{"contents":[{"uri":"a://1","text":"x","blob":""}]}"#)).contains("both"));
        assert!(err(parse_contents(r#"{"contents":[{"text":"x"}]}"#)).contains("no uri"));
        assert!(err(parse_contents(r#"{"contents":[{"uri":1,"text":"x"}]}"#)).contains("uri is not a string"));
        assert!(err(parse_contents(r#"{"contents":[7]}"#)).contains("not an object"));
        assert!(err(parse_contents(r#"{"contents":[{"uri":"u","text":"x","_meta":[]}]}"#)).contains("_meta"));
        assert!(err(parse_contents(r#"[]"#)).contains("not a read result"));
    }

    #[test]
    fn prompts_checked() {
        check_prompt(r#"{"messages":[{"role":"user","content":{"type":"audio","data":"","mimeType":"a"}}]}"#).unwrap();
        check_prompt(r#"{"description":"d","messages":[]}"#).unwrap();
        assert!(err(check_prompt(r#"{}"#)).contains("no messages"));
        assert!(err(check_prompt(r#"{"messages":[{"content":{"type":"text"}}]}"#)).contains("role"));
        assert!(err(check_prompt(r#"{"messages":[{"role":"user","content":{}}]}"#)).contains("type"));
    }

    #[test]
    fn completions_checked() {
        check_completion(r#"{"completion":{"values":["a","b"],"total":2,"hasMore":false}}"#).unwrap();
        assert!(err(check_completion(r#"{}"#)).contains("no completion"));
        assert!(err(check_completion(r#"{"completion":{"values":[1]}}"#)).contains("not a string"));
        assert!(err(check_completion(r#"{"completion":{}}"#)).contains("not an array"));
        assert!(err(check_completion(r#"{"completion":{"values":[],"total":-1}}"#)).contains("total"));
        assert!(err(check_completion(r#"{"completion":{"values":[],"hasMore":1}}"#)).contains("hasMore"));
        let many = format!(r#"{{"completion":{{"values":[{}]}}}}"#, vec![r#""v""#; 101].join(","));
        assert!(err(check_completion(&many)).contains("more than 100"));
    }
}
