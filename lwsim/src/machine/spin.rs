//! Spin jumps: a thread spinning on a line it holds jumps to the line's next event instead of
//! running one load and one PAUSE at a time, with the same result.
//!
//! A spin-wait loop (`crate::spin_pauses`, which `lwlock::sync::spin_wait_while` calls) is: load
//! the word; if the caller keeps spinning, PAUSE; load again. While the thread holds the word's
//! line in the granted state and no exclusive transfer is booked on it, every load hits and
//! reads the same value, so the loop's *j*-th load after the one that began the jump happens at
//! `L_j = c0 + j·pause + (j − 1)·load_hit` (`c0`: the clock after that load) and changes
//! nothing but the thread's own counters. The jump sets the thread's clock to the last such load
//! the caller allows (its spin budget, or the first load at or after its core's next periodic
//! balance) and registers it on the line; it resumes, to do a real load, at the first `L_j` that
//! can see a change:
//!
//! * another core's exclusive booking of the line (a store or RMW: the only way its value or the
//!   thread's copy can change): the first load at or after the transfer's start that runs after
//!   the booking (loads before the start still hit, as [`super::directory`]'s `hits` says);
//! * another thread's arrival in its core's run queue (the slice check at that load may then
//!   preempt it): the first load that runs after the arrival;
//! * the deadline: the jump's last load, at the latest the first load at or after the start of
//!   an exclusive transfer booked before the jump, or at or after the drain of a buffered store
//!   to the line (a store's value, and a booked store's ownership, take effect at its drain).
//!
//! At resumption the skipped loads and PAUSEs are charged and counted as the loop would have
//! (`ops`, `hits`, `pauses`, `busy_ps`, the watched line's `ops`, `loads`, `hits`), the caller's
//! spin count includes them, and a reader of the counters while a jump is under way
//! ([`super::totals`], [`super::watched_lines`]) sees the loads that precede it in the
//! simulated order. So every simulated figure is the same with or without jumps
//! (`SimConfig::spin_jumps`; asserted in lwlock's `sim_validation`); only the scheduler's steps
//! (`Report::steps`) drop. A jump is not taken (the loop runs one PAUSE at a time) while the
//! thread's store buffer holds a store, while threads wait for its core or a wakeup asked for its
//! preemption, outside a core, and while the access trace or the line profile is on (they print
//! or sample every load).

use super::charge::charge_plain;
use super::executor::at_turn;
use super::task::SpinJump;
use super::{with_machine, Machine, LINE_SHIFT};
use crate::access::Plain;
use crate::profile::cost;

/// The most loads one jump skips (the jump then ends and the loop may take another).
const MAX_SKIP: u64 = 1 << 20;

/// The PAUSE of a spin-wait loop on the word at `addr`, whose last load the caller just made
/// and will repeat: one PAUSE, or a spin jump over up to `max_pauses − 1` loads (see the module
/// docs). Returns the PAUSEs charged (at least one); the caller's next load follows at once.
pub fn spin_pauses(addr: usize, max_pauses: u64) -> u64 {
    let line = addr >> LINE_SHIFT;
    let jumped = with_machine(|m| m.is_some_and(|m| m.plan_spin(line, max_pauses)));
    if !jumped {
        charge_plain(Plain::Pause);
        return 1;
    }
    at_turn(|m| m.finish_spin()).unwrap_or(1)
}

impl Machine {
    /// Starts a spin jump of the running task on `line` if one may be taken; returns whether.
    fn plan_spin(&mut self, line: usize, max_pauses: u64) -> bool {
        if !self.spin_jumps || max_pauses < 2 || self.trace.is_some() || self.line_profile.is_some()
        {
            return false;
        }
        let id = self.current;
        let t = &self.tasks[id];
        if t.supervisor || t.core.is_none() || !t.sb.is_empty() || t.spin.is_some() {
            return false;
        }
        let a = self.agent();
        let Some(excl) = self.coherence().spin_holds(line, a) else {
            return false;
        };
        let Some(balance) = self.os().spin_quiet(self, id) else {
            return false;
        };
        self.spin_epoch += 1;
        let jump = SpinJump {
            line,
            epoch: self.spin_epoch,
            c0: self.tasks[id].clock,
            pause: self.costs[cost::PAUSE],
            hit: self.costs[cost::LOAD_HIT],
            agent: a,
            watch: self.coherence().watch_of(line),
        };
        if jump.pause + jump.hit == 0 {
            return false;
        }
        // Skip n loads: the (n + 1)-th is the real one, at the latest at the first load at or
        // after the next balance.
        let mut n = (max_pauses - 1).min(MAX_SKIP);
        if balance != u64::MAX {
            n = n.min(jump.first_at(balance) - 1);
        }
        // A buffered store to the line whose booking was granted (or is due) becomes visible at
        // its drain, which the first load at or after it performs.
        let drain = self.next_drain_on(line);
        if drain != u64::MAX {
            n = n.min(jump.first_at(drain) - 1);
        }
        // An exclusive transfer booked already: the loads hit until it starts.
        if excl != u64::MAX {
            n = n.min(jump.first_at(excl) - 1);
        }
        if n == 0 {
            return false;
        }
        let epoch = jump.epoch;
        self.tasks[id].spin = Some(jump);
        self.tasks[id].clock = jump.load_at(n + 1);
        self.with_coherence(|c, _| c.add_spinner(line, id, epoch));
        true
    }

    /// Ends the running task's spin jump at its clock (the time of its next real load): charges
    /// and counts the skipped loads and PAUSEs; returns the PAUSEs.
    fn finish_spin(&mut self) -> u64 {
        let id = self.current;
        let Some(j) = self.tasks[id].spin.take() else {
            return 1;
        };
        let n = j.skipped(self.tasks[id].clock);
        debug_assert_eq!(
            j.load_at(n + 1),
            self.tasks[id].clock,
            "lwsim: spin jump's end"
        );
        let c = &mut self.counters[j.agent];
        c.ops += n;
        c.hits += n;
        c.pauses += n + 1;
        c.busy_ps += n * j.hit + (n + 1) * j.pause;
        if j.watch != 0 {
            let w = &mut self.watched[j.watch as usize - 1];
            w.ops += n;
            w.loads += n;
            w.hits += n;
        }
        n + 1
    }

    /// An exclusive transfer of `line` starting at `start`, booked by the event of key `waker`:
    /// task `task`'s jump `epoch` on it ends at its first load the booking makes miss.
    pub(super) fn spin_wake(
        &mut self,
        task: usize,
        epoch: u64,
        line: usize,
        start: u64,
        waker: (u64, u64, usize),
    ) {
        let Some(j) = self.tasks[task].spin else {
            return;
        };
        if j.epoch != epoch || j.line != line {
            return;
        }
        let at = j.load_at(j.first_after(start, waker, self.tasks[task].prio, task));
        self.resume_spinner(task, at);
    }

    /// Task `arrived` (key `key`) joined the run queue of the core thread `running` runs on: a
    /// jump of `running` ends at its first load after the arrival.
    pub(super) fn spin_interrupt(&mut self, running: usize, key: (u64, u64, usize)) {
        let Some(j) = self.tasks[running].spin else {
            return;
        };
        let at = j.load_at(j.first_after(0, key, self.tasks[running].prio, running));
        self.resume_spinner(running, at);
    }

    fn resume_spinner(&mut self, task: usize, at: u64) {
        if at < self.tasks[task].clock {
            self.tasks[task].clock = at;
            self.lower_horizon(task);
        }
    }

    /// The loads of jumps under way that precede the reading task's current event (key
    /// `reader`), per task: `(agent, watched line, loads, their PAUSEs and time)`.
    pub(super) fn spins_elapsed(&self) -> Vec<(usize, u32, u64, u64, u64)> {
        let reader = self.key(self.current);
        let mut out = Vec::new();
        for (id, t) in self.tasks.iter().enumerate() {
            let Some(j) = t.spin else { continue };
            if id == self.current {
                continue;
            }
            let planned = j.skipped(t.clock);
            // Loads 1..=k precede the reader: the largest k with (L_k, prio, id) < reader.
            let mut k = j.first_at(reader.0).saturating_sub(1);
            if k < planned && (j.load_at(k + 1), t.prio, id) < reader {
                k += 1;
            }
            let k = k.min(planned);
            // The loop charges the PAUSE after each load (and the one before the first) at once.
            out.push((j.agent, j.watch, k, k + 1, k * j.hit + (k + 1) * j.pause));
        }
        out
    }
}
