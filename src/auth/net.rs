//! Requests to authorization servers and to metadata documents, over mcpc's own
//! HTTP client with the same TLS verification, connect timeout and size bounds as
//! MCP requests. Every such URL must be `https://`, or `http://` on loopback.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::http::{Method, StatusCode, Uri};
use serde::de::DeserializeOwned;
use url::Url;

use crate::error::{quote, Error, Result, Status};
use crate::transport::h1;
use crate::url_policy;

/// Bound on any answer from an authorization server or a metadata document.
pub const MAX_BODY: usize = 256 * 1024;

/// A whole response: its status, the headers mcpc reads, and its body.
pub struct Answer {
    pub status: StatusCode,
    pub content_type: Option<String>,
    pub dpop_nonce: Option<String>,
    pub body: Vec<u8>,
}

/// The HTTP side of authorization: one HTTP/1.1 client per origin, made on first use.
pub struct Net {
    tls: Arc<rustls::ClientConfig>,
    connect_timeout: Duration,
    proxy: crate::transport::proxy::ProxySettings,
    clients: Mutex<HashMap<String, Arc<h1::Client>>>,
    /// The client's DPoP key, used on token requests once the authorization
    /// server is known to accept DPoP (`dpop_on`).
    pub dpop: Option<Arc<super::dpop::Dpop>>,
    pub dpop_on: AtomicBool,
}

/// The status for a failure to reach or read an authorization server.
fn as_error(what: impl std::fmt::Display) -> Error {
    Error::new(Status::MCPC_ERR_AUTH_SERVER, what.to_string())
}

/// Checks that `url` may carry authorization traffic (https, or http on loopback).
pub fn check_url(url: &Url) -> Result<()> {
    let ok = match url.scheme() {
        "https" => true,
        "http" => url_policy::is_loopback(url),
        _ => false,
    };
    if !ok || url.host().is_none() || !url.username().is_empty() || url.password().is_some() {
        return Err(Error::new(
            Status::MCPC_ERR_INSECURE_URL,
            format!(
                "refusing authorization URL {}: it must be https:// (http:// only on loopback), without credentials",
                quote(&url_policy::redact(url))
            ),
        ));
    }
    Ok(())
}

impl Net {
    pub fn new(
        ca_pem: &[Vec<u8>],
        connect_timeout: Duration,
        proxy: crate::transport::proxy::ProxySettings,
        dpop: Option<Arc<super::dpop::Dpop>>,
    ) -> Result<Net> {
        let tls = crate::transport::http::tls_config(ca_pem, true)?;
        Ok(Net {
            tls: Arc::new(tls),
            connect_timeout,
            proxy,
            clients: Mutex::new(HashMap::new()),
            dpop,
            dpop_on: AtomicBool::new(false),
        })
    }

    /// The DPoP key, when token requests carry proofs.
    pub fn dpop_active(&self) -> Option<&super::dpop::Dpop> {
        self.dpop.as_deref().filter(|_| self.dpop_on.load(Ordering::Acquire))
    }

    /// POSTs to a token endpoint: with a DPoP proof when DPoP is on, made again
    /// once with the server's nonce after a `use_dpop_nonce` error (RFC 9449 §8).
    pub async fn token_post(&self, url: &Url, fields: &[(&str, &str)], body: &[u8]) -> Result<Answer> {
        let Some(dpop) = self.dpop_active() else {
            return self.send(Method::POST, url, fields, body).await;
        };
        let mut retried = false;
        loop {
            let nonce = dpop.as_nonce.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let proof = dpop.proof("POST", url, None, nonce.as_deref()).await?;
            let mut all = fields.to_vec();
            all.push(("dpop", &proof));
            let a = self.send(Method::POST, url, &all, body).await?;
            if let Some(n) = &a.dpop_nonce {
                *dpop.as_nonce.lock().unwrap_or_else(|p| p.into_inner()) = Some(n.clone());
            }
            let wants_nonce = a.status == StatusCode::BAD_REQUEST
                && a.dpop_nonce.is_some()
                && serde_json::from_slice::<serde_json::Value>(&a.body).is_ok_and(|v| v["error"] == "use_dpop_nonce");
            if !wants_nonce || retried {
                return Ok(a);
            }
            retried = true;
        }
    }

    fn client(&self, url: &Url) -> Result<Arc<h1::Client>> {
        let key = url.origin().ascii_serialization();
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(&key) {
            return Ok(c.clone());
        }
        let tls = (url.scheme() == "https").then(|| self.tls.clone());
        let route = h1::Route::for_url(&self.proxy, url, || Ok(self.tls.clone()))?;
        let c = Arc::new(
            h1::Client::new(url, tls, self.connect_timeout, route)
                .ok_or_else(|| as_error(format!("not a usable URL: {}", url_policy::redact(url))))?,
        );
        clients.insert(key, c.clone());
        Ok(c)
    }

    /// Sends one request and reads the whole answer (at most [`MAX_BODY`] bytes).
    /// Redirects are not followed: the caller sees them.
    pub async fn send(&self, method: Method, url: &Url, fields: &[(&str, &str)], body: &[u8]) -> Result<Answer> {
        check_url(url)?;
        let client = self.client(url)?;
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        let path = Uri::try_from(path).map_err(|e| as_error(format!("a URL's path is not usable: {e}")))?;
        let mut head_fields = Vec::new();
        for (name, value) in fields {
            if value.bytes().any(|b| b < 0x20 && b != b'\t' || b == 0x7f) {
                return Err(as_error(format!("the {name} field holds control characters")));
            }
            head_fields.extend_from_slice(name.as_bytes());
            head_fields.extend_from_slice(b": ");
            head_fields.extend_from_slice(value.as_bytes());
            head_fields.extend_from_slice(b"\r\n");
        }
        let head = client.request_head(&method, &path, &head_fields);
        let where_ = url_policy::redact(url);
        let mut reply = client
            .send(&method, &head, body)
            .await
            .map_err(|e| as_error(format!("request to {where_} failed: {e}")))?;
        let status = reply.status();
        let content_type = reply.header_str("content-type").map(str::to_string);
        let dpop_nonce = reply.header_str("dpop-nonce").map(str::to_string);
        let mut out = Vec::new();
        if let Some(n) = reply.content_length() {
            if n > MAX_BODY as u64 {
                return Err(as_error(format!("the answer from {where_} is over {MAX_BODY} bytes")));
            }
        }
        while let Some(chunk) = reply
            .chunk()
            .await
            .map_err(|e| as_error(format!("reading the answer from {where_} failed: {e}")))?
        {
            if out.len() + chunk.len() > MAX_BODY {
                return Err(as_error(format!("the answer from {where_} is over {MAX_BODY} bytes")));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            content_type,
            dpop_nonce,
            body: out,
        })
    }

    /// GETs a JSON document. None when the server has none there (any 4xx); an
    /// error for anything else that is not a 200 with JSON.
    pub async fn get_json<T: DeserializeOwned>(&self, url: &Url) -> Result<Option<T>> {
        let a = self
            .send(Method::GET, url, &[("accept", "application/json")], &[])
            .await?;
        if a.status.is_client_error() {
            return Ok(None);
        }
        if a.status != StatusCode::OK {
            return Err(as_error(format!(
                "{} answered HTTP {}",
                url_policy::redact(url),
                a.status
            )));
        }
        serde_json::from_slice(&a.body)
            .map(Some)
            .map_err(|e| as_error(format!("{} is not valid metadata: {e}", url_policy::redact(url))))
    }

    /// The oauth2 crate's view of this client: one request, one whole response.
    pub async fn exchange(&self, req: oauth2::HttpRequest) -> std::result::Result<oauth2::HttpResponse, NetError> {
        let url = Url::parse(&req.uri().to_string()).map_err(|e| NetError(as_error(e)))?;
        let fields: Vec<(String, String)> = req
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
            .collect();
        // The HTTP client writes Content-Length itself.
        let refs: Vec<(&str, &str)> = fields
            .iter()
            .filter(|(k, _)| k != "content-length")
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let a = self.token_post(&url, &refs, req.body()).await.map_err(NetError)?;
        let mut resp = ::http::Response::builder().status(a.status);
        if let Some(ct) = &a.content_type {
            resp = resp.header("content-type", ct);
        }
        resp.body(a.body).map_err(|e| NetError(as_error(e)))
    }
}

impl<'c> oauth2::AsyncHttpClient<'c> for Net {
    type Error = NetError;
    type Future = crate::drive::BoxFuture<'c, std::result::Result<oauth2::HttpResponse, NetError>>;

    fn call(&'c self, request: oauth2::HttpRequest) -> Self::Future {
        Box::pin(self.exchange(request))
    }
}

/// An error of [`Net::exchange`], as the oauth2 crate wants one.
#[derive(Debug)]
pub struct NetError(pub Error);

impl std::fmt::Display for NetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for NetError {}
