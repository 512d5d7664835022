//! The results of `resources/read`, `prompts/get` and `completion/complete`,
//! checked. Everything here is untrusted input: a shape the specification does not
//! allow is `MCPC_ERR_PROTOCOL` naming what was wrong, never a guess.
//!
//! A read result in the usual shape is read by one checking pass
//! ([`contents_scanned`]), as a tool call's result is: each text checked and
//! unescaped into its own buffer at once, each blob decoded from the JSON text
//! itself, the JSON kept as it came. Any other shape goes through serde, which says
//! what is wrong with it.

use base64::Engine;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::read::set_once;
use crate::error::{quote, Error, Result, Status};
use crate::scan;
use crate::text::Text;
use crate::unescape::{json_string, unescape_checked_into};

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
    pub json: Text,
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
/// contents, each with its `uri`; a blob is decoded. By one checking pass in the
/// usual shape ([`contents_scanned`]), by serde otherwise.
#[cfg(test)]
pub fn parse_contents(json: &str) -> Result<Contents> {
    let items = match contents_scanned(json) {
        Some(items) => items,
        None => contents_parsed(json)?,
    };
    Ok(Contents {
        items,
        json: Text::Own(json.into()),
    })
}

/// [`parse_contents`]'s reading by serde, of any text.
pub(crate) fn contents_parsed(json: &str) -> Result<Vec<Content>> {
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
    Ok(items)
}

/// Reads a read result from the text that [`jsonrpc::response_head`] gives: `Some`
/// only when that text is one JSON object (white space after it at most) in the
/// usual shape ([`contents_scanned`]). `owner`, when given, holds the whole message:
/// a result that is most of it is kept as a slice of it, not copied.
///
/// [`jsonrpc::response_head`]: crate::jsonrpc::response_head
pub(crate) fn contents_read(text: &str, owner: Option<&bytes::Bytes>) -> Option<Contents> {
    let whole = &text[..scan::skip_ws_back(text.as_bytes(), text.len())];
    let items = contents_scanned(whole)?;
    Some(Contents {
        items,
        json: Text::kept(owner, whole),
    })
}

/// [`parse_contents`]'s reading by one checking pass, of valid JSON in the usual
/// shape: an object whose keys hold no escapes, with `contents` once, an array of
/// objects whose keys hold no escapes, each known one once: `uri` a string,
/// `mimeType` a string or null, one of `text` and `blob` a string (the other absent
/// or null), `_meta` an object or null. `None` for anything else, and for what
/// serde refuses (a blob that is not base64, half a surrogate pair, a number out of
/// range in an entry), which serde then reads and names.
pub(crate) fn contents_scanned(json: &str) -> Option<Vec<Content>> {
    let b = json.as_bytes();
    let mut items = None;
    let end = members(b, scan::skip_ws(b, 0), |key, at| match key {
        b"contents" => {
            let (list, end) = entries(json, at)?;
            set_once(&mut items, list)?;
            Some(end)
        }
        _ => scan::checked_value_end(b, at),
    })?;
    (scan::skip_ws(b, end) == b.len()).then_some(())?;
    items
}

/// Checks the object that opens at `b[i]`: each key (holding no escape) goes to
/// `on` with where its value starts, and `on` gives where the value ends. Where the
/// object ends; `None` if it is not one, or `on` refuses a member.
fn members(b: &[u8], i: usize, mut on: impl FnMut(&[u8], usize) -> Option<usize>) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut i = scan::skip_ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let (key_end, escaped) = scan::checked_string_end(b, i + 1)?;
        if escaped {
            return None;
        }
        let key = &b[i + 1..key_end - 1];
        i = scan::skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = scan::skip_ws(b, on(key, scan::skip_ws(b, i + 1))?);
        match b.get(i)? {
            b',' => i = scan::skip_ws(b, i + 1),
            b'}' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The `contents` array that opens at `json[i]`, read, and where it ends.
fn entries(json: &str, i: usize) -> Option<(Vec<Content>, usize)> {
    let b = json.as_bytes();
    if b.get(i) != Some(&b'[') {
        return None;
    }
    let mut list = Vec::new();
    let mut i = scan::skip_ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return Some((list, i + 1));
    }
    loop {
        let (item, end) = entry(json, i)?;
        list.push(item);
        i = scan::skip_ws(b, end);
        match b.get(i)? {
            b',' => i = scan::skip_ws(b, i + 1),
            b']' => return Some((list, i + 1)),
            _ => return None,
        }
    }
}

/// `null` at `b[at]`, or the string there read by `string` (given where its
/// contents start: the value and where it ends); `None` for anything else.
fn or_null<T>(b: &[u8], at: usize, string: impl FnOnce(usize) -> Option<(T, usize)>) -> Option<(Option<T>, usize)> {
    if b.get(at..at + 4) == Some(b"null") {
        return Some((None, at + 4));
    }
    if b.get(at) != Some(&b'"') {
        return None;
    }
    string(at + 1).map(|(value, end)| (Some(value), end))
}

/// The string (unescaped) or null at `json[at]`, and where it ends.
fn string_or_null(json: &str, at: usize) -> Option<(Option<String>, usize)> {
    or_null(json.as_bytes(), at, |from| {
        let (end, _) = scan::checked_string_end(json.as_bytes(), from)?;
        // Unescaped with room for one byte more: C's copy adds its NUL in place.
        Some((json_string(&json[at..end])?, end))
    })
}

/// The text at `json[at]` (a string or null), checked and unescaped in one pass into
/// a buffer of its size with room for C's NUL, and where it ends.
fn text_or_null(json: &str, at: usize) -> Option<(Option<String>, usize)> {
    or_null(json.as_bytes(), at, |from| {
        // Its end found first (unchecked, sixteen bytes at a time) only to size the buffer.
        let stop = scan::string_end(json.as_bytes(), from)?;
        let mut out = String::with_capacity(stop - from);
        let end = unescape_checked_into(&mut out, json, from)?;
        Some((out, end))
    })
}

/// The blob at `json[at]` (a string or null), decoded from base64 straight from the
/// JSON text (unescaped first only if it holds an escape), and where it ends.
fn blob_or_null(json: &str, at: usize) -> Option<(Option<Vec<u8>>, usize)> {
    or_null(json.as_bytes(), at, |from| {
        let (end, escaped) = scan::checked_string_end(json.as_bytes(), from)?;
        let engine = &base64::engine::general_purpose::STANDARD;
        let bytes = if escaped {
            engine.decode(json_string(&json[at..end])?)
        } else {
            engine.decode(&json.as_bytes()[from..end - 1])
        };
        Some((bytes.ok()?, end))
    })
}

/// The value at `json[at]`, checked by serde as the serde reading parses an entry's
/// members (into a `Value`: stricter than skipping it, as a number out of range or
/// half a surrogate pair is refused), and where it ends.
fn value_as_serde_reads_it(json: &str, at: usize) -> Option<(serde_json::Value, usize)> {
    let end = scan::checked_value_end(json.as_bytes(), at)?;
    Some((serde_json::from_str(&json[at..end]).ok()?, end))
}

/// One entry of `contents`, the object that opens at `json[at]`, and where it ends.
fn entry(json: &str, at: usize) -> Option<(Content, usize)> {
    let (mut uri, mut mime_type, mut text, mut blob, mut meta) = (None, None, None, None, None);
    let end = members(json.as_bytes(), at, |key, at| {
        let (end, fresh) = match key {
            b"uri" => string_or_null(json, at).map(|(v, end)| (end, set_once(&mut uri, v)))?,
            b"mimeType" => string_or_null(json, at).map(|(v, end)| (end, set_once(&mut mime_type, v)))?,
            b"text" => text_or_null(json, at).map(|(v, end)| (end, set_once(&mut text, v)))?,
            b"blob" => blob_or_null(json, at).map(|(v, end)| (end, set_once(&mut blob, v)))?,
            b"_meta" => value_as_serde_reads_it(json, at).map(|(v, end)| (end, set_once(&mut meta, v)))?,
            // Never kept, but read as the serde reading reads it.
            _ => value_as_serde_reads_it(json, at).map(|(_, end)| (end, Some(())))?,
        };
        fresh.map(|()| end)
    })?;
    let body = match (text.flatten(), blob.flatten()) {
        (Some(t), None) => Body::Text(t),
        (None, Some(b)) => Body::Blob(b),
        _ => return None,
    };
    let meta = match meta {
        None | Some(serde_json::Value::Null) => None,
        // As the serde reading gives it: the value written again, compactly.
        Some(m @ serde_json::Value::Object(_)) => Some(m.to_string()),
        Some(_) => return None,
    };
    let item = Content {
        uri: uri.flatten()?,
        mime_type: mime_type.flatten(),
        body,
        meta,
    };
    Some((item, end))
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

    /// What a reading gives, to compare two.
    type Seen = Vec<(String, Option<String>, Body, Option<String>)>;

    fn seen(items: Vec<Content>) -> Seen {
        items
            .into_iter()
            .map(|c| (c.uri, c.mime_type, c.body, c.meta))
            .collect()
    }

    /// The scan reads every input as serde reads it, or leaves it to serde: never a
    /// reading of its own, and never one of what serde refuses.
    fn agrees(json: &str) -> Option<Seen> {
        let scanned = contents_scanned(json).map(seen);
        let parsed = contents_parsed(json).map(seen);
        if let Some(s) = &scanned {
            assert_eq!(Some(s), parsed.as_ref().ok(), "{json}");
        }
        // Whichever reading, the same outcome.
        let read = parse_contents(json).map(|c| seen(c.items));
        assert_eq!(read.as_ref().ok(), parsed.as_ref().ok(), "{json}");
        assert_eq!(read.is_err(), parsed.is_err(), "{json}");
        scanned
    }

    #[test]
    fn scan_reads_the_usual_shapes() {
        for json in [
            r#"{"contents":[{"uri":"a://1","mimeType":"text/plain","text":"hi"}]}"#,
            r#"{"contents":[{"uri":"a://1","text":"a\"b\u00e9\n\\\/\ud83d\ude00"}]}"#,
            r#"{"contents":[{"uri":"a://1","text":"a\u0000b"}]}"#,
            r#"{"contents":[{"text":"","uri":"a://1","mimeType":null,"blob":null}]}"#,
            r#"{"contents":[{"uri":"a://2","blob":"AAEC/w=="},{"uri":"a://3","blob":""}]}"#,
            r#"{"contents":[{"uri":"a://2","blob":"AAEC\/w=="}]}"#,
            r#"{"contents":[{"uri":"a://2","blob":"\u0041AEC/w=="}]}"#,
            r#" { "contents" : [ { "uri" : "a\u002f1" , "text" : "x" , "_meta" : { "b" : [1, 2.0] , "a" : null } } ] } "#,
            r#"{"contents":[{"uri":"u","text":"x","_meta":null,"annotations":{"audience":["user"],"priority":0.5}}]}"#,
            r#"{"_meta":{"n":1e400},"contents":[],"nextCursor":"x","resultType":"complete"}"#,
            r#"{"contents":[]}"#,
        ] {
            assert!(agrees(json).is_some(), "{json}");
        }
        let meta = agrees(r#"{"contents":[{"uri":"u","text":"x","_meta":{ "b" : 1,"a":{} }}]}"#).unwrap();
        // As serde's reading gives it: written again, compactly, its keys in order.
        assert_eq!(meta[0].3.as_deref(), Some(r#"{"a":{},"b":1}"#));
    }

    #[test]
    fn scan_leaves_the_rest_to_serde() {
        for json in [
            // Not base64, or not canonical.
            r#"{"contents":[{"uri":"a://1","blob":"%%%"}]}"#,
            r#"{"contents":[{"uri":"a://1","blob":"AAE"}]}"#,
            r#"{"contents":[{"uri":"a://1","blob":"AAF="}]}"#,
            r#"{"contents":[{"uri":"a://1","blob":"AA\nA="}]}"#,
            r#"{"contents":[{"uri":"a://1","blob":"AAEC/w==\u0000"}]}"#,
            // No contents, or not an array of objects.
            "{}",
            r#"{"contents":null}"#,
            r#"{"contents":{}}"#,
            r#"{"contents":[7]}"#,
            "[]",
            "",
            // Duplicates: refused at the top, the last taken in an entry, by serde.
            r#"{"contents":[],"contents":[]}"#,
            r#"{"contents":[{"uri":"a","uri":"b","text":"x"}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","text":null}]}"#,
            r#"{"contents":[{"uri":"a","text":null,"text":"x"}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","_meta":{},"_meta":{"k":1}}]}"#,
            // Escaped keys, which serde reads as the key they stand for.
            r#"{"\u0063ontents":[{"uri":"a","text":"x"}]}"#,
            r#"{"contents":[{"ur\u0069":"a","text":"x"}]}"#,
            // Wrong types and missing parts.
            r#"{"contents":[{"uri":1,"text":"x"}]}"#,
            r#"{"contents":[{"uri":null,"text":"x"}]}"#,
            r#"{"contents":[{"text":"x"}]}"#,
            r#"{"contents":[{"uri":"a","text":1}]}"#,
            r#"{"contents":[{"uri":"a","mimeType":[],"text":"x"}]}"#,
            r#"{"contents":[{"uri":"a"}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","blob":""}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","_meta":[]}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","_meta":"m"}]}"#,
            // What serde refuses in an entry: half a surrogate pair, a number out of range.
            r#"{"contents":[{"uri":"a","text":"\ud800"}]}"#,
            r#"{"contents":[{"uri":"a","text":"\udc00x"}]}"#,
            r#"{"contents":[{"uri":"\ud800","text":"x"}]}"#,
            r#"{"contents":[{"uri":"a","blob":"\ud800"}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","annotations":{"priority":1e400}}]}"#,
            r#"{"contents":[{"uri":"a","text":"x","_meta":{"k":"\udc00"}}]}"#,
            // Not JSON.
            "{\"contents\":[{\"uri\":\"a\",\"text\":\"a\u{1}b\"}]}",
            r#"{"contents":[{"uri":"a","text":"\x"}]}"#,
            r#"{"contents":[{"uri":"a","text":"x"}]}}"#,
            r#"{"contents":[{"uri":"a","text":"x"}],}"#,
            r#"{"contents":[{"uri":"a","text":"x"},]}"#,
            r#"{"contents":[{"uri":"a","text":"x"}]"#,
            r#"{"contents":[{"uri":"a","text":"x}]}"#,
            r#"{"contents":[{"uri":"a","text":"x",}]}"#,
            r#"{"contents":[{"uri":"a","text":nul}]}"#,
            r#"{"contents":[{"uri":"a","text":"x"}] x}"#,
        ] {
            assert!(agrees(json).is_none(), "{json}");
        }
        let deep = format!(
            r#"{{"contents":[{{"uri":"a","text":"x","d":{}1{}}}]}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(agrees(&deep).is_none());
        let deep = format!(r#"{{"contents":[],"d":{}1{}}}"#, "[".repeat(100), "]".repeat(100));
        assert!(agrees(&deep).is_none());
    }

    #[test]
    fn scan_reads_large_contents_once() {
        // A 1 MiB text with an escape every 72 bytes, and a 1 MiB blob.
        let text: String = (0..1 << 20)
            .map(|i| {
                if i % 72 == 71 {
                    '\n'
                } else {
                    (b'a' + (i % 26) as u8) as char
                }
            })
            .collect();
        let bytes: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let blob = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let json = format!(
            r#"{{"contents":[{{"uri":"t","text":{}}},{{"uri":"b","blob":"{blob}"}}]}}"#,
            serde_json::to_string(&text).unwrap()
        );
        let read = agrees(&json).unwrap();
        assert_eq!(read[0].2, Body::Text(text.clone()));
        assert_eq!(read[1].2, Body::Blob(bytes));
        // The text has room for C's NUL: adding it does not move it.
        let Body::Text(t) = contents_scanned(&json).unwrap().remove(0).body else {
            panic!()
        };
        assert!(t.capacity() > t.len());
        // A large result in a message handed over whole is kept as a slice of it.
        let message = bytes::Bytes::from(format!("{json} \n"));
        let kept = contents_read(std::str::from_utf8(&message).unwrap(), Some(&message)).unwrap();
        assert!(matches!(kept.json, Text::Shared(_)));
        assert_eq!(&*kept.json, json);
        assert!(contents_read(&format!("{json}x"), None).is_none());
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
