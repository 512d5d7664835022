//! The listings other than tools (`resources/list`, `resources/templates/list`,
//! `prompts/list`): every page followed, with the guards of the tool listing (a
//! repeated cursor, a duplicate entry, the page limit), each entry kept as the server
//! sent it.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::value::RawValue;
use tokio::time::Instant;

use super::exchange::Exchange;
use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::Serialized;
use crate::protocol::{self, RequestMeta, ResultKind};

/// The params of a listing's page.
#[derive(Serialize)]
pub(super) struct ListParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) cursor: Option<&'a str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(super) meta: Option<RequestMeta<'a>>,
}

/// What is listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    Resources,
    ResourceTemplates,
    Prompts,
}

impl Listing {
    fn method(self) -> &'static str {
        match self {
            Listing::Resources => "resources/list",
            Listing::ResourceTemplates => "resources/templates/list",
            Listing::Prompts => "prompts/list",
        }
    }

    /// The member that holds a page's entries, and the one that names an entry.
    fn members(self) -> (&'static str, &'static str) {
        match self {
            Listing::Resources => ("resources", "uri"),
            Listing::ResourceTemplates => ("resourceTemplates", "uriTemplate"),
            Listing::Prompts => ("prompts", "name"),
        }
    }
}

/// One page: its entries as sent, and where the next starts.
fn read_page(what: Listing, raw: &str) -> std::result::Result<(Vec<Box<RawValue>>, Option<String>), String> {
    let (items_key, _) = what.members();
    let page: HashMap<String, Box<RawValue>> =
        serde_json::from_str(raw).map_err(|e| format!("the result is not an object: {e}"))?;
    let items: Vec<Box<RawValue>> = match page.get(items_key) {
        Some(v) => serde_json::from_str(v.get()).map_err(|_| format!("{items_key} is not an array"))?,
        None => return Err(format!("the result has no {items_key}")),
    };
    let next = match page.get("nextCursor").map(|c| c.get()) {
        None | Some("null") => None,
        Some(c) => Some(serde_json::from_str::<String>(c).map_err(|_| "nextCursor is not a string".to_string())?),
    };
    Ok((items, next))
}

/// The name of one entry (its `uri`, `uriTemplate` or `name`).
fn entry_name(what: Listing, item: &RawValue) -> std::result::Result<String, String> {
    let (_, key) = what.members();
    let fields: HashMap<String, Box<RawValue>> =
        serde_json::from_str(item.get()).map_err(|_| "an entry is not an object".to_string())?;
    fields
        .get(key)
        .and_then(|v| serde_json::from_str::<String>(v.get()).ok())
        .ok_or_else(|| format!("an entry has no string {key}"))
}

/// A listing's next cursor, unless the listing has seen it already (a loop).
pub(super) fn unseen_cursor(seen: &mut HashSet<String>, next: String, method: &str, page: usize) -> Result<String> {
    if !seen.insert(next.clone()) {
        return Err(Error::new(
            Status::MCPC_ERR_CURSOR_REPEATED,
            format!(
                "{method}: cursor {} was already seen in this listing (page {page})",
                quote(&next)
            ),
        ));
    }
    Ok(next)
}

impl Client {
    /// Lists every entry of `what`, following `nextCursor`, as one JSON array of the
    /// entries as the server sent them. The timeout covers the whole listing; when the
    /// HTTP session expires mid-listing, it starts over once.
    pub async fn list_json(&self, what: Listing, ctl: &Control) -> Result<String> {
        use super::cache::{Keep, Kind, Value};
        let kind = Kind::of(what);
        if !ctl.bypass_cache {
            if let Some(Value::Json(kept)) = self.shared.cache.get(kind) {
                return Ok(kept.to_string());
            }
        }
        let epoch = self.shared.cache.epoch(kind);
        let deadline = Instant::now() + self.timeout_of(ctl);
        let mut ttl = None;
        let json = match self.list_json_once(what, ctl, deadline, &mut ttl).await {
            Err(e) if e.status == Status::MCPC_ERR_SESSION_EXPIRED => {
                ttl = None;
                self.list_json_once(what, ctl, deadline, &mut ttl).await
            }
            other => other,
        }?;
        let keep = self.keep_for(kind, ttl);
        if keep != Keep::No {
            self.shared
                .cache
                .put(kind, epoch, Value::Json(json.as_str().into()), keep);
        }
        Ok(json)
    }

    /// Drops the lists kept between listings: the next of each asks the server.
    pub fn forget_lists(&self) {
        self.shared.cache.forget();
    }

    /// How long a fresh listing of `kind` is kept (see [`super::cache`]).
    pub(super) fn keep_for(&self, kind: super::cache::Kind, ttl: Option<i64>) -> super::cache::Keep {
        let list_changed = !self.is_modern()
            && self.transport.hears_unsolicited()
            && self.session.capabilities.list_changed(kind.capability());
        super::cache::keep_for(self.is_modern(), ttl, list_changed)
    }

    /// One listing; `ttl` gets the shortest `ttlMs` of its pages.
    async fn list_json_once(
        &self,
        what: Listing,
        ctl: &Control,
        deadline: Instant,
        ttl: &mut Option<i64>,
    ) -> Result<String> {
        let method = what.method();
        let mut out = String::from("[");
        let mut names: HashSet<String> = HashSet::new();
        let mut cursors: HashSet<String> = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 1.. {
            if page > self.options.max_pages {
                return Err(Error::new(
                    Status::MCPC_ERR_TOO_MANY_PAGES,
                    format!("{method}: more than {} pages; stopped", self.options.max_pages),
                ));
            }
            let page_ctl = Control {
                timeout: Some(deadline.saturating_duration_since(Instant::now())),
                ..ctl.clone()
            };
            let meta = self.meta(None);
            let params = ListParams {
                cursor: cursor.as_deref(),
                meta: (!meta.is_empty()).then_some(meta),
            };
            let id = self.next_id();
            let raw = self
                .exchange(Exchange::new(id, method), &Serialized(&params), &page_ctl)
                .await?
                .into_raw()
                .map_err(|e| e.context(method))?;
            *ttl = super::cache::shortest(*ttl, raw.get());
            if self.is_modern() && protocol::result_kind(raw.get())? != ResultKind::Complete {
                return Err(Error::new(
                    Status::MCPC_ERR_PROTOCOL,
                    format!("{method}: the server asked for input on a listing"),
                ));
            }
            let bad = |why: String| Error::new(Status::MCPC_ERR_PROTOCOL, format!("{method} page {page}: {why}"));
            let (items, next) = read_page(what, raw.get()).map_err(bad)?;
            for item in items {
                let name = entry_name(what, &item).map_err(bad)?;
                if !names.insert(name.clone()) {
                    return Err(Error::new(
                        Status::MCPC_ERR_DUPLICATE_TOOL,
                        format!("{method}: {} appears twice (page {page})", quote(&name)),
                    ));
                }
                if out.len() > 1 {
                    out.push(',');
                }
                out.push_str(item.get());
            }
            match next {
                None => break,
                Some(next) => cursor = Some(unseen_cursor(&mut cursors, next, method, page)?),
            }
        }
        out.push(']');
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_and_entries() {
        let (items, next) = read_page(
            Listing::Resources,
            r#"{"resources":[{"uri":"a://1","name":"x"}],"nextCursor":"c"}"#,
        )
        .unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(next.as_deref(), Some("c"));
        assert_eq!(entry_name(Listing::Resources, &items[0]).unwrap(), "a://1");
        let (_, next) = read_page(Listing::Prompts, r#"{"prompts":[],"nextCursor":null}"#).unwrap();
        assert!(next.is_none());
        assert!(read_page(Listing::Prompts, r#"{"tools":[]}"#).is_err());
        assert!(read_page(Listing::Prompts, r#"{"prompts":{}}"#).is_err());
        let item = RawValue::from_string(r#"{"name":"t"}"#.into()).unwrap();
        assert!(entry_name(Listing::ResourceTemplates, &item).is_err());
    }
}
