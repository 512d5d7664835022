//! Qualified names: `<server>__<tool>`, only `[A-Za-z0-9_-]`, at most 64 characters
//! (the limit models' APIs put on a tool's name), a stable hash suffix where the name
//! had to be cut or would collide. The server's name is the configuration's, never
//! what the server says it is.

use std::sync::Arc;

use ring::digest;

/// One tool of the catalog (shared by the catalogs made while its server's tools
/// stay the same).
pub struct Entry {
    pub qualified: Arc<str>,
    pub server: Arc<str>,
    /// The tool's name as its server gave it.
    pub tool: Arc<str>,
    /// The tool as its server listed it.
    pub json: Arc<str>,
}

/// The longest qualified name.
pub const MAX_NAME: usize = 64;
const SEPARATOR: &str = "__";
/// The suffix: `_` and eight hex digits of SHA-256 over the server and tool names.
const HASH_LEN: usize = 9;

/// `name` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The default qualified name of `tool` of `server`.
pub fn qualify(server: &str, tool: &str) -> String {
    let full = format!("{}{SEPARATOR}{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_NAME {
        return full;
    }
    with_suffix(&full, server, tool)
}

/// `base` cut to leave room for the stable suffix of (server, tool).
pub fn with_suffix(base: &str, server: &str, tool: &str) -> String {
    let keep = base.len().min(MAX_NAME - HASH_LEN);
    // `base` is ASCII (sanitized), so any byte index is a boundary.
    format!("{}_{}", &base[..keep], hash8(server, tool))
}

fn hash8(server: &str, tool: &str) -> String {
    let mut ctx = digest::Context::new(&digest::SHA256);
    ctx.update(server.as_bytes());
    ctx.update(&[0]);
    ctx.update(tool.as_bytes());
    let d = ctx.finish();
    d.as_ref()[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a tool passes a server's include and exclude lists (exclude wins).
pub fn admitted(tool: &str, include: Option<&[String]>, exclude: &[String]) -> bool {
    include.map_or(true, |i| i.iter().any(|t| t == tool)) && !exclude.iter().any(|t| t == tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_sanitized() {
        assert_eq!(qualify("github", "create_issue"), "github__create_issue");
        assert_eq!(qualify("my server", "a.b/c"), "my_server__a_b_c");
        assert_eq!(qualify("é", "ü"), "____");
    }

    #[test]
    fn long_names_are_cut_with_a_stable_suffix() {
        let tool = "t".repeat(100);
        let q = qualify("srv", &tool);
        assert_eq!(q.len(), MAX_NAME);
        assert_eq!(q, qualify("srv", &tool), "stable");
        assert_ne!(
            q,
            qualify("srv", &format!("{tool}x")),
            "differs where the cut part differs"
        );
        assert!(q.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
    }

    #[test]
    fn lists() {
        let inc = vec!["a".to_string(), "b".to_string()];
        let exc = vec!["b".to_string()];
        assert!(admitted("a", Some(&inc), &exc));
        assert!(!admitted("b", Some(&inc), &exc));
        assert!(!admitted("c", Some(&inc), &[]));
        assert!(admitted("c", None, &[]));
    }
}
