//! The tasks a client's calls follow, by id: a server's `notifications/tasks/status`
//! (routed here by the router) wakes the call that follows its task, and a task id is
//! followed by one call at a time. Apart from [`super::tasks`], so that the router
//! needs nothing of how a task is followed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::Notify;

use crate::error::{quote, Error, Result, Status};

/// A task's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "working" => TaskStatus::Working,
            "input_required" => TaskStatus::InputRequired,
            "completed" => TaskStatus::Completed,
            "failed" => TaskStatus::Failed,
            "cancelled" => TaskStatus::Cancelled,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    pub fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

/// One task a call follows: the status the server's notifications gave it last.
#[derive(Default)]
pub(super) struct Watch {
    pub(super) notify: Notify,
    status: Mutex<Option<TaskStatus>>,
}

/// The tasks this client follows, by id: a server's `notifications/tasks/status`
/// wakes the call that follows one, and a task id is followed by one call at a time.
#[derive(Default)]
pub(crate) struct Followed {
    map: Mutex<HashMap<String, Arc<Watch>>>,
}

/// A task followed, until dropped.
pub(super) struct Following<'a> {
    followed: &'a Followed,
    id: String,
    pub(super) watch: Arc<Watch>,
}

impl Drop for Following<'_> {
    fn drop(&mut self) {
        self.followed.lock().remove(&self.id);
    }
}

impl Following<'_> {
    /// The latest status a notification gave, if any.
    pub(super) fn noted(&self) -> Option<TaskStatus> {
        *self.watch.status.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Followed {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Watch>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts following `id`; refused when another call of this client follows it
    /// (a server that reuses a task id).
    pub(super) fn follow(&self, id: &str) -> Result<Following<'_>> {
        let watch = Arc::new(Watch::default());
        let mut map = self.lock();
        if map.contains_key(id) {
            return Err(Error::new(
                Status::MCPC_ERR_PROTOCOL,
                format!(
                    "the server gave this request the task {}, which another call of this client follows",
                    quote(id)
                ),
            ));
        }
        map.insert(id.to_string(), watch.clone());
        Ok(Following {
            followed: self,
            id: id.to_string(),
            watch,
        })
    }

    /// A `notifications/tasks/status` of the server: wakes the call following the
    /// task, if any. A status never goes back from a terminal one.
    pub(crate) fn note(&self, params: Option<&RawValue>) {
        #[derive(Deserialize)]
        struct Note<'a> {
            #[serde(rename = "taskId", borrow)]
            task_id: std::borrow::Cow<'a, str>,
            #[serde(borrow)]
            status: std::borrow::Cow<'a, str>,
        }
        let Some(note) = params.and_then(|p| serde_json::from_str::<Note<'_>>(p.get()).ok()) else {
            return;
        };
        let Some(watch) = self.lock().get(note.task_id.as_ref()).cloned() else {
            return;
        };
        let Some(status) = TaskStatus::parse(&note.status) else {
            log::debug!(
                "task {}: ignored an unknown status {}",
                quote(&note.task_id),
                quote(&note.status)
            );
            return;
        };
        {
            let mut now = watch.status.lock().unwrap_or_else(|p| p.into_inner());
            if now.is_some_and(TaskStatus::is_terminal) && *now != Some(status) {
                log::debug!("task {}: ignored a status after a terminal one", quote(&note.task_id));
                return;
            }
            *now = Some(status);
        }
        watch.notify.notify_one();
    }
}
