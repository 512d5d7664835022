//! Checking an instance against a compiled [`Schema`]: the first failure, with the
//! JSON pointer of where in the instance it is. Failures inside `anyOf`, `oneOf`,
//! `not`, `if` and `contains` only steer, so they are made without a message.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{Number, Value};

use super::{Draft, Dynamic, Keys, Node, Schema};

/// How deep schemas may nest while checking one value: a `$ref` cycle that never
/// moves into the value ends here, well within a thread's stack. A value nests at
/// most 128 deep (serde_json's limit), so each level may take a `$ref` too.
const MAX_DEPTH: u32 = 256;

/// How many schemas one check may evaluate: `anyOf`s nested in each other (or reached again
/// by `$ref`) can otherwise take time exponential in the schema's size.
const MAX_STEPS: u32 = 1 << 20;

#[derive(Clone, Copy)]
pub(super) enum Type {
    Null = 1,
    Boolean = 2,
    Object = 4,
    Array = 8,
    Number = 16,
    String = 32,
    Integer = 64,
}

impl Type {
    pub(super) fn named(name: &str) -> Option<Type> {
        Some(match name {
            "null" => Type::Null,
            "boolean" => Type::Boolean,
            "object" => Type::Object,
            "array" => Type::Array,
            "number" => Type::Number,
            "string" => Type::String,
            "integer" => Type::Integer,
            _ => return None,
        })
    }
}

/// What one part of a path into the instance is.
#[derive(Clone, Copy)]
enum Seg<'v> {
    Key(&'v str),
    Index(usize),
}

/// A failure: its message and where, unless it only steers.
pub(crate) struct Fail(Option<Box<(String, String)>>);

impl Fail {
    /// `at "/a/0": why`.
    pub(crate) fn message(self) -> String {
        match self.0 {
            Some(b) => format!("at {:?}: {}", b.0, b.1),
            None => "the value does not fit".into(),
        }
    }
}

/// What a successful check evaluated of an object or array, for `unevaluated*`.
#[derive(Default)]
struct Seen<'v> {
    props: Vec<&'v str>,
    all_props: bool,
    /// Items `0..items` were evaluated, or all of them.
    items: usize,
    all_items: bool,
    some_items: Vec<usize>,
}

impl<'v> Seen<'v> {
    fn add(&mut self, o: Seen<'v>) {
        self.props.extend(o.props);
        self.all_props |= o.all_props;
        self.items = self.items.max(o.items);
        self.all_items |= o.all_items;
        self.some_items.extend(o.some_items);
    }
}

type Res<'v> = Result<Seen<'v>, Fail>;

impl Schema {
    /// Checks a value; the first failure, if it does not fit.
    pub(crate) fn check(&self, v: &Value) -> Result<(), Fail> {
        let mut c = Ctx {
            s: self,
            scope: Scope::new(),
            path: Path::new(),
            quiet: 0,
            depth: 0,
            steps: 0,
        };
        let r = c.eval(0, v, false).map(|_| ());
        // Past the budget any answer is a guess (a `not` may have passed on it): a failure.
        if c.steps > MAX_STEPS {
            c.quiet = 0;
            return Err(c.fail(format_args!("the schema takes too long to check")));
        }
        r
    }
}

/// Inline room for the usual depths: a check then allocates nothing until it fails.
type Scope = smallvec::SmallVec<[usize; 8]>;
type Path<'v> = smallvec::SmallVec<[Seg<'v>; 16]>;

struct Ctx<'s, 'v> {
    s: &'s Schema,
    /// The resources entered, outermost first (`$dynamicRef`).
    scope: Scope,
    path: Path<'v>,
    /// Above 0 inside a keyword whose subschemas' failures only steer.
    quiet: u32,
    depth: u32,
    steps: u32,
}

/// A value in a message: its JSON, cut at 60 bytes.
struct Shown<'a>(&'a Value);

impl std::fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = self.0.to_string();
        if s.len() > 60 {
            let mut cut = 57;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s.push_str("...");
        }
        f.write_str(&s)
    }
}

impl<'s, 'v> Ctx<'s, 'v> {
    /// A failure here; its message is written only when it may be reported.
    fn fail(&self, why: std::fmt::Arguments<'_>) -> Fail {
        if self.quiet > 0 {
            return Fail(None);
        }
        let mut at = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(k) => {
                    at.push('/');
                    at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                }
                Seg::Index(i) => {
                    let _ = write!(at, "/{i}");
                }
            }
        }
        Fail(Some(Box::new((at, why.to_string()))))
    }

    /// Whether `v` fits node `n`, its failures silent.
    fn fits(&mut self, n: usize, v: &'v Value, collect: bool) -> Option<Seen<'v>> {
        self.quiet += 1;
        let r = self.eval(n, v, collect);
        self.quiet -= 1;
        r.ok()
    }

    /// Checks a child of the instance (a property or an item) against node `n`.
    fn child(&mut self, n: usize, v: &'v Value, seg: Seg<'v>) -> Result<(), Fail> {
        self.path.push(seg);
        let r = self.eval(n, v, false);
        self.path.pop();
        r.map(|_| ())
    }

    fn eval(&mut self, n: usize, v: &'v Value, collect: bool) -> Res<'v> {
        let k = match &self.s.nodes[n] {
            Node::Bool(true) => return Ok(Seen::default()),
            Node::Bool(false) => return Err(self.fail(format_args!("no value fits the schema false"))),
            Node::Keys(k) => k,
        };
        if self.depth >= MAX_DEPTH {
            return Err(self.fail(format_args!("the schema nests too deep")));
        }
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(Fail(None));
        }
        self.depth += 1;
        // A resource is in the dynamic scope from its first node evaluated on.
        let enters = self.scope.last() != Some(&k.within);
        if enters {
            self.scope.push(k.within);
        }
        let r = self.keys(k, v, collect);
        if enters {
            self.scope.pop();
        }
        self.depth -= 1;
        r
    }

    fn keys(&mut self, k: &'s Keys, v: &'v Value, collect: bool) -> Res<'v> {
        self.assert(k, v)?;
        let collect = collect || k.unevaluated_items.is_some() || k.unevaluated_properties.is_some();
        let mut seen = Seen::default();
        if let Some(r) = k.r#ref {
            seen.add(self.eval(r, v, collect)?);
        }
        if let Some((target, dynamic)) = &k.dyn_ref {
            let n = self.dynamic_target(*target, dynamic);
            seen.add(self.eval(n, v, collect)?);
        }
        for &s in &k.all_of {
            seen.add(self.eval(s, v, collect)?);
        }
        if !k.any_of.is_empty() {
            let mut any = false;
            for &s in &k.any_of {
                if let Some(o) = self.fits(s, v, collect) {
                    any = true;
                    seen.add(o);
                    if !collect {
                        break;
                    }
                }
            }
            if !any {
                return Err(self.fail(format_args!("{} fits none of anyOf", Shown(v))));
            }
        }
        if !k.one_of.is_empty() {
            let mut fit = 0;
            for &s in &k.one_of {
                if let Some(o) = self.fits(s, v, collect) {
                    fit += 1;
                    seen.add(o);
                }
            }
            if fit != 1 {
                return Err(self.fail(format_args!("{} fits {fit} of oneOf, not exactly one", Shown(v))));
            }
        }
        if let Some(s) = k.not {
            if self.fits(s, v, false).is_some() {
                return Err(self.fail(format_args!("{} fits the schema of not", Shown(v))));
            }
        }
        if let Some(i) = k.r#if {
            match self.fits(i, v, collect) {
                Some(o) => {
                    seen.add(o);
                    if let Some(t) = k.then {
                        seen.add(self.eval(t, v, collect)?);
                    }
                }
                None => {
                    if let Some(e) = k.r#else {
                        seen.add(self.eval(e, v, collect)?);
                    }
                }
            }
        }
        match v {
            Value::Object(m) => {
                for (name, s) in &k.dependent_schemas {
                    if m.contains_key(name) {
                        seen.add(self.eval(*s, v, collect)?);
                    }
                }
                self.object(k, m, collect, &mut seen)?;
            }
            Value::Array(a) => self.array(k, a, collect, &mut seen)?,
            _ => {}
        }
        Ok(if collect { seen } else { Seen::default() })
    }

    fn dynamic_target(&self, target: usize, dynamic: &Dynamic) -> usize {
        let s = self.s;
        match dynamic {
            Dynamic::None => target,
            Dynamic::Anchor(name) => self
                .scope
                .iter()
                .find_map(|&r| s.resources[r].dynamic_anchors.get(name).copied())
                .unwrap_or(target),
            Dynamic::Recursive => {
                let starts = match &s.nodes[target] {
                    Node::Keys(k) => k.begins && s.resources[k.within].recursive_anchor,
                    Node::Bool(_) => false,
                };
                if !starts {
                    return target;
                }
                self.scope
                    .iter()
                    .find(|&&r| s.resources[r].recursive_anchor)
                    .map_or(target, |&r| s.resources[r].root)
            }
        }
    }

    fn object(
        &mut self,
        k: &'s Keys,
        m: &'v serde_json::Map<String, Value>,
        collect: bool,
        seen: &mut Seen<'v>,
    ) -> Result<(), Fail> {
        for (name, s) in &k.properties {
            if let Some((key, pv)) = m.get_key_value(name) {
                self.child(*s, pv, Seg::Key(key))?;
                if collect {
                    seen.props.push(key);
                }
            }
        }
        let by_pattern = !k.pattern_properties.is_empty();
        if by_pattern || k.additional_properties.is_some() || k.property_names.is_some() {
            for (key, pv) in m {
                let mut matched = k.properties.iter().any(|(n, _)| n == key);
                if by_pattern {
                    for (p, s) in &k.pattern_properties {
                        // A pattern mcpc cannot run matches nothing, and checks nothing.
                        if p.as_ref().is_some_and(|p| p.is_match(key)) {
                            matched = true;
                            self.child(*s, pv, Seg::Key(key))?;
                            if collect {
                                seen.props.push(key);
                            }
                        }
                    }
                }
                if let (false, Some(s)) = (matched, k.additional_properties) {
                    self.child(s, pv, Seg::Key(key))?;
                }
                if let Some(s) = k.property_names {
                    // The name is a value of its own, outside the instance.
                    let name = Value::String(key.clone());
                    let mut names = Ctx {
                        s: self.s,
                        scope: self.scope.clone(),
                        path: Path::new(),
                        quiet: 1,
                        depth: self.depth,
                        steps: self.steps,
                    };
                    let fits = names.eval(s, &name, false).is_ok();
                    self.steps = names.steps;
                    if !fits {
                        return Err(self.fail(format_args!("the property name {key:?} does not fit propertyNames")));
                    }
                }
            }
            if k.additional_properties.is_some() {
                seen.all_props = true;
            }
        }
        if let Some(s) = k.unevaluated_properties {
            if !seen.all_props {
                for (key, pv) in m {
                    if !seen.props.contains(&key.as_str()) {
                        self.child(s, pv, Seg::Key(key))?;
                    }
                }
            }
            seen.all_props = true;
        }
        Ok(())
    }

    fn array(&mut self, k: &'s Keys, a: &'v [Value], collect: bool, seen: &mut Seen<'v>) -> Result<(), Fail> {
        for (i, (s, item)) in k.prefix_items.iter().zip(a).enumerate() {
            self.child(*s, item, Seg::Index(i))?;
        }
        seen.items = seen.items.max(k.prefix_items.len().min(a.len()));
        if let Some(s) = k.items {
            for (i, item) in a.iter().enumerate().skip(k.prefix_items.len()) {
                self.child(s, item, Seg::Index(i))?;
            }
            seen.all_items = true;
        }
        if let Some(s) = k.contains {
            let mut found = 0u64;
            for (i, item) in a.iter().enumerate() {
                if self.fits(s, item, false).is_some() {
                    found += 1;
                    if collect && self.s.draft >= Draft::D2020 {
                        seen.some_items.push(i);
                    }
                }
            }
            let min = k.min_contains.unwrap_or(1);
            if found < min {
                return Err(self.fail(format_args!("{found} items fit contains, fewer than {min}")));
            }
            if let Some(max) = k.max_contains.filter(|&max| found > max) {
                return Err(self.fail(format_args!("{found} items fit contains, more than {max}")));
            }
        }
        if let Some(s) = k.unevaluated_items {
            if !seen.all_items {
                for (i, item) in a.iter().enumerate().skip(seen.items) {
                    if !seen.some_items.contains(&i) {
                        self.child(s, item, Seg::Index(i))?;
                    }
                }
            }
            seen.all_items = true;
        }
        Ok(())
    }

    /// The keywords that look at the instance alone.
    fn assert(&self, k: &Keys, v: &Value) -> Result<(), Fail> {
        if let Some(t) = k.types {
            if !self.has_type(t, v) {
                return Err(self.fail(format_args!("{} is not of type {}", Shown(v), TypeNames(t))));
            }
        }
        if let Some(e) = &k.r#enum {
            if !e.iter().any(|x| equal(x, v)) {
                return Err(self.fail(format_args!("{} is not one of enum", Shown(v))));
            }
        }
        if let Some(c) = &k.r#const {
            if !equal(c, v) {
                return Err(self.fail(format_args!("{} is not the const {}", Shown(v), Shown(c))));
            }
        }
        match v {
            Value::Number(n) => self.number(k, n),
            Value::String(s) => self.string(k, s),
            Value::Array(a) => {
                let len = a.len() as u64;
                if k.max_items.is_some_and(|m| len > m) || k.min_items.is_some_and(|m| len < m) {
                    return Err(self.fail(format_args!("an array of {len} items is of the wrong size")));
                }
                if k.unique_items && !unique(a) {
                    return Err(self.fail(format_args!("the items are not unique")));
                }
                Ok(())
            }
            Value::Object(m) => {
                let len = m.len() as u64;
                if k.max_properties.is_some_and(|x| len > x) || k.min_properties.is_some_and(|x| len < x) {
                    return Err(self.fail(format_args!("an object of {len} properties is of the wrong size")));
                }
                if let Some(r) = k.required.iter().find(|r| !m.contains_key(r.as_str())) {
                    return Err(self.fail(format_args!("{r:?} is a required property")));
                }
                for (name, req) in &k.dependent_required {
                    if m.contains_key(name) {
                        if let Some(r) = req.iter().find(|r| !m.contains_key(r.as_str())) {
                            return Err(self.fail(format_args!("{r:?} is required when {name:?} is present")));
                        }
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn has_type(&self, t: u8, v: &Value) -> bool {
        let bit = match v {
            Value::Null => Type::Null,
            Value::Bool(_) => Type::Boolean,
            Value::Object(_) => Type::Object,
            Value::Array(_) => Type::Array,
            Value::String(_) => Type::String,
            Value::Number(n) => {
                let integral = n.is_i64()
                    || n.is_u64()
                    || (self.s.draft >= Draft::D6 && n.as_f64().is_some_and(|f| f.fract() == 0.0));
                if integral && t & Type::Integer as u8 != 0 {
                    return true;
                }
                Type::Number
            }
        };
        t & bit as u8 != 0
    }

    fn number(&self, k: &Keys, n: &Number) -> Result<(), Fail> {
        let bounds = [
            (&k.maximum, "above the maximum", Ordering::Greater, false),
            (
                &k.exclusive_maximum,
                "not below the exclusiveMaximum",
                Ordering::Greater,
                true,
            ),
            (&k.minimum, "below the minimum", Ordering::Less, false),
            (
                &k.exclusive_minimum,
                "not above the exclusiveMinimum",
                Ordering::Less,
                true,
            ),
        ];
        for (limit, what, beyond, exclusive) in bounds {
            if let Some(l) = limit {
                let o = cmp(n, l);
                if o == beyond || (exclusive && o == Ordering::Equal) {
                    return Err(self.fail(format_args!("{n} is {what} {l}")));
                }
            }
        }
        if let Some(m) = &k.multiple_of {
            if !multiple(n, m) {
                return Err(self.fail(format_args!("{n} is not a multiple of {m}")));
            }
        }
        Ok(())
    }

    fn string(&self, k: &Keys, s: &str) -> Result<(), Fail> {
        if k.max_length.is_some() || k.min_length.is_some() {
            let len = s.chars().count() as u64;
            if k.max_length.is_some_and(|m| len > m) || k.min_length.is_some_and(|m| len < m) {
                return Err(self.fail(format_args!("a string of {len} characters is of the wrong length")));
            }
        }
        if let Some((p, Some(re))) = &k.pattern {
            if !re.is_match(s) {
                return Err(self.fail(format_args!("{s:?} does not match {p:?}")));
            }
        }
        if let Some(f) = &k.format {
            if super::format::valid(f, s) == Some(false) {
                return Err(self.fail(format_args!("{s:?} is not a {f}")));
            }
        }
        Ok(())
    }
}

/// The types of a `type` keyword's bits, in a message.
struct TypeNames(u8);

impl std::fmt::Display for TypeNames {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let all = ["null", "boolean", "object", "array", "number", "string", "integer"];
        let names: Vec<&str> = (0..7).filter(|i| self.0 & (1 << i) != 0).map(|i| all[i]).collect();
        f.write_str(&names.join(" or "))
    }
}

/// Numbers compared by value, whatever their representation.
fn cmp(a: &Number, b: &Number) -> Ordering {
    match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
        (Some(x), Some(y), _, _) => x.cmp(&y),
        (_, _, Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None, _, Some(_)) => Ordering::Less,
        (None, Some(_), Some(_), _) => Ordering::Greater,
        _ => {
            let (x, y) = (a.as_f64().unwrap_or(f64::NAN), b.as_f64().unwrap_or(f64::NAN));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

fn multiple(n: &Number, m: &Number) -> bool {
    if let (Some(x), Some(y)) = (n.as_i64(), m.as_i64()) {
        return x % y == 0;
    }
    if let (Some(x), Some(y)) = (n.as_u64(), m.as_u64()) {
        return x % y == 0;
    }
    let (x, y) = (n.as_f64().unwrap_or(f64::NAN), m.as_f64().unwrap_or(f64::NAN));
    let q = x / y;
    if !q.is_finite() {
        return x % y == 0.0;
    }
    // Decimal multiples (0.0075 of 0.0001) come out a rounding error off in binary.
    (q - q.round()).abs() <= q.abs() * f64::EPSILON * 4.0
}

/// JSON equality: numbers by value, objects whatever their order.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => cmp(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, a)| y.get(k).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}

fn unique(a: &[Value]) -> bool {
    if a.len() <= 16 {
        return a
            .iter()
            .enumerate()
            .all(|(i, x)| a[i + 1..].iter().all(|y| !equal(x, y)));
    }
    // Bucketed by a hash that equal values share, so a long array is not quadratic.
    let mut buckets: HashMap<u64, Vec<&Value>> = HashMap::new();
    for x in a {
        let bucket = buckets.entry(hash(x)).or_default();
        if bucket.iter().any(|y| equal(x, y)) {
            return false;
        }
        bucket.push(x);
    }
    true
}

fn hash(v: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fn feed(v: &Value, h: &mut impl Hasher) {
        match v {
            Value::Null => 0u8.hash(h),
            Value::Bool(b) => b.hash(h),
            // Equal numbers (1 and 1.0) share the hash of their f64 value.
            Value::Number(n) => (n.as_f64().unwrap_or(0.0) + 0.0).to_bits().hash(h),
            Value::String(s) => s.hash(h),
            Value::Array(a) => {
                a.len().hash(h);
                a.iter().for_each(|x| feed(x, h));
            }
            // Object keys in any order: only their count is hashed.
            Value::Object(m) => m.len().hash(h),
        }
    }
    feed(v, &mut h);
    h.finish()
}
