//! The check of a call's `structuredContent` against its tool's `outputSchema`
//! (the specification's SHOULD), when the options ask for it: schemas compiled from
//! the last tool listing, a mismatch its own status with the result still handed
//! out, and never a check of an `isError` result.

use std::collections::HashMap;
use std::sync::Arc;

use super::Client;
use crate::error::{quote, Error, Status};
use crate::result::output_schema::{self, OutputSchema};
use crate::result::{CallResult, Tool};

/// Each listed tool's compiled `outputSchema`, by tool name.
pub(super) type Schemas = std::sync::Mutex<HashMap<String, Arc<OutputSchema>>>;

impl Client {
    /// After a complete listing: the tools' schemas replace those kept so far. A
    /// schema that does not compile (a `$ref` outside it, not a schema) leaves its
    /// tool unchecked.
    pub(super) fn remember_output_schemas(&self, tools: &[Tool]) {
        if !self.options.validate_output {
            return;
        }
        let mut kept = HashMap::new();
        for tool in tools {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(tool.json()) else {
                continue;
            };
            let Some(schema) = v.get("outputSchema") else { continue };
            match output_schema::compile_parsed(schema) {
                Ok(s) => {
                    kept.insert(tool.name.clone(), Arc::new(s));
                }
                Err(why) => log::warn!(
                    "tools/list: the outputSchema of {} is not checked: {why}",
                    quote(&tool.name)
                ),
            }
        }
        *self.output_schemas.lock().unwrap_or_else(|p| p.into_inner()) = kept;
    }

    /// The error a call's result comes with, if any: MCPC_ERR_TOOL for `isError`,
    /// else MCPC_ERR_OUTPUT_SCHEMA when its `structuredContent` does not fit the
    /// schema the last listing gave.
    pub fn outcome_error(&self, name: &str, r: &CallResult) -> Option<Error> {
        if let Some(e) = r.tool_error(name) {
            return Some(e);
        }
        if !self.options.validate_output {
            return None;
        }
        let schema = self
            .output_schemas
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()?;
        schema.check(r.structured()).err().map(|why| {
            Error::new(
                Status::MCPC_ERR_OUTPUT_SCHEMA,
                format!(
                    "tools/call {}: the result does not fit the tool's outputSchema: {why}",
                    quote(name)
                ),
            )
        })
    }
}
