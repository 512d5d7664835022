//! Restarting a stdio server that died (the specification's SHOULD, off unless
//! asked for): a bounded number of restarts with a doubling backoff. Requests in
//! flight when it died fail as MCPC_ERR_SERVER_EXITED; a new process is started,
//! the protocol negotiated again, and later requests go to it.

use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::client::{Client, Control};
use crate::config::{Plan, Restart};
use crate::error::{Error, Result, Status};

/// The longest wait between restarts, however many came before.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The client behind a handle: one for its whole life, or the one a supervisor
/// keeps (a stdio server with a restart policy).
#[derive(Clone)]
pub enum Held {
    One(Arc<Client>),
    Supervised(Arc<Supervisor>),
}

impl Held {
    /// `client`, made by `plan`: supervised when the plan restarts.
    pub fn made(plan: Plan, client: Client) -> Held {
        match plan.restart {
            Some(r) => Held::Supervised(Supervisor::start(plan, r, client)),
            None => Held::One(Arc::new(client)),
        }
    }

    /// The client requests go to now.
    pub fn current(&self) -> Arc<Client> {
        match self {
            Held::One(c) => c.clone(),
            Held::Supervised(s) => s.current(),
        }
    }

    /// Closes the client; no restart after this.
    pub async fn close(&self) {
        match self {
            Held::One(c) => c.close().await,
            Held::Supervised(s) => s.close().await,
        }
    }
}

/// A client whose server is started again when it dies.
pub struct Supervisor {
    plan: Plan,
    policy: Restart,
    current: RwLock<Arc<Client>>,
    /// Counts clients: each restart that connects bumps it.
    generation: watch::Sender<u64>,
    state: Mutex<State>,
    /// Cancelled when the host closes the client: no restart after that.
    stopped: CancellationToken,
    /// The task that watches and restarts.
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

#[derive(Default)]
struct State {
    /// Restarts tried (successful or not).
    tried: u32,
    /// Why restarts ended, once they have.
    ended: Option<Error>,
    /// Why the last restart failed to connect, if it did.
    last_failure: Option<Error>,
}

impl Supervisor {
    /// Watches `first`, made by `plan`, and starts the server again when it dies.
    pub fn start(plan: Plan, policy: Restart, first: Client) -> Arc<Supervisor> {
        first.set_restart_follows(policy.max > 0);
        let sup = Arc::new(Supervisor {
            plan,
            policy,
            current: RwLock::new(Arc::new(first)),
            generation: watch::channel(0).0,
            state: Mutex::new(State::default()),
            stopped: CancellationToken::new(),
            task: Mutex::new(None),
        });
        let task = crate::drive::runtime::handle().spawn(watch_over(Arc::downgrade(&sup)));
        *sup.task.lock().unwrap_or_else(|p| p.into_inner()) = Some(task);
        sup
    }

    /// The client requests go to now.
    pub fn current(&self) -> Arc<Client> {
        self.current.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The current client once it is connected: while the server is being started
    /// again, waits for the new one until `deadline` or `cancel`. Returns the current
    /// client when none is coming (its requests then fail with its own error).
    pub async fn ready(&self, deadline: tokio::time::Instant, cancel: Option<&CancellationToken>) -> Arc<Client> {
        let mut rx = self.generation.subscribe();
        let never = CancellationToken::new();
        let cancel = cancel.unwrap_or(&never);
        loop {
            rx.borrow_and_update();
            let c = self.current();
            if !c.is_closed() || self.ended().is_some() || self.stopped.is_cancelled() {
                return c;
            }
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return c },
                _ = self.stopped.cancelled() => return c,
                _ = cancel.cancelled() => return c,
                _ = tokio::time::sleep_until(deadline) => return c,
            }
        }
    }

    /// Why no restart will come, once the restarts have run out.
    pub fn ended(&self) -> Option<Error> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).ended.clone()
    }

    /// The host closes the client: no restart from now on (one under way is
    /// abandoned, its process reaped as any dropped transport's); closes the current one.
    pub async fn close(&self) {
        self.stopped.cancel();
        let task = self.task.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(t) = task {
            let _ = t.await;
        }
        let c = self.current();
        c.no_restart(Error::new(Status::MCPC_ERR_CLOSED, "the client was closed"));
        c.close().await;
    }
}

/// Waits for the current client's connection to fail, then starts the server again,
/// until the restarts run out or the host closes the client.
async fn watch_over(sup: Weak<Supervisor>) {
    loop {
        let (gone, stopped) = {
            let Some(s) = sup.upgrade() else { return };
            (s.current().gone(), s.stopped.clone())
        };
        tokio::select! {
            _ = gone.cancelled() => {}
            _ = stopped.cancelled() => return,
        }
        // Tries until one restart connects or none is left.
        loop {
            let Some(s) = sup.upgrade() else { return };
            let tried = {
                let mut st = s.state.lock().unwrap_or_else(|p| p.into_inner());
                if st.tried >= s.policy.max {
                    let last = st
                        .last_failure
                        .as_ref()
                        .map_or_else(String::new, |e| format!(" (the last start: {e})"));
                    let end = Error::new(
                        Status::MCPC_ERR_TRANSPORT,
                        format!(
                            "the server's connection failed and it was started again {} times, the most allowed{last}",
                            s.policy.max
                        ),
                    );
                    st.ended = Some(end.clone());
                    drop(st);
                    // A dead client that said a restart follows now says none does.
                    s.current().no_restart(end);
                    // Wakes callers waiting in `ready`: none is coming.
                    s.generation.send_modify(|_| {});
                    return;
                }
                st.tried += 1;
                st.tried
            };
            let wait = s
                .policy
                .backoff
                .saturating_mul(1 << (tried - 1).min(16))
                .min(MAX_BACKOFF);
            let stopped = s.stopped.clone();
            drop(s);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stopped.cancelled() => return,
            }
            let Some(s) = sup.upgrade() else { return };
            match restart(&s, tried).await {
                Ok(()) => break,
                Err(e) => {
                    log::warn!("starting the server again failed (restart {tried}): {e}");
                    s.state.lock().unwrap_or_else(|p| p.into_inner()).last_failure = Some(e);
                }
            }
        }
    }
}

/// Connects a new client, and puts it in the old one's place.
async fn restart(s: &Supervisor, tried: u32) -> Result<()> {
    // A close meanwhile cancels the connect, which then closes and reaps what it
    // started before the close returns (the close waits for this task).
    let ctl = Control {
        cancel: Some(s.stopped.child_token()),
        ..Control::default()
    };
    let fresh = match s.plan.connect_restarting(&ctl, tried < s.policy.max).await {
        Err(_) if s.stopped.is_cancelled() => return Ok(()),
        other => other?,
    };
    if s.stopped.is_cancelled() {
        fresh.no_restart(Error::new(Status::MCPC_ERR_CLOSED, "the client was closed"));
        fresh.close().await;
        return Ok(());
    }
    let old = {
        let mut cur = s.current.write().unwrap_or_else(|p| p.into_inner());
        std::mem::replace(&mut *cur, Arc::new(fresh))
    };
    s.generation.send_modify(|g| *g += 1);
    log::info!("the server was started again (restart {tried} of {})", s.policy.max);
    old.close().await;
    Ok(())
}
