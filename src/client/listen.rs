//! Resource subscriptions under 2026-07-28: one `subscriptions/listen` request
//! carries the set of subscribed URIs (and, for a notification callback, the
//! `list_changed` kinds), and stays open while the server sends its notifications.
//!
//! - Changing the set sends a new listen with the whole set, waits for its
//!   `notifications/subscriptions/acknowledged`, checks what was acknowledged against
//!   what was asked, and only then ends the old one: no gap in between.
//! - A listen that ends without being asked to (the server's response or
//!   `notifications/cancelled`, a dropped HTTP stream) is sent again after a backoff
//!   (doubling, at most [`MAX_RETRY`]); a JSON-RPC error ends the retries.
//! - A notification carrying a subscription id that is no listen in force is
//!   dropped (the spec: clients correlate by it); the others go on as usual.
//! - [`Client::close`] stops the watching tasks and waits for them.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::router::{Reader, Reply, Shared, Waiter};
use super::{Client, Control};
use crate::error::{quote, Error, Result, Status};
use crate::jsonrpc::{self, Serialized};
use crate::result::ResultJson;
use crate::transport::Outgoing;

/// The `_meta` key that ties a notification to its listen.
pub(super) const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// The first wait before a dropped listen is sent again; it doubles up to [`MAX_RETRY`].
const FIRST_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(30);

/// What a listen's end reports: its response, or why it failed.
type End = oneshot::Receiver<Result<ResultJson>>;

/// The client's side of its subscriptions.
#[derive(Default)]
pub(super) struct Listener {
    /// The set asked for and the listen carrying it; held across a change, so
    /// changes (and re-sends) happen one at a time.
    current: tokio::sync::Mutex<Current>,
    /// The tasks watching listens, reaped by [`Client::close`].
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Ends every watching task.
    stop: CancellationToken,
}

#[derive(Default)]
struct Current {
    uris: BTreeSet<String>,
    live: Option<Live>,
}

/// The listen in force.
struct Live {
    id: i64,
    /// Tells its watcher that it was ended on purpose.
    ended: CancellationToken,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "_meta", default)]
    meta: Option<HashMap<String, Value>>,
}

#[derive(Deserialize)]
struct Acknowledged {
    #[serde(default)]
    notifications: Filter,
}

#[derive(Deserialize, Default)]
struct Filter {
    #[serde(rename = "resourceSubscriptions", default)]
    uris: Vec<String>,
}

impl Shared {
    /// Under 2026-07-28, before a notification goes on: an acknowledgement goes to its
    /// listen, and one of a listen not in force is dropped. True when it was taken.
    pub(super) fn route_listen(&self, method: &str, params: Option<&RawValue>) -> bool {
        let Some(p) = params.filter(|p| p.get().contains(SUBSCRIPTION_ID)) else {
            return method == "notifications/cancelled" && self.listen_cancelled(params);
        };
        let Some(id) = serde_json::from_str::<Meta>(p.get())
            .ok()
            .and_then(|m| m.meta?.get(SUBSCRIPTION_ID)?.as_i64())
        else {
            return false; // not an id of ours: the notification goes on
        };
        let mut routes = self.listens.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ack) = routes.get_mut(&id) else {
            log::debug!("dropped {method} of subscription {id}, which is not in force");
            return true;
        };
        if method != "notifications/subscriptions/acknowledged" {
            return false;
        }
        match (ack.take(), serde_json::from_str::<Acknowledged>(p.get())) {
            (Some(tx), Ok(a)) => {
                let _ = tx.send(a.notifications.uris);
            }
            (Some(tx), Err(e)) => {
                log::warn!("subscriptions/listen {id}: a malformed acknowledgement ({e}) counts as empty");
                let _ = tx.send(Vec::new());
            }
            (None, _) => log::debug!("dropped a second acknowledgement of subscription {id}"),
        }
        true
    }

    /// The server's `notifications/cancelled` of a listen ends it (and it is sent
    /// again); any other is left to the notification callback.
    fn listen_cancelled(&self, params: Option<&RawValue>) -> bool {
        #[derive(Deserialize)]
        struct P {
            #[serde(rename = "requestId")]
            id: i64,
        }
        let Some(id) = params
            .and_then(|p| serde_json::from_str::<P>(p.get()).ok())
            .map(|p| p.id)
        else {
            return false;
        };
        if !self.listens.lock().unwrap_or_else(|e| e.into_inner()).contains_key(&id) {
            return false;
        }
        if let Some(w) = self.take(id) {
            w.complete(
                Err(Error::new(
                    Status::MCPC_ERR_CLOSED,
                    "the server cancelled the subscription",
                )),
                true,
            );
        }
        true
    }
}

impl Client {
    /// Adds `uri` to the subscribed set (`on`) or takes it out, and keeps the listen
    /// in step. An acknowledgement that leaves out a URI just asked for is
    /// `MCPC_ERR_NOT_SUPPORTED`; the URIs it leaves out are no longer subscribed.
    pub(super) async fn listen_change(self: &Arc<Self>, uri: &str, on: bool, ctl: &Control) -> Result<()> {
        let mut cur = self.listener.current.lock().await;
        let mut want = cur.uris.clone();
        let changed = if on {
            want.insert(uri.to_string())
        } else {
            want.remove(uri)
        };
        if !changed && (cur.live.is_some() || want.is_empty()) {
            return Ok(());
        }
        if want.is_empty() {
            cur.uris.clear();
            if let Some(live) = cur.live.take() {
                self.end_listen(live);
            }
            return Ok(());
        }
        let (id, end, acked) = self.open_listen(&want, ctl).await?;
        let missing: Vec<&String> = want.iter().filter(|u| !acked.contains(*u)).collect();
        if !missing.is_empty() {
            log::warn!("subscriptions/listen: the server did not acknowledge {missing:?}");
        }
        let lost = on && !acked.contains(uri);
        if let Some(old) = cur.live.take() {
            self.end_listen(old);
        }
        cur.uris = acked;
        if cur.uris.is_empty() {
            self.end_listen(Live {
                id,
                ended: CancellationToken::new(),
            });
        } else {
            cur.live = Some(self.watch(id, end, FIRST_RETRY));
        }
        if lost {
            return Err(Error::new(
                Status::MCPC_ERR_NOT_SUPPORTED,
                format!(
                    "subscriptions/listen: the server did not acknowledge the subscription to {}",
                    quote(uri)
                ),
            ));
        }
        Ok(())
    }

    /// Sends a listen for `uris` and waits for its acknowledgement: its id, its end,
    /// and the URIs acknowledged. On any failure nothing of it is left.
    async fn open_listen(&self, uris: &BTreeSet<String>, ctl: &Control) -> Result<(i64, End, BTreeSet<String>)> {
        let ctx = "subscriptions/listen";
        let id = self.next_id();
        let (ack_tx, ack_rx) = oneshot::channel();
        let (end_tx, mut end) = oneshot::channel();
        self.shared
            .listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, Some(ack_tx));
        let registered = self.shared.register(
            id,
            Waiter {
                reply: Reply::Wake(end_tx),
                progress: None,
                since: Instant::now(),
                deadline: None,
                reader: Reader::Json,
            },
        );
        let mut filter = json!({ "resourceSubscriptions": uris });
        if self.options.on_notification.is_some() {
            for kind in ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] {
                filter[kind] = Value::Bool(true);
            }
        }
        let params = json!({ "notifications": filter, "_meta": self.meta(None) });
        let sent = registered.and_then(|()| {
            self.transport.send(Outgoing {
                body: jsonrpc::encode_request(id, ctx, Some(&Serialized(&params)), 0),
                id: Some(id),
                method: Some(ctx.into()),
                headers: Vec::new(),
            })
        });
        if let Err(e) = sent {
            self.forget_listen(id);
            return Err(e.context(ctx));
        }
        let timeout = self.timeout_of(ctl);
        let cancelled = async {
            match &ctl.cancel {
                Some(t) => t.cancelled().await,
                None => std::future::pending().await,
            }
        };
        let outcome = tokio::select! {
            // An acknowledgement followed at once by the listen's end is an acknowledgement.
            biased;
            acked = ack_rx => acked.map_err(|_| self.shared.dropped_error()),
            ended = &mut end => Err(match ended {
                Ok(Ok(_)) => Error::new(Status::MCPC_ERR_PROTOCOL, "the server ended the listen before acknowledging it"),
                Ok(Err(e)) => e,
                Err(_) => self.shared.dropped_error(),
            }),
            _ = self.shared.gone.cancelled() => Err(self.shared.dropped_error()),
            _ = self.listener.stop.cancelled() => Err(self.shared.dropped_error()),
            _ = cancelled => Err(Error::new(Status::MCPC_ERR_CANCELLED, "cancelled")),
            _ = tokio::time::sleep(timeout) => Err(Error::new(
                Status::MCPC_ERR_TIMEOUT,
                format!("no acknowledgement within {} ms", timeout.as_millis()),
            )),
        };
        match outcome {
            Ok(acked) => Ok((id, end, acked.into_iter().filter(|u| uris.contains(u)).collect())),
            Err(e) => {
                self.forget_listen(id);
                Err(e.context(ctx))
            }
        }
    }

    /// Ends a listen on purpose: its watcher stands down, the server is told
    /// (stdio: `notifications/cancelled`; HTTP: its stream is closed).
    fn end_listen(&self, live: Live) {
        live.ended.cancel();
        self.forget_listen(live.id);
    }

    fn forget_listen(&self, id: i64) {
        let known = self
            .shared
            .listens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id)
            .is_some();
        let pending = self.shared.take(id).is_some();
        if known && pending && !self.is_closed() {
            self.send_cancel(id, "unsubscribed");
        }
        self.transport.abandon(id);
    }

    /// Watches listen `id` until it ends; an end nobody asked for sends it again,
    /// after `retry` when the listen was short-lived (the backoff goes on across
    /// listens that end at once), else after [`FIRST_RETRY`]. A JSON-RPC error ends it.
    fn watch(self: &Arc<Self>, id: i64, end: End, retry: Duration) -> Live {
        let ended = CancellationToken::new();
        let live = Live {
            id,
            ended: ended.clone(),
        };
        let me: Weak<Client> = Arc::downgrade(self);
        let stop = self.listener.stop.clone();
        let gone = self.shared.gone.clone();
        let task = crate::drive::runtime::handle().spawn(async move {
            let born = tokio::time::Instant::now();
            let why = tokio::select! {
                _ = ended.cancelled() => return,
                _ = stop.cancelled() => return,
                _ = gone.cancelled() => return,
                why = end => why,
            };
            match why {
                Ok(Ok(_)) => log::info!("subscriptions/listen {id}: the server ended it; sending it again"),
                Ok(Err(e)) if e.status == Status::MCPC_ERR_RPC => {
                    log::warn!("subscriptions/listen {id}: {e}; not sent again until the subscriptions change");
                    if let Some(client) = me.upgrade() {
                        let mut cur = client.listener.current.lock().await;
                        if cur.live.as_ref().map(|l| l.id) == Some(id) {
                            client.forget_listen(id);
                            cur.live = None;
                        }
                    }
                    return;
                }
                Ok(Err(e)) => log::info!("subscriptions/listen {id}: {e}; sending it again"),
                Err(_) => return, // its waiter was dropped: the client is closing
            }
            let mut delay = if born.elapsed() >= MAX_RETRY {
                FIRST_RETRY
            } else {
                retry
            };
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(delay) => {}
                    _ = ended.cancelled() => return,
                    _ = stop.cancelled() => return,
                    _ = gone.cancelled() => return,
                }
                let Some(client) = me.upgrade() else { return };
                if client.listen_again(id, (delay * 2).min(MAX_RETRY)).await {
                    return;
                }
                delay = (delay * 2).min(MAX_RETRY);
            }
        });
        let mut tasks = self.listener.tasks.lock().unwrap_or_else(|e| e.into_inner());
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
        live
    }

    /// Sends the set again in place of listen `old`, which ended. True when done
    /// (sent, refused, or replaced meanwhile); false to try again later.
    async fn listen_again(self: &Arc<Self>, old: i64, retry: Duration) -> bool {
        let mut cur = self.listener.current.lock().await;
        if cur.live.as_ref().map(|l| l.id) != Some(old) {
            return true;
        }
        self.forget_listen(old);
        let uris = cur.uris.clone();
        match self.open_listen(&uris, &Control::default()).await {
            Ok((id, end, acked)) => {
                if acked != uris {
                    log::warn!("subscriptions/listen: sent again, the server acknowledged {acked:?} of {uris:?}");
                }
                cur.uris = acked;
                cur.live = Some(self.watch(id, end, retry));
                true
            }
            Err(e) if e.status == Status::MCPC_ERR_RPC => {
                log::warn!("{e}: the subscriptions are not sent again until they change");
                cur.live = None;
                true
            }
            Err(e) => {
                log::info!("{e}: trying again");
                false
            }
        }
    }

    /// Ends the watching tasks and waits for them (on close).
    pub(super) async fn reap_listens(&self) {
        self.listener.stop.cancel();
        let tasks = std::mem::take(&mut *self.listener.tasks.lock().unwrap_or_else(|e| e.into_inner()));
        for t in tasks {
            let _ = t.await;
        }
        self.shared.listens.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::input::served::Inbox;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn notifications_matched_by_subscription_id() {
        let shared = Shared::new(
            &super::super::Options::default(),
            Inbox::new(Default::default(), MAX_RETRY),
        );
        let (tx, mut rx) = oneshot::channel();
        shared.listens.lock().unwrap().insert(7, Some(tx));
        let ack = raw(
            r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"notifications":{"resourceSubscriptions":["a"]}}"#,
        );
        assert!(shared.route_listen("notifications/subscriptions/acknowledged", Some(&ack)));
        assert_eq!(rx.try_recv().unwrap(), vec!["a".to_string()]);
        // A second acknowledgement is taken and dropped.
        assert!(shared.route_listen("notifications/subscriptions/acknowledged", Some(&ack)));
        // The listen's own notifications go on; another's, and malformed ones, are dropped.
        let ours = raw(r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":7},"uri":"a"}"#);
        assert!(!shared.route_listen("notifications/resources/updated", Some(&ours)));
        let stale = raw(r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":8},"uri":"a"}"#);
        assert!(shared.route_listen("notifications/resources/updated", Some(&stale)));
        let unrelated = raw(r#"{"uri":"a"}"#);
        assert!(!shared.route_listen("notifications/resources/updated", Some(&unrelated)));
        assert!(!shared.route_listen("notifications/resources/updated", None));
        // notifications/cancelled of a listen is taken; of anything else, left.
        let cancel = |id: i64| raw(&format!(r#"{{"requestId":{id}}}"#));
        assert!(shared.route_listen("notifications/cancelled", Some(&cancel(7))));
        assert!(!shared.route_listen("notifications/cancelled", Some(&cancel(9))));
    }
}
