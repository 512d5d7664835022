//! A request or a notification by method name, for the methods mcpc has no typed
//! call for (extensions among them), with the same timeouts, cancellation, progress,
//! `input_required` rounds, `_meta` envelope and error mapping as the typed calls.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::time::Instant;

use super::op::{spawn_op, OpState, OpTracker};
use super::router::Reader;
use super::{Client, Control, MAX_INPUT_ROUNDS};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::Serialized;
use crate::result::ResultJson;

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
fn merge_meta(params: &mut Map<String, Value>, ours: Value) {
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

impl Client {
    /// Sends `method` with `params_json` (a JSON object, or none) and returns the
    /// result's JSON as the server sent it. Under 2026-07-28 an `input_required`
    /// result is sent again with its `requestState`, as for a tool call; a JSON-RPC
    /// error is `MCPC_ERR_RPC` (or the status of its MCP code) with its code.
    pub async fn request_raw(&self, method: &str, params_json: Option<&str>, ctl: &Control) -> Result<Box<RawValue>> {
        self.request_json(method, params_json, ctl, Reader::Json)
            .await?
            .into_raw()
            .map_err(|e| e.context(method.to_string()))
    }

    /// [`request_raw`](Self::request_raw), the result handed over as the router
    /// gives it (`reader` says what it may read it as), unchecked before
    /// 2026-07-28, so that its reader reads it once. After, it is checked whole
    /// first, as it may ask for input.
    pub(super) async fn request_json(
        &self,
        method: &str,
        params_json: Option<&str>,
        ctl: &Control,
        reader: Reader,
    ) -> Result<ResultJson> {
        checked_method(method, "request")?;
        let base = params_object(params_json)?;
        let wants_progress = ctl.progress.is_some() || ctl.reset_on_progress;
        let method: Cow<'static, str> = Cow::Owned(method.to_string());
        let ctx = || method.to_string();
        let deadline = Instant::now() + self.timeout_of(ctl);
        let headers = self.named_headers(&method, &base);
        let mut state: Option<String> = None;
        let mut responses: Option<Box<RawValue>> = None;
        for round in 0..=MAX_INPUT_ROUNDS {
            let id = self.next_id();
            let mut params = base.clone();
            let meta = self.meta(wants_progress.then_some(id));
            merge_meta(&mut params, serde_json::to_value(&meta).expect("_meta serializes"));
            if let Some(s) = &state {
                params.insert("requestState".into(), Value::String(s.clone()));
            }
            if let Some(r) = &responses {
                let value = serde_json::from_str(r.get()).expect("input responses are JSON");
                params.insert("inputResponses".into(), value);
            }
            let round_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let json = self
                .request(
                    id,
                    method.clone(),
                    &Serialized(&params),
                    None,
                    &round_ctl,
                    true,
                    headers.clone(),
                    0,
                    reader,
                )
                .await?;
            if !self.is_modern() {
                return Ok(json);
            }
            let raw = json.into_raw().map_err(|e| e.context(ctx()))?;
            if let Some(round) = self
                .input_round(raw.get(), deadline, ctl.cancel.as_ref(), round == MAX_INPUT_ROUNDS)
                .await
                .map_err(|e| e.context(ctx()))?
            {
                (state, responses) = round;
                continue;
            }
            return Ok(raw.into());
        }
        Err(super::ops::too_many_rounds().context(ctx()))
    }

    /// Under 2026-07-28 over HTTP, the headers that mirror what a request names:
    /// `Mcp-Name` for `tools/call` and `prompts/get` (`name`) and `resources/read`
    /// (`uri`), and a tool call's `Mcp-Param-*`, as for the typed calls.
    fn named_headers(&self, method: &str, params: &Map<String, Value>) -> Vec<(String, String)> {
        let key = match method {
            "tools/call" | "prompts/get" => "name",
            "resources/read" => "uri",
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

impl Client {
    /// Starts [`request_raw`](Self::request_raw) as a task; `complete` gets its
    /// outcome exactly once, on an mcpc thread. Bad arguments fail here, with no
    /// completion.
    pub fn request_started<K>(
        self: &Arc<Self>,
        tracker: &Arc<OpTracker>,
        method: &str,
        params_json: Option<&str>,
        mut ctl: Control,
        complete: K,
    ) -> Result<Arc<OpState>>
    where
        K: FnOnce(Result<Box<RawValue>>) + Send + 'static,
    {
        checked_method(method, "request")?;
        params_object(params_json)?;
        let client = Arc::clone(self);
        let method = method.to_string();
        let params = params_json.map(str::to_string);
        let parent = ctl.cancel.take();
        spawn_op(
            Some(tracker),
            parent.as_ref(),
            |token| async move {
                ctl.cancel = Some(token);
                client.request_raw(&method, params.as_deref(), &ctl).await
            },
            complete,
        )
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
