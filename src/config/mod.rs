//! One configuration for a connection, whatever its transport: what the C options
//! hold, and the policies that make a stdio or an HTTP configuration from it.

use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

use http::header::{HeaderName, HeaderValue};

use crate::client::{Client, Control, Options};
use crate::error::{Error, Result, Status};
use crate::protocol::Negotiation;
use crate::transport::http::{Authorizer, HttpConfig, HttpTransport, LegacySseTransport, TokenFn};
use crate::transport::stdio::{StderrMode, StdioConfig, StdioTransport};
use crate::transport::{SinkRef, Transport};

mod check;

/// The longest an HTTP connection may take to open, whatever the client's timeout.
const MAX_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What makes a client's transport, given the sink it delivers into.
pub type Connector = Box<dyn Fn(SinkRef) -> Result<Arc<dyn Transport>> + Send + Sync>;

/// Everything a connection needs besides the transport's address: the client's
/// options and every transport's settings.
#[derive(Clone)]
pub struct Config {
    pub client: Options,
    pub env: Vec<(OsString, Option<OsString>)>,
    pub clear_env: bool,
    pub cwd: Option<std::path::PathBuf>,
    pub stderr: StderrMode,
    pub max_message_size: usize,
    pub close_grace: Duration,
    pub term_grace: Duration,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub bearer: Option<String>,
    pub token_fn: Option<TokenFn>,
    /// OAuth for HTTP endpoints; it replaces `bearer` and `token_fn`.
    pub oauth: Option<crate::auth::Settings>,
    pub ca_pem: Vec<Vec<u8>>,
    pub standalone_stream: bool,
    pub proxy: crate::transport::proxy::ProxySettings,
    pub http_transport: HttpMode,
    /// Which HTTP versions may carry an HTTP transport's messages.
    pub http_version: HttpVersion,
    /// Start a stdio server again when it dies (off when None).
    pub restart: Option<Restart>,
}

/// How often, and how soon, a server is started again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Restart {
    /// Restarts in the client's life; 0: never.
    pub max: u32,
    /// The wait before the first restart, doubled for each one after it.
    pub backoff: Duration,
}

pub use crate::transport::hx::Version as HttpVersion;

/// Which HTTP transport a URL is reached with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HttpMode {
    /// Streamable HTTP, then, when its POST is answered 400, 404 or 405 without a
    /// JSON-RPC error body, the HTTP+SSE transport of 2024-11-05.
    #[default]
    Auto,
    Streamable,
    /// The HTTP+SSE transport of 2024-11-05 only.
    Sse,
}

/// How a client is made: its transport's connector, and the one to fall back to.
pub struct Plan {
    connector: Connector,
    /// The HTTP+SSE transport, for a Streamable HTTP endpoint that is not one.
    fallback: Option<Connector>,
    options: Options,
    /// Start the server again when it dies (stdio).
    pub restart: Option<Restart>,
}

impl Plan {
    /// Connects with `connector` alone.
    pub fn new(connector: Connector, options: Options) -> Plan {
        Plan {
            connector,
            fallback: None,
            options,
            restart: None,
        }
    }

    /// Names the server in task references (see `crate::client::tasks::Reference`).
    pub fn endpoint(mut self, id: String) -> Plan {
        self.options.endpoint = id;
        self
    }

    /// Starts the server again when it dies, as `restart` says.
    pub fn with_restart(mut self, restart: Restart) -> Plan {
        self.options.restart_follows = true;
        self.restart = Some(restart);
        self
    }

    /// Makes a client whose failed connection is followed by a restart of the
    /// server, or not (`follows`).
    pub async fn connect_restarting(&self, ctl: &Control, follows: bool) -> Result<Client> {
        let mut options = self.options.clone();
        options.restart_follows = follows;
        Client::connect(&*self.connector, options, ctl).await
    }

    /// Makes the client: the first transport, then the fallback where the first
    /// showed an older server (the specification's backwards-compatibility rule).
    pub async fn connect(&self, ctl: &Control) -> Result<Client> {
        // One deadline for both tries.
        let deadline = tokio::time::Instant::now() + ctl.timeout.unwrap_or(self.options.timeout);
        let first = Client::connect(&*self.connector, self.options.clone(), ctl).await;
        let Some(fallback) = &self.fallback else { return first };
        match first {
            // `initialize` reports its HTTP failure as a handshake error, with the status.
            Err(e)
                if matches!(e.status, Status::MCPC_ERR_HTTP | Status::MCPC_ERR_HANDSHAKE)
                    && matches!(e.http_status, Some(400 | 404 | 405))
                    && e.rpc_code.is_none() =>
            {
                log::debug!("Streamable HTTP refused ({e}); trying the HTTP+SSE transport of 2024-11-05");
                let rest = Control {
                    timeout: Some(deadline.saturating_duration_since(tokio::time::Instant::now())),
                    ..ctl.clone()
                };
                Client::connect(&**fallback, legacy_options(&self.options), &rest)
                    .await
                    .map_err(|e2| e2.context("the HTTP+SSE transport (after Streamable HTTP was refused)"))
            }
            other => other,
        }
    }
}

/// The old transport predates 2026-07-28: `initialize` decides, unless a version
/// is pinned.
fn legacy_options(o: &Options) -> Options {
    let mut o = o.clone();
    if o.negotiation == Negotiation::Auto {
        o.negotiation = Negotiation::Legacy;
    }
    o
}

impl Default for Config {
    fn default() -> Self {
        let stdio = crate::transport::stdio::StdioConfig::new("");
        Config {
            client: Options::default(),
            env: Vec::new(),
            clear_env: false,
            cwd: None,
            stderr: StderrMode::Discard,
            max_message_size: stdio.max_message_size,
            close_grace: stdio.close_grace,
            term_grace: stdio.term_grace,
            headers: Vec::new(),
            bearer: None,
            token_fn: None,
            oauth: None,
            ca_pem: Vec::new(),
            standalone_stream: false,
            proxy: Default::default(),
            http_transport: HttpMode::Auto,
            http_version: Default::default(),
            restart: None,
        }
    }
}

impl Config {
    /// The stdio settings for `args` (the program, then its arguments).
    pub fn stdio(&self, args: &[String]) -> Result<StdioConfig> {
        self.check()?;
        let Some((program, rest)) = args.split_first() else {
            return Err(Error::new(Status::MCPC_ERR_INVALID_ARG, "argv is NULL or argc is 0"));
        };
        let mut cfg = StdioConfig::new(program);
        cfg.args = rest.iter().map(Into::into).collect();
        cfg.env = self.env.clone();
        cfg.clear_env = self.clear_env;
        cfg.cwd = self.cwd.clone();
        cfg.stderr = self.stderr.clone();
        cfg.max_message_size = self.max_message_size;
        cfg.close_grace = self.close_grace;
        cfg.term_grace = self.term_grace;
        Ok(cfg)
    }

    /// The HTTP settings for `url`, checked by the URL policy before anything
    /// connects; a connection opens within the client's timeout, and never takes
    /// longer than [`MAX_CONNECT_TIMEOUT`].
    pub fn http(&self, url: &str) -> Result<HttpConfig> {
        self.check()?;
        let url = crate::url_policy::check_endpoint(url)?;
        let connect_timeout = self.client.timeout.min(MAX_CONNECT_TIMEOUT);
        let authorizer = match &self.oauth {
            Some(s) => {
                let a = crate::auth::OAuth::new(s.clone(), &url, &self.ca_pem, connect_timeout, self.proxy.clone())?;
                Some(Arc::new(a) as Arc<dyn Authorizer>)
            }
            None => None,
        };
        Ok(HttpConfig {
            url,
            headers: self.headers.clone(),
            bearer: self.bearer.clone(),
            token_fn: self.token_fn.clone(),
            authorizer,
            ca_pem: self.ca_pem.clone(),
            max_message_size: self.max_message_size,
            // Servers before 2026-07-28 may send their input requests on the GET stream.
            standalone_stream: self.standalone_stream || self.client.input.any(),
            connect_timeout,
            proxy: self.proxy.clone(),
            http_version: self.http_version,
        })
    }

    /// The connector that starts the server in `args` over stdio.
    pub fn stdio_connector(&self, args: &[String]) -> Result<Connector> {
        let cfg = self.stdio(args)?;
        Ok(Box::new(move |sink: SinkRef| StdioTransport::spawn(cfg.clone(), sink)))
    }

    /// The plan that starts the server in `args` over stdio, restarting it when
    /// the configuration says so.
    pub fn stdio_plan(&self, args: &[String]) -> Result<Plan> {
        let plan =
            Plan::new(self.stdio_connector(args)?, self.client.clone()).endpoint(format!("stdio:{}", args.join(" ")));
        Ok(match self.restart.filter(|r| r.max > 0) {
            Some(r) => plan.with_restart(r),
            None => plan,
        })
    }

    /// The connector for the Streamable HTTP endpoint `url`.
    pub fn http_connector(&self, url: &str) -> Result<Connector> {
        let cfg = self.http(url)?;
        Ok(Box::new(move |sink: SinkRef| HttpTransport::connect(cfg.clone(), sink)))
    }

    /// The plan for `url`: Streamable HTTP, the HTTP+SSE transport, or the first
    /// falling back to the second ([`HttpMode`]).
    pub fn http_plan(&self, url: &str) -> Result<Plan> {
        let plan = self.http_plan_of(url)?;
        // The endpoint without what may be secret: credentials, query, fragment.
        let mut id = crate::url_policy::check_endpoint(url)?;
        let _ = id.set_username("");
        let _ = id.set_password(None);
        id.set_query(None);
        id.set_fragment(None);
        Ok(plan.endpoint(id.to_string()))
    }

    fn http_plan_of(&self, url: &str) -> Result<Plan> {
        let cfg = self.http(url)?;
        let sse = {
            let cfg = cfg.clone();
            Box::new(move |sink: SinkRef| LegacySseTransport::connect(cfg.clone(), sink)) as Connector
        };
        Ok(match self.http_transport {
            HttpMode::Sse => Plan::new(sse, legacy_options(&self.client)),
            HttpMode::Streamable => Plan::new(self.http_connector(url)?, self.client.clone()),
            HttpMode::Auto => Plan {
                connector: Box::new(move |sink: SinkRef| HttpTransport::connect(cfg.clone(), sink)),
                fallback: Some(sse),
                options: self.client.clone(),
                restart: None,
            },
        })
    }
}
