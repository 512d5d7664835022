//! One call: a request from its id to its result, for tool calls, the typed
//! requests and the generic request alike.
//!
//! A [`Call`] owns what a request goes through: the pending entry and its deadline,
//! cancellation (with `notifications/cancelled`), progress and its timeout reset
//! ([`super::exchange`]), the `input_required` rounds of 2026-07-28 (before it the
//! server's input requests reach the router's inbox while the call waits), a tool
//! call refused for its headers (-32020) relisted and sent again once, and the
//! reading of a tool's result ([`read_tool`]). It runs for a caller blocked on its
//! own thread ([`Call::wait`]: the direct path of
//! docs/decisions/0005-direct-blocking-call.md when nothing needs a task, else
//! [`Call::run`]) or for a completion ([`Call::start`]: direct, or spawned as an
//! operation that runs [`Call::run`]). A result that is a task is followed in
//! [`Call::run`] ([`super::tasks`]), between one exchange and the reading of the result.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::direct::{expire_deadlines, DirectCall};
use super::exchange::Exchange;
use super::input::rounds::{too_many_rounds, Next};
use super::op::{direct_op, spawn_op, OpState, OpTracker};
use super::router::{PendingGuard, Reader, Reply};
use super::tasks::wire::{Generation, TaskView};
use super::tools::{call_context, CallParams};
use super::{Client, Completion, Control, MAX_INPUT_ROUNDS};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::{self, Serialized};
use crate::result::{self, Arguments, CallResult, OwnedArguments, ResultJson};
use crate::transport::Outgoing;

/// What a call asks of the server.
#[derive(Clone, Copy)]
pub enum Ask<'a> {
    /// `tools/call` of the tool `name`: its params written as they are (no serde),
    /// its result read as a `CallToolResult`.
    Tool {
        name: &'a str,
        arguments: Option<Arguments<'a>>,
    },
    /// Any other method with its params (an object; the client's `_meta` is merged
    /// in). `reader` says what the router may read the result as.
    Method {
        method: &'a str,
        params: &'a Map<String, Value>,
        reader: Reader,
    },
}

/// [`Ask`], owned: what a call started as a task of its own keeps.
enum OwnedAsk {
    Tool {
        name: String,
        arguments: Option<OwnedArguments>,
    },
    Method {
        method: String,
        params: Map<String, Value>,
        reader: Reader,
    },
}

impl OwnedAsk {
    fn of(ask: Ask<'_>) -> Self {
        match ask {
            Ask::Tool { name, arguments } => OwnedAsk::Tool {
                name: name.to_string(),
                arguments: arguments.map(Arguments::to_owned),
            },
            Ask::Method { method, params, reader } => OwnedAsk::Method {
                method: method.to_string(),
                params: params.clone(),
                reader,
            },
        }
    }

    fn ask(&self) -> Ask<'_> {
        match self {
            OwnedAsk::Tool { name, arguments } => Ask::Tool {
                name,
                arguments: arguments.as_ref().map(OwnedArguments::as_arguments),
            },
            OwnedAsk::Method { method, params, reader } => Ask::Method {
                method,
                params,
                reader: *reader,
            },
        }
    }
}

/// What a call's errors name: a tool, or a method. Kept inline when short (most
/// are), so that a call that succeeds formats and allocates nothing for it.
pub struct Target {
    tool: bool,
    text: smallvec::SmallVec<[u8; 32]>,
}

impl Target {
    fn of(ask: &Ask<'_>) -> Self {
        let (tool, text) = match ask {
            Ask::Tool { name, .. } => (true, *name),
            Ask::Method { method, .. } => (false, *method),
        };
        Target {
            tool,
            text: smallvec::SmallVec::from_slice(text.as_bytes()),
        }
    }

    /// The tool's name, or the method.
    pub fn name(&self) -> &str {
        // A copy of a `&str`, so always UTF-8.
        std::str::from_utf8(&self.text).unwrap_or_default()
    }

    /// What the call's errors are prefixed with.
    pub fn context(&self) -> String {
        if self.tool {
            call_context(self.name())
        } else {
            self.name().to_string()
        }
    }
}

impl CallResult {
    /// The MCPC_ERR_TOOL error of a result with `isError: true`, naming the tool.
    pub fn tool_error(&self, name: &str) -> Option<Error> {
        self.is_error.then(|| {
            Error::new(
                Status::MCPC_ERR_TOOL,
                format!(
                    "tools/call {}: the tool reported an error: {}",
                    quote(name),
                    quote(self.text_str())
                ),
            )
        })
    }
}

/// A tool call's outcome as its caller gets it: the result read, or the error with
/// the call's context.
pub fn read_tool(outcome: Result<ResultJson>, name: &str) -> Result<CallResult> {
    outcome.and_then(|json| result::parse_call_result(json).map_err(|e| e.context(call_context(name))))
}

/// One call of a client: what it asks, under which control.
pub struct Call<'a> {
    client: &'a Client,
    ask: Ask<'a>,
    ctl: &'a Control,
}

impl<'a> Call<'a> {
    pub fn new(client: &'a Client, ask: Ask<'a>, ctl: &'a Control) -> Self {
        Call { client, ask, ctl }
    }

    fn context(&self) -> String {
        Target::of(&self.ask).context()
    }

    /// The outcome, for a caller that waits for it on its own thread: direct when the
    /// call can be (no timer of its own, no select; its deadline one of the client's),
    /// else [`run`](Self::run). Errors carry the call's context.
    pub async fn wait(&self) -> Result<ResultJson> {
        if !self.client.can_call_direct(self.ctl) {
            return self.run().await;
        }
        let (tx, rx) = oneshot::channel();
        let id = self.client.start_direct(self.ask, self.ctl, Reply::Wake(tx));
        // Ends the call if this future is dropped first.
        let mut guard = PendingGuard {
            client: self.client,
            id,
            done: false,
        };
        let outcome = rx.await;
        guard.done = true;
        outcome
            .unwrap_or_else(|_| Err(self.client.shared.dropped_error()))
            .map_err(|e| e.context(self.context()))
    }

    /// The general path: each round one exchange, until the result is complete.
    /// Under 2026-07-28 an `input_required` result is answered and sent again with its
    /// `requestState`, a new id each round, up to [`MAX_INPUT_ROUNDS`]; the timeout
    /// covers every round. Over HTTP, a tool call refused for its headers (-32020) is
    /// sent again once after listing the tools again. Errors carry the call's context.
    pub async fn run(&self) -> Result<ResultJson> {
        let (client, ctl) = (self.client, self.ctl);
        let wants_progress = ctl.progress.is_some() || ctl.reset_on_progress;
        let started = Instant::now();
        let deadline = started + client.timeout_of(ctl);
        let tool = match self.ask {
            Ask::Tool { name, .. } => Some(name),
            Ask::Method { method, params, .. } if method == "tools/call" && !params.contains_key("task") => {
                params.get("name").and_then(Value::as_str)
            }
            Ask::Method { .. } => None,
        };
        let plan = client
            .task_plan(tool, ctl)
            .await
            .map_err(|e| e.context(self.context()))?;
        let mut state: Option<String> = None;
        let mut responses: Option<Box<RawValue>> = None;
        let mut relisted = false;
        for round in 0..=MAX_INPUT_ROUNDS {
            let id = client.next_id();
            let meta = client.meta_for(wants_progress.then_some(id), ctl.task.mode);
            let round_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let sent = match self.ask {
                Ask::Tool { name, arguments } => {
                    let params = CallParams {
                        name,
                        arguments,
                        meta: (!meta.is_empty()).then_some(meta),
                        request_state: state.as_deref(),
                        input_responses: responses.as_deref(),
                        task: plan.ask_v1,
                    };
                    let x = Exchange {
                        target: Some(name),
                        headers: client.call_headers(name, arguments),
                        params_len: arguments.map_or(0, |a| a.get().len())
                            + responses.as_ref().map_or(0, |r| r.get().len())
                            + state.as_ref().map_or(0, String::len),
                        reader: client.reader_before_modern(Reader::Call),
                        ..Exchange::new(id, "tools/call")
                    };
                    client.exchange(x, &params, &round_ctl).await
                }
                Ask::Method { method, params, reader } => {
                    let mut params_now = params.clone();
                    super::generic::merge_meta(&mut params_now, serde_json::to_value(&meta).expect("_meta serializes"));
                    if let Some(s) = &state {
                        params_now.insert("requestState".into(), Value::String(s.clone()));
                    }
                    if let Some(r) = &responses {
                        let value = serde_json::from_str(r.get()).expect("input responses are JSON");
                        params_now.insert("inputResponses".into(), value);
                    }
                    if plan.ask_v1 {
                        params_now.insert("task".into(), Value::Object(Map::new()));
                    }
                    let x = Exchange {
                        headers: client.named_headers(method, params),
                        reader,
                        ..Exchange::new(id, Cow::Owned(method.to_string()))
                    };
                    client.exchange(x, &Serialized(&params_now), &round_ctl).await
                }
            };
            let json = match sent {
                // The server wanted headers we did not send: the tool's schema is unknown
                // or changed. List the tools again to learn it, and send the call once more.
                Err(e)
                    if e.status == Status::MCPC_ERR_HEADER_MISMATCH
                        && matches!(self.ask, Ask::Tool { .. })
                        && client.mirrors_params()
                        && !relisted =>
                {
                    relisted = true;
                    let list_ctl = Control {
                        timeout: Some(deadline.saturating_duration_since(Instant::now())),
                        bypass_cache: true, // a kept list is what was wrong
                        ..ctl.clone()
                    };
                    crate::drive::runtime::boxed_apart(|| client.list_tools(&list_ctl))
                        .await
                        .map_err(|le| le.context(self.context()))?;
                    continue;
                }
                other => other?,
            };
            if !client.is_modern() {
                // Under 2025-11-25 a request that asked for a task gets one, or its
                // result if the server ran it at once.
                let asked = plan.ask_v1
                    || matches!(self.ask, Ask::Method { params, .. } if params.get("task").is_some_and(Value::is_object));
                if asked {
                    if let Some(task) = TaskView::created_v1(json.get()).map_err(|e| e.context(self.context()))? {
                        return self.follow(task, Generation::V1, started).await;
                    }
                }
                return Ok(json);
            }
            // Any result may ask for input from 2026-07-28 on: a method's result is
            // checked whole first; a tool's is read as a call result after.
            let json = match self.ask {
                Ask::Method { .. } => json.into_raw().map_err(|e| e.context(self.context()))?.into(),
                Ask::Tool { .. } => json,
            };
            match client
                .input_round(json.get(), deadline, ctl.cancel.as_ref(), round == MAX_INPUT_ROUNDS)
                .await
                .map_err(|e| e.context(self.context()))?
            {
                Next::Round(next) => {
                    (state, responses) = next;
                    continue;
                }
                Next::Task => {
                    let task = TaskView::read(json.get(), Generation::V2).map_err(|e| e.context(self.context()))?;
                    return self.follow(task, Generation::V2, started).await;
                }
                Next::Complete => return Ok(json),
            }
        }
        Err(too_many_rounds().context(self.context()))
    }

    /// Follows the task the request became to the request's outcome.
    async fn follow(&self, task: TaskView, generation: Generation, started: Instant) -> Result<ResultJson> {
        let operation = match self.ask {
            Ask::Tool { .. } => "tools/call",
            Ask::Method { method, .. } => method,
        };
        let follow = super::tasks::follow(self.client, task, generation, operation, self.ctl, started);
        crate::drive::runtime::boxed_apart(|| follow)
            .await
            .map_err(|e| e.context(self.context()))
    }

    /// Starts the call for a completion: `complete` gets its outcome (errors with the
    /// call's context) and its target, exactly once, on an mcpc thread. Direct when
    /// the call can be (the thread that routes the response completes it, with no
    /// task in between), else spawned as an operation running [`run`](Self::run).
    /// `handle`: whether the caller keeps an operation handle; a direct call without
    /// one costs two allocations less, and only a close or its timeout can end it
    /// early. `what` names the operation if it ends without completing (a panic).
    /// Fails at once, with no completion, when `tracker` says the client is closing.
    pub fn start<K>(
        client: &Arc<Client>,
        ask: Ask<'_>,
        mut ctl: Control,
        tracker: &Arc<OpTracker>,
        handle: bool,
        what: &'static str,
        complete: K,
    ) -> Result<Option<Arc<OpState>>>
    where
        K: FnOnce(Result<ResultJson>, &Target) + Send + 'static,
    {
        let target = Target::of(&ask);
        if client.can_call_direct(&ctl) {
            // The router's outcome has no context yet (run's has).
            let finish = move |outcome: Result<ResultJson>| {
                let outcome = outcome.map_err(|e| e.context(target.context()));
                complete(outcome, &target)
            };
            // No task: the request goes out now, and the thread that routes the
            // response runs the completion.
            return direct_op(
                tracker,
                handle,
                what,
                |done| {
                    let completion: Completion = Box::new(move |outcome| {
                        crate::inject::point("direct", what);
                        done.finish(outcome)
                    });
                    let id = client.start_direct(ask, &ctl, Reply::Call(completion));
                    DirectCall::new(id, client)
                },
                finish,
            );
        }
        let owned = OwnedAsk::of(ask);
        let client = Arc::clone(client);
        let parent = ctl.cancel.take();
        let op = spawn_op(
            Some(tracker),
            parent.as_ref(),
            what,
            |token| async move {
                ctl.cancel = Some(token);
                Call::new(&client, owned.ask(), &ctl).run().await
            },
            move |outcome| complete(outcome, &target),
        )?;
        Ok(Some(op))
    }
}

impl Client {
    /// A request of `method` with `params` that the client makes for itself, waited
    /// for as a [`Call`]: its result as any JSON.
    pub(super) async fn request_method(
        &self,
        method: &str,
        params: &Map<String, Value>,
        ctl: &Control,
    ) -> Result<ResultJson> {
        let ask = Ask::Method {
            method,
            params,
            reader: Reader::Json,
        };
        Call::new(self, ask, ctl).wait().await
    }

    /// True when a call with these controls can be direct (see [`super::call::Call`]):
    /// a session before 2026-07-28 (no `input_required` rounds), no progress, no
    /// cancellation token (a direct call is cancelled through its [`DirectCall`]),
    /// and no task to ask for or follow.
    pub(super) fn can_call_direct(&self, ctl: &Control) -> bool {
        ctl.progress.is_none()
            && !ctl.reset_on_progress
            && ctl.cancel.is_none()
            && !self.is_modern()
            && self.tasks_idle(ctl)
    }

    /// Registers and sends a direct request, whose outcome goes to `reply`: from the
    /// thread that routes its response, from the deadline task when its timeout
    /// passes (which also tells the server), or at once if the client is closed or
    /// the request could not be sent. Its id.
    pub(super) fn start_direct(&self, ask: Ask<'_>, ctl: &Control, reply: Reply) -> i64 {
        let id = self.next_id();
        let (method, body, reader) = match ask {
            Ask::Tool { name, arguments } => {
                let params = CallParams {
                    name,
                    arguments,
                    meta: None,
                    request_state: None,
                    input_responses: None,
                    task: false,
                };
                let len = arguments.map_or(0, |a| a.get().len());
                let body = jsonrpc::encode_request(id, "tools/call", Some(&params), len);
                (Cow::Borrowed("tools/call"), body, Reader::Call)
            }
            // Before 2026-07-28 with no progress token, the client's `_meta` is empty.
            Ask::Method { method, params, reader } => {
                let body = jsonrpc::encode_request(id, method, Some(&Serialized(params)), 0);
                (Cow::Owned(method.to_string()), body, reader)
            }
        };
        let timeout = self.timeout_of(ctl);
        let Some(start_task) = self.shared.register_direct(id, timeout, reply, reader) else {
            return id;
        };
        if start_task {
            crate::drive::runtime::handle()
                .spawn(expire_deadlines(self.shared.clone(), Arc::downgrade(&self.transport)));
        }
        let sent = self.transport.send(Outgoing {
            body,
            id: Some(id),
            method: Some(method),
            headers: Vec::new(),
        });
        if let Err(e) = sent {
            if let Some(w) = self.shared.take(id) {
                w.complete(Err(e), false);
            }
        }
        id
    }
}
