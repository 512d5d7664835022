//! Reading tool listings and call results: a scanner for the shapes servers send
//! (one pass, nothing copied that need not be) and serde for everything else, with
//! the same results (the fuzz targets check it).

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{Error, Result, Status};
use crate::scan;

use super::*;
use crate::unescape::{json_str, json_string, unescape_checked_into, unescape_nul};

/// Tools are borrowed from the page's text, and copied once, into their final form.
#[derive(Deserialize)]
pub(super) struct PageFields<'a> {
    #[serde(borrow)]
    pub(super) tools: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    pub(super) next_cursor: Option<String>,
}

/// A tool's `name`. The tool's JSON was checked whole when its page was read, so it
/// is scanned, not parsed again, up to `name` (usually the first key)
/// (docs/decisions/0002-scanner-for-results.md).
pub(crate) fn tool_name(json: &str) -> std::result::Result<String, String> {
    match crate::scan::member(json, "name") {
        // An escaped key: serde reads it.
        Err(()) => tool_name_parsed(json),
        Ok(None) if is_object(json) => Err("missing field `name`".into()),
        Ok(None) => Err("a tool is not a JSON object".into()),
        Ok(Some(v)) if v.starts_with('"') && !v.contains('\\') => Ok(v[1..v.len() - 1].to_owned()),
        Ok(Some(v)) => serde_json::from_str::<String>(v).map_err(|e| e.to_string()),
    }
}

/// [`tool_name`] by parsing, for any JSON.
pub(crate) fn tool_name_parsed(json: &str) -> std::result::Result<String, String> {
    use serde::de::{Error as _, IgnoredAny, MapAccess, Visitor};
    const FOUND: &str = "found the name";
    struct Find<'a>(&'a mut Option<String>);
    impl<'de> Visitor<'de> for Find<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a tool object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                if key == "name" {
                    let name: Cow<'de, str> = map.next_value()?;
                    *self.0 = Some(name.into_owned());
                    // Stops the parser here; the error is not one.
                    return Err(A::Error::custom(FOUND));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut name = None;
    let outcome = serde::Deserializer::deserialize_map(&mut serde_json::Deserializer::from_str(json), Find(&mut name));
    match (name, outcome) {
        (Some(name), _) => Ok(name),
        (None, Err(e)) => Err(e.to_string()),
        (None, Ok(())) => Err("missing field `name`".into()),
    }
}

/// Reads a `tools/list` result from the text that [`jsonrpc::response_head`] gives:
/// `Some` only when that text is one JSON object (white space after it at most) in
/// the usual shape ([`page_scanned`]); the page may still be refused (a tool without
/// a name, say).
///
/// [`jsonrpc::response_head`]: crate::jsonrpc::response_head
pub(crate) fn page_read(text: &str) -> Option<PageRead> {
    page_scanned(text).map(page_from)
}

pub(super) fn page_from((tools, next_cursor): PageParts<'_>) -> Result<Page> {
    let tools = tools
        .into_iter()
        .enumerate()
        .map(|(i, json)| {
            let name = tool_name(json).map_err(|e| {
                Error::new(
                    Status::MCPC_ERR_PROTOCOL,
                    format!("tools/list entry {i} is malformed: {e}"),
                )
            })?;
            if name.is_empty() {
                return Err(Error::new(
                    Status::MCPC_ERR_PROTOCOL,
                    format!("tools/list entry {i} has an empty name"),
                ));
            }
            Ok(Tool {
                name,
                json_nul: with_nul(json),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Page { tools, next_cursor })
}

/// A page's tools (each one's JSON) and its cursor.
pub(super) type PageParts<'a> = (Vec<&'a str>, Option<String>);

/// [`parse_page`]'s reading by serde, of any text.
pub(crate) fn page_parsed(json: &str) -> Result<PageParts<'_>> {
    let fields: PageFields<'_> = parse_object(json, "tools/list result")?;
    Ok((
        fields.tools.into_iter().map(RawValue::get).collect(),
        fields.next_cursor,
    ))
}

/// [`parse_page`]'s reading by one checking scan ([`scan::walk_object`]) that
/// finds the tools as it goes, of valid JSON in the usual shape: an object whose
/// keys hold no escapes, with `tools` (an array) once and `nextCursor` (a string
/// or null) at most once. `None` for anything else, which serde then reads. The scan
/// is cheaper than serde's reading; the fuzz target `results` checks that both agree.
pub(crate) fn page_scanned(json: &str) -> Option<PageParts<'_>> {
    use scan::Event::{Key, Value};
    /// A member of the page, told apart once, at its key.
    #[derive(Clone, Copy, PartialEq)]
    enum K {
        Tools,
        Cursor,
        Other,
    }
    let b = json.as_bytes();
    let (mut key, mut tools, mut cursor, mut list) = (K::Other, None, None, Vec::new());
    scan::walk_object(json, 2, |event| {
        match event {
            Key(_, _, true) => return None,
            Key(1, k, false) => {
                key = match &b[k] {
                    b"tools" => K::Tools,
                    b"nextCursor" => K::Cursor,
                    _ => K::Other,
                }
            }
            Value(2, v) if key == K::Tools => list.push(&json[v]),
            Value(1, v) => {
                let slot = match key {
                    K::Tools => &mut tools,
                    K::Cursor => &mut cursor,
                    K::Other => return Some(()),
                };
                set_once(slot, &json[v])?;
            }
            _ => {}
        }
        Some(())
    })?;
    if !tools?.starts_with('[') {
        return None;
    }
    let next_cursor = match cursor {
        None | Some("null") => None,
        Some(quoted) => Some(json_string(quoted)?),
    };
    Some((list, next_cursor))
}

/// Sets a field read once: `None` (serde then reads the text, refuses a known
/// key given twice, and says so) if it was set already.
pub(super) fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.replace(value).is_none().then_some(())
}

#[derive(Deserialize)]
pub(super) struct CallFields<'a> {
    #[serde(default)]
    pub(super) content: Option<Texts>,
    #[serde(rename = "structuredContent", default, borrow)]
    pub(super) structured: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    pub(super) is_error: Option<bool>,
}

#[derive(Deserialize)]
pub(super) struct Block<'a> {
    #[serde(rename = "type", borrow)]
    pub(super) kind: Cow<'a, str>,
    #[serde(default)]
    pub(super) text: Option<NulText>,
}

/// The text of `content`'s text blocks, taken as the blocks are read: no list of
/// blocks is built.
pub(super) struct Texts(TextBlocks);

impl<'de> Deserialize<'de> for Texts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Texts;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of content blocks")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Texts, A::Error> {
                let mut texts = TextBlocks::new();
                while let Some(block) = seq.next_element::<Block<'de>>()? {
                    if block.kind == "text" {
                        let text = block
                            .text
                            .ok_or_else(|| serde::de::Error::custom("a text block has no text"))?;
                        texts.push(text.0);
                    }
                }
                Ok(Texts(texts))
            }
        }
        d.deserialize_seq(Visit)
    }
}

/// `s` followed by a NUL, in one allocation of the right size: text that C can borrow.
pub(super) fn with_nul(s: &str) -> String {
    let mut t = String::with_capacity(s.len() + 1);
    t.push_str(s);
    t.push('\0');
    t
}

/// A JSON string stored with a trailing NUL: copied once from the input (or from
/// the parser's unescaping buffer) into its final place.
pub(super) struct NulText(String);

impl<'de> Deserialize<'de> for NulText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = NulText;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> std::result::Result<NulText, E> {
                Ok(NulText(with_nul(s)))
            }
        }
        d.deserialize_str(Visit)
    }
}

/// Reads a call result from the text that [`jsonrpc::response_head`] gives: `Some`
/// only when that text is one JSON object (white space after it at most) in the
/// usual shape ([`call_fields_scanned`]). Then the response is read whole in this
/// one pass.
///
/// [`jsonrpc::response_head`]: crate::jsonrpc::response_head
///
/// `owner`, when given, holds the whole message: a result that is most of it is
/// then kept as a slice of it ([`Text::shared`]), not copied.
///
/// The usual result with one text block ([`one_text_shape`]), kept whole, is kept
/// with its text in one allocation ([`Text::Joint`]): a copy of the JSON and the
/// text apart would cost an allocation more a call.
pub(crate) fn call_result_read(text: &str, owner: Option<&bytes::Bytes>) -> Option<CallResult> {
    let whole = &text[..scan::skip_ws_back(text.as_bytes(), text.len())];
    let owner = Text::worth_sharing(owner, whole);
    if let (Some((contents_end, is_error)), None) = (one_text_shape(whole), owner) {
        let json = u32::try_from(whole.len()).ok()?;
        // Room for the JSON, its text (no longer than its contents: exactly as long
        // when it has no escape, so the buffer is not made smaller after) and two NULs.
        let mut buf = String::with_capacity(whole.len() + contents_end - ONE_TEXT_HEAD.len() + 2);
        buf.push_str(whole);
        buf.push('\0');
        if one_text_into(whole, contents_end, &mut buf).is_some() {
            buf.push('\0');
            return Some(CallResult {
                raw: Text::Joint(buf.into_boxed_str(), json),
                is_error,
                structured: None,
                texts: TextBlocks::new(),
                joined: OnceLock::new(),
            });
        }
    }
    let fields = call_fields_scanned(text)?;
    Some(CallResult::new(Text::kept(owner, whole), fields))
}

/// A call result's text blocks, where its `structuredContent` lies in its text
/// (absent or null: `None`), and `isError`.
pub(super) type Fields = (TextBlocks, Option<std::ops::Range<usize>>, bool);

/// [`parse_call_result`]'s reading by serde, of any text.
pub(crate) fn call_fields_parsed(raw: &str) -> Result<Fields> {
    let fields: CallFields<'_> = parse_object(raw, "tools/call result")?;
    let structured = fields
        .structured
        .map(RawValue::get)
        .filter(|s| *s != "null")
        .map(|s| within(raw, s));
    Ok((
        fields.content.map_or_else(TextBlocks::new, |t| t.0),
        structured,
        fields.is_error.unwrap_or(false),
    ))
}

/// Where `part`, a slice of `whole`, lies in it.
pub(super) fn within(whole: &str, part: &str) -> std::ops::Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// [`parse_call_result`]'s reading by one checking scan ([`scan::walk_object`])
/// that finds the fields as it goes, of valid JSON in the usual shape: keys without
/// escapes, each known one once, `content` an array (or null) of objects with a
/// `type` string without escapes and a `text` string (or null). `None` for anything
/// else, which serde then reads. Texts are unescaped by [`unescape_nul`]. The fuzz
/// target `results` checks that both readings agree.
pub(crate) fn call_fields_scanned(json: &str) -> Option<Fields> {
    if let Some((text, is_error)) = one_text_nul(json) {
        return Some((smallvec::smallvec![text], None, is_error));
    }
    use scan::Event::{Key, Value};
    /// A key, told apart once (comparing it at each of its values cost more).
    #[derive(Clone, Copy, PartialEq)]
    enum K {
        Content,
        Structured,
        IsError,
        Type,
        Text,
        Other,
    }
    let b = json.as_bytes();
    // The member of the result being read, and of the content block.
    let (mut key, mut block_key) = (K::Other, K::Other);
    let (mut content, mut structured, mut is_error) = (None, None, None);
    let (mut kind, mut text) = (None, None);
    let mut texts = TextBlocks::new();
    scan::walk_object(json, 3, |event| {
        match event {
            Key(_, _, true) => return None,
            Key(1, k, false) => {
                key = match &b[k] {
                    b"content" => K::Content,
                    b"structuredContent" => K::Structured,
                    b"isError" => K::IsError,
                    _ => K::Other,
                }
            }
            Key(3, k, false) if key == K::Content => {
                block_key = match &b[k] {
                    b"type" => K::Type,
                    b"text" => K::Text,
                    _ => K::Other,
                }
            }
            Value(3, v) if key == K::Content => {
                let slot = match block_key {
                    K::Type => &mut kind,
                    K::Text => &mut text,
                    _ => return Some(()),
                };
                set_once(slot, v)?;
            }
            Value(2, v) if key == K::Content => {
                // A block, read whole: an object with a type; serde reads its text
                // whatever the type.
                if b[v.start] != b'{' {
                    return None;
                }
                let kind = json_str(&json[kind.take()?])?;
                if memchr::memchr(b'\\', kind.as_bytes()).is_some() {
                    return None;
                }
                let text = match text.take().map(|t| &json[t]) {
                    None | Some("null") => None,
                    Some(quoted) => Some(unescape_nul(json_str(quoted)?)?),
                };
                if kind == "text" {
                    texts.push(text?);
                }
            }
            Value(1, v) => {
                let slot = match key {
                    K::Content => &mut content,
                    K::Structured => &mut structured,
                    K::IsError => &mut is_error,
                    _ => return Some(()),
                };
                set_once(slot, v)?;
            }
            _ => {}
        }
        Some(())
    })?;
    let content = content.map(|c| &json[c]);
    if !content.map_or(true, |c| c == "null" || c.starts_with('[')) {
        return None;
    }
    let is_error = match is_error.map(|e| &json[e]) {
        None | Some("null" | "false") => false,
        Some("true") => true,
        Some(_) => return None,
    };
    let structured = structured.filter(|s| &json[s.clone()] != "null");
    Some((texts, structured, is_error))
}

/// The most common result, read by its fixed parts: one text block, in the key
/// order servers write (`{"content":[{"type":"text","text":"…"}]}`, then at most
/// `"isError":` `false` or `true`), without white space but at its end: where its
/// text's contents end, and `isError`. Only the text is then read
/// ([`one_text_into`]); any other text is `None`, for the walk, which spends most of
/// its work on this shape on the fixed parts.
pub(super) fn one_text_shape(json: &str) -> Option<(usize, bool)> {
    if !json.starts_with(ONE_TEXT_HEAD) {
        return None;
    }
    let end = scan::skip_ws_back(json.as_bytes(), json.len());
    let body = &json[..end]; // white space is ASCII
    ONE_TEXT_TAILS
        .iter()
        .find(|(tail, _)| body.ends_with(tail) && end - tail.len() >= ONE_TEXT_HEAD.len())
        .map(|(tail, is_error)| (end - tail.len(), *is_error))
}

/// How the usual result starts, up to its text's contents (see [`one_text_shape`]).
pub(super) const ONE_TEXT_HEAD: &str = r#"{"content":[{"type":"text","text":""#;
/// How it may end, from its text's closing quote, and `isError` for each.
pub(super) const ONE_TEXT_TAILS: [(&str, bool); 3] = [
    (r#""}]}"#, false),
    (r#""}],"isError":false}"#, false),
    (r#""}],"isError":true}"#, true),
];

/// The text of a result of [`one_text_shape`] whose contents end at `contents_end`,
/// checked and unescaped onto the end of `out` in one pass; `None` (with `out`
/// holding whatever was read) if it is not valid or its string ends elsewhere.
pub(super) fn one_text_into(json: &str, contents_end: usize, out: &mut String) -> Option<()> {
    (unescape_checked_into(out, json, ONE_TEXT_HEAD.len())? == contents_end + 1).then_some(())
}

/// The usual result's text in a buffer of its own, with a NUL after it, and
/// `isError`.
pub(super) fn one_text_nul(json: &str) -> Option<(String, bool)> {
    let (contents_end, is_error) = one_text_shape(json)?;
    // The text is no longer than its contents.
    let mut out = String::with_capacity(contents_end - ONE_TEXT_HEAD.len() + 1);
    one_text_into(json, contents_end, &mut out)?;
    out.push('\0');
    Some((out, is_error))
}
