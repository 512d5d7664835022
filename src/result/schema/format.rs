//! The `format`s checked where a draft makes them assertions (up to draft 7), and
//! ECMA-262 patterns put into the syntax of the regex engine.

use std::borrow::Cow;

/// Whether `s` is of format `f`; None for a format mcpc does not know, which
/// passes (as the drafts ask of unknown formats).
pub(super) fn valid(f: &str, s: &str) -> Option<bool> {
    Some(match f {
        "date-time" => date_time(s),
        "date" => date(s),
        "time" => time(s),
        "duration" => duration(s),
        "email" => email(s, false),
        "idn-email" => email(s, true),
        "hostname" => hostname(s),
        "idn-hostname" => idna::domain_to_ascii_strict(s).is_ok_and(|a| hostname(&a)),
        "ipv4" => ipv4(s),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "uri" => uri(s, false, false),
        "uri-reference" => uri(s, true, false),
        "iri" => uri(s, false, true),
        "iri-reference" => uri(s, true, true),
        "uri-template" => uri_template(s),
        "json-pointer" => json_pointer(s),
        "relative-json-pointer" => relative_json_pointer(s),
        "uuid" => uuid(s),
        "regex" => regex(s).is_ok(),
        _ => return None,
    })
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok())?
}

fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || !s.is_ascii() || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&s[..4], 4), digits(&s[5..7], 2), digits(&s[8..], 2)) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// RFC 3339's full-time; a leap second only at 23:59:60 UTC.
fn time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || !s.is_ascii() || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (digits(&s[..2], 2), digits(&s[3..5], 2), digits(&s[6..8], 2)) else {
        return false;
    };
    let mut rest = &s[8..];
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    let (oh, om) = if rest.eq_ignore_ascii_case("z") {
        (0, 0)
    } else {
        let ob = rest.as_bytes();
        if ob.len() != 6 || !(ob[0] == b'+' || ob[0] == b'-') || ob[3] != b':' {
            return false;
        }
        let (Some(oh), Some(om)) = (digits(&rest[1..3], 2), digits(&rest[4..], 2)) else {
            return false;
        };
        if oh > 23 || om > 59 {
            return false;
        }
        let sign = if ob[0] == b'+' { 1 } else { -1 };
        (sign * oh as i32, sign * om as i32)
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    if sec == 60 {
        let utc = ((h as i32 * 60 + m as i32 - oh * 60 - om) % 1440 + 1440) % 1440;
        return utc == 23 * 60 + 59;
    }
    true
}

fn date_time(s: &str) -> bool {
    s.len() > 11
        && s.is_char_boundary(10)
        && matches!(s.as_bytes()[10], b'T' | b't')
        && date(&s[..10])
        && time(&s[11..])
}

/// ISO 8601 durations as RFC 3339's appendix A writes them.
fn duration(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('P') else { return false };
    if let Some(w) = rest.strip_suffix('W') {
        return !w.is_empty() && w.bytes().all(|b| b.is_ascii_digit());
    }
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let units = |part: &str, order: &[u8]| -> Option<usize> {
        let (mut n, mut at, mut digits) = (0, 0, 0);
        for b in part.bytes() {
            if b.is_ascii_digit() {
                digits += 1;
                continue;
            }
            let i = order[at..].iter().position(|&u| u == b)? + at;
            if digits == 0 {
                return None;
            }
            (at, digits, n) = (i + 1, 0, n + 1);
        }
        (digits == 0).then_some(n)
    };
    let Some(d) = units(date, b"YMD") else { return false };
    match time {
        None => d > 0,
        Some(t) => units(t, b"HMS").is_some_and(|n| n > 0),
    }
}

fn hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !(l.len() >= 4 && &l[2..4] == "--" && !l[..2].eq_ignore_ascii_case("xn"))
        })
}

fn ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

fn email(s: &str, idn: bool) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    let local_ok = if let Some(q) = local.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
        !q.is_empty()
    } else {
        !local.is_empty()
            && !local.starts_with('.')
            && !local.ends_with('.')
            && !local.contains("..")
            && local
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c) || (idn && !c.is_ascii()))
    };
    if !local_ok {
        return false;
    }
    if let Some(lit) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match lit.strip_prefix("IPv6:") {
            Some(v6) => v6.parse::<std::net::Ipv6Addr>().is_ok(),
            None => ipv4(lit),
        };
    }
    if idn {
        idna::domain_to_ascii_strict(domain).is_ok_and(|a| hostname(&a))
    } else {
        hostname(domain)
    }
}

/// RFC 3986 (an IRI also allows any non-ASCII character): a scheme unless `relative`
/// allows a relative reference, then characters of the right classes, `%` with two hex
/// digits, a bracketed host that is an IP literal and a port of digits.
fn uri(s: &str, relative: bool, iri: bool) -> bool {
    let scheme_end = s.find(':').filter(|&i| {
        let sch = &s[..i];
        !sch.is_empty()
            && sch.as_bytes()[0].is_ascii_alphabetic()
            && sch.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
            && !s[..i].contains(['/', '?', '#'])
    });
    let rest = match scheme_end {
        Some(i) => &s[i + 1..],
        None if relative => {
            // A relative path's first segment holds no colon.
            let first = s.split(['/', '?', '#']).next().unwrap_or("");
            if first.contains(':') {
                return false;
            }
            s
        }
        None => return false,
    };
    let (rest, fragment) = rest.split_once('#').map_or((rest, None), |(r, f)| (r, Some(f)));
    let mut path = rest;
    if let Some(auth) = rest.strip_prefix("//") {
        let end = auth.find(['/', '?']).unwrap_or(auth.len());
        path = &auth[end..];
        let auth = &auth[..end];
        let (user, host_port) = auth.rsplit_once('@').unwrap_or(("", auth));
        let host_ok = match host_port.strip_prefix('[') {
            Some(b) => match b.split_once(']') {
                Some((ip, p)) => {
                    let future = ip.len() > 1 && matches!(ip.as_bytes()[0], b'v' | b'V');
                    (future || ip.parse::<std::net::Ipv6Addr>().is_ok())
                        && (p.is_empty() || p.strip_prefix(':').is_some_and(port))
                }
                None => false,
            },
            None => {
                let (host, p) = host_port.rsplit_once(':').unwrap_or((host_port, ""));
                port(p) && !host.contains(':') && chars_ok(host, iri)
            }
        };
        if !host_ok || user.contains(['@', '[', ']']) || !chars_ok(user, iri) {
            return false;
        }
    }
    chars_ok(path, iri) && fragment.map_or(true, |f| chars_ok(f, iri))
}

fn port(p: &str) -> bool {
    p.bytes().all(|b| b.is_ascii_digit())
}

/// Only characters a URI (or IRI) allows outside its host; `%` with two hex digits.
fn chars_ok(s: &str, iri: bool) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)) {
                return false;
            }
            i += 3;
            continue;
        }
        let ok = c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&c) || (iri && c >= 0x80);
        if !ok {
            return false;
        }
        i += 1;
    }
    true
}

/// RFC 6570: literals, and expressions of an operator and variables.
fn uri_template(s: &str) -> bool {
    let mut rest = s;
    while !rest.is_empty() {
        let lit_end = rest.find(['{', '}']).unwrap_or(rest.len());
        let lit = &rest[..lit_end];
        if lit.chars().any(|c| c.is_ascii_control() || " \"<>\\^`|".contains(c)) || !chars_pct(lit) {
            return false;
        }
        rest = &rest[lit_end..];
        let Some(expr) = rest.strip_prefix('{') else {
            return rest.is_empty();
        };
        let Some((expr, after)) = expr.split_once('}') else {
            return false;
        };
        let vars = expr.strip_prefix(['+', '#', '.', '/', ';', '?', '&']).unwrap_or(expr);
        let varspec_ok = |v: &str| {
            let (name, modifier) = match v.split_once(':') {
                Some((n, m)) => (n, Some(m)),
                None => (v.strip_suffix('*').unwrap_or(v), None),
            };
            let name_ok = !name.is_empty()
                && !name.starts_with('.')
                && !name.ends_with('.')
                && !name.contains("..")
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'%')
                && chars_pct(name);
            let mod_ok = modifier.map_or(true, |m| {
                (1..=4).contains(&m.len()) && !m.starts_with('0') && m.bytes().all(|b| b.is_ascii_digit())
            });
            name_ok && mod_ok
        };
        if !vars.split(',').all(varspec_ok) {
            return false;
        }
        rest = after;
    }
    true
}

/// Every `%` followed by two hex digits.
fn chars_pct(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, &c)| {
        c != b'%'
            || (b.get(i + 1).is_some_and(u8::is_ascii_hexdigit) && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    })
}

fn json_pointer(s: &str) -> bool {
    (s.is_empty() || s.starts_with('/')) && {
        let b = s.as_bytes();
        b.iter()
            .enumerate()
            .all(|(i, &c)| c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')))
    }
}

fn relative_json_pointer(s: &str) -> bool {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 || (n > 1 && s.starts_with('0')) {
        return false;
    }
    let rest = &s[n..];
    rest == "#" || json_pointer(rest)
}

fn uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Unicode white space that ECMA-262's `\s` has beyond ASCII's.
const ECMA_SPACE: &str = r"\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}";

/// An ECMA-262 pattern compiled: an error if it is not one, None if it is one the
/// engine cannot run (lookaround, back-references, `\p{..}`).
pub(super) fn regex(p: &str) -> Result<Option<regex_lite::Regex>, String> {
    match regex_lite::Regex::new(&ecma_to_rust(p)?) {
        Ok(r) => Ok(Some(r)),
        // Valid in ECMA-262, beyond the engine: named back-references, empty classes.
        Err(e)
            if e.to_string().contains("not supported")
                || p.contains("\\k<")
                || p.contains("[]")
                || p.contains("[^]") =>
        {
            Ok(None)
        }
        Err(e) => Err(e.to_string()),
    }
}

/// An ECMA-262 pattern in the engine's syntax: `\s` with Unicode's spaces, `\cX`,
/// `\0`, and surrogate pairs as one code point; an error for syntax ECMA-262 does not
/// have (inline flags, comments, Python's groups, escapes such as `\a`).
fn ecma_to_rust(p: &str) -> Result<Cow<'_, str>, String> {
    if let Some(i) = p.find("(?") {
        let next = p[i + 2..].chars().next();
        if !matches!(next, Some(':' | '=' | '!' | '<')) || p[i + 2..].starts_with("<=P") {
            return Err(format!("{p:?} is not an ECMA-262 pattern"));
        }
    }
    if !p.contains('\\') {
        return Ok(Cow::Borrowed(p));
    }
    let mut out = String::with_capacity(p.len() + 16);
    let mut class = false;
    let mut it = p.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '[' if !class => {
                class = true;
                out.push(c);
            }
            ']' if class => {
                class = false;
                out.push(c);
            }
            '\\' => match it.next() {
                Some('s') if class => {
                    out.push_str(r"\s");
                    out.push_str(ECMA_SPACE);
                }
                Some('s') => out.push_str(&format!(r"[\s{ECMA_SPACE}]")),
                Some('S') if !class => out.push_str(&format!(r"[^\s{ECMA_SPACE}]")),
                Some('c') if it.peek().is_some_and(char::is_ascii_alphabetic) => {
                    let l = it.next().expect("peeked");
                    out.push_str(&format!(r"\x{{{:x}}}", (l as u32) % 32));
                }
                Some('0') if !it.peek().is_some_and(char::is_ascii_digit) => out.push_str(r"\x{0}"),
                Some('u') => {
                    let hex: String = it.clone().take(4).collect();
                    match u32::from_str_radix(&hex, 16) {
                        Ok(hi @ 0xD800..=0xDBFF) if hex.len() == 4 => {
                            let rest: String = it.clone().skip(4).take(6).collect();
                            let lo = rest.strip_prefix("\\u").and_then(|l| u32::from_str_radix(l, 16).ok());
                            match lo {
                                Some(lo @ 0xDC00..=0xDFFF) => {
                                    let cp = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    out.push_str(&format!(r"\x{{{cp:x}}}"));
                                    it.nth(9);
                                }
                                _ => out.push_str(r"\u"),
                            }
                        }
                        _ => out.push_str(r"\u"),
                    }
                }
                Some(e) if e.is_ascii_alphabetic() && !"dDwWsSbBfnrtvcxukpP".contains(e) => {
                    return Err(format!("\\{e} is not an ECMA-262 escape"));
                }
                Some(e) => {
                    out.push('\\');
                    out.push(e);
                }
                None => out.push('\\'),
            },
            _ => out.push(c),
        }
    }
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_never_panic_and_know_their_shapes() {
        let names = [
            "date-time",
            "date",
            "time",
            "duration",
            "email",
            "idn-email",
            "hostname",
            "idn-hostname",
            "ipv4",
            "ipv6",
            "uri",
            "uri-reference",
            "iri",
            "iri-reference",
            "uri-template",
            "json-pointer",
            "relative-json-pointer",
            "uuid",
            "regex",
        ];
        let odd = [
            "",
            "é",
            "12:34:5é",
            "2024-0é-01",
            "2024-01-01Té",
            "http://[::1]é",
            "http://[::1]:é",
            "a@é",
            "xn--é",
            "{é",
            "%é",
            "Pé",
            "(?é",
            "\\",
            "1é",
            "[é]",
        ];
        for n in names {
            for s in odd {
                let _ = valid(n, s);
            }
        }
        assert_eq!(valid("date-time", "2024-02-29T23:59:60Z"), Some(true));
        assert_eq!(valid("time", "23:59:60+01:00"), Some(false));
        assert_eq!(valid("uri", "http://[::1]:8080/a?b#c"), Some(true));
        assert_eq!(valid("uri", "//no-scheme"), Some(false));
        assert_eq!(valid("uri-reference", "//no-scheme"), Some(true));
        assert_eq!(valid("email", "a.b@example.com"), Some(true));
        assert_eq!(valid("ipv4", "1.2.3.04"), Some(false));
        assert_eq!(valid("duration", "P1DT2H"), Some(true));
        assert_eq!(valid("duration", "PT"), Some(false));
        assert_eq!(valid("uri-template", "/a{?x,y*}{/z:3}"), Some(true));
        assert_eq!(valid("no-such-format", "x"), None);
    }
}
