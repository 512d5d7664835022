//! A request's share with its connection's poller. Only the thread that polls the
//! connection (its task, or the caller's thread that holds the claim) touches the
//! h2 crate's streams: it sends the request, polls its response and body, and
//! leaves what came in the [`Exchange`], where the request's own future finds it.
//! h2 keeps every stream of a connection under one lock, which the request futures
//! and the connection's task would otherwise take on two runtime threads at once,
//! call after call; handed over here, the request's side takes only its own
//! exchange's lock, which the poller holds for a moment per stream event.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use h2::client::{ResponseFuture, SendRequest};
use h2::RecvStream;
use http::Request;
use slab::Slab;

/// What the poller moves from a stream into its exchange before the request's side
/// takes some: past it, the rest waits in h2, within the stream's window.
const HELD: usize = 1 << 20;

/// Why a request got no response head.
pub enum Lost {
    /// It never went out (the connection had ended, was going away, or refused
    /// it when asked to open the stream): it may go again at once.
    Unsent(Option<h2::Error>),
    /// Its stream failed; the second error, if any, is its body's send.
    Failed(h2::Error, Option<h2::Error>),
    /// The connection ended and h2 said nothing of the stream.
    Closed,
}

/// How a response body ended.
pub enum End {
    Done,
    Failed(h2::Error),
    Closed,
}

enum Stage {
    /// To go out: the request it is built from (see [`request_for`]) and its body
    /// (empty for none).
    Queued(Arc<Request<()>>, Bytes),
    Head(ResponseFuture),
    Body(RecvStream),
    Over,
}

struct State {
    stage: Stage,
    /// Its place among the poller's live exchanges, once sent.
    key: Option<usize>,
    head: Option<Result<http::response::Parts, Lost>>,
    data: VecDeque<Bytes>,
    held: usize,
    /// How the body ended, once it has: `Done` from when the request's side took
    /// the end, whatever it was, so that the body reads as ended from then on.
    end: Option<End>,
    /// The request's side let go (a cancel): the stream is reset.
    gone: bool,
    send_error: Option<h2::Error>,
    /// The request's future, woken when something comes in.
    waker: Option<Waker>,
}

/// One request, from its head to its body's end.
pub struct Exchange {
    state: Mutex<State>,
    /// On the poller's ready list (set by [`Lists::push_ready`], cleared when taken
    /// off it).
    queued: AtomicBool,
    /// Given to h2 for this stream: puts the exchange on the ready list (the
    /// poller's, which makes it).
    wake: Waker,
}

/// The shared lists through which exchanges reach the poller.
#[derive(Default)]
pub struct Lists {
    incoming: Mutex<Incoming>,
    ready: Mutex<Vec<Arc<Exchange>>>,
}

#[derive(Default)]
struct Incoming {
    list: Vec<Arc<Exchange>>,
    /// The connection has ended: nothing is taken in any more.
    closed: bool,
}

impl Lists {
    /// Hands `ex` to the poller; false (and `ex` told so) when the connection has ended.
    pub fn submit(&self, ex: &Arc<Exchange>) -> bool {
        let mut inc = lock(&self.incoming);
        if inc.closed {
            drop(inc);
            deliver_head(ex, Err(Lost::Unsent(None)));
            return false;
        }
        inc.list.push(ex.clone());
        true
    }

    /// Puts `ex` on the ready list unless it is there; true if it was put.
    pub fn push_ready(&self, ex: Arc<Exchange>) -> bool {
        if ex.queued.swap(true, Ordering::SeqCst) {
            return false;
        }
        lock(&self.ready).push(ex);
        true
    }

    /// Whether something waits for the poller.
    pub fn pending(&self) -> bool {
        !lock(&self.incoming).list.is_empty() || !lock(&self.ready).is_empty()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Exchange {
    /// A request to go out; `wake_of` makes the waker h2 is to hold for its stream,
    /// from the exchange (held weakly: h2 may hold the waker past the exchange).
    pub fn new(req: Arc<Request<()>>, body: Bytes, wake_of: impl FnOnce(Weak<Exchange>) -> Waker) -> Arc<Exchange> {
        Arc::new_cyclic(|me| Exchange {
            state: Mutex::new(State {
                stage: Stage::Queued(req, body),
                key: None,
                head: None,
                data: VecDeque::new(),
                held: 0,
                end: None,
                gone: false,
                send_error: None,
                waker: None,
            }),
            queued: AtomicBool::new(false),
            wake: wake_of(me.clone()),
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The response head, once the poller has it.
    pub fn poll_head(&self, cx: &mut Context<'_>) -> Poll<Result<http::response::Parts, Lost>> {
        let mut st = self.state();
        if let Some(h) = st.head.take() {
            return Poll::Ready(h);
        }
        keep_waker(&mut st.waker, cx);
        Poll::Pending
    }

    /// The next piece of the body (`None` at its end), and whether the poller must
    /// be woken to move more (it stopped at [`HELD`]).
    pub fn poll_data(&self, cx: &mut Context<'_>) -> (Poll<Option<Result<Bytes, End>>>, bool) {
        let mut st = self.state();
        if let Some(piece) = st.data.pop_front() {
            let was_full = st.held >= HELD;
            st.held -= piece.len();
            let resume = was_full && st.held < HELD && matches!(st.stage, Stage::Body(_));
            return (Poll::Ready(Some(Ok(piece))), resume);
        }
        let Some(end) = st.end.take() else {
            keep_waker(&mut st.waker, cx);
            return (Poll::Pending, false);
        };
        st.end = Some(End::Done);
        match end {
            End::Done => (Poll::Ready(None), false),
            e => (Poll::Ready(Some(Err(e))), false),
        }
    }

    /// The request's side lets go: true if the poller must reset the stream.
    pub fn let_go(&self) -> bool {
        let mut st = self.state();
        st.waker = None;
        st.data.clear();
        st.held = 0;
        if matches!(st.stage, Stage::Over) {
            return false;
        }
        st.gone = true;
        true
    }
}

/// Keeps `cx`'s waker in `slot`, unless the one there wakes the same task.
pub fn keep_waker(slot: &mut Option<Waker>, cx: &Context<'_>) {
    if !slot.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        *slot = Some(cx.waker().clone());
    }
}

/// The poller's side: the requests not yet sent and the streams open.
pub struct Streams {
    send: Option<SendRequest<Bytes>>,
    waiting: VecDeque<Arc<Exchange>>,
    live: Slab<Arc<Exchange>>,
}

impl Streams {
    pub fn new(send: SendRequest<Bytes>) -> Streams {
        Streams {
            send: Some(send),
            waiting: VecDeque::new(),
            live: Slab::new(),
        }
    }

    /// Sends what came in, in order, as far as h2 takes new streams.
    pub fn submit(&mut self, lists: &Lists, cx: &mut Context<'_>) {
        {
            let mut inc = lock(&lists.incoming);
            if inc.list.is_empty() && self.waiting.is_empty() {
                return;
            }
            self.waiting.extend(inc.list.drain(..));
        }
        while !self.waiting.is_empty() {
            let Some(shared) = self.send.as_ref() else {
                // Its handle gone (retired): what waits goes again elsewhere.
                for ex in self.waiting.drain(..) {
                    deliver_head(&ex, Err(Lost::Unsent(None)));
                }
                return;
            };
            // Held here while the server's limit on streams is reached: h2 would
            // queue the request and send it once a place frees, even if it was
            // cancelled meanwhile (then reset at once).
            if self.live.len() >= shared.current_max_send_streams() {
                break;
            }
            // A handle of its own for each request: h2 keeps, in the handle that
            // sent it, a stream it queued, and one kept there would outlive the
            // request's cancel (sent later all the same, and never reset).
            let mut send = shared.clone();
            match send.poll_ready(cx) {
                Poll::Pending => break,
                Poll::Ready(Err(e)) => {
                    // The connection is going away; what waits goes again elsewhere.
                    let ex = self.waiting.pop_front().expect("not empty");
                    deliver_head(&ex, Err(Lost::Unsent(Some(e))));
                    continue;
                }
                Poll::Ready(Ok(())) => {}
            }
            let ex = self.waiting.pop_front().expect("not empty");
            let mut st = ex.state();
            let (req, body) = match std::mem::replace(&mut st.stage, Stage::Over) {
                Stage::Queued(req, body) if !st.gone => (req, body),
                _ => continue,
            };
            let req = request_for(&req, body.len());
            let (resp, mut out) = match send.send_request(req, body.is_empty()) {
                Ok(r) => r,
                Err(e) => {
                    st.head = Some(Err(Lost::Unsent(Some(e))));
                    wake(st);
                    continue;
                }
            };
            if !body.is_empty() {
                // Handed over whole, to go out with the head; h2 sends what the
                // server's windows allow and the rest as they open. A server may
                // answer before all of it arrived (RFC 9113, section 8.1): an error
                // here waits for the stream's own.
                if let Err(e) = out.send_data(body, true) {
                    st.send_error = Some(e);
                }
            }
            st.stage = Stage::Head(resp);
            st.key = Some(self.live.insert(ex.clone()));
            drop(st);
            lists.push_ready(ex);
        }
    }

    /// Polls the streams on the ready list.
    pub fn run_ready(&mut self, lists: &Lists) {
        let ready = std::mem::take(&mut *lock(&lists.ready));
        for ex in ready {
            ex.queued.store(false, Ordering::SeqCst);
            self.run(&ex, HELD);
        }
    }

    /// Polls one stream, moving its body into the exchange until `held` bytes wait
    /// there.
    fn run(&mut self, ex: &Arc<Exchange>, held: usize) {
        let mut st = ex.state();
        if st.gone {
            // Dropping the stream's handles resets it (CANCEL), if still open.
            st.stage = Stage::Over;
        }
        let mut cx = Context::from_waker(&ex.wake);
        let mut woke = false;
        if let Stage::Head(resp) = &mut st.stage {
            match Pin::new(resp).poll(&mut cx) {
                Poll::Pending => {}
                Poll::Ready(Ok(r)) => {
                    let (parts, body) = r.into_parts();
                    st.head = Some(Ok(parts));
                    st.stage = Stage::Body(body);
                    woke = true;
                }
                Poll::Ready(Err(e)) => {
                    let send = st.send_error.take();
                    st.head = Some(Err(Lost::Failed(e, send)));
                    st.stage = Stage::Over;
                    woke = true;
                }
            }
        }
        while st.held < held {
            let Stage::Body(body) = &mut st.stage else {
                break;
            };
            match body.poll_data(&mut cx) {
                Poll::Pending => break,
                Poll::Ready(Some(Ok(piece))) => {
                    // Read, as far as the server's window goes: given back at once.
                    let _ = body.flow_control().release_capacity(piece.len());
                    if !piece.is_empty() {
                        st.held += piece.len();
                        st.data.push_back(piece);
                        woke = true;
                    }
                }
                Poll::Ready(Some(Err(e))) => {
                    st.end = Some(End::Failed(e));
                    st.stage = Stage::Over;
                    woke = true;
                }
                Poll::Ready(None) => {
                    st.end = Some(End::Done);
                    st.stage = Stage::Over;
                    woke = true;
                }
            }
        }
        if matches!(st.stage, Stage::Over) {
            if let Some(key) = st.key.take() {
                self.live.try_remove(key);
            }
        }
        if woke {
            wake(st);
        }
    }

    /// Whether a request held back by the server's limit on streams may go now.
    pub fn may_send_more(&self) -> bool {
        !self.waiting.is_empty()
            && self
                .send
                .as_ref()
                .is_some_and(|s| self.live.len() < s.current_max_send_streams())
    }

    /// The client no longer hands the connection out: once what waits has gone,
    /// its handle for requests goes, so that h2 closes it when its streams end.
    /// True if the handle went now.
    pub fn retire(&mut self) -> bool {
        self.waiting.is_empty() && self.send.take().is_some()
    }

    /// The connection has ended: every request still waiting or open gets its end.
    pub fn close(&mut self, lists: &Lists) {
        let incoming = {
            let mut inc = lock(&lists.incoming);
            inc.closed = true;
            std::mem::take(&mut inc.list)
        };
        for ex in self.waiting.drain(..).chain(incoming) {
            deliver_head(&ex, Err(Lost::Unsent(None)));
        }
        // A stream h2 failed has its error; any other, a plain end.
        self.run_ready(lists);
        for (_, ex) in std::mem::take(&mut self.live) {
            // All that h2 holds of the body came before the end: it is read out.
            self.run(&ex, usize::MAX);
            let mut st = ex.state();
            match st.stage {
                Stage::Head(_) => st.head = Some(Err(Lost::Closed)),
                Stage::Body(_) => st.end = Some(End::Closed),
                _ => continue,
            }
            st.stage = Stage::Over;
            wake(st);
        }
        self.send = None;
    }
}

/// The request to send: `template`'s copy, with `body_len` as its length in place
/// of the template's (none for a GET without a body). Made by the poller, which is
/// where h2 frees it: memory that one thread takes from malloc and another frees
/// waits on a lock that the first thread's own allocations take too.
pub fn request_for(template: &Request<()>, body_len: usize) -> Request<()> {
    let mut r = Request::new(());
    *r.method_mut() = template.method().clone();
    *r.uri_mut() = template.uri().clone();
    *r.version_mut() = template.version();
    *r.headers_mut() = template.headers().clone();
    let headers = r.headers_mut();
    if body_len > 0 || template.method() == http::Method::POST {
        headers.insert(http::header::CONTENT_LENGTH, http::HeaderValue::from(body_len));
    } else {
        headers.remove(http::header::CONTENT_LENGTH);
    }
    r
}

fn deliver_head(ex: &Exchange, head: Result<http::response::Parts, Lost>) {
    let mut st = ex.state();
    if matches!(st.stage, Stage::Queued(..)) {
        st.stage = Stage::Over;
        st.head = Some(head);
        wake(st);
    }
}

/// Wakes the request's future, its exchange's lock let go first.
fn wake(mut st: MutexGuard<'_, State>) {
    let waker = st.waker.take();
    drop(st);
    if let Some(w) = waker {
        w.wake();
    }
}

#[cfg(test)]
impl Streams {
    pub fn live(&self) -> usize {
        self.live.len()
    }

    pub fn held_back(&self) -> usize {
        self.waiting.len()
    }
}
