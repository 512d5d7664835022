//! The deadlines of a client's direct calls, earliest first.

use std::collections::{BTreeSet, VecDeque};

use tokio::time::Instant;

/// The deadlines of the direct calls in flight, by request id. A client's calls
/// mostly share one timeout, so their deadlines arrive in order: those join the
/// back of a queue (no search, and no allocation once the queue has grown); any
/// other goes into a sorted set. A call that ends leaves the queue at once from
/// its front; from inside, it stays until it reaches the front, or until ended
/// calls make up half the queue, which is then compacted. One sorted set for all
/// of them would cost more a call with many calls in flight.
///
/// `live` arguments tell whether a request id is still in flight.
#[derive(Default)]
pub(crate) struct Deadlines {
    in_order: VecDeque<(Instant, i64)>,
    others: BTreeSet<(Instant, i64)>,
    /// Entries in `in_order` whose call has ended.
    ended: usize,
}

impl Deadlines {
    /// Adds a call's deadline. True when it is now the earliest.
    pub fn insert(&mut self, at: Instant, id: i64) -> bool {
        let earliest = self.first().map_or(true, |first| at < first);
        if self.in_order.back().map_or(true, |&(last, _)| at >= last) {
            self.in_order.push_back((at, id));
        } else {
            self.others.insert((at, id));
        }
        earliest
    }

    /// The earliest deadline.
    pub fn first(&self) -> Option<Instant> {
        match (self.in_order.front(), self.others.first()) {
            (Some(a), Some(b)) => Some(a.0.min(b.0)),
            (a, b) => a.or(b).map(|&(at, _)| at),
        }
    }

    /// Forgets the deadline of call `id`, which ended.
    pub fn remove(&mut self, at: Instant, id: i64, live: impl Fn(i64) -> bool) {
        if self.in_order.front() == Some(&(at, id)) {
            self.in_order.pop_front();
            self.skip_ended(&live);
        } else if !self.others.remove(&(at, id)) {
            self.ended += 1;
            if self.ended > self.in_order.len() / 2 + 32 {
                self.in_order.retain(|&(_, i)| live(i));
                self.ended = 0;
            }
        }
    }

    /// Takes the earliest deadline if it is at or before `now`: its call's id.
    pub fn pop_expired(&mut self, now: Instant, live: impl Fn(i64) -> bool) -> Option<i64> {
        let queued = self.in_order.front().copied().filter(|&(at, _)| at <= now);
        let sorted = self.others.first().copied().filter(|&(at, _)| at <= now);
        let id = match (queued, sorted) {
            (Some(q), Some(s)) if s < q => self.others.pop_first()?.1,
            (Some(_), _) => {
                let (_, id) = self.in_order.pop_front()?;
                self.skip_ended(&|i| i != id && live(i));
                id
            }
            (None, Some(_)) => self.others.pop_first()?.1,
            (None, None) => return None,
        };
        Some(id)
    }

    pub fn clear(&mut self) {
        *self = Deadlines::default();
    }

    /// Drops ended calls from the queue's front, so its front is always live.
    fn skip_ended(&mut self, live: &impl Fn(i64) -> bool) {
        while let Some(&(_, id)) = self.in_order.front() {
            if live(id) {
                break;
            }
            self.in_order.pop_front();
            self.ended = self.ended.saturating_sub(1);
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.in_order.len() + self.others.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashSet;
    use std::time::Duration;

    /// Random inserts (mostly in order), removals anywhere and expiries, checked
    /// against a plain sorted set; the queue never holds more than about twice what
    /// is live.
    #[test]
    fn agrees_with_a_sorted_set() {
        let base = Instant::now();
        let mut rng = crate::testing::XorShift::new(0x2545_f491_4f6c_dd1d);
        let mut rand = move |n: u64| rng.below(n);
        let mut d = Deadlines::default();
        let mut model: BTreeSet<(Instant, i64)> = BTreeSet::new();
        let live: RefCell<HashSet<i64>> = RefCell::default();
        let mut clock = 0u64;
        for id in 0..20_000i64 {
            clock += rand(3);
            // One call in ten has a shorter timeout than the others.
            let at = base + Duration::from_millis(if rand(10) == 0 { clock + rand(50) } else { clock + 100 });
            assert_eq!(d.insert(at, id), model.first().map_or(true, |f| at < f.0));
            model.insert((at, id));
            live.borrow_mut().insert(id);
            match rand(4) {
                0 | 1 => {
                    // The oldest calls tend to end first, but not always.
                    let ids: Vec<_> = model.iter().take(8).copied().collect();
                    let (at, id) = ids[rand(ids.len() as u64) as usize];
                    model.remove(&(at, id));
                    live.borrow_mut().remove(&id);
                    d.remove(at, id, |i| live.borrow().contains(&i));
                }
                2 => {
                    let now = base + Duration::from_millis(clock + 60);
                    while let Some(id) = d.pop_expired(now, |i| live.borrow().contains(&i)) {
                        let first = model.pop_first().unwrap();
                        assert!(first.0 <= now);
                        assert_eq!(first.1, id);
                        live.borrow_mut().remove(&id);
                    }
                    assert!(model.first().map_or(true, |f| f.0 > now));
                }
                _ => {}
            }
            assert_eq!(d.first(), model.first().map(|f| f.0));
            assert!(
                d.len() <= 2 * model.len() + 70,
                "{} entries for {} live",
                d.len(),
                model.len()
            );
        }
    }

    /// A call that hangs at the queue's front while thousands end behind it: the
    /// ended ones are compacted away, and the hung one still expires first.
    #[test]
    fn ended_calls_do_not_pile_up_behind_a_hung_one() {
        let base = Instant::now();
        let mut d = Deadlines::default();
        let live: RefCell<HashSet<i64>> = RefCell::default();
        d.insert(base, 0);
        live.borrow_mut().insert(0);
        for id in 1..10_000i64 {
            let at = base + Duration::from_millis(id as u64);
            d.insert(at, id);
            live.borrow_mut().insert(id);
            if id >= 10 {
                // Calls end a few behind the newest, never the hung one.
                let gone = id - 9;
                live.borrow_mut().remove(&gone);
                d.remove(base + Duration::from_millis(gone as u64), gone, |i| {
                    live.borrow().contains(&i)
                });
            }
            let n = live.borrow().len();
            assert!(d.len() <= 2 * n + 70, "{} entries for {n} live", d.len());
        }
        assert_eq!(d.first(), Some(base));
        assert_eq!(d.pop_expired(base, |i| i != 0 && live.borrow().contains(&i)), Some(0));
        assert_eq!(d.first(), Some(base + Duration::from_millis(9991)));
    }
}
