//! The grants: the authorization code with PKCE S256 (the host opens the
//! authorization URL and hands back the redirect), the refresh token, and client
//! credentials. Token requests go through the `oauth2` crate over [`Net`].

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oauth2::basic::{BasicClient, BasicErrorResponseType, BasicTokenType};
use oauth2::{
    AuthType, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet, PkceCodeChallenge,
    PkceCodeVerifier, RedirectUrl, RefreshToken, RequestTokenError, Scope, TokenResponse, TokenUrl,
};
use serde::{Deserialize, Serialize};
use url::Url;

use super::discover::Found;
use super::net::{Net, NetError};
use super::register::Identity;
use super::{Browser, LoginOutcome};
use crate::error::{quote, Error, Result, Status};

/// Tokens from one authorization server, as kept and stored.
#[derive(Clone, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The issuer that gave them (credentials never cross authorization servers).
    pub issuer: String,
    /// A DPoP-bound token: presented only with a proof, never as a bearer token.
    #[serde(default)]
    pub dpop: bool,
}

/// How long before its expiry a token is refreshed.
const REFRESH_AHEAD: Duration = Duration::from_secs(60);

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Tokens {
    /// True when the token expires within [`REFRESH_AHEAD`].
    pub fn expiring(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at <= now_secs() + REFRESH_AHEAD.as_secs())
    }
}

/// Why a token request failed: `invalid_grant` (the grant is gone: log in again)
/// apart from every other failure.
pub enum Failed {
    InvalidGrant(Error),
    Other(Error),
}

impl Failed {
    pub fn into_error(self) -> Error {
        match self {
            Failed::InvalidGrant(e) | Failed::Other(e) => e,
        }
    }
}

type TokenClient = BasicClient<EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

fn auth_error(msg: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_AUTH_SERVER, msg)
}

fn token_client(id: &Identity, found: &Found) -> Result<TokenClient> {
    let token_url = found
        .metadata
        .token_endpoint
        .as_deref()
        .ok_or_else(|| auth_error("the authorization server's metadata has no token_endpoint"))?;
    let token_url = TokenUrl::new(token_url.to_string())
        .map_err(|e| auth_error(format!("the token endpoint is not a URL: {e}")))?;
    let mut c = BasicClient::new(ClientId::new(id.client_id.clone()))
        .set_token_uri(token_url)
        .set_auth_type(if id.auth_method == "client_secret_basic" {
            AuthType::BasicAuth
        } else {
            AuthType::RequestBody
        });
    if id.auth_method != "none" {
        if let Some(s) = &id.client_secret {
            c = c.set_client_secret(ClientSecret::new(s.clone()));
        }
    }
    Ok(c)
}

/// Turns the oauth2 crate's outcome into ours; the token type must be Bearer, or
/// DPoP when the request carried a proof (`dpop`).
pub(super) fn tokens_from(
    r: std::result::Result<
        oauth2::basic::BasicTokenResponse,
        RequestTokenError<NetError, oauth2::basic::BasicErrorResponse>,
    >,
    issuer: &str,
    prior_refresh: Option<&str>,
    dpop: bool,
) -> std::result::Result<Tokens, Failed> {
    let t = r.map_err(|e| match e {
        RequestTokenError::ServerResponse(e) => {
            let what = format!(
                "the authorization server refused the token request: {}{}",
                e.error(),
                e.error_description()
                    .map(|d| format!(" ({})", quote(d)))
                    .unwrap_or_default()
            );
            match e.error() {
                BasicErrorResponseType::InvalidGrant => Failed::InvalidGrant(auth_error(what)),
                _ => Failed::Other(auth_error(what)),
            }
        }
        RequestTokenError::Request(e) => Failed::Other(e.0),
        RequestTokenError::Parse(e, _) => Failed::Other(auth_error(format!("the token response is malformed: {e}"))),
        RequestTokenError::Other(e) => Failed::Other(auth_error(format!("the token request failed: {e}"))),
    })?;
    let bound = matches!(t.token_type(), BasicTokenType::Extension(e) if e.eq_ignore_ascii_case("dpop"));
    if *t.token_type() != BasicTokenType::Bearer && !(bound && dpop) {
        return Err(Failed::Other(auth_error(format!(
            "the token type {} is not supported",
            quote(t.token_type().as_ref())
        ))));
    }
    Ok(Tokens {
        access_token: t.access_token().secret().clone(),
        // A refresh token that was not rotated stays the one in use.
        refresh_token: t
            .refresh_token()
            .map(|r| r.secret().clone())
            .or_else(|| prior_refresh.map(str::to_string)),
        expires_at: t.expires_in().map(|d| now_secs() + d.as_secs()),
        scope: t
            .scopes()
            .map(|s| s.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")),
        issuer: issuer.to_string(),
        dpop: bound,
    })
}

/// Redeems a refresh token.
pub async fn refresh(net: &Net, id: &Identity, found: &Found, refresh: &str) -> std::result::Result<Tokens, Failed> {
    let c = token_client(id, found).map_err(Failed::Other)?;
    let token = RefreshToken::new(refresh.to_string());
    let r = c
        .exchange_refresh_token(&token)
        .add_extra_param("resource", found.resource.clone())
        .request_async(net)
        .await;
    tokens_from(r, &found.issuer, Some(refresh), net.dpop_active().is_some())
}

/// The client credentials grant (no user).
pub async fn client_credentials(net: &Net, id: &Identity, found: &Found, scopes: &[String]) -> Result<Tokens> {
    let c = token_client(id, found)?;
    let r = c
        .exchange_client_credentials()
        .add_scopes(scopes.iter().map(|s| Scope::new(s.clone())))
        .add_extra_param("resource", found.resource.clone())
        .request_async(net)
        .await;
    tokens_from(r, &found.issuer, None, net.dpop_active().is_some()).map_err(Failed::into_error)
}

/// The authorization request's URL, with its state and PKCE challenge.
fn authorization_url(
    id: &Identity,
    found: &Found,
    redirect: &str,
    scopes: &[String],
    state: &str,
    challenge: &PkceCodeChallenge,
) -> Result<Url> {
    let endpoint = found
        .metadata
        .authorization_endpoint
        .as_deref()
        .ok_or_else(|| auth_error("the authorization server's metadata has no authorization_endpoint"))?;
    let mut url =
        Url::parse(endpoint).map_err(|e| auth_error(format!("the authorization endpoint is not a URL: {e}")))?;
    super::net::check_url(&url)?;
    {
        let mut q = url.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &id.client_id)
            .append_pair("redirect_uri", redirect)
            .append_pair("state", state)
            .append_pair("code_challenge", challenge.as_str())
            .append_pair("code_challenge_method", "S256")
            .append_pair("resource", &found.resource);
        if !scopes.is_empty() {
            q.append_pair("scope", &scopes.join(" "));
        }
    }
    Ok(url)
}

/// Checks the redirect the host handed back (state, RFC 9207 `iss`, errors) and
/// returns its code.
fn code_from(redirect: &str, state: &str, found: &Found) -> Result<String> {
    let url = Url::parse(redirect).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("the redirect URL is not a URL: {e}"),
        )
    })?;
    let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    if param("state").as_deref() != Some(state) {
        return Err(auth_error(
            "the redirect's state does not match the authorization request",
        ));
    }
    // RFC 9207: a present iss must equal the issuer (simple string comparison);
    // when the server advertises it, it must be present.
    let issuer = found.metadata.issuer.as_deref().unwrap_or(&found.issuer);
    match param("iss") {
        Some(iss) if iss != issuer => {
            return Err(auth_error(format!(
                "the redirect's iss {} is not the authorization server's issuer",
                quote(&iss)
            )))
        }
        None if found.metadata.authorization_response_iss_parameter_supported == Some(true) => {
            return Err(auth_error(
                "the redirect has no iss, which the authorization server promised",
            ))
        }
        _ => {}
    }
    if let Some(err) = param("error") {
        let desc = param("error_description")
            .map(|d| format!(" ({})", quote(&d)))
            .unwrap_or_default();
        let status = if err == "access_denied" {
            Status::MCPC_ERR_LOGIN_CANCELLED
        } else {
            Status::MCPC_ERR_AUTH_SERVER
        };
        return Err(Error::new(
            status,
            format!("authorization failed: {}{desc}", quote(&err)),
        ));
    }
    param("code").ok_or_else(|| auth_error("the redirect carries no code"))
}

/// The authorization code grant: the host shows the authorization URL, the
/// redirect is checked, the code is redeemed with the PKCE verifier.
pub async fn authorization_code(
    net: &Net,
    browser: std::sync::Arc<dyn Browser>,
    id: &Identity,
    found: &Found,
    redirect: &str,
    scopes: &[String],
) -> Result<Tokens> {
    let (challenge, verifier): (PkceCodeChallenge, PkceCodeVerifier) = PkceCodeChallenge::new_random_sha256();
    let state = CsrfToken::new_random();
    let url = authorization_url(id, found, redirect, scopes, state.secret(), &challenge)?;
    let (tx, rx) = tokio::sync::oneshot::channel();
    let url_text = url.to_string();
    // On a blocking thread: the host may show the URL and wait there.
    let shown = tokio::task::spawn_blocking(move || browser.open(&url_text, super::LoginDone(tx)));
    let outcome = rx.await;
    let _ = shown.await;
    let back = match outcome {
        Ok(LoginOutcome::Redirect(r)) => r,
        Ok(LoginOutcome::Cancelled) | Err(_) => {
            return Err(Error::new(Status::MCPC_ERR_LOGIN_CANCELLED, "the login was cancelled"))
        }
    };
    let code = code_from(&back, state.secret(), found)?;
    let c = token_client(id, found)?.set_redirect_uri(RedirectUrl::new(redirect.to_string()).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("the redirect URI is not a URL: {e}"),
        )
    })?);
    let r = c
        .exchange_code(AuthorizationCode::new(code))
        .set_pkce_verifier(verifier)
        .add_extra_param("resource", found.resource.clone())
        .request_async(net)
        .await;
    tokens_from(r, &found.issuer, None, net.dpop_active().is_some()).map_err(Failed::into_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::discover::ServerMetadata;

    fn found(iss_supported: Option<bool>) -> Found {
        Found {
            issuer: "https://as.test".into(),
            metadata: ServerMetadata {
                issuer: Some("https://as.test".into()),
                authorization_response_iss_parameter_supported: iss_supported,
                ..Default::default()
            },
            has_metadata: true,
            resource: "https://mcp.test/mcp".into(),
            resource_scopes: None,
        }
    }

    #[test]
    fn the_redirect_is_checked_before_its_code_is_used() {
        let f = found(Some(true));
        let ok = "http://127.0.0.1:1/cb?code=c&state=s&iss=https%3A%2F%2Fas.test";
        assert_eq!(code_from(ok, "s", &f).unwrap(), "c");
        assert!(code_from(
            "http://127.0.0.1:1/cb?code=c&state=x&iss=https%3A%2F%2Fas.test",
            "s",
            &f
        )
        .is_err());
        assert!(code_from("http://127.0.0.1:1/cb?code=c&state=s", "s", &f).is_err());
        assert!(code_from(
            "http://127.0.0.1:1/cb?code=c&state=s&iss=https%3A%2F%2Fas.test%2F",
            "s",
            &f
        )
        .is_err());
        let g = found(None);
        assert_eq!(code_from("http://127.0.0.1:1/cb?code=c&state=s", "s", &g).unwrap(), "c");
        assert!(code_from(
            "http://127.0.0.1:1/cb?code=c&state=s&iss=https%3A%2F%2Fevil.test",
            "s",
            &g
        )
        .is_err());
        let denied = code_from("http://127.0.0.1:1/cb?error=access_denied&state=s", "s", &g).unwrap_err();
        assert_eq!(denied.status, Status::MCPC_ERR_LOGIN_CANCELLED);
    }
}
