//! Qualified names: `<server>__<tool>` or the host's own format, only
//! `[A-Za-z0-9_-]`, at most 64 characters (the limit models' APIs put on a tool's
//! name), a stable hash suffix where the name had to be cut or would collide. The
//! server's name is the configuration's, never what the server says it is.

use std::sync::Arc;

use ring::digest;

use crate::error::{Error, Result, Status};

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
#[cfg(test)]
pub fn qualify(server: &str, tool: &str) -> String {
    NameFormat::default().apply(server, tool)
}

/// How a host spells qualified names: literal text around `{server}` (at most once)
/// and `{name}` (exactly once), for example `mcp__{server}__{name}`.
#[derive(Clone, Debug, PartialEq)]
pub struct NameFormat {
    pieces: Vec<Piece>,
}

#[derive(Clone, Debug, PartialEq)]
enum Piece {
    Text(String),
    Server,
    Name,
}

/// The most literal text a format may hold, leaving room for the names themselves.
const MAX_FORMAT_TEXT: usize = 32;

impl Default for NameFormat {
    fn default() -> Self {
        NameFormat {
            pieces: vec![Piece::Server, Piece::Text(SEPARATOR.into()), Piece::Name],
        }
    }
}

impl NameFormat {
    /// Reads a format; its literal text must itself be a valid name's characters,
    /// so every qualified name stays within `[A-Za-z0-9_-]`.
    pub fn parse(format: &str) -> Result<NameFormat> {
        let bad = |what: &str| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("name format: {what}"));
        let mut pieces = Vec::new();
        let mut rest = format;
        let mut text = 0;
        while !rest.is_empty() {
            let (piece, len) = if rest.starts_with("{server}") {
                (Piece::Server, "{server}".len())
            } else if rest.starts_with("{name}") {
                (Piece::Name, "{name}".len())
            } else {
                let len = rest.find('{').unwrap_or(rest.len());
                if len == 0 {
                    return Err(bad("only {server} and {name} may stand in braces"));
                }
                let lit = &rest[..len];
                if sanitize(lit) != lit {
                    return Err(bad("text outside the braces must be of [A-Za-z0-9_-]"));
                }
                text += len;
                (Piece::Text(lit.to_string()), len)
            };
            pieces.push(piece);
            rest = &rest[len..];
        }
        let count = |p: &Piece| pieces.iter().filter(|q| *q == p).count();
        if count(&Piece::Name) != 1 || count(&Piece::Server) > 1 {
            return Err(bad("needs {name} once, and {server} at most once"));
        }
        if text > MAX_FORMAT_TEXT {
            return Err(bad(&format!("more than {MAX_FORMAT_TEXT} characters of text")));
        }
        Ok(NameFormat { pieces })
    }

    /// The qualified name of item `name` (a tool or a prompt) of `server`.
    pub fn apply(&self, server: &str, name: &str) -> String {
        let full: String = self
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => t.clone(),
                Piece::Server => sanitize(server),
                Piece::Name => sanitize(name),
            })
            .collect();
        if full.len() <= MAX_NAME {
            return full;
        }
        with_suffix(&full, server, name)
    }
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
    fn formats_of_the_host() {
        let f = NameFormat::parse("mcp__{server}__{name}").unwrap();
        assert_eq!(f.apply("git hub", "create"), "mcp__git_hub__create");
        assert_eq!(NameFormat::parse("{name}").unwrap().apply("s", "t"), "t");
        assert_eq!(NameFormat::parse("{server}__{name}").unwrap(), NameFormat::default());
        let long = f.apply("srv", &"t".repeat(100));
        assert_eq!(long.len(), MAX_NAME);
        for bad in [
            "",
            "{server}",
            "{name}{name}",
            "{server}{server}{name}",
            "{tool}",
            "a.{name}",
            "{name",
            &format!("{}{{name}}", "x".repeat(33)),
        ] {
            let e = NameFormat::parse(bad).unwrap_err();
            assert_eq!(e.status, Status::MCPC_ERR_INVALID_ARG, "{bad}");
        }
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
