//! The operations: a request with its timeout, cancellation, progress and
//! `input_required` rounds; the tool listing and the tool call.

use super::listing::ListParams;
use super::*;
use crate::error::{quote, Error, Result, Status};
use crate::headers::{self, ParamHeader};
use crate::jsonrpc::{self, Serialized};
use crate::protocol::{self, RequestMeta, ResultKind};
use crate::result::ResultJson;
use crate::result::{self, Arguments, CallResult, Tool};
use crate::transport::Outgoing;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub(super) struct CallParams<'a> {
    pub(super) name: &'a str,
    pub(super) arguments: Option<Arguments<'a>>,
    /// `_meta`
    pub(super) meta: Option<RequestMeta<'a>>,
    /// `requestState`
    pub(super) request_state: Option<&'a str>,
    /// `inputResponses`
    pub(super) input_responses: Option<&'a RawValue>,
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
        out.push(b'}');
    }
}

/// The error of a request whose server still asks for input after the last round.
pub(super) fn too_many_rounds() -> Error {
    Error::new(
        Status::MCPC_ERR_INPUT_REQUIRED,
        format!("the server still asked for input after {MAX_INPUT_ROUNDS} rounds"),
    )
}

/// What a tool call's errors are prefixed with.
pub(super) fn call_context(name: &str) -> String {
    format!("tools/call {}", quote(name))
}

/// A direct call's outcome as its caller gets it: the result read, or the error
/// with the call's context.
pub(super) fn call_outcome(outcome: Result<ResultJson>, name: &str) -> Result<CallResult> {
    outcome
        .and_then(result::parse_call_result)
        .map_err(|e| e.context(call_context(name)))
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
    /// Sends one request and waits for its outcome, its timeout, or its cancellation.
    /// `name` names the tool (or other target) in error messages; `reader` says what
    /// the router may read the result as, with its response.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn request<P: jsonrpc::Params + ?Sized>(
        &self,
        id: i64,
        method: Cow<'static, str>,
        params: &P,
        name: Option<&str>,
        ctl: &Control,
        cancellable: bool,
        headers: Vec<(String, String)>,
        params_len: usize,
        reader: Reader,
    ) -> Result<ResultJson> {
        let ctx = || match name {
            Some(n) => format!("{method} {}", quote(n)),
            None => method.to_string(),
        };
        // A handle triggered before the call never lets it start.
        if ctl.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
            return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled before it was sent").context(ctx()));
        }
        let start = Instant::now();
        let (tx, mut rx) = oneshot::channel();
        let progress = (ctl.progress.is_some() || ctl.reset_on_progress).then(|| {
            Arc::new(ProgressState {
                callback: ctl.progress.clone(),
                notify: Notify::new(),
                last: Mutex::new(None),
            })
        });
        self.shared
            .register(
                id,
                Waiter {
                    reply: Reply::Wake(tx),
                    progress: progress.clone(),
                    since: start,
                    deadline: None,
                    reader,
                },
            )
            .map_err(|e| e.context(ctx()))?;
        let mut guard = PendingGuard {
            client: self,
            id,
            done: false,
        };
        let body = jsonrpc::encode_request(id, &method, Some(params), params_len);
        self.transport
            .send(Outgoing {
                body,
                id: Some(id),
                method: Some(method.clone()),
                headers,
            })
            .map_err(|e| e.context(ctx()))?;

        let timeout = self.timeout_of(ctl);
        let hard_end = ctl.max_total.map(|m| start + m);
        let clamp = |t: Instant| hard_end.map_or(t, |h| t.min(h));
        let sleep = tokio::time::sleep_until(clamp(start + timeout));
        tokio::pin!(sleep);
        let cancelled = async {
            match &ctl.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        loop {
            let progressed = async {
                match (&progress, ctl.reset_on_progress) {
                    (Some(p), true) => p.notify.notified().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    guard.done = true;
                    return match outcome {
                        Ok(Ok(raw)) => Ok(raw),
                        Ok(Err(e)) => Err(e.context(ctx())),
                        Err(_) => Err(self.shared.dropped_error().context(ctx())),
                    };
                }
                _ = &mut cancelled => {
                    if cancellable {
                        self.send_cancel(id, "cancelled by the client");
                    }
                    return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled").context(ctx()));
                }
                _ = &mut sleep => {
                    if cancellable {
                        self.send_cancel(id, "timed out");
                    }
                    let waited = Instant::now().duration_since(start).as_millis();
                    return Err(Error::new(Status::MCPC_ERR_TIMEOUT, format!("timed out after {waited} ms")).context(ctx()));
                }
                _ = progressed => {
                    sleep.as_mut().reset(clamp(Instant::now() + timeout));
                }
            }
        }
    }

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
            let raw = self
                .request(
                    id,
                    "tools/list".into(),
                    &Serialized(&params),
                    None,
                    &page_ctl,
                    true,
                    Vec::new(),
                    0,
                    self.reader_before_modern(Reader::Page),
                )
                .await?;
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

    /// Calls a tool. A result with `isError: true` is returned as `Ok` with
    /// `is_error` set: the caller decides how to report it. Under 2026-07-28 an
    /// `input_required` result is retried with its `requestState`, a new id each
    /// round, up to [`MAX_INPUT_ROUNDS`]. Over HTTP, a call refused for its headers
    /// (-32020) is retried once after listing the tools again.
    pub async fn call_tool(&self, name: &str, arguments: Option<Arguments<'_>>, ctl: &Control) -> Result<CallResult> {
        let wants_progress = ctl.progress.is_some() || ctl.reset_on_progress;
        let ctx = || call_context(name);
        let deadline = Instant::now() + self.timeout_of(ctl);
        let mut state: Option<String> = None;
        let mut responses: Option<Box<RawValue>> = None;
        let mut relisted = false;
        for round in 0..=MAX_INPUT_ROUNDS {
            let id = self.next_id();
            let meta = self.meta(wants_progress.then_some(id));
            let params = CallParams {
                name,
                arguments,
                meta: (!meta.is_empty()).then_some(meta),
                request_state: state.as_deref(),
                input_responses: responses.as_deref(),
            };
            let round_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let headers = self.call_headers(name, arguments);
            let params_len = arguments.map_or(0, |a| a.get().len())
                + responses.as_ref().map_or(0, |r| r.get().len())
                + state.as_ref().map_or(0, String::len);
            let raw = match self
                .request(
                    id,
                    "tools/call".into(),
                    &params,
                    Some(name),
                    &round_ctl,
                    true,
                    headers,
                    params_len,
                    self.reader_before_modern(Reader::Call),
                )
                .await
            {
                // The server wanted headers we did not send: the tool's schema is unknown
                // or changed. Re-list the tools to learn it, and retry once.
                Err(e) if e.status == Status::MCPC_ERR_HEADER_MISMATCH && self.mirrors_params() && !relisted => {
                    relisted = true;
                    let list_ctl = Control {
                        timeout: Some(deadline.saturating_duration_since(Instant::now())),
                        bypass_cache: true, // a kept list is what was wrong
                        ..ctl.clone()
                    };
                    crate::drive::runtime::boxed_apart(|| self.list_tools(&list_ctl))
                        .await
                        .map_err(|le| le.context(ctx()))?;
                    continue;
                }
                other => other?,
            };
            if let Some(round) = self
                .input_round(raw.get(), deadline, ctl.cancel.as_ref(), round == MAX_INPUT_ROUNDS)
                .await
                .map_err(|e| e.context(ctx()))?
            {
                (state, responses) = round;
                continue;
            }
            return result::parse_call_result(raw).map_err(|e| e.context(ctx()));
        }
        Err(too_many_rounds().context(ctx()))
    }
}
