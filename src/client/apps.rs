//! MCP Apps (`io.modelcontextprotocol/ui`), the host's non-visual half: a tool's view
//! (its `ui://` URI and who may see the tool), and a view fetched with the policy a
//! host renders it under (the Content-Security-Policy and the frame's `allow`
//! attribute, built by the specification's rules from the view's `_meta.ui`).
//! Rendering, the sandbox and the `ui/*` methods stay with the host.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Client, Control, Listing};
use crate::error::{quote, Error, Result, Status};
use crate::result::Body;

/// The one MIME type a view may have.
pub const VIEW_MIME: &str = "text/html;profile=mcp-app";
/// The largest view handed out.
pub const MAX_VIEW_BYTES: usize = 8 << 20;
/// A tool the model may see and call.
pub const MODEL: u32 = 1;
/// A tool the view may call (through the host, on the same server).
pub const APP: u32 = 2;

/// A tool's view and visibility, from its `_meta`.
#[derive(Debug, PartialEq, Eq)]
pub struct ToolUi {
    /// `_meta.ui.resourceUri`, else the older flat `_meta["ui/resourceUri"]`; only a
    /// `ui://` URI.
    pub uri: Option<String>,
    /// [`MODEL`] and [`APP`] bits; both when the tool says nothing.
    pub visibility: u32,
}

/// Reads a tool's view and visibility from its JSON (as listed).
pub fn tool_ui(tool_json: &str) -> ToolUi {
    #[derive(Deserialize)]
    struct Tool {
        #[serde(rename = "_meta")]
        meta: Option<Map<String, Value>>,
    }
    let meta = serde_json::from_str::<Tool>(tool_json).ok().and_then(|t| t.meta);
    let ui = meta.as_ref().and_then(|m| m.get("ui")).and_then(Value::as_object);
    let nested = ui.and_then(|u| u.get("resourceUri")).and_then(Value::as_str);
    let flat = meta
        .as_ref()
        .and_then(|m| m.get("ui/resourceUri"))
        .and_then(Value::as_str);
    let uri = nested.or(flat).filter(|u| u.starts_with("ui://")).map(str::to_string);
    let visibility = match ui.and_then(|u| u.get("visibility")) {
        Some(Value::Array(who)) => who.iter().fold(0, |bits, w| match w.as_str() {
            Some("model") => bits | MODEL,
            Some("app") => bits | APP,
            _ => bits,
        }),
        _ => MODEL | APP,
    };
    ToolUi { uri, visibility }
}

/// A view, fetched and checked, with its policy.
#[derive(Debug)]
pub struct View {
    /// The HTML document (the text, or the decoded blob), UTF-8.
    pub html: String,
    /// The Content-Security-Policy to render it under.
    pub csp: String,
    /// The frame's `allow` attribute; empty when the view asks for no permission.
    pub allow: String,
    /// `domain`: the dedicated origin the view asks for, if any.
    pub domain: Option<String>,
    /// `prefersBorder`, if given.
    pub prefers_border: Option<bool>,
    /// The view's `_meta.ui` the policy was built from, as JSON (`null` for none).
    pub meta: String,
}

fn refused(why: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_PROTOCOL, why)
}

/// Whether a MIME type is the view's (`text/html;profile=mcp-app`: type and
/// parameter names are case-insensitive, spaces around `;` ignored).
fn is_view_mime(mime: &str) -> bool {
    let mut parts = mime.split(';').map(str::trim);
    if !parts.next().is_some_and(|t| t.eq_ignore_ascii_case("text/html")) {
        return false;
    }
    let params: Vec<&str> = parts.filter(|p| !p.is_empty()).collect();
    params.len() == 1
        && params[0]
            .split_once('=')
            .is_some_and(|(k, v)| k.trim().eq_ignore_ascii_case("profile") && v.trim().trim_matches('"') == "mcp-app")
}

/// Checks one CSP source the server declared: an origin (`http`, `https`, `ws` or
/// `wss`, a host that may start with one `*.` label, an optional port, nothing after).
/// Anything else could widen the policy past what was declared, or break out of it
/// (`;`, quotes, spaces, keywords).
fn check_origin(source: &str) -> std::result::Result<(), &'static str> {
    let (scheme, rest) = source.split_once("://").ok_or("not an origin (scheme://host)")?;
    if !matches!(scheme, "http" | "https" | "ws" | "wss") {
        return Err("its scheme is not http, https, ws or wss");
    }
    let host_port = rest.strip_suffix('/').unwrap_or(rest);
    // An IPv6 address in brackets, or a name (its first label may be `*`), then a port.
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        let (addr, after) = v6.split_once(']').ok_or("its host is not a host name or address")?;
        if addr.is_empty() || !addr.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return Err("its host is not a host name or address");
        }
        (
            None,
            after
                .strip_prefix(':')
                .map(Some)
                .unwrap_or(if after.is_empty() { None } else { Some("") }),
        )
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (Some(h), Some(p)),
            None => (Some(host_port), None),
        }
    };
    if let Some(p) = port {
        if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err("its port is not a number");
        }
    }
    if let Some(host) = host {
        let name = host.strip_prefix("*.").unwrap_or(host);
        let ok = !name.is_empty()
            && name.len() <= 253
            && name
                .split('.')
                .all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
        if !ok {
            return Err("its host is not a host name or address");
        }
    }
    Ok(())
}

/// The declared sources of `csp[field]`, each checked.
fn sources(csp: Option<&Map<String, Value>>, field: &str) -> Result<Vec<String>> {
    let Some(list) = csp.and_then(|c| c.get(field)) else {
        return Ok(Vec::new());
    };
    let Value::Array(items) = list else {
        return Err(refused(format!("the view's csp.{field} is not an array")));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let s = item
                .as_str()
                .ok_or_else(|| refused(format!("the view's csp.{field}[{i}] is not a string")))?;
            check_origin(s)
                .map(|()| s.to_string())
                .map_err(|why| refused(format!("the view's csp.{field}[{i}] {} is refused: {why}", quote(s))))
        })
        .collect()
}

/// The Content-Security-Policy of a view's `_meta.ui`: the specification's
/// restrictive default when it declares no `csp`; else its template, each declared
/// origin checked ([`check_origin`]) and placed where the specification says.
pub fn csp_of(ui: Option<&Map<String, Value>>) -> Result<String> {
    const DEFAULT: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
        style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; \
        connect-src 'none'; frame-src 'none'; object-src 'none'; base-uri 'self'";
    let csp = match ui.and_then(|u| u.get("csp")) {
        None | Some(Value::Null) => return Ok(DEFAULT.to_string()),
        Some(Value::Object(c)) => c,
        Some(_) => return Err(refused("the view's csp is not an object")),
    };
    let resource = sources(Some(csp), "resourceDomains")?;
    let connect = sources(Some(csp), "connectDomains")?;
    let frame = sources(Some(csp), "frameDomains")?;
    let base = sources(Some(csp), "baseUriDomains")?;
    let with = |fixed: &str, extra: &[String], none: &str| {
        let mut d = fixed.to_string();
        if extra.is_empty() {
            if !none.is_empty() {
                d.push(' ');
                d.push_str(none);
            }
        } else {
            for s in extra {
                d.push(' ');
                d.push_str(s);
            }
        }
        d
    };
    let directives = [
        "default-src 'none'".to_string(),
        with("script-src 'self' 'unsafe-inline'", &resource, ""),
        with("style-src 'self' 'unsafe-inline'", &resource, ""),
        with("img-src 'self' data:", &resource, ""),
        with("font-src 'self'", &resource, ""),
        with("media-src 'self' data:", &resource, ""),
        // No external connection unless declared.
        if connect.is_empty() {
            "connect-src 'none'".to_string()
        } else {
            with("connect-src 'self'", &connect, "")
        },
        with("frame-src", &frame, "'none'"),
        "object-src 'none'".to_string(),
        with("base-uri", &base, "'self'"),
    ];
    Ok(directives.join("; "))
}

/// The frame's `allow` attribute of a view's `permissions`: each feature asked for,
/// in a fixed order, joined with `; `.
pub fn allow_of(ui: Option<&Map<String, Value>>) -> String {
    let Some(Value::Object(p)) = ui.and_then(|u| u.get("permissions")) else {
        return String::new();
    };
    [
        ("camera", "camera"),
        ("microphone", "microphone"),
        ("geolocation", "geolocation"),
        ("clipboardWrite", "clipboard-write"),
    ]
    .iter()
    .filter(|(key, _)| p.get(*key).is_some_and(|v| !v.is_null() && *v != Value::Bool(false)))
    .map(|(_, feature)| *feature)
    .collect::<Vec<_>>()
    .join("; ")
}

/// `_meta.ui` of a JSON object with a `_meta`, if it is an object.
fn ui_of(meta: &Value) -> Option<Map<String, Value>> {
    meta.get("ui").and_then(Value::as_object).cloned()
}

impl Client {
    /// Fetches the view `uri` (`resources/read` of a `ui://` URI): one content of the
    /// view's MIME type, at most [`MAX_VIEW_BYTES`] of UTF-8 HTML, and its policy from
    /// its `_meta.ui`: the read content's, else the resource listing's entry for it.
    pub async fn read_view(&self, uri: &str, ctl: &Control) -> Result<View> {
        if !uri.starts_with("ui://") {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!("{} is not a ui:// URI", quote(uri)),
            ));
        }
        let contents = self.read_resource(uri, ctl).await?;
        let context = format!("the view {}", quote(uri));
        let [item] = <[_; 1]>::try_from(contents.items)
            .map_err(|items| refused(format!("{context} has {} contents, not one", items.len())))?;
        let mime = item.mime_type.as_deref().unwrap_or("");
        if !is_view_mime(mime) {
            return Err(refused(format!(
                "{context} has the MIME type {}, not {VIEW_MIME}",
                quote(mime)
            )));
        }
        let bytes = match item.body {
            Body::Text(t) => t.into_bytes(),
            Body::Blob(b) => b,
        };
        if bytes.len() > MAX_VIEW_BYTES {
            return Err(Error::new(
                Status::MCPC_ERR_MESSAGE_TOO_LARGE,
                format!("{context} is {} bytes, over {MAX_VIEW_BYTES}", bytes.len()),
            ));
        }
        let html = String::from_utf8(bytes).map_err(|_| refused(format!("{context} is not UTF-8")))?;
        let from_content = item
            .meta
            .as_deref()
            .and_then(|m| serde_json::from_str::<Value>(m).ok())
            .and_then(|m| ui_of(&m));
        let ui = match from_content {
            Some(ui) => Some(ui),
            None => self.listed_ui(uri, ctl).await,
        };
        let policy = |e: Error| e.context(&context);
        Ok(View {
            html,
            csp: csp_of(ui.as_ref()).map_err(policy)?,
            allow: allow_of(ui.as_ref()),
            domain: match ui.as_ref().and_then(|u| u.get("domain")) {
                None | Some(Value::Null) => None,
                Some(Value::String(d)) if check_origin(&format!("https://{d}")).is_ok() => Some(d.clone()),
                Some(_) => return Err(refused(format!("{context}: its domain is not a host name"))),
            },
            prefers_border: ui
                .as_ref()
                .and_then(|u| u.get("prefersBorder"))
                .and_then(Value::as_bool),
            meta: ui.map_or_else(|| "null".to_string(), |u| Value::Object(u).to_string()),
        })
    }

    /// The `_meta.ui` of the resource listing's entry for `uri`, if the server lists
    /// one (a server need not list its views; a failed listing gives none).
    async fn listed_ui(&self, uri: &str, ctl: &Control) -> Option<Map<String, Value>> {
        let listed = self.list_json(Listing::Resources, ctl).await.ok()?;
        let entries: Vec<Value> = serde_json::from_str(&listed).ok()?;
        let entry = entries
            .iter()
            .find(|e| e.get("uri").and_then(Value::as_str) == Some(uri))?;
        entry.get("_meta").and_then(ui_of)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ui(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_tools_view_and_visibility() {
        let t = tool_ui(r#"{"name":"t","_meta":{"ui":{"resourceUri":"ui://a/v.html","visibility":["app"]}}}"#);
        assert_eq!(
            t,
            ToolUi {
                uri: Some("ui://a/v.html".into()),
                visibility: APP
            }
        );
        let flat = tool_ui(r#"{"name":"t","_meta":{"ui/resourceUri":"ui://b/v.html"}}"#);
        assert_eq!(
            flat,
            ToolUi {
                uri: Some("ui://b/v.html".into()),
                visibility: MODEL | APP
            }
        );
        // The nested key wins over the flat one; a URI of another scheme is none.
        let both = tool_ui(r#"{"_meta":{"ui":{"resourceUri":"ui://n"},"ui/resourceUri":"ui://f"}}"#);
        assert_eq!(both.uri.as_deref(), Some("ui://n"));
        assert_eq!(tool_ui(r#"{"_meta":{"ui":{"resourceUri":"https://x"}}}"#).uri, None);
        assert_eq!(
            tool_ui(r#"{"name":"plain"}"#),
            ToolUi {
                uri: None,
                visibility: MODEL | APP
            }
        );
        assert_eq!(tool_ui(r#"{"_meta":{"ui":{"visibility":[]}}}"#).visibility, 0);
        assert_eq!(
            tool_ui(r#"{"_meta":{"ui":{"visibility":["model","x"]}}}"#).visibility,
            MODEL
        );
    }

    #[test]
    fn the_default_policy_and_the_template() {
        assert_eq!(
            csp_of(None).unwrap(),
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; \
             object-src 'none'; base-uri 'self'"
        );
        let m = ui(
            json!({"csp": {"resourceDomains": ["https://cdn.example.com", "https://*.cdn.net"],
                                  "connectDomains": ["wss://live.example.com:8443"],
                                  "frameDomains": ["https://www.youtube.com"]}}),
        );
        assert_eq!(
            csp_of(Some(&m)).unwrap(),
            "default-src 'none'; script-src 'self' 'unsafe-inline' https://cdn.example.com https://*.cdn.net; \
             style-src 'self' 'unsafe-inline' https://cdn.example.com https://*.cdn.net; \
             img-src 'self' data: https://cdn.example.com https://*.cdn.net; \
             font-src 'self' https://cdn.example.com https://*.cdn.net; \
             media-src 'self' data: https://cdn.example.com https://*.cdn.net; \
             connect-src 'self' wss://live.example.com:8443; frame-src https://www.youtube.com; \
             object-src 'none'; base-uri 'self'"
        );
        let empty = ui(json!({"csp": {}}));
        assert!(csp_of(Some(&empty))
            .unwrap()
            .contains("connect-src 'none'; frame-src 'none'"));
    }

    #[test]
    fn sources_that_could_break_out_are_refused() {
        for bad in [
            "https://a.com; script-src *",
            "https://a.com 'unsafe-eval'",
            "'unsafe-eval'",
            "https://a.com\nscript-src *",
            "*",
            "https:",
            "data:",
            "javascript://x",
            "https://a.com/path",
            "https://*",
            "https://a.com:99999x",
            "https://a\"b.com",
        ] {
            let m = ui(json!({"csp": {"resourceDomains": [bad]}}));
            let e = csp_of(Some(&m)).unwrap_err();
            assert_eq!(e.status, Status::MCPC_ERR_PROTOCOL, "{bad:?}");
        }
        let m = ui(json!({"csp": {"connectDomains": "https://a.com"}}));
        assert!(csp_of(Some(&m)).is_err());
        let m = ui(json!({"csp": {"connectDomains": [5]}}));
        assert!(csp_of(Some(&m)).is_err());
        assert!(csp_of(Some(&ui(json!({"csp": "default-src *"})))).is_err());
    }

    #[test]
    fn permissions_become_the_allow_attribute() {
        assert_eq!(allow_of(None), "");
        let m = ui(json!({"permissions": {"clipboardWrite": {}, "microphone": {}, "teleport": {}}}));
        assert_eq!(allow_of(Some(&m)), "microphone; clipboard-write");
        let all = ui(json!({"permissions": {"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}}}));
        assert_eq!(allow_of(Some(&all)), "camera; microphone; geolocation; clipboard-write");
    }

    #[test]
    fn the_views_mime_type() {
        assert!(is_view_mime("text/html;profile=mcp-app"));
        assert!(is_view_mime("Text/HTML; profile=mcp-app"));
        assert!(!is_view_mime("text/html"));
        assert!(!is_view_mime("text/plain;profile=mcp-app"));
        assert!(!is_view_mime("text/html;profile=other"));
        assert!(!is_view_mime("text/html;profile=mcp-app;charset=x"));
    }
}
