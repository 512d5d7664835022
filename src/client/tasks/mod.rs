//! Tasks: a request the server answers with a task instead of its result, followed
//! to its end inside the same call ([`super::call::Call::run`] hands it to
//! [`follow`]), in both generations: the tasks of 2025-11-25 (the client asks with
//! `params.task`; `tasks/get`, then `tasks/result`) and the tasks extension of
//! 2026-07-28 (the server decides; `tasks/get` carries the result, the error or the
//! input requests, answered with `tasks/update`). Here: the host's preference per
//! call, what it makes of a request, and the tasks this client follows.

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};

mod follow;
pub mod wire;

pub(super) use follow::follow;

use super::followed::Following;
pub use wire::{Generation, Reference, TaskStatus, EXTENSION};

/// The host's preference for a call, with ext-tasks's names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskMode {
    /// A task only where one is needed: under 2025-11-25 for a tool whose
    /// `execution.taskSupport` is `required`; under 2026-07-28 as the host declared
    /// the extension.
    #[default]
    Allow,
    /// Never a task: not asked for, the extension not declared on the request.
    Forbid,
    /// A task wherever the tool or server allows one.
    Prefer,
    /// A task, or the call fails before anything is sent.
    Require,
}

/// A status change of a task a call follows, for the host.
pub struct TaskEvent<'a> {
    /// The task's reference (JSON), to resume it elsewhere.
    pub reference: &'a str,
    pub status: TaskStatus,
    pub message: Option<&'a str>,
}

/// What the host's task callback answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskReply {
    /// Go on following the task.
    Follow,
    /// Stop following it, and leave it running on the server: the call ends with
    /// `MCPC_ERR_TASK_DETACHED`, and the reference resumes it.
    Detach,
}

/// The host's task callback.
pub type TaskFn = Arc<dyn Fn(&TaskEvent<'_>) -> TaskReply + Send + Sync>;

/// A call's task settings.
#[derive(Clone, Default)]
pub struct TaskControl {
    pub mode: TaskMode,
    /// How long following a task may take, from the start of the call; `None`: the
    /// call's timeout covers the task too.
    pub timeout: Option<Duration>,
    pub on_task: Option<TaskFn>,
}

/// What a call's task preference makes of its request.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TaskPlan {
    /// 2025-11-25: send `params.task` (a tool call to run as a task).
    pub(super) ask_v1: bool,
}

/// A tool's `execution.taskSupport` (2025-11-25).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Support {
    Forbidden,
    Optional,
    Required,
}

fn not_supported(why: String) -> Error {
    Error::new(Status::MCPC_ERR_NOT_SUPPORTED, why)
}

impl Client {
    /// Whether a call may skip the task rules (the direct path): a server that runs
    /// no tool call as a task under 2025-11-25, or a call that forbids them.
    pub(super) fn tasks_idle(&self, ctl: &Control) -> bool {
        ctl.task.mode == TaskMode::Forbid
            || (!self.session.capabilities.tasks_tools_call && ctl.task.mode == TaskMode::Allow)
    }

    /// What the call's preference makes of a request: `tool` names the tool of a
    /// `tools/call` that does not carry its own `task`, and is `None` for any other
    /// request. Fails, with nothing sent, where it requires a task the server or the
    /// tool cannot run.
    pub(super) async fn task_plan(&self, tool: Option<&str>, ctl: &Control) -> Result<TaskPlan> {
        let mode = ctl.task.mode;
        if mode == TaskMode::Forbid {
            return Ok(TaskPlan::default());
        }
        if self.is_modern() {
            if mode == TaskMode::Require && !self.session.capabilities.tasks_extension {
                return Err(not_supported(format!(
                    "a task is required, and the server does not offer the extension {EXTENSION}"
                )));
            }
            return Ok(TaskPlan::default());
        }
        let Some(tool) = tool else {
            if mode == TaskMode::Require {
                return Err(not_supported(
                    "a task is required, and only a tool call can become one under this protocol version".into(),
                ));
            }
            return Ok(TaskPlan::default());
        };
        if !self.session.capabilities.tasks_tools_call {
            if mode == TaskMode::Require {
                return Err(not_supported(
                    "a task is required, and the server does not run tool calls as tasks".into(),
                ));
            }
            return Ok(TaskPlan::default());
        }
        let support = self.task_support(tool, ctl).await?;
        let ask_v1 = match (mode, support) {
            (TaskMode::Require, Support::Forbidden) => {
                return Err(not_supported(format!(
                    "a task is required, and the tool {} does not support tasks",
                    quote(tool)
                )))
            }
            (TaskMode::Require, _) | (TaskMode::Prefer, Support::Optional) => true,
            (_, Support::Required) => true,
            _ => false,
        };
        Ok(TaskPlan { ask_v1 })
    }

    /// The tool's `execution.taskSupport`, from the kept listing (listing the tools
    /// first when none is kept); `forbidden` when absent, as the specification says,
    /// and for a tool not listed.
    async fn task_support(&self, tool: &str, ctl: &Control) -> Result<Support> {
        let Some(found) = self.listed_tool(tool, ctl).await? else {
            return Ok(Support::Forbidden);
        };
        #[derive(Deserialize)]
        struct Execution {
            #[serde(rename = "taskSupport")]
            task_support: Option<String>,
        }
        #[derive(Deserialize)]
        struct ToolExecution {
            execution: Option<Execution>,
        }
        let support = serde_json::from_str::<ToolExecution>(found.json())
            .ok()
            .and_then(|t| t.execution?.task_support);
        Ok(match support.as_deref() {
            Some("required") => Support::Required,
            Some("optional") => Support::Optional,
            _ => Support::Forbidden,
        })
    }

    /// The reference of the task `task_id` of an `operation`.
    pub(super) fn task_reference(&self, generation: Generation, task_id: &str, operation: &str) -> Reference {
        Reference {
            endpoint_id: self.options.endpoint.clone(),
            generation: generation.as_str().into(),
            task_id: task_id.into(),
            original_operation: operation.into(),
        }
    }

    /// Follows the task a host kept the reference of, from this client: its outcome
    /// as the original request's. The reference must name this client's endpoint
    /// and the generation of its session.
    pub async fn resume_task(&self, reference: &str, ctl: &Control) -> Result<crate::result::ResultJson> {
        let (r, generation) = Reference::read(reference)?;
        if r.endpoint_id != self.options.endpoint {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "the task reference names another endpoint than this client's",
            ));
        }
        let ours = if self.is_modern() {
            Generation::V2
        } else {
            Generation::V1
        };
        if generation != ours {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                format!(
                    "the task reference is of generation {}, and this session's tasks are of {}",
                    generation.as_str(),
                    ours.as_str()
                ),
            ));
        }
        follow::resume(self, r, generation, ctl).await
    }
}

/// The `params` of a `tasks/*` request for `task_id`.
fn task_params(task_id: &str) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("taskId".into(), Value::String(task_id.into()));
    params
}
