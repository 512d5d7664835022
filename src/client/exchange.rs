//! One exchange: a request sent and its response awaited, with its timeout, its
//! cancellation (`notifications/cancelled`) and its progress (which may restart the
//! timeout). A [`super::call::Call`] is one or more exchanges; the handshake and the
//! listings use exchanges directly.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::router::{PendingGuard, ProgressState, Reader, Reply, Waiter};
use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc;
use crate::result::ResultJson;
use crate::transport::Outgoing;

/// What one exchange sends besides its params.
pub(super) struct Exchange<'a> {
    pub(super) id: i64,
    pub(super) method: Cow<'static, str>,
    /// Names the tool (or other target) in error messages.
    pub(super) target: Option<&'a str>,
    /// Whether a timeout or cancel tells the server (`initialize` is never cancelled).
    pub(super) cancellable: bool,
    pub(super) headers: Vec<(String, String)>,
    /// The params' size, when known, so the body is allocated once.
    pub(super) params_len: usize,
    /// What the router may read the result as, with its response.
    pub(super) reader: Reader,
}

impl<'a> Exchange<'a> {
    /// An exchange of `method` with the defaults: cancellable, no headers, any JSON.
    pub(super) fn new(id: i64, method: impl Into<Cow<'static, str>>) -> Self {
        Exchange {
            id,
            method: method.into(),
            target: None,
            cancellable: true,
            headers: Vec::new(),
            params_len: 0,
            reader: Reader::Json,
        }
    }

    fn context(&self) -> String {
        match self.target {
            Some(n) => format!("{} {}", self.method, quote(n)),
            None => self.method.to_string(),
        }
    }
}

impl Client {
    /// Sends one request and waits for its outcome, its timeout, or its cancellation.
    pub(super) async fn exchange<P: jsonrpc::Params + ?Sized>(
        &self,
        mut x: Exchange<'_>,
        params: &P,
        ctl: &Control,
    ) -> Result<ResultJson> {
        let id = x.id;
        // A handle triggered before the call never lets it start.
        if ctl.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
            return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled before it was sent").context(x.context()));
        }
        let start = Instant::now();
        let (tx, mut rx) = oneshot::channel();
        let progress = (ctl.progress.is_some() || ctl.reset_on_progress).then(|| {
            Arc::new(ProgressState {
                callback: ctl.progress.clone(),
                notify: Notify::new(),
                last: Mutex::new(None),
            })
        });
        self.shared
            .register(
                id,
                Waiter {
                    reply: Reply::Wake(tx),
                    progress: progress.clone(),
                    since: start,
                    deadline: None,
                    reader: x.reader,
                },
            )
            .map_err(|e| e.context(x.context()))?;
        let mut guard = PendingGuard {
            client: self,
            id,
            done: false,
        };
        let body = jsonrpc::encode_request(id, &x.method, Some(params), x.params_len);
        let headers = std::mem::take(&mut x.headers);
        self.transport
            .send(Outgoing {
                body,
                id: Some(id),
                method: Some(x.method.clone()),
                headers,
            })
            .map_err(|e| e.context(x.context()))?;

        let timeout = self.timeout_of(ctl);
        let hard_end = ctl.max_total.map(|m| start + m);
        let clamp = |t: Instant| hard_end.map_or(t, |h| t.min(h));
        let sleep = tokio::time::sleep_until(clamp(start + timeout));
        tokio::pin!(sleep);
        let cancelled = async {
            match &ctl.cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        loop {
            let progressed = async {
                match (&progress, ctl.reset_on_progress) {
                    (Some(p), true) => p.notify.notified().await,
                    _ => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                outcome = &mut rx => {
                    guard.done = true;
                    return match outcome {
                        Ok(Ok(raw)) => Ok(raw),
                        Ok(Err(e)) => Err(e.context(x.context())),
                        Err(_) => Err(self.shared.dropped_error().context(x.context())),
                    };
                }
                _ = &mut cancelled => {
                    if x.cancellable {
                        self.send_cancel(id, "cancelled by the client");
                    }
                    return Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled").context(x.context()));
                }
                _ = &mut sleep => {
                    if x.cancellable {
                        self.send_cancel(id, "timed out");
                    }
                    let waited = Instant::now().duration_since(start).as_millis();
                    return Err(Error::new(Status::MCPC_ERR_TIMEOUT, format!("timed out after {waited} ms")).context(x.context()));
                }
                _ = progressed => {
                    sleep.as_mut().reset(clamp(Instant::now() + timeout));
                }
            }
        }
    }
}
