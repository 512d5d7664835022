//! A JSON Schema validator for tools' output schemas: draft 2020-12, and 2019-09, 7,
//! 6 and 4 when `$schema` names them (docs/decisions/0024-own-schema-validator.md).
//! Every `$ref` is resolved when the schema is compiled, within the schema itself:
//! there is no loader, so nothing is ever fetched, and a `$ref` to anything outside
//! makes the schema uncompilable. The checks are in `check`, the formats in `format`.

mod check;
mod format;

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Number, Value};
use url::Url;

/// The base URI of a schema without an `$id` of its own.
const DEFAULT_BASE: &str = "mcpc-schema:///output-schema.json";

/// The drafts, oldest first: a keyword known from one draft on compares with `>=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Draft {
    D4,
    D6,
    D7,
    D2019,
    D2020,
}

impl Draft {
    fn named(uri: &str) -> Option<Draft> {
        let uri = uri.trim_end_matches('#');
        let uri = uri.strip_prefix("https://").or_else(|| uri.strip_prefix("http://"))?;
        match uri {
            "json-schema.org/draft/2020-12/schema" => Some(Draft::D2020),
            "json-schema.org/draft/2019-09/schema" => Some(Draft::D2019),
            "json-schema.org/draft-07/schema" => Some(Draft::D7),
            "json-schema.org/draft-06/schema" => Some(Draft::D6),
            "json-schema.org/draft-04/schema" => Some(Draft::D4),
            _ => None,
        }
    }

    fn id_keyword(self) -> &'static str {
        if self == Draft::D4 {
            "id"
        } else {
            "$id"
        }
    }

    /// Up to draft 7 a `$ref` hides the keywords beside it.
    fn ref_hides_siblings(self) -> bool {
        self <= Draft::D7
    }
}

/// A compiled schema: its nodes, the root first.
pub(crate) struct Schema {
    nodes: Vec<Node>,
    resources: Vec<Resource>,
    draft: Draft,
}

/// A subschema.
enum Node {
    Bool(bool),
    Keys(Box<Keys>),
}

/// A schema resource (the root, or a subschema with an `$id`), for the dynamic scope.
#[derive(Default)]
struct Resource {
    /// Its root node.
    root: usize,
    dynamic_anchors: HashMap<String, usize>,
    recursive_anchor: bool,
}

/// Where `$dynamicRef` or `$recursiveRef` may go instead of its static target.
enum Dynamic {
    None,
    Anchor(String),
    Recursive,
}

/// A `pattern`: None when mcpc's regex engine cannot run it (lookaround,
/// back-references, Unicode classes), and the keyword is then not checked.
type Pattern = Option<regex_lite::Regex>;

/// The keywords of an object schema that mcpc checks, read once.
#[derive(Default)]
struct Keys {
    /// The resource this node is in (and `begins` it, when it is that resource's root).
    within: usize,
    begins: bool,
    r#ref: Option<usize>,
    dyn_ref: Option<(usize, Dynamic)>,
    all_of: Vec<usize>,
    any_of: Vec<usize>,
    one_of: Vec<usize>,
    not: Option<usize>,
    r#if: Option<usize>,
    then: Option<usize>,
    r#else: Option<usize>,
    dependent_schemas: Vec<(String, usize)>,
    dependent_required: Vec<(String, Vec<String>)>,
    /// `prefixItems`, or up to 2019-09 `items` as an array.
    prefix_items: Vec<usize>,
    /// The schema of the items after the prefix: `items`, or `additionalItems`.
    items: Option<usize>,
    contains: Option<usize>,
    min_contains: Option<u64>,
    max_contains: Option<u64>,
    properties: Vec<(String, usize)>,
    pattern_properties: Vec<(Pattern, usize)>,
    additional_properties: Option<usize>,
    property_names: Option<usize>,
    unevaluated_items: Option<usize>,
    unevaluated_properties: Option<usize>,
    /// A bit per [`check::Type`].
    types: Option<u8>,
    r#enum: Option<Vec<Value>>,
    r#const: Option<Value>,
    multiple_of: Option<Number>,
    maximum: Option<Number>,
    exclusive_maximum: Option<Number>,
    minimum: Option<Number>,
    exclusive_minimum: Option<Number>,
    max_length: Option<u64>,
    min_length: Option<u64>,
    pattern: Option<(String, Pattern)>,
    max_items: Option<u64>,
    min_items: Option<u64>,
    unique_items: bool,
    max_properties: Option<u64>,
    min_properties: Option<u64>,
    required: Vec<String>,
    /// Checked only up to draft 7, where `format` may assert.
    format: Option<String>,
}

impl Schema {
    /// Compiles a schema (an object or, from draft 6, a boolean); why not, when it
    /// cannot be: a `$ref` that leaves it, an unknown `$schema`, a keyword of the
    /// wrong shape.
    pub(crate) fn compile(doc: &Value) -> Result<Schema, String> {
        let draft = match doc.get("$schema") {
            None => Draft::D2020,
            Some(Value::String(s)) => Draft::named(s).ok_or_else(|| format!("unknown $schema {s:?}"))?,
            Some(_) => return Err("$schema is not a string".into()),
        };
        let base = Rc::new(Url::parse(DEFAULT_BASE).expect("a URL"));
        let mut c = Compiler {
            draft,
            bases: HashMap::new(),
            resources: HashMap::new(),
            anchors: HashMap::new(),
            node_of: HashMap::new(),
            nodes: Vec::new(),
            todo: Vec::new(),
            res: Vec::new(),
        };
        c.index(doc, base.clone(), true)?;
        let root = c.node_for(doc, &base)?;
        while let Some((at, v, base)) = c.todo.pop() {
            let node = c.compile_node(v, &base)?;
            c.nodes[at] = Some(node);
        }
        debug_assert_eq!(root, 0);
        let nodes = c.nodes.into_iter().map(|n| n.expect("every node compiled")).collect();
        Ok(Schema {
            nodes,
            resources: c.res,
            draft,
        })
    }
}

type Ptr = *const Value;

struct Compiler<'a> {
    draft: Draft,
    /// The base URI of each subschema in a place a schema is known to be.
    bases: HashMap<Ptr, Rc<Url>>,
    /// Each resource's root and index, by its URI (without a fragment).
    resources: HashMap<String, (&'a Value, usize)>,
    /// `$anchor`s (and `$dynamicAnchor`s, true) by resource URI and name.
    anchors: HashMap<(String, String), (&'a Value, bool)>,
    node_of: HashMap<Ptr, usize>,
    nodes: Vec<Option<Node>>,
    todo: Vec<(usize, &'a Value, Rc<Url>)>,
    res: Vec<Resource>,
}

/// The keywords whose value is a schema, an array of schemas, or an object of them.
const ONE: &[&str] = &[
    "additionalProperties",
    "additionalItems",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "items",
];
const MANY: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const BY_NAME: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

fn uri_key(url: &Url) -> String {
    let mut u = url.clone();
    u.set_fragment(None);
    u.into()
}

impl<'a> Compiler<'a> {
    /// Records the base URI of every subschema, the resources and the anchors.
    fn index(&mut self, v: &'a Value, mut base: Rc<Url>, root: bool) -> Result<(), String> {
        let Value::Object(m) = v else {
            self.bases.insert(v, base);
            return Ok(());
        };
        let hidden = self.draft.ref_hides_siblings() && m.contains_key("$ref");
        let mut resource = root;
        if let (false, Some(Value::String(id))) = (hidden, m.get(self.draft.id_keyword())) {
            let url = base
                .join(id)
                .map_err(|e| format!("bad {}: {id:?} ({e})", self.draft.id_keyword()))?;
            match url.fragment().filter(|f| !f.is_empty()) {
                // Up to draft 7, `$id: "#name"` is an anchor.
                Some(f) if self.draft <= Draft::D7 && id.starts_with('#') => {
                    self.anchors.insert((uri_key(&base), f.to_string()), (v, false));
                }
                Some(_) => {}
                None => {
                    base = Rc::new(url);
                    resource = true;
                }
            }
        }
        if resource {
            self.resources.insert(uri_key(&base), (v, self.res.len()));
            self.res.push(Resource {
                recursive_anchor: self.draft == Draft::D2019 && m.get("$recursiveAnchor") == Some(&Value::Bool(true)),
                ..Resource::default()
            });
        }
        if self.draft >= Draft::D2019 && !hidden {
            for (key, dynamic) in [("$anchor", false), ("$dynamicAnchor", true)] {
                if let Some(Value::String(name)) = m.get(key) {
                    if dynamic && self.draft < Draft::D2020 {
                        continue;
                    }
                    self.anchors.insert((uri_key(&base), name.clone()), (v, dynamic));
                }
            }
        }
        self.bases.insert(v, base.clone());
        if hidden {
            return Ok(());
        }
        for (k, sub) in m {
            let k = k.as_str();
            match sub {
                Value::Array(a) if MANY.contains(&k) => {
                    for s in a {
                        self.index(s, base.clone(), false)?;
                    }
                }
                Value::Object(o) if BY_NAME.contains(&k) => {
                    for s in o.values() {
                        self.index(s, base.clone(), false)?;
                    }
                }
                Value::Object(_) | Value::Bool(_) if ONE.contains(&k) => self.index(sub, base.clone(), false)?,
                _ => {}
            }
        }
        Ok(())
    }

    /// The node of a subschema, compiled later if it is new. `base` counts only for
    /// a value reached by a JSON pointer outside the places a schema is known to be.
    fn node_for(&mut self, v: &'a Value, base: &Rc<Url>) -> Result<usize, String> {
        if let Some(&n) = self.node_of.get(&(v as Ptr)) {
            return Ok(n);
        }
        // Draft 4 has booleans only for additionalProperties and additionalItems: taken anywhere.
        if !v.is_object() && !v.is_boolean() {
            return Err(format!("a schema must be an object, not {v}"));
        }
        let at = self.nodes.len();
        self.nodes.push(None);
        self.node_of.insert(v, at);
        let base = self.bases.get(&(v as Ptr)).unwrap_or(base).clone();
        self.todo.push((at, v, base));
        Ok(at)
    }

    /// Resolves a `$ref` (or `$dynamicRef`) against `base`: its target value, and
    /// whether the target is a `$dynamicAnchor` of that name.
    fn resolve(&self, r: &str, base: &Url) -> Result<(&'a Value, Rc<Url>, Option<String>), String> {
        let url = base.join(r).map_err(|e| format!("bad $ref {r:?} ({e})"))?;
        let key = uri_key(&url);
        let Some(&(doc, _)) = self.resources.get(&key) else {
            return Err(format!("$ref {r:?} leaves the schema, and mcpc fetches no schema"));
        };
        let fragment = url.fragment().unwrap_or("");
        let doc_base = self
            .bases
            .get(&(doc as Ptr))
            .cloned()
            .unwrap_or_else(|| Rc::new(url.clone()));
        if fragment.is_empty() {
            return Ok((doc, doc_base, None));
        }
        if !fragment.starts_with('/') {
            let name = percent_encoding::percent_decode_str(fragment)
                .decode_utf8_lossy()
                .into_owned();
            return match self.anchors.get(&(key, name.clone())) {
                Some(&(v, dynamic)) => {
                    let b = self.bases.get(&(v as Ptr)).cloned().unwrap_or(doc_base);
                    Ok((v, b, dynamic.then_some(name)))
                }
                None => Err(format!("$ref {r:?}: no such anchor")),
            };
        }
        let mut v = doc;
        let mut at_base = doc_base;
        for token in fragment[1..].split('/') {
            let token = percent_encoding::percent_decode_str(token).decode_utf8_lossy();
            let token = token.replace("~1", "/").replace("~0", "~");
            v = match v {
                Value::Object(m) => m.get(&token),
                Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            }
            .ok_or_else(|| format!("$ref {r:?}: nothing at that pointer"))?;
            if let Some(b) = self.bases.get(&(v as Ptr)) {
                at_base = b.clone();
            }
        }
        Ok((v, at_base, None))
    }

    fn compile_node(&mut self, v: &'a Value, base: &Rc<Url>) -> Result<Node, String> {
        let m = match v {
            Value::Bool(b) => return Ok(Node::Bool(*b)),
            Value::Object(m) => m,
            _ => unreachable!("node_for takes only objects and booleans"),
        };
        let key = uri_key(base);
        let (root, within) = self.resources.get(&key).copied().unwrap_or((v, 0));
        let mut k = Keys {
            within,
            begins: std::ptr::eq(root, v),
            ..Keys::default()
        };
        // The resource's root is compiled too: `$recursiveRef` may go there.
        self.res[within].root = self.node_for(root, base)?;
        if k.begins {
            let r = within;
            let dynamic: Vec<(String, &'a Value)> = self
                .anchors
                .iter()
                .filter(|((uri, _), (_, d))| *d && *uri == key)
                .map(|((_, name), (t, _))| (name.clone(), *t))
                .collect();
            for (name, t) in dynamic {
                let n = self.node_for(t, base)?;
                self.res[r].dynamic_anchors.insert(name, n);
            }
        }
        if let Some(r) = m.get("$ref") {
            let r = r.as_str().ok_or("$ref is not a string")?;
            let (t, tb, _) = self.resolve(r, base)?;
            k.r#ref = Some(self.node_for(t, &tb)?);
            if self.draft.ref_hides_siblings() {
                return Ok(Node::Keys(Box::new(k)));
            }
        }
        if self.draft == Draft::D2020 {
            if let Some(r) = m.get("$dynamicRef") {
                let r = r.as_str().ok_or("$dynamicRef is not a string")?;
                let (t, tb, dynamic) = self.resolve(r, base)?;
                let d = dynamic.map_or(Dynamic::None, Dynamic::Anchor);
                k.dyn_ref = Some((self.node_for(t, &tb)?, d));
            }
        }
        if self.draft == Draft::D2019 && m.contains_key("$recursiveRef") {
            let (t, tb, _) = self.resolve("#", base)?;
            k.dyn_ref = Some((self.node_for(t, &tb)?, Dynamic::Recursive));
        }
        self.applicators(m, base, &mut k)?;
        self.assertions(m, &mut k)?;
        Ok(Node::Keys(Box::new(k)))
    }

    fn one(&mut self, m: &'a Map<String, Value>, key: &str, base: &Rc<Url>) -> Result<Option<usize>, String> {
        m.get(key).map(|s| self.node_for(s, base)).transpose()
    }

    fn many(&mut self, m: &'a Map<String, Value>, key: &str, base: &Rc<Url>) -> Result<Vec<usize>, String> {
        match m.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) if !a.is_empty() || key == "prefixItems" || key == "items" => {
                a.iter().map(|s| self.node_for(s, base)).collect()
            }
            Some(_) => Err(format!("{key} is not a non-empty array")),
        }
    }

    fn by_name(
        &mut self,
        m: &'a Map<String, Value>,
        key: &str,
        base: &Rc<Url>,
    ) -> Result<Vec<(String, usize)>, String> {
        match m.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Object(o)) => o
                .iter()
                .map(|(n, s)| Ok((n.clone(), self.node_for(s, base)?)))
                .collect(),
            Some(_) => Err(format!("{key} is not an object")),
        }
    }

    fn applicators(&mut self, m: &'a Map<String, Value>, base: &Rc<Url>, k: &mut Keys) -> Result<(), String> {
        let d = self.draft;
        k.all_of = self.many(m, "allOf", base)?;
        k.any_of = self.many(m, "anyOf", base)?;
        k.one_of = self.many(m, "oneOf", base)?;
        k.not = self.one(m, "not", base)?;
        if d >= Draft::D7 {
            k.r#if = self.one(m, "if", base)?;
            if k.r#if.is_some() {
                k.then = self.one(m, "then", base)?;
                k.r#else = self.one(m, "else", base)?;
            }
        }
        if d >= Draft::D2020 {
            k.prefix_items = self.many(m, "prefixItems", base)?;
            k.items = self.one(m, "items", base)?;
        } else if let Some(Value::Array(_)) = m.get("items") {
            k.prefix_items = self.many(m, "items", base)?;
            k.items = self.one(m, "additionalItems", base)?;
        } else {
            k.items = self.one(m, "items", base)?;
        }
        if d >= Draft::D6 {
            k.contains = self.one(m, "contains", base)?;
            k.property_names = self.one(m, "propertyNames", base)?;
        }
        if d >= Draft::D2019 {
            k.min_contains = count(m, "minContains")?;
            k.max_contains = count(m, "maxContains")?;
            k.unevaluated_items = self.one(m, "unevaluatedItems", base)?;
            k.unevaluated_properties = self.one(m, "unevaluatedProperties", base)?;
            k.dependent_schemas = self.by_name(m, "dependentSchemas", base)?;
            if let Some(o) = m.get("dependentRequired") {
                let o = o.as_object().ok_or("dependentRequired is not an object")?;
                for (name, req) in o {
                    k.dependent_required
                        .push((name.clone(), strings(req, "dependentRequired")?));
                }
            }
        } else if let Some(o) = m.get("dependencies") {
            let o = o.as_object().ok_or("dependencies is not an object")?;
            for (name, dep) in o {
                match dep {
                    Value::Array(_) => k.dependent_required.push((name.clone(), strings(dep, "dependencies")?)),
                    _ => k.dependent_schemas.push((name.clone(), self.node_for(dep, base)?)),
                }
            }
        }
        k.properties = self.by_name(m, "properties", base)?;
        for (p, n) in self.by_name(m, "patternProperties", base)? {
            k.pattern_properties.push((pattern(&p)?, n));
        }
        k.additional_properties = self.one(m, "additionalProperties", base)?;
        Ok(())
    }

    fn assertions(&mut self, m: &'a Map<String, Value>, k: &mut Keys) -> Result<(), String> {
        let d = self.draft;
        if let Some(t) = m.get("type") {
            let names: Vec<&str> = match t {
                Value::String(s) => vec![s.as_str()],
                Value::Array(a) => a
                    .iter()
                    .map(|s| s.as_str().ok_or("type is not a string"))
                    .collect::<Result<_, _>>()?,
                _ => return Err("type is neither a string nor an array".into()),
            };
            let mut bits = 0;
            for n in names {
                bits |= check::Type::named(n).ok_or_else(|| format!("unknown type {n:?}"))? as u8;
            }
            k.types = Some(bits);
        }
        if let Some(e) = m.get("enum") {
            k.r#enum = Some(e.as_array().ok_or("enum is not an array")?.clone());
        }
        if d >= Draft::D6 {
            k.r#const = m.get("const").cloned();
        }
        k.multiple_of = number(m, "multipleOf")?;
        if k.multiple_of
            .as_ref()
            .is_some_and(|n| n.as_f64().map_or(true, |f| f <= 0.0))
        {
            return Err("multipleOf is not above 0".into());
        }
        k.maximum = number(m, "maximum")?;
        k.minimum = number(m, "minimum")?;
        if d == Draft::D4 {
            // Draft 4: `exclusiveMaximum: true` makes `maximum` exclusive.
            if m.get("exclusiveMaximum") == Some(&Value::Bool(true)) {
                k.exclusive_maximum = k.maximum.take();
            }
            if m.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
                k.exclusive_minimum = k.minimum.take();
            }
        } else {
            k.exclusive_maximum = number(m, "exclusiveMaximum")?;
            k.exclusive_minimum = number(m, "exclusiveMinimum")?;
        }
        k.max_length = count(m, "maxLength")?;
        k.min_length = count(m, "minLength")?;
        if let Some(p) = m.get("pattern") {
            let p = p.as_str().ok_or("pattern is not a string")?;
            k.pattern = Some((p.to_string(), pattern(p)?));
        }
        k.max_items = count(m, "maxItems")?;
        k.min_items = count(m, "minItems")?;
        k.unique_items = m.get("uniqueItems") == Some(&Value::Bool(true));
        k.max_properties = count(m, "maxProperties")?;
        k.min_properties = count(m, "minProperties")?;
        if let Some(r) = m.get("required") {
            if !(d == Draft::D4 && r.as_array().is_some_and(|a| a.is_empty())) {
                k.required = strings(r, "required")?;
            }
        }
        if d <= Draft::D7 {
            k.format = m.get("format").and_then(Value::as_str).map(str::to_string);
        }
        Ok(())
    }
}

fn number(m: &Map<String, Value>, key: &str) -> Result<Option<Number>, String> {
    match m.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.clone())),
        Some(_) => Err(format!("{key} is not a number")),
    }
}

/// A non-negative integer keyword (from draft 6, 2.0 counts as 2).
fn count(m: &Map<String, Value>, key: &str) -> Result<Option<u64>, String> {
    let Some(v) = m.get(key) else { return Ok(None) };
    let n = v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        (f >= 0.0 && f.fract() == 0.0 && f < u64::MAX as f64).then_some(f as u64)
    });
    n.map(Some)
        .ok_or_else(|| format!("{key} is not a non-negative integer"))
}

fn strings(v: &Value, key: &str) -> Result<Vec<String>, String> {
    let a = v.as_array().ok_or_else(|| format!("{key} is not an array"))?;
    a.iter()
        .map(|s| {
            s.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("{key} holds a non-string"))
        })
        .collect()
}

/// Compiles an ECMA-262 pattern: None when the engine lacks what it uses, which
/// leaves that keyword unchecked rather than the whole schema; an error when it is
/// not a pattern.
fn pattern(p: &str) -> Result<Pattern, String> {
    let r = format::regex(p).map_err(|e| format!("bad pattern {p:?}: {e}"))?;
    if r.is_none() {
        log::warn!("outputSchema: the pattern {p:?} is not checked: it needs what mcpc's regex engine lacks");
    }
    Ok(r)
}

#[cfg(test)]
mod suite;

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(s: &str) -> Schema {
        Schema::compile(&serde_json::from_str(s).unwrap()).unwrap()
    }

    fn fits(s: &Schema, v: &str) -> Result<(), String> {
        s.check(&serde_json::from_str(v).unwrap()).map_err(|f| f.message())
    }

    #[test]
    fn keywords_of_2020_12() {
        let s = schema(
            r#"{"type":"object","properties":{"n":{"type":"integer","minimum":1},"tags":{"type":"array",
            "items":{"enum":["a","b"]},"uniqueItems":true}},"required":["n"],"additionalProperties":false}"#,
        );
        assert!(fits(&s, r#"{"n":1,"tags":["a","b"]}"#).is_ok());
        assert_eq!(
            fits(&s, r#"{"n":0}"#).unwrap_err(),
            r#"at "/n": 0 is below the minimum 1"#
        );
        assert!(fits(&s, r#"{"n":1.0}"#).is_ok(), "1.0 is an integer from draft 6 on");
        assert!(fits(&s, r#"{"n":2,"tags":["a","a"]}"#).unwrap_err().contains("/tags"));
        assert!(fits(&s, r#"{"n":2,"x":1}"#).unwrap_err().starts_with(r#"at "/x""#));
        let u = schema(r#"{"allOf":[{"properties":{"a":true}}],"unevaluatedProperties":false}"#);
        assert!(fits(&u, r#"{"a":1}"#).is_ok());
        assert!(fits(&u, r#"{"a":1,"b":2}"#).unwrap_err().contains("/b"));
        let o = schema(r#"{"oneOf":[{"type":"integer"},{"minimum":2}]}"#);
        assert!(fits(&o, "1").is_ok());
        assert!(fits(&o, "3").is_err());
        let d = schema(r#"{"dependentRequired":{"a":["b"]},"propertyNames":{"maxLength":1}}"#);
        assert!(fits(&d, r#"{"a":1}"#).unwrap_err().contains(r#""b" is required"#));
        assert!(fits(&d, r#"{"ab":1}"#).is_err());
        assert!(fits(&schema(r#"{"multipleOf":0.01}"#), "19.99").is_ok());
    }

    #[test]
    fn refs_stay_inside_the_schema() {
        let s = schema(
            r##"{"$id":"https://example.com/root.json","$defs":{"node":{"$anchor":"node","type":"object",
            "properties":{"next":{"$ref":"#node"}}},"other":{"$id":"other.json","type":"string"}},
            "properties":{"list":{"$ref":"#/$defs/node"},"s":{"$ref":"other.json"}}}"##,
        );
        assert!(fits(&s, r#"{"list":{"next":{"next":{}}},"s":"x"}"#).is_ok());
        assert!(fits(&s, r#"{"list":{"next":{"next":1}}}"#)
            .unwrap_err()
            .contains("/list/next/next"));
        assert!(fits(&s, r#"{"s":1}"#).is_err());
        for remote in [
            r#"{"$ref":"https://example.com/s.json"}"#,
            r#"{"$ref":"file:///etc/passwd"}"#,
            r#"{"$id":"https://example.com/a/","$ref":"b.json"}"#,
            r#"{"$ref":"https://json-schema.org/draft/2020-12/schema"}"#,
        ] {
            let err = Schema::compile(&serde_json::from_str(remote).unwrap()).err().unwrap();
            assert!(err.contains("fetches no schema"), "{err}");
        }
        // A cycle that never moves into the value ends at the depth limit, within 1 MiB of
        // stack in a debug build (a fifth of that in a release build).
        let cycle = schema(r##"{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}"##);
        let run = std::thread::Builder::new()
            .stack_size(1024 * 1024)
            .spawn(move || fits(&cycle, "1"));
        assert!(run.unwrap().join().unwrap().unwrap_err().contains("nests too deep"));
        // anyOf within anyOf, each reached twice: 2^40 paths, cut off by the budget, also under `not`.
        let mut defs = serde_json::Map::new();
        for i in 0..40 {
            let next = if i == 39 {
                serde_json::json!({"type": "string"})
            } else {
                serde_json::json!({"$ref": format!("#/$defs/d{}", i + 1)})
            };
            defs.insert(format!("d{i}"), serde_json::json!({"anyOf": [next.clone(), next]}));
        }
        let bomb = serde_json::json!({"$defs": defs, "not": {"$ref": "#/$defs/d0"}});
        let bomb = Schema::compile(&bomb).unwrap();
        assert!(fits(&bomb, "1").unwrap_err().contains("too long"));
    }

    #[test]
    fn dynamic_refs_follow_the_dynamic_scope() {
        let s = schema(
            r##"{"$id":"https://example.com/strict","$dynamicAnchor":"node","$ref":"tree",
            "unevaluatedProperties":false,"$defs":{"tree":{"$id":"tree","$dynamicAnchor":"node",
            "type":"object","properties":{"data":true,"children":{"type":"array","items":{"$dynamicRef":"#node"}}}}}}"##,
        );
        assert!(fits(&s, r#"{"children":[{"data":1}]}"#).is_ok());
        assert!(fits(&s, r#"{"children":[{"daat":1}]}"#).is_err());
    }

    #[test]
    fn drafts_by_schema() {
        let d7 = r#""$schema":"http://json-schema.org/draft-07/schema#""#;
        // Up to draft 7 formats assert, items may be an array, and $ref hides its siblings.
        let s = schema(&format!(r#"{{{d7},"format":"date-time"}}"#));
        assert!(fits(&s, r#""2024-02-29T12:00:00Z""#).is_ok());
        assert!(fits(&s, r#""2023-02-29T12:00:00Z""#).is_err());
        assert!(fits(&schema(r#"{"format":"date-time"}"#), r#""not a date""#).is_ok());
        let t = schema(&format!(
            r#"{{{d7},"items":[{{"type":"string"}}],"additionalItems":false}}"#
        ));
        assert!(fits(&t, r#"["a"]"#).is_ok());
        assert!(fits(&t, r#"["a",1]"#).is_err());
        let r = schema(&format!(
            r##"{{{d7},"definitions":{{"s":{{"type":"string"}}}},"$ref":"#/definitions/s","type":"integer"}}"##
        ));
        assert!(fits(&r, r#""x""#).is_ok());
        let d4 = r#""$schema":"http://json-schema.org/draft-04/schema#""#;
        let e = schema(&format!(
            r#"{{{d4},"type":"integer","maximum":3,"exclusiveMaximum":true}}"#
        ));
        assert!(fits(&e, "3").is_err());
        assert!(fits(&e, "2.0").is_err(), "draft 4: 2.0 is not an integer");
        assert!(Schema::compile(&serde_json::json!({"$schema": "https://example.com/mine"})).is_err());
    }

    #[test]
    fn patterns_are_ecma_262() {
        let s = schema(r#"{"pattern":"^\\d{3}\\s\\cJ?$","patternProperties":{"^x-":{"type":"string"}}}"#);
        assert!(fits(&s, r#""123 ""#).is_ok());
        assert!(fits(&s, r#""123\u00a0""#).is_ok(), "ECMA-262's \\s has Unicode spaces");
        assert!(fits(&s, r#""12a ""#).is_err());
        assert!(fits(&s, r#"{"x-a":1}"#).unwrap_err().contains("/x-a"));
        // What the engine cannot run is left unchecked, and the rest still is.
        let l = schema(r#"{"type":"string","pattern":"^(?=a)\\p{L}+$"}"#);
        assert!(fits(&l, r#""123""#).is_ok());
        assert!(fits(&l, "1").is_err());
        assert!(Schema::compile(&serde_json::json!({"pattern": "(?i)a"})).is_err());
        assert!(Schema::compile(&serde_json::json!({"pattern": "[a-"})).is_err());
    }
}
