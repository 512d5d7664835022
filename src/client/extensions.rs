//! Extensions: the ones the host declares (`capabilities.extensions`: in `initialize`
//! before 2026-07-28, in each request's client capabilities under it), and the ones
//! the server offers, handed out as it sent them.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::Options;
use crate::error::{quote, Error, Result, Status};

/// The longest extension id accepted: ids are `{vendor-prefix}/{name}`, short names.
const MAX_ID: usize = 256;

fn invalid(message: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_INVALID_ARG, message)
}

/// An extension id, checked: `prefix/name`, printable, without spaces.
pub fn check_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID
        && id.chars().all(|c| c.is_ascii_graphic())
        && id.split_once('/').is_some_and(|(p, n)| !p.is_empty() && !n.is_empty());
    if !ok {
        return Err(invalid(format!(
            "extension id {} is not of the form prefix/name (printable, no spaces)",
            quote(id)
        )));
    }
    Ok(())
}

/// An extension's settings, checked: a JSON object (none: `{}`), kept as written.
pub fn check_settings(id: &str, settings_json: Option<&str>) -> Result<Box<RawValue>> {
    let text = settings_json.unwrap_or("{}");
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(_)) => Ok(RawValue::from_string(text.trim().to_string()).expect("checked JSON")),
        Ok(_) => Err(invalid(format!(
            "the settings of extension {} must be a JSON object",
            quote(id)
        ))),
        Err(e) => Err(invalid(format!(
            "the settings of extension {} are not valid JSON: {e}",
            quote(id)
        ))),
    }
}

/// The client capabilities to declare: the input handlers' (see
/// [`super::input::Handlers::capabilities`]) and, when the host declared any,
/// `extensions` with each id's settings as the host wrote them, in the order declared.
/// `tasks` bends the declaration of the tasks extension for a call's task preference:
/// `Some(false)` leaves it out, `Some(true)` adds it (with `{}`) when the host did not.
pub(super) fn declared(options: &Options, modern: bool, tasks: Option<bool>) -> Box<RawValue> {
    let handlers = options.input.capabilities(modern);
    let tasks_id = super::tasks::EXTENSION;
    let declared_tasks = options.extensions.iter().any(|(id, _)| id == tasks_id);
    let add_tasks = tasks == Some(true) && !declared_tasks;
    let listed = options
        .extensions
        .iter()
        .filter(|(id, _)| tasks != Some(false) || id != tasks_id)
        .map(|(id, settings)| (id.as_str(), settings.get()));
    let extensions: Vec<(&str, &str)> = listed.chain(add_tasks.then_some((tasks_id, "{}"))).collect();
    if extensions.is_empty() {
        return handlers;
    }
    let text = handlers.get();
    let body = text.strip_suffix('}').expect("the handlers' JSON is an object");
    let mut out = String::from(body);
    if body.trim_end() != "{" {
        out.push(',');
    }
    out.push_str(r#""extensions":{"#);
    for (i, (id, settings)) in extensions.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(id).expect("a string serializes"));
        out.push(':');
        out.push_str(settings);
    }
    out.push_str("}}");
    RawValue::from_string(out).expect("checked parts make valid JSON")
}

/// The client capabilities of each kind of request.
pub(super) struct Declared {
    /// In `initialize`.
    pub(super) legacy: Box<RawValue>,
    /// Under 2026-07-28, as the host declared them.
    pub(super) modern: Box<RawValue>,
    /// Under 2026-07-28, for a call that forbids tasks, and one that wants them.
    pub(super) without_tasks: Box<RawValue>,
    pub(super) with_tasks: Box<RawValue>,
}

impl Declared {
    pub(super) fn of(options: &Options) -> Self {
        Declared {
            legacy: declared(options, false, None),
            modern: declared(options, true, None),
            without_tasks: declared(options, true, Some(false)),
            with_tasks: declared(options, true, Some(true)),
        }
    }
}

/// The server's `capabilities.extensions` in its `initialize` or `server/discover`
/// result, the same bytes it sent; `None` when it declared none.
pub fn offered(init_result: &str) -> Option<&str> {
    #[derive(Deserialize)]
    struct Result<'a> {
        #[serde(borrow, default)]
        capabilities: Option<Capabilities<'a>>,
    }
    #[derive(Deserialize)]
    struct Capabilities<'a> {
        #[serde(borrow, default)]
        extensions: Option<&'a RawValue>,
    }
    let r: Result<'_> = serde_json::from_str(init_result).ok()?;
    let ext = r.capabilities?.extensions?;
    (ext.get() != "null").then(|| ext.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_settings_checked() {
        for good in ["io.modelcontextprotocol/tasks", "a/b", "dev.mcpc/demo-2"] {
            assert!(check_id(good).is_ok(), "{good}");
        }
        for bad in ["", "tasks", "/x", "x/", "a b/c", "a/b\n", &"x/".repeat(200)] {
            assert_eq!(
                check_id(bad).unwrap_err().status,
                Status::MCPC_ERR_INVALID_ARG,
                "{bad:?}"
            );
        }
        assert_eq!(check_settings("a/b", None).unwrap().get(), "{}");
        assert_eq!(
            check_settings("a/b", Some(r#" {"k": [1]} "#)).unwrap().get(),
            r#"{"k": [1]}"#
        );
        for bad in ["[]", "1", "\"x\"", "null", "{", ""] {
            let e = check_settings("a/b", Some(bad)).unwrap_err();
            assert_eq!(e.status, Status::MCPC_ERR_INVALID_ARG, "{bad:?}");
        }
    }

    #[test]
    fn declared_beside_the_handlers() {
        let mut o = Options::default();
        assert_eq!(declared(&o, false, None).get(), "{}");
        o.extensions
            .push(("a/b".into(), check_settings("a/b", Some(r#"{"x":1}"#)).unwrap()));
        o.extensions.push(("c/d".into(), check_settings("c/d", None).unwrap()));
        assert_eq!(
            declared(&o, true, None).get(),
            r#"{"extensions":{"a/b":{"x":1},"c/d":{}}}"#
        );
        let tasks = super::super::tasks::EXTENSION;
        assert_eq!(
            declared(&o, true, Some(true)).get(),
            format!(r#"{{"extensions":{{"a/b":{{"x":1}},"c/d":{{}},"{tasks}":{{}}}}}}"#)
        );
        o.extensions
            .push((tasks.into(), check_settings(tasks, Some(r#"{"k":2}"#)).unwrap()));
        assert_eq!(declared(&o, true, Some(true)).get(), declared(&o, true, None).get());
        assert!(declared(&o, true, None).get().contains(r#"{"k":2}"#));
        assert_eq!(
            declared(&o, true, Some(false)).get(),
            r#"{"extensions":{"a/b":{"x":1},"c/d":{}}}"#
        );
        o.extensions.pop();
        o.input.roots = Some(std::sync::Arc::new(|_| unreachable!()));
        let v: Value = serde_json::from_str(declared(&o, false, None).get()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"roots": {"listChanged": true}, "extensions": {"a/b": {"x": 1}, "c/d": {}}})
        );
    }

    #[test]
    fn offered_as_sent() {
        let r = r#"{"capabilities":{"tools":{},"extensions":{ "x/y" : {"n":[1, 2]} ,"z/w":5}},"serverInfo":{}}"#;
        assert_eq!(offered(r), Some(r#"{ "x/y" : {"n":[1, 2]} ,"z/w":5}"#));
        assert_eq!(offered(r#"{"capabilities":{}}"#), None);
        assert_eq!(offered(r#"{"capabilities":{"extensions":null}}"#), None);
        assert_eq!(offered(r#"{}"#), None);
        assert_eq!(offered("not json"), None);
    }
}
