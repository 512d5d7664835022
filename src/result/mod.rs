//! Normalising what the server returns: tool lists and tool call results.
//! Everything here is untrusted input: shapes are checked, nothing is assumed.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::ResultJson;
use crate::scan;

/// One tool: its name, and its JSON exactly as the server sent it.
#[derive(Debug)]
pub struct Tool {
    pub name: String,
    /// The JSON with a trailing NUL (JSON text never holds a raw NUL), so C can
    /// borrow it as it is.
    json_nul: String,
}

impl Tool {
    /// The tool's JSON.
    pub fn json(&self) -> &str {
        &self.json_nul[..self.json_nul.len() - 1]
    }

    /// The tool's JSON, NUL-terminated.
    pub fn json_nul(&self) -> &str {
        &self.json_nul
    }
}

/// One page of `tools/list`.
#[derive(Debug)]
pub struct Page {
    pub tools: Vec<Tool>,
    pub next_cursor: Option<String>,
}

/// Tools are borrowed from the page's text, and copied once, into their final form.
#[derive(Deserialize)]
struct PageFields<'a> {
    #[serde(borrow)]
    tools: Vec<&'a RawValue>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

/// A tool's `name`. The tool's JSON was checked whole when its page was read, so it
/// is scanned, not parsed, up to `name` (usually the first key); parsing it with
/// serde up to there cost about 2,500 instructions a tool (callgrind, 1000 tools).
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

/// True when the JSON text is an object. serde would also read a struct from an
/// array, which a result must never be.
pub fn is_object(json: &str) -> bool {
    json.trim_start().starts_with('{')
}

fn require_object(json: &str, what: &str) -> Result<()> {
    if is_object(json) {
        Ok(())
    } else {
        Err(Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!("{what} is not a JSON object"),
        ))
    }
}

/// Parses `json`, which must be an object, with serde: `what` names it in errors.
fn parse_object<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> Result<T> {
    require_object(json, what)?;
    serde_json::from_str(json).map_err(|e| Error::new(Status::MCPC_ERR_PROTOCOL, format!("{what} is malformed: {e}")))
}

/// Reads a `tools/list` result, checking all of its JSON: by a scan in the usual
/// shape ([`page_scanned`]), by serde otherwise, which says what is wrong with it.
pub fn parse_page(json: &str) -> Result<Page> {
    let parts = match page_scanned(json) {
        Some(parts) => parts,
        None => page_parsed(json)?,
    };
    page_from(parts)
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

/// A page read by the router with its response: the page, or why it is refused.
pub type PageRead = Result<Page>;

fn page_from((tools, next_cursor): PageParts<'_>) -> Result<Page> {
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
type PageParts<'a> = (Vec<&'a str>, Option<String>);

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
/// or null) at most once. `None` for anything else, which serde then reads. serde's
/// reading of a page of 50 tools cost about 142,000 instructions, the scan's about
/// 105,000 (callgrind); the fuzz target `results` checks that both agree.
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

/// The string that the JSON string `quoted` (checked) stands for; `None` if it is
/// not a string, or serde refuses what its `\u` escapes encode.
fn json_string(quoted: &str) -> Option<String> {
    let mut s = unescape_nul(json_str(quoted)?)?;
    s.pop(); // the NUL
    Some(s)
}

/// Sets a field read once: `None` (serde then reads the text, refuses a known
/// key given twice, and says so) if it was set already.
fn set_once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.replace(value).is_none().then_some(())
}

/// JSON text kept for the caller: a copy of its own, or, for a large result that
/// came in a message the transport handed over whole, a slice of that message. The
/// slice saves a copy of the result (1 MiB for a 1 MiB echo) and its memory.
#[derive(Debug)]
pub enum Text {
    Own(Box<str>),
    /// Boxed: a result is moved through several hands, and this keeps it small.
    Shared(Box<SharedStr>),
    /// The JSON (its length given), a NUL, then a call result's one text block and
    /// its NUL, in one allocation (see [`call_result_read`]).
    Joint(Box<str>, u32),
}

/// Bytes known to be UTF-8: made only from a `&str` (see [`Text::shared`]).
#[derive(Debug)]
pub struct SharedStr(bytes::Bytes);

impl Text {
    /// `part`, a slice of `owner`'s bytes, shared with `owner` (no copy). Panics if
    /// `part` does not lie within `owner`.
    pub(crate) fn shared(owner: &bytes::Bytes, part: &str) -> Text {
        Text::Shared(Box::new(SharedStr(owner.slice_ref(part.as_bytes()))))
    }

    /// `owner` (a whole message handed over), when `part`, a slice of it, is at
    /// least half of it: worth keeping as a slice, which keeps all of `owner`.
    pub(crate) fn worth_sharing<'o>(owner: Option<&'o bytes::Bytes>, part: &str) -> Option<&'o bytes::Bytes> {
        owner.filter(|owner| part.len() >= owner.len() / 2)
    }

    /// `part` kept as a slice of `owner` when [worth it](Self::worth_sharing),
    /// else copied.
    pub(crate) fn kept(owner: Option<&bytes::Bytes>, part: &str) -> Text {
        match Self::worth_sharing(owner, part) {
            Some(owner) => Text::shared(owner, part),
            None => Text::Own(part.into()),
        }
    }

    /// The text as a `String` (a copy only when shared).
    pub(crate) fn into_string(self) -> String {
        match self {
            Text::Own(s) => s.into_string(),
            Text::Shared(s) => s.to_string(),
            Text::Joint(s, json) => {
                let mut s = s.into_string();
                s.truncate(json as usize);
                s
            }
        }
    }

    /// The JSON followed by a NUL, when it is kept so (C can borrow it as it is).
    pub fn json_nul(&self) -> Option<&str> {
        match self {
            Text::Joint(s, json) => Some(&s[..*json as usize + 1]),
            _ => None,
        }
    }

    /// The text block kept after the JSON, with its NUL (see [`Text::Joint`]).
    fn joint_text(&self) -> Option<&str> {
        match self {
            Text::Joint(s, json) => Some(&s[*json as usize + 1..]),
            _ => None,
        }
    }
}

impl std::ops::Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        #[allow(unsafe_code)]
        // SAFETY: a SharedStr holds the bytes of a `&str` (see `Text::shared`), which
        // are UTF-8, and `Bytes` never changes what it holds.
        unsafe {
            std::str::from_utf8_unchecked(&self.0)
        }
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Own(s) => s,
            Text::Shared(s) => s,
            Text::Joint(s, json) => &s[..*json as usize],
        }
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Self {
        Text::Own(s)
    }
}

/// A `tools/call` result, normalised. Each text block carries a trailing NUL (not
/// counted in its length) so C can borrow it directly.
#[derive(Debug)]
pub struct CallResult {
    /// The whole `CallToolResult`, as the server sent it (checked JSON).
    pub raw: Text,
    pub is_error: bool,
    /// Where `structuredContent` lies in `raw`, when present and not null.
    structured: Option<std::ops::Range<usize>>,
    /// Text blocks, in order, each NUL-terminated; empty when the one block is kept
    /// after the JSON ([`Text::Joint`]).
    texts: TextBlocks,
    /// The text blocks joined with `\n`, NUL-terminated: made on first use, and only
    /// when there are two or more (one block is its own join).
    joined: OnceLock<Box<str>>,
}

#[derive(Deserialize)]
struct CallFields<'a> {
    #[serde(default)]
    content: Option<Texts>,
    #[serde(rename = "structuredContent", default, borrow)]
    structured: Option<&'a RawValue>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default)]
    text: Option<NulText>,
}

/// A call result's text blocks. Most results have one, kept inline: a list on the
/// heap cost an allocation a call.
pub type TextBlocks = smallvec::SmallVec<[String; 1]>;

/// The text of `content`'s text blocks, taken as the blocks are read: no list of
/// blocks is built.
struct Texts(TextBlocks);

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
fn with_nul(s: &str) -> String {
    let mut t = String::with_capacity(s.len() + 1);
    t.push_str(s);
    t.push('\0');
    t
}

/// A JSON string stored with a trailing NUL: copied once from the input (or from
/// the parser's unescaping buffer) into its final place.
struct NulText(String);

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

/// Reads a `tools/call` result, checking all of its JSON: by a scan in the usual
/// shape ([`call_fields_scanned`]), by serde otherwise, which says what is wrong
/// with it.
pub fn parse_call_result(json: ResultJson) -> Result<CallResult> {
    let json = match json.into_call() {
        Ok(read) => return Ok(read),
        Err(json) => json,
    };
    let raw = json.into_text();
    let fields = match call_fields_scanned(&raw) {
        Some(fields) => fields,
        None => call_fields_parsed(&raw)?,
    };
    Ok(CallResult::new(raw, fields))
}

impl CallResult {
    fn new(raw: Text, (texts, structured, is_error): Fields) -> Self {
        CallResult {
            raw,
            is_error,
            structured,
            texts,
            joined: OnceLock::new(),
        }
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
/// text apart cost an allocation more a call, about 3% of a call's instructions
/// with 64 in flight (callgrind).
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
type Fields = (TextBlocks, Option<std::ops::Range<usize>>, bool);

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
fn within(whole: &str, part: &str) -> std::ops::Range<usize> {
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
/// ([`one_text_into`]); any other text is `None`, for the walk. The walk spent about
/// 1,300 instructions on this shape with a 32-byte text, most of them on the fixed
/// parts (callgrind).
fn one_text_shape(json: &str) -> Option<(usize, bool)> {
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
const ONE_TEXT_HEAD: &str = r#"{"content":[{"type":"text","text":""#;
/// How it may end, from its text's closing quote, and `isError` for each.
const ONE_TEXT_TAILS: [(&str, bool); 3] = [
    (r#""}]}"#, false),
    (r#""}],"isError":false}"#, false),
    (r#""}],"isError":true}"#, true),
];

/// The text of a result of [`one_text_shape`] whose contents end at `contents_end`,
/// checked and unescaped onto the end of `out` in one pass; `None` (with `out`
/// holding whatever was read) if it is not valid or its string ends elsewhere.
fn one_text_into(json: &str, contents_end: usize, out: &mut String) -> Option<()> {
    (unescape_checked_into(out, json, ONE_TEXT_HEAD.len())? == contents_end + 1).then_some(())
}

/// The usual result's text in a buffer of its own, with a NUL after it, and
/// `isError`.
fn one_text_nul(json: &str) -> Option<(String, bool)> {
    let (contents_end, is_error) = one_text_shape(json)?;
    // The text is no longer than its contents.
    let mut out = String::with_capacity(contents_end - ONE_TEXT_HEAD.len() + 1);
    one_text_into(json, contents_end, &mut out)?;
    out.push('\0');
    Some((out, is_error))
}

/// The contents of `quoted`, a JSON string (checked); `None` if it is not a string.
fn json_str(quoted: &str) -> Option<&str> {
    quoted.strip_prefix('"')?.strip_suffix('"')
}

/// The text that the contents of a JSON string (checked: every escape is JSON's)
/// stand for, with a trailing NUL, in one buffer of the right size. `None` where
/// serde refuses the text (a `\u` escape that is half of a surrogate pair without
/// the other half). serde unescapes into a buffer of its own, grown as it goes,
/// from which the text is then copied: for the bench's 1 MiB text escaped every 72
/// bytes, unescaping here took 0.6 M instructions fewer a call (callgrind), and the
/// echo ran at 350-370 MiB/s against 207-224 (four runs each): the growing buffer's
/// fresh pages cost page faults that instruction counts do not show.
pub(crate) fn unescape_nul(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len() + 1);
    unescape_into(&mut out, inner)?;
    out.push('\0');
    Some(out)
}

/// [`unescape_nul`] onto the end of `out`, without the NUL.
fn unescape_into(out: &mut String, inner: &str) -> Option<()> {
    let b = inner.as_bytes();
    let mut i = 0;
    loop {
        let at = scan::quote_or_backslash(b, i);
        out.push_str(&inner[i..at]);
        match b.get(at) {
            None => return Some(()),
            // Not in checked contents; kept as text, as a search for backslashes would.
            Some(b'"') => {
                out.push('"');
                i = at + 1;
            }
            Some(_) => {
                let (c, len) = escape_at(b, at)?;
                out.push(c);
                i = at + len;
            }
        }
    }
}

/// The JSON string whose contents start at `s[i]`, checked as
/// [`scan::checked_string_end`] checks it and unescaped onto the end of `out` as
/// [`unescape_into`] unescapes, in one pass over it: where it ends (after its
/// quote). `None` if it is not valid, or not text serde takes (half a surrogate
/// pair); `out` then holds part of it. For the bench's 1 MiB text escaped every
/// line, checking it and then unescaping it were two passes.
fn unescape_checked_into(out: &mut String, s: &str, mut i: usize) -> Option<usize> {
    let b = s.as_bytes();
    loop {
        let at = scan::string_stop_checked(b, i);
        // Every stop is ASCII, so `at` is a character boundary.
        out.push_str(s.get(i..at)?);
        match *b.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => {
                let (c, len) = escape_at(b, at)?;
                out.push(c);
                i = at + len;
            }
            _ => return None, // a control character
        }
    }
}

/// The character that the escape at `b[at]` (a backslash) stands for, and its
/// length; `None` if it is not one of JSON's, or is half a surrogate pair.
fn escape_at(b: &[u8], at: usize) -> Option<(char, usize)> {
    let hex = |i: usize| -> Option<u32> {
        b.get(i..i + 4)?
            .iter()
            .try_fold(0, |n, d| Some(n * 16 + char::from(*d).to_digit(16)?))
    };
    Some(match *b.get(at + 1)? {
        b'n' => ('\n', 2),
        b't' => ('\t', 2),
        b'r' => ('\r', 2),
        b'b' => ('\u{8}', 2),
        b'f' => ('\u{c}', 2),
        c @ (b'"' | b'\\' | b'/') => (char::from(c), 2),
        b'u' => {
            let unit = hex(at + 2)?;
            if (0xD800..=0xDBFF).contains(&unit) {
                // A leading surrogate: its trailing one must follow.
                if b.get(at + 6..at + 8) != Some(b"\\u") {
                    return None;
                }
                let low = hex(at + 8).filter(|low| (0xDC00..=0xDFFF).contains(low))?;
                (char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?, 12)
            } else {
                (char::from_u32(unit)?, 6)
            }
        }
        _ => return None,
    })
}

impl CallResult {
    /// `structuredContent`'s JSON, when present and not null.
    pub fn structured(&self) -> Option<&str> {
        self.structured.clone().map(|r| &self.raw[r])
    }

    /// How many text blocks the result has.
    pub fn text_count(&self) -> usize {
        self.texts.len() + usize::from(self.raw.joint_text().is_some())
    }

    /// Text block `i` (counting text blocks only), with its trailing NUL.
    pub fn text_block(&self, i: usize) -> Option<&str> {
        match self.raw.joint_text() {
            Some(one) => (i == 0).then_some(one),
            None => self.texts.get(i).map(String::as_str),
        }
    }

    /// The text blocks, in order, each with its trailing NUL.
    pub fn text_blocks(&self) -> smallvec::SmallVec<[&str; 1]> {
        (0..self.text_count()).filter_map(|i| self.text_block(i)).collect()
    }

    /// The text blocks joined with `\n`, with a trailing NUL.
    pub fn text_nul(&self) -> &str {
        if let Some(one) = self.raw.joint_text() {
            return one;
        }
        match self.texts.as_slice() {
            [] => "\0",
            [one] => one,
            many => self.joined.get_or_init(|| {
                let mut joined = String::with_capacity(many.iter().map(String::len).sum());
                for (i, t) in many.iter().enumerate() {
                    if i > 0 {
                        joined.push('\n');
                    }
                    joined.push_str(&t[..t.len() - 1]);
                }
                joined.push('\0');
                joined.into_boxed_str()
            }),
        }
    }

    /// The joined text without its trailing NUL.
    pub fn text_str(&self) -> &str {
        let t = self.text_nul();
        &t[..t.len() - 1]
    }
}

/// A caller's `arguments`: JSON text known to be one valid object, borrowed.
#[derive(Clone, Copy, Debug)]
pub struct Arguments<'a>(&'a str);

impl<'a> Arguments<'a> {
    /// The JSON text.
    pub fn get(self) -> &'a str {
        self.0
    }

    /// An owned copy, for a call that outlives the caller's text.
    pub fn to_owned(self) -> OwnedArguments {
        OwnedArguments(self.0.into())
    }
}

/// [`Arguments`], owned.
#[derive(Clone, Debug)]
pub struct OwnedArguments(Box<str>);

impl OwnedArguments {
    /// The arguments, borrowed.
    pub fn as_arguments(&self) -> Arguments<'_> {
        Arguments(&self.0)
    }
}

/// Checks that a caller's `arguments` JSON is an object (or absent, or null).
/// Borrows the text: nothing is copied. Checked by [`scan::checked_value_end`]:
/// serde_json's check (`&RawValue`) cost about 12 instructions a byte of a 45-byte
/// object and 3.5 a byte of a 1 MiB one (callgrind), the scan's about 7 and 2.5.
/// Text the scan refuses (or that nests deeper than it follows) goes to serde,
/// which says what is wrong with it (or accepts it).
pub fn parse_arguments(json: Option<&str>) -> Result<Option<Arguments<'_>>> {
    let Some(json) = json else { return Ok(None) };
    let b = json.as_bytes();
    let start = scan::skip_ws(b, 0);
    let text = match scan::checked_value_end(b, start) {
        Some(end) if scan::skip_ws(b, end) == b.len() => &json[start..end],
        _ => serde_json::from_str::<&RawValue>(json)
            .map_err(|e| {
                Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("arguments are not valid JSON: {e}"),
                )
            })?
            .get(),
    };
    match text.as_bytes().first() {
        Some(b'{') => Ok(Some(Arguments(text))),
        Some(b'n') => Ok(None),
        _ => Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("arguments must be a JSON object, got {}", quote(text)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> ResultJson {
        RawValue::from_string(s.to_string()).unwrap().into()
    }

    #[test]
    fn call_result_keeps_everything() {
        let r = parse_call_result(raw(
            r#"{"content":[{"type":"text","text":"one"},{"type":"image","data":"aGk=","mimeType":"image/png"},{"type":"text","text":"two"}],"structuredContent":{"n":1}}"#,
        ))
        .unwrap();
        assert_eq!(r.text_str(), "one\ntwo");
        assert_eq!(r.text_nul(), "one\ntwo\0");
        assert_eq!(r.text_blocks().as_slice(), ["one\0", "two\0"]);
        assert_eq!(r.structured(), Some(r#"{"n":1}"#));
        assert!(r.raw.contains("image/png"));
        assert!(!r.is_error);
    }

    #[test]
    fn one_text_block_reads_as_serde_does() {
        let head = r#"{"content":[{"type":"text","text":"#;
        for (text, tail, read) in [
            (r#""plain""#, "}]}", Some(("plain\0", false))),
            (
                r#""a\"b\u00e9\n\\""#,
                r#"}],"isError":false}"#,
                Some(("a\"b\u{e9}\n\\\0", false)),
            ),
            (r#""""#, "}],\"isError\":true} \n", Some(("\0", true))),
            // Shapes the fixed parts do not match: the walk or serde reads them.
            (r#""x""#, r#"}],"isError":null}"#, None),
            (r#""x""#, r#"} ]}"#, None),
            (r#""x""#, r#"}],"structuredContent":{}}"#, None),
            // Not valid: every reading refuses it.
            (r#""x""#, "}]}}", None),
            (r#""x""#, r#"}],"isError":true"#, None),
            (r#""\ud800""#, "}]}", None),
            (r#""\udc00""#, "}]}", None),
            (r#""\ud800\u0041""#, "}]}", None),
            (r#""a\x""#, "}]}", None),
            (r#""\u12G4""#, "}]}", None),
            (r#""\u+abc""#, "}]}", None),
            ("\"a\u{1}\"", "}]}", None),
            ("\"x\"", "}]}\u{c}", None),
            (r#""\ud83d\ude00 \/""#, "}]}", Some(("\u{1f600} /\0", false))),
        ] {
            let json = format!("{head}{text}{tail}");
            let read_here = call_result_read(&json, None);
            let joint = read_here.as_ref().filter(|r| matches!(r.raw, Text::Joint(..)));
            assert_eq!(
                joint.map(|r| (r.text_blocks().to_vec(), r.is_error, &*r.raw)),
                read.map(|(t, e)| (vec![t], e, json.trim_end())),
                "{json}"
            );
            // Whichever way it was read, serde reads it the same, or refuses it too.
            let parsed = call_fields_parsed(&json).ok();
            assert_eq!(read_here.is_some(), parsed.is_some(), "{json}");
            assert_eq!(call_fields_scanned(&json).is_some(), parsed.is_some(), "{json}");
            if let (Some(r), Some((texts, _, is_error))) = (&read_here, &parsed) {
                assert_eq!(
                    (r.text_blocks().to_vec(), r.is_error),
                    (texts.iter().map(String::as_str).collect(), *is_error)
                );
                assert_eq!(r.raw.json_nul().is_some(), joint.is_some());
            }
        }
    }

    #[test]
    fn call_result_error_and_malformed() {
        let r = parse_call_result(raw(r#"{"content":[{"type":"text","text":"bad"}],"isError":true}"#)).unwrap();
        assert!(r.is_error);
        assert_eq!(r.text_str(), "bad");
        assert_eq!(r.text_nul(), "bad\0");
        let none = parse_call_result(raw(r#"{"content":[]}"#)).unwrap();
        assert_eq!((none.text_nul(), none.text_count()), ("\0", 0));
        let escaped = parse_call_result(raw(r#"{"content":[{"type":"text","text":"a\u0000b\n"}]}"#)).unwrap();
        assert_eq!(escaped.text_blocks().as_slice(), ["a\0b\n\0"]);
        for bad in [
            r#"{"content":"x"}"#,
            r#"{"content":[{"type":"text"}]}"#,
            r#"[]"#,
            r#"{"isError":"yes"}"#,
        ] {
            assert_eq!(
                parse_call_result(raw(bad)).unwrap_err().status,
                Status::MCPC_ERR_PROTOCOL,
                "{bad}"
            );
        }
    }

    #[test]
    fn page_keeps_tool_json_verbatim() {
        let tool = r##"{"name":"t","inputSchema":{"type":"object","$defs":{"a":{"$ref":"#/$defs/a"}}}}"##;
        let p = parse_page(&format!(r#"{{"tools":[{tool}],"nextCursor":"c"}}"#)).unwrap();
        assert_eq!(p.tools[0].json(), tool);
        assert_eq!(p.tools[0].json_nul(), format!("{tool}\0"));
        assert_eq!(p.next_cursor.as_deref(), Some("c"));
        assert!(parse_page(r#"{"tools":[{"name":""}]}"#).is_err());
        assert!(parse_page(r#"{"tools":[{"nom":"x"}]}"#).is_err());
        // The name is found wherever it is, and must be a string in an object.
        let late = parse_page(r#"{"tools":[{"a":{"name":1},"name":"late"}]}"#).unwrap();
        assert_eq!(late.tools[0].name, "late");
        for bad in [r#"["x"]"#, r#"{"name":3}"#, r#"{"name":null}"#, r#""name""#] {
            let page = format!(r#"{{"tools":[{bad}]}}"#);
            assert!(parse_page(&page).is_err(), "{bad}");
        }
    }

    /// The scan reads a page as serde does, and leaves to serde what it does not
    /// read (serde then says what is wrong).
    #[test]
    fn page_scan_agrees_with_serde() {
        let page =
            r#" {"x":[{"tools":1}],"tools":[ {"name":"a"} , {"name":"b\u0041","n":[1,{}]} ],"nextCursor":"c\"1"} "#;
        let scanned = page_scanned(page).expect("the usual shape");
        assert_eq!(scanned.0, [r#"{"name":"a"}"#, r#"{"name":"b\u0041","n":[1,{}]}"#]);
        assert_eq!(scanned.1.as_deref(), Some("c\"1"));
        assert_eq!(Some(scanned), page_parsed(page).ok());
        for other in [
            r#"{"tools":[],"tools":[]}"#,
            r#"{"tools":{"a":{}}}"#,
            r#"{"t\u006fols":[]}"#,
            r#"{"tools":[],"nextCursor":5}"#,
            r#"{"tools":[1,]}"#,
            r#"{"nextCursor":null}"#,
            r#"[{"tools":[]}]"#,
        ] {
            assert!(page_scanned(other).is_none(), "{other}");
        }
    }

    /// Strings unescape as serde unescapes them, or fail where serde fails.
    #[test]
    fn unescapes_as_serde_does() {
        let mut rng = crate::testing::XorShift::new(88172645463325252);
        let pieces = [
            "a",
            "é",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\b",
            "\\f",
            "\\r",
            "\\t",
            "\\u0041",
            "\\u00e9",
            "\\u20ac",
            "\\ud83d\\ude00",
            "\\ud83d",
            "\\ude00",
            "\\ud83d\\u0041",
            "\\ud83d\\n",
            "\\uD83D\\uDE00",
            "\\u0000",
        ];
        for _ in 0..20_000 {
            let x = rng.next();
            let quoted: String = std::iter::once("\"")
                .chain((0..x % 7).map(|k| pieces[((x >> (8 * k)) % pieces.len() as u64) as usize]))
                .chain(std::iter::once("\""))
                .collect();
            let ours = unescape_nul(&quoted[1..quoted.len() - 1]);
            let serde = serde_json::from_str::<String>(&quoted).ok().map(|t| t + "\0");
            assert_eq!(ours, serde, "{quoted}");
        }
    }

    #[test]
    fn arguments_must_be_objects() {
        assert_eq!(
            parse_arguments(Some(" \t{\"a\":1} \n")).unwrap().unwrap().get(),
            r#"{"a":1}"#
        );
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(100), "]".repeat(100));
        assert_eq!(parse_arguments(Some(&deep)).unwrap().unwrap().get(), deep);
        assert!(parse_arguments(Some("null")).unwrap().is_none());
        assert!(parse_arguments(None).unwrap().is_none());
        for bad in ["[1]", "3", "{", "\"s\"", "{} x", r#"{"a":01}"#] {
            assert_eq!(
                parse_arguments(Some(bad)).unwrap_err().status,
                Status::MCPC_ERR_INVALID_ARG
            );
        }
    }
}
