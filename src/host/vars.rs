//! Variables in a configuration's strings, as hosts write them: `${VAR}`,
//! `${VAR:-default}`, `${env:VAR}`, the host's own (`${workspaceFolder}`,
//! `${userHome}`), mcp.json's chains (`${env:A | value:b}`), and `${input:id}` or any
//! other scheme (a secret manager's reference) asked of the host's resolver.

use std::collections::HashMap;
use std::sync::Arc;

/// Asks the host for a value the file does not hold: `(kind, reference, prompt)`
/// where kind is "input" (VS Code's `${input:id}`, the prompt from `inputs`) or
/// "secret" (any other scheme, the reference whole). None: the host has none.
pub type ResolveFn = Arc<dyn Fn(&str, &str, Option<&str>) -> Option<String> + Send + Sync>;

/// What a variable may come from.
#[derive(Clone, Default)]
pub struct Scope {
    /// The host's variables, such as `workspaceFolder`; `userHome` defaults to $HOME.
    pub vars: HashMap<String, String>,
    pub resolver: Option<ResolveFn>,
    /// VS Code's `inputs`: id to its description (the prompt).
    pub inputs: HashMap<String, String>,
    /// What the resolver gave, by (kind, reference): asked once per file, however
    /// often the file names it.
    pub(super) asked: std::cell::RefCell<HashMap<(&'static str, String), Option<String>>>,
}

/// Why a string could not be expanded: the variable, never its value.
#[derive(Debug, PartialEq)]
pub struct Unresolved(pub String);

impl Scope {
    /// `s` with every `${...}` replaced; `$$` is not special (hosts do not agree on
    /// an escape, and a literal `${` is rare in a server's command line).
    pub fn expand(&self, s: &str) -> Result<String, Unresolved> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(at) = rest.find("${") {
            out.push_str(&rest[..at]);
            let body_start = at + 2;
            let Some(len) = rest[body_start..].find('}') else {
                return Err(Unresolved(format!("an unclosed \"${{\" in {:?}", short(rest))));
            };
            let body = &rest[body_start..body_start + len];
            out.push_str(&self.one(body)?);
            rest = &rest[body_start + len + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// One `${body}`: the first alternative of a `|` chain that gives a non-empty value.
    fn one(&self, body: &str) -> Result<String, Unresolved> {
        if body.contains('|') {
            for alt in body.split('|').map(str::trim) {
                if let Some(v) = self.lookup(alt).filter(|v| !v.is_empty()) {
                    return Ok(v);
                }
            }
            return Err(Unresolved(format!("${{{}}} has no value", body.trim())));
        }
        if let Some((name, default)) = body.split_once(":-") {
            return Ok(self.env_or_var(name).unwrap_or_else(|| default.to_string()));
        }
        self.lookup(body.trim())
            .ok_or_else(|| Unresolved(format!("${{{}}} is not set", body.trim())))
    }

    fn lookup(&self, term: &str) -> Option<String> {
        match term.split_once(':') {
            Some(("env", name)) => std::env::var(name).ok(),
            Some(("value", v)) => Some(v.to_string()),
            Some(("input", id)) => self.ask("input", id, self.inputs.get(id).map(String::as_str)),
            Some(_) => self.ask("secret", term, None),
            None => self.env_or_var(term),
        }
    }

    fn ask(&self, kind: &'static str, reference: &str, prompt: Option<&str>) -> Option<String> {
        let key = (kind, reference.to_string());
        if let Some(v) = self.asked.borrow().get(&key) {
            return v.clone();
        }
        let v = self.resolver.as_ref()?(kind, reference, prompt);
        self.asked.borrow_mut().insert(key, v.clone());
        v
    }

    /// A host variable first (so a host can pin `workspaceFolder`), then the environment.
    fn env_or_var(&self, name: &str) -> Option<String> {
        if let Some(v) = self.vars.get(name) {
            return Some(v.clone());
        }
        if name == "userHome" {
            return std::env::var("HOME").ok();
        }
        std::env::var(name).ok()
    }
}

/// The start of a string for a message (it holds no value yet: it is the file's text).
fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Whether an environment variable's name looks like it holds a secret, so that a
/// stdio server does not inherit it unless its own `env` names it.
pub fn looks_secret(name: &str) -> bool {
    let up = name.to_ascii_uppercase();
    ["TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL", "AUTH"]
        .iter()
        .any(|w| up.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> Scope {
        let mut s = Scope::default();
        s.vars.insert("workspaceFolder".into(), "/ws".into());
        s.inputs.insert("pat".into(), "GitHub token".into());
        s.resolver = Some(Arc::new(|kind, r, prompt| match (kind, r) {
            ("input", "pat") => Some(format!("tok({})", prompt.unwrap_or(""))),
            ("secret", "op://vault/item") => Some("s3cr3t".into()),
            _ => None,
        }));
        s
    }

    #[test]
    fn forms() {
        std::env::set_var("MCPC_VARS_TEST", "v");
        let s = scope();
        assert_eq!(s.expand("a ${MCPC_VARS_TEST} b").unwrap(), "a v b");
        assert_eq!(s.expand("${env:MCPC_VARS_TEST}").unwrap(), "v");
        assert_eq!(s.expand("${MCPC_VARS_UNSET:-d}").unwrap(), "d");
        assert_eq!(s.expand("${MCPC_VARS_TEST:-d}").unwrap(), "v");
        assert_eq!(s.expand("${workspaceFolder}/x").unwrap(), "/ws/x");
        assert_eq!(s.expand("${env:MCPC_VARS_UNSET | value:lit}").unwrap(), "lit");
        assert_eq!(s.expand("Bearer ${input:pat}").unwrap(), "Bearer tok(GitHub token)");
        assert_eq!(s.expand("${op://vault/item}").unwrap(), "s3cr3t");
        assert_eq!(s.expand("no vars").unwrap(), "no vars");
    }

    #[test]
    fn the_resolver_is_asked_once_per_reference() {
        let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let n = asked.clone();
        let s = Scope {
            resolver: Some(Arc::new(move |_, _, _| {
                n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Some("v".into())
            })),
            ..Scope::default()
        };
        assert_eq!(s.expand("${input:a} ${input:a} ${input:b}").unwrap(), "v v v");
        assert_eq!(s.expand("${input:a}").unwrap(), "v");
        assert_eq!(asked.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn unresolved_names_the_variable_only() {
        let s = scope();
        assert_eq!(
            s.expand("${MCPC_VARS_UNSET}").unwrap_err().0,
            "${MCPC_VARS_UNSET} is not set"
        );
        assert!(s.expand("${input:other}").is_err());
        assert!(s.expand("${op://vault/none}").is_err());
        assert!(s.expand("x ${open").unwrap_err().0.contains("unclosed"));
    }

    #[test]
    fn secret_names() {
        for n in [
            "GITHUB_TOKEN",
            "api_key",
            "AWS_SECRET_ACCESS_KEY",
            "DB_PASSWORD",
            "GOOGLE_CREDENTIALS",
            "AUTH_HEADER",
        ] {
            assert!(looks_secret(n), "{n}");
        }
        for n in ["PATH", "HOME", "LANG", "NODE_OPTIONS"] {
            assert!(!looks_secret(n), "{n}");
        }
    }
}
