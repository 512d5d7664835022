//! A request or a notification by method name, for the methods mcpc has no typed
//! call for (extensions among them): the method and params checked, the client's
//! `_meta` merged in, and the headers a request's name is mirrored into. The request
//! itself is a [`super::call::Call`], as every other.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::Client;
use crate::error::{quote, Error, Result, Status};

/// Methods that belong to the session itself: a generic request or notification
/// must not send them behind the client's back.
const OWN_METHODS: &[&str] = &["initialize", "server/discover", "notifications/initialized"];

/// The method, checked: non-empty, and not one the client sends itself.
fn checked_method(method: &str, what: &str) -> Result<()> {
    if method.is_empty() {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("the {what} method is empty"),
        ));
    }
    if OWN_METHODS.contains(&method) {
        return Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!(
                "{} is sent by the client itself, not by a generic {what}",
                quote(method)
            ),
        ));
    }
    Ok(())
}

/// The caller's params as an object (none: an empty one); anything else is
/// `MCPC_ERR_INVALID_ARG`.
fn params_object(params_json: Option<&str>) -> Result<Map<String, Value>> {
    let Some(text) = params_json else {
        return Ok(Map::new());
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "params must be a JSON object")),
        Err(e) => Err(Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("params are not valid JSON: {e}"),
        )),
    }
}

/// Adds the client's `_meta` members to the caller's own (the caller's win: they
/// asked for them).
pub(super) fn merge_meta(params: &mut Map<String, Value>, ours: Value) {
    let Value::Object(ours) = ours else { return };
    if ours.is_empty() {
        return;
    }
    let entry = params.entry("_meta").or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(theirs) = entry {
        for (k, v) in ours {
            theirs.entry(k).or_insert(v);
        }
    }
}

/// A generic request's method and params, checked: the method non-empty and not one
/// the client sends itself, the params a JSON object (none: an empty one). Anything
/// else is `MCPC_ERR_INVALID_ARG`.
pub fn request_params(method: &str, params_json: Option<&str>) -> Result<Map<String, Value>> {
    checked_method(method, "request")?;
    params_object(params_json)
}

impl Client {
    /// Under 2026-07-28 over HTTP, the headers that mirror what a request names:
    /// `Mcp-Name` for `tools/call` and `prompts/get` (`name`), `resources/read`
    /// (`uri`) and `tasks/*` (`taskId`), and a tool call's `Mcp-Param-*`, as for the
    /// typed calls.
    pub(super) fn named_headers(&self, method: &str, params: &Map<String, Value>) -> Vec<(String, String)> {
        let key = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
            "tasks/get" | "tasks/update" | "tasks/cancel" | "tasks/result" => "taskId",
            _ => return Vec::new(),
        };
        let Some(name) = params.get(key).and_then(Value::as_str) else {
            return Vec::new();
        };
        if method == "tools/call" {
            let args = params.get("arguments").map(Value::to_string);
            let args = crate::result::parse_arguments(args.as_deref()).ok().flatten();
            return self.call_headers(name, args);
        }
        if !self.mirrors_params() {
            return Vec::new();
        }
        vec![("Mcp-Name".to_string(), crate::headers::encode_value(name))]
    }

    /// Sends the notification `method` with `params_json` (a JSON object, or none).
    /// Under 2026-07-28 its `_meta` carries the client's envelope too.
    pub fn notify_raw(&self, method: &str, params_json: Option<&str>) -> Result<()> {
        checked_method(method, "notification")?;
        let mut params = params_object(params_json)?;
        merge_meta(
            &mut params,
            serde_json::to_value(self.meta(None)).expect("_meta serializes"),
        );
        let params = (!params.is_empty()).then_some(&params);
        super::notify(&*self.transport, Cow::Owned(method.to_string()), params)
            .map_err(|e| e.context(method.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_and_meta() {
        assert!(params_object(Some("[1]")).is_err());
        assert!(params_object(Some("{")).is_err());
        assert!(params_object(None).unwrap().is_empty());
        let mut p = params_object(Some(r#"{"a":1,"_meta":{"progressToken":"mine"}}"#)).unwrap();
        merge_meta(&mut p, serde_json::json!({"progressToken": 7, "x": true}));
        assert_eq!(
            Value::Object(p),
            serde_json::json!({"a": 1, "_meta": {"progressToken": "mine", "x": true}})
        );
        assert_eq!(
            checked_method("", "request").unwrap_err().status,
            Status::MCPC_ERR_INVALID_ARG
        );
        assert!(checked_method("initialize", "request").is_err());
        assert!(checked_method("resources/list", "request").is_ok());
    }
}
