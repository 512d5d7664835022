//! The server's log: the level the client asks for (`logging/setLevel` before
//! 2026-07-28; under it, `_meta["io.modelcontextprotocol/logLevel"]` on every
//! request, without which a server sends no log at all) and `notifications/message`
//! handed to the host's log callback with its level, logger and data.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};

/// Called with `(level, logger, data JSON)` for each `notifications/message`.
pub type LogFn = Arc<dyn Fn(&str, Option<&str>, &str) + Send + Sync>;

/// The syslog levels of RFC 5424 that MCP uses, from the most verbose.
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The level named `s`, as an index into [`LEVELS`] plus one (0 is none).
pub fn level_code(s: &str) -> Result<u8> {
    LEVELS.iter().position(|l| *l == s).map(|i| i as u8 + 1).ok_or_else(|| {
        Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!(
                "{} is not a log level (debug, info, notice, warning, error, critical, alert, emergency)",
                quote(s)
            ),
        )
    })
}

/// The level of a code from [`level_code`], or None for 0.
pub(super) fn level_name(code: u8) -> Option<&'static str> {
    code.checked_sub(1).and_then(|i| LEVELS.get(usize::from(i)).copied())
}

/// Hands a `notifications/message` to `on_log`; false when its params are not a
/// log message (a string `level` and some `data`), so that it goes on as any other
/// notification.
pub(super) fn route_log(on_log: &LogFn, params: Option<&RawValue>) -> bool {
    #[derive(Deserialize)]
    struct Message<'a> {
        #[serde(borrow)]
        level: std::borrow::Cow<'a, str>,
        #[serde(borrow)]
        logger: Option<std::borrow::Cow<'a, str>>,
        #[serde(borrow)]
        data: &'a RawValue,
    }
    let Some(m) = params.and_then(|p| serde_json::from_str::<Message<'_>>(p.get()).ok()) else {
        return false;
    };
    on_log(&m.level, m.logger.as_deref(), m.data.get());
    true
}

impl Client {
    /// The log level the client asks for, if any.
    pub fn log_level(&self) -> Option<&'static str> {
        level_name(self.shared.log_level.load(Ordering::Acquire))
    }

    /// Asks the server for log messages at `level` and above (None: under
    /// 2026-07-28 none at all; before it, nothing is sent, as the revision has no way
    /// to turn the log off). Before 2026-07-28 this is a `logging/setLevel`
    /// request; under it, the level rides on every later request.
    pub async fn set_log_level(&self, level: Option<&str>, ctl: &Control) -> Result<()> {
        let code = level.map(level_code).transpose()?.unwrap_or(0);
        if !self.is_modern() {
            if let Some(level) = level {
                let mut params = serde_json::Map::new();
                params.insert("level".into(), level.into());
                self.request_method("logging/setLevel", &params, ctl)
                    .await?
                    .into_raw()?;
            }
        }
        self.shared.log_level.store(code, Ordering::Release);
        Ok(())
    }

    /// After `initialize`: the level from the options, when the server has a log
    /// (at most 2 s: a failure leaves the connect as it is).
    pub(super) async fn apply_log_level(&self, ctl: &Control) {
        let Some(level) = self.options.log_level else { return };
        if self.is_modern() {
            return; // carried by each request's `_meta`
        }
        if self.session.capabilities.logging {
            // Bounded apart from the connect's own timeout: a server that ignores it
            // must not hold the connect.
            let ctl = Control {
                timeout: Some(self.timeout_of(ctl).min(std::time::Duration::from_secs(2))),
                ..ctl.clone()
            };
            if let Err(e) = self.set_log_level(Some(level), &ctl).await {
                log::debug!("logging/setLevel {level} failed: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_messages() {
        assert_eq!(level_code("debug").unwrap(), 1);
        assert_eq!(level_name(level_code("emergency").unwrap()), Some("emergency"));
        assert_eq!(level_name(0), None);
        assert_eq!(level_code("verbose").unwrap_err().status, Status::MCPC_ERR_INVALID_ARG);
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = got.clone();
        let on_log: LogFn = Arc::new(move |l, g, d| sink.lock().unwrap().push(format!("{l}|{g:?}|{d}")));
        let raw = |s: &str| RawValue::from_string(s.to_string()).unwrap();
        assert!(route_log(
            &on_log,
            Some(&raw(r#"{"level":"info","logger":"db","data":{"a":1}}"#))
        ));
        assert!(route_log(&on_log, Some(&raw(r#"{"level":"error","data":"x"}"#))));
        assert!(!route_log(&on_log, Some(&raw(r#"{"data":"no level"}"#))));
        assert!(!route_log(&on_log, None));
        assert_eq!(
            *got.lock().unwrap(),
            vec![
                r#"info|Some("db")|{"a":1}"#.to_string(),
                r#"error|None|"x""#.to_string()
            ]
        );
    }
}
