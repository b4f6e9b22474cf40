//! The checks of a torture run: the operation kinds and their tallies, the per-lock checking
//! context (holder counter, multi-word value, group accounting, violations), one worker's state,
//! the protected data with its reader and writer sections, and the [`Target`] interface every
//! lock under torture is driven through.

use crate::rng::{hold_delay, Rng};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;

/// An operation (the first [`N_ATTEMPTS`]) or an outcome of one (the rest).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Shared,
    Exclusive,
    CondShared,
    CondExclusive,
    AowShared,
    AowExclusive,
    VarUpdate,
    VarWait,
    Read,
    Write,
    TryRead,
    TryWrite,
    Group,
    // Outcomes.
    CondFailed,
    AowWaited,
    VarFree,
    VarChanged,
    TryFailed,
    GroupPanicked,
}

pub(crate) const N_KINDS: usize = 19;
pub(crate) const N_ATTEMPTS: usize = 13;
pub(crate) const KINDS: [Kind; N_KINDS] = [
    Kind::Shared,
    Kind::Exclusive,
    Kind::CondShared,
    Kind::CondExclusive,
    Kind::AowShared,
    Kind::AowExclusive,
    Kind::VarUpdate,
    Kind::VarWait,
    Kind::Read,
    Kind::Write,
    Kind::TryRead,
    Kind::TryWrite,
    Kind::Group,
    Kind::CondFailed,
    Kind::AowWaited,
    Kind::VarFree,
    Kind::VarChanged,
    Kind::TryFailed,
    Kind::GroupPanicked,
];
/// A slot's current-operation value while it does none.
pub(crate) const IDLE: u8 = u8::MAX;

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Shared => "shared",
            Kind::Exclusive => "exclusive",
            Kind::CondShared => "cond-shared",
            Kind::CondExclusive => "cond-exclusive",
            Kind::AowShared => "aow-shared",
            Kind::AowExclusive => "aow-exclusive",
            Kind::VarUpdate => "var-update",
            Kind::VarWait => "var-wait",
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::TryRead => "try-read",
            Kind::TryWrite => "try-write",
            Kind::Group => "group",
            Kind::CondFailed => "cond-failed",
            Kind::AowWaited => "aow-waited",
            Kind::VarFree => "var-free",
            Kind::VarChanged => "var-changed",
            Kind::TryFailed => "try-failed",
            Kind::GroupPanicked => "group-panicked",
        }
    }
}

/// The holder counter's exclusive bit; the low bits count shared holders.
pub(crate) const EXCL: u32 = 1 << 31;
/// Words of the multi-word value.
pub(crate) const WORDS: usize = 4;
/// Keys of the CLOG group lock's operations.
pub(crate) const KEYS: usize = 4;
/// Violation messages printed and kept per lock and check.
pub(crate) const KEEP_MESSAGES: usize = 3;

/// The check a violation failed (counted per lock in the summary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Check {
    /// The holder counter: an exclusive holder with company, a shared one beside an exclusive.
    Holders,
    /// The lock's own `is_locked` / `is_locked_exclusive` disagree with the hold.
    Probe,
    /// The multi-word value: torn, changed under a reader, lost updates, counters out of sync.
    Value,
    /// Group operations: wrong result, counter order, panic delivery, accounting.
    Group,
    /// `wait_for_var` answers and the variable's state.
    Var,
    /// The end state: still locked, group list not empty, holders left.
    End,
    /// A worker panicked unexpectedly, or could not be spawned.
    Worker,
}

pub(crate) const N_CHECKS: usize = 7;
pub(crate) const CHECKS: [(Check, &str); N_CHECKS] = [
    (Check::Holders, "holders"),
    (Check::Probe, "probe"),
    (Check::Value, "value"),
    (Check::Group, "group"),
    (Check::Var, "var"),
    (Check::End, "end"),
    (Check::Worker, "worker"),
];

/// What a worker slot is doing, for the stall report.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The worker's wait-record number (`u32::MAX`: none yet).
    pub(crate) proc: AtomicU32,
    /// The operation in progress ([`IDLE`]: none).
    pub(crate) kind: AtomicU8,
}

/// Counters and checks of one lock.
#[derive(Debug)]
pub(crate) struct LockCtx {
    pub(crate) name: &'static str,
    /// Holders by the torture's own count: [`EXCL`] | shared holders.
    pub(crate) holders: AtomicU32,
    /// Completed writes of the multi-word value.
    pub(crate) writes: AtomicU64,
    /// Operations completed so far (for the stall monitor and progress lines).
    pub(crate) progress: AtomicU64,
    /// Workers alive (spawned and not yet joined).
    pub(crate) live: AtomicUsize,
    pub(crate) respawns: AtomicU64,
    /// Per-kind counts, folded in as workers exit.
    pub(crate) tally: [AtomicU64; N_KINDS],
    /// Panics thrown inside group closures.
    pub(crate) injected: AtomicU64,
    /// Injected panics that reached their submitter.
    pub(crate) received: AtomicU64,
    /// Group operations submitted.
    pub(crate) group_submitted: AtomicU64,
    pub(crate) violations: AtomicU64,
    /// Violations per [`Check`].
    pub(crate) by_check: [AtomicU64; N_CHECKS],
    pub(crate) messages: Mutex<Vec<String>>,
    pub(crate) slots: Vec<Slot>,
    /// The lock may take its shared mode exclusively (a lock registered at run time: an
    /// exclusive-only lock such as a ticket lock is a correct reader-writer lock, and lwbench's
    /// checks accept it too), so a shared holder's probe accepts `is_locked_exclusive`.
    pub(crate) shared_may_be_exclusive: bool,
}

impl LockCtx {
    pub(crate) fn new(
        name: &'static str,
        threads: usize,
        shared_may_be_exclusive: bool,
    ) -> LockCtx {
        LockCtx {
            name,
            holders: AtomicU32::new(0),
            writes: AtomicU64::new(0),
            progress: AtomicU64::new(0),
            live: AtomicUsize::new(0),
            respawns: AtomicU64::new(0),
            tally: std::array::from_fn(|_| AtomicU64::new(0)),
            injected: AtomicU64::new(0),
            received: AtomicU64::new(0),
            group_submitted: AtomicU64::new(0),
            violations: AtomicU64::new(0),
            by_check: std::array::from_fn(|_| AtomicU64::new(0)),
            messages: Mutex::new(Vec::new()),
            slots: (0..threads)
                .map(|_| Slot {
                    proc: AtomicU32::new(u32::MAX),
                    kind: AtomicU8::new(IDLE),
                })
                .collect(),
            shared_may_be_exclusive,
        }
    }

    pub(crate) fn violation(&self, check: Check, msg: impl FnOnce() -> String) {
        self.violations.fetch_add(1, Ordering::Relaxed);
        let n = self.by_check[check as usize].fetch_add(1, Ordering::Relaxed);
        if (n as usize) < KEEP_MESSAGES {
            let msg = msg();
            eprintln!("torture: VIOLATION [{}]: {msg}", self.name);
            self.messages
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(msg);
        }
    }

    pub(crate) fn enter_exclusive(&self) {
        let prev = self.holders.fetch_or(EXCL, Ordering::AcqRel);
        if prev != 0 {
            self.violation(Check::Holders, || {
                format!(
                    "exclusive holder entered with other holders: {}",
                    holders_str(prev)
                )
            });
        }
    }

    pub(crate) fn exit_exclusive(&self) {
        let prev = self.holders.fetch_and(!EXCL, Ordering::AcqRel);
        if prev != EXCL {
            self.violation(Check::Holders, || {
                format!(
                    "exclusive holder left with other holders: {}",
                    holders_str(prev)
                )
            });
        }
    }

    pub(crate) fn enter_shared(&self) {
        let prev = self.holders.fetch_add(1, Ordering::AcqRel);
        if prev & EXCL != 0 {
            self.violation(Check::Holders, || {
                format!(
                    "shared holder entered under an exclusive holder: {}",
                    holders_str(prev)
                )
            });
        }
    }

    pub(crate) fn exit_shared(&self) {
        let prev = self.holders.fetch_sub(1, Ordering::AcqRel);
        if prev & EXCL != 0 {
            self.violation(Check::Holders, || {
                format!(
                    "shared holder left under an exclusive holder: {}",
                    holders_str(prev)
                )
            });
        }
    }

    /// The lock's own view must match the hold: `exclusive` = whether we hold it exclusively.
    pub(crate) fn probe(&self, exclusive: bool, locked: bool, locked_exclusive: bool) {
        let mode_ok = locked_exclusive == exclusive || (!exclusive && self.shared_may_be_exclusive);
        if !locked || !mode_ok {
            self.violation(Check::Probe, || {
                format!(
                    "{} holder sees is_locked {locked}, is_locked_exclusive {locked_exclusive}",
                    if exclusive { "exclusive" } else { "shared" }
                )
            });
        }
    }

    pub(crate) fn check_words(&self, w: &[u64; WORDS], who: &str) {
        if w.iter().any(|x| *x != w[0]) {
            self.violation(Check::Value, || {
                format!("{who} found a torn multi-word value {w:?}")
            });
        }
    }

    pub(crate) fn count(&self, k: Kind) -> u64 {
        self.tally[k as usize].load(Ordering::Relaxed)
    }

    pub(crate) fn ops(&self) -> u64 {
        self.tally[..N_ATTEMPTS]
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }

    /// The group checks every group lock makes at the end.
    pub(crate) fn final_group_check(&self, applied: u64, pages: &[u64; KEYS]) {
        let submitted = self.group_submitted.load(Ordering::Relaxed);
        let (injected, received) = (
            self.injected.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
        );
        if injected != received {
            self.violation(Check::Group, || {
                format!("{injected} panics injected but {received} received")
            });
        }
        if applied != submitted - received.min(submitted) {
            self.violation(Check::Group, || {
                format!(
                    "{applied} group operations applied, but {submitted} submitted and \
                     {received} panicked"
                )
            });
        }
        if self.count(Kind::Group) != submitted {
            self.violation(Check::Group, || {
                format!(
                    "{} group operations counted, {submitted} submitted",
                    self.count(Kind::Group)
                )
            });
        }
        if pages.iter().sum::<u64>() != applied {
            self.violation(Check::Group, || {
                format!("per-key counters {pages:?} do not sum to {applied}")
            });
        }
    }

    pub(crate) fn final_words_check(&self, w: &[u64; WORDS]) {
        self.check_words(w, "the final check");
        let writes = self.writes.load(Ordering::Relaxed);
        if w[0] != writes {
            self.violation(Check::Value, || {
                format!("value {} after {writes} writes (lost updates)", w[0])
            });
        }
    }

    pub(crate) fn final_idle_check(&self, locked: bool, group_head: Option<u32>) {
        if locked {
            self.violation(Check::End, || "the lock is still locked at the end".into());
        }
        if let Some(h) = group_head {
            self.violation(Check::End, || {
                format!("the group list is not empty at the end (head {h})")
            });
        }
        let h = self.holders.load(Ordering::Relaxed);
        if h != 0 {
            self.violation(Check::End, || {
                format!("holders at the end: {}", holders_str(h))
            });
        }
    }
}

pub(crate) fn holders_str(h: u32) -> String {
    format!(
        "{} shared{}",
        h & !EXCL,
        if h & EXCL != 0 { " + exclusive" } else { "" }
    )
}

/// The panic payload of injected panics.
#[derive(Debug)]
pub(crate) struct Injected(u64);

/// A planned group operation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GroupPlan {
    pub(crate) id: u64,
    pub(crate) key: u64,
    pub(crate) panic: bool,
    pub(crate) seed: u64,
}

/// What a group operation returns to its submitter.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Echo {
    pub(crate) id: u64,
    pub(crate) key: u64,
    pub(crate) applied: u64,
    pub(crate) page: u64,
}

/// One worker's state.
pub(crate) struct Worker<'a> {
    pub(crate) c: &'a LockCtx,
    pub(crate) rng: Rng,
    pub(crate) tally: [u64; N_KINDS],
    pub(crate) uid: u64,
    pub(crate) seq: u64,
    pub(crate) panic_pct: u8,
    pub(crate) last_applied: u64,
    pub(crate) last_page: [u64; KEYS],
}

impl Worker<'_> {
    pub(crate) fn plan_group(&mut self, keys: u64) -> GroupPlan {
        self.seq += 1;
        let p = GroupPlan {
            id: (self.uid << 32) | self.seq,
            key: self.rng.below(keys),
            panic: self.rng.pct(self.panic_pct),
            seed: self.rng.next(),
        };
        self.c.group_submitted.fetch_add(1, Ordering::Relaxed);
        p
    }

    pub(crate) fn finish_group(&mut self, p: GroupPlan, r: thread::Result<Echo>) {
        let c = self.c;
        match r {
            Ok(e) => {
                if p.panic {
                    c.violation(Check::Group, || {
                        format!("group op {:#x} was to panic but returned", p.id)
                    });
                }
                if e.id != p.id || e.key != p.key {
                    c.violation(Check::Group, || {
                        format!(
                            "group op {:#x} (key {}) got the result of op {:#x} (key {})",
                            p.id, p.key, e.id, e.key
                        )
                    });
                }
                if e.applied <= self.last_applied {
                    c.violation(Check::Group, || {
                        format!(
                            "group counter went from {} to {} for one submitter",
                            self.last_applied, e.applied
                        )
                    });
                }
                self.last_applied = e.applied;
                let k = (e.key as usize) % KEYS;
                if e.page <= self.last_page[k] {
                    c.violation(Check::Group, || {
                        format!(
                            "key {k} counter went from {} to {} for one submitter",
                            self.last_page[k], e.page
                        )
                    });
                }
                self.last_page[k] = e.page;
                let submitted = c.group_submitted.load(Ordering::Relaxed);
                if e.applied > submitted {
                    c.violation(Check::Group, || {
                        format!(
                            "group counter {} beyond the {submitted} operations submitted",
                            e.applied
                        )
                    });
                }
            }
            Err(payload) => match payload.downcast_ref::<Injected>() {
                Some(Injected(id)) if p.panic && *id == p.id => {
                    c.received.fetch_add(1, Ordering::Relaxed);
                    self.tally[Kind::GroupPanicked as usize] += 1;
                }
                Some(Injected(id)) => {
                    let id = *id;
                    c.violation(Check::Group, || {
                        format!(
                            "group op {:#x} (to panic: {}) received the panic of op {id:#x}",
                            p.id, p.panic
                        )
                    });
                }
                None => {
                    let msg = panic_message(&*payload);
                    c.violation(Check::Group, || {
                        format!("group op {:#x} panicked unexpectedly: {msg}", p.id)
                    });
                }
            },
        }
    }
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string payload)".into()
    }
}

/// The data of the guard-based locks: plain words, read and written with volatile accesses so
/// that every check really goes to memory.
#[derive(Debug, Default)]
pub(crate) struct Plain {
    pub(crate) words: [u64; WORDS],
    /// Group operations applied.
    pub(crate) applied: u64,
    /// Group operations applied per key (the CLOG page); they sum to `applied`.
    pub(crate) pages: [u64; KEYS],
}

pub(crate) fn vread(x: &u64) -> u64 {
    // SAFETY: a reference is valid, aligned and initialised for reads.
    unsafe { std::ptr::read_volatile(x) }
}

pub(crate) fn vwrite(x: &mut u64, v: u64) {
    // SAFETY: a mutable reference is valid, aligned and unique for writes.
    unsafe { std::ptr::write_volatile(x, v) }
}

pub(crate) fn plain_words(d: &Plain) -> [u64; WORDS] {
    std::array::from_fn(|i| vread(&d.words[i]))
}

/// A shared holder's check: equal words, unchanged over the hold; the counters consistent.
pub(crate) fn read_plain(c: &LockCtx, rng: &mut Rng, d: &Plain) {
    let a = plain_words(d);
    c.check_words(&a, "a reader");
    hold_delay(rng);
    let applied = vread(&d.applied);
    let pages: [u64; KEYS] = std::array::from_fn(|i| vread(&d.pages[i]));
    if pages.iter().sum::<u64>() != applied {
        c.violation(Check::Value, || {
            format!("a reader found key counters {pages:?} not summing to {applied}")
        });
    }
    hold_delay(rng);
    let b = plain_words(d);
    if a != b {
        c.violation(Check::Value, || {
            format!("a writer overlapped a reader: {a:?} then {b:?}")
        });
    }
}

/// An exclusive holder's write: check the words, then bump them one at a time with delays.
pub(crate) fn write_plain(c: &LockCtx, rng: &mut Rng, d: &mut Plain) {
    let a = plain_words(d);
    c.check_words(&a, "a writer");
    let v = a[0].wrapping_add(1);
    for w in d.words.iter_mut() {
        vwrite(w, v);
        hold_delay(rng);
    }
    c.writes.fetch_add(1, Ordering::Relaxed);
}

/// A group operation's closure. Panics (before touching anything) if planned to.
pub(crate) fn group_body(c: &LockCtx, held_exclusive: bool, d: &mut Plain, p: GroupPlan) -> Echo {
    if p.panic {
        c.injected.fetch_add(1, Ordering::Relaxed);
        std::panic::panic_any(Injected(p.id));
    }
    c.enter_exclusive();
    if !held_exclusive {
        c.violation(Check::Probe, || {
            format!("group op {:#x} runs without the exclusive lock", p.id)
        });
    }
    let mut rng = Rng::new(p.seed);
    write_plain(c, &mut rng, d);
    let k = (p.key as usize) % KEYS;
    d.applied += 1;
    d.pages[k] += 1;
    let e = Echo {
        id: p.id,
        key: p.key,
        applied: d.applied,
        page: d.pages[k],
    };
    c.exit_exclusive();
    e
}

/// One lock under torture.
pub(crate) trait Target: Send + Sync {
    /// The operations it supports.
    fn kinds(&self) -> Vec<Kind>;
    /// Runs one operation `k` (one of `kinds`).
    fn op(&self, k: Kind, w: &mut Worker<'_>);
    /// The end-of-run checks (all workers gone).
    fn final_check(&self, c: &LockCtx);
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        for (i, n) in self.tally.iter().enumerate() {
            if *n != 0 {
                self.c.tally[i].fetch_add(*n, Ordering::Relaxed);
            }
        }
    }
}
