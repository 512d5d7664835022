//! One server of a host: its description, its client once started, its tools, its
//! state and the last lines it wrote to stderr.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use http::header::{HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::names::{self, Entry, NameFormat};
use super::spec::{OAuthSpec, Reach, ServerSpec};
use super::vars::looks_secret;
use super::{lock, EnvPolicy, Settings};
use crate::client::{Client, Control};
use crate::config::{Config, Plan};
use crate::error::{Error, Result, Status};
use crate::result::Tool;
use crate::supervise::Held;
use crate::transport::stdio::StderrMode;

/// Lines of a server's stderr kept for its failure report, and the longest kept.
const STDERR_LINES: usize = 20;
const STDERR_LINE_MAX: usize = 500;

/// A server's state (the C values are `mcpc_server_state_t`'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Added,
    Starting,
    Ready,
    Failed,
    NeedsLogin,
    Disabled,
    Restarting,
    /// Not started: its saved tools are in the catalog, and its first call starts it.
    Idle,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Added => "added",
            State::Starting => "starting",
            State::Ready => "ready",
            State::Failed => "failed",
            State::NeedsLogin => "needs_login",
            State::Disabled => "disabled",
            State::Restarting => "restarting",
            State::Idle => "idle",
        }
    }
}

/// A server's tools as catalog entries.
type Part = Arc<Vec<Arc<Entry>>>;

struct Now {
    state: State,
    error: Option<Error>,
    held: Option<Held>,
    tools: Arc<Vec<Tool>>,
    /// Its part of the catalog, made from `tools` once (on first use after a change
    /// of the tools or of the host's name format).
    part: Option<(Arc<NameFormat>, Part)>,
    lists: Arc<Lists>,
}

impl Now {
    fn put_tools(&mut self, tools: Vec<Tool>) {
        self.tools = Arc::new(tools);
        self.part = None;
    }
}

/// A server's resources, resource templates and prompts, as listed: (`uri`,
/// `uriTemplate` or `name`, the entry's JSON).
#[derive(Default)]
pub struct Lists {
    pub resources: Vec<(String, String)>,
    pub templates: Vec<(String, String)>,
    pub prompts: Vec<(String, String)>,
}

pub struct Member {
    pub spec: ServerSpec,
    /// Its own configuration, where it was added with one.
    own: Option<Config>,
    st: Mutex<Now>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    closing: AtomicBool,
    /// Whether its being disabled was reported.
    announced: AtomicBool,
    stop: CancellationToken,
    /// Woken by the server's `notifications/tools/list_changed`; a storm leaves one wake-up.
    changed: Arc<tokio::sync::Notify>,
    /// Held while the server starts, so that a call waits for a start under way.
    pub(super) starting: tokio::sync::Mutex<()>,
    /// Its tools came from a saved catalog, not from the server yet.
    saved: AtomicBool,
}

impl Member {
    pub(super) fn new(spec: ServerSpec, own: Option<Config>) -> Arc<Member> {
        let state = if spec.enabled { State::Added } else { State::Disabled };
        Arc::new(Member {
            spec,
            own,
            st: Mutex::new(Now {
                state,
                error: None,
                held: None,
                tools: Arc::new(Vec::new()),
                part: None,
                lists: Arc::new(Lists::default()),
            }),
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            closing: AtomicBool::new(false),
            announced: AtomicBool::new(false),
            stop: CancellationToken::new(),
            changed: Arc::new(tokio::sync::Notify::new()),
            starting: tokio::sync::Mutex::new(()),
            saved: AtomicBool::new(false),
        })
    }

    pub fn state(&self) -> State {
        lock(&self.st).state
    }

    pub(super) fn set_state(&self, state: State, error: Option<Error>) {
        let mut st = lock(&self.st);
        st.state = state;
        st.error = error;
    }

    /// Moves an added (or idle) server to starting; false when it is neither.
    pub(super) fn claim_start(&self) -> bool {
        let mut st = lock(&self.st);
        if !matches!(st.state, State::Added | State::Idle) {
            return false;
        }
        st.state = State::Starting;
        true
    }

    /// Publishes tools a host saved from an earlier run, while the server is not
    /// started; false when it is.
    pub(super) fn set_saved(&self, tools: Vec<Tool>) -> bool {
        let mut st = lock(&self.st);
        if !matches!(st.state, State::Added | State::Idle) {
            return false;
        }
        st.put_tools(tools);
        self.saved.store(true, Ordering::Release);
        true
    }

    /// An added server with saved tools becomes idle: started by its first call.
    pub(super) fn idle_if_saved(&self) -> bool {
        let mut st = lock(&self.st);
        if st.state != State::Added || !self.saved.load(Ordering::Acquire) {
            return false;
        }
        st.state = State::Idle;
        true
    }

    /// Its client, when it is ready.
    pub fn ready_client(&self) -> Option<Arc<Client>> {
        let st = lock(&self.st);
        match st.state {
            State::Ready | State::Restarting => st.held.as_ref().map(Held::current),
            _ => None,
        }
    }

    /// True once for a disabled server: its state is then reported.
    pub(super) fn announce_disabled(&self) -> bool {
        self.state() == State::Disabled && !self.announced.swap(true, Ordering::AcqRel)
    }

    pub fn error(&self) -> Option<Error> {
        lock(&self.st).error.clone()
    }

    /// The client its requests go to, while it has one.
    pub fn client(&self) -> Option<Arc<Client>> {
        lock(&self.st).held.as_ref().map(Held::current)
    }

    /// Its tools that pass its include and exclude lists, under their qualified
    /// names in `format`.
    pub(super) fn part(&self, format: &Arc<NameFormat>) -> Part {
        let mut st = lock(&self.st);
        if let Some((f, p)) = &st.part {
            if Arc::ptr_eq(f, format) {
                return p.clone();
            }
        }
        let server: Arc<str> = Arc::from(self.spec.name.as_str());
        let part: Vec<Arc<Entry>> = st
            .tools
            .iter()
            .filter(|t| names::admitted(&t.name, self.spec.include.as_deref(), &self.spec.exclude))
            .map(|t| {
                Arc::new(Entry {
                    qualified: Arc::from(format.apply(&self.spec.name, &t.name)),
                    server: server.clone(),
                    tool: Arc::from(t.name.as_str()),
                    json: Arc::from(t.json()),
                })
            })
            .collect();
        let part = Arc::new(part);
        st.part = Some((format.clone(), part.clone()));
        part
    }

    pub fn lists(&self) -> Arc<Lists> {
        lock(&self.st).lists.clone()
    }

    pub(super) fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Acquire)
    }

    pub(super) fn restarts(&self) -> bool {
        matches!(lock(&self.st).held, Some(Held::Supervised(_)))
    }

    /// Starts the server, within its startup timeout, and lists its tools.
    pub(super) async fn connect(&self, settings: &Settings) -> Result<()> {
        let plan = self.plan(settings)?;
        let ctl = Control {
            timeout: self.spec.startup_timeout,
            cancel: Some(self.stop.child_token()),
            ..Control::default()
        };
        let client = plan.connect(&ctl).await?;
        let (tools, lists) = tokio::join!(client.list_tools(&ctl), list_others(&client, &ctl));
        let tools = match tools {
            Ok(t) => t,
            Err(e) => {
                client.close().await;
                return Err(e.context("tools/list"));
            }
        };
        let held = Held::made(plan, client);
        let mut st = lock(&self.st);
        if self.is_closing() {
            drop(st);
            held.close().await;
            return Err(Error::new(Status::MCPC_ERR_CLOSED, "the host was closed"));
        }
        st.held = Some(held);
        st.put_tools(tools);
        st.lists = Arc::new(lists);
        st.state = State::Ready;
        st.error = None;
        Ok(())
    }

    /// Waits for the server to say its tools changed; false once the server is closed.
    pub(super) async fn tools_changed(&self) -> bool {
        tokio::select! {
            _ = self.changed.notified() => true,
            _ = self.stop.cancelled() => false,
        }
    }

    /// Lists its tools again (past the client's kept list); an error is left to the
    /// connection's watcher when the connection ended.
    pub(super) async fn relist(&self) -> Result<()> {
        let c = self
            .client()
            .ok_or_else(|| Error::new(Status::MCPC_ERR_CLOSED, "not running"))?;
        let ctl = Control {
            bypass_cache: true,
            ..Control::default()
        };
        let (tools, lists) = tokio::join!(c.list_tools(&ctl), list_others(&c, &ctl));
        let tools = tools?;
        let mut st = lock(&self.st);
        if st.state == State::Ready {
            st.put_tools(tools);
            st.lists = Arc::new(lists);
        }
        Ok(())
    }

    /// After the connection ended: the restarted server's tools, or why there is none.
    pub(super) async fn recover(&self) -> std::result::Result<(), String> {
        let held = lock(&self.st).held.clone();
        let Some(Held::Supervised(s)) = held else {
            let e = self.client().and_then(|c| c.closed_error());
            return Err(self.fail(e.unwrap_or_else(|| Error::new(Status::MCPC_ERR_TRANSPORT, "the connection ended"))));
        };
        let far = tokio::time::Instant::now() + std::time::Duration::from_secs(3600 * 24 * 365);
        let c = s.ready(far, Some(&self.stop)).await;
        if c.is_closed() {
            let e = s.ended().or_else(|| c.closed_error());
            return Err(self.fail(
                e.unwrap_or_else(|| Error::new(Status::MCPC_ERR_TRANSPORT, "the server was not started again")),
            ));
        }
        let ctl = Control::default();
        let (tools, lists) = tokio::join!(c.list_tools(&ctl), list_others(&c, &ctl));
        match tools {
            Ok(tools) => {
                let mut st = lock(&self.st);
                st.put_tools(tools);
                st.lists = Arc::new(lists);
                st.state = State::Ready;
                st.error = None;
                Ok(())
            }
            Err(e) => Err(self.fail(e.context("tools/list"))),
        }
    }

    /// Marks the server failed with `e`; its tools leave the catalog. Returns the
    /// detail reported: the status's name and the message.
    pub(super) fn fail(&self, e: Error) -> String {
        let mut st = lock(&self.st);
        st.state = if e.status == Status::MCPC_ERR_LOGIN_REQUIRED {
            State::NeedsLogin
        } else {
            State::Failed
        };
        st.put_tools(Vec::new());
        st.lists = Arc::new(Lists::default());
        let detail = format!("{}: {}", e.status.name(), e.message);
        st.error = Some(e);
        detail
    }

    /// Closes its client; no restart after this.
    pub(super) async fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.stop.cancel();
        let held = lock(&self.st).held.take();
        if let Some(h) = held {
            h.close().await;
        }
    }

    /// `{"name", "state", "tools", "error", "stderr"}`.
    pub(super) fn status_value(&self) -> serde_json::Value {
        let st = lock(&self.st);
        let mut v = serde_json::json!({
            "name": self.spec.name,
            "state": st.state.name(),
            "tools": st.tools.len(),
        });
        if let Some(e) = &st.error {
            v["error"] = serde_json::json!({"status": e.status.name(), "message": e.message});
            let tail: Vec<String> = lock(&self.stderr).iter().cloned().collect();
            if !tail.is_empty() {
                v["stderr"] = serde_json::json!(tail);
            }
        }
        v
    }

    /// The client's plan: the defaults, this server's reach, its timeouts, and the
    /// environment the host's policy lets it inherit.
    fn plan(&self, settings: &Settings) -> Result<Plan> {
        let mut cfg = self.own.as_ref().unwrap_or(&settings.defaults).clone();
        if let Some(t) = self.spec.call_timeout {
            cfg.client.timeout = t;
        }
        cfg.client.input.host_server = Some(Arc::from(self.spec.name.as_str()));
        let bad = |field: &str, what: String| {
            Error::new(
                Status::MCPC_ERR_CONFIG,
                format!("server {:?}: field {field:?} {what}", self.spec.name),
            )
        };
        match &self.spec.reach {
            Reach::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                inherit(&mut cfg, env, &settings.env);
                cfg.env
                    .extend(env.iter().map(|(k, v)| (OsString::from(k), Some(OsString::from(v)))));
                if let Some(d) = cwd {
                    cfg.cwd = Some(d.into());
                }
                if matches!(cfg.stderr, StderrMode::Discard) {
                    let tail = self.stderr.clone();
                    cfg.stderr = StderrMode::Lines(Arc::new(move |line: &[u8]| keep(&tail, line)));
                }
                self.watch_list_changed(&mut cfg);
                let argv: Vec<String> = std::iter::once(command.clone()).chain(args.iter().cloned()).collect();
                cfg.stdio_plan(&argv)
            }
            Reach::Http { url, headers, mode } => {
                for (k, v) in headers {
                    let name = HeaderName::from_bytes(k.as_bytes())
                        .map_err(|_| bad("headers", format!("has a bad name {k:?}")))?;
                    // The value may hold a secret: it is never quoted.
                    let value = HeaderValue::from_str(v)
                        .map_err(|_| bad(&format!("headers.{k}"), "is not a valid header value".into()))?;
                    cfg.headers.push((name, value));
                }
                cfg.http_transport = *mode;
                if let Some(o) = &self.spec.oauth {
                    cfg.oauth = with_oauth(cfg.oauth.take(), o);
                }
                self.watch_list_changed(&mut cfg);
                cfg.http_plan(url)
            }
        }
    }
}

impl Member {
    /// Wakes the member's refresher on `notifications/tools/list_changed`, and hands
    /// every notification on to the host's own callback.
    fn watch_list_changed(&self, cfg: &mut Config) {
        let changed = self.changed.clone();
        let theirs = cfg.client.on_notification.take();
        cfg.client.on_notification = Some(Arc::new(move |method: &str, params: Option<&str>| {
            if matches!(
                method,
                "notifications/tools/list_changed"
                    | "notifications/resources/list_changed"
                    | "notifications/prompts/list_changed"
            ) {
                changed.notify_one();
            }
            if let Some(f) = &theirs {
                f(method, params);
            }
        }));
    }
}

/// The host's authorization settings with a server's `oauth` over them: off when it
/// says so; its client (a secret only with its id) and scope; its redirect only where
/// the host set none, since the host's own listener (the CLI's) receives the redirect.
fn with_oauth(host: Option<crate::auth::Settings>, o: &OAuthSpec) -> Option<crate::auth::Settings> {
    if !o.enabled {
        return None;
    }
    let mut s = host.unwrap_or_default();
    if let Some(id) = &o.client_id {
        s.client_id = Some(id.clone());
        s.client_secret = o.client_secret.clone();
    }
    if o.scope.is_some() {
        s.scope = o.scope.clone();
    }
    if o.client_metadata_url.is_some() {
        s.client_metadata_url = o.client_metadata_url.clone();
    }
    if s.redirect_uri.is_none() {
        s.redirect_uri = o.redirect_uri.clone();
    }
    Some(s)
}

/// A server's resources and templates, when it declares resources, and its prompts,
/// when it declares prompts. A listing that fails leaves them out (logged): the
/// server's tools are what a host cannot do without.
async fn list_others(c: &Client, ctl: &Control) -> Lists {
    use crate::client::Listing;
    let caps = &c.session().capabilities;
    let listed = |on: bool, what: Listing| async move {
        if on {
            c.list_json(what, ctl).await
        } else {
            Ok("[]".to_string())
        }
    };
    let (r, t, p) = tokio::join!(
        listed(caps.resources, Listing::Resources),
        listed(caps.resources, Listing::ResourceTemplates),
        listed(caps.prompts, Listing::Prompts)
    );
    let keyed = |what: &str, json: Result<String>, key: &str| -> Vec<(String, String)> {
        let parsed = json.and_then(|j| {
            serde_json::from_str::<Vec<Box<serde_json::value::RawValue>>>(&j)
                .map_err(|e| Error::new(Status::MCPC_ERR_PROTOCOL, e.to_string()))
        });
        match parsed {
            Ok(list) => list
                .into_iter()
                .filter_map(|e| {
                    let v: serde_json::Value = serde_json::from_str(e.get()).ok()?;
                    Some((v.get(key)?.as_str()?.to_string(), e.get().to_string()))
                })
                .collect(),
            Err(e) => {
                log::info!("{what}: {e}");
                Vec::new()
            }
        }
    };
    Lists {
        resources: keyed("resources/list", r, "uri"),
        templates: keyed("resources/templates/list", t, "uriTemplate"),
        prompts: keyed("prompts/list", p, "name"),
    }
}

/// The host's environment policy, written into the stdio configuration: a variable
/// the server's own `env` sets is always passed.
fn inherit(cfg: &mut Config, own: &[(String, String)], policy: &EnvPolicy) {
    // The server's own: its configuration's env, and what its options set.
    let set_by_options: Vec<OsString> = cfg
        .env
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| k.clone())
        .collect();
    let named = |k: &str| own.iter().any(|(n, _)| n == k) || set_by_options.iter().any(|n| n == k);
    match policy {
        EnvPolicy::PassAll => {}
        EnvPolicy::NoSecrets => {
            for (k, _) in std::env::vars_os() {
                if let Some(name) = k.to_str() {
                    if looks_secret(name) && !named(name) {
                        cfg.env.push((k.clone(), None));
                    }
                }
            }
        }
        EnvPolicy::Allow(list) => {
            cfg.clear_env = true;
            for name in list.iter().filter(|n| !named(n)) {
                if let Some(v) = std::env::var_os(name) {
                    cfg.env.push((OsString::from(name), Some(v)));
                }
            }
        }
    }
}

fn keep(tail: &Mutex<VecDeque<String>>, line: &[u8]) {
    let mut text = String::from_utf8_lossy(&line[..line.len().min(STDERR_LINE_MAX)]).into_owned();
    text.retain(|c| !c.is_control() || c == '\t');
    let mut t = lock(tail);
    if t.len() == STDERR_LINES {
        t.pop_front();
    }
    t.push_back(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_oauth_over_the_hosts() {
        let host = crate::auth::Settings {
            client_id: Some("host".into()),
            client_secret: Some("host-secret".into()),
            redirect_uri: Some("http://127.0.0.1:1/callback".into()),
            headless: true,
            ..Default::default()
        };
        let o = OAuthSpec {
            enabled: true,
            client_id: Some("own".into()),
            scope: Some("mcp".into()),
            redirect_uri: Some("http://127.0.0.1:2/callback".into()),
            ..Default::default()
        };
        let s = with_oauth(Some(host.clone()), &o).unwrap();
        assert_eq!(s.client_id.as_deref(), Some("own"));
        assert_eq!(s.client_secret, None, "the host's secret is not the server's client's");
        assert_eq!(s.scope.as_deref(), Some("mcp"));
        assert_eq!(
            s.redirect_uri.as_deref(),
            Some("http://127.0.0.1:1/callback"),
            "the host's listener"
        );
        assert!(s.headless, "the rest stays the host's");
        let s = with_oauth(None, &o).unwrap();
        assert_eq!(s.redirect_uri.as_deref(), Some("http://127.0.0.1:2/callback"));
        assert!(with_oauth(Some(host), &OAuthSpec::default()).is_none(), "turned off");
    }

    #[test]
    fn the_environment_a_stdio_server_inherits() {
        std::env::set_var("MCPC_MEMBER_TEST_TOKEN", "t");
        std::env::set_var("MCPC_MEMBER_TEST_PLAIN", "p");
        let removed = |cfg: &Config, n: &str| cfg.env.iter().any(|(k, v)| k == n && v.is_none());
        let mut cfg = Config::default();
        inherit(&mut cfg, &[], &EnvPolicy::NoSecrets);
        assert!(removed(&cfg, "MCPC_MEMBER_TEST_TOKEN") && !removed(&cfg, "MCPC_MEMBER_TEST_PLAIN"));
        let mut cfg = Config::default();
        inherit(
            &mut cfg,
            &[("MCPC_MEMBER_TEST_TOKEN".into(), "own".into())],
            &EnvPolicy::NoSecrets,
        );
        assert!(!removed(&cfg, "MCPC_MEMBER_TEST_TOKEN"), "the server's env names it");
        let mut cfg = Config::default();
        cfg.env
            .push(("MCPC_MEMBER_TEST_TOKEN".into(), Some("from options".into())));
        inherit(&mut cfg, &[], &EnvPolicy::NoSecrets);
        assert!(!removed(&cfg, "MCPC_MEMBER_TEST_TOKEN"), "the server's options set it");
        let mut cfg = Config::default();
        cfg.env.push(("MCPC_MEMBER_TEST_PLAIN".into(), Some("mine".into())));
        inherit(&mut cfg, &[], &EnvPolicy::Allow(vec!["MCPC_MEMBER_TEST_PLAIN".into()]));
        assert_eq!(
            cfg.env,
            vec![("MCPC_MEMBER_TEST_PLAIN".into(), Some("mine".into()))],
            "the options' value wins"
        );
        let mut cfg = Config::default();
        inherit(&mut cfg, &[], &EnvPolicy::PassAll);
        assert!(cfg.env.is_empty() && !cfg.clear_env);
        let mut cfg = Config::default();
        inherit(&mut cfg, &[], &EnvPolicy::Allow(vec!["MCPC_MEMBER_TEST_PLAIN".into()]));
        assert!(cfg.clear_env);
        assert_eq!(cfg.env, vec![("MCPC_MEMBER_TEST_PLAIN".into(), Some("p".into()))]);
    }
}
