//! JSON string unescaping for the scanners beside [`crate::scan`]: a string's text
//! without copying it when it holds no escape, and with its escapes resolved when it does.

use crate::scan;

/// The string that the JSON string `quoted` (checked) stands for; `None` if it is
/// not a string, or serde refuses what its `\u` escapes encode.
pub(crate) fn json_string(quoted: &str) -> Option<String> {
    let mut s = unescape_nul(json_str(quoted)?)?;
    s.pop(); // the NUL
    Some(s)
}

/// The contents of `quoted`, a JSON string (checked); `None` if it is not a string.
pub(crate) fn json_str(quoted: &str) -> Option<&str> {
    quoted.strip_prefix('"')?.strip_suffix('"')
}

/// The text that the contents of a JSON string (checked: every escape is JSON's)
/// stand for, with a trailing NUL, in one buffer of the right size. `None` where
/// serde refuses the text (a `\u` escape that is half of a surrogate pair without
/// the other half). serde unescapes into a buffer of its own, grown as it goes,
/// from which the text is then copied: the growing buffer's fresh pages cost page
/// faults that instruction counts do not show (docs/performance.md).
pub(crate) fn unescape_nul(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len() + 1);
    unescape_into(&mut out, inner)?;
    out.push('\0');
    Some(out)
}

/// [`unescape_nul`] onto the end of `out`, without the NUL.
pub(crate) fn unescape_into(out: &mut String, inner: &str) -> Option<()> {
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
/// pair); `out` then holds part of it. One pass, so that a long text is not walked
/// twice, to be checked and then unescaped.
pub(crate) fn unescape_checked_into(out: &mut String, s: &str, mut i: usize) -> Option<usize> {
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
pub(crate) fn escape_at(b: &[u8], at: usize) -> Option<(char, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
