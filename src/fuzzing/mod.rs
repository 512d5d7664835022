//! Entry points for the fuzz targets (`fuzz/`), also replayed over their corpora by
//! `tests/fuzz_corpus.rs` in the normal test run, so a crash once found stays fixed.
//! Each takes arbitrary bytes and panics only when an invariant breaks.

use serde_json::value::RawValue;

use crate::framing::LineFramer;
use crate::sse::SseParser;

mod net;
pub use net::{h2_reply, legacy_endpoint, proxy_settings, tunnel};

/// Split points from the input's first bytes; the rest is the stream.
fn split(data: &[u8]) -> (Vec<usize>, &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return (Vec::new(), data);
    };
    let n = (n % 4) as usize;
    if rest.len() < n {
        return (Vec::new(), rest);
    }
    let (cuts, stream) = rest.split_at(n);
    let mut points: Vec<usize> = cuts.iter().map(|&c| (c as usize * stream.len()) / 255).collect();
    points.sort_unstable();
    (points, stream)
}

fn chunks<'a>(stream: &'a [u8], points: &[usize]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut at = 0;
    for &p in points {
        out.push(&stream[at..p]);
        at = p;
    }
    out.push(&stream[at..]);
    out
}

/// The line framer gives the same lines (or the same error) however the stream is split.
pub fn framer(data: &[u8]) {
    let (points, stream) = split(data);
    let run = |parts: &[&[u8]]| {
        let mut f = LineFramer::new(64);
        let mut lines = Vec::new();
        for p in parts {
            if f.feed(p, |l, _| lines.push(l.to_vec())).is_err() {
                return Err(());
            }
        }
        Ok(lines)
    };
    let whole = run(&[stream]);
    let parts = run(&chunks(stream, &points));
    assert_eq!(whole, parts, "framer output depends on the split");
}

/// The SSE parser gives the same events however the stream is split.
pub fn sse(data: &[u8]) {
    let (points, stream) = split(data);
    let run = |parts: &[&[u8]], told: &[usize]| {
        let mut p = SseParser::with_long_line(256, 8);
        let mut events = Vec::new();
        for (i, c) in parts.iter().enumerate() {
            p.expect(told.get(i).map_or(0, |t| t * 37));
            if p.feed(c, |e| events.push(e)).is_err() {
                return Err(events.len());
            }
        }
        Ok((events, p.last_id().map(str::to_string), p.retry_ms()))
    };
    let whole = run(&[stream], &[]);
    let parts = chunks(stream, &points);
    // Told at each piece a number of bytes to follow, true or not (from the split
    // points): lines of 8 bytes and more grow by it, and what is read never changes.
    for told in [&[][..], &points[..]] {
        let pieces = run(&parts, told);
        match (&whole, &pieces) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "SSE events depend on the split"),
            // The cap may trip at a different event when lines arrive in pieces, never not at all.
            (Err(_), Err(_)) => {}
            _ => panic!("SSE cap result depends on the split: {whole:?} vs {pieces:?}"),
        }
    }
}

/// An HTTP/1.1 response reads the same (status, fields, body, reuse, what follows
/// it) or fails the same way, however the stream is split into reads.
pub fn http1(data: &[u8]) {
    let (points, stream) = split(data);
    let whole = crate::transport::h1::read_from(&[stream]);
    let parts = crate::transport::h1::read_from(&chunks(stream, &points));
    assert_eq!(whole, parts, "the response read depends on the split");
}

/// Decoding any bytes as JSON-RPC never panics. A response whose result is valid
/// JSON decodes exactly as serde alone decodes it (the usual shape is read without
/// serde, and its result checked only by its reader). A response that the router
/// reads in one pass as a call result is a response to the same id, whose result
/// serde reads the same.
pub fn jsonrpc(data: &[u8]) {
    use crate::jsonrpc::{decode, decode_parsed, Incoming};
    if let Some((id, rest)) = crate::jsonrpc::response_head(data) {
        one_pass_readings_agree(data, id, rest);
    }
    // Also handed over whole: the result kept as a slice reads the same.
    let owner = bytes::Bytes::copy_from_slice(data);
    if let Ok(Incoming::Response {
        outcome: Ok(shared), ..
    }) = crate::jsonrpc::decode_in(&owner, Some(&owner))
    {
        let Ok(Incoming::Response {
            outcome: Ok(copied), ..
        }) = decode(data)
        else {
            panic!("decoded whole, not copied")
        };
        assert_eq!(shared.get(), copied.get(), "the kept result depends on how it is kept");
    }
    let Ok(Incoming::Response { id, outcome: Ok(json) }) = decode(data) else {
        return;
    };
    let text = json.get().to_string();
    if crate::result::ResultJson::from(json).into_raw().is_err() {
        return;
    }
    match decode_parsed(std::str::from_utf8(data).expect("decoded, so UTF-8")) {
        Ok(Incoming::Response {
            id: id2,
            outcome: Ok(json2),
        }) => assert_eq!((id, text.as_str()), (id2, json2.get()), "the two readings differ"),
        other => panic!("serde reads the message otherwise: {other:?}"),
    }
}

/// What the router reads in one pass (see `jsonrpc::response_head`), as a call
/// result or as a page, is a response to the same id, whose result serde reads the
/// same.
fn one_pass_readings_agree(data: &[u8], id: i64, rest: std::ops::Range<usize>) {
    use crate::jsonrpc::{decode_parsed, Incoming};
    // The message handed over whole, as a large HTTP body is: a result that is most
    // of it is kept as a slice of it.
    let owner = bytes::Bytes::copy_from_slice(data);
    let Ok(rest) = std::str::from_utf8(&owner[rest]) else {
        return;
    };
    let (call, page) = (
        crate::result::call_result_read(rest, Some(&owner)),
        crate::result::page_read(rest),
    );
    if let Some(call) = &call {
        let copied = crate::result::call_result_read(rest, None).expect("read either way");
        assert_eq!(&*call.raw, &*copied.raw, "the kept result depends on how it is kept");
    }
    if call.is_none() && page.is_none() {
        return;
    }
    let text = std::str::from_utf8(data).expect("read in one pass, so UTF-8");
    let Ok(Incoming::Response {
        id: id2,
        outcome: Ok(json),
    }) = decode_parsed(text)
    else {
        panic!("read in one pass, but serde reads no result in {text:?}")
    };
    assert_eq!(id, id2, "the two readings' ids differ");
    if let Some(read) = call {
        let parsed = crate::result::parse_call_result(json.into()).expect("serde reads the call result too");
        assert_eq!(
            (&*read.raw, read.structured(), read.is_error, read.text_blocks()),
            (&*parsed.raw, parsed.structured(), parsed.is_error, parsed.text_blocks()),
            "the two readings of a call's response differ"
        );
    } else if let Some(read) = page {
        let parsed = crate::result::parse_page(json.get());
        let shown = |p: &crate::result::PageRead| match p {
            Ok(p) => Ok((
                p.tools
                    .iter()
                    .map(|t| (t.name.clone(), t.json().to_string()))
                    .collect::<Vec<_>>(),
                p.next_cursor.clone(),
            )),
            Err(e) => Err(e.to_string()),
        };
        assert_eq!(
            shown(&read),
            shown(&parsed),
            "the two readings of a page's response differ"
        );
    }
}

/// The scan's check of JSON agrees with serde's, up to the depth it follows, and so
/// do its readings of a page and a call result (of any text: they check the text as
/// they read) and its unescaping of a string;
/// normalising any JSON as a tools/call result, a tools/list page, a discover result
/// or a result type never panics; a normalised result's texts come from its JSON; a
/// tool's name scanned for is the name serde reads.
pub fn results(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let end = crate::scan::checked_value_end(data, 0).filter(|&end| crate::scan::skip_ws(data, end) == data.len());
    let scanned = end.is_some();
    let parsed = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    // Brackets counted anywhere bound the depth from above.
    let shallow = data.iter().filter(|&&c| c == b'[' || c == b'{').count() <= crate::scan::CHECKED_DEPTH as usize;
    assert!(
        scanned == parsed || (!scanned && !shallow),
        "the scan finds {text:?} {}valid, serde {}valid",
        if scanned { "" } else { "in" },
        if parsed { "" } else { "in" }
    );
    // The scans that read a page and a call result in one pass agree with serde.
    if let Some(parts) = crate::result::page_scanned(text) {
        assert_eq!(
            Some(parts),
            crate::result::page_parsed(text).ok(),
            "the two readings of a page differ"
        );
    }
    if let Some(fields) = crate::result::call_fields_scanned(text) {
        assert_eq!(
            Some(fields),
            crate::result::call_fields_parsed(text).ok(),
            "the two readings of a call result differ"
        );
    }
    // Unescaping a string's contents gives what serde gives, or fails where it fails.
    if let (Some(b'"'), Some(end)) = (data.first(), end) {
        let ours = crate::unescape::unescape_nul(&text[1..end - 1]);
        let serde = serde_json::from_str::<String>(text).ok().map(|t| t + "\0");
        assert_eq!(ours, serde, "the two unescapings of {text:?} differ");
    }
    let Ok(raw) = RawValue::from_string(text.to_string()) else {
        return;
    };
    let _ = crate::result::parse_page(raw.get());
    // A tool's name is scanned for, not parsed: both ways agree on valid JSON.
    assert_eq!(
        crate::result::tool_name(raw.get()).ok(),
        crate::result::tool_name_parsed(raw.get()).ok(),
        "the two readings of a tool's name differ"
    );
    let _ = crate::protocol::result_kind(raw.get());
    let _ = crate::protocol::accept_discover(raw.clone(), "discover");
    let _ = crate::protocol::accept_initialize(raw.clone(), "initialize");
    if let Ok(r) = crate::result::parse_call_result(raw.into()) {
        assert!(r.text_nul().ends_with('\0'));
        assert!(r.text_blocks().iter().all(|t| t.ends_with('\0')));
    }
}

/// The URL policy never panics, and never lets plain http reach a non-loopback host.
pub fn url_policy(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(url) = crate::url_policy::check_endpoint(text) {
        assert!(url.scheme() == "https" || crate::url_policy::is_loopback(&url), "{url}");
        assert!(url.username().is_empty() && url.password().is_none());
    }
}

/// Header values come out as valid header text, and a base64 sentinel decodes back
/// to the input; schema annotations never panic.
pub fn headers(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let enc = crate::headers::encode_value(text);
        assert!(enc.bytes().all(|b| b == b' ' || (0x21..=0x7e).contains(&b)), "{enc:?}");
        if let Some(inner) = enc.strip_prefix("=?base64?").and_then(|s| s.strip_suffix("?=")) {
            use base64::Engine as _;
            let back = base64::engine::general_purpose::STANDARD
                .decode(inner)
                .expect("valid base64");
            assert_eq!(back, text.as_bytes());
        } else {
            assert_eq!(enc, text);
        }
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            if let Ok(hs) = crate::headers::param_headers(&v) {
                let _ = crate::headers::param_values(&v, &hs);
            }
        }
    }
}

/// A `WWW-Authenticate` value (an HTTP server's, so untrusted): never a panic;
/// nothing is read outside a Bearer or DPoP challenge; and a value read is the
/// input's own text wherever the input escapes nothing.
pub fn www_authenticate(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let c = crate::auth::challenge::parse(text);
    let lower = text.to_ascii_lowercase();
    if !lower.contains("bearer") && !lower.contains("dpop") {
        assert_eq!(c, Default::default(), "read outside a Bearer or DPoP challenge");
    }
    if !text.contains('\\') {
        for v in [&c.resource_metadata, &c.scope, &c.error].into_iter().flatten() {
            assert!(text.contains(v.as_str()), "{v:?} is not in {text:?}");
        }
    }
}

/// A fuzz target's entry point.
pub type Target = fn(&[u8]);

/// Every target by name, for the corpus replay.
pub const TARGETS: &[(&str, Target)] = &[
    ("framer", framer),
    ("http1", http1),
    ("sse", sse),
    ("jsonrpc", jsonrpc),
    ("results", results),
    ("url_policy", url_policy),
    ("headers", headers),
    ("tunnel", tunnel),
    ("proxy_settings", proxy_settings),
    ("legacy_endpoint", legacy_endpoint),
    ("h2_reply", h2_reply),
    ("www_authenticate", www_authenticate),
];
