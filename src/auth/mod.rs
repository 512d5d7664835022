//! The MCP authorization client (OAuth 2.1): after a 401 it discovers the
//! authorization server, identifies the client, obtains a token by the grant the
//! host chose, keeps it fresh and stored, and steps up its scope after a 403
//! `insufficient_scope`. It plugs into the HTTP transport as its
//! [`Authorizer`]; the host's part (showing the authorization URL, storing
//! credentials) comes in as the traits below.
//!
//! One login or refresh runs at a time per client (the gate): concurrent calls
//! that meet the same expired token wait for its one refresh and share its outcome.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;
use zeroize::Zeroizing;

use crate::drive::BoxFuture;
use crate::error::{Error, Result, Status};
use crate::transport::http::Authorizer;

mod assertion;
pub(crate) mod challenge;
mod discover;
mod dpop;
mod flow;
mod net;
mod register;
mod sign;

use discover::Found;
use flow::{Failed, Tokens};

/// The grant the client uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// A user logs in at the authorization server (authorization code with PKCE).
    AuthorizationCode,
    /// No user: the client authenticates as itself (secret or signed assertion).
    ClientCredentials,
    /// No user: a JWT from the host (a workload's identity token, or an
    /// enterprise identity provider's ID token to exchange) is the grant.
    JwtBearer,
}

/// Gives a fresh assertion (a JWT) for the JWT bearer grant, or None when there
/// is none. Called on a blocking thread, before each token request that needs one.
pub type AssertionFn = Arc<dyn Fn() -> Option<Zeroizing<String>> + Send + Sync>;

pub use assertion::Idp;
pub use sign::{SignFn, Signer};

/// What the host hands back for an authorization URL.
pub enum LoginOutcome {
    /// The URL the authorization server redirected to (with `code` and `state`).
    Redirect(String),
    Cancelled,
}

/// Completes one login: exactly once, from any thread. Dropped unused, the login
/// ends as cancelled.
pub struct LoginDone(tokio::sync::oneshot::Sender<LoginOutcome>);

impl LoginDone {
    pub fn complete(self, outcome: LoginOutcome) {
        let _ = self.0.send(outcome);
    }
}

/// The host's part of a login: show `url` to the user (open a browser) and
/// complete `done` with the redirect, now or later.
pub trait Browser: Send + Sync {
    fn open(&self, url: &str, done: LoginDone);
}

/// The host's storage of tokens and registrations, so that the next run does not
/// ask again. Keys name the server or the issuer; values are JSON holding secrets.
pub trait Store: Send + Sync {
    fn load(&self, key: &str) -> Option<String>;
    /// `None` deletes the key.
    fn save(&self, key: &str, value: Option<&str>);
}

/// How the host configured authorization. Holds secrets: never printed.
#[derive(Clone)]
pub struct Settings {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// A client ID metadata document's URL, used as the client id where the
    /// authorization server supports that.
    pub client_metadata_url: Option<String>,
    pub client_name: String,
    pub redirect_uri: Option<String>,
    /// Scope to ask for when neither the challenge nor the metadata names one.
    pub scope: Option<String>,
    pub grant: Grant,
    pub browser: Option<Arc<dyn Browser>>,
    pub store: Option<Arc<dyn Store>>,
    /// Never log in: stored or refreshed credentials only.
    pub headless: bool,
    /// The client's P-256 key or the host's signer: the client authenticates with
    /// `private_key_jwt` instead of a secret.
    pub client_key: Option<Arc<Signer>>,
    /// The assertion of the JWT bearer grant.
    pub assertion: Option<AssertionFn>,
    /// With the JWT bearer grant: the assertion is the identity provider's ID
    /// token, exchanged there for an ID-JAG first.
    pub idp: Option<Idp>,
    /// Use DPoP where the authorization server offers it (ES256).
    pub dpop: bool,
    /// The DPoP key or the host's signer; a fresh key per client when None.
    pub dpop_key: Option<Arc<Signer>>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "mcpc".to_string(),
            redirect_uri: None,
            scope: None,
            grant: Grant::AuthorizationCode,
            browser: None,
            store: None,
            headless: false,
            client_key: None,
            assertion: None,
            idp: None,
            dpop: true,
            dpop_key: None,
        }
    }
}

/// How many step-ups (403 `insufficient_scope`) in a row may ask for the same
/// scope: more would loop, asking for what the server will not accept.
const MAX_STEP_UPS: u32 = 2;

#[derive(Default)]
struct Gate {
    found: Option<Found>,
    /// Every scope asked for so far: a step-up asks for these and the new ones.
    scopes: Vec<String>,
    step_ups: u32,
    /// The scope the last step-up was for.
    stepped_for: Option<String>,
    loaded: bool,
    /// The last failed attempt: its number, the token it was for, its error.
    failed: Option<(u64, Option<String>, Error)>,
}

/// The OAuth client of one MCP server endpoint.
pub struct OAuth {
    settings: Settings,
    server: Url,
    net: net::Net,
    current: Mutex<Option<Arc<Tokens>>>,
    gate: tokio::sync::Mutex<Gate>,
    /// Attempts made (logins and refreshes after a challenge): requests that went
    /// out before a failed one share its outcome rather than try again.
    attempts: AtomicU64,
}

fn tokens_key(server: &Url) -> String {
    format!("tokens {}", discover::canonical_resource(server))
}

impl OAuth {
    pub fn new(
        settings: Settings,
        server: &Url,
        ca_pem: &[Vec<u8>],
        connect_timeout: Duration,
        proxy: crate::transport::proxy::ProxySettings,
    ) -> Result<OAuth> {
        let has_credential = settings.client_secret.is_some() || settings.client_key.is_some();
        if settings.grant == Grant::ClientCredentials && (settings.client_id.is_none() || !has_credential) {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "the client credentials grant needs a client id and a secret or key",
            ));
        }
        if settings.grant == Grant::JwtBearer && settings.assertion.is_none() {
            return Err(Error::new(
                Status::MCPC_ERR_INVALID_ARG,
                "the JWT bearer grant needs an assertion",
            ));
        }
        let dpop = match settings.dpop {
            false => None,
            true => Some(Arc::new(dpop::Dpop::new(settings.dpop_key.clone())?)),
        };
        Ok(OAuth {
            settings,
            server: server.clone(),
            net: net::Net::new(ca_pem, connect_timeout, proxy, dpop)?,
            current: Mutex::new(None),
            gate: tokio::sync::Mutex::new(Gate::default()),
            attempts: AtomicU64::new(0),
        })
    }

    fn current(&self) -> Option<Arc<Tokens>> {
        self.current.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn keep(&self, t: Option<Tokens>) {
        if let Some(st) = &self.settings.store {
            let json = t.as_ref().and_then(|t| serde_json::to_string(t).ok());
            st.save(&tokens_key(&self.server), json.as_deref());
        }
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = t.map(Arc::new);
    }

    /// Loads stored tokens once, at the first request.
    fn load(&self, g: &mut Gate) {
        if g.loaded {
            return;
        }
        g.loaded = true;
        let stored = self
            .settings
            .store
            .as_ref()
            .and_then(|s| s.load(&tokens_key(&self.server)));
        if let Some(t) = stored.and_then(|s| serde_json::from_str::<Tokens>(&s).ok()) {
            *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(t));
        }
    }

    async fn found<'g>(&self, g: &'g mut Gate, hint: Option<&str>) -> Result<&'g Found> {
        if g.found.is_none() || hint.is_some() {
            let f = discover::discover(&self.net, &self.server, hint).await?;
            // DPoP where the authorization server accepts ES256 proofs; bearer otherwise.
            let es256 = f
                .metadata
                .dpop_signing_alg_values_supported
                .as_ref()
                .is_some_and(|a| a.iter().any(|a| a == "ES256"));
            self.net.dpop_on.store(es256, Ordering::Release);
            g.found = Some(f);
        }
        Ok(g.found.as_ref().expect("discovery ran"))
    }

    /// Refreshes `t`. Ok(None) when the grant is gone (`invalid_grant`): log in again.
    async fn refresh(&self, g: &mut Gate, t: &Tokens, hint: Option<&str>) -> Result<Option<Tokens>> {
        let Some(rt) = t.refresh_token.as_deref() else {
            return Ok(None);
        };
        let found = self.found(g, hint).await?.clone();
        if found.issuer != t.issuer {
            return Ok(None); // the server moved to another authorization server
        }
        let redirect = self.settings.redirect_uri.as_deref();
        let id = register::identify(&self.net, &self.settings, &found, redirect).await?;
        match flow::refresh(&self.net, &id, &found, rt).await {
            Ok(t) => Ok(Some(t)),
            Err(Failed::InvalidGrant(_)) => Ok(None),
            Err(Failed::Other(e)) => Err(e.context("refreshing the access token")),
        }
    }

    /// Obtains fresh tokens by the configured grant.
    async fn login(&self, g: &mut Gate, hint: Option<&str>, challenged: Option<&str>) -> Result<Tokens> {
        let found = self.found(g, hint).await?.clone();
        // Scope: the challenge's, else the resource's scopes_supported, else the
        // host's; a step-up keeps every scope asked for before.
        let mut wanted: Vec<String> = match (challenged, &found.resource_scopes, &self.settings.scope) {
            (Some(c), _, _) => c.split_whitespace().map(str::to_string).collect(),
            (None, Some(s), _) => s.clone(),
            (None, None, Some(s)) => s.split_whitespace().map(str::to_string).collect(),
            _ => Vec::new(),
        };
        for s in &g.scopes {
            if !wanted.contains(s) {
                wanted.insert(0, s.clone());
            }
        }
        let offline = "offline_access".to_string();
        let as_scopes = found.metadata.scopes_supported.as_deref().unwrap_or_default();
        if self.settings.grant == Grant::AuthorizationCode && as_scopes.contains(&offline) && !wanted.contains(&offline)
        {
            wanted.push(offline);
        }
        g.scopes.clone_from(&wanted);
        // A login that cannot happen is known before the client registers anywhere.
        let login = match self.settings.grant {
            Grant::AuthorizationCode => Some(self.login_parts(&found)?),
            _ => None,
        };
        let redirect = self.settings.redirect_uri.as_deref();
        let id = register::identify(&self.net, &self.settings, &found, redirect).await?;
        match self.settings.grant {
            Grant::ClientCredentials if id.auth_method == "private_key_jwt" => {
                let form = vec![("grant_type".to_string(), "client_credentials".to_string())];
                assertion::grant(&self.net, &id, &found, form, &wanted).await
            }
            Grant::ClientCredentials => flow::client_credentials(&self.net, &id, &found, &wanted).await,
            Grant::JwtBearer => {
                let source = self.settings.assertion.clone().expect("checked at creation");
                let jwt = tokio::task::spawn_blocking(move || source())
                    .await
                    .ok()
                    .flatten()
                    .ok_or_else(|| {
                        Error::new(
                            Status::MCPC_ERR_LOGIN_REQUIRED,
                            "the assertion callback gave no assertion",
                        )
                    })?;
                let jwt = match &self.settings.idp {
                    Some(idp) => assertion::id_jag(&self.net, idp, &jwt, &found, &wanted).await?,
                    None => jwt,
                };
                assertion::grant(&self.net, &id, &found, assertion::bearer_form(&jwt), &wanted).await
            }
            Grant::AuthorizationCode => {
                let (browser, redirect) = login.expect("made above for this grant");
                flow::authorization_code(&self.net, browser, &id, &found, &redirect, &wanted).await
            }
        }
    }

    /// What a login needs (the host's callback and the redirect URI), or why there
    /// can be none: headless mode, no callback, no redirect URI, or a server that
    /// does not advertise PKCE S256 (only the 2025-03-26 defaults, with no metadata
    /// at all, may not).
    fn login_parts(&self, found: &Found) -> Result<(Arc<dyn Browser>, String)> {
        let required = |why: &str| Error::new(Status::MCPC_ERR_LOGIN_REQUIRED, why.to_string());
        if self.settings.headless {
            return Err(required("the server needs a login, and headless mode allows none"));
        }
        let browser = self
            .settings
            .browser
            .clone()
            .ok_or_else(|| required("the server needs a login, and no authorize callback is set"))?;
        let redirect = self
            .settings
            .redirect_uri
            .clone()
            .ok_or_else(|| required("no redirect URI is set for the login"))?;
        let s256 = found
            .metadata
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"));
        if found.has_metadata && !s256 {
            return Err(Error::new(
                Status::MCPC_ERR_AUTH_SERVER,
                "the authorization server does not advertise PKCE S256",
            ));
        }
        Ok((browser, redirect))
    }

    async fn challenge(
        &self,
        status: u16,
        header: Option<&str>,
        nonce: Option<&str>,
        refused: Option<&str>,
        sent_at: u64,
    ) -> Result<()> {
        let c = challenge::parse(header.unwrap_or(""));
        // RFC 9449 §9: the server wants its nonce in the proof; the transport bounds
        // how often a request may be sent again.
        if let (Some("use_dpop_nonce"), Some(n), Some(d)) = (c.error.as_deref(), nonce, &self.net.dpop) {
            *d.rs_nonce.lock().unwrap_or_else(|p| p.into_inner()) = Some(n.to_string());
            return Ok(());
        }
        // A proof refused (replayed, or out of the server's clock window) is not
        // mended by a new token: each proof is fresh already, so a login would loop.
        if c.error.as_deref() == Some("invalid_dpop_proof") && self.binds_requests() {
            return Err(Error::new(
                Status::MCPC_ERR_AUTH,
                "the server refused the DPoP proof (invalid_dpop_proof); if its clock differs \
                 from this machine's, it needs to give a DPoP-Nonce",
            ));
        }
        let mut g = self.gate.lock().await;
        self.load(&mut g);
        let cur = self.current();
        // Another request already replaced the refused token: use the new one.
        if let Some(t) = &cur {
            if Some(t.access_token.as_str()) != refused {
                return Ok(());
            }
        }
        // An attempt for the same token failed while this request waited: its outcome.
        if let Some((n, tok, e)) = &g.failed {
            if *n >= sent_at && tok.as_deref() == refused {
                return Err(e.clone());
            }
        }
        let outcome = self.renew(&mut g, status, &c, cur.as_deref()).await;
        let n = self.attempts.fetch_add(1, Ordering::AcqRel);
        match outcome {
            Ok(fresh) => {
                g.failed = None;
                self.keep(Some(fresh));
                Ok(())
            }
            Err(e) => {
                g.failed = Some((n, refused.map(str::to_string), e.clone()));
                Err(e)
            }
        }
    }

    /// New tokens after a challenge: a refresh when it can serve, else a login.
    async fn renew(&self, g: &mut Gate, status: u16, c: &challenge::Challenge, cur: Option<&Tokens>) -> Result<Tokens> {
        let hint = c.resource_metadata.as_deref();
        if status == 403 {
            if g.stepped_for != c.scope {
                g.step_ups = 0;
                g.stepped_for.clone_from(&c.scope);
            }
            g.step_ups += 1;
            if g.step_ups > MAX_STEP_UPS {
                return Err(Error::new(
                    Status::MCPC_ERR_AUTH,
                    format!("HTTP 403: the scope is still insufficient after {MAX_STEP_UPS} step-ups"),
                ));
            }
        } else if let Some(t) = cur {
            if let Some(fresh) = self.refresh(g, t, hint).await? {
                return Ok(fresh);
            }
        }
        self.login(g, hint, c.scope.as_deref()).await
    }

    async fn token_now(&self) -> Result<Option<String>> {
        if let Some(t) = self.current() {
            if !t.expiring() {
                return Ok(Some(t.access_token.clone()));
            }
        }
        let mut g = self.gate.lock().await;
        self.load(&mut g);
        let Some(t) = self.current() else {
            return Ok(None);
        };
        if !t.expiring() || t.refresh_token.is_none() {
            return Ok(Some(t.access_token.clone()));
        }
        match self.refresh(&mut g, &t, None).await? {
            Some(fresh) => {
                let token = fresh.access_token.clone();
                self.keep(Some(fresh));
                Ok(Some(token))
            }
            None => {
                // The grant is gone: send none, and the 401 that follows logs in.
                self.keep(None);
                Ok(None)
            }
        }
    }
}

impl Authorizer for OAuth {
    fn token(&self) -> BoxFuture<'_, Result<Option<String>>> {
        Box::pin(self.token_now())
    }

    fn challenged<'a>(
        &'a self,
        status: u16,
        challenge: Option<&'a str>,
        nonce: Option<&'a str>,
        refused: Option<&'a str>,
        epoch: u64,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.challenge(status, challenge, nonce, refused, epoch))
    }

    fn epoch(&self) -> u64 {
        self.attempts.load(Ordering::Acquire)
    }

    fn proof<'a>(&'a self, method: &'a str, url: &'a Url, token: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(async move {
            // Tokens from one authorization server are all bound or all bearer: a
            // token sent just as a refresh replaced it is signed for as the new one
            // is, so a bound token never goes out as bearer.
            let Some(t) = self.current() else { return Ok(None) };
            let (true, Some(d)) = (t.dpop, &self.net.dpop) else {
                return Ok(None);
            };
            let nonce = d.rs_nonce.lock().unwrap_or_else(|p| p.into_inner()).clone();
            d.proof(method, url, Some(token), nonce.as_deref()).await.map(Some)
        })
    }

    fn binds_requests(&self) -> bool {
        // Only a DPoP-bound token needs a proof per request; a bearer token's head
        // may be kept (it names the token, so a new token never reuses it).
        self.current().is_some_and(|t| t.dpop)
    }
}
