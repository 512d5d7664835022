//! Normalising what the server returns: tool lists and tool call results.
//! Everything here is untrusted input: shapes are checked, nothing is assumed.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::RawResult;
use crate::scan;

mod content;
pub mod output_schema;
mod read;
mod schema;

pub use crate::text::Text;
pub use content::{check_completion, check_prompt, Body, Contents};
pub(crate) use content::{contents_parsed, contents_read, contents_scanned};
pub(crate) use read::*;

/// One tool: its name, and its JSON exactly as the server sent it.
#[derive(Debug, Clone)]
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

    /// A tool from its JSON alone, such as a catalog a host saved: named, or refused.
    pub fn from_json(json: &str) -> std::result::Result<Tool, String> {
        let name = read::tool_name(json)?;
        if name.is_empty() {
            return Err("the tool has an empty name".into());
        }
        Ok(Tool {
            name,
            json_nul: read::with_nul(json),
        })
    }
}

/// One page of `tools/list`.
#[derive(Debug)]
pub struct Page {
    pub tools: Vec<Tool>,
    pub next_cursor: Option<String>,
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

/// A page read by the router with its response: the page, or why it is refused.
pub type PageRead = Result<Page>;

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

/// A call result's text blocks. Most results have one, kept inline: a list on the
/// heap cost an allocation a call.
pub type TextBlocks = smallvec::SmallVec<[String; 1]>;

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
    #[cfg(any(test, feature = "fuzzing"))]
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
/// Borrows the text: nothing is copied. Checked by [`scan::checked_value_end`],
/// cheaper than serde_json's check (`&RawValue`) for small and large objects alike.
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

/// A response's `result` as the router hands it to its request: as the server
/// sent it ([`RawResult`]), or already read by the router (a call result, a page or
/// a read's contents read with its response). `into_raw` checks it for the readers that keep it whole.
#[derive(Debug)]
pub struct ResultJson(ResultRepr);

#[derive(Debug)]
enum ResultRepr {
    /// Parsed already (a response read by serde).
    Checked(Box<RawValue>),
    /// Only its extent is known.
    Unchecked(Text),
    /// A `tools/call` result that the router read already, with its response
    /// (see [`response_head`]).
    Call(CallResult),
    /// A `tools/list` result that the router read already, and its text.
    Page(Box<str>, PageRead),
    /// A `resources/read` result that the router read already.
    Read(Contents),
}

impl ResultJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        match &self.0 {
            ResultRepr::Checked(raw) => raw.get(),
            ResultRepr::Unchecked(text) => text,
            ResultRepr::Call(result) => &result.raw,
            ResultRepr::Page(text, _) => text,
            ResultRepr::Read(contents) => &contents.json,
        }
    }

    /// A call result read with its response.
    pub(crate) fn from_call(result: CallResult) -> Self {
        ResultJson(ResultRepr::Call(result))
    }

    /// A page read with its response.
    pub(crate) fn from_page(text: &str, page: PageRead) -> Self {
        ResultJson(ResultRepr::Page(text.into(), page))
    }

    /// A read's contents read with their response.
    pub(crate) fn from_contents(contents: Contents) -> Self {
        ResultJson(ResultRepr::Read(contents))
    }

    /// A read's contents: read by the router already, or now by one checking pass
    /// ([`contents_scanned`]) over the text kept as it came; else the JSON back, for
    /// serde to read and say what is wrong with it.
    pub(crate) fn into_contents(self) -> std::result::Result<Contents, Self> {
        let json = match self.0 {
            ResultRepr::Read(contents) => return Ok(contents),
            other => ResultJson(other).into_text(),
        };
        match contents_scanned(&json) {
            Some(items) => Ok(Contents { items, json }),
            None => Err(ResultJson(ResultRepr::Unchecked(json))),
        }
    }

    /// The page, if the router read it already; else the JSON back.
    pub(crate) fn into_page(self) -> std::result::Result<PageRead, Self> {
        match self.0 {
            ResultRepr::Page(_, page) => Ok(page),
            other => Err(ResultJson(other)),
        }
    }

    /// The call result, if the router read it already; else the JSON back.
    pub(crate) fn into_call(self) -> std::result::Result<CallResult, Self> {
        match self.0 {
            ResultRepr::Call(result) => Ok(result),
            other => Err(ResultJson(other)),
        }
    }

    /// The text, for a reader that parses all of it (and so checks it).
    pub fn into_text(self) -> Text {
        match self.0 {
            ResultRepr::Checked(raw) => Text::Own(raw.into()),
            ResultRepr::Unchecked(text) => text,
            ResultRepr::Call(result) => result.raw,
            ResultRepr::Page(text, _) => text.into(),
            ResultRepr::Read(contents) => contents.json,
        }
    }

    /// The result as one checked JSON value; a result that is not valid JSON is
    /// an `MCPC_ERR_PROTOCOL` error.
    pub fn into_raw(self) -> Result<Box<RawValue>> {
        let text = match self.0 {
            ResultRepr::Checked(raw) => return Ok(raw),
            ResultRepr::Unchecked(text)
            | ResultRepr::Call(CallResult { raw: text, .. })
            | ResultRepr::Read(Contents { json: text, .. }) => text.into_string(),
            ResultRepr::Page(text, _) => text.into(),
        };
        RawValue::from_string(text)
            .map_err(|e| Error::new(Status::MCPC_ERR_PROTOCOL, format!("the result is not valid JSON: {e}")))
    }
}

impl From<Box<RawValue>> for ResultJson {
    fn from(raw: Box<RawValue>) -> Self {
        ResultJson(ResultRepr::Checked(raw))
    }
}

impl From<RawResult> for ResultJson {
    fn from(raw: RawResult) -> Self {
        ResultJson(match raw {
            RawResult::Checked(raw) => ResultRepr::Checked(raw),
            RawResult::Unchecked(text) => ResultRepr::Unchecked(text),
        })
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

    /// A response in the usual shape is read with its head, copied or kept as a
    /// slice of the message.
    #[test]
    fn results_read_with_their_response_heads() {
        use crate::jsonrpc::response_head;
        let rest = |m: &'static [u8]| std::str::from_utf8(&m[response_head(m).unwrap().1]).unwrap();
        let msg = br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}],"isError":true} }"#;
        // Copied, or kept as a slice of the message handed over whole.
        let owner = bytes::Bytes::from_static(msg);
        for owner in [None, Some(&owner)] {
            let read = call_result_read(rest(msg), owner).expect("one object in the usual shape");
            assert_eq!(
                (&*read.raw, read.is_error, read.text_blocks().as_slice()),
                (
                    r#"{"content":[{"type":"text","text":"hi"}],"isError":true}"#,
                    true,
                    &["hi\0"][..]
                )
            );
            assert_eq!(matches!(read.raw, Text::Shared(_)), owner.is_some());
        }
        assert!(call_result_read(rest(br#"{"id":1,"result":{},"error":{"code":1,"message":"x"}}"#), None).is_none());
        assert!(call_result_read(rest(br#"{"id":1,"result":{"content":[1,]}}"#), None).is_none());
        let page = page_read(rest(br#"{"id":5,"result":{"tools":[{"name":"a"}],"nextCursor":"n"}}"#))
            .expect("one object in the usual shape")
            .unwrap();
        assert_eq!(
            (page.tools[0].name.as_str(), page.next_cursor.as_deref()),
            ("a", Some("n"))
        );
        assert!(page_read(rest(br#"{"id":5,"result":{"tools":[]},"x":{}}"#)).is_none());
    }

    /// A result in the usual shape that is not valid JSON reaches its request, which
    /// fails on reading it.
    #[test]
    fn bad_result_json_fails_its_reader() {
        use crate::jsonrpc::{decode, Incoming};
        let Incoming::Response {
            id: 4,
            outcome: Ok(json),
        } = decode(br#"{"jsonrpc":"2.0","id":4,"result":{"a":[1,]}}"#).unwrap()
        else {
            panic!("not a response")
        };
        assert_eq!(json.get(), r#"{"a":[1,]}"#);
        assert_eq!(
            ResultJson::from(json).into_raw().unwrap_err().status,
            Status::MCPC_ERR_PROTOCOL
        );
        let Incoming::Response { outcome: Ok(json), .. } =
            decode(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\x01\"}]}}")
                .unwrap()
        else {
            panic!("not a response")
        };
        let e = parse_call_result(json.into()).unwrap_err();
        assert_eq!(e.status, Status::MCPC_ERR_PROTOCOL);
        assert!(e.message.contains("malformed"), "{}", e.message);
    }
}
