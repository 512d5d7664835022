//! Request metadata headers of the 2026-07-28 Streamable HTTP transport: tool
//! parameters marked `x-mcp-header` in a tool's `inputSchema` are mirrored into
//! `Mcp-Param-{Name}` headers, and header values that are not plain ASCII go in
//! the `=?base64?...?=` sentinel form.

use serde_json::Value;

/// The JSON type an annotated parameter has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    String,
    Integer,
    Boolean,
}

/// One `x-mcp-header` annotation: the header name part and the property path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamHeader {
    pub name: String,
    pub path: Vec<String>,
    pub kind: ParamKind,
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The largest integer a header may carry (JavaScript's safe range).
const MAX_SAFE: i64 = (1 << 53) - 1;

/// Reads the `x-mcp-header` annotations of an `inputSchema`. An annotation that
/// breaks a rule makes the whole tool invalid: the error says why.
pub fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut out = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut out)?;
    let mut seen: Vec<String> = Vec::new();
    for h in &out {
        let lower = h.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "x-mcp-header {:?} appears twice (names are compared ignoring case)",
                h.name
            ));
        }
        seen.push(lower);
    }
    Ok(out)
}

/// Visits every schema object. `reachable` is true while the path from the root
/// consists of `properties` steps only.
fn walk(node: &Value, path: &mut Vec<String>, reachable: bool, out: &mut Vec<ParamHeader>) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(annotation) = map.get("x-mcp-header") {
                let at = if path.is_empty() {
                    "the schema root".to_string()
                } else {
                    path.join(".")
                };
                if !reachable || path.is_empty() {
                    return Err(format!(
                        "x-mcp-header at {at} is not reached through `properties` alone"
                    ));
                }
                let name = annotation
                    .as_str()
                    .ok_or_else(|| format!("x-mcp-header at {at} is not a string"))?;
                if name.is_empty() || !name.chars().all(is_tchar) {
                    return Err(format!(
                        "x-mcp-header {name:?} at {at} is not a valid header name token"
                    ));
                }
                let kind = match map.get("type").and_then(Value::as_str) {
                    Some("string") => ParamKind::String,
                    Some("integer") => ParamKind::Integer,
                    Some("boolean") => ParamKind::Boolean,
                    other => {
                        return Err(format!(
                        "x-mcp-header {name:?} at {at} is on a parameter of type {}, not string, integer or boolean",
                        other.unwrap_or("(none)")
                    ))
                    }
                };
                out.push(ParamHeader {
                    name: name.to_string(),
                    path: path.clone(),
                    kind,
                });
            }
            for (key, child) in map {
                if key == "properties" {
                    if let Value::Object(props) = child {
                        for (prop, sub) in props {
                            path.push(prop.clone());
                            walk(sub, path, reachable, out)?;
                            path.pop();
                        }
                        continue;
                    }
                }
                if key == "x-mcp-header" {
                    continue;
                }
                // Anything else (items, anyOf, $defs, ...) leaves the reachable chain.
                path.push(key.clone());
                walk(child, path, false, out)?;
                path.pop();
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, path, false, out)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The header value for a string: as is when it is plain visible ASCII (inner
/// spaces allowed), else base64 of its UTF-8 in the sentinel form.
pub fn encode_value(s: &str) -> String {
    // The empty string is a plain value too.
    let edge_space = s.starts_with(' ') || s.ends_with(' ');
    let looks_encoded = s.starts_with("=?base64?") && s.ends_with("?=");
    let plain = s.bytes().all(|b| (0x20..=0x7e).contains(&b)) && !edge_space && !looks_encoded;
    if plain {
        s.to_string()
    } else {
        use base64::Engine as _;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
        )
    }
}

/// The `Mcp-Param-*` headers for a call's arguments: one per annotation whose
/// value is present and not null. A value of the wrong type is left out (the
/// server will say what it thinks of the call).
pub fn param_values(args: &Value, headers: &[ParamHeader]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in headers {
        let mut v = args;
        let mut found = true;
        for step in &h.path {
            match v.get(step) {
                Some(next) => v = next,
                None => {
                    found = false;
                    break;
                }
            }
        }
        if !found {
            continue;
        }
        let text = match (h.kind, v) {
            (ParamKind::String, Value::String(s)) => encode_value(s),
            (ParamKind::Integer, Value::Number(n)) => match n.as_i64() {
                Some(i) if (-MAX_SAFE..=MAX_SAFE).contains(&i) => i.to_string(),
                _ => continue,
            },
            (ParamKind::Boolean, Value::Bool(b)) => b.to_string(),
            _ => continue,
        };
        out.push((format!("Mcp-Param-{}", h.name), text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_per_the_spec_examples() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("a b"), "a b");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
        assert_eq!(encode_value("\ttab"), "=?base64?CXRhYg==?=");
    }

    #[test]
    fn reads_valid_annotations_and_values() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "priority":{"type":"integer","x-mcp-header":"Priority"},
            "verbose":{"type":"boolean","x-mcp-header":"Verbose"},
            "nested":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
            "query":{"type":"string"}}});
        let hs = param_headers(&schema).unwrap();
        assert_eq!(hs.len(), 4);
        let args = json!({"region":"eu","priority":7,"verbose":null,"nested":{"zone":"ü"},"query":"x"});
        let mut got = param_values(&args, &hs);
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-Priority".to_string(), "7".to_string()),
                ("Mcp-Param-Region".to_string(), "eu".to_string()),
                ("Mcp-Param-Zone".to_string(), "=?base64?w7w=?=".to_string()),
            ]
        );
    }

    #[test]
    fn rejects_invalid_annotations() {
        for bad in [
            json!({"properties":{"v":{"type":"string","x-mcp-header":""}}}),
            json!({"properties":{"v":{"type":"number","x-mcp-header":"Score"}}}),
            json!({"properties":{"v":{"type":"object","x-mcp-header":"Data"}}}),
            json!({"properties":{"v":{"type":"array","items":{"type":"string"},"x-mcp-header":"Items"}}}),
            json!({"properties":{"v":{"type":"null","x-mcp-header":"Nil"}}}),
            json!({"properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}),
            json!({"properties":{"v":{"type":"string","x-mcp-header":"My Region"}}}),
            json!({"properties":{"v":{"type":"string","x-mcp-header":"Region:Primary"}}}),
            json!({"properties":{"v":{"type":"string","x-mcp-header":"Région"}}}),
            json!({"properties":{"v":{"type":"string","x-mcp-header":"Region\t1"}}}),
            json!({"properties":{"v":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}),
            json!({"properties":{"v":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}),
            json!({"$defs":{"x":{"type":"string","x-mcp-header":"A"}}}),
            json!({"type":"string","x-mcp-header":"Root"}),
        ] {
            assert!(param_headers(&bad).is_err(), "{bad}");
        }
        assert_eq!(param_headers(&json!({"type":"object"})).unwrap(), vec![]);
    }
}
