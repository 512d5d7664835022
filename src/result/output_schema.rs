//! A tool's `outputSchema`, compiled once from its listing, and the check of a
//! call's `structuredContent` against it (JSON Schema draft 2020-12 unless the
//! schema names another draft with `$schema`). No `$ref` outside the schema is ever
//! fetched: such a schema does not compile, and its tool is not checked.

use serde_json::Value;

use super::schema::Schema;

/// The longest schema mcpc compiles (its JSON): a larger one is not checked.
pub const MAX_SCHEMA: usize = 256 * 1024;
/// The longest explanation of a mismatch.
const MAX_WHY: usize = 300;

/// A compiled `outputSchema`.
pub struct OutputSchema(Schema);

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OutputSchema")
    }
}

/// Compiles a tool's `outputSchema` (its JSON); why not, when it cannot be.
#[cfg(test)]
pub fn compile(schema: &str) -> Result<OutputSchema, String> {
    if schema.len() > MAX_SCHEMA {
        return Err(too_large());
    }
    let value: Value = serde_json::from_str(schema).map_err(|e| format!("not JSON: {e}"))?;
    build(&value)
}

/// [`compile`] of a schema parsed already (with its tool), whose JSON is counted as
/// it is written compactly: its size limit as when it was written out to be compiled.
pub fn compile_parsed(schema: &Value) -> Result<OutputSchema, String> {
    /// Counts what would be written.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut len = Count(0);
    serde_json::to_writer(&mut len, schema).expect("a JSON value serializes");
    if len.0 > MAX_SCHEMA {
        return Err(too_large());
    }
    build(schema)
}

fn too_large() -> String {
    format!("the schema is over {MAX_SCHEMA} bytes")
}

fn build(value: &Value) -> Result<OutputSchema, String> {
    if !value.is_object() {
        return Err("not an object".into());
    }
    Schema::compile(value).map(OutputSchema)
}

impl OutputSchema {
    /// Checks a result's `structuredContent` (None: the result has none, which a
    /// tool with an output schema must give); why it does not fit, if it does not.
    pub fn check(&self, structured: Option<&str>) -> Result<(), String> {
        let Some(text) = structured else {
            return Err("the result has no structuredContent".into());
        };
        let value: Value = serde_json::from_str(text).map_err(|e| format!("structuredContent is not JSON: {e}"))?;
        match self.0.check(&value).err().map(|f| f.message()) {
            None => Ok(()),
            Some(mut why) => {
                if why.len() > MAX_WHY {
                    let mut cut = MAX_WHY;
                    while !why.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    why.truncate(cut);
                    why.push_str("...");
                }
                Err(why)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_and_refusals() {
        let s = compile(r#"{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"]}"#).unwrap();
        assert!(s.check(Some(r#"{"sum":5}"#)).is_ok());
        let why = s.check(Some(r#"{"sum":"five"}"#)).unwrap_err();
        assert!(why.contains("/sum"), "{why}");
        assert!(s.check(Some(r#"{}"#)).unwrap_err().contains("sum"));
        assert!(s.check(None).unwrap_err().contains("no structuredContent"));
        // 2020-12 by default: prefixItems is known.
        let t = compile(r#"{"type":"array","prefixItems":[{"type":"string"}]}"#).unwrap();
        assert!(t.check(Some("[1]")).is_err());
        assert!(t.check(Some(r#"["a"]"#)).is_ok());
        // Nothing is fetched: a remote $ref does not compile.
        assert!(compile(r#"{"$ref":"https://example.com/s.json"}"#).is_err());
        assert!(compile("[1]").is_err());
        assert!(compile(&format!(r#"{{"description":"{}"}}"#, "x".repeat(MAX_SCHEMA))).is_err());
        // A local $ref is fine.
        let l = compile(r##"{"$defs":{"n":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/n"}}}"##).unwrap();
        assert!(l.check(Some(r#"{"a":"x"}"#)).is_err());
    }

    #[test]
    fn parsed_schemas_compile_as_their_json_does() {
        let v = |s: &str| serde_json::from_str::<Value>(s).unwrap();
        let s = compile_parsed(&v(r#"{"type":"object","required":["sum"]}"#)).unwrap();
        assert!(s.check(Some(r#"{"sum":5}"#)).is_ok());
        assert!(s.check(Some("{}")).is_err());
        assert_eq!(compile_parsed(&v("[1]")).unwrap_err(), "not an object");
        assert!(compile_parsed(&v(r#"{"$ref":"https://example.com/s.json"}"#)).is_err());
        // The limit counts the schema as written compactly: white space aside.
        let room = MAX_SCHEMA - r#"{"description":""}"#.len();
        let fits = format!(r#"{{ "description" : "{}" }}"#, "x".repeat(room));
        assert!(fits.len() > MAX_SCHEMA);
        assert!(compile_parsed(&v(&fits)).is_ok());
        let over = format!(r#"{{"description":"{}"}}"#, "x".repeat(room + 1));
        assert_eq!(compile_parsed(&v(&over)).unwrap_err(), compile(&over).unwrap_err());
    }
}
