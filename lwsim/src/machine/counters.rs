//! The counters: per simulated core ([`CoreCounters`]) and per watched line ([`LineCounters`]),
//! and what a run reports ([`Report`]). Data only: `counting.rs` counts into them and reads them.

/// Counters of one simulated core (hardware thread) or of the supervisor.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoreCounters {
    /// Virtual time this core spent running threads (ps), charged per operation when the
    /// operation is charged (context switches and idle-state exits included).
    pub busy_ps: u64,
    /// Virtual time this core had no thread on it (ps), up to the reader's clock: filled by
    /// [`totals`](crate::totals) (up to the calling task's clock) and by the [`Report`] (up to `end_ps`), 0 in
    /// the counters a thread charges. See the module docs, *OS*, "CPU busy and idle".
    pub idle_ps: u64,
    /// Memory operations (atomics and touches).
    pub ops: u64,
    /// Operations served from the local cache.
    pub hits: u64,
    /// Loads of a line Modified at another core.
    pub load_from_modified: u64,
    /// Loads of a line Shared by other cores.
    pub load_from_shared: u64,
    /// Stores/RMWs taking a line Modified at another core.
    pub rfo_from_modified: u64,
    /// Stores/RMWs invalidating sharers.
    pub invalidations: u64,
    /// Sharer copies invalidated by those.
    pub sharers_invalidated: u64,
    /// First touches of a line (from memory).
    pub fills: u64,
    /// Time spent waiting for a line busy with another transfer (ps).
    pub line_wait_ps: u64,
    /// PAUSE hints.
    pub pauses: u64,
    /// Futex waits that slept.
    pub futex_sleeps: u64,
    /// Threads woken by this core's FUTEX_WAKE calls.
    pub futex_wakes: u64,
    /// Timed sleeps.
    pub sleeps: u64,
    /// `sched_yield` calls.
    pub yields: u64,
    /// Threads preempted at the end of their slice on this core.
    pub preemptions: u64,
    /// Dispatches of a queued thread onto this core (each pays `context_switch`): a thread
    /// woken onto an idle core, or one that blocks with nothing queued, is not dispatched.
    /// Before the Linux-style count below this counter was named `context_switches`.
    pub dispatches: u64,
    /// Voluntary context switches, as Linux's `nvcsw` counts them: a thread left this core
    /// because it blocked (a FUTEX_WAIT that slept, a timed sleep, an idle wait), whether
    /// another thread or the idle task took the core.
    pub voluntary_switches: u64,
    /// Involuntary context switches, as Linux's `nivcsw` counts them: a thread left this core
    /// still runnable (preempted at its slice's end or by a wakeup, or a `sched_yield` that
    /// ran another thread). A preemption or yield after which the same thread runs on is none.
    pub involuntary_switches: u64,
    /// Queued threads this core pulled from a busier run queue in a periodic balance.
    pub balance_pulls: u64,
}

impl CoreCounters {
    /// Line transfers of every kind (misses).
    pub fn transfers(&self) -> u64 {
        self.load_from_modified
            + self.load_from_shared
            + self.rfo_from_modified
            + self.invalidations
            + self.fills
    }
    pub(super) fn add(&mut self, o: &CoreCounters) {
        self.busy_ps += o.busy_ps;
        self.idle_ps += o.idle_ps;
        self.ops += o.ops;
        self.hits += o.hits;
        self.load_from_modified += o.load_from_modified;
        self.load_from_shared += o.load_from_shared;
        self.rfo_from_modified += o.rfo_from_modified;
        self.invalidations += o.invalidations;
        self.sharers_invalidated += o.sharers_invalidated;
        self.fills += o.fills;
        self.line_wait_ps += o.line_wait_ps;
        self.pauses += o.pauses;
        self.futex_sleeps += o.futex_sleeps;
        self.futex_wakes += o.futex_wakes;
        self.sleeps += o.sleeps;
        self.yields += o.yields;
        self.preemptions += o.preemptions;
        self.balance_pulls += o.balance_pulls;
        self.dispatches += o.dispatches;
        self.voluntary_switches += o.voluntary_switches;
        self.involuntary_switches += o.involuntary_switches;
    }
    /// Context switches as Linux counts them (`nvcsw + nivcsw`, what `getrusage` and perf's
    /// `context-switches` event report): every time a thread left its core, voluntarily or not.
    pub fn context_switches(&self) -> u64 {
        self.voluntary_switches + self.involuntary_switches
    }
}

/// Counters of one watched line (a lock word, see [`watch`](crate::watch)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCounters {
    /// The name given to [`watch`](crate::watch).
    pub name: String,
    /// Accesses to the line.
    pub ops: u64,
    /// Loads, stores, RMWs among them.
    pub loads: u64,
    /// Plain stores.
    pub stores: u64,
    /// RMWs.
    pub rmws: u64,
    /// Accesses that hit.
    pub hits: u64,
    /// Transfers by kind.
    pub load_from_modified: u64,
    /// See [`CoreCounters::load_from_shared`].
    pub load_from_shared: u64,
    /// See [`CoreCounters::rfo_from_modified`].
    pub rfo_from_modified: u64,
    /// See [`CoreCounters::invalidations`].
    pub invalidations: u64,
    /// See [`CoreCounters::fills`].
    pub fills: u64,
    /// Time requests waited for the line (ps).
    pub wait_ps: u64,
}

impl LineCounters {
    /// Line transfers of every kind.
    pub fn transfers(&self) -> u64 {
        self.load_from_modified
            + self.load_from_shared
            + self.rfo_from_modified
            + self.invalidations
            + self.fills
    }
}

/// What a run measured. Everything but `real` is a function of (program, profile, cores, seed).
#[derive(Clone, Debug)]
pub struct Report {
    /// Profile name.
    pub profile: String,
    /// Simulated cores (hardware threads) in use.
    pub cores: usize,
    /// Simulated threads that ran.
    pub threads: usize,
    /// The largest virtual clock a simulated thread reached when it exited (ps): the run's
    /// makespan (the supervisor's clock is not included).
    pub end_ps: u64,
    /// Counters per core.
    pub per_core: Vec<CoreCounters>,
    /// The supervisor's (main task's) counters.
    pub supervisor: CoreCounters,
    /// Watched lines.
    pub lines: Vec<LineCounters>,
    /// Scheduler decisions (the executor's steps).
    pub steps: u64,
    /// Real time the run took.
    pub real: std::time::Duration,
}

impl Report {
    /// The per-core counters summed.
    pub fn total(&self) -> CoreCounters {
        let mut t = CoreCounters::default();
        for c in &self.per_core {
            t.add(c);
        }
        t
    }
    /// A watched line by name.
    pub fn line(&self, name: &str) -> Option<&LineCounters> {
        self.lines.iter().find(|l| l.name == name)
    }
    /// Simulated memory operations per real second.
    pub fn events_per_sec(&self) -> f64 {
        let t = self.total();
        (t.ops + self.supervisor.ops) as f64 / self.real.as_secs_f64().max(1e-9)
    }
    /// The deterministic part, for comparing runs.
    pub fn fingerprint(&self) -> (u64, Vec<CoreCounters>, Vec<LineCounters>, u64) {
        (
            self.end_ps,
            self.per_core.clone(),
            self.lines.clone(),
            self.steps,
        )
    }
    /// A few lines for humans.
    pub fn summary(&self) -> String {
        let t = self.total();
        format!(
            "{} cores={} threads={} virtual={:.3}ms ops={} transfers={} (lfm {} lfs {} rfo {} inv {} fill {}) line_wait={:.3}ms futex sleeps={} wakes={} sleeps={} preemptions={} switches={} (voluntary {} involuntary {}) dispatches={} | real {:.2}s, {:.2} M events/s, {} steps",
            self.profile,
            self.cores,
            self.threads,
            self.end_ps as f64 / 1e9,
            t.ops,
            t.transfers(),
            t.load_from_modified,
            t.load_from_shared,
            t.rfo_from_modified,
            t.invalidations,
            t.fills,
            t.line_wait_ps as f64 / 1e9,
            t.futex_sleeps,
            t.futex_wakes,
            t.sleeps,
            t.preemptions,
            t.context_switches(),
            t.voluntary_switches,
            t.involuntary_switches,
            t.dispatches,
            self.real.as_secs_f64(),
            self.events_per_sec() / 1e6,
            self.steps
        )
    }
}

impl CoreCounters {
    /// `self − earlier`, counter by counter (saturating): the counts of a window.
    pub fn since(&self, earlier: &CoreCounters) -> CoreCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        CoreCounters {
            busy_ps: d(self.busy_ps, earlier.busy_ps),
            idle_ps: d(self.idle_ps, earlier.idle_ps),
            ops: d(self.ops, earlier.ops),
            hits: d(self.hits, earlier.hits),
            load_from_modified: d(self.load_from_modified, earlier.load_from_modified),
            load_from_shared: d(self.load_from_shared, earlier.load_from_shared),
            rfo_from_modified: d(self.rfo_from_modified, earlier.rfo_from_modified),
            invalidations: d(self.invalidations, earlier.invalidations),
            sharers_invalidated: d(self.sharers_invalidated, earlier.sharers_invalidated),
            fills: d(self.fills, earlier.fills),
            line_wait_ps: d(self.line_wait_ps, earlier.line_wait_ps),
            pauses: d(self.pauses, earlier.pauses),
            futex_sleeps: d(self.futex_sleeps, earlier.futex_sleeps),
            futex_wakes: d(self.futex_wakes, earlier.futex_wakes),
            sleeps: d(self.sleeps, earlier.sleeps),
            yields: d(self.yields, earlier.yields),
            preemptions: d(self.preemptions, earlier.preemptions),
            balance_pulls: d(self.balance_pulls, earlier.balance_pulls),
            dispatches: d(self.dispatches, earlier.dispatches),
            voluntary_switches: d(self.voluntary_switches, earlier.voluntary_switches),
            involuntary_switches: d(self.involuntary_switches, earlier.involuntary_switches),
        }
    }
}

impl LineCounters {
    /// `self − earlier`, counter by counter (saturating): the counts of a window.
    pub fn since(&self, earlier: &LineCounters) -> LineCounters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        LineCounters {
            name: self.name.clone(),
            ops: d(self.ops, earlier.ops),
            loads: d(self.loads, earlier.loads),
            stores: d(self.stores, earlier.stores),
            rmws: d(self.rmws, earlier.rmws),
            hits: d(self.hits, earlier.hits),
            load_from_modified: d(self.load_from_modified, earlier.load_from_modified),
            load_from_shared: d(self.load_from_shared, earlier.load_from_shared),
            rfo_from_modified: d(self.rfo_from_modified, earlier.rfo_from_modified),
            invalidations: d(self.invalidations, earlier.invalidations),
            fills: d(self.fills, earlier.fills),
            wait_ps: d(self.wait_ps, earlier.wait_ps),
        }
    }
}
