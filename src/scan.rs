//! Finding where JSON values end, without parsing them.
//!
//! [`checked_value_end`] and [`checked_walk`] check the syntax of what they skip, as
//! serde_json does when it skips a value; the walk also reports the keys and values
//! near the top as it checks them. They check a caller's `arguments`
//! (`result::parse_arguments`) and read a `tools/list` page in one pass
//! (`result::page_scanned`). The other functions check nothing: they serve text
//! that its reader parses whole (a response's result) or that was checked already
//! (a tool's JSON, with its page), where finding an end is all that is needed, and
//! return `None` when the text ends first.

const ONES: u64 = u64::MAX / 255;
const HIGH: u64 = ONES << 7;

/// The high bit of each byte of `w` that equals `c` (the lowest such bit is exact;
/// bits above a true match may be false).
#[inline(always)]
fn matches(w: u64, c: u8) -> u64 {
    let x = w ^ (ONES * u64::from(c));
    x.wrapping_sub(ONES) & !x
}

/// The first index from `i` whose byte is one of `set`, eight bytes at a time (the
/// zero-byte test of "Bit Twiddling Hacks"). memchr's set-up per call costs more than
/// it saves on JSON's short strings and on text escaped every line, and it finds at
/// most three bytes (docs/performance.md).
#[inline(always)]
fn first_of<const N: usize>(b: &[u8], mut i: usize, set: [u8; N]) -> Option<usize> {
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let hit = set.iter().fold(0, |acc, &c| acc | matches(w, c)) & HIGH;
        if hit != 0 {
            return Some(i + hit.trailing_zeros() as usize / 8);
        }
        i += 8;
    }
    b.get(i..)?.iter().position(|c| set.contains(c)).map(|p| i + p)
}

/// The first index from `i` whose byte stops a run of string text: a quote, a
/// backslash and, when `CONTROLS`, a byte below 0x20; `b.len()` if none. Sixteen
/// bytes at a time with SSE2 on x86_64 (far fewer instructions a byte), then eight at
/// a time; memchr, which finds at most two of these bytes, costs more in set-up per
/// call than a short string takes (docs/performance.md).
#[inline(always)]
fn string_stop<const CONTROLS: bool>(b: &[u8], mut i: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        match sse2::string_stop::<CONTROLS>(b, i) {
            Ok(at) => return at,
            Err(rest) => i = rest,
        }
    }
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let hit = if CONTROLS {
            string_stops(w)
        } else {
            (matches(w, b'"') | matches(w, b'\\')) & HIGH
        };
        if hit != 0 {
            return i + hit.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' || (CONTROLS && c < 0x20) {
            return i;
        }
        i += 1;
    }
    b.len()
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    /// [`super::string_stop`] over the whole sixteen-byte blocks from `i`: `Ok` with
    /// the stop, or `Err` with where the bytes left are fewer than sixteen.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn string_stop<const CONTROLS: bool>(b: &[u8], mut i: usize) -> Result<usize, usize> {
        // SAFETY: SSE2 is part of every x86_64 CPU, so these intrinsics are always
        // available; each load reads the sixteen bytes of `block`, a slice of `b`
        // checked to be that long (unaligned loads are what `loadu` is for).
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let below_space = _mm_set1_epi8(0x1f);
            while let Some(block) = b.get(i..i + 16) {
                let v = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
                let mut hits = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
                if CONTROLS {
                    // c <= 0x1f (unsigned) exactly when max(c, 0x1f) == 0x1f.
                    hits = _mm_or_si128(hits, _mm_cmpeq_epi8(_mm_max_epu8(v, below_space), below_space));
                }
                let mask = _mm_movemask_epi8(hits) as u32;
                if mask != 0 {
                    return Ok(i + mask.trailing_zeros() as usize);
                }
                i += 16;
            }
        }
        Err(i)
    }
}

/// The first quote or backslash in `b` from `i`, or `b.len()`: in the contents of
/// a checked JSON string, the next escape. Sixteen bytes at a time with no set-up:
/// unescaping a long text calls it at every escape, and memchr's set-up a call adds up.
#[inline(always)]
pub(crate) fn quote_or_backslash(b: &[u8], i: usize) -> usize {
    string_stop::<false>(b, i)
}

/// The first quote, backslash or control character in `b` from `i`, or `b.len()`:
/// where a run of a JSON string's text stops.
#[inline(always)]
pub(crate) fn string_stop_checked(b: &[u8], i: usize) -> usize {
    string_stop::<true>(b, i)
}

/// True when `b` holds no byte that a JSON string must escape (a quote, a
/// backslash, a control character): its text goes between quotes as it is.
pub(crate) fn needs_no_escape(b: &[u8]) -> bool {
    string_stop_checked(b, 0) == b.len()
}

/// The bytes of `w` that are a quote, a backslash or a control character (below
/// 0x20), as their high bits; the lowest is exact.
#[inline(always)]
fn string_stops(w: u64) -> u64 {
    let below_space = w.wrapping_sub(ONES * 0x20) & !w;
    (matches(w, b'"') | matches(w, b'\\') | below_space) & HIGH
}

/// Where the JSON white space that ends at `b[..end]` starts.
pub(crate) fn skip_ws_back(b: &[u8], mut end: usize) -> usize {
    while end > 0 && matches!(b[end - 1], b' ' | b'\t' | b'\n' | b'\r') {
        end -= 1;
    }
    end
}

/// Where the string whose contents start at `i` ends (just past its closing
/// quote), checking it as serde_json does when it skips one: no control character
/// unescaped, every escape one of JSON's (a `\u` escape's four hex digits are
/// checked, not what they encode). `None` if it is not a valid string; with the
/// end, whether it holds an escape.
#[inline(always)]
pub(crate) fn checked_string_end(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    let mut escaped = false;
    loop {
        i = string_stop::<true>(b, i);
        match *b.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                i += match *b.get(i + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                    b'u' if b.get(i + 2..i + 6)?.iter().all(u8::is_ascii_hexdigit) => 6,
                    _ => return None,
                }
            }
            _ => return None, // a control character
        }
    }
}

/// Where the number that starts at `b[i]` ends, if it is one in JSON's syntax.
fn number_end(b: &[u8], mut i: usize) -> Option<usize> {
    let digits = |b: &[u8], i: usize| {
        b.get(i..)
            .map_or(0, |r| r.iter().take_while(|c| c.is_ascii_digit()).count())
    };
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match digits(b, i) {
        0 => return None,
        n if n > 1 && b[i] == b'0' => return None,
        n => i += n,
    }
    if b.get(i) == Some(&b'.') {
        match digits(b, i + 1) {
            0 => return None,
            n => i += 1 + n,
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        match digits(b, i) {
            0 => return None,
            n => i += n,
        }
    }
    Some(i)
}

/// How deep [`checked_value_end`] follows nesting; deeper values are left to serde
/// (which has no limit when it skips a value).
pub(crate) const CHECKED_DEPTH: u32 = 64;

/// Where the JSON value that starts at `b[start..]` (after white space) ends,
/// checking its syntax as serde_json does when it skips a value (`IgnoredAny`):
/// strings as [`checked_string_end`], numbers in JSON's syntax (any size), the three
/// literals, and the structure of arrays and objects (duplicate keys are not its
/// concern). `None` when it is not valid, or nests deeper than [`CHECKED_DEPTH`]:
/// the caller then leaves it to serde.
pub fn checked_value_end(b: &[u8], start: usize) -> Option<usize> {
    checked_walk(b, start, 0, |_| Some(()))
}

/// What [`checked_walk`] reports of the values it checks, with their depth (the
/// members or elements of the value walked are at depth 1, theirs at 2...).
#[derive(Debug)]
pub(crate) enum Event {
    /// A member's key (the string's contents, and whether they hold an escape);
    /// its value comes next.
    Key(u32, std::ops::Range<usize>, bool),
    /// A whole value, once checked: where it lies.
    Value(u32, std::ops::Range<usize>),
}

/// The most [`checked_walk`] reports (`max_depth`).
pub(crate) const WALK_REPORTS: u32 = 3;

/// [`checked_value_end`], telling `on` of the keys and values down to `max_depth`
/// (at most [`WALK_REPORTS`]) as it checks them, so that a reader finds the parts it
/// wants in the same pass. A value is reported after everything inside it. `on`
/// saying `None` stops the walk, which then returns `None` too.
pub(crate) fn checked_walk(
    b: &[u8],
    start: usize,
    max_depth: u32,
    mut on: impl FnMut(Event) -> Option<()>,
) -> Option<usize> {
    debug_assert!(max_depth <= WALK_REPORTS);
    // One bit per open container, set for an object; no allocation.
    let (mut objects, mut depth) = (0u64, 0u32);
    // Where the open containers that are reported began, by depth.
    let mut starts = [0usize; WALK_REPORTS as usize + 1];
    let reported = |depth: u32| depth >= 1 && depth <= max_depth;
    let mut i = skip_ws(b, start);
    loop {
        // A value starts at `i`.
        let begin = i;
        let opened = match *b.get(i)? {
            b'"' => {
                i = checked_string_end(b, i + 1)?.0;
                None
            }
            c @ (b'{' | b'[') => {
                i = skip_ws(b, i + 1);
                if b.get(i) == Some(&(c + 2)) {
                    // Empty: `{}` or `[]` (the closing byte is the opening one plus two).
                    i += 1;
                    None
                } else {
                    Some(c == b'{')
                }
            }
            b't' if b[i..].starts_with(b"true") => {
                i += 4;
                None
            }
            b'f' if b[i..].starts_with(b"false") => {
                i += 5;
                None
            }
            b'n' if b[i..].starts_with(b"null") => {
                i += 4;
                None
            }
            b'-' | b'0'..=b'9' => {
                i = number_end(b, i)?;
                None
            }
            _ => return None,
        };
        let in_object = match opened {
            Some(object) => {
                if depth == CHECKED_DEPTH {
                    return None;
                }
                if reported(depth) {
                    starts[depth as usize] = begin;
                }
                objects = objects << 1 | u64::from(object);
                depth += 1;
                object
            }
            // A whole value: close what it completes, up to the next element or member.
            None => {
                if reported(depth) {
                    on(Event::Value(depth, begin..i))?;
                }
                loop {
                    if depth == 0 {
                        return Some(i);
                    }
                    let object = objects & 1 == 1;
                    i = skip_ws(b, i);
                    match *b.get(i)? {
                        b',' => {
                            i = skip_ws(b, i + 1);
                            break object;
                        }
                        b'}' if object => {}
                        b']' if !object => {}
                        _ => return None,
                    }
                    i += 1;
                    objects >>= 1;
                    depth -= 1;
                    if reported(depth) {
                        on(Event::Value(depth, starts[depth as usize]..i))?;
                    }
                }
            }
        };
        if in_object {
            // A member: its key and colon, then its value.
            if b.get(i) != Some(&b'"') {
                return None;
            }
            let (end, escaped) = checked_string_end(b, i + 1)?;
            if reported(depth) {
                on(Event::Key(depth, i + 1..end - 1, escaped))?;
            }
            i = skip_ws(b, end);
            if b.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(b, i + 1);
        }
    }
}

/// [`checked_walk`] of the whole of `json`, which must be one object (with white
/// space around it at most); `None` for anything else.
pub(crate) fn walk_object(json: &str, max_depth: u32, on: impl FnMut(Event) -> Option<()>) -> Option<()> {
    let b = json.as_bytes();
    if b.get(skip_ws(b, 0)) != Some(&b'{') {
        return None;
    }
    let end = checked_walk(b, 0, max_depth, on)?;
    (skip_ws(b, end) == b.len()).then_some(())
}

/// JSON's white space from `i` on: the index after it.
pub fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Where the string whose contents start at `i` ends (just past its closing quote).
pub fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i = string_stop::<false>(b, i);
        match *b.get(i)? {
            b'"' => return Some(i + 1),
            _ => i += 2,
        }
    }
}

/// Where the object that opens at `b[start]` ends (just past its closing brace),
/// counting braces only: brackets are left to whoever parses the object.
pub fn object_end(b: &[u8], start: usize) -> Option<usize> {
    nested_end(b, start, [b'"', b'{', b'}'])
}

/// Where the value that starts at `b[start]` ends, in text known to be valid JSON.
pub fn value_end(b: &[u8], start: usize) -> Option<usize> {
    match *b.get(start)? {
        b'"' => string_end(b, start + 1),
        b'{' | b'[' => nested_end(b, start, [b'"', b'{', b'}', b'[', b']']),
        _ => Some(first_of(b, start, [b',', b'}', b']', b' ', b'\t', b'\n', b'\r']).unwrap_or(b.len())),
    }
}

/// Where the nesting that opens at `b[start]` closes, counting the openings and
/// closings in `set` (whose first byte is the quote) outside strings.
fn nested_end<const N: usize>(b: &[u8], start: usize, set: [u8; N]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    // Byte by byte between strings: there, JSON is dense with structure.
    while let Some(&c) = b.get(i) {
        i += 1;
        if !set.contains(&c) {
            continue;
        }
        match c {
            b'"' => i = string_end(b, i)?,
            b'{' | b'[' => depth += 1,
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
    }
    None
}

/// The value of the first top-level member named `key` of an object, as raw JSON
/// text, in text known to be valid JSON. `Err(())` when a key holds an escape (the
/// caller then parses), `Ok(None)` when there is no such member or `json` is not an
/// object.
pub fn member<'a>(json: &'a str, key: &str) -> Result<Option<&'a str>, ()> {
    let b = json.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return Ok(None);
    }
    i += 1;
    loop {
        i = skip_ws(b, i);
        if b.get(i) != Some(&b'"') {
            return Ok(None);
        }
        let key_end = string_end(b, i + 1).ok_or(())?;
        let name = &json[i + 1..key_end - 1];
        if name.contains('\\') {
            return Err(());
        }
        i = skip_ws(b, key_end);
        i = skip_ws(b, i + 1); // the colon
        let end = value_end(b, i).ok_or(())?;
        if name == key {
            return Ok(Some(&json[i..end]));
        }
        i = skip_ws(b, end);
        if b.get(i) != Some(&b',') {
            return Ok(None);
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-byte search finds what a byte-by-byte one finds, at every offset.
    #[test]
    fn ends_match_a_plain_scan() {
        fn plain_string(b: &[u8], mut i: usize) -> Option<usize> {
            loop {
                match *b.get(i)? {
                    b'"' => return Some(i + 1),
                    b'\\' => i += 2,
                    _ => i += 1,
                }
            }
        }
        let mut rng = crate::testing::XorShift::new(88172645463325252);
        // Dense and sparse quotes and escapes: short strings and long ones.
        for (len, m) in (0..200).flat_map(|len| [(len, 23), (len, 400)]) {
            for _ in 0..20 {
                let b: Vec<u8> = (0..len)
                    .map(|_| {
                        let x = rng.next();
                        match x % m {
                            0 => b'"',
                            1 => b'\\',
                            2 => 0x80 | (x >> 8) as u8,
                            3 => b'{',
                            4 => b'}',
                            _ => b'a' + (x % 26) as u8,
                        }
                    })
                    .collect();
                for start in [0, 1, 7, 9].into_iter().filter(|&s| s <= len) {
                    assert_eq!(string_end(&b, start), plain_string(&b, start), "{b:?} from {start}");
                    let plain = b.get(start..).and_then(|r| r.iter().position(|c| b"\"{}".contains(c)));
                    assert_eq!(first_of(&b, start, [b'"', b'{', b'}']), plain.map(|p| p + start));
                }
            }
        }
    }

    /// Strings short and long (through the sixteen-byte blocks and the eight-byte tail), with a
    /// quote, an escape or a control character anywhere: checked as serde checks them.
    #[test]
    fn long_strings_check_as_serde_does() {
        let mut rng = crate::testing::XorShift::new(88172645463325252);
        let mut next = move || rng.next();
        for len in (0..300).chain([1000, 4096, 70_000]) {
            for rare in [5, 50, 100_000] {
                let mut text = String::from("\"");
                for _ in 0..len {
                    let r = next();
                    text.push_str(match r % rare {
                        0 => "\"",
                        1 => "\\n",
                        2 => "\u{1}",
                        3 => "\\q",
                        4 => "\u{1f}",
                        _ => ["a", "é", " ", "\u{7f}", "✓"][(r >> 20) as usize % 5],
                    });
                }
                text.push('"');
                let ours = checked_value_end(text.as_bytes(), 0).is_some_and(|end| end == text.len());
                let serde = serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok();
                assert_eq!(ours, serde, "{text:?}");
                let first_quote = string_end(text.as_bytes(), 1);
                let plain = text.as_bytes()[1..]
                    .iter()
                    .scan(false, |esc, &c| {
                        let end = !*esc && c == b'"';
                        *esc = !*esc && c == b'\\';
                        Some(end)
                    })
                    .position(|end| end)
                    .map(|p| p + 2);
                assert_eq!(first_quote, plain, "{text:?}");
            }
        }
    }

    /// The check agrees with serde's when it skips a value, on every kind of value
    /// and every way of breaking one; past its depth it leaves the text to serde.
    #[test]
    fn checks_as_serde_does() {
        let cases = [
            "0",
            "-0",
            "12",
            "-1.5e3",
            "1E+9",
            "2e-0",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "--1",
            "true",
            "false",
            "null",
            "tru",
            "nul",
            "True",
            r#""""#,
            r#""a\"b""#,
            r#""\u00e9\ud800""#,
            r#""\x""#,
            r#""\u12g4""#,
            r#""\u12""#,
            "\"tab\there\"",
            "\"nl\n\"",
            "\"\u{7f}é\"",
            r#""open"#,
            "[]",
            "[ ]",
            "{}",
            "{ }",
            "[1,2]",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[",
            "]",
            r#"{"a":1}"#,
            r#"{"a" : [ {"b":{}} , null ] }"#,
            r#"{"a":1,}"#,
            r#"{"a"}"#,
            r#"{"a":}"#,
            r#"{1:2}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"a":1]"#,
            r#"[1}"#,
            r#"{"a\u0062":"\/"}"#,
            " \t\r\n[1] ",
            "[1] x",
            "",
            "  ",
            "[]]",
            "{}{}",
        ];
        for json in cases {
            let ours =
                checked_value_end(json.as_bytes(), 0).is_some_and(|end| skip_ws(json.as_bytes(), end) == json.len());
            let serde = serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok();
            assert_eq!(ours, serde, "{json:?}");
        }
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(checked_value_end(deep(64).as_bytes(), 0), Some(129));
        assert_eq!(checked_value_end(deep(65).as_bytes(), 0), None);
        assert_eq!(checked_value_end(b"{\"a\":[1]} tail", 0), Some(9));
    }

    #[test]
    fn values_and_members() {
        let json = r#" { "a" : [1, {"b": "]}"}, "x\"y"] , "n":-1.5e3,"name" :"t\"1", "name": "second" } "#;
        assert_eq!(member(json, "a"), Ok(Some(r#"[1, {"b": "]}"}, "x\"y"]"#)));
        assert_eq!(member(json, "n"), Ok(Some("-1.5e3")));
        assert_eq!(member(json, "name"), Ok(Some(r#""t\"1""#)));
        assert_eq!(member(json, "none"), Ok(None));
        assert_eq!(member("[1]", "a"), Ok(None));
        assert_eq!(member(r#"{"n\u0061me":"x"}"#, "name"), Err(()));
        let b = br#"{"a":{"b":"}"}}tail"#;
        assert_eq!(object_end(b, 0), Some(b.len() - 4));
        assert_eq!(value_end(b"true,", 0), Some(4));
        assert_eq!(value_end(b"12", 0), Some(2));
    }
}
