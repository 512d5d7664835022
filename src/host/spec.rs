//! Configuration files as hosts write them, read into one server description each:
//! `mcpServers` (Claude Desktop and Code, Cursor, Windsurf, Gemini CLI), `servers` with
//! `inputs` (VS Code, whose JSONC comments and trailing commas are allowed),
//! `context_servers` (Zed), and the root map of mcp.json (SEP-2633). An unknown field
//! is ignored; a malformed value is refused naming the file, the server and the field.

use std::time::Duration;

use serde_json::{Map, Value};

use super::vars::Scope;
use crate::config::HttpMode;
use crate::error::{Error, Result, Status};

/// How a server is reached.
#[derive(Clone, Debug, PartialEq)]
pub enum Reach {
    Stdio {
        command: String,
        args: Vec<String>,
        /// The server's own `env`, expanded.
        env: Vec<(String, String)>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: Vec<(String, String)>,
        mode: HttpMode,
    },
}

/// One server of a configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    pub reach: Reach,
    pub enabled: bool,
    /// Its failure to start fails the host's start.
    pub required: bool,
    pub startup_timeout: Option<Duration>,
    pub call_timeout: Option<Duration>,
    /// Only these tools (None: all), then without `exclude` (which wins).
    pub include: Option<Vec<String>>,
    pub exclude: Vec<String>,
    /// An HTTP server's `oauth` settings, over the host's own.
    pub oauth: Option<OAuthSpec>,
}

/// A server's `oauth` member (Gemini CLI's, Claude Code's and opencode's shapes):
/// `false` or `"enabled": false` turns authorization off for the server; otherwise
/// the client and scope it logs in with.
#[derive(Clone, Default, PartialEq)]
pub struct OAuthSpec {
    pub enabled: bool,
    pub client_id: Option<String>,
    /// A secret: never printed.
    pub client_secret: Option<String>,
    pub scope: Option<String>,
    pub redirect_uri: Option<String>,
    pub client_metadata_url: Option<String>,
}

impl std::fmt::Debug for OAuthSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSpec")
            .field("enabled", &self.enabled)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "(hidden)"))
            .field("scope", &self.scope)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_metadata_url", &self.client_metadata_url)
            .finish()
    }
}

/// The servers of configuration text `text` read from `file` (named in messages).
pub fn parse(file: &str, text: &str, scope: &Scope) -> Result<Vec<ServerSpec>> {
    let mut text = text.to_string();
    // JSONC (VS Code's files): comments and trailing commas blanked in place.
    if json_strip_comments::strip(&mut text).is_err() {
        return Err(bad(file, None, None, "is not JSON (an unclosed comment or string)"));
    }
    let root: Value = serde_json::from_str(&text).map_err(|e| bad(file, None, None, &format!("is not JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(bad(file, None, None, "is not a JSON object"));
    };
    let mut scope = scope.clone();
    let (map, key) = if let Some(v) = root.get("mcpServers") {
        (v, "mcpServers")
    } else if let Some(v) = root.get("servers") {
        read_inputs(file, root.get("inputs"), &mut scope)?;
        (v, "servers")
    } else if let Some(v) = root.get("context_servers") {
        (v, "context_servers")
    } else if root.values().all(|v| v.as_object().is_some_and(looks_like_server)) && !root.is_empty() {
        return root.iter().map(|(n, v)| server(file, n, v, &scope)).collect();
    } else {
        return Err(bad(
            file,
            None,
            None,
            "has no mcpServers, servers or context_servers map",
        ));
    };
    let Value::Object(map) = map else {
        return Err(bad(file, None, Some(key), "must be an object of servers by name"));
    };
    map.iter().map(|(n, v)| server(file, n, v, &scope)).collect()
}

fn looks_like_server(o: &Map<String, Value>) -> bool {
    ["command", "url", "type"].iter().any(|k| o.contains_key(*k))
}

/// VS Code's `inputs`: each id's description becomes the resolver's prompt.
fn read_inputs(file: &str, inputs: Option<&Value>, scope: &mut Scope) -> Result<()> {
    let Some(inputs) = inputs else { return Ok(()) };
    let Value::Array(list) = inputs else {
        return Err(bad(file, None, Some("inputs"), "must be an array"));
    };
    for i in list {
        let id = i.get("id").and_then(Value::as_str);
        let Some(id) = id else {
            return Err(bad(file, None, Some("inputs"), "has an entry without a string \"id\""));
        };
        let desc = i.get("description").and_then(Value::as_str).unwrap_or(id);
        scope.inputs.insert(id.to_string(), desc.to_string());
    }
    Ok(())
}

/// The fields one server's description is read from.
struct Fields<'a> {
    file: &'a str,
    name: &'a str,
    o: &'a Map<String, Value>,
    scope: &'a Scope,
    /// The path of `o` in the server's description (`command.`), for messages.
    prefix: &'a str,
}

impl<'a> Fields<'a> {
    fn err(&self, field: &str, what: &str) -> Error {
        bad(
            self.file,
            Some(self.name),
            Some(&format!("{}{field}", self.prefix)),
            what,
        )
    }

    /// The fields of the object `o` at `prefix`.
    fn inner(&self, o: &'a Map<String, Value>, prefix: &'a str) -> Fields<'a> {
        Fields {
            file: self.file,
            name: self.name,
            o,
            scope: self.scope,
            prefix,
        }
    }

    /// The first of `keys` present, as an expanded string.
    fn string(&self, keys: &[&str]) -> Result<Option<String>> {
        for k in keys {
            match self.o.get(*k) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => return self.expand(k, s).map(Some),
                Some(_) => return Err(self.err(k, "must be a string")),
            }
        }
        Ok(None)
    }

    fn expand(&self, field: &str, s: &str) -> Result<String> {
        self.scope.expand(s).map_err(|u| self.err(field, &u.0))
    }

    fn strings(&self, keys: &[&str]) -> Result<Option<Vec<String>>> {
        for k in keys {
            match self.o.get(*k) {
                None | Some(Value::Null) => continue,
                Some(Value::Array(a)) => {
                    let mut out = Vec::with_capacity(a.len());
                    for v in a {
                        let Value::String(s) = v else {
                            return Err(self.err(k, "must be an array of strings"));
                        };
                        out.push(self.expand(k, s)?);
                    }
                    return Ok(Some(out));
                }
                Some(_) => return Err(self.err(k, "must be an array of strings")),
            }
        }
        Ok(None)
    }

    fn pairs(&self, key: &str, from: Option<&Value>) -> Result<Vec<(String, String)>> {
        match from {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), self.expand(&format!("{key}.{k}"), s)?)),
                    _ => Err(self.err(&format!("{key}.{k}"), "must be a string")),
                })
                .collect(),
            Some(_) => Err(self.err(key, "must be an object of strings")),
        }
    }

    fn flag(&self, key: &str) -> Result<Option<bool>> {
        match self.o.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.err(key, "must be true or false")),
        }
    }

    /// A duration from the first key present: milliseconds, or seconds for `*_sec`.
    fn duration(&self, keys: &[&str]) -> Result<Option<Duration>> {
        for k in keys {
            match self.o.get(*k) {
                None | Some(Value::Null) => continue,
                Some(v) => {
                    let n = v.as_f64().filter(|n| n.is_finite() && *n > 0.0 && *n < 1e10);
                    let Some(n) = n else {
                        return Err(self.err(k, "must be a positive number"));
                    };
                    let ms = if k.ends_with("_sec") { n * 1000.0 } else { n };
                    return Ok(Some(Duration::from_millis(ms.ceil() as u64)));
                }
            }
        }
        Ok(None)
    }
}

fn server(file: &str, name: &str, v: &Value, scope: &Scope) -> Result<ServerSpec> {
    let Value::Object(o) = v else {
        return Err(bad(file, Some(name), None, "must be an object"));
    };
    let f = Fields {
        file,
        name,
        o,
        scope,
        prefix: "",
    };
    let enabled = f.flag("enabled")?.unwrap_or(true) && !f.flag("disabled")?.unwrap_or(false);
    // A disabled server's variables need no value: it is not started.
    let f = if enabled {
        f
    } else {
        return Ok(ServerSpec {
            name: name.to_string(),
            reach: Reach::Stdio {
                command: String::new(),
                args: Vec::new(),
                env: Vec::new(),
                cwd: None,
            },
            enabled,
            required: false,
            startup_timeout: None,
            call_timeout: None,
            include: None,
            exclude: Vec::new(),
            oauth: None,
        });
    };
    Ok(ServerSpec {
        name: name.to_string(),
        reach: reach(&f)?,
        enabled,
        required: f.flag("required")?.unwrap_or(false),
        startup_timeout: f.duration(&["startupTimeout", "startup_timeout_ms", "startup_timeout_sec"])?,
        call_timeout: f.duration(&["timeout", "toolTimeout", "tool_timeout_ms", "tool_timeout_sec"])?,
        include: f.strings(&["includeTools", "enabled_tools"])?,
        exclude: f.strings(&["excludeTools", "disabled_tools"])?.unwrap_or_default(),
        oauth: oauth(&f)?,
    })
}

/// The `oauth` member: `false`, or an object of `enabled`, `clientId`,
/// `clientSecret`, `scope` or `scopes`, `redirectUri` or `callbackPort` (a loopback
/// redirect `http://127.0.0.1:PORT/callback`) and `clientMetadataUrl`. Other
/// members (a host's own endpoints, say: mcpc finds them from the server) are ignored.
fn oauth(f: &Fields<'_>) -> Result<Option<OAuthSpec>> {
    let o = match f.o.get("oauth") {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Bool(false)) => return Ok(Some(OAuthSpec::default())),
        Some(Value::Bool(true)) => {
            return Ok(Some(OAuthSpec {
                enabled: true,
                ..OAuthSpec::default()
            }))
        }
        Some(Value::Object(o)) => f.inner(o, "oauth."),
        Some(_) => return Err(f.err("oauth", "must be an object or false")),
    };
    if !o.flag("enabled")?.unwrap_or(true) {
        return Ok(Some(OAuthSpec::default()));
    }
    let scope = match o.strings(&["scopes"])? {
        Some(list) => Some(list.join(" ")),
        None => o.string(&["scope"])?,
    };
    let url = |key: &str| -> Result<Option<String>> {
        let v = o.string(&[key])?;
        if let Some(u) = &v {
            url::Url::parse(u).map_err(|e| o.err(key, &format!("is not a URL: {e}")))?;
        }
        Ok(v)
    };
    let mut redirect_uri = url("redirectUri")?;
    if redirect_uri.is_none() {
        redirect_uri = match o.o.get("callbackPort") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let port = v
                    .as_u64()
                    .filter(|p| (1..=65535).contains(p))
                    .ok_or_else(|| o.err("callbackPort", "must be a port number (1 to 65535)"))?;
                Some(format!("http://127.0.0.1:{port}/callback"))
            }
        };
    }
    Ok(Some(OAuthSpec {
        enabled: true,
        client_id: o.string(&["clientId", "client_id"])?.filter(|s| !s.is_empty()),
        client_secret: o.string(&["clientSecret", "client_secret"])?.filter(|s| !s.is_empty()),
        scope,
        redirect_uri,
        client_metadata_url: url("clientMetadataUrl")?,
    }))
}

fn reach(f: &Fields<'_>) -> Result<Reach> {
    let ty = f.string(&["type", "transport"])?;
    let mode = match ty.as_deref() {
        None => None,
        Some("stdio") => Some(None),
        Some("http" | "streamable-http" | "streamable_http" | "streamableHttp") => Some(Some(HttpMode::Streamable)),
        Some("sse") => Some(Some(HttpMode::Sse)),
        Some(_) => {
            // The text as written: expanded, it may hold what a resolver gave.
            let written = ["type", "transport"]
                .iter()
                .find_map(|k| f.o.get(*k).and_then(Value::as_str));
            let what = crate::error::quote(written.unwrap_or(""));
            return Err(f.err("type", &format!("{what} is not stdio, http, streamable-http or sse")));
        }
    };
    // Zed's older form: "command": {"path", "args", "env"}.
    if let Some(Value::Object(cmd)) = f.o.get("command") {
        let inner = f.inner(cmd, "command.");
        let command = inner
            .string(&["path"])?
            .ok_or_else(|| f.err("command.path", "is missing"))?;
        return Ok(Reach::Stdio {
            command,
            args: inner.strings(&["args"])?.unwrap_or_default(),
            env: f.pairs("command.env", cmd.get("env"))?,
            cwd: f.string(&["cwd"])?,
        });
    }
    let command = f.string(&["command"])?;
    // Gemini CLI's httpUrl is Streamable HTTP; other hosts' url may be either.
    let http_url = f.string(&["httpUrl"])?;
    let url = f.string(&["url", "serverUrl"])?;
    match (mode, command, http_url.or(url)) {
        (Some(None) | None, Some(command), _) => {
            if command.is_empty() {
                return Err(f.err("command", "is empty"));
            }
            Ok(Reach::Stdio {
                command,
                args: f.strings(&["args"])?.unwrap_or_default(),
                env: f.pairs("env", f.o.get("env"))?,
                cwd: f.string(&["cwd"])?,
            })
        }
        (Some(None), None, _) => Err(f.err("command", "is missing (type stdio)")),
        (Some(Some(_)) | None, _, Some(url)) => {
            let mode = match mode {
                Some(Some(m)) => m,
                _ if f.o.contains_key("httpUrl") => HttpMode::Streamable,
                _ => HttpMode::Auto,
            };
            Ok(Reach::Http {
                url,
                headers: f.pairs("headers", f.o.get("headers"))?,
                mode,
            })
        }
        (Some(Some(_)), _, None) => Err(f.err("url", "is missing")),
        (None, None, None) => Err(f.err("command", "neither command nor url is given")),
    }
}

fn bad(file: &str, server: Option<&str>, field: Option<&str>, what: &str) -> Error {
    let mut m = file.to_string();
    if let Some(s) = server {
        m.push_str(&format!(": server {s:?}"));
    }
    if let Some(f) = field {
        m.push_str(&format!(": field {f:?}"));
    }
    m.push(' ');
    m.push_str(what);
    Error::new(Status::MCPC_ERR_CONFIG, m)
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
