//! Many servers behind one host: each server a client of its own, started together
//! with a bound, their tools in one catalog under qualified names, a call routed by
//! that name to its server, and each server's state reported to the host. A server
//! that fails or dies loses its own tools only.

pub mod names;
pub mod spec;
pub mod vars;

mod catalog;
mod member;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use tokio::task::JoinSet;

pub use catalog::Catalog;
pub use member::{Member, State};
pub use spec::{Reach, ServerSpec};
pub use vars::{ResolveFn, Scope};

use crate::client::Client;
use crate::config::Config;
use crate::drive::runtime;
use crate::error::{Error, Result, Status};

/// What a host reports: `(event, server, state, detail)`.
pub type EventFn = Arc<dyn Fn(Event, Option<&str>, State, Option<&str>) + Send + Sync>;

/// The kinds of report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A server's state changed; the detail is its error, if any.
    ServerState,
    /// A start settled; the detail is the summary (JSON).
    Settled,
    /// The catalog changed.
    CatalogChanged,
}

/// Which of the host process's environment a stdio server inherits.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum EnvPolicy {
    /// All but the variables whose names look secret, unless the server's `env` names them.
    #[default]
    NoSecrets,
    PassAll,
    /// Only these names (and the server's own `env`).
    Allow(Vec<String>),
}

/// The host's settings, fixed before servers are added.
#[derive(Clone)]
pub struct Settings {
    /// What every server's client starts from (client info, timeouts, handlers).
    pub defaults: Config,
    pub env: EnvPolicy,
    /// Servers started at once, at most.
    pub concurrency: usize,
    pub on_event: Option<EventFn>,
    /// Servers with saved tools start on their first call, not at the start.
    pub lazy: bool,
    /// How tools and prompts are named in the catalog.
    pub names: Arc<names::NameFormat>,
}

pub struct Host {
    settings: RwLock<Settings>,
    scope: Mutex<Scope>,
    members: RwLock<Vec<Arc<Member>>>,
    catalog: RwLock<Arc<Catalog>>,
    /// Reports one at a time, in order.
    reporting: Mutex<()>,
    rebuilding: Mutex<()>,
    closed: std::sync::atomic::AtomicBool,
}

impl Host {
    pub fn new(settings: Settings) -> Arc<Host> {
        Arc::new(Host {
            settings: RwLock::new(settings),
            scope: Mutex::new(Scope::default()),
            members: RwLock::new(Vec::new()),
            catalog: RwLock::new(Arc::new(Catalog::default())),
            reporting: Mutex::new(()),
            rebuilding: Mutex::new(()),
            closed: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Changes the settings; servers started later use the new ones.
    pub fn configure(&self, f: impl FnOnce(&mut Settings)) {
        f(&mut write(&self.settings));
    }

    /// Names tools and prompts by `format` from now on; the catalog is made again.
    pub fn set_name_format(&self, format: names::NameFormat) {
        write(&self.settings).names = Arc::new(format);
        self.rebuild();
    }

    /// Sets a variable configuration files may name, such as `workspaceFolder`.
    pub fn set_variable(&self, name: &str, value: &str) {
        lock(&self.scope).vars.insert(name.to_string(), value.to_string());
    }

    pub fn set_resolver(&self, r: Option<ResolveFn>) {
        lock(&self.scope).resolver = r;
    }

    /// Reads configuration file `path` and adds its servers (not started). Nothing is
    /// added when any server is malformed or shares a name with one already added.
    pub fn add_file(&self, path: &str) -> Result<usize> {
        const MAX_FILE: u64 = 4 << 20;
        let meta = std::fs::metadata(path).map_err(|e| Error::new(Status::MCPC_ERR_CONFIG, format!("{path}: {e}")))?;
        if meta.len() > MAX_FILE {
            return Err(Error::new(
                Status::MCPC_ERR_CONFIG,
                format!("{path}: larger than 4 MiB"),
            ));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::new(Status::MCPC_ERR_CONFIG, format!("{path}: {e}")))?;
        let scope = lock(&self.scope).clone();
        let specs = spec::parse(path, &text, &scope)?;
        let n = specs.len();
        self.add_all(specs)?;
        Ok(n)
    }

    /// Adds one server with a configuration of its own (None: the host's defaults).
    pub fn add(&self, spec: ServerSpec, own: Option<Config>) -> Result<()> {
        self.add_members(vec![(spec, own)])
    }

    /// Adds servers (not started); all or none.
    pub fn add_all(&self, specs: Vec<ServerSpec>) -> Result<()> {
        self.add_members(specs.into_iter().map(|s| (s, None)).collect())
    }

    fn add_members(&self, specs: Vec<(ServerSpec, Option<Config>)>) -> Result<()> {
        self.open()?;
        let mut members = write(&self.members);
        let mut seen: HashMap<&str, ()> = members.iter().map(|m| (m.spec.name.as_str(), ())).collect();
        for (s, _) in &specs {
            if s.name.is_empty() || seen.insert(&s.name, ()).is_some() {
                return Err(Error::new(
                    Status::MCPC_ERR_INVALID_ARG,
                    format!("a server named {:?} is already added (or the name is empty)", s.name),
                ));
            }
        }
        members.extend(specs.into_iter().map(|(s, own)| Member::new(s, own)));
        Ok(())
    }

    /// Starts every server that is added and not yet started, at most
    /// `concurrency` at once, and waits until each is ready or failed. Fails with
    /// the first required server's error.
    pub async fn start(self: &Arc<Host>) -> Result<()> {
        self.open()?;
        let settings = Arc::new(read(&self.settings).clone());
        let all: Vec<Arc<Member>> = read(&self.members).clone();
        for m in all.iter().filter(|m| m.announce_disabled()) {
            self.report(Event::ServerState, Some(&m.spec.name), State::Disabled, None);
        }
        if settings.lazy {
            for m in all.iter().filter(|m| m.idle_if_saved()) {
                self.report(Event::ServerState, Some(&m.spec.name), State::Idle, None);
            }
        }
        // Claimed one by one, so that two starts at once never start a server twice.
        let todo: Vec<Arc<Member>> = all
            .into_iter()
            .filter(|m| m.state() == State::Added && m.claim_start())
            .collect();
        let gate = Arc::new(tokio::sync::Semaphore::new(settings.concurrency.max(1)));
        let mut set = JoinSet::new();
        for m in &todo {
            self.report(Event::ServerState, Some(&m.spec.name), State::Starting, None);
            let (host, m, gate, settings) = (self.clone(), m.clone(), gate.clone(), settings.clone());
            set.spawn_on(
                async move {
                    let _permit = gate.acquire_owned().await;
                    host.start_one(&m, &settings).await;
                },
                runtime::handle(),
            );
        }
        while set.join_next().await.is_some() {}
        let summary = self.summary();
        self.report(Event::Settled, None, State::Ready, Some(&summary));
        let failed = todo.iter().find(|m| m.spec.required && m.state() != State::Ready);
        match failed {
            Some(m) => Err(m
                .error()
                .unwrap_or_else(|| Error::new(Status::MCPC_ERR_HANDSHAKE, "did not start"))
                .context(format!("required server {:?}", m.spec.name))),
            None => Ok(()),
        }
    }

    async fn start_one(self: &Arc<Host>, m: &Arc<Member>, settings: &Settings) {
        let _starting = m.starting.lock().await;
        self.start_locked(m, settings).await;
    }

    async fn start_locked(self: &Arc<Host>, m: &Arc<Member>, settings: &Settings) {
        match m.connect(settings).await {
            Ok(()) => {
                self.rebuild();
                self.report(Event::ServerState, Some(&m.spec.name), State::Ready, None);
                runtime::handle().spawn(watch(Arc::downgrade(self), m.clone()));
                runtime::handle().spawn(refresh(Arc::downgrade(self), m.clone()));
            }
            Err(e) => {
                let detail = m.fail(e);
                self.report(Event::ServerState, Some(&m.spec.name), State::Failed, Some(&detail));
            }
        }
    }

    /// The catalog as it is now.
    pub fn catalog(&self) -> Arc<Catalog> {
        read(&self.catalog).clone()
    }

    /// Publishes a catalog saved from an earlier run (`Catalog::to_json`'s form): each
    /// entry's tool goes to its server when that server is added and not started.
    /// Returns how many were taken.
    pub fn load_catalog(&self, json: &str) -> Result<usize> {
        let bad = |what: &str| Error::new(Status::MCPC_ERR_INVALID_ARG, format!("the saved catalog {what}"));
        // Each tool kept as the text it was saved as, byte for byte.
        #[derive(serde::Deserialize)]
        struct Saved<'a> {
            #[serde(borrow)]
            tools: Vec<SavedEntry<'a>>,
        }
        #[derive(serde::Deserialize)]
        struct SavedEntry<'a> {
            server: String,
            #[serde(borrow)]
            tool: &'a serde_json::value::RawValue,
        }
        let saved: Saved<'_> = serde_json::from_str(json).map_err(|e| bad(&format!("is not one: {e}")))?;
        let mut by_server: HashMap<String, Vec<crate::result::Tool>> = HashMap::new();
        for (i, e) in saved.tools.into_iter().enumerate() {
            let t = crate::result::Tool::from_json(e.tool.get()).map_err(|e| bad(&format!("entry {i}: {e}")))?;
            by_server.entry(e.server).or_default().push(t);
        }
        let mut taken = 0;
        for m in read(&self.members).iter() {
            if let Some(tools) = by_server.remove(&m.spec.name) {
                let n = tools.len();
                if m.set_saved(tools) {
                    taken += n;
                }
            }
        }
        self.rebuild();
        Ok(taken)
    }

    /// The client of a server, started first when it is idle (or added and not
    /// started), or once the start under way ends.
    pub async fn client_for(self: &Arc<Host>, m: &Arc<Member>) -> Result<Arc<Client>> {
        if let Some(c) = m.ready_client() {
            return Ok(c);
        }
        let _starting = m.starting.lock().await;
        if m.claim_start() {
            self.report(Event::ServerState, Some(&m.spec.name), State::Starting, None);
            let settings = read(&self.settings).clone();
            self.start_locked(m, &settings).await;
        }
        m.ready_client().ok_or_else(|| {
            m.error().unwrap_or_else(|| {
                Error::new(
                    Status::MCPC_ERR_CLOSED,
                    format!("server {:?} is not running", m.spec.name),
                )
            })
        })
    }

    fn open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the host was closed"));
        }
        Ok(())
    }

    /// `client_for` from a caller's thread: at once when the server is ready.
    pub fn client_blocking(self: &Arc<Host>, m: Arc<Member>) -> Result<Arc<Client>> {
        if let Some(c) = m.ready_client() {
            return Ok(c);
        }
        let h = self.clone();
        runtime::block_on(async move { h.client_for(&m).await })?
    }

    /// The server of the tool with qualified name `qualified`, and the tool's own name.
    pub fn route(&self, qualified: &str) -> Result<(Arc<Member>, String)> {
        self.routed(qualified, "tool", |c| &c.tools)
    }

    /// The server of the prompt with qualified name `qualified`, and the prompt's own name.
    pub fn route_prompt(&self, qualified: &str) -> Result<(Arc<Member>, String)> {
        self.routed(qualified, "prompt", |c| &c.prompts)
    }

    fn routed(
        &self,
        qualified: &str,
        what: &str,
        named: impl Fn(&Catalog) -> &catalog::Named,
    ) -> Result<(Arc<Member>, String)> {
        self.open()?;
        let cat = self.catalog();
        let Some(e) = named(&cat).get(qualified) else {
            return Err(Error::new(
                Status::MCPC_ERR_UNKNOWN_NAME,
                format!("no {what} named {} in the catalog", crate::error::quote(qualified)),
            ));
        };
        let m = self.member(&e.server)?;
        Ok((m, e.tool.to_string()))
    }

    /// The server a resource URI routes to (see `Catalog::server_for_uri`).
    pub fn route_uri(&self, uri: &str) -> Result<Arc<Member>> {
        self.open()?;
        let cat = self.catalog();
        let Some(server) = cat.server_for_uri(uri) else {
            return Err(Error::new(
                Status::MCPC_ERR_UNKNOWN_NAME,
                format!(
                    "no server listed the resource {}, nor a template it fits",
                    crate::error::quote(uri)
                ),
            ));
        };
        self.member(server)
    }

    pub fn member(&self, name: &str) -> Result<Arc<Member>> {
        read(&self.members)
            .iter()
            .find(|m| m.spec.name == name)
            .cloned()
            .ok_or_else(|| {
                Error::new(
                    Status::MCPC_ERR_UNKNOWN_NAME,
                    format!("no server named {}", crate::error::quote(name)),
                )
            })
    }

    /// Every server's state, as JSON: `[{"name", "state", "tools", "error", "stderr"}]`.
    pub fn status_json(&self) -> String {
        let list: Vec<serde_json::Value> = read(&self.members).iter().map(|m| m.status_value()).collect();
        serde_json::Value::Array(list).to_string()
    }

    fn summary(&self) -> String {
        let mut counts: HashMap<&'static str, usize> = HashMap::new();
        for m in read(&self.members).iter() {
            *counts.entry(m.state().name()).or_default() += 1;
        }
        let cat = self.catalog();
        serde_json::json!({
            "servers": counts,
            "tools": cat.tools.entries.len(),
            "prompts": cat.prompts.entries.len(),
            "collisions": cat.tools.collisions.len() + cat.prompts.collisions.len(),
        })
        .to_string()
    }

    /// Stops and removes server `name`; its tools leave the catalog.
    pub async fn remove(&self, name: &str) -> Result<()> {
        let m = self.member(name)?;
        write(&self.members).retain(|x| !Arc::ptr_eq(x, &m));
        m.close().await;
        self.rebuild();
        Ok(())
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// No report after this returns: a report under way on another thread is waited
    /// for (one on this thread, the caller's own callback, is not).
    pub fn quiesce(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::Release);
        if !IN_REPORT.with(|r| r.get()) {
            drop(lock(&self.reporting));
        }
    }

    /// Closes every server; no restart or report after this. Later calls fail with
    /// MCPC_ERR_CLOSED.
    pub async fn close(&self) {
        self.quiesce();
        let all: Vec<_> = read(&self.members).clone();
        let mut set = JoinSet::new();
        for m in all {
            set.spawn_on(async move { m.close().await }, runtime::handle());
        }
        while set.join_next().await.is_some() {}
    }

    /// Makes the catalog again from every ready server, and reports a change.
    fn rebuild(&self) {
        // One rebuild at a time, each from the members as they are once it holds the
        // lock: the last one stored has seen every change before it.
        let changed = {
            let _one = lock(&self.rebuilding);
            let members = read(&self.members).clone();
            let format = read(&self.settings).names.clone();
            let fresh = Catalog::of(&members, &format);
            let mut cur = write(&self.catalog);
            let changed = cur.differs(&fresh);
            *cur = Arc::new(fresh);
            changed
        };
        // Reported after the lock is let go: the host's callback may rebuild too.
        if changed {
            self.report(Event::CatalogChanged, None, State::Ready, None);
        }
    }

    fn report(&self, ev: Event, server: Option<&str>, state: State, detail: Option<&str>) {
        let f = read(&self.settings).on_event.clone();
        let Some(f) = f else { return };
        // A report the callback itself causes (loading a catalog from it) runs at once:
        // waiting for the one under way on this thread would never end.
        if IN_REPORT.with(|r| r.get()) {
            if !self.is_closed() {
                f(ev, server, state, detail);
            }
            return;
        }
        let _one = lock(&self.reporting);
        // Checked under the lock: once `quiesce` has passed it, no report starts.
        if self.is_closed() {
            return;
        }
        // A blocking host call from the callback would wait on this report.
        let _scope = runtime::CallbackScope::enter();
        let _in = InReport::enter();
        f(ev, server, state, detail);
    }
}

/// Follows a ready server: when its connection ends it fails (or, with a restart
/// policy, restarts and lists its tools again), and the catalog follows.
async fn watch(host: std::sync::Weak<Host>, m: Arc<Member>) {
    loop {
        let Some(c) = m.client() else { return };
        c.gone().cancelled().await;
        let Some(h) = host.upgrade() else { return };
        if h.is_closed() || m.is_closing() {
            return;
        }
        if m.restarts() {
            m.set_state(State::Restarting, None);
            h.report(Event::ServerState, Some(&m.spec.name), State::Restarting, None);
        }
        drop(h);
        let outcome = m.recover().await;
        let Some(h) = host.upgrade() else { return };
        h.rebuild();
        match outcome {
            Ok(()) => h.report(Event::ServerState, Some(&m.spec.name), State::Ready, None),
            Err(detail) => {
                h.report(Event::ServerState, Some(&m.spec.name), State::Failed, Some(&detail));
                return;
            }
        }
    }
}

/// Lists a server's tools again each time it says they changed: one listing at a
/// time, and a storm of notifications during one makes one more, not one each.
async fn refresh(host: std::sync::Weak<Host>, m: Arc<Member>) {
    while m.tools_changed().await {
        if let Err(e) = m.relist().await {
            log::debug!("server {:?}: listing its changed tools failed: {e}", m.spec.name);
            continue;
        }
        let Some(h) = host.upgrade() else { return };
        h.rebuild();
    }
}

thread_local! {
    /// This thread is in the host's event callback.
    static IN_REPORT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread as in the event callback while it lives (also when the callback unwinds).
struct InReport;

impl InReport {
    fn enter() -> InReport {
        IN_REPORT.with(|r| r.set(true));
        InReport
    }
}

impl Drop for InReport {
    fn drop(&mut self) {
        IN_REPORT.with(|r| r.set(false));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(|p| p.into_inner())
}
