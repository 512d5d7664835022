//! The shape of `src/` (ARCHITECTURE.md): no file over 700 lines outside its tests,
//! and no import cycle among the crate's modules, so that lower layers never call up.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 700;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The module path of a file: `src/transport/http/mod.rs` is `transport::http`.
fn module_of(path: &Path) -> Vec<String> {
    let rel = path.strip_prefix(src()).expect("under src/");
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The text before the file's `#[cfg(test)] mod tests`, if it has one.
fn outside_tests(text: &str) -> &str {
    match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    }
}

#[test]
fn no_file_is_over_the_limit_outside_its_tests() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut over = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let lines = outside_tests(&text).lines().count();
        if lines > MAX_LINES {
            over.push(format!("{} ({lines} lines)", f.display()));
        }
    }
    assert!(over.is_empty(), "over {MAX_LINES} lines outside tests: {over:?}");
}

/// Every `crate::a::b` path in `text`, as its first `depth` segments.
fn crate_paths(text: &str, depth: usize) -> BTreeSet<Vec<String>> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let path: Vec<String> = rest
            .split("::")
            .take(depth)
            .map(|seg| {
                seg.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .take_while(|seg| !seg.is_empty())
            .collect();
        if !path.is_empty() {
            found.insert(path);
        }
    }
    found
}

/// The edges between modules at `depth` segments below `within` (the code of a
/// module's own tests left out): module -> the sibling modules its code names.
fn graph(within: &[&str], depth: usize) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &files {
        let module = module_of(f);
        if module.len() <= within.len() || module[..within.len()] != *within {
            continue;
        }
        let from = module[within.len()].clone();
        let text = std::fs::read_to_string(f).expect("read");
        let code: String = outside_tests(&text)
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let mut names = crate_paths(&code, within.len() + depth);
        // `super::x` in a direct child of `within` names its sibling x.
        if module.len() == within.len() + 1 {
            for (i, _) in code.match_indices("super::") {
                let seg: String = code[i + "super::".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let mut path: Vec<String> = within.iter().map(|s| s.to_string()).collect();
                path.push(seg);
                names.insert(path);
            }
        }
        for path in names {
            if path.len() > within.len() && path[..within.len()] == *within {
                let to = path[within.len()].clone();
                if to != from && !to.is_empty() {
                    edges.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        edges.entry(from).or_default();
    }
    edges
}

fn find_cycle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut cycle = stack[i..].to_vec();
            cycle.push(n.to_string());
            return Some(cycle);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in edges.keys() {
        if let Some(c) = visit(n, edges, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_crates_modules_import_no_cycle() {
    let edges = graph(&[], 1);
    assert!(
        edges.contains_key("drive") && edges.contains_key("transport"),
        "{edges:?}"
    );
    if let Some(cycle) = find_cycle(&edges) {
        panic!("import cycle among the crate's modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_subsystems_import_no_cycle() {
    for within in [
        &["transport"][..],
        &["client"],
        &["drive"],
        &["auth"],
        &["ffi"],
        &["host"],
    ] {
        let edges = graph(within, 1);
        if let Some(cycle) = find_cycle(&edges) {
            panic!("import cycle within {}: {}", within.join("::"), cycle.join(" -> "));
        }
    }
}

#[test]
fn lower_layers_never_call_up() {
    let edges = graph(&[], 1);
    for (low, high) in [
        ("drive", "transport"),
        ("drive", "client"),
        ("drive", "ffi"),
        ("transport", "client"),
        ("transport", "auth"),
        ("transport", "protocol"),
        ("transport", "result"),
        ("auth", "client"),
        ("auth", "ffi"),
        ("transport", "ffi"),
        ("jsonrpc", "result"),
        ("jsonrpc", "client"),
        ("client", "ffi"),
        ("client", "host"),
        ("config", "host"),
        ("supervise", "host"),
        ("host", "ffi"),
    ] {
        assert!(
            !edges.get(low).is_some_and(|e| e.contains(high)),
            "{low} imports {high}: {:?}",
            edges.get(low)
        );
    }
    let transport = graph(&["transport"], 1);
    assert!(
        !transport.get("h1").is_some_and(|e| e.contains("http")),
        "transport::h1 imports transport::http"
    );
}

#[test]
fn the_checks_see_a_cycle() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("a".into());
    assert_eq!(find_cycle(&edges), Some(vec!["a".into(), "b".into(), "a".into()]));
    assert_eq!(
        crate_paths("use crate::transport::h1::Reply; crate::drive::here", 2),
        [
            vec!["drive".to_string(), "here".to_string()],
            vec!["transport".into(), "h1".into()]
        ]
        .into_iter()
        .collect()
    );
    assert_eq!(outside_tests("a\n#[cfg(test)]\nmod tests {}\n"), "a\n");
}
