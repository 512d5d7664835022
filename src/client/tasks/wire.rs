//! What tasks look like on the wire, in both generations: the task a creation or a
//! `tasks/get` carries, its status, its poll interval (clamped), and the reference
//! a host keeps to resume a task from another client.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{quote, Error, Result, Status as Code};
use crate::jsonrpc::RpcError;

pub use crate::protocol::TASKS_EXTENSION as EXTENSION;

/// Which tasks a task is: those of 2025-11-25 (`v1`: `params.task`, `tasks/result`)
/// or the extension's (`v2`: `resultType: "task"`, `tasks/update`). The names are
/// ext-tasks's, so that its references and ours read alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    V1,
    V2,
}

impl Generation {
    pub fn as_str(self) -> &'static str {
        match self {
            Generation::V1 => "v1",
            Generation::V2 => "v2",
        }
    }
}

pub use crate::client::followed::TaskStatus;

/// The poll interval when the server gives none.
pub const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The shortest wait between polls, whatever the server asks: a 0 or a negative
/// interval must not make the client spin.
pub const MIN_POLL: Duration = Duration::from_millis(100);
/// The longest: an enormous interval must not stall a task that is done.
pub const MAX_POLL: Duration = Duration::from_secs(5);

/// The wait before the next poll for the interval the server sent (in ms), within
/// [`MIN_POLL`] and [`MAX_POLL`]; [`DEFAULT_POLL`] for none or one that is no number.
pub fn poll_delay(interval: Option<&Value>) -> Duration {
    let Some(ms) = interval.and_then(Value::as_f64) else {
        return DEFAULT_POLL;
    };
    if ms.is_nan() || ms < MIN_POLL.as_millis() as f64 {
        return MIN_POLL; // negatives too
    }
    if ms >= MAX_POLL.as_millis() as f64 {
        return MAX_POLL;
    }
    Duration::from_millis(ms as u64)
}

/// One view of a task: what a creation or a `tasks/get` said of it.
#[derive(Debug)]
pub struct TaskView {
    pub task_id: String,
    pub status: TaskStatus,
    pub message: Option<String>,
    /// The wait before the next poll, clamped.
    pub poll: Duration,
    /// `v2`, completed: the request's result.
    pub result: Option<Box<RawValue>>,
    /// `v2`, failed: the request's error.
    pub error: Option<RpcError>,
    /// `v2`, input_required: the input requests, by key.
    pub input_requests: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct Fields {
    #[serde(rename = "taskId")]
    task_id: Option<Value>,
    status: Option<Value>,
    #[serde(rename = "statusMessage", default)]
    status_message: Option<Value>,
    #[serde(rename = "pollInterval", default)]
    poll_v1: Option<Value>,
    #[serde(rename = "pollIntervalMs", default)]
    poll_v2: Option<Value>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Box<RawValue>>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<Value>,
}

fn malformed(why: impl std::fmt::Display) -> Error {
    Error::new(
        Code::MCPC_ERR_PROTOCOL,
        format!("the server sent a malformed task: {why}"),
    )
}

impl TaskView {
    /// Reads a task object (`v1`'s `task` or `tasks/get` result, `v2`'s result).
    pub fn read(json: &str, generation: Generation) -> Result<TaskView> {
        let f: Fields = serde_json::from_str(json).map_err(malformed)?;
        let task_id = match f.task_id {
            Some(Value::String(s)) if !s.is_empty() => s,
            _ => return Err(malformed("its taskId is missing or not a non-empty string")),
        };
        let status = match &f.status {
            Some(Value::String(s)) => {
                TaskStatus::parse(s).ok_or_else(|| malformed(format!("unknown status {}", quote(s))))?
            }
            _ => return Err(malformed("its status is missing or not a string")),
        };
        let message = match f.status_message {
            Some(Value::String(s)) => Some(s),
            _ => None,
        };
        let poll = poll_delay(match generation {
            Generation::V1 => f.poll_v1.as_ref(),
            Generation::V2 => f.poll_v2.as_ref(),
        });
        let error = match f.error {
            Some(e) => {
                Some(serde_json::from_str::<RpcError>(e.get()).map_err(|e| malformed(format!("its error: {e}")))?)
            }
            None => None,
        };
        let input_requests = match f.input_requests {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => return Err(malformed("its inputRequests is not an object")),
        };
        Ok(TaskView {
            task_id,
            status,
            message,
            poll,
            result: f.result,
            error,
            input_requests,
        })
    }

    /// `v1`: the task of a `CreateTaskResult` (`{"task": {...}}`), if the result is one.
    pub fn created_v1(result: &str) -> Result<Option<TaskView>> {
        #[derive(Deserialize)]
        struct Created<'a> {
            #[serde(borrow, default)]
            task: Option<&'a RawValue>,
        }
        let c: Created<'_> = serde_json::from_str(result).map_err(malformed)?;
        c.task.map(|t| TaskView::read(t.get(), Generation::V1)).transpose()
    }
}

/// What a host keeps of a running task to resume it later, from another client or
/// another process: ext-tasks's reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    #[serde(rename = "endpointId")]
    pub endpoint_id: String,
    pub generation: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "originalOperation")]
    pub original_operation: String,
}

impl Reference {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a reference serializes")
    }

    /// Reads a reference the host kept; its generation as [`Generation`].
    pub fn read(json: &str) -> Result<(Reference, Generation)> {
        let r: Reference = serde_json::from_str(json).map_err(|e| {
            Error::new(
                Code::MCPC_ERR_INVALID_ARG,
                format!("the task reference is malformed: {e}"),
            )
        })?;
        let generation = match r.generation.as_str() {
            "v1" => Generation::V1,
            "v2" => Generation::V2,
            other => {
                return Err(Error::new(
                    Code::MCPC_ERR_INVALID_ARG,
                    format!("the task reference has an unknown generation {}", quote(other)),
                ))
            }
        };
        if r.task_id.is_empty() || r.original_operation.is_empty() {
            return Err(Error::new(
                Code::MCPC_ERR_INVALID_ARG,
                "the task reference lacks its taskId or originalOperation",
            ));
        }
        Ok((r, generation))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hostile_poll_intervals_are_clamped() {
        assert_eq!(poll_delay(None), DEFAULT_POLL);
        assert_eq!(poll_delay(Some(&json!("soon"))), DEFAULT_POLL);
        assert_eq!(poll_delay(Some(&json!(0))), MIN_POLL);
        assert_eq!(poll_delay(Some(&json!(-5))), MIN_POLL);
        assert_eq!(poll_delay(Some(&json!(1e300))), MAX_POLL);
        assert_eq!(poll_delay(Some(&json!(1_000_000_000_000i64))), MAX_POLL);
        assert_eq!(poll_delay(Some(&json!(500))), Duration::from_millis(500));
        assert_eq!(poll_delay(Some(&json!(250.7))), Duration::from_millis(250));
    }

    #[test]
    fn views_of_both_generations() {
        let v1 = r#"{"task":{"taskId":"t1","status":"working","ttl":300000,"pollInterval":1000,"statusMessage":"go"}}"#;
        let t = TaskView::created_v1(v1).unwrap().unwrap();
        assert_eq!(
            (t.task_id.as_str(), t.status, t.poll),
            ("t1", TaskStatus::Working, Duration::from_secs(1))
        );
        assert_eq!(t.message.as_deref(), Some("go"));
        assert!(TaskView::created_v1(r#"{"content":[]}"#).unwrap().is_none());

        let v2 = r#"{"resultType":"complete","taskId":"t2","status":"completed","pollIntervalMs":500,
                     "result":{"content":[],"resultType":"complete"}}"#;
        let t = TaskView::read(v2, Generation::V2).unwrap();
        assert_eq!(t.status, TaskStatus::Completed);
        assert_eq!(t.poll, Duration::from_millis(500));
        assert!(t.result.unwrap().get().contains("content"));

        let failed = r#"{"taskId":"t3","status":"failed","error":{"code":-32603,"message":"no"}}"#;
        assert_eq!(
            TaskView::read(failed, Generation::V2).unwrap().error.unwrap().code,
            -32603
        );
    }

    #[test]
    fn malformed_tasks_are_protocol_errors() {
        for bad in [
            r#"{"status":"working"}"#,
            r#"{"taskId":"","status":"working"}"#,
            r#"{"taskId":5,"status":"working"}"#,
            r#"{"taskId":"t","status":"exploded"}"#,
            r#"{"taskId":"t"}"#,
            r#"{"taskId":"t","status":"input_required","inputRequests":[1]}"#,
            r#"{"taskId":"t","status":"failed","error":"no"}"#,
            r#"[1]"#,
        ] {
            let e = TaskView::read(bad, Generation::V2).unwrap_err();
            assert_eq!(e.status, Code::MCPC_ERR_PROTOCOL, "{bad}");
        }
    }

    #[test]
    fn references_round_trip() {
        let r = Reference {
            endpoint_id: "http://127.0.0.1:1/mcp".into(),
            generation: "v2".into(),
            task_id: "t".into(),
            original_operation: "tools/call".into(),
        };
        let (back, g) = Reference::read(&r.to_json()).unwrap();
        assert_eq!((back, g), (r, Generation::V2));
        for bad in [
            "{}",
            r#"{"endpointId":"e","generation":"v3","taskId":"t","originalOperation":"tools/call"}"#,
            r#"{"endpointId":"e","generation":"v1","taskId":"","originalOperation":"tools/call"}"#,
            "not json",
        ] {
            assert_eq!(Reference::read(bad).unwrap_err().status, Code::MCPC_ERR_INVALID_ARG);
        }
    }
}
