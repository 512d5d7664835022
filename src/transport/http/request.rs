//! Requests: their heads (kept while what they carry holds), the bearer token and
//! its refresh after a 401, and redirects within the origin.

use std::sync::atomic::Ordering;

use ::http::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, HOST, LOCATION,
    TRANSFER_ENCODING, WWW_AUTHENTICATE,
};
use ::http::{Method, StatusCode, Uri};
use bytes::Bytes;
use serde::Deserialize;
use url::Url;

use super::hx::{Failure, Reply};
use super::*;
use crate::drive::runtime::boxed_apart;
use crate::error::{quote, Error, Result, Status};
use crate::url_policy;

/// How many redirects a request may follow (within the endpoint's origin only).
pub(super) const MAX_REDIRECTS: usize = 5;

/// How many 401/403 challenges one request may meet before it fails (the
/// authorizer bounds its own step-ups within this).
const MAX_CHALLENGES: usize = 5;

/// Turns a failed exchange into our error: TLS failures and timeouts are their own statuses;
/// messages never carry the URL's query or credentials.
pub(super) fn classify(e: Failure, url: &Url) -> Error {
    if let Failure::Proxy(_, status) = &e {
        let mut err = Error::new(
            if *status == Some(407) {
                Status::MCPC_ERR_PROXY_AUTH
            } else {
                Status::MCPC_ERR_TRANSPORT
            },
            format!("HTTP request to {} failed: {e}", url_policy::redact(url)),
        );
        err.http_status = *status;
        return err;
    }
    if e.is_timeout() {
        // Not answered in time is a timeout wherever it happens, as with a silent server.
        Error::new(
            Status::MCPC_ERR_TIMEOUT,
            format!("HTTP request to {} failed: {e}", url_policy::redact(url)),
        )
    } else if e.is_tls() {
        Error::new(
            Status::MCPC_ERR_TLS,
            format!("TLS with {} failed: {e}", url_policy::redact(url)),
        )
    } else {
        Error::new(
            Status::MCPC_ERR_TRANSPORT,
            format!("HTTP request to {} failed: {e}", url_policy::redact(url)),
        )
    }
}

/// The path and query of `url`, as a request line carries them.
pub(super) fn path_of(url: &Url) -> Result<Uri> {
    let mut p = url.path().to_string();
    if let Some(q) = url.query() {
        p.push('?');
        p.push_str(q);
    }
    Uri::try_from(p).map_err(|e| {
        Error::new(
            Status::MCPC_ERR_INVALID_ARG,
            format!("the URL's path is not usable: {e}"),
        )
    })
}

/// Builds a short error from an HTTP error status and its body.
pub(super) async fn status_error(mut resp: Reply) -> Error {
    let status = resp.status();
    let body = read_limited(&mut resp, 64 * 1024).await;
    let body = body.as_deref().unwrap_or_default();
    #[derive(Deserialize)]
    struct E {
        error: crate::jsonrpc::RpcError,
    }
    let mut err = Error::new(Status::MCPC_ERR_HTTP, format!("HTTP {status}"));
    if status == StatusCode::PROXY_AUTHENTICATION_REQUIRED {
        // An http:// endpoint asked through a proxy in absolute form.
        err = Error::new(Status::MCPC_ERR_PROXY_AUTH, "HTTP 407: the proxy wants credentials");
    }
    err.http_status = Some(status.as_u16());
    if let Ok(e) = serde_json::from_slice::<E>(body) {
        // The 2026-07-28 error codes keep their own statuses (an older client meeting a
        // newer server gets "unsupported version", with the versions it lists).
        let rpc = crate::jsonrpc::rpc_error(e.error);
        if rpc.status != Status::MCPC_ERR_RPC {
            err.status = rpc.status;
        }
        err.message.push_str(&format!(" ({})", rpc.message));
        err.rpc_code = rpc.rpc_code;
    } else if let Some(line) = first_line(body) {
        err.message.push_str(&format!(": {}", quote(line)));
    }
    err
}

/// The first line of a body that is not JSON-RPC, the server's words on why it
/// refused; its caller quotes it (server data: escaped and bounded).
fn first_line(body: &[u8]) -> Option<&str> {
    let text = match std::str::from_utf8(body) {
        Ok(t) => t,
        // Cut in the middle of a character by the read limit: what comes before.
        Err(e) => std::str::from_utf8(&body[..e.valid_up_to()]).unwrap_or_default(),
    };
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then_some(line)
}

impl Inner {
    /// Makes the current token ready: the authorizer's for each request (it may
    /// refresh one), or the token callback's first token, asked once on a blocking
    /// thread.
    pub(super) async fn token_ready(&self) -> Result<()> {
        if let Some(a) = &self.cfg.authorizer {
            let t = a.token().await?;
            let mut cur = self.token.lock().unwrap_or_else(|p| p.into_inner());
            if *cur != t {
                *cur = t;
            }
            return Ok(());
        }
        if !self.token_fetched.load(Ordering::Acquire) {
            if let Some(f) = self.cfg.token_fn.clone() {
                let t = tokio::task::spawn_blocking(move || f(None)).await.ok().flatten();
                *self.token.lock().unwrap_or_else(|p| p.into_inner()) = t;
            }
            self.token_fetched.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// The DPoP proof for a request of `method` with the token of `ident`, when
    /// that token is bound to a key.
    pub(super) async fn proof(&self, ident: &Ident, method: &Method, url: &Url) -> Result<Option<String>> {
        match (&self.cfg.authorizer, &ident.token) {
            (Some(a), Some(t)) => a.proof(method.as_str(), url, t).await,
            _ => Ok(None),
        }
    }

    /// The token, the session id and the protocol version as they are now.
    pub(super) async fn ident(&self) -> Result<Ident> {
        self.token_ready().await?;
        let token = self.token.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let s = self.session.read().unwrap_or_else(|p| p.into_inner());
        Ok(Ident {
            token,
            id: s.id.clone(),
            version: s.version.clone(),
        })
    }

    /// After a 401: asks the callback once for a fresh token. False when there is none.
    pub(super) async fn refresh_token(&self, challenge: Option<String>) -> bool {
        let Some(f) = self.cfg.token_fn.clone() else {
            return false;
        };
        let fresh = tokio::task::spawn_blocking(move || f(challenge.as_deref()))
            .await
            .ok()
            .flatten();
        let ok = fresh.is_some();
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = fresh;
        ok
    }

    /// One POST with its auth retries. Returns the successful response, or the error.
    pub(super) async fn post(&self, body: &[u8], extra: &HeaderMap) -> Result<(Reply, bool)> {
        let mut refreshed = false;
        let mut challenges = 0;
        loop {
            let had_session = self.session.read().unwrap_or_else(|p| p.into_inner()).id.is_some();
            // What the request carries, read before it goes: never a token that came
            // after it (which would look refused and be renewed again).
            let sent = match &self.cfg.authorizer {
                Some(a) => {
                    let epoch = a.epoch();
                    self.token_ready().await?;
                    (self.token.lock().unwrap_or_else(|p| p.into_inner()).clone(), epoch)
                }
                None => (None, 0),
            };
            let resp = self.request(Method::POST, Some(body), extra).await?;
            let status = resp.status();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                let challenge = resp.header_str(WWW_AUTHENTICATE.as_str()).map(str::to_string);
                if status == StatusCode::FORBIDDEN && challenge.is_none() {
                    // No challenge: not about credentials but the server's own refusal,
                    // which its body explains ("only allowed at localhost", say).
                    return Err(boxed_apart(|| status_error(resp)).await);
                }
                if let Some(a) = &self.cfg.authorizer {
                    // 403 is a challenge only when it asks for more scope (step-up).
                    let step_up = challenge.as_deref().is_some_and(|c| c.contains("insufficient_scope"));
                    if status == StatusCode::UNAUTHORIZED || step_up {
                        challenges += 1;
                        if challenges > MAX_CHALLENGES {
                            return Err(Error::new(
                                Status::MCPC_ERR_AUTH,
                                format!("HTTP {status} after {MAX_CHALLENGES} authorizations"),
                            ));
                        }
                        let nonce = resp.header_str("dpop-nonce").map(str::to_string);
                        a.challenged(
                            status.as_u16(),
                            challenge.as_deref(),
                            nonce.as_deref(),
                            sent.0.as_deref(),
                            sent.1,
                        )
                        .await?;
                        continue;
                    }
                } else if status == StatusCode::UNAUTHORIZED && !refreshed && self.refresh_token(challenge).await {
                    refreshed = true;
                    continue;
                }
                return Err(Error::new(Status::MCPC_ERR_AUTH, format!("HTTP {status}")));
            }
            if status.is_redirection() {
                return Err(Error::new(
                    Status::MCPC_ERR_HTTP,
                    format!("HTTP {status}: a redirect to another origin was refused"),
                ));
            }
            return Ok((resp, had_session));
        }
    }

    /// Sends one HTTP request with everything the endpoint needs: the caller's
    /// headers, the bearer token, the session id and the protocol version.
    pub(super) async fn request(&self, mut method: Method, body: Option<&[u8]>, extra: &HeaderMap) -> Result<Reply> {
        let posting = body.is_some() && method != Method::GET;
        let first = method.clone();
        let mut head = self.request_head(&first, posting, extra).await?;
        let mut body = match body {
            Some(b) if posting => b,
            _ => &[],
        };
        let mut url: Option<Url> = None; // after a redirect
        let mut redirects = 0;
        loop {
            let resp = self
                .http
                .send(&method, &head, body)
                .await
                .map_err(|e| classify(e, url.as_ref().unwrap_or(&self.cfg.url)))?;
            let status = resp.status();
            if !status.is_redirection() || redirects == MAX_REDIRECTS {
                return Ok(resp);
            }
            // Followed only within the endpoint's origin (so never from https to
            // http, and credentials never leave it); otherwise the caller sees the
            // redirect itself.
            let current = url.as_ref().unwrap_or(&self.cfg.url);
            let Some(next) = resp
                .header_str(LOCATION.as_str())
                .and_then(|l| current.join(l).ok())
                .filter(|next| url_policy::same_origin(&self.cfg.url, next))
            else {
                return Ok(resp);
            };
            let path = path_of(&next)?;
            url = Some(next);
            redirects += 1;
            // As browsers do: 307 and 308 repeat the request; the others fetch the
            // new place with GET, without a body or its Content-Type.
            if status != StatusCode::TEMPORARY_REDIRECT && status != StatusCode::PERMANENT_REDIRECT {
                method = Method::GET;
                body = &[];
            }
            // Made again: the token or the session may have changed meanwhile.
            let ident = self.ident().await?;
            // The proof names the request that goes now: a redirect's method and place.
            let proof = self
                .proof(&ident, &method, url.as_ref().unwrap_or(&self.cfg.url))
                .await?;
            let fields = self.request_fields(&ident, proof.as_deref(), &first, posting, method == first, extra)?;
            head = Bytes::from(self.http.request_head(&method, &path, &fields));
        }
    }

    /// The head of a request to the endpoint, but its end (see
    /// `hx::Client::request_head`). The one every classic message sends, a POST with
    /// no fields of its own, is made once and kept while the token, the session id
    /// and the protocol version it carries stay the same, rather than made again for
    /// each request.
    pub(super) async fn request_head(&self, method: &Method, posting: bool, extra: &HeaderMap) -> Result<Bytes> {
        let keep = posting
            && *method == Method::POST
            && extra.is_empty()
            && !self.cfg.authorizer.as_ref().is_some_and(|a| a.binds_requests());
        if keep {
            self.token_ready().await?;
            if let Some(head) = self.kept_head() {
                return Ok(head);
            }
        }
        let ident = self.ident().await?;
        let proof = self.proof(&ident, method, &self.cfg.url).await?;
        let fields = self.request_fields(&ident, proof.as_deref(), method, posting, true, extra)?;
        let head = Bytes::from(self.http.request_head(method, &self.path, &fields));
        if keep {
            *self.kept_head.lock().unwrap_or_else(|p| p.into_inner()) = Some(KeptHead {
                ident,
                head: head.clone(),
            });
        }
        Ok(head)
    }

    /// The kept head, if the token and the session it carries are still the current ones.
    pub(super) fn kept_head(&self) -> Option<Bytes> {
        let kept = self.kept_head.lock().unwrap_or_else(|p| p.into_inner());
        let kept = kept.as_ref()?;
        if *self.token.lock().unwrap_or_else(|p| p.into_inner()) != kept.ident.token {
            return None;
        }
        let s = self.session.read().unwrap_or_else(|p| p.into_inner());
        (s.id == kept.ident.id && s.version == kept.ident.version).then(|| kept.head.clone())
    }

    /// The header fields of a request, as its head carries them (`name: value`
    /// lines): the caller's, the configured ones, the bearer token, the session id,
    /// the protocol version and what it accepts. Those mcpc sets replace any of the
    /// same name that the caller or the configuration gives; `Content-Type` is left
    /// out entirely when `content_type` is false (a request turned into a GET).
    /// Written straight from the values, not through a header map that would be
    /// built for each request, then written.
    pub(super) fn request_fields(
        &self,
        ident: &Ident,
        proof: Option<&str>,
        method: &Method,
        posting: bool,
        content_type: bool,
        extra: &HeaderMap,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(256);
        let mut field = |name: &[u8], value: &[u8]| {
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        };
        let token = &ident.token;
        if let Some(token) = token {
            let v = match proof {
                Some(_) => format!("DPoP {token}"),
                None => format!("Bearer {token}"),
            };
            HeaderValue::from_str(&v)
                .map_err(|_| Error::new(Status::MCPC_ERR_AUTH, "the access token is not a valid header value"))?;
            field(AUTHORIZATION.as_str().as_bytes(), v.as_bytes());
            if let Some(p) = proof {
                field(b"dpop", p.as_bytes());
            }
        }
        if let Some(id) = &ident.id {
            field(MCP_SESSION_ID.as_bytes(), id.as_bytes());
        }
        if let Some(v) = &ident.version {
            field(MCP_PROTOCOL_VERSION.as_bytes(), v.as_bytes());
        }
        let (has_id, has_version) = (ident.id.is_some(), ident.version.is_some());
        let accept = if posting {
            Some(ACCEPT_BOTH)
        } else if *method == Method::GET {
            Some("text/event-stream")
        } else {
            None
        };
        if let Some(a) = accept {
            field(ACCEPT.as_str().as_bytes(), a.as_bytes());
        }
        if posting && content_type {
            field(CONTENT_TYPE.as_str().as_bytes(), b"application/json");
        }
        let set_here = |name: &HeaderName| {
            (token.is_some() && name == AUTHORIZATION)
                || (has_id && name.as_str() == MCP_SESSION_ID)
                || (has_version && name.as_str() == MCP_PROTOCOL_VERSION)
                || (accept.is_some() && name == ACCEPT)
                || name == CONTENT_TYPE && (posting || !content_type)
                // The HTTP client writes these itself (the body is framed by length).
                || name == HOST
                || name == CONTENT_LENGTH
                || name == TRANSFER_ENCODING
        };
        let configured = self.cfg.headers.iter().map(|(k, v)| (k, v));
        for (name, value) in extra.iter().chain(configured) {
            if !set_here(name) {
                field(name.as_str().as_bytes(), value.as_bytes());
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::transport::net::{self, Origin, Route};

    /// A proxy that takes the connection and never answers the CONNECT: the call ends
    /// as a timeout, as with a server that never answers, naming the proxy.
    #[test]
    fn a_silent_proxy_is_a_timeout() {
        let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = proxy.local_addr().unwrap().port();
        let held = std::thread::spawn(move || proxy.accept().map(|(c, _)| c));
        let route = Route {
            proxy: crate::transport::proxy::parse_proxy(&format!("127.0.0.1:{port}"), None, "test").unwrap(),
            tls: None,
        };
        let url = Url::parse("https://127.0.0.1:9/mcp").unwrap();
        let tls = Arc::new(super::super::tls::tls_config(&[], false).unwrap());
        let origin = Origin::new(&url, Some(tls), Some(route)).unwrap();
        let t0 = Instant::now();
        let failure = crate::drive::runtime::handle()
            .block_on(net::open(&origin, Duration::from_millis(300)))
            .err()
            .expect("no tunnel from a silent proxy");
        assert!(t0.elapsed() < Duration::from_secs(5));
        let err = classify(failure, &url);
        assert_eq!(err.status, Status::MCPC_ERR_TIMEOUT, "{}", err.message);
        assert!(err.message.contains("did not answer within 300 ms"), "{}", err.message);
        assert!(err.message.contains(&format!("127.0.0.1:{port}")), "{}", err.message);
        drop(held.join());
    }
}
