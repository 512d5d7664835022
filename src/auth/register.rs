//! The client's identity at an authorization server: pre-registered, a client ID
//! metadata document (a URL as the client id), credentials stored from an earlier
//! registration, or dynamic client registration (RFC 7591). Kept per issuer.

use ::http::{Method, StatusCode};
use serde::{Deserialize, Serialize};
use url::Url;

use super::discover::Found;
use super::net::Net;
use super::{Grant, Settings};
use crate::error::{quote, Error, Result, Status};

/// The JWT bearer grant (RFC 7523), which `assertion` sends and a registration names.
pub const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Who the client is at one authorization server, and how it authenticates at
/// the token endpoint (`none`, `client_secret_basic` or `client_secret_post`).
#[derive(Clone, Serialize, Deserialize)]
pub struct Identity {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub auth_method: String,
    /// The key of `private_key_jwt` (the host's; never stored by mcpc).
    #[serde(skip)]
    pub key: Option<std::sync::Arc<super::sign::Signer>>,
}

/// The token endpoint authentication to use, from what the server supports
/// (RFC 8414's default when it says nothing) and whether there is a secret.
pub fn choose_method(supported: Option<&[String]>, has_secret: bool) -> String {
    let default = ["client_secret_basic".to_string()];
    let list = supported.unwrap_or(&default);
    let has = |m: &str| list.iter().any(|s| s == m);
    if has_secret {
        for m in ["client_secret_basic", "client_secret_post"] {
            if has(m) {
                return m.to_string();
            }
        }
        if !has("none") {
            return "client_secret_basic".to_string();
        }
    }
    "none".to_string()
}

/// The store key of the registration made at `issuer`.
pub fn store_key(issuer: &str) -> String {
    format!("client {issuer}")
}

/// The client's identity at the server discovery found.
pub async fn identify(net: &Net, s: &Settings, found: &Found, redirect_uri: Option<&str>) -> Result<Identity> {
    let supported = found.metadata.token_endpoint_auth_methods_supported.as_deref();
    if let Some(id) = &s.client_id {
        let auth_method = if s.client_key.is_some() {
            "private_key_jwt".to_string()
        } else {
            choose_method(supported, s.client_secret.is_some())
        };
        return Ok(Identity {
            client_id: id.clone(),
            client_secret: s.client_secret.clone(),
            auth_method,
            key: s.client_key.clone(),
        });
    }
    if let (Some(url), true, Grant::AuthorizationCode) = (
        &s.client_metadata_url,
        found.metadata.client_id_metadata_document_supported,
        s.grant,
    ) {
        return Ok(Identity {
            client_id: url.clone(),
            client_secret: None,
            auth_method: "none".to_string(),
            key: None,
        });
    }
    let key = store_key(&found.issuer);
    if let Some(stored) = s.store.as_ref().and_then(|st| st.load(&key)) {
        if let Ok(id) = serde_json::from_str::<Identity>(&stored) {
            return Ok(id);
        }
    }
    let Some(endpoint) = &found.metadata.registration_endpoint else {
        return Err(Error::new(
            Status::MCPC_ERR_AUTH,
            "no client id is set, and the authorization server offers neither client ID metadata documents nor registration",
        ));
    };
    let id = register(net, s, found, endpoint, redirect_uri).await?;
    if let Some(st) = &s.store {
        if let Ok(json) = serde_json::to_string(&id) {
            st.save(&key, Some(&json));
        }
    }
    Ok(id)
}

/// Dynamic client registration (RFC 7591) as a native application.
async fn register(
    net: &Net,
    s: &Settings,
    found: &Found,
    endpoint: &str,
    redirect_uri: Option<&str>,
) -> Result<Identity> {
    let url = Url::parse(endpoint).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_AUTH_SERVER,
            format!("the registration endpoint is not a URL: {e}"),
        )
    })?;
    let supported = found.metadata.token_endpoint_auth_methods_supported.as_deref();
    let asked = match supported {
        Some(l) if l.iter().all(|m| m == "none") => "none".to_string(),
        _ => choose_method(supported, true),
    };
    let (grants, redirects): (Vec<&str>, Vec<&str>) = match s.grant {
        Grant::AuthorizationCode => (
            vec!["authorization_code", "refresh_token"],
            redirect_uri.into_iter().collect(),
        ),
        Grant::ClientCredentials => (vec!["client_credentials"], vec![]),
        Grant::JwtBearer => (vec![JWT_BEARER], vec![]),
    };
    let mut body = serde_json::json!({
        "client_name": s.client_name,
        "redirect_uris": redirects,
        "grant_types": grants,
        "response_types": if s.grant == Grant::AuthorizationCode { vec!["code"] } else { vec![] },
        "token_endpoint_auth_method": asked,
        "application_type": "native",
    });
    if let Some(scope) = &s.scope {
        body["scope"] = serde_json::Value::String(scope.clone());
    }
    let body = serde_json::to_vec(&body).unwrap_or_default();
    let a = net
        .send(
            Method::POST,
            &url,
            &[("content-type", "application/json"), ("accept", "application/json")],
            &body,
        )
        .await?;
    if a.status != StatusCode::CREATED && a.status != StatusCode::OK {
        #[derive(Deserialize)]
        struct E {
            error: Option<String>,
        }
        let why = serde_json::from_slice::<E>(&a.body).ok().and_then(|e| e.error);
        return Err(Error::new(
            Status::MCPC_ERR_AUTH_SERVER,
            format!(
                "client registration failed: HTTP {}{}",
                a.status,
                why.map(|w| format!(" ({})", quote(&w))).unwrap_or_default()
            ),
        ));
    }
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        client_secret: Option<String>,
        token_endpoint_auth_method: Option<String>,
    }
    let r: Registered = serde_json::from_slice(&a.body).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_AUTH_SERVER,
            format!("the registration response is malformed: {e}"),
        )
    })?;
    let auth_method = r
        .token_endpoint_auth_method
        .unwrap_or_else(|| choose_method(supported, r.client_secret.is_some()));
    Ok(Identity {
        client_id: r.client_id,
        client_secret: r.client_secret,
        auth_method,
        key: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_method_follows_what_the_server_supports() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            choose_method(Some(&l(&["client_secret_post"])), true),
            "client_secret_post"
        );
        assert_eq!(choose_method(Some(&l(&["none"])), true), "none");
        assert_eq!(choose_method(None, true), "client_secret_basic");
        assert_eq!(choose_method(None, false), "none");
        assert_eq!(
            choose_method(Some(&l(&["client_secret_post", "client_secret_basic"])), true),
            "client_secret_basic"
        );
    }
}
