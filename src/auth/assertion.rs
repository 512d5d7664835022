//! Grants and client authentication by signed assertions: `private_key_jwt`
//! (RFC 7523 §2.2), the JWT bearer grant (RFC 7523 §2.1) for workload identity,
//! and the identity assertion authorization grant (ID-JAG), whose assertion comes
//! from the enterprise identity provider by token exchange (RFC 8693).

use std::time::{SystemTime, UNIX_EPOCH};

use ::http::{Method, StatusCode};
use base64::Engine;
use oauth2::RequestTokenError;
use serde::Deserialize;
use url::Url;
use zeroize::{Zeroize, Zeroizing};

use super::discover::Found;
use super::flow::{tokens_from, Tokens};
use super::net::Net;
use super::register::{Identity, JWT_BEARER};
use super::sign::Signer;
use crate::error::{quote, Error, Result, Status};
const CLIENT_ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// How long a client assertion is valid.
const ASSERTION_LIFETIME: u64 = 300;

fn as_error(msg: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_AUTH_SERVER, msg)
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// A random identifier for `jti`.
fn jti() -> String {
    let mut b = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b).unwrap_or_default();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)
}

/// A `private_key_jwt` client assertion for the authorization server `audience`.
pub async fn client_assertion(key: &Signer, client_id: &str, audience: &str) -> Result<String> {
    let t = now();
    let claims = serde_json::json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": t, "exp": t + ASSERTION_LIFETIME, "jti": jti(),
    });
    key.jwt(serde_json::json!({"typ": "JWT"}), &claims).await
}

/// A form's fields, in order.
type Form = Vec<(String, String)>;

/// The parameters that authenticate the client in a token request's body, and the
/// Authorization header value for `client_secret_basic`.
pub async fn client_auth(id: &Identity, found: &Found) -> Result<(Form, Option<String>)> {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let mut params = vec![("client_id".to_string(), id.client_id.clone())];
    let mut header = None;
    match (id.auth_method.as_str(), &id.client_secret, &id.key) {
        ("private_key_jwt", _, Some(key)) => {
            let aud = found.metadata.issuer.as_deref().unwrap_or(&found.issuer);
            params.push(("client_assertion_type".into(), CLIENT_ASSERTION_TYPE.into()));
            params.push((
                "client_assertion".into(),
                client_assertion(key, &id.client_id, aud).await?,
            ));
        }
        ("client_secret_basic", Some(s), _) => {
            let pair = format!("{}:{}", enc(&id.client_id), enc(s));
            header = Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(pair)
            ));
            params.clear();
        }
        ("client_secret_post", Some(s), _) => params.push(("client_secret".into(), s.clone())),
        _ => {}
    }
    Ok((params, header))
}

/// POSTs a form to `url` and returns the whole answer.
/// `token` marks a token endpoint of the authorization server, where DPoP applies
/// as [`Net::token_post`] does it.
async fn post_form(
    net: &Net,
    url: &str,
    mut form: Form,
    authorization: Option<&str>,
    token: bool,
) -> Result<(StatusCode, Vec<u8>)> {
    let url = Url::parse(url).map_err(|e| as_error(format!("the token endpoint is not a URL: {e}")))?;
    let body = Zeroizing::new(
        url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .finish(),
    );
    // The form may hold assertions and secrets: cleared once the body is made.
    form.iter_mut().for_each(|(_, v)| v.zeroize());
    let mut fields = vec![
        ("content-type", "application/x-www-form-urlencoded"),
        ("accept", "application/json"),
    ];
    if let Some(a) = authorization {
        fields.push(("authorization", a));
    }
    let a = if token {
        net.token_post(&url, &fields, body.as_bytes()).await?
    } else {
        net.send(Method::POST, &url, &fields, body.as_bytes()).await?
    };
    Ok((a.status, a.body))
}

/// A token request with an assertion grant (`grant_type` and its own
/// parameters), authenticated as the identity says; its answer read as any.
pub async fn grant(
    net: &Net,
    id: &Identity,
    found: &Found,
    mut form: Vec<(String, String)>,
    scopes: &[String],
) -> Result<Tokens> {
    let endpoint = found
        .metadata
        .token_endpoint
        .as_deref()
        .ok_or_else(|| as_error("the authorization server's metadata has no token_endpoint"))?;
    form.push(("resource".into(), found.resource.clone()));
    if !scopes.is_empty() {
        form.push(("scope".into(), scopes.join(" ")));
    }
    let (auth, header) = client_auth(id, found).await?;
    form.extend(auth);
    let (status, body) = post_form(net, endpoint, form, header.as_deref(), true).await?;
    let parsed = if status.is_success() {
        serde_path_to_error::deserialize(&mut serde_json::Deserializer::from_slice(&body))
            .map_err(|e| RequestTokenError::Parse(e, body.clone()))
    } else {
        Err(match serde_json::from_slice(&body) {
            Ok(e) => RequestTokenError::ServerResponse(e),
            Err(_) => RequestTokenError::Other(format!("HTTP {status}")),
        })
    };
    tokens_from(parsed, &found.issuer, None, net.dpop_active().is_some()).map_err(super::flow::Failed::into_error)
}

/// Where the identity provider is, for the ID-JAG grant.
#[derive(Clone)]
pub struct Idp {
    pub token_endpoint: String,
    pub client_id: String,
}

/// Exchanges the identity provider's `id_token` for an ID-JAG naming the
/// authorization server of `found` and its resource.
pub async fn id_jag(
    net: &Net,
    idp: &Idp,
    id_token: &str,
    found: &Found,
    scopes: &[String],
) -> Result<Zeroizing<String>> {
    let audience = found.metadata.issuer.clone().unwrap_or_else(|| found.issuer.clone());
    let mut form: Form = vec![
        ("grant_type".into(), TOKEN_EXCHANGE.into()),
        ("requested_token_type".into(), ID_JAG.into()),
        ("subject_token".into(), id_token.into()),
        ("subject_token_type".into(), ID_TOKEN.into()),
        ("audience".into(), audience),
        ("resource".into(), found.resource.clone()),
        ("client_id".into(), idp.client_id.clone()),
    ];
    if !scopes.is_empty() {
        form.push(("scope".into(), scopes.join(" ")));
    }
    let (status, body) = post_form(net, &idp.token_endpoint, form, None, false).await?;
    let body = Zeroizing::new(body);
    #[derive(Deserialize)]
    struct Answer {
        access_token: Option<String>,
        issued_token_type: Option<String>,
        error: Option<String>,
        error_description: Option<String>,
    }
    let a: Answer = serde_json::from_slice(&body).map_err(|e| {
        as_error(format!(
            "the identity provider's token exchange answer is malformed: {e}"
        ))
    })?;
    if !status.is_success() || a.error.is_some() {
        return Err(as_error(format!(
            "the identity provider refused the token exchange: {}{}",
            quote(a.error.as_deref().unwrap_or("(no error code)")),
            a.error_description
                .map(|d| format!(" ({})", quote(&d)))
                .unwrap_or_default()
        )));
    }
    if a.issued_token_type.as_deref() != Some(ID_JAG) {
        return Err(as_error("the identity provider did not issue an ID-JAG"));
    }
    a.access_token
        .map(Zeroizing::new)
        .ok_or_else(|| as_error("the identity provider's answer has no access_token"))
}

/// The assertion grant's form: `grant_type` and `assertion`.
pub fn bearer_form(assertion: &str) -> Form {
    vec![
        ("grant_type".into(), JWT_BEARER.into()),
        ("assertion".into(), assertion.to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_assertion_verifies_with_its_public_key() {
        let rng = ring::rand::SystemRandom::new();
        let alg = &ring::signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = ring::signature::EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let pair = ring::signature::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref())
        );
        let key = Signer::from_pem(&pem).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let jwt = rt.block_on(client_assertion(&key, "cid", "https://as.test")).unwrap();
        let public = ring::signature::KeyPair::public_key(&pair).as_ref();
        let (x, y) = (&public[1..33], &public[33..]);
        let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
        let key = jsonwebtoken::DecodingKey::from_ec_components(&b64(x), &b64(y)).unwrap();
        let mut v = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::ES256);
        v.set_audience(&["https://as.test"]);
        let data = jsonwebtoken::decode::<serde_json::Value>(&jwt, &key, &v).unwrap();
        assert_eq!(data.claims["iss"], "cid");
        assert_eq!(data.claims["sub"], "cid");
    }
}
