//! A task's state: its clock and tie-break priority (the executor's), its core and virtual
//! runtime (the OS model's), its store buffer's entries and the spin jump it is in. Data only:
//! each model's file works on it.

use std::collections::VecDeque;

/// A task: a simulated thread or the supervisor. The OS model's and the store buffer's per-task
/// state lives here too (`core`, `last_core`, `waker_core`, `vruntime`, `needs_core`; `sb`).
#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub(super) clock: u64,
    pub(super) prio: u64,
    /// Not eligible: asleep on a futex or waiting in a run queue.
    pub(super) parked: bool,
    /// Must take a core before its next operation (new, or back from a sleep or wakeup).
    pub(super) needs_core: bool,
    pub(super) core: Option<u32>,
    pub(super) last_core: Option<u32>,
    /// The core of the thread that woke it (FUTEX_WAKE's caller; for a timed sleep its own
    /// previous core, where the timer fires), until it takes a core: the OS model's wakeup
    /// placement may use it (`model.wake_placement`).
    pub(super) waker_core: Option<u32>,
    /// Not a simulated thread (the main task): no core, no preemption.
    pub(super) supervisor: bool,
    pub(super) exited: bool,
    /// CFS virtual runtime (ps), in the frame of its core's `min_vruntime` (`core`, else
    /// `last_core`); while it runs, banked up to its core's `run_start`.
    pub(super) vruntime: i64,
    /// The store buffer: plain stores issued and not yet visible, oldest first.
    pub(super) sb: VecDeque<SbEntry>,
    /// The `(clock, prio)` under which the task is in the scheduler's `order` (`None`: not
    /// there, as it is parked or absent).
    pub(super) listed: Option<(u64, u64)>,
    /// Not among the executor's runnable tasks at a decision (finished, or blocked in a join):
    /// left out of `order` until a decision lists it again.
    pub(super) absent: bool,
    /// The spin jump the task is in, if any (`spin.rs`).
    pub(super) spin: Option<SpinJump>,
}

/// A plain store in a store buffer: it becomes visible (its value is written, its line's booking
/// granted) at `drain`, in program order.
#[derive(Clone, Copy, Debug)]
pub(super) struct SbEntry {
    pub(super) drain: u64,
    /// The atomic's address and width in bytes (0: a `touch` store, no value).
    pub(super) addr: usize,
    pub(super) width: u8,
    pub(super) value: u64,
    /// The bits the store writes (all ones: the whole atomic). A narrower mask is a sub-word
    /// store (a byte or half-word store into a wider word that others RMW, as the kernel's
    /// qspinlock does): at the drain it replaces only those bits, which must then hold `from`.
    pub(super) mask: u64,
    /// What the masked bits held when the store was issued (checked at the drain).
    pub(super) from: u64,
    /// The line and booking to grant at the drain, if the store missed.
    pub(super) booking: Option<(usize, u64)>,
}

/// A spin jump under way (see `spin.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SpinJump {
    pub(super) line: usize,
    pub(super) epoch: u64,
    /// The clock after the load that began the jump.
    pub(super) c0: u64,
    pub(super) pause: u64,
    pub(super) hit: u64,
    /// Hardware thread (directory slot) and watched-line index, for the counters.
    pub(super) agent: usize,
    pub(super) watch: u32,
}

impl SpinJump {
    /// The time of the `j`-th skipped load (`j ≥ 1`).
    pub(super) fn load_at(&self, j: u64) -> u64 {
        self.c0 + j * self.pause + (j - 1) * self.hit
    }
    /// The first `j ≥ 1` whose load is at or after `t`.
    pub(super) fn first_at(&self, t: u64) -> u64 {
        let step = self.pause + self.hit;
        let base = self.c0 + self.pause; // load_at(1)
        if t <= base {
            1
        } else {
            1 + (t - base).div_ceil(step)
        }
    }
    /// The first `j ≥ 1` whose load is at or after `t` and runs after the event of key `after`
    /// (`(clock, prio, id)`) for a task of tie-break priority `prio` and id `id`.
    pub(super) fn first_after(
        &self,
        t: u64,
        after: (u64, u64, usize),
        prio: u64,
        id: usize,
    ) -> u64 {
        let mut j = self.first_at(t.max(after.0));
        if (self.load_at(j), prio, id) <= after {
            j += 1;
        }
        j
    }
    /// The loads skipped when the thread resumes at `clock` (the time of its next real load).
    pub(super) fn skipped(&self, clock: u64) -> u64 {
        (clock - self.c0 - self.pause) / (self.pause + self.hit)
    }
}
