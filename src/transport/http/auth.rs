//! The seam between the HTTP transport and whoever obtains its credentials (the
//! OAuth client in `crate::auth`, or any other): the transport asks for the token
//! of each request and reports the challenges it meets; it knows nothing of how a
//! token is obtained.

use url::Url;

use crate::drive::BoxFuture;
use crate::error::Result;

/// Obtains the access token the transport sends. Called from the runtime's tasks,
/// concurrently; each method may wait (a login can take minutes), bounded by the
/// request's own timeout.
pub trait Authorizer: Send + Sync {
    /// The token for the next request, or None to send none. Cheap when a token is
    /// at hand; it may refresh one that is about to expire.
    fn token(&self) -> BoxFuture<'_, Result<Option<String>>>;

    /// A count the transport reads before it sends a request and hands back with
    /// that request's challenge, so that the authorizer knows which of its attempts
    /// the request went out before.
    fn epoch(&self) -> u64 {
        0
    }

    /// The server answered `status` (401, or 403 with `insufficient_scope`) with the
    /// `WWW-Authenticate` value `challenge` (and a `DPoP-Nonce` value `nonce`) to a
    /// request that carried `refused` and went out at `epoch`. Ok means the request
    /// should go again (a new token or nonce is ready); an error is its outcome.
    fn challenged<'a>(
        &'a self,
        status: u16,
        challenge: Option<&'a str>,
        nonce: Option<&'a str>,
        refused: Option<&'a str>,
        epoch: u64,
    ) -> BoxFuture<'a, Result<()>>;

    /// For a token bound to a key (DPoP): the proof for one request of `method`
    /// to `url` with `token`. Ok(None): a bearer token.
    fn proof<'a>(&'a self, _method: &'a str, _url: &'a Url, _token: &'a str) -> BoxFuture<'a, Result<Option<String>>> {
        Box::pin(async { Ok(None) })
    }

    /// True while requests carry a per-request proof, so that no request head may
    /// be kept for use again.
    fn binds_requests(&self) -> bool {
        false
    }
}
