//! Calls started for a completion callback: direct when they can be (no task of
//! their own, see [`super::direct`]), else as a task on the runtime. Either way the
//! completion runs exactly once, on an mcpc thread, and an operation handle can
//! cancel it.

use std::sync::Arc;

use super::op::{direct_op, spawn_op, OpState, OpTracker};
use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};
use crate::result::{parse_arguments, Arguments, CallResult, OwnedArguments};

/// A call's result and, when the tool reported an error (`isError`), the
/// MCPC_ERR_TOOL error that goes with it (the result is still handed out).
pub type CallOutcome = Result<(CallResult, Option<Error>)>;

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

impl Client {
    /// Starts `tools/call name` with `arguments` (a JSON object, or none); `complete`
    /// gets its outcome. `handle`: whether the caller keeps an operation handle; a
    /// direct call without one costs two allocations less, and only a close or its
    /// timeout can end it early. Fails at once, with no completion, on bad arguments
    /// or a client that `tracker` says is closing.
    pub fn call_tool_started<K>(
        self: &Arc<Self>,
        tracker: &Arc<OpTracker>,
        name: &str,
        arguments: Option<&str>,
        mut ctl: Control,
        handle: bool,
        complete: K,
    ) -> Result<Option<Arc<OpState>>>
    where
        K: FnOnce(CallOutcome) + Send + 'static,
    {
        let args = parse_arguments(arguments)?;
        if self.can_call_direct(&ctl) {
            // Only a client that checks output schemas needs itself in the completion.
            let me = self.options.validate_output.then(|| Arc::clone(self));
            // No task: the request goes out now, and the thread that routes the
            // response runs the completion.
            return direct_op(
                tracker,
                handle,
                |done| {
                    self.call_tool_direct(name, args, &ctl, move |outcome, tool| {
                        done.finish(outcome.map(|r| {
                            let err = match &me {
                                Some(me) => me.outcome_error(tool.as_str(), &r),
                                None => r.tool_error(tool.as_str()),
                            };
                            (r, err)
                        }))
                    })
                },
                complete,
            );
        }
        let args = args.map(Arguments::to_owned);
        let client = Arc::clone(self);
        let name = name.to_string();
        let parent = ctl.cancel.take();
        let op = spawn_op(
            Some(tracker),
            parent.as_ref(),
            |token| async move {
                ctl.cancel = Some(token);
                let r = client
                    .call_tool(&name, args.as_ref().map(OwnedArguments::as_arguments), &ctl)
                    .await?;
                let err = client.outcome_error(&name, &r);
                Ok((r, err))
            },
            complete,
        )?;
        Ok(Some(op))
    }
}
