//! Whose turn it is at the server's stdout: the reader task's, or that of one
//! caller's thread blocked in a call (see [`crate::drive`]). The flags and the
//! order of their steps, apart from the pipe and its watch, so that the loom
//! models (`make loom`) run this very code.

use crate::sync::{AtomicBool, AtomicUsize, Ordering};

/// What a turn does to the pipe's watch and to the reader task.
pub(super) trait PipeWatch {
    /// Arms the one-shot watch (level-triggered: what is already in the pipe
    /// fires at once), or disarms it.
    fn arm(&self, on: bool);
    /// Wakes the reader task: a caller stopped reading with work left for it.
    fn hand_back(&self);
}

/// One reader at a time (`busy`), and a caller's claim on the pipe between its
/// turns. A caller that ends its claim leaves the watch off (`watch_off`), for
/// the next call need not turn it off again; a re-arm task then arms it once the
/// pipe is free ([`unclaim`](Self::unclaim), [`rearm_if_free`](Self::rearm_if_free)).
pub(super) struct Turns {
    busy: AtomicBool,
    /// A claimer disarmed the watch and left it so: the next claimer need not
    /// disarm it. Whoever arms it clears this first.
    watch_off: AtomicBool,
    /// A task that arms the watch again is on its way.
    rearm_pending: AtomicBool,
    /// The caller's thread (its parker's identity) that holds `busy` between its
    /// turns at reading; 0 when none does.
    claimant: AtomicUsize,
}

impl Turns {
    pub(super) fn new() -> Self {
        Turns {
            busy: AtomicBool::new(false),
            watch_off: AtomicBool::new(false),
            rearm_pending: AtomicBool::new(false),
            claimant: AtomicUsize::new(0),
        }
    }

    fn try_acquire(&self) -> bool {
        self.busy
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    fn release(&self) {
        self.busy.store(false, Ordering::SeqCst);
    }

    /// Gives the pipe back to the reader task: releases `busy`, then arms the watch.
    /// In that order: an event that fired while `busy` was still held would find
    /// the pipe taken, and the one-shot watch would stay off with a message waiting.
    fn hand_to_task(&self, watch: &impl PipeWatch) {
        self.watch_off.store(false, Ordering::SeqCst);
        self.release();
        watch.arm(true);
    }

    /// The reader task's turn, once woken: `read` runs if nobody else reads, and
    /// says what it ended with and whether it drained the pipe (then the watch is
    /// armed again; the task itself takes what that fires). `None` when another
    /// reads: that one arms the watch, or hands back, when it stops.
    pub(super) fn task_turn<T>(&self, watch: &impl PipeWatch, read: impl FnOnce() -> (T, bool)) -> Option<T> {
        if !self.try_acquire() {
            return None;
        }
        let (end, drained) = read();
        if drained {
            self.watch_off.store(false, Ordering::SeqCst);
            watch.arm(true);
        }
        self.release();
        Some(end)
    }

    /// Reserves reading for caller `who` before it sends its request: `busy`
    /// taken and the watch disarmed now, so that the response cannot wake the
    /// reader task in the moment between the request going out and the caller's
    /// first turn.
    pub(super) fn claim(&self, who: usize, watch: &impl PipeWatch) -> bool {
        if !self.try_acquire() {
            return false;
        }
        if !self.watch_off.load(Ordering::SeqCst) {
            watch.arm(false);
        }
        self.claimant.store(who, Ordering::SeqCst);
        true
    }

    /// Ends a claim that `who` still holds, leaving the watch disarmed for the
    /// next call: true if a re-arm task must now be started (none is on its way).
    pub(super) fn unclaim(&self, who: usize) -> bool {
        if self
            .claimant
            .compare_exchange(who, 0, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            self.watch_off.store(true, Ordering::SeqCst);
            self.release();
            return !self.rearm_pending.swap(true, Ordering::SeqCst);
        }
        false
    }

    /// The re-arm task's check: arms the watch if nobody reads; false if it must
    /// look again later.
    pub(super) fn rearm_if_free(&self, watch: &impl PipeWatch) -> bool {
        if !self.try_acquire() {
            return false;
        }
        self.rearm_pending.store(false, Ordering::SeqCst);
        self.hand_to_task(watch);
        true
    }

    /// A message goes out while the watch is left off after a blocking call: its
    /// answer is the reader task's, so the watch is armed now if nobody reads.
    pub(super) fn rearm_for_send(&self, watch: &impl PipeWatch) {
        if self.watch_off.load(Ordering::SeqCst) && self.try_acquire() {
            self.hand_to_task(watch);
        }
    }

    /// Caller `who`'s turn begins: `Some(claimed)` if it may read (under its
    /// claim, or taking the pipe now), `None` if another reads.
    pub(super) fn begin(&self, who: usize, watch: &impl PipeWatch) -> Option<bool> {
        let claimed = self.claimant.load(Ordering::SeqCst) == who;
        if !claimed {
            if !self.try_acquire() {
                return None;
            }
            watch.arm(false);
        }
        Some(claimed)
    }

    /// A caller's turn ends. Under a claim with nothing to hand back, it keeps the
    /// pipe. Otherwise what comes next (or is already in the pipe) is the reader
    /// task's again, and with work left (`hand_back`) the task is woken.
    pub(super) fn end(&self, claimed: bool, hand_back: bool, watch: &impl PipeWatch) {
        if claimed {
            if !hand_back {
                return;
            }
            self.claimant.store(0, Ordering::SeqCst);
        }
        self.hand_to_task(watch);
        if hand_back {
            watch.hand_back();
        }
    }
}

/// Model checks (`make loom`): a caller's thread that claims the pipe, takes its
/// turns and ends its claim, against the server, the reader task (woken by the
/// one-shot watch or a hand-back) and the re-arm task, over this very code.
///
/// The bound, three preemptions: a lost wake-up here is one thread stopped
/// inside a hand-over of the pipe (between arming the watch and releasing `busy`)
/// while a message arrives and the reader task wakes, and the old order of the
/// hand-over in the re-arm task and in `send` fails within two. Three messages
/// make every hand-over (claim, hand-back, a caller's own turn, the re-arm task,
/// a send) meet one arriving before, inside and after it.
#[cfg(all(test, mcpc_loom))]
mod loom_models {
    use super::*;
    use loom::sync::{Arc, Condvar, Mutex, MutexGuard};
    use loom::thread;
    use std::collections::VecDeque;

    const CALLER: usize = 1;

    #[derive(Clone, Copy, PartialEq, Debug)]
    enum Msg {
        /// The blocked caller's response.
        Response,
        /// A notification: the reader task's to deliver.
        Note,
        /// The response to an asynchronous request, which no caller waits on.
        Answer,
    }

    /// What the server does, in order.
    #[derive(Clone, Copy)]
    enum Step {
        /// Waits until this many requests went out.
        Await(usize),
        Write(Msg),
    }

    #[derive(Default)]
    struct Side {
        /// The child's stdout.
        pipe: VecDeque<Msg>,
        /// What a caller read but left for the reader task.
        deferred: VecDeque<Msg>,
        /// Who delivered what, in order (true: the caller's thread).
        delivered: Vec<(Msg, bool)>,
        /// The one-shot watch is armed and nothing fired it yet.
        armed: bool,
        /// It fired: an event waits for the reader task.
        fired: bool,
        /// A caller handed the pipe back with work left.
        handed: bool,
        /// Requests written to the server.
        requests: usize,
        /// What the server answers at once to each request, in order, written on
        /// the sender's thread (no server thread then).
        replies: VecDeque<Msg>,
        /// The others are done: the reader task stops once nothing wakes it.
        done: bool,
        /// The re-arm task may run (it checks only every `REARM_AFTER`).
        late: bool,
    }

    impl Side {
        fn answered(&self) -> bool {
            self.delivered.iter().any(|d| d.0 == Msg::Response)
        }
    }

    struct Model {
        side: Mutex<Side>,
        /// Any change to `side`: the waits below are the parker's `poll`, the
        /// reader task's `select` and the server's read of its stdin.
        changed: Condvar,
        turns: Turns,
    }

    /// The epoll entry: level-triggered, so arming it with data in the pipe fires
    /// it at once; one-shot, so firing disarms it. Disarming it also drops an
    /// event the reader task has not taken (epoll reports none for an entry
    /// modified away; at worst tokio has seen it and the task wakes for
    /// nothing, which it survives), the choice that loses more wake-ups.
    impl PipeWatch for Model {
        fn arm(&self, on: bool) {
            let mut side = self.side.lock().unwrap();
            let data = !side.pipe.is_empty();
            side.armed = on && !data;
            side.fired = on && (data || side.fired);
            self.changed.notify_all();
        }

        fn hand_back(&self) {
            self.side.lock().unwrap().handed = true;
            self.changed.notify_all();
        }
    }

    impl Model {
        fn new() -> Arc<Model> {
            Arc::new(Model {
                side: Mutex::new(Side {
                    armed: true,
                    ..Side::default()
                }),
                changed: Condvar::new(),
                turns: Turns::new(),
            })
        }

        fn wait_until<'a>(
            &'a self,
            mut side: MutexGuard<'a, Side>,
            ready: impl Fn(&Side) -> bool,
        ) -> MutexGuard<'a, Side> {
            while !ready(&side) {
                side = self.changed.wait(side).unwrap();
            }
            side
        }

        /// The server writes a message: an armed watch fires.
        fn write(&self, msg: Msg) {
            let mut side = self.side.lock().unwrap();
            side.pipe.push_back(msg);
            if side.armed {
                side.armed = false;
                side.fired = true;
            }
            self.changed.notify_all();
        }

        fn server(&self, script: &[Step]) {
            for step in script {
                match *step {
                    Step::Await(n) => drop(self.wait_until(self.side.lock().unwrap(), |s| s.requests >= n)),
                    Step::Write(msg) => self.write(msg),
                }
            }
        }

        /// `read_loop`: woken by a hand-back or the watch (taking its event), it
        /// takes its turn, delivering what a caller left and then the pipe.
        fn reader_task(&self) {
            loop {
                {
                    let mut side = self.wait_until(self.side.lock().unwrap(), |s| s.handed || s.fired || s.done);
                    // `biased`: the hand-back first; an event left waits for the next round.
                    if !std::mem::take(&mut side.handed) && !std::mem::take(&mut side.fired) {
                        return;
                    }
                }
                self.turns.task_turn(self, || {
                    let side = &mut *self.side.lock().unwrap();
                    while let Some(m) = side.deferred.pop_front().or_else(|| side.pipe.pop_front()) {
                        side.delivered.push((m, false));
                    }
                    self.changed.notify_all();
                    ((), true)
                });
            }
        }

        /// `Transport::send`: the watch armed if it was left off, then the request out.
        fn send(&self) {
            self.turns.rearm_for_send(self);
            let reply = {
                let mut side = self.side.lock().unwrap();
                side.requests += 1;
                side.replies.pop_front()
            };
            self.changed.notify_all();
            if let Some(reply) = reply {
                self.write(reply);
            }
        }

        /// `Reader::read_here`: one turn of the caller's thread, waiting on the pipe
        /// and its parker; a response is delivered here unless something is left
        /// before it, anything else is left for the reader task.
        fn drive(&self) -> bool {
            let Some(claimed) = self.turns.begin(CALLER, self) else {
                return false;
            };
            let hand_back = {
                let mut side = self.side.lock().unwrap();
                let mut hand_back = !side.deferred.is_empty();
                while !hand_back && !side.answered() {
                    side = self.wait_until(side, |s| !s.pipe.is_empty() || s.answered());
                    while let Some(m) = side.pipe.pop_front() {
                        if side.deferred.is_empty() && m != Msg::Note {
                            side.delivered.push((m, true));
                        } else {
                            side.deferred.push_back(m);
                        }
                    }
                    hand_back = !side.deferred.is_empty();
                }
                hand_back
            };
            self.turns.end(claimed, hand_back, self);
            !hand_back
        }

        fn finish(&self, what: impl FnOnce(&mut Side)) {
            what(&mut self.side.lock().unwrap());
            self.changed.notify_all();
        }

        /// Each message delivered once, in the order written, notifications only by
        /// the reader task, and the pipe free with its watch armed for what comes.
        fn check(&self, written: &[Msg]) {
            let side = self.side.lock().unwrap();
            let order: Vec<Msg> = side.delivered.iter().map(|d| d.0).collect();
            assert_eq!(order, written, "each message delivered once, in order");
            assert!(
                side.delivered
                    .iter()
                    .all(|&(m, by_caller)| !by_caller || m != Msg::Note),
                "a notification delivered on the caller's thread"
            );
            assert!(side.armed && !side.fired, "the watch is armed for what comes next");
            assert!(self.turns.try_acquire(), "nobody holds the pipe");
            assert_eq!(self.turns.claimant.load(Ordering::SeqCst), 0);
            assert!(!self.turns.rearm_pending.load(Ordering::SeqCst));
        }
    }

    /// `drive::block_on_driven` for a call: the claim, the request, the turns (or
    /// the parker alone, when another reads) until the response is delivered, and
    /// the claim's end, which may start the re-arm task.
    fn call(m: &Arc<Model>) -> Option<thread::JoinHandle<()>> {
        let claimed = m.turns.claim(CALLER, &**m);
        m.send();
        loop {
            if m.side.lock().unwrap().answered() {
                break;
            }
            if !m.drive() {
                drop(m.wait_until(m.side.lock().unwrap(), Side::answered));
            }
        }
        if !claimed || !m.turns.unclaim(CALLER) {
            return None;
        }
        let m = m.clone();
        Some(thread::spawn(move || {
            drop(m.wait_until(m.side.lock().unwrap(), |s| s.late));
            // `rearm_later`: a check every REARM_AFTER until the pipe is free.
            while !m.turns.rearm_if_free(&*m) {
                thread::yield_now();
            }
        }))
    }

    fn written(script: &[Step]) -> Vec<Msg> {
        script
            .iter()
            .filter_map(|s| match s {
                Step::Write(m) => Some(*m),
                Step::Await(_) => None,
            })
            .collect()
    }

    fn bounded() -> loom::model::Builder {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model
    }

    /// One blocking call, the re-arm task free to run as soon as the claim ends.
    fn one_call(script: &'static [Step]) {
        bounded().check(move || {
            let m = Model::new();
            m.side.lock().unwrap().late = true;
            let task = {
                let m = m.clone();
                thread::spawn(move || m.reader_task())
            };
            let server = {
                let m = m.clone();
                thread::spawn(move || m.server(script))
            };
            let rearm = call(&m);
            server.join().unwrap();
            if let Some(rearm) = rearm {
                rearm.join().unwrap();
            }
            m.finish(|s| s.done = true);
            task.join().unwrap();
            m.check(&written(script));
        });
    }

    /// A notification that follows the response may arrive after the claim
    /// ended, with the watch left off: the re-arm task hands it to the reader task.
    #[test]
    fn loom_a_notification_after_the_claim_reaches_the_reader_task() {
        one_call(&[Step::Await(1), Step::Write(Msg::Response), Step::Write(Msg::Note)]);
    }

    /// A notification racing the claim: the reader task may hold the pipe (the
    /// claim fails, the caller's thread reads later or not at all), or the
    /// caller reads it and hands it back before its response.
    #[test]
    fn loom_a_notification_racing_the_claim_goes_to_the_reader_task() {
        one_call(&[Step::Write(Msg::Note), Step::Await(1), Step::Write(Msg::Response)]);
    }

    /// After a blocking call, an asynchronous request goes out while the watch is
    /// left off and a notification waits in the pipe: the send arms the watch, so
    /// both the notification and the answer are read without waiting for the
    /// re-arm task, which is made to run only after the reader task has stopped.
    /// The server answers each request at once, on the sender's thread: the
    /// reader task is what races the send (a server thread of its own makes the
    /// model run for many minutes, and the other models race it).
    #[test]
    fn loom_a_send_after_a_call_arms_the_watch_for_its_answer() {
        const WRITTEN: [Msg; 3] = [Msg::Response, Msg::Note, Msg::Answer];
        bounded().check(|| {
            let m = Model::new();
            m.side.lock().unwrap().replies = [Msg::Response, Msg::Answer].into();
            let task = {
                let m = m.clone();
                thread::spawn(move || m.reader_task())
            };
            let rearm = call(&m);
            m.write(Msg::Note);
            m.send();
            m.finish(|s| s.done = true);
            task.join().unwrap();
            {
                let side = m.side.lock().unwrap();
                let order: Vec<Msg> = side.delivered.iter().map(|d| d.0).collect();
                assert_eq!(order, WRITTEN, "delivered before the re-arm task runs");
            }
            m.finish(|s| s.late = true);
            if let Some(rearm) = rearm {
                rearm.join().unwrap();
            }
            m.check(&WRITTEN);
        });
    }
}
