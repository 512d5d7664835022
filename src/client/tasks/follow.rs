//! Following one task to its end: polled with `tasks/get` at the server's interval
//! (clamped, see [`super::wire::poll_delay`]) or sooner when a status notification
//! wakes it; each status change reported once; input requests answered once each;
//! the result fetched (`tasks/result`) or read from the last `tasks/get`; a task left
//! unfinished by a cancel, a timeout or an error cancelled on the server.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::time::Instant;

use super::wire::{Generation, Reference, TaskStatus, TaskView};
use super::{task_params, Following, TaskEvent, TaskMode, TaskReply};
use crate::client::exchange::Exchange;
use crate::client::{Client, Control, MAX_INPUT_ROUNDS};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::{self, Serialized};
use crate::result::ResultJson;
use crate::transport::Outgoing;

/// One task being followed by a call.
struct Follow<'a> {
    client: &'a Client,
    generation: Generation,
    task_id: String,
    reference: String,
    ctl: &'a Control,
    /// When following ends, whatever the task's state.
    deadline: Instant,
    /// The longest one exchange may take (the call's timeout).
    exchange_timeout: Duration,
    /// The last status reported.
    last: Mutex<Option<TaskStatus>>,
    /// Input request keys answered already.
    answered: HashSet<String>,
    /// Rounds of input answered.
    rounds: usize,
    /// The task may still run on the server, so leaving it early cancels it.
    open: AtomicBool,
}

/// Follows the task `first` that a request of `operation` became, to the request's
/// outcome. `started`: when the call began (the task's timeout counts from there).
pub(in crate::client) async fn follow(
    client: &Client,
    first: TaskView,
    generation: Generation,
    operation: &str,
    ctl: &Control,
    started: Instant,
) -> Result<ResultJson> {
    let task_id = first.task_id.clone();
    follow_from(client, &task_id, Some(first), generation, operation, ctl, started).await
}

/// Follows the task of a reference the host kept.
pub(super) async fn resume(client: &Client, r: Reference, generation: Generation, ctl: &Control) -> Result<ResultJson> {
    let (id, op) = (&r.task_id, &r.original_operation);
    follow_from(client, id, None, generation, op, ctl, Instant::now()).await
}

/// Follows the task `task_id` from `first`, or from a `tasks/get` first (a task that
/// is gone then is not cancelled: nothing runs); a task left early is cancelled.
async fn follow_from(
    client: &Client,
    task_id: &str,
    first: Option<TaskView>,
    generation: Generation,
    operation: &str,
    ctl: &Control,
    started: Instant,
) -> Result<ResultJson> {
    let following = client.shared.tasks.follow(task_id)?;
    let mut f = Follow::new(client, generation, task_id, operation, ctl, started);
    let first = match first {
        Some(view) => view,
        None => f.get().await?,
    };
    let out = f.run(first, &following).await;
    f.close(&out);
    out
}

impl<'a> Follow<'a> {
    fn new(
        client: &'a Client,
        generation: Generation,
        task_id: &str,
        operation: &str,
        ctl: &'a Control,
        started: Instant,
    ) -> Self {
        let timeout = client.timeout_of(ctl);
        Follow {
            client,
            generation,
            task_id: task_id.to_string(),
            reference: client.task_reference(generation, task_id, operation).to_json(),
            ctl,
            deadline: started + ctl.task.timeout.unwrap_or(timeout),
            exchange_timeout: timeout,
            last: Mutex::new(None),
            answered: HashSet::new(),
            rounds: 0,
            open: AtomicBool::new(true),
        }
    }

    /// The last status reported.
    fn last(&self) -> Option<TaskStatus> {
        *self.last.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn context(&self) -> String {
        format!("task {}", quote(&self.task_id))
    }

    async fn run(&mut self, first: TaskView, following: &Following<'_>) -> Result<ResultJson> {
        let mut view = first;
        loop {
            if view.task_id != self.task_id {
                return Err(Error::new(
                    Status::MCPC_ERR_PROTOCOL,
                    format!("the server answered for the task {}", quote(&view.task_id)),
                )
                .context(self.context()));
            }
            let status = self.status_of(&view, following);
            if self.last() != Some(status) {
                let message = if view.status == status {
                    view.message.as_deref()
                } else {
                    None
                };
                self.report(status, message)?;
            }
            match (self.generation, status) {
                (_, TaskStatus::Cancelled) => {
                    self.open.store(false, Ordering::Relaxed);
                    return Err(
                        Error::new(Status::MCPC_ERR_CANCELLED, "the task was cancelled on the server")
                            .context(self.context()),
                    );
                }
                // Under 2025-11-25 the result comes from `tasks/result`, which also
                // carries the input the server queued for a task that needs it.
                (Generation::V1, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::InputRequired) => {
                    return self.result_v1(following).await;
                }
                (Generation::V2, TaskStatus::Completed) => {
                    self.open.store(false, Ordering::Relaxed);
                    return view.result.take().map(ResultJson::from).ok_or_else(|| {
                        Error::new(Status::MCPC_ERR_PROTOCOL, "the completed task carries no result")
                            .context(self.context())
                    });
                }
                (Generation::V2, TaskStatus::Failed) => {
                    self.open.store(false, Ordering::Relaxed);
                    let e = match view.error.take() {
                        Some(e) => jsonrpc::rpc_error(e),
                        None => Error::new(Status::MCPC_ERR_PROTOCOL, "the task failed, and carries no error"),
                    };
                    return Err(e.context(self.context()));
                }
                (Generation::V2, TaskStatus::InputRequired) => {
                    if let Some(requests) = view.input_requests.take() {
                        self.answer(requests).await?;
                    }
                }
                (_, TaskStatus::Working) => {}
            }
            self.wait(view.poll, following).await?;
            view = self.get().await?;
        }
    }

    /// The status to act on: the view's, unless a terminal one was seen already (a
    /// status never goes back from one) or a notification said the task ended.
    fn status_of(&self, view: &TaskView, following: &Following<'_>) -> TaskStatus {
        if let Some(last) = self.last().filter(|s| s.is_terminal()) {
            return last;
        }
        match following.noted() {
            Some(noted) if noted.is_terminal() && !view.status.is_terminal() => noted,
            _ => view.status,
        }
    }

    /// Under 2025-11-25: `tasks/result`, which the server answers when the task ends
    /// (and which carries the input it queued meanwhile). The status notifications
    /// that come while it is pending are reported; its answer ends the task.
    async fn result_v1(&self, following: &Following<'_>) -> Result<ResultJson> {
        let ask = self.ask("tasks/result", task_params(&self.task_id), self.left()?);
        tokio::pin!(ask);
        let out = loop {
            tokio::select! {
                out = &mut ask => break out,
                _ = following.watch.notify.notified() => {
                    if let Some(noted) = following.noted().filter(|s| Some(*s) != self.last()) {
                        self.report(noted, None)?;
                    }
                }
            }
        };
        self.open.store(false, Ordering::Relaxed);
        let json = out.map_err(|e| e.context(self.context()))?;
        if !self.last().is_some_and(TaskStatus::is_terminal) {
            let end = following
                .noted()
                .filter(|s| s.is_terminal())
                .unwrap_or(TaskStatus::Completed);
            self.report(end, None)?;
        }
        Ok(json)
    }

    /// Tells the call's task callback of a status change. (The notification callback
    /// gets only what the server sends: it runs on the router's thread, one call at a
    /// time, which a call's own thread must not break.)
    fn report(&self, status: TaskStatus, message: Option<&str>) -> Result<()> {
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(status);
        let Some(cb) = &self.ctl.task.on_task else {
            return Ok(());
        };
        let event = TaskEvent {
            reference: &self.reference,
            status,
            message,
        };
        let reply = {
            let _scope = crate::drive::runtime::CallbackScope::enter();
            cb(&event)
        };
        if reply == TaskReply::Detach && !status.is_terminal() {
            self.open.store(false, Ordering::Relaxed);
            return Err(Error::new(
                Status::MCPC_ERR_TASK_DETACHED,
                "the call stopped following the task, which runs on; its reference resumes it",
            )
            .context(self.context()));
        }
        Ok(())
    }

    /// Answers the input requests not answered yet, with `tasks/update`.
    async fn answer(&mut self, requests: Map<String, Value>) -> Result<()> {
        let fresh: Map<String, Value> = requests
            .into_iter()
            .filter(|(key, _)| !self.answered.contains(key))
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        if self.rounds == MAX_INPUT_ROUNDS {
            return Err(crate::client::input::rounds::too_many_rounds().context(self.context()));
        }
        self.rounds += 1;
        let answers = self
            .client
            .answer_inputs(&fresh, self.deadline, self.ctl.cancel.as_ref())
            .await
            .map_err(|e| e.context(self.context()))?;
        self.answered.extend(fresh.into_iter().map(|(key, _)| key));
        let mut params = task_params(&self.task_id);
        let answers: Value = serde_json::from_str(answers.get()).expect("the answers are JSON");
        params.insert("inputResponses".into(), answers);
        let timeout = self.exchange_timeout.min(self.left()?);
        self.ask("tasks/update", params, timeout)
            .await
            .map_err(|e| e.context(self.context()))?;
        Ok(())
    }

    /// Waits for the next poll: the interval, a status notification that changes the
    /// status, the end of the task's time, a cancel, or the connection's end. Only a
    /// notification that came during this wait counts: one a poll contradicted must
    /// not make the next wait end at once, or a server could make the client spin.
    async fn wait(&self, delay: Duration, following: &Following<'_>) -> Result<()> {
        let until = (Instant::now() + delay).min(self.deadline);
        let before = following.noted();
        let cancelled = async {
            match &self.ctl.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        let sleep = tokio::time::sleep_until(until);
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                _ = &mut sleep => break,
                // A notification that repeats the status is the task's state: no poll.
                _ = following.watch.notify.notified() => {
                    let noted = following.noted();
                    if noted != before && noted.is_some_and(|s| Some(s) != self.last()) {
                        break;
                    }
                }
                _ = &mut cancelled => {
                    return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled").context(self.context()));
                }
                _ = self.client.shared.gone.cancelled() => {
                    return Err(self.client.shared.dropped_error().context(self.context()));
                }
            }
        }
        self.left().map(drop)
    }

    /// The time left to follow the task; a timeout error when none is.
    fn left(&self) -> Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let limit = if self.ctl.task.timeout.is_some() {
                "the task's timeout"
            } else {
                "the call's timeout"
            };
            return Err(
                Error::new(Status::MCPC_ERR_TIMEOUT, format!("the task did not end within {limit}"))
                    .context(self.context()),
            );
        }
        Ok(left)
    }

    /// `tasks/get`: the task as it is now.
    async fn get(&self) -> Result<TaskView> {
        let timeout = self.exchange_timeout.min(self.left()?);
        let json = self
            .ask("tasks/get", task_params(&self.task_id), timeout)
            .await
            .map_err(|e| e.context(self.context()))?;
        TaskView::read(json.get(), self.generation).map_err(|e| e.context(self.context()))
    }

    /// One `tasks/*` exchange, with the client's envelope under 2026-07-28 (the
    /// tasks extension declared, as its servers ask of every `tasks/*` request).
    async fn ask(&self, method: &'static str, params: Map<String, Value>, timeout: Duration) -> Result<ResultJson> {
        let client = self.client;
        let id = client.next_id();
        let params = self.enveloped(params);
        let x = Exchange {
            headers: client.named_headers(method, &params),
            ..Exchange::new(id, method)
        };
        let ctl = Control {
            timeout: Some(timeout),
            cancel: self.ctl.cancel.clone(),
            ..Control::default()
        };
        client.exchange(x, &Serialized(&params), &ctl).await
    }

    /// `params` with the client's `_meta` envelope, where it has one.
    fn enveloped(&self, mut params: Map<String, Value>) -> Map<String, Value> {
        let meta = self.client.meta_for(None, TaskMode::Prefer);
        if !meta.is_empty() {
            crate::client::generic::merge_meta(&mut params, serde_json::to_value(&meta).expect("_meta serializes"));
        }
        params
    }

    /// After the outcome `out`: a task left early is cancelled on the server. Its
    /// answer is not awaited (the call has ended), so nothing here can hang.
    fn close(&self, out: &Result<ResultJson>) {
        if !self.open.load(Ordering::Relaxed) || out.is_ok() || self.client.is_closed() {
            return;
        }
        let client = self.client;
        let params = self.enveloped(task_params(&self.task_id));
        let id = client.next_id();
        let headers = client.named_headers("tasks/cancel", &params);
        let body = jsonrpc::encode_request(id, "tasks/cancel", Some(&Serialized(&params)), 0);
        let sent = client.transport.send(Outgoing {
            body,
            id: Some(id),
            method: Some("tasks/cancel".into()),
            headers,
        });
        if let Err(e) = sent {
            log::debug!("could not cancel {}: {e}", self.context());
        }
    }
}
