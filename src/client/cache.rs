//! The lists a client keeps (tools, resources, resource templates, prompts) and
//! reuses while they hold: under 2026-07-28 for the `ttlMs` the server gave (the
//! shortest of the listing's pages; none or 0: not kept); before it, while the
//! server promised to say when the list changes (`listChanged` in its capabilities)
//! and has not said so yet. A `list_changed` notification drops its list; a listing
//! that a notification overtook is not kept. A call may bypass the cache.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::Listing;
use crate::result::Tool;

/// Which list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Tools,
    Resources,
    Templates,
    Prompts,
    /// `skills/list`, kept for its `ttlMs` in either generation.
    Skills,
}

impl Kind {
    fn index(self) -> usize {
        self as usize
    }

    /// The capability that holds this list's `listChanged`.
    pub(super) fn capability(self) -> &'static str {
        match self {
            Kind::Tools => "tools",
            Kind::Resources | Kind::Templates => "resources",
            Kind::Prompts => "prompts",
            Kind::Skills => "skills",
        }
    }

    pub(super) fn of(what: Listing) -> Kind {
        match what {
            Listing::Resources => Kind::Resources,
            Listing::ResourceTemplates => Kind::Templates,
            Listing::Prompts => Kind::Prompts,
        }
    }
}

/// A kept list.
#[derive(Clone)]
pub(super) enum Value {
    Tools(Arc<Vec<Tool>>),
    Json(Arc<str>),
}

struct Entry {
    value: Value,
    /// None: until a `list_changed` says otherwise.
    until: Option<Instant>,
}

/// How long a fresh listing may be kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Keep {
    No,
    For(Duration),
    UntilChanged,
}

/// The kept lists, and for each a count of the notifications that dropped it.
#[derive(Default)]
pub(crate) struct Cache {
    entries: Mutex<[Option<Entry>; 5]>,
    epochs: [AtomicU64; 5],
}

impl Cache {
    /// The kept list of `kind`, while it holds.
    pub(super) fn get(&self, kind: Kind) -> Option<Value> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let e = entries[kind.index()].as_ref()?;
        match e.until {
            Some(t) if Instant::now() >= t => None,
            _ => Some(e.value.clone()),
        }
    }

    /// Where a listing starts: what [`Cache::put`] compares with.
    pub(super) fn epoch(&self, kind: Kind) -> u64 {
        self.epochs[kind.index()].load(Ordering::Acquire)
    }

    /// Keeps a listing that started at `epoch`, unless a notification came since.
    pub(super) fn put(&self, kind: Kind, epoch: u64, value: Value, keep: Keep) {
        let until = match keep {
            Keep::No => return,
            Keep::For(d) => Some(Instant::now() + d),
            Keep::UntilChanged => None,
        };
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        if self.epoch(kind) == epoch {
            entries[kind.index()] = Some(Entry { value, until });
        }
    }

    /// Drops every kept list (the host wants fresh ones).
    pub(crate) fn forget(&self) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        for (i, e) in entries.iter_mut().enumerate() {
            self.epochs[i].fetch_add(1, Ordering::AcqRel);
            *e = None;
        }
    }

    /// A `notifications/*/list_changed`: drops the lists it names.
    pub(crate) fn changed(&self, method: &str) {
        let kinds: &[Kind] = match method {
            "notifications/tools/list_changed" => &[Kind::Tools],
            "notifications/resources/list_changed" => &[Kind::Resources, Kind::Templates],
            "notifications/prompts/list_changed" => &[Kind::Prompts],
            _ => return,
        };
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        for k in kinds {
            self.epochs[k.index()].fetch_add(1, Ordering::AcqRel);
            entries[k.index()] = None;
        }
    }
}

/// A page's `ttlMs` (its JSON text): None when absent or not a number.
pub(super) fn page_ttl(page: &str) -> Option<i64> {
    crate::scan::member(page, "ttlMs")
        .ok()
        .flatten()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|v| v as i64)
}

/// How long a listing is kept: under 2026-07-28 the shortest page TTL (none on a
/// page: 0), before it while the server's `listChanged` promise holds.
pub(super) fn keep_for(modern: bool, shortest_ttl: Option<i64>, list_changed: bool) -> Keep {
    if modern {
        match shortest_ttl {
            Some(ms) if ms > 0 => Keep::For(Duration::from_millis(ms as u64)),
            _ => Keep::No,
        }
    } else if list_changed {
        Keep::UntilChanged
    } else {
        Keep::No
    }
}

/// The shortest of the TTLs seen so far and `page`'s (a page without one: 0).
pub(super) fn shortest(so_far: Option<i64>, page: &str) -> Option<i64> {
    let ttl = page_ttl(page).unwrap_or(0);
    Some(so_far.map_or(ttl, |t| t.min(ttl)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules() {
        assert_eq!(page_ttl(r#"{"tools":[],"ttlMs":60000}"#), Some(60000));
        assert_eq!(page_ttl(r#"{"tools":[]}"#), None);
        assert_eq!(
            shortest(shortest(None, r#"{"ttlMs":500}"#), r#"{"ttlMs":900}"#),
            Some(500)
        );
        assert_eq!(shortest(Some(500), r#"{}"#), Some(0));
        assert_eq!(keep_for(true, Some(500), false), Keep::For(Duration::from_millis(500)));
        assert_eq!(keep_for(true, Some(-1), true), Keep::No);
        assert_eq!(keep_for(true, None, true), Keep::No);
        assert_eq!(keep_for(false, Some(500), true), Keep::UntilChanged);
        assert_eq!(keep_for(false, None, false), Keep::No);
    }

    #[test]
    fn a_notification_drops_and_outdates() {
        let c = Cache::default();
        let e = c.epoch(Kind::Prompts);
        c.put(Kind::Prompts, e, Value::Json("[1]".into()), Keep::UntilChanged);
        assert!(c.get(Kind::Prompts).is_some());
        assert!(c.get(Kind::Tools).is_none());
        c.changed("notifications/prompts/list_changed");
        assert!(c.get(Kind::Prompts).is_none());
        // A listing that started before the notification is not kept.
        c.put(Kind::Prompts, e, Value::Json("[1]".into()), Keep::UntilChanged);
        assert!(c.get(Kind::Prompts).is_none());
        let e = c.epoch(Kind::Resources);
        c.put(Kind::Resources, e, Value::Json("[]".into()), Keep::For(Duration::ZERO));
        assert!(c.get(Kind::Resources).is_none(), "expired at once");
    }
}
