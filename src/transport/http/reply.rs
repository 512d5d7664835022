//! Replies: a JSON body or an SSE stream read within the message limit, routed to
//! the client, and an SSE stream resumed after it drops.

use crate::transport::{Delivered, Delivery};
use std::sync::Arc;
use std::time::Duration;

use ::http::header::{HeaderMap, HeaderName, HeaderValue, CONTENT_TYPE};
use ::http::Method;
use bytes::Bytes;
use serde::Deserialize;

use super::hx::{self, Failure, Reply};
use super::*;
use crate::drive::here::{self};
use crate::drive::runtime::boxed_apart;
use crate::error::{quote, Error, Result, Status};
use crate::sse::SseParser;

/// A session id must be visible ASCII (0x21 to 0x7E).
/// A session id, as its header value (kept out of logs), if it is valid.
pub(super) fn session_id(v: &[u8]) -> Option<HeaderValue> {
    if v.is_empty() || !v.iter().all(|b| (0x21..=0x7e).contains(b)) {
        return None;
    }
    let mut id = HeaderValue::from_bytes(v).ok()?;
    id.set_sensitive(true);
    Some(id)
}

#[derive(Deserialize)]
pub(super) struct InitResultPeek<'a> {
    #[serde(borrow)]
    pub(super) result: Option<InitFields<'a>>,
}

#[derive(Deserialize)]
pub(super) struct InitFields<'a> {
    #[serde(rename = "protocolVersion", borrow)]
    pub(super) protocol_version: Option<std::borrow::Cow<'a, str>>,
}

/// A JSON-RPC error in an HTTP error reply, as the response to request `id` (the
/// server may leave the id out or null).
pub(super) fn error_reply_for(body: &[u8], id: i64) -> Option<Vec<u8>> {
    #[derive(Deserialize)]
    struct E<'a> {
        #[serde(borrow)]
        error: &'a serde_json::value::RawValue,
    }
    let e: E<'_> = serde_json::from_slice(body).ok()?;
    serde_json::from_str::<crate::jsonrpc::RpcError>(e.error.get()).ok()?;
    Some(format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{}}}"#, e.error.get()).into_bytes())
}

/// A response body: lent from its connection's buffer, or gathered from pieces.
pub(super) enum Body<'a> {
    Lent(&'a [u8]),
    Gathered(Bytes),
}

impl std::ops::Deref for Body<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Body::Lent(b) => b,
            Body::Gathered(b) => b,
        }
    }
}

impl Body<'_> {
    /// The body's own buffer, when it was handed over whole.
    pub(super) fn whole(&self) -> Option<&Bytes> {
        match self {
            Body::Lent(_) => None,
            Body::Gathered(b) => Some(b),
        }
    }
}

/// Bodies and SSE events larger than this are handed to the sink whole
/// ([`Delivery::whole`]); smaller ones are lent.
pub(super) const OWN_ABOVE: usize = 64 * 1024;

/// The response body, up to `max` bytes. A body of known length is read in place
/// into its connection's buffer and lent from there; any other is gathered from
/// its pieces (one that comes in one piece is that piece, not a copy of it).
pub(super) async fn read_limited(resp: &mut Reply, max: usize) -> Result<Body<'_>> {
    let too_large = || {
        Error::new(
            Status::MCPC_ERR_MESSAGE_TOO_LARGE,
            format!("the HTTP response is over the {max} byte limit"),
        )
    };
    let failed = |e: Failure| {
        Error::new(
            Status::MCPC_ERR_TRANSPORT,
            format!("reading the HTTP response failed: {e}"),
        )
    };
    if let Some(n) = resp.content_length() {
        if n > max as u64 {
            return Err(too_large());
        }
        if n > OWN_ABOVE as u64 {
            // Handed over whole, so that the result kept for the caller can be a
            // slice of it rather than a copy (see `Delivery::whole`).
            resp.rest().await.map_err(failed)?;
            return Ok(Body::Gathered(resp.take_rest()));
        }
        return resp.rest().await.map(Body::Lent).map_err(failed);
    }
    let Some(first) = resp.chunk().await.map_err(failed)? else {
        return Ok(Body::Lent(&[]));
    };
    if first.len() > max {
        return Err(too_large());
    }
    let Some(second) = resp.chunk().await.map_err(failed)? else {
        return Ok(Body::Gathered(first));
    };
    let mut body = Vec::with_capacity(first.len() + second.len());
    let mut chunk = Some(second);
    body.extend_from_slice(&first);
    while let Some(c) = chunk {
        if body.len() + c.len() > max {
            return Err(too_large());
        }
        body.extend_from_slice(&c);
        chunk = resp.chunk().await.map_err(failed)?;
    }
    Ok(Body::Gathered(body.into()))
}

/// How an SSE stream ended.
pub(super) enum StreamEnd {
    /// Ended normally, or the connection dropped: resumable if an id was seen.
    Ended {
        last_id: Option<String>,
        retry: Option<Duration>,
    },
}

impl Inner {
    /// Reads a request's reply, JSON or SSE, resuming a dropped SSE stream when
    /// `resumable` (never under 2026-07-28, where a broken stream loses the request).
    /// `resume_for` is the request whose response a dropped stream may still bring
    /// (`None` under 2026-07-28, where a broken stream loses the request).
    pub(super) async fn read_reply(
        self: &Arc<Self>,
        mut resp: Reply,
        is_init: bool,
        resume_for: Option<i64>,
    ) -> Result<()> {
        let ctype = resp.header(CONTENT_TYPE.as_str()).unwrap_or_default();
        let is = |t: &str| ctype.len() >= t.len() && hx::same_text(&ctype[..t.len()], t.as_bytes());
        if is("application/json") {
            let body = read_limited(&mut resp, self.cfg.max_message_size).await?;
            self.route(body, is_init).await?;
            return Ok(());
        }
        if !is("text/event-stream") {
            return Err(Error::new(
                Status::MCPC_ERR_HTTP,
                format!(
                    "unexpected content type {} in the HTTP reply",
                    quote(&String::from_utf8_lossy(ctype))
                ),
            ));
        }
        // Boxed: a stream and its resumption are a large future that a JSON reply
        // would otherwise carry (and move) too.
        boxed_apart(|| self.sse_reply(resp, is_init, resume_for)).await
    }

    /// An SSE reply's events, and the stream resumed while it ends before the
    /// response to `resume_for`.
    pub(super) async fn sse_reply(self: &Arc<Self>, resp: Reply, is_init: bool, resume_for: Option<i64>) -> Result<()> {
        let mut end = self.read_sse(resp, is_init).await?;
        let Some(id) = resume_for else { return Ok(()) };
        for _ in 0..MAX_RESUMES {
            // Resume only a stream that ended before its response: a finished one
            // has nothing left to give (and a server may replay others' events).
            if !self.sink.is_pending(id) {
                return Ok(());
            }
            let StreamEnd::Ended { last_id, retry } = end;
            let Some(last_id) = last_id else {
                return Ok(());
            };
            tokio::time::sleep(retry.unwrap_or(DEFAULT_RETRY)).await;
            let resp = self.resume(&last_id).await?;
            if !resp.status().is_success() {
                return Err(boxed_apart(|| status_error(resp))
                    .await
                    .context("resuming the SSE stream"));
            }
            end = self.read_sse(resp, is_init).await?;
        }
        Ok(())
    }

    pub(super) async fn resume(&self, last_id: &str) -> Result<Reply> {
        let mut headers = HeaderMap::new();
        let v = HeaderValue::from_str(last_id).map_err(|_| {
            Error::new(
                Status::MCPC_ERR_PROTOCOL,
                "the SSE event id is not a valid header value",
            )
        })?;
        headers.insert(HeaderName::from_static(LAST_EVENT_ID), v);
        let resp = self.request(Method::GET, None, &headers).await?;
        Ok(resp)
    }

    /// Routes one SSE stream's events until it ends. A dropped connection is an end
    /// like any other: whether to resume is the caller's choice.
    pub(super) async fn read_sse(self: &Arc<Self>, mut resp: Reply, is_init: bool) -> Result<StreamEnd> {
        let mut parser = SseParser::new(self.cfg.max_message_size);
        // A reply's events, usually one: no allocation for them then.
        let mut events = smallvec::SmallVec::<[_; 2]>::new();
        loop {
            let (chunk, left) = match resp.chunk_lent().await {
                Ok(Some(c)) => c,
                Ok(None) | Err(_) => break,
            };
            parser.expect(usize::try_from(left).unwrap_or(usize::MAX));
            parser.feed(chunk, |e| events.push(e)).map_err(|too| {
                Error::new(
                    Status::MCPC_ERR_MESSAGE_TOO_LARGE,
                    format!("an SSE event is over the {} byte limit", too.limit),
                )
            })?;
            for e in events.drain(..) {
                if e.data.is_empty() || e.event != "message" {
                    continue; // a priming event, or an event type MCP does not use
                }
                let data = if e.data.len() > OWN_ABOVE {
                    Body::Gathered(Bytes::from(e.data))
                } else {
                    Body::Lent(e.data.as_bytes())
                };
                if let Err(err) = self.route(data, is_init).await {
                    log::warn!("dropped an SSE event: {err}");
                }
            }
        }
        Ok(StreamEnd::Ended {
            last_id: parser.last_id().map(str::to_string),
            retry: parser.retry_ms().map(Duration::from_millis),
        })
    }

    /// Delivers one message to the client core; answers to server requests go out
    /// as new POSTs. For the initialize reply, notes the negotiated version.
    pub(super) async fn route(self: &Arc<Self>, body: Body<'_>, is_init: bool) -> Result<()> {
        let msg: &[u8] = &body;
        if is_init {
            if let Ok(peek) = serde_json::from_slice::<InitResultPeek<'_>>(msg) {
                if let Some(v) = peek.result.and_then(|r| r.protocol_version) {
                    if let Ok(v) = HeaderValue::from_str(&v) {
                        self.session.write().unwrap_or_else(|p| p.into_inner()).version = Some(v);
                    }
                }
            }
        }
        if here::polling() {
            // No callback runs on a blocked caller's thread: anything but a response
            // moves this exchange to the runtime first (and it stays there, so what
            // follows is delivered in order).
            match self.sink.deliver(Delivery::on_caller(msg, body.whole()))? {
                Delivered::Left => here::to_runtime().await,
                _ => return Ok(()),
            }
        }
        if let Delivered::Reply(reply) = self.sink.deliver(Delivery::any(msg, body.whole()))? {
            self.dispatch(reply);
        }
        Ok(())
    }
}
