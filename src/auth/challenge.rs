//! The `WWW-Authenticate` challenge of a 401 or 403 (RFC 9110 §11.6.1, RFC 6750
//! §3): the parameters mcpc acts on, from the `Bearer` or `DPoP` challenge.

/// What a Bearer challenge says.
#[derive(Debug, Default, PartialEq)]
pub struct Challenge {
    /// RFC 9728 §5.1: where the protected resource's metadata is.
    pub resource_metadata: Option<String>,
    /// The scope the resource asks for (space-separated).
    pub scope: Option<String>,
    /// `invalid_token`, `insufficient_scope`, ...
    pub error: Option<String>,
}

/// Reads the Bearer and DPoP challenges of a `WWW-Authenticate` value (the first
/// value of each parameter wins; other schemes are skipped). Malformed text
/// yields what could be read.
pub fn parse(value: &str) -> Challenge {
    let mut out = Challenge::default();
    let mut in_bearer = false;
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches([' ', '\t', ',']);
        if rest.is_empty() {
            return out;
        }
        let end = rest.find(['=', ' ', '\t', ',']).unwrap_or(rest.len());
        let token = &rest[..end];
        let after = rest[end..].trim_start_matches([' ', '\t']);
        if let Some(v) = after.strip_prefix('=').filter(|v| !v.starts_with('=')) {
            // An auth-param: name=token or name="quoted".
            let v = v.trim_start_matches([' ', '\t']);
            let (value, next) = if let Some(q) = v.strip_prefix('"') {
                quoted(q)
            } else {
                let e = v.find([',', ' ', '\t']).unwrap_or(v.len());
                (v[..e].to_string(), &v[e..])
            };
            if in_bearer {
                let slot = match token.to_ascii_lowercase().as_str() {
                    "resource_metadata" => Some(&mut out.resource_metadata),
                    "scope" => Some(&mut out.scope),
                    "error" => Some(&mut out.error),
                    _ => None,
                };
                if let Some(slot) = slot {
                    slot.get_or_insert(value);
                }
            }
            rest = next;
        } else {
            // A scheme name (or a token68, which mcpc does not use).
            in_bearer = token.eq_ignore_ascii_case("bearer") || token.eq_ignore_ascii_case("dpop");
            // Past the token, or past one stray character when there is none.
            let skip = if end == 0 {
                rest.chars().next().map_or(0, char::len_utf8)
            } else {
                end
            };
            rest = &rest[skip..];
        }
    }
}

/// A quoted-string's value (after the opening quote) and the text after it.
fn quoted(s: &str) -> (String, &str) {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return (value, &s[i + 1..]),
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    value.push(n);
                }
            }
            c => value.push(c),
        }
    }
    (value, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bearer_parameters() {
        let c = parse(
            r#"Bearer scope="mcp:write", resource_metadata="http://127.0.0.1:1/.well-known/x", error="insufficient_scope""#,
        );
        assert_eq!(c.scope.as_deref(), Some("mcp:write"));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://127.0.0.1:1/.well-known/x"));
    }

    #[test]
    fn skips_other_schemes_and_reads_tokens_and_escapes() {
        let c = parse(r#"Basic realm="a", Bearer error=invalid_token, scope="a \"b\"", DPoP scope="x""#);
        assert_eq!(
            parse(r#"DPoP error="use_dpop_nonce""#).error.as_deref(),
            Some("use_dpop_nonce")
        );
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("a \"b\""));
        assert_eq!(parse("Bearer"), Challenge::default());
        assert_eq!(
            parse(r#"Bearer scope="unterminated"#).scope.as_deref(),
            Some("unterminated")
        );
        assert_eq!(parse("==,,\"").scope, None);
    }
}
