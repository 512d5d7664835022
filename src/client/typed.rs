//! The typed requests beyond tools: `resources/read`, `prompts/get` and
//! `completion/complete`. Each builds its params, goes through the generic request
//! as a [`Call`] (timeouts, cancellation, progress, `input_required` rounds, the
//! `_meta` envelope and `Mcp-Name`) and checks the result's shape before anyone reads it.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::call::{Ask, Call};
use super::router::Reader;
use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};
use crate::result::{self, Contents, ResultJson, Text};

/// What a completion completes an argument of.
#[derive(Clone, Copy, Debug)]
pub enum Reference<'a> {
    /// A prompt, by name (`ref/prompt`).
    Prompt(&'a str),
    /// A resource template, by its URI template (`ref/resource`).
    Resource(&'a str),
}

fn invalid(what: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_INVALID_ARG, what)
}

/// A caller's JSON object of string values (prompt arguments, completion context);
/// none is `None`. Anything else is `MCPC_ERR_INVALID_ARG` naming `what`.
fn string_map(json: Option<&str>, what: &str) -> Result<Option<Map<String, Value>>> {
    let Some(text) = json else { return Ok(None) };
    let map = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(invalid(format!("{what} must be a JSON object"))),
        Err(e) => return Err(invalid(format!("{what} are not valid JSON: {e}"))),
    };
    if let Some((k, _)) = map.iter().find(|(_, v)| !v.is_string()) {
        return Err(invalid(format!("{what}: the value of {} is not a string", quote(k))));
    }
    Ok(Some(map))
}

fn non_empty(s: &str, what: &str) -> Result<()> {
    if s.is_empty() {
        return Err(invalid(format!("the {what} is empty")));
    }
    Ok(())
}

impl Client {
    /// A typed request as a [`Call`], sent once more when the HTTP session expired
    /// under it (as the listings do: the transport has opened a new one by then); its
    /// result as the router hands it over (`reader` says what it may read it as).
    async fn typed_json(&self, method: &str, params: &Value, ctl: &Control, reader: Reader) -> Result<ResultJson> {
        let Value::Object(params) = params else {
            unreachable!("typed params are objects")
        };
        let call = Call::new(self, Ask::Method { method, params, reader }, ctl);
        match call.wait().await {
            Err(e) if e.status == Status::MCPC_ERR_SESSION_EXPIRED => call.wait().await,
            other => other,
        }
    }

    /// [`typed_json`](Self::typed_json), the result checked as one JSON value.
    async fn typed(&self, method: &str, params: &Value, ctl: &Control) -> Result<String> {
        let raw = self
            .typed_json(method, params, ctl, Reader::Json)
            .await?
            .into_raw()
            .map_err(|e| e.context(method.to_string()))?;
        Ok(raw.get().to_string())
    }

    /// `resources/read` of `uri`: its contents, blobs decoded. A result in the
    /// usual shape is read once, by the router or here ([`ResultJson::into_contents`]);
    /// any other is checked as JSON, then read by serde, which says what is wrong.
    pub async fn read_resource(&self, uri: &str, ctl: &Control) -> Result<Contents> {
        non_empty(uri, "resource URI")?;
        let reader = self.reader_before_modern(Reader::Read);
        let json = self
            .typed_json("resources/read", &json!({ "uri": uri }), ctl, reader)
            .await?;
        let raw = match json.into_contents() {
            Ok(contents) => return Ok(contents),
            Err(json) => json.into_raw().map_err(|e| e.context("resources/read"))?,
        };
        let items =
            result::contents_parsed(raw.get()).map_err(|e| e.context(format!("resources/read {}", quote(uri))))?;
        Ok(Contents {
            items,
            json: Text::Own(raw.into()),
        })
    }

    /// `resources/subscribe` (or `resources/unsubscribe`) of `uri`: the server then
    /// sends `notifications/resources/updated` for it, which reach the notification
    /// callback. Under 2026-07-28 the set goes out as one `subscriptions/listen`
    /// instead (see [`super::listen`]).
    pub async fn subscribe_resource(self: &Arc<Self>, uri: &str, on: bool, ctl: &Control) -> Result<()> {
        non_empty(uri, "resource URI")?;
        if self.is_modern() {
            return self.listen_change(uri, on, ctl).await;
        }
        let method = if on {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        self.typed(method, &json!({ "uri": uri }), ctl).await.map(drop)
    }

    /// `prompts/get` of `name` with `arguments_json` (an object of strings, or
    /// none): the result as the server sent it, its messages checked.
    pub async fn get_prompt(&self, name: &str, arguments_json: Option<&str>, ctl: &Control) -> Result<String> {
        non_empty(name, "prompt name")?;
        let mut params = json!({ "name": name });
        if let Some(args) = string_map(arguments_json, "prompt arguments")? {
            params["arguments"] = Value::Object(args);
        }
        let raw = self.typed("prompts/get", &params, ctl).await?;
        result::check_prompt(&raw).map_err(|e| e.context(format!("prompts/get {}", quote(name))))?;
        Ok(raw)
    }

    /// `completion/complete` of the argument `argument` (typed so far: `value`) of
    /// `reference`, with the other arguments already chosen (`context_json`, an
    /// object of strings, or none): the result as the server sent it, checked.
    pub async fn complete(
        &self,
        reference: Reference<'_>,
        argument: &str,
        value: &str,
        context_json: Option<&str>,
        ctl: &Control,
    ) -> Result<String> {
        non_empty(argument, "argument name")?;
        let r = match reference {
            Reference::Prompt(name) => {
                non_empty(name, "prompt name")?;
                json!({ "type": "ref/prompt", "name": name })
            }
            Reference::Resource(uri) => {
                non_empty(uri, "resource template")?;
                json!({ "type": "ref/resource", "uri": uri })
            }
        };
        let mut params = json!({ "ref": r, "argument": { "name": argument, "value": value } });
        if let Some(ctx) = string_map(context_json, "completion context arguments")? {
            params["context"] = json!({ "arguments": ctx });
        }
        let raw = self.typed("completion/complete", &params, ctl).await?;
        result::check_completion(&raw).map_err(|e| e.context("completion/complete"))?;
        Ok(raw)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_maps() {
        assert!(string_map(None, "x").unwrap().is_none());
        assert_eq!(string_map(Some(r#"{"a":"b"}"#), "x").unwrap().unwrap().len(), 1);
        for bad in [r#"{"a":1}"#, "[]", "{"] {
            assert_eq!(
                string_map(Some(bad), "x").unwrap_err().status,
                Status::MCPC_ERR_INVALID_ARG
            );
        }
    }
}
