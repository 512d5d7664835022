//! Finding where JSON values end, from their strings and brackets alone, without
//! parsing them. Used where the text is parsed whole elsewhere (a response's result,
//! by its reader) or was already (a tool's JSON, with its page): scanning is cheaper
//! than a second parse, and finding an end is all that is needed.
//!
//! Each function returns `None` when the text ends first; none of them checks the
//! syntax of what it skips.

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
/// zero-byte test of "Bit Twiddling Hacks"). memchr costs about 100 instructions of
/// set-up per call, more than it saved on JSON's short strings and on text escaped
/// every line (callgrind), and finds at most three bytes.
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
        i = first_of(b, i, [b'"', b'\\'])?;
        if b[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
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
        let mut x = 88172645463325252u64;
        // Dense and sparse quotes and escapes: short strings and long ones.
        for (len, m) in (0..200).flat_map(|len| [(len, 23), (len, 400)]) {
            for _ in 0..20 {
                let b: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
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
