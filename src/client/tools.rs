//! The tools: the listing (its pages, duplicate names, the annotations a call
//! mirrors into headers) and how a tool call's params and headers are written.

use super::exchange::Exchange;
use super::listing::ListParams;
use super::*;
use crate::error::{quote, Error, Result, Status};
use crate::headers::{self, ParamHeader};
use crate::jsonrpc::{self, Serialized};
use crate::protocol::{self, RequestMeta, ResultKind};
use crate::result::{self, Arguments, Tool};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::Arc;
use tokio::time::Instant;

pub(super) struct CallParams<'a> {
    pub(super) name: &'a str,
    pub(super) arguments: Option<Arguments<'a>>,
    /// `_meta`
    pub(super) meta: Option<RequestMeta<'a>>,
    /// `requestState`
    pub(super) request_state: Option<&'a str>,
    /// `inputResponses`
    pub(super) input_responses: Option<&'a RawValue>,
    /// 2025-11-25: `"task": {}`, to run the call as a task.
    pub(super) task: bool,
}

/// Written as they are: the keys as they are, the strings and `_meta` through serde
/// (escaped), the arguments and input responses (checked JSON) copied. serde,
/// serializing them as a struct, would escape each key on every call; the test
/// `call_params_written_as_json` checks what is written.
impl jsonrpc::Params for CallParams<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        fn json(out: &mut Vec<u8>, value: &(impl Serialize + ?Sized)) {
            serde_json::to_writer(out, value).expect("serializing params cannot fail");
        }
        out.extend_from_slice(br#"{"name":"#);
        jsonrpc::write_json_str(out, self.name);
        if let Some(arguments) = self.arguments {
            out.extend_from_slice(br#","arguments":"#);
            out.extend_from_slice(arguments.get().as_bytes());
        }
        if let Some(meta) = &self.meta {
            out.extend_from_slice(br#","_meta":"#);
            json(out, meta);
        }
        if let Some(state) = self.request_state {
            out.extend_from_slice(br#","requestState":"#);
            json(out, state);
        }
        if let Some(responses) = self.input_responses {
            out.extend_from_slice(br#","inputResponses":"#);
            out.extend_from_slice(responses.get().as_bytes());
        }
        if self.task {
            out.extend_from_slice(br#","task":{}"#);
        }
        out.push(b'}');
    }
}

/// What a tool call's errors are prefixed with.
pub(super) fn call_context(name: &str) -> String {
    format!("tools/call {}", quote(name))
}

/// Reads a tool's `x-mcp-header` annotations from its `inputSchema`.
pub(super) fn tool_param_headers(tool: &Tool) -> std::result::Result<Vec<ParamHeader>, String> {
    #[derive(Deserialize)]
    struct Schema {
        #[serde(rename = "inputSchema", default)]
        input_schema: serde_json::Value,
    }
    let s: Schema = serde_json::from_str(tool.json()).map_err(|e| format!("malformed tool: {e}"))?;
    headers::param_headers(&s.input_schema)
}

impl Client {
    /// `reader` before 2026-07-28, where a result is always of its request's type;
    /// after, any result may ask for input, and is read as JSON first.
    pub(super) fn reader_before_modern(&self, reader: Reader) -> Reader {
        if self.is_modern() {
            Reader::Json
        } else {
            reader
        }
    }

    /// Lists every tool, following `nextCursor`. The timeout covers the whole listing.
    /// When the HTTP session expires mid-listing, the listing starts over once on the
    /// fresh session (cursors belong to a session); a call is never retried.
    pub async fn list_tools(&self, ctl: &Control) -> Result<Vec<Tool>> {
        use super::cache::{Kind, Value};
        if !ctl.bypass_cache {
            if let Some(Value::Tools(kept)) = self.shared.cache.get(Kind::Tools) {
                return Ok((*kept).clone());
            }
        }
        let epoch = self.shared.cache.epoch(Kind::Tools);
        let deadline = Instant::now() + self.timeout_of(ctl);
        let mut ttl = None;
        let tools = match self.list_tools_once(ctl, deadline, &mut ttl).await {
            Err(e) if e.status == Status::MCPC_ERR_SESSION_EXPIRED => {
                ttl = None;
                self.list_tools_once(ctl, deadline, &mut ttl).await
            }
            other => other,
        }?;
        let keep = self.keep_for(Kind::Tools, ttl);
        if keep != super::cache::Keep::No {
            self.shared
                .cache
                .put(Kind::Tools, epoch, Value::Tools(Arc::new(tools.clone())), keep);
        }
        Ok(tools)
    }

    /// The listed tool `name` (None when the server lists none of that name): from
    /// the kept listing, else from listing the tools now. For the checks a call makes
    /// of its tool's listing (task support, MCP Apps visibility).
    pub(super) async fn listed_tool(&self, name: &str, ctl: &Control) -> Result<Option<Tool>> {
        use super::cache::{Kind, Value};
        let tools = match self.shared.cache.get(Kind::Tools) {
            Some(Value::Tools(kept)) => kept,
            _ => {
                let list_ctl = Control {
                    task: Default::default(),
                    ..ctl.clone()
                };
                Arc::new(crate::drive::runtime::boxed_apart(|| self.list_tools(&list_ctl)).await?)
            }
        };
        Ok(tools.iter().find(|t| t.name == name).cloned())
    }

    /// One listing; `ttl` gets the shortest `ttlMs` of its pages.
    pub(super) async fn list_tools_once(
        &self,
        ctl: &Control,
        deadline: Instant,
        ttl: &mut Option<i64>,
    ) -> Result<Vec<Tool>> {
        let mut tools: Vec<Tool> = Vec::new();
        // Names seen, by their hash: a hash seen before is a duplicate if a tool
        // kept or dropped so far has that name. The names themselves cost an
        // allocation a tool to keep. Names are the server's, so their hash is keyed
        // (SipHash); the set of those hashes needs no second keyed hash.
        let name_hash = std::collections::hash_map::RandomState::new();
        let mut names: rustc_hash::FxHashSet<u64> = Default::default();
        let mut dropped: Vec<String> = Vec::new();
        let mut cursors: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0usize;
        let mirror = self.mirrors_params();
        let mut annotations: HashMap<String, Arc<Vec<ParamHeader>>> = HashMap::new();
        loop {
            if pages == self.options.max_pages {
                return Err(Error::new(
                    Status::MCPC_ERR_TOO_MANY_PAGES,
                    format!("tools/list: more than {} pages; stopped", self.options.max_pages),
                ));
            }
            pages += 1;
            let page_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let id = self.next_id();
            let meta = self.meta(None);
            let params = ListParams {
                cursor: cursor.as_deref(),
                meta: (!meta.is_empty()).then_some(meta),
            };
            let x = Exchange {
                reader: self.reader_before_modern(Reader::Page),
                ..Exchange::new(id, "tools/list")
            };
            let raw = self.exchange(x, &Serialized(&params), &page_ctl).await?;
            *ttl = super::cache::shortest(*ttl, raw.get());
            let page = match raw.into_page() {
                Ok(read) => read,
                Err(raw) => {
                    if self.is_modern() && protocol::result_kind(raw.get())? != ResultKind::Complete {
                        return Err(Error::new(
                            Status::MCPC_ERR_PROTOCOL,
                            "tools/list: the server asked for input on a listing",
                        ));
                    }
                    result::parse_page(raw.get())
                }
            }
            .map_err(|e| e.context(format!("tools/list page {pages}")))?;
            for tool in page.tools {
                if !names.insert(name_hash.hash_one(&tool.name))
                    && tools.iter().map(|t| &t.name).chain(&dropped).any(|n| *n == tool.name)
                {
                    return Err(Error::new(
                        Status::MCPC_ERR_DUPLICATE_TOOL,
                        format!(
                            "tools/list: tool name {} appears twice (page {pages})",
                            quote(&tool.name)
                        ),
                    ));
                }
                if mirror {
                    match tool_param_headers(&tool) {
                        Ok(hs) if hs.is_empty() => {}
                        Ok(hs) => {
                            annotations.insert(tool.name.clone(), Arc::new(hs));
                        }
                        Err(why) => {
                            log::warn!("tools/list: dropped tool {}: {why}", quote(&tool.name));
                            dropped.push(tool.name);
                            continue;
                        }
                    }
                }
                tools.push(tool);
            }
            match page.next_cursor {
                None => {
                    if mirror {
                        *self.param_headers.lock().unwrap_or_else(|p| p.into_inner()) = annotations;
                    }
                    self.remember_output_schemas(&tools);
                    return Ok(tools);
                }
                Some(next) => cursor = Some(super::listing::unseen_cursor(&mut cursors, next, "tools/list", pages)?),
            }
        }
    }

    /// The 2026-07-28 HTTP headers of a call: `Mcp-Name`, and `Mcp-Param-*` for the
    /// tool's annotated parameters (as the last listing described them).
    pub(super) fn call_headers(&self, name: &str, arguments: Option<Arguments<'_>>) -> Vec<(String, String)> {
        if !self.mirrors_params() {
            return Vec::new();
        }
        let mut out = vec![("Mcp-Name".to_string(), headers::encode_value(name))];
        let annotated = self
            .param_headers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned();
        if let (Some(hs), Some(args)) = (annotated, arguments) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(args.get()) {
                out.extend(headers::param_values(&v, &hs));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result;
    use serde_json::value::RawValue;

    /// `tools/call` params, written as they are, are the JSON they stand for.
    #[test]
    fn call_params_written_as_json() {
        use crate::jsonrpc::Params as _;
        use serde_json::{json, Value};
        let args = r#"{"text":"a\"b","n":[1,2]}"#;
        let responses = RawValue::from_string(r#"{"q":{"ok":true}}"#.into()).unwrap();
        for name in ["echo", "a\"b\\c\n\u{1}é/", ""] {
            for full in [false, true] {
                for arguments in [None, result::parse_arguments(Some(args)).unwrap()] {
                    let params = CallParams {
                        name,
                        arguments,
                        meta: full.then(|| RequestMeta {
                            progress_token: Some(7),
                            ..RequestMeta::default()
                        }),
                        request_state: full.then_some("st\"ate"),
                        input_responses: full.then_some(&*responses),
                        task: full,
                    };
                    let mut out = Vec::new();
                    params.write_json(&mut out);
                    let mut want = json!({ "name": name });
                    if arguments.is_some() {
                        want["arguments"] = serde_json::from_str(args).unwrap();
                    }
                    if full {
                        want["_meta"] = json!({ "progressToken": 7 });
                        want["requestState"] = json!("st\"ate");
                        want["task"] = json!({});
                        want["inputResponses"] = json!({ "q": { "ok": true } });
                    }
                    assert_eq!(serde_json::from_slice::<Value>(&out).unwrap(), want);
                    // Compact: no raw newline can end the message early.
                    assert!(!out.contains(&b'\n'));
                }
            }
        }
    }
}
