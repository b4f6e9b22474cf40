//! The torture targets of the plain locks, and how a registry entry picks its target: a raw
//! LWLock through the raw trait (with the variable operations where the lock has them), a
//! drop-in `lock_api` lock through its guards, any lock family through `BenchLock`, and the
//! group locks (`crate::group`).

use crate::checks::{
    group_body, plain_words, read_plain, write_plain, Check, Kind, LockCtx, Plain, Target, Worker,
    KEYS, WORDS,
};
use crate::config::Broken;
use crate::group::GroupTarget;
use crate::rng::hold_delay;
use lwharness::locks::{BenchLock, LockFamily, TortureVisitor};
use lwharness::registry::{LockKind, Program, UserLockId, UserTortureVisitor};
use lwlock::{AcquireOrWait, Mode, RawLwLock, RawLwLockVar, Tranche, VarWait};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

/// The variable operations of a raw lock (`LWLockWaitForVar`, `LWLockUpdateVar`,
/// `LWLockReleaseClearVar`), where it has them: [`WithVars`] for a `RawLwLockVar`, [`NoVars`]
/// otherwise (the registry entry chooses, `TortureVisitor::raw_var` or `raw`).
pub(crate) trait VarOps<L>: Send + Sync + 'static {
    /// Whether the lock has them.
    const ON: bool;
    /// `update_var`.
    ///
    /// # Safety
    /// The caller holds `lock` exclusively.
    unsafe fn update_var(lock: &L, var: &lwlock::sync::AtomicU64, val: u64);
    /// `release_clear_var`.
    ///
    /// # Safety
    /// The caller holds `lock` exclusively.
    unsafe fn release_clear_var(lock: &L, var: &lwlock::sync::AtomicU64, val: u64);
    /// `wait_for_var`.
    fn wait_for_var(lock: &L, var: &lwlock::sync::AtomicU64, oldval: u64) -> VarWait;
}

/// A raw lock without variable operations.
pub(crate) struct NoVars;
/// A raw lock with the variable operations.
pub(crate) struct WithVars;

impl<L> VarOps<L> for NoVars {
    const ON: bool = false;
    unsafe fn update_var(_: &L, _: &lwlock::sync::AtomicU64, _: u64) {
        unreachable!("var ops on a lock without them")
    }
    unsafe fn release_clear_var(_: &L, _: &lwlock::sync::AtomicU64, _: u64) {
        unreachable!("var ops on a lock without them")
    }
    fn wait_for_var(_: &L, _: &lwlock::sync::AtomicU64, _: u64) -> VarWait {
        unreachable!("var ops on a lock without them")
    }
}

impl<L: RawLwLockVar> VarOps<L> for WithVars {
    const ON: bool = true;
    unsafe fn update_var(lock: &L, var: &lwlock::sync::AtomicU64, val: u64) {
        // SAFETY: the caller holds `lock` exclusively.
        unsafe { lock.update_var(var, val) }
    }
    unsafe fn release_clear_var(lock: &L, var: &lwlock::sync::AtomicU64, val: u64) {
        // SAFETY: the caller holds `lock` exclusively.
        unsafe { lock.release_clear_var(var, val) }
    }
    fn wait_for_var(lock: &L, var: &lwlock::sync::AtomicU64, oldval: u64) -> VarWait {
        lock.wait_for_var(var, oldval)
    }
}

/// Tag of the values holders store into the variable (`VAR_TAG | sequence number`).
pub(crate) const VAR_TAG: u64 = 0x7a7a << 48;
pub(crate) const VAR_TAG_MASK: u64 = 0xffff << 48;

/// A raw lock through the trait, with atomic data (so that a deliberately broken lock races
/// detectably instead of causing undefined behaviour).
pub(crate) struct RawTarget<L, V> {
    pub(crate) lock: L,
    pub(crate) words: [AtomicU64; WORDS],
    /// The progress variable of the `*_var` operations; 0 when no holder set it (the shim's
    /// atomic: the LWLock variable API takes `lwlock::sync`'s type, which is the simulator's in
    /// a `--cfg lwsim` build).
    pub(crate) var: lwlock::sync::AtomicU64,
    /// Sequence numbers handed out for `var` values.
    pub(crate) var_seq: AtomicU64,
    pub(crate) broken: Option<Broken>,
    /// Exclusive releases so far (for `Broken::LeakExclusive`).
    pub(crate) x_releases: AtomicU64,
    pub(crate) _vars: std::marker::PhantomData<fn() -> V>,
}

impl<L: RawLwLock + 'static, V: VarOps<L>> RawTarget<L, V> {
    pub(crate) fn new(tranche: Tranche, broken: Option<Broken>) -> Self {
        RawTarget {
            lock: L::with_tranche(tranche),
            words: std::array::from_fn(|_| AtomicU64::new(0)),
            var: lwlock::sync::AtomicU64::new(0),
            var_seq: AtomicU64::new(0),
            broken,
            x_releases: AtomicU64::new(0),
            _vars: std::marker::PhantomData,
        }
    }

    /// The mode really taken for `mode` (`None`: nothing), after the deliberate breakage.
    pub(crate) fn real(&self, mode: Mode) -> Option<Mode> {
        match (self.broken, mode) {
            (Some(Broken::SharedTakesNothing), Mode::Shared) => None,
            (Some(Broken::ExclusiveTakesShared), Mode::Exclusive) => Some(Mode::Shared),
            _ => Some(mode),
        }
    }

    pub(crate) fn acquire(&self, mode: Mode) {
        if let Some(m) = self.real(mode) {
            self.lock.acquire(m);
        }
    }

    pub(crate) fn conditional_acquire(&self, mode: Mode) -> bool {
        match self.real(mode) {
            Some(m) => self.lock.conditional_acquire(m),
            None => true,
        }
    }

    pub(crate) fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        match self.real(mode) {
            Some(m) => self.lock.acquire_or_wait(m),
            None => AcquireOrWait::Acquired,
        }
    }

    /// Releases what `acquire(mode)` (or a successful conditional acquire) took.
    ///
    /// # Safety
    /// The caller holds what `acquire(mode)` took and has not released it.
    pub(crate) unsafe fn release(&self, mode: Mode) {
        if mode == Mode::Exclusive
            && self.broken == Some(Broken::LeakExclusive)
            && self.x_releases.fetch_add(1, Ordering::Relaxed) == 100
        {
            return; // deliberately never released: the lock's threads stall
        }
        if let Some(m) = self.real(mode) {
            // SAFETY: the caller holds `real(mode)`, which is what `acquire(mode)` took.
            unsafe { self.lock.release(m) };
        }
    }

    pub(crate) fn load_words(&self) -> [u64; WORDS] {
        std::array::from_fn(|i| self.words[i].load(Ordering::Relaxed))
    }

    pub(crate) fn shared_section(&self, w: &mut Worker<'_>) {
        let c = w.c;
        c.enter_shared();
        c.probe(
            false,
            self.lock.is_locked(),
            self.lock.is_locked_exclusive(),
        );
        let a = self.load_words();
        c.check_words(&a, "a reader");
        hold_delay(&mut w.rng);
        hold_delay(&mut w.rng);
        let b = self.load_words();
        if a != b {
            c.violation(Check::Value, || {
                format!("a writer overlapped a reader: {a:?} then {b:?}")
            });
        }
        c.exit_shared();
    }

    /// An exclusive section; with `var`, it also publishes progress through `update_var`.
    pub(crate) fn exclusive_section(&self, w: &mut Worker<'_>, var: bool) {
        let c = w.c;
        c.enter_exclusive();
        c.probe(true, self.lock.is_locked(), self.lock.is_locked_exclusive());
        let v = self.var.load(Ordering::Relaxed);
        if v != 0 {
            c.violation(Check::Var, || {
                format!("an exclusive holder found the variable set ({v:#x})")
            });
        }
        let a = self.load_words();
        c.check_words(&a, "a writer");
        let next = a[0].wrapping_add(1);
        let mut updated = false;
        for (i, word) in self.words.iter().enumerate() {
            word.store(next, Ordering::Relaxed);
            hold_delay(&mut w.rng);
            if var && ((i == WORDS - 1 && !updated) || w.rng.below(2) == 0) {
                let val = VAR_TAG | (self.var_seq.fetch_add(1, Ordering::Relaxed) + 1);
                // SAFETY: `exclusive_section` with `var` runs under the real exclusive lock
                // (the variable operations are never run on a broken lock).
                unsafe { V::update_var(&self.lock, &self.var, val) };
                updated = true;
            }
        }
        c.writes.fetch_add(1, Ordering::Relaxed);
        c.exit_exclusive();
    }

    /// Whether `v` is a value some holder stored into the variable (or the cleared 0).
    ///
    /// A holder takes the sequence number before it stores the value with `update_var` (AcqRel),
    /// and a `Changed(v)` answer synchronises with that store, so the Relaxed load of `var_seq`
    /// here sees at least `v`'s sequence number.
    pub(crate) fn var_value_valid(&self, v: u64) -> bool {
        v == 0
            || (v & VAR_TAG_MASK == VAR_TAG && {
                let seq = v & !VAR_TAG_MASK;
                seq >= 1 && seq <= self.var_seq.load(Ordering::Relaxed)
            })
    }
}

impl<L: RawLwLock + 'static, V: VarOps<L>> Target for RawTarget<L, V> {
    fn kinds(&self) -> Vec<Kind> {
        let mut k = vec![
            Kind::Shared,
            Kind::Exclusive,
            Kind::CondShared,
            Kind::CondExclusive,
            Kind::AowShared,
            Kind::AowExclusive,
        ];
        if V::ON && self.broken.is_none() {
            k.extend([Kind::VarUpdate, Kind::VarWait]);
        }
        k
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        match k {
            Kind::Shared => {
                self.acquire(Mode::Shared);
                self.shared_section(w);
                // SAFETY: acquired shared above.
                unsafe { self.release(Mode::Shared) };
            }
            Kind::Exclusive => {
                self.acquire(Mode::Exclusive);
                self.exclusive_section(w, false);
                // SAFETY: acquired exclusively above.
                unsafe { self.release(Mode::Exclusive) };
            }
            Kind::CondShared | Kind::CondExclusive => {
                let mode = if k == Kind::CondShared {
                    Mode::Shared
                } else {
                    Mode::Exclusive
                };
                if self.conditional_acquire(mode) {
                    match mode {
                        Mode::Shared => self.shared_section(w),
                        Mode::Exclusive => self.exclusive_section(w, false),
                    }
                    // SAFETY: the conditional acquire in `mode` succeeded.
                    unsafe { self.release(mode) };
                } else {
                    w.tally[Kind::CondFailed as usize] += 1;
                }
            }
            Kind::AowShared | Kind::AowExclusive => {
                let mode = if k == Kind::AowShared {
                    Mode::Shared
                } else {
                    Mode::Exclusive
                };
                match self.acquire_or_wait(mode) {
                    AcquireOrWait::Acquired => {
                        match mode {
                            Mode::Shared => self.shared_section(w),
                            Mode::Exclusive => self.exclusive_section(w, false),
                        }
                        // SAFETY: `Acquired`: the lock is held in `mode`.
                        unsafe { self.release(mode) };
                    }
                    AcquireOrWait::Waited => w.tally[Kind::AowWaited as usize] += 1,
                }
            }
            Kind::VarUpdate => {
                self.lock.acquire(Mode::Exclusive);
                self.exclusive_section(w, true);
                // SAFETY: acquired exclusively above (the real lock: never broken here).
                unsafe { V::release_clear_var(&self.lock, &self.var, 0) };
            }
            Kind::VarWait => {
                let cur = self.var.load(Ordering::Relaxed);
                let oldval = match w.rng.below(3) {
                    0 => 0,
                    _ => cur,
                };
                match V::wait_for_var(&self.lock, &self.var, oldval) {
                    VarWait::Free => w.tally[Kind::VarFree as usize] += 1,
                    VarWait::Changed(v) => {
                        w.tally[Kind::VarChanged as usize] += 1;
                        if v == oldval {
                            w.c.violation(Check::Var, || {
                                format!("wait_for_var returned Changed({v:#x}) for the old value")
                            });
                        }
                        if !self.var_value_valid(v) {
                            w.c.violation(Check::Var, || {
                                format!("wait_for_var returned Changed({v:#x}), a value no holder stored")
                            });
                        }
                    }
                }
            }
            _ => unreachable!("{k:?} on a raw lock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.is_locked(), None);
        c.final_words_check(&self.load_words());
        let v = self.var.load(Ordering::Relaxed);
        if v != 0 {
            c.violation(Check::End, || {
                format!("the variable is still set at the end ({v:#x})")
            });
        }
    }
}

/// The drop-in `lock_api` reader-writer locks.
pub(crate) struct DropInTarget<R: lwlock::lock_api::RawRwLock> {
    pub(crate) lock: lwlock::lock_api::RwLock<R, Plain>,
}

impl<R: lwlock::lock_api::RawRwLock + Send + Sync> DropInTarget<R> {
    pub(crate) fn read_section(&self, w: &mut Worker<'_>, g: &Plain) {
        w.c.enter_shared();
        w.c.probe(
            false,
            self.lock.is_locked(),
            self.lock.is_locked_exclusive(),
        );
        read_plain(w.c, &mut w.rng, g);
        w.c.exit_shared();
    }

    pub(crate) fn write_section(&self, w: &mut Worker<'_>, g: &mut Plain) {
        w.c.enter_exclusive();
        w.c.probe(true, self.lock.is_locked(), self.lock.is_locked_exclusive());
        write_plain(w.c, &mut w.rng, g);
        w.c.exit_exclusive();
    }
}

impl<R: lwlock::lock_api::RawRwLock + Send + Sync> Target for DropInTarget<R> {
    fn kinds(&self) -> Vec<Kind> {
        vec![Kind::Read, Kind::Write, Kind::TryRead, Kind::TryWrite]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        match k {
            Kind::Read => {
                let g = self.lock.read();
                self.read_section(w, &g);
            }
            Kind::Write => {
                let mut g = self.lock.write();
                self.write_section(w, &mut g);
            }
            Kind::TryRead => match self.lock.try_read() {
                Some(g) => self.read_section(w, &g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            Kind::TryWrite => match self.lock.try_write() {
                Some(mut g) => self.write_section(w, &mut g),
                None => w.tally[Kind::TryFailed as usize] += 1,
            },
            _ => unreachable!("{k:?} on a drop-in lock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.is_locked(), None);
        match self.lock.try_write() {
            Some(g) => c.final_words_check(&plain_words(&g)),
            None => c.violation(Check::End, || "try_write fails on the idle lock".into()),
        }
    }
}

/// Any lock family through [`BenchLock`] only (the default target of a registry entry): shared
/// and exclusive sections and keyed group operations, probed with `BenchLock::held` where the
/// lock can tell.
pub(crate) struct ClosureTarget<F: LockFamily> {
    pub(crate) lock: F::Lock<Plain>,
}

impl<F: LockFamily> ClosureTarget<F> {
    pub(crate) fn probe(&self, c: &LockCtx, exclusive: bool) {
        if let Some((locked, locked_exclusive)) = self.lock.held() {
            c.probe(exclusive, locked, locked_exclusive);
        }
    }
}

impl<F: LockFamily> Target for ClosureTarget<F> {
    fn kinds(&self) -> Vec<Kind> {
        vec![Kind::Shared, Kind::Exclusive, Kind::Group]
    }

    fn op(&self, k: Kind, w: &mut Worker<'_>) {
        let c = w.c;
        match k {
            Kind::Shared => self.lock.shared(|d| {
                c.enter_shared();
                self.probe(c, false);
                read_plain(c, &mut w.rng, d);
                c.exit_shared();
            }),
            Kind::Exclusive => self.lock.exclusive(|d| {
                c.enter_exclusive();
                self.probe(c, true);
                write_plain(c, &mut w.rng, d);
                c.exit_exclusive();
            }),
            Kind::Group => {
                let p = w.plan_group(KEYS as u64);
                let lock = &self.lock;
                let r = catch_unwind(AssertUnwindSafe(|| {
                    lock.group(p.key, move |d| {
                        let held = lock.held().map_or(true, |(_, x)| x);
                        group_body(c, held, d, p)
                    })
                }));
                w.finish_group(p, r);
            }
            _ => unreachable!("{k:?} on a closure-level lock"),
        }
    }

    fn final_check(&self, c: &LockCtx) {
        c.final_idle_check(self.lock.held().is_some_and(|(l, _)| l), None);
        let (words, applied, pages) = self
            .lock
            .exclusive(|d| (plain_words(d), d.applied, d.pages));
        c.final_words_check(&words);
        c.final_group_check(applied, &pages);
    }
}

/// Builds the target a registry entry chooses (see `TortureVisitor`), over `tranche`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MakeTarget {
    pub(crate) tranche: Tranche,
    /// Deliberate breakage (raw targets only).
    pub(crate) broken: Option<Broken>,
}

impl MakeTarget {
    pub(crate) fn flex_config(
        self,
        policy: flexlock::GroupPolicy,
        max_group: usize,
    ) -> flexlock::FlexConfig {
        flexlock::FlexConfig {
            policy,
            max_group,
            tranche: self.tranche,
        }
    }
}

impl TortureVisitor for MakeTarget {
    type Output = Box<dyn Target>;

    fn closure<F: LockFamily>(self) -> Box<dyn Target> {
        Box::new(ClosureTarget::<F> {
            lock: BenchLock::new(Plain::default(), self.tranche),
        })
    }

    fn raw<L: RawLwLock + 'static>(self) -> Box<dyn Target> {
        Box::new(RawTarget::<L, NoVars>::new(self.tranche, self.broken))
    }

    fn raw_var<L: RawLwLockVar + 'static>(self) -> Box<dyn Target> {
        Box::new(RawTarget::<L, WithVars>::new(self.tranche, self.broken))
    }

    fn drop_in<R: lwlock::lock_api::RawRwLock + Send + Sync + 'static>(
        self,
        new: fn(Tranche) -> R,
    ) -> Box<dyn Target> {
        Box::new(DropInTarget {
            lock: lwlock::lock_api::RwLock::from_raw(new(self.tranche), Plain::default()),
        })
    }

    fn flex<L: RawLwLock + 'static>(
        self,
        policy: flexlock::GroupPolicy,
        max_group: usize,
    ) -> Box<dyn Target> {
        Box::new(GroupTarget::unkeyed(
            flexlock::FlexLock::<L, _>::with_config(
                Plain::default(),
                self.flex_config(policy, max_group),
            ),
        ))
    }

    fn holder_serves<L: RawLwLock + 'static>(self, max_group: usize) -> Box<dyn Target> {
        Box::new(GroupTarget::unkeyed(
            flexlock::HolderServesLock::<L, _>::with_bound(
                Plain::default(),
                max_group,
                self.tranche,
            ),
        ))
    }

    fn clog_group<L: RawLwLock + 'static>(self, max_group: usize) -> Box<dyn Target> {
        Box::new(GroupTarget::keyed(
            flexlock::ClogGroupLock::<L, _>::with_config(
                Plain::default(),
                self.flex_config(flexlock::GroupPolicy::Leader, max_group),
            ),
        ))
    }
}

impl UserTortureVisitor for MakeTarget {
    fn user(self, lock: UserLockId) -> Box<dyn Target> {
        let u = lock.get();
        match u.entry::<Torture>() {
            Some(f) => (f.0)(self),
            None => panic!(
                "lock {} was registered without lwtorture's entry (Lwbench::lock adds it)",
                u.name
            ),
        }
    }
}

/// lwtorture's entry point for a lock registered at run time: its target, instantiated for the
/// lock's family at registration ([`Torture`]).
#[derive(Clone, Copy)]
pub struct TargetFactory(fn(MakeTarget) -> Box<dyn Target>);

impl std::fmt::Debug for TargetFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TargetFactory")
    }
}

/// `lwtorture` as a registry program: `UserLock::new(..).with::<Torture, Family>()` carries the
/// torture target of `Family` (for a raw LWLock, the raw target: both modes, conditional and
/// `acquire_or_wait`), so that `lwtorture` runs a lock registered at run time like a built-in
/// one.
#[derive(Debug)]
pub struct Torture;

fn build<F: LockFamily>(m: MakeTarget) -> Box<dyn Target> {
    F::torture(m)
}

impl Program for Torture {
    type Entry = TargetFactory;
    fn entry<F: LockFamily>() -> TargetFactory {
        TargetFactory(build::<F>)
    }
}

/// The target of registry lock `kind` and its description for the summary.
pub(crate) fn make_target(kind: LockKind, broken: Option<Broken>) -> (Box<dyn Target>, String) {
    let m = MakeTarget {
        tranche: Tranche::register(kind.torture_tranche()),
        broken,
    };
    let desc = format!(
        "{}{}",
        kind.torture_description(),
        broken.map_or(String::new(), |b| format!(" (BROKEN: {})", b.name()))
    );
    (kind.torture(m), desc)
}
