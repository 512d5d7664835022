//! Everything that depends on the protocol revision lives here: which versions
//! we speak, the handshake's shape, and what a request carries per revision.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};

/// Versions negotiated with `initialize`, newest first.
pub const INITIALIZE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The version the client asks for in `initialize` unless the caller pins another.
pub const LATEST_INITIALIZE_VERSION: &str = INITIALIZE_VERSIONS[0];

/// The stateless revision: no `initialize`, per-request `_meta`, `server/discover`.
pub const MODERN_VERSION: &str = "2026-07-28";

/// Every version this client speaks, newest first.
pub const ALL_VERSIONS: &[&str] = &[MODERN_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// A version negotiated with `initialize`.
pub fn is_supported(version: &str) -> bool {
    INITIALIZE_VERSIONS.contains(&version)
}

/// A version of the stateless revision.
pub fn is_modern(version: &str) -> bool {
    version == MODERN_VERSION
}

/// How a client chooses its protocol version.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Negotiation {
    /// Probe with `server/discover`: 2026-07-28 when the server speaks it,
    /// else `initialize`. The default.
    #[default]
    Auto,
    /// `initialize` only, never a probe.
    Legacy,
    /// This version, and no other: a stateless one skips `initialize`, an older
    /// one is asked for in `initialize`.
    Pinned(String),
}

/// How the version in use was chosen, as the C API reports it.
pub mod negotiated {
    /// Auto: the server's `server/discover` listed 2026-07-28.
    pub const DISCOVER: &str = "discover";
    /// Auto: the probe showed an older server, so `initialize` chose the version.
    pub const FALLBACK: &str = "fallback";
    /// Legacy mode: `initialize` chose the version.
    pub const INITIALIZE: &str = "initialize";
    /// The caller pinned the version.
    pub const PINNED: &str = "pinned";
}

pub use crate::jsonrpc::rpc_error;

/// `_meta` of a request: the progress token, and under 2026-07-28 the per-request
/// version, capabilities and client info.
#[derive(Serialize, Default)]
pub struct RequestMeta<'a> {
    #[serde(rename = "progressToken", skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<i64>,
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<&'a str>,
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<&'a RawValue>,
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<&'a ClientInfo>,
    /// Without it a 2026-07-28 server sends no log.
    #[serde(rename = "io.modelcontextprotocol/logLevel", skip_serializing_if = "Option::is_none")]
    pub log_level: Option<&'a str>,
}

impl RequestMeta<'_> {
    pub fn is_empty(&self) -> bool {
        self.progress_token.is_none() && self.protocol_version.is_none()
    }
}

/// The params of a request that carries nothing but `_meta` (`server/discover`).
#[derive(Serialize)]
pub struct MetaOnly<'a> {
    #[serde(rename = "_meta")]
    pub meta: RequestMeta<'a>,
}

#[derive(Deserialize)]
struct DiscoverFields {
    #[serde(rename = "supportedVersions", default)]
    supported_versions: Vec<String>,
}

/// What a `server/discover` result says.
pub enum Discovered {
    /// The server speaks 2026-07-28.
    Modern(Session),
    /// It lists only versions negotiated with `initialize`.
    LegacyOnly,
}

/// Reads a `server/discover` result. `how` says how the choice came about.
pub fn accept_discover(result: Box<RawValue>, how: &'static str) -> Result<Discovered> {
    let fields: DiscoverFields = if crate::result::is_object(result.get()) {
        serde_json::from_str(result.get()).map_err(|e| {
            Error::new(
                Status::MCPC_ERR_HANDSHAKE,
                format!("server/discover result is malformed: {e}"),
            )
        })?
    } else {
        return Err(Error::new(
            Status::MCPC_ERR_HANDSHAKE,
            "server/discover result is not a JSON object",
        ));
    };
    check_result_type(&result).map_err(|e| e.with_status(Status::MCPC_ERR_HANDSHAKE))?;
    if fields.supported_versions.iter().any(|v| is_modern(v)) {
        return Ok(Discovered::Modern(Session {
            version: MODERN_VERSION.to_string(),
            negotiated_by: how,
            capabilities: ServerCapabilities::read(result.get()),
            init_result: result,
            modern: true,
        }));
    }
    if fields.supported_versions.iter().any(|v| is_supported(v)) {
        return Ok(Discovered::LegacyOnly);
    }
    Err(Error::new(
        Status::MCPC_ERR_UNSUPPORTED_VERSION,
        format!(
            "the server supports none of this client's protocol versions (it lists {}; this client speaks {})",
            quote(&fields.supported_versions.join(", ")),
            ALL_VERSIONS.join(", ")
        ),
    ))
}

/// What a 2026-07-28 result asks of the client.
#[derive(Debug, PartialEq, Eq)]
pub enum ResultKind {
    Complete,
    /// Retry the request with this state (and answers to `input_requests`).
    InputRequired {
        request_state: Option<String>,
        input_requests: Option<serde_json::Map<String, serde_json::Value>>,
    },
    /// The request became a task (the tasks extension): follow it.
    Task,
}

#[derive(Deserialize)]
struct ResultTypeFields {
    #[serde(rename = "resultType", default)]
    result_type: Option<String>,
    #[serde(rename = "requestState", default)]
    request_state: Option<String>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Reads `resultType`: missing means complete, an unknown value is a protocol error.
pub fn result_kind(json: &str) -> Result<ResultKind> {
    let f: ResultTypeFields = serde_json::from_str(json)
        .map_err(|e| Error::new(Status::MCPC_ERR_PROTOCOL, format!("result is malformed: {e}")))?;
    match f.result_type.as_deref() {
        None | Some("complete") => Ok(ResultKind::Complete),
        Some("input_required") => Ok(ResultKind::InputRequired {
            request_state: f.request_state,
            input_requests: f.input_requests.filter(|m| !m.is_empty()),
        }),
        Some("task") => Ok(ResultKind::Task),
        Some(other) => Err(Error::new(
            Status::MCPC_ERR_PROTOCOL,
            format!("the result has an unknown resultType {}", quote(other)),
        )),
    }
}

fn check_result_type(raw: &RawValue) -> Result<()> {
    match result_kind(raw.get())? {
        ResultKind::Complete => Ok(()),
        ResultKind::InputRequired { .. } | ResultKind::Task => Err(Error::new(
            Status::MCPC_ERR_PROTOCOL,
            "server/discover may not ask for input or become a task",
        )),
    }
}

/// Name and version the client announces.
#[derive(Clone, Debug, Serialize)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

impl Default for ClientInfo {
    fn default() -> Self {
        ClientInfo {
            name: "mcpc".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Serialize)]
pub struct InitializeParams<'a> {
    #[serde(rename = "protocolVersion")]
    pub protocol_version: &'a str,
    pub capabilities: &'a RawValue,
    #[serde(rename = "clientInfo")]
    pub client_info: &'a ClientInfo,
}

/// A tools-only client declares no capabilities.
pub fn empty_capabilities() -> &'static RawValue {
    serde_json::from_str::<&RawValue>("{}").expect("static JSON")
}

/// What a connection agreed on.
#[derive(Debug)]
pub struct Session {
    /// The protocol version in use.
    pub version: String,
    /// How it was chosen: one of [`negotiated`].
    pub negotiated_by: &'static str,
    /// The server's `initialize` (or, under 2026-07-28, `server/discover`) result, as sent.
    pub init_result: Box<RawValue>,
    /// What the client reads of `init_result`'s `capabilities`.
    pub capabilities: ServerCapabilities,
    /// True under 2026-07-28.
    pub modern: bool,
}

/// The tasks extension of 2026-07-28.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// The lists whose capability may say `listChanged` (see [`ServerCapabilities`]).
const LISTS: [&str; 3] = ["tools", "resources", "prompts"];

/// What the client reads of the server's `capabilities`: read once at connect,
/// where each listing and the log level would otherwise parse the result again.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServerCapabilities {
    /// `logging` is there (whatever its value).
    pub logging: bool,
    /// `listChanged` is `true` in each of [`LISTS`].
    list_changed: [bool; 3],
    /// 2025-11-25: `tasks.requests.tools.call` is there (tool calls may be tasks).
    pub tasks_tools_call: bool,
    /// The tasks extension is offered (`extensions["io.modelcontextprotocol/tasks"]`).
    pub tasks_extension: bool,
    /// `resources` is there.
    pub resources: bool,
    /// `prompts` is there.
    pub prompts: bool,
}

impl ServerCapabilities {
    /// Reads them from an `initialize` (or `server/discover`) result; none from text
    /// that is not JSON.
    pub fn read(init_result: &str) -> Self {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(init_result) else {
            return Self::default();
        };
        let caps = &v["capabilities"];
        ServerCapabilities {
            logging: caps.get("logging").is_some(),
            resources: caps.get("resources").is_some(),
            prompts: caps.get("prompts").is_some(),
            list_changed: LISTS.map(|list| caps[list]["listChanged"] == true),
            tasks_tools_call: caps["tasks"]["requests"]["tools"]["call"].is_object(),
            tasks_extension: caps["extensions"][TASKS_EXTENSION].is_object(),
        }
    }

    /// Whether the capability `list` (`tools`, `resources` or `prompts`) says
    /// `listChanged: true`.
    pub fn list_changed(&self, list: &str) -> bool {
        LISTS
            .iter()
            .position(|l| *l == list)
            .is_some_and(|i| self.list_changed[i])
    }
}

#[derive(Deserialize)]
struct InitializeResultFields<'a> {
    #[serde(rename = "protocolVersion", default)]
    protocol_version: Option<std::borrow::Cow<'a, str>>,
}

/// Checks an initialize result: a non-empty protocol version we support.
pub fn accept_initialize(result: Box<RawValue>, how: &'static str) -> Result<Session> {
    if !crate::result::is_object(result.get()) {
        return Err(Error::new(
            Status::MCPC_ERR_HANDSHAKE,
            "initialize result is not a JSON object",
        ));
    }
    let fields: InitializeResultFields<'_> = serde_json::from_str(result.get()).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_HANDSHAKE,
            format!("initialize result is malformed: {e}"),
        )
    })?;
    let version = match fields.protocol_version {
        None => {
            return Err(Error::new(
                Status::MCPC_ERR_HANDSHAKE,
                "initialize result has no protocolVersion",
            ))
        }
        Some(v) if v.is_empty() => {
            return Err(Error::new(
                Status::MCPC_ERR_HANDSHAKE,
                "server answered an empty protocolVersion",
            ))
        }
        Some(v) if !is_supported(&v) => {
            return Err(Error::new(
                Status::MCPC_ERR_HANDSHAKE,
                format!(
                    "server chose protocol version {}, which this client does not support (supported: {})",
                    quote(&v),
                    INITIALIZE_VERSIONS.join(", ")
                ),
            ))
        }
        Some(v) => v.into_owned(),
    };
    Ok(Session {
        version,
        negotiated_by: how,
        capabilities: ServerCapabilities::read(result.get()),
        init_result: result,
        modern: false,
    })
}

#[derive(Serialize)]
pub struct CancelledParams<'a> {
    #[serde(rename = "requestId")]
    pub request_id: i64,
    pub reason: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn server_capabilities_read_once() {
        let caps = ServerCapabilities::read(
            r#"{"capabilities":{"logging":null,"tools":{"listChanged":true},"resources":{"listChanged":1},"prompts":{}}}"#,
        );
        assert!(caps.logging);
        assert!(caps.list_changed("tools"));
        assert!(!caps.list_changed("resources"));
        assert!(!caps.list_changed("prompts"));
        assert!(!caps.list_changed("other"));
        for none in [
            "{}",
            r#"{"capabilities":[]}"#,
            r#"{"capabilities":{"tools":true}}"#,
            "not JSON",
        ] {
            assert_eq!(ServerCapabilities::read(none), ServerCapabilities::default(), "{none}");
        }
        // A key given twice: the last, as a parse into a value takes it.
        let twice = ServerCapabilities::read(r#"{"capabilities":{"tools":{"listChanged":true},"tools":{}}}"#);
        assert!(!twice.list_changed("tools"));
    }

    #[test]
    fn initialize_result_checks() {
        let ok = accept_initialize(
            raw(r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#),
            "initialize",
        )
        .unwrap();
        assert_eq!(ok.version, "2025-06-18");
        for bad in [
            r#"{"protocolVersion":""}"#,
            r#"{"protocolVersion":"1999-01-01"}"#,
            r#"{}"#,
            r#"[]"#,
        ] {
            assert_eq!(
                accept_initialize(raw(bad), "initialize").unwrap_err().status,
                Status::MCPC_ERR_HANDSHAKE,
                "{bad}"
            );
        }
    }

    #[test]
    fn discover_results() {
        let modern = accept_discover(
            raw(r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}"#),
            "discover",
        );
        assert!(matches!(modern, Ok(Discovered::Modern(s)) if s.modern && s.version == MODERN_VERSION));
        let old = accept_discover(raw(r#"{"supportedVersions":["2025-06-18"]}"#), "discover");
        assert!(matches!(old, Ok(Discovered::LegacyOnly)));
        let none = accept_discover(raw(r#"{"supportedVersions":["1999-01-01"]}"#), "discover");
        assert_eq!(none.err().map(|e| e.status), Some(Status::MCPC_ERR_UNSUPPORTED_VERSION));
        assert!(accept_discover(raw("[]"), "discover").is_err());
    }

    #[test]
    fn result_types() {
        assert_eq!(result_kind(r#"{"content":[]}"#).unwrap(), ResultKind::Complete);
        assert_eq!(
            result_kind(r#"{"resultType":"complete"}"#).unwrap(),
            ResultKind::Complete
        );
        assert_eq!(
            result_kind(r#"{"resultType":"input_required","requestState":"s"}"#).unwrap(),
            ResultKind::InputRequired {
                request_state: Some("s".into()),
                input_requests: None
            }
        );
        assert!(matches!(
            result_kind(r#"{"resultType":"input_required","inputRequests":{"a":{}}}"#).unwrap(),
            ResultKind::InputRequired { request_state: None, input_requests: Some(m) } if m.len() == 1
        ));
        assert_eq!(
            result_kind(r#"{"resultType":"later"}"#).unwrap_err().status,
            Status::MCPC_ERR_PROTOCOL
        );
    }

    #[test]
    fn request_meta_serializes_only_what_is_set() {
        let info = ClientInfo::default();
        let m = RequestMeta {
            progress_token: Some(3),
            protocol_version: Some(MODERN_VERSION),
            client_capabilities: Some(empty_capabilities()),
            client_info: Some(&info),
            log_level: Some("info"),
        };
        let s = serde_json::to_string(&m).unwrap();
        assert!(s.ends_with(r#","io.modelcontextprotocol/logLevel":"info"}"#), "{s}");
        let want = r#"{"progressToken":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpc""#;
        assert!(s.starts_with(want), "{s}");
        assert_eq!(serde_json::to_string(&RequestMeta::default()).unwrap(), "{}");
    }

    #[test]
    fn modern_error_codes_get_their_statuses() {
        use crate::jsonrpc::{decode, Incoming};
        let e = match decode(
            br#"{"id":1,"error":{"code":-32022,"message":"no","data":{"supported":["2026-07-28"],"requested":"x"}}}"#,
        )
        .unwrap()
        {
            Incoming::Response { outcome: Err(e), .. } => rpc_error(e),
            other => panic!("{other:?}"),
        };
        assert_eq!(e.status, Status::MCPC_ERR_UNSUPPORTED_VERSION);
        assert_eq!(e.rpc_code, Some(-32022));
        assert!(e.message.contains("2026-07-28"), "{}", e.message);
        let hm = rpc_error(crate::jsonrpc::RpcError {
            code: -32020,
            message: "m".into(),
            data: None,
        });
        assert_eq!(hm.status, Status::MCPC_ERR_HEADER_MISMATCH);
    }
}
