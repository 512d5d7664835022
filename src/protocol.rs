//! Everything that depends on the protocol revision lives here: which versions
//! we speak, the handshake's shape, and what a request carries per revision.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{quote, Error, Result, Status};

/// Versions negotiated with `initialize`, newest first.
pub const INITIALIZE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The version the client asks for unless the caller pins another.
pub const LATEST_INITIALIZE_VERSION: &str = INITIALIZE_VERSIONS[0];

pub fn is_supported(version: &str) -> bool {
    INITIALIZE_VERSIONS.contains(&version)
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
    /// How it was chosen (`"initialize"`: negotiated by the handshake).
    pub negotiated_by: &'static str,
    /// The server's initialize result, as it sent it.
    pub init_result: Box<RawValue>,
}

#[derive(Deserialize)]
struct InitializeResultFields<'a> {
    #[serde(rename = "protocolVersion", default)]
    protocol_version: Option<std::borrow::Cow<'a, str>>,
}

/// Checks an initialize result: a non-empty protocol version we support.
pub fn accept_initialize(result: Box<RawValue>) -> Result<Session> {
    if !crate::result::is_object(&result) {
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
        None => return Err(Error::new(Status::MCPC_ERR_HANDSHAKE, "initialize result has no protocolVersion")),
        Some(v) if v.is_empty() => {
            return Err(Error::new(Status::MCPC_ERR_HANDSHAKE, "server answered an empty protocolVersion"))
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
        negotiated_by: "initialize",
        init_result: result,
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
    fn initialize_result_checks() {
        let ok = accept_initialize(raw(r#"{"protocolVersion":"2025-06-18","capabilities":{}}"#))
            .unwrap();
        assert_eq!(ok.version, "2025-06-18");
        for bad in [
            r#"{"protocolVersion":""}"#,
            r#"{"protocolVersion":"1999-01-01"}"#,
            r#"{}"#,
            r#"[]"#,
        ] {
            assert_eq!(
                accept_initialize(raw(bad)).unwrap_err().status,
                Status::MCPC_ERR_HANDSHAKE,
                "{bad}"
            );
        }
    }
}
