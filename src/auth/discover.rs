//! Discovery: the protected resource's metadata (RFC 9728), then its
//! authorization server's (RFC 8414, then OpenID discovery), in the orders the MCP
//! authorization specification gives, with the 2025-03-26 rules for servers that
//! publish no resource metadata.

use serde::Deserialize;
use url::Url;

use super::net::{check_url, Net};
use crate::error::{quote, Error, Result, Status};
use crate::url_policy;

/// RFC 9728 protected resource metadata, the fields mcpc uses.
#[derive(Clone, Debug, Deserialize)]
pub struct ResourceMetadata {
    pub resource: Option<String>,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// RFC 8414 authorization server metadata, the fields mcpc uses.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct ServerMetadata {
    pub issuer: Option<String>,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: Option<String>,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
    pub authorization_response_iss_parameter_supported: Option<bool>,
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// What discovery found: the authorization server to use and the resource to
/// name in requests.
#[derive(Clone, Debug)]
pub struct Found {
    /// The issuer identifier, as the resource metadata named it (the key for
    /// credentials), or the MCP server's origin under the 2025-03-26 rules.
    pub issuer: String,
    pub metadata: ServerMetadata,
    /// False when the endpoints are the 2025-03-26 defaults (no metadata at all).
    pub has_metadata: bool,
    /// The resource indicator (RFC 8707) sent on authorization and token requests.
    pub resource: String,
    /// The resource metadata's `scopes_supported`.
    pub resource_scopes: Option<Vec<String>>,
}

fn refused(msg: impl Into<String>) -> Error {
    Error::new(Status::MCPC_ERR_AUTH_SERVER, msg)
}

/// `origin` + `prefix` + `path` (the path without its trailing slash).
fn well_known(base: &Url, prefix: &str, path: &str) -> Option<Url> {
    let path = path.trim_end_matches('/');
    base.join(&format!("{prefix}{path}")).ok()
}

/// The server URL as a resource identifier: no fragment.
pub fn canonical_resource(server: &Url) -> String {
    let mut u = server.clone();
    u.set_fragment(None);
    u.to_string()
}

/// True when the metadata's `resource` may stand for `server`: the same origin,
/// and the server's path at or under the resource's.
fn resource_matches(resource: &Url, server: &Url) -> bool {
    if !url_policy::same_origin(resource, server) {
        return false;
    }
    let r = resource.path().trim_end_matches('/');
    let s = server.path().trim_end_matches('/');
    s == r || s.starts_with(&format!("{r}/"))
}

/// The protected resource metadata: from the challenge's `resource_metadata` if it
/// gave one, else the well-known locations (path-based, then the root). None when
/// the server publishes none.
async fn resource_metadata(net: &Net, server: &Url, hinted: Option<&str>) -> Result<Option<ResourceMetadata>> {
    let mut urls = Vec::new();
    if let Some(h) = hinted {
        let u = server
            .join(h)
            .map_err(|e| refused(format!("the resource_metadata URL is not valid: {e}")))?;
        urls.push(u);
    }
    let path = server.path();
    if path != "/" {
        urls.extend(well_known(server, "/.well-known/oauth-protected-resource", path));
    }
    urls.extend(well_known(server, "/.well-known/oauth-protected-resource", ""));
    for u in urls {
        check_url(&u)?;
        if let Some(m) = net.get_json::<ResourceMetadata>(&u).await? {
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// The authorization server's metadata for `issuer`, from the locations RFC 8414
/// and OpenID discovery give, in the spec's order. Its `issuer` must equal
/// `issuer` exactly (RFC 8414 §3.3).
async fn server_metadata(net: &Net, issuer: &str) -> Result<Option<ServerMetadata>> {
    let base = Url::parse(issuer).map_err(|e| refused(format!("the issuer {} is not a URL: {e}", quote(issuer))))?;
    check_url(&base)?;
    let path = base.path().trim_end_matches('/').to_string();
    let urls: Vec<Url> = if path.is_empty() {
        vec![
            well_known(&base, "/.well-known/oauth-authorization-server", ""),
            well_known(&base, "/.well-known/openid-configuration", ""),
        ]
    } else {
        vec![
            well_known(&base, "/.well-known/oauth-authorization-server", &path),
            well_known(&base, "/.well-known/openid-configuration", &path),
            base.join(&format!("{path}/.well-known/openid-configuration")).ok(),
        ]
    }
    .into_iter()
    .flatten()
    .collect();
    for u in urls {
        if let Some(m) = net.get_json::<ServerMetadata>(&u).await? {
            if m.issuer.as_deref() != Some(issuer) {
                return Err(refused(format!(
                    "the authorization server's metadata names issuer {}, not {}",
                    quote(m.issuer.as_deref().unwrap_or("(none)")),
                    quote(issuer)
                )));
            }
            return Ok(Some(m));
        }
    }
    Ok(None)
}

/// Runs discovery for `server` after a challenge that named `hinted`.
pub async fn discover(net: &Net, server: &Url, hinted: Option<&str>) -> Result<Found> {
    let Some(prm) = resource_metadata(net, server, hinted).await? else {
        return legacy(net, server).await;
    };
    let resource = match prm.resource.as_deref() {
        Some(r) => {
            let ru = Url::parse(r).map_err(|e| refused(format!("the resource {} is not a URL: {e}", quote(r))))?;
            if !resource_matches(&ru, server) {
                return Err(refused(format!(
                    "the resource metadata is for {}, not for this server {}",
                    quote(r),
                    quote(&url_policy::redact(server))
                )));
            }
            r.to_string()
        }
        None => canonical_resource(server),
    };
    let Some(issuer) = prm.authorization_servers.first().cloned() else {
        return Err(refused("the resource metadata names no authorization server"));
    };
    let Some(metadata) = server_metadata(net, &issuer).await? else {
        return Err(refused(format!(
            "the authorization server {} publishes no metadata",
            quote(&issuer)
        )));
    };
    Ok(Found {
        issuer,
        metadata,
        has_metadata: true,
        resource,
        resource_scopes: prm.scopes_supported,
    })
}

/// 2025-03-26: the authorization server is at the MCP server's origin; its
/// metadata at the origin's well-known place, else the default endpoints.
async fn legacy(net: &Net, server: &Url) -> Result<Found> {
    let origin = server.origin().ascii_serialization();
    let base = Url::parse(&origin).map_err(|e| refused(e.to_string()))?;
    let at = |p: &str| base.join(p).map(|u| u.to_string()).ok();
    let found = net
        .get_json::<ServerMetadata>(
            &base
                .join("/.well-known/oauth-authorization-server")
                .map_err(|e| refused(e.to_string()))?,
        )
        .await?;
    let has_metadata = found.is_some();
    let metadata = found.unwrap_or_else(|| ServerMetadata {
        issuer: Some(origin.clone()),
        authorization_endpoint: at("/authorize"),
        token_endpoint: at("/token"),
        registration_endpoint: at("/register"),
        ..Default::default()
    });
    Ok(Found {
        issuer: metadata.issuer.clone().unwrap_or(origin),
        metadata,
        has_metadata,
        resource: canonical_resource(server),
        resource_scopes: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_matches_its_server_and_its_paths() {
        let u = |s: &str| Url::parse(s).unwrap();
        assert!(resource_matches(&u("https://a.test/mcp"), &u("https://a.test/mcp")));
        assert!(resource_matches(&u("https://a.test/"), &u("https://a.test/mcp")));
        assert!(resource_matches(&u("https://a.test/mcp/"), &u("https://a.test/mcp/x")));
        assert!(!resource_matches(&u("https://a.test/mc"), &u("https://a.test/mcp")));
        assert!(!resource_matches(&u("https://b.test/mcp"), &u("https://a.test/mcp")));
        assert!(!resource_matches(&u("http://a.test/mcp"), &u("https://a.test/mcp")));
    }

    #[test]
    fn well_known_places_follow_the_path() {
        let b = Url::parse("https://a.test/tenant/x").unwrap();
        assert_eq!(
            well_known(&b, "/.well-known/oauth-protected-resource", b.path())
                .unwrap()
                .as_str(),
            "https://a.test/.well-known/oauth-protected-resource/tenant/x"
        );
    }
}
