//! The requested schema of a form elicitation: read (a flat object of primitive
//! properties, the only shape elicitation allows) and used to check the host's
//! answer, with the schema's defaults filled in for the fields it left out.
//!
//! Checked: each property's type (string, number, integer, boolean, or an array of
//! enum values), `minLength`/`maxLength`, `minimum`/`maximum`, `minItems`/`maxItems`,
//! `enum`/`oneOf`/`anyOf` choices, the formats `email`, `uri`, `date`, `date-time`
//! (by their shape), and `required`. Not checked: `pattern` (no regular expressions).

use serde_json::{Map, Value};

use crate::error::quote;

/// Most properties a form may have.
const MAX_PROPERTIES: usize = 256;

#[derive(Debug)]
enum Format {
    Email,
    Uri,
    Date,
    DateTime,
}

#[derive(Debug)]
enum Type {
    Text {
        min: Option<u64>,
        max: Option<u64>,
        format: Option<Format>,
        choices: Option<Vec<String>>,
    },
    Number {
        integer: bool,
        min: Option<f64>,
        max: Option<f64>,
    },
    Bool,
    Choices {
        choices: Vec<String>,
        min: Option<u64>,
        max: Option<u64>,
    },
}

#[derive(Debug)]
struct Property {
    name: String,
    ty: Type,
    default: Option<Value>,
}

/// A form's schema, read.
#[derive(Debug)]
pub struct Form {
    properties: Vec<Property>,
    required: Vec<String>,
}

/// The `const` strings of `oneOf`/`anyOf` options, or the strings of an `enum`.
fn choices(schema: &Map<String, Value>, options_key: &str) -> std::result::Result<Option<Vec<String>>, String> {
    let strings = |v: &Value, what: &str| -> std::result::Result<String, String> {
        v.as_str()
            .map(str::to_string)
            .ok_or(format!("{what} holds a value that is not a string"))
    };
    if let Some(e) = schema.get("enum") {
        let list = e.as_array().ok_or("enum is not an array")?;
        return list
            .iter()
            .map(|v| strings(v, "enum"))
            .collect::<Result<_, _>>()
            .map(Some);
    }
    if let Some(o) = schema.get(options_key) {
        let list = o.as_array().ok_or(format!("{options_key} is not an array"))?;
        return list
            .iter()
            .map(|opt| strings(opt.get("const").unwrap_or(&Value::Null), options_key))
            .collect::<Result<_, _>>()
            .map(Some);
    }
    Ok(None)
}

fn uint(schema: &Map<String, Value>, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

impl Property {
    fn read(name: &str, schema: &Value) -> std::result::Result<Property, String> {
        let Value::Object(s) = schema else {
            return Err(format!("property {} is not a schema object", quote(name)));
        };
        let ty = match s.get("type").and_then(Value::as_str) {
            Some("string") => Type::Text {
                min: uint(s, "minLength"),
                max: uint(s, "maxLength"),
                format: match s.get("format").and_then(Value::as_str) {
                    Some("email") => Some(Format::Email),
                    Some("uri") => Some(Format::Uri),
                    Some("date") => Some(Format::Date),
                    Some("date-time") => Some(Format::DateTime),
                    _ => None,
                },
                choices: choices(s, "oneOf")?,
            },
            Some(t @ ("number" | "integer")) => Type::Number {
                integer: t == "integer",
                min: s.get("minimum").and_then(Value::as_f64),
                max: s.get("maximum").and_then(Value::as_f64),
            },
            Some("boolean") => Type::Bool,
            Some("array") => {
                let items = s.get("items").and_then(Value::as_object);
                let list = items.map(|i| choices(i, "anyOf")).transpose()?.flatten();
                Type::Choices {
                    choices: list.ok_or(format!(
                        "property {} is an array that is not a choice of strings",
                        quote(name)
                    ))?,
                    min: uint(s, "minItems"),
                    max: uint(s, "maxItems"),
                }
            }
            Some(other) => {
                return Err(format!(
                    "property {} has type {}, which elicitation does not allow",
                    quote(name),
                    quote(other)
                ))
            }
            None => return Err(format!("property {} has no type", quote(name))),
        };
        let mut p = Property {
            name: name.to_string(),
            ty,
            default: None,
        };
        // A default that breaks its own schema is the server's slip: left out, so that
        // the host is never blamed for it.
        if let Some(d) = s.get("default") {
            match p.check(d) {
                Ok(()) => p.default = Some(d.clone()),
                Err(why) => log::debug!("elicitation: ignored the default of {}: {why}", quote(name)),
            }
        }
        Ok(p)
    }

    fn check(&self, v: &Value) -> std::result::Result<(), String> {
        let name = quote(&self.name);
        let bad = |what: &str| Err(format!("field {name} {what}"));
        match &self.ty {
            Type::Text {
                min,
                max,
                format,
                choices,
            } => {
                let Some(s) = v.as_str() else {
                    return bad("must be a string");
                };
                let n = s.chars().count() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    return bad(&format!("has {n} characters, outside the allowed length"));
                }
                if choices.as_ref().is_some_and(|c| !c.iter().any(|x| x == s)) {
                    return bad("is not one of the allowed values");
                }
                if let Some(f) = format {
                    if !format_ok(f, s) {
                        return bad(&format!("is not a valid {f:?}").to_lowercase());
                    }
                }
            }
            Type::Number { integer, min, max } => {
                let Some(x) = v.as_f64().filter(|_| v.is_number()) else {
                    return bad("must be a number");
                };
                if *integer && !(v.is_i64() || v.is_u64()) {
                    return bad("must be an integer");
                }
                if min.is_some_and(|m| x < m) || max.is_some_and(|m| x > m) {
                    return bad("is outside the allowed range");
                }
            }
            Type::Bool => {
                if !v.is_boolean() {
                    return bad("must be true or false");
                }
            }
            Type::Choices { choices, min, max } => {
                let Some(items) = v.as_array() else {
                    return bad("must be an array");
                };
                let n = items.len() as u64;
                if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
                    return bad(&format!("has {n} items, outside the allowed count"));
                }
                if items
                    .iter()
                    .any(|i| !i.as_str().is_some_and(|s| choices.iter().any(|c| c == s)))
                {
                    return bad("holds a value that is not one of the allowed values");
                }
            }
        }
        Ok(())
    }
}

/// A format checked by its shape, as a form field would be.
fn format_ok(f: &Format, s: &str) -> bool {
    let date = |d: &str| {
        let b = d.as_bytes();
        b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && b.iter()
                .enumerate()
                .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    };
    match f {
        Format::Email => s.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && domain.contains('.') && !s.chars().any(char::is_whitespace)
        }),
        Format::Uri => s.split_once(':').is_some_and(|(scheme, _)| {
            scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
        }),
        Format::Date => date(s),
        Format::DateTime => s.len() > 11 && s.is_char_boundary(10) && date(&s[..10]) && matches!(&s[10..11], "T" | "t"),
    }
}

impl Form {
    /// Reads `requestedSchema`. `Err` says what is wrong with it (the server's mistake).
    pub fn read(schema: &Value) -> std::result::Result<Form, String> {
        let Value::Object(s) = schema else {
            return Err("the requested schema is not an object".into());
        };
        if s.get("type").and_then(Value::as_str) != Some("object") {
            return Err("the requested schema is not of type \"object\"".into());
        }
        let props = match s.get("properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err("the requested schema's properties are not an object".into()),
        };
        if props.len() > MAX_PROPERTIES {
            return Err(format!("the requested schema has over {MAX_PROPERTIES} properties"));
        }
        let properties = props
            .iter()
            .map(|(k, v)| Property::read(k, v))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let required = match s.get("required") {
            None => Vec::new(),
            Some(Value::Array(r)) => r
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or("required holds a value that is not a string")
                })
                .collect::<std::result::Result<_, _>>()?,
            Some(_) => return Err("the requested schema's required is not an array".into()),
        };
        if let Some(r) = required.iter().find(|r| !properties.iter().any(|p| &p.name == *r)) {
            return Err(format!("required field {} is not among the properties", quote(r)));
        }
        Ok(Form { properties, required })
    }

    /// Checks the host's content, filling in the defaults of fields it left out.
    /// `Err` names the first field that does not fit.
    pub fn check(&self, content: Value) -> std::result::Result<Value, String> {
        let Value::Object(mut c) = content else {
            return Err("the content is not a JSON object".into());
        };
        if let Some(k) = c.keys().find(|k| !self.properties.iter().any(|p| &p.name == *k)) {
            return Err(format!("field {} is not in the requested schema", quote(k)));
        }
        for p in &self.properties {
            match c.get(&p.name) {
                Some(v) => p.check(v)?,
                None => {
                    if let Some(d) = &p.default {
                        c.insert(p.name.clone(), d.clone());
                    } else if self.required.contains(&p.name) {
                        return Err(format!("required field {} is missing", quote(&p.name)));
                    }
                }
            }
        }
        Ok(Value::Object(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(props: Value, required: Value) -> Form {
        Form::read(&json!({"type": "object", "properties": props, "required": required})).unwrap()
    }

    #[test]
    fn defaults_are_filled_in() {
        let f = form(
            json!({
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
                "verified": {"type": "boolean", "default": true},
                "bad": {"type": "integer", "default": "x"},
            }),
            json!([]),
        );
        assert_eq!(
            f.check(json!({"age": 4})).unwrap(),
            json!({"name": "John Doe", "age": 4, "score": 95.5, "status": "active", "verified": true})
        );
    }

    #[test]
    fn answers_are_checked() {
        let f = form(
            json!({
                "email": {"type": "string", "format": "email", "maxLength": 20},
                "n": {"type": "integer", "minimum": 1, "maximum": 5},
                "when": {"type": "string", "format": "date"},
                "colors": {"type": "array", "items": {"anyOf": [{"const": "r"}, {"const": "g"}]}, "maxItems": 1},
                "pick": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
            }),
            json!(["email"]),
        );
        assert!(f.check(json!({"email": "a@b.c", "n": 3, "when": "2025-01-31"})).is_ok());
        for bad in [
            json!({}),
            json!({"email": "nope"}),
            json!({"email": "a@b.c", "n": 2.5}),
            json!({"email": "a@b.c", "n": 9}),
            json!({"email": "a@b.c", "when": "31/01/2025"}),
            json!({"email": "a@b.c", "colors": ["r", "g"]}),
            json!({"email": "a@b.c", "colors": ["x"]}),
            json!({"email": "a@b.c", "pick": "b"}),
            json!({"email": "a@b.c", "other": 1}),
            json!([]),
        ] {
            assert!(f.check(bad.clone()).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_flat_primitive_schemas() {
        for bad in [
            json!([1]),
            json!("object"),
            json!({"type": "array"}),
            json!({"type": "object", "properties": {"o": {"type": "object"}}}),
            json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "object"}}}}),
            json!({"type": "object", "properties": {}, "required": ["x"]}),
        ] {
            assert!(Form::read(&bad).is_err(), "{bad}");
        }
        assert!(Form::read(&json!({"type": "object"})).is_ok());
    }
}
