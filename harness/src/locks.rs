//! The lock registry: every lock the harness can run, behind one closure-level interface.
//!
//! Workloads are written once against [`BenchLock`] (take the lock shared, take it exclusive, or
//! submit an exclusive operation that a group-commit lock may run on another thread's behalf) and
//! instantiated for a [`LockFamily`]. Adding a lock to the harness is one line in the
//! `registry!` invocation below: its name, its family type, whether it is one of the project's
//! own locks, and which workloads it applies to.
//!
//! Adapters:
//! * [`RawLocked`] turns any `lwlock::RawLwLock` (classic, atomic, parking_lot through
//!   `lwlock::ParkingLotLwLock`) into a data-owning lock; its `group` is a plain exclusive
//!   acquire, which is what `ProcArrayEndTransaction` did before PostgreSQL 9.6.
//! * [`StdLocked`] wraps `std::sync::RwLock` (which has no raw interface) at closure level.
//! * The flexlock adapters forward `group` to `FlexLock::group` (leader or last-releaser
//!   policy) and to `ClogGroupLock::update` with the CLOG page as the key.

use lwlock::{Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};
use std::cell::UnsafeCell;

/// Counters a lock can report for one trial (all optional: most need the `stats` feature).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LockCounters {
    /// Semaphore sleeps (`block_count` of LWLOCK_STATS).
    pub blocks: Option<u64>,
    /// Backoff sleeps on a spinlock or wait-list bit (`spin_delay_count`).
    pub spin_delays: Option<u64>,
    /// Exclusive acquisitions of the underlying lock.
    pub excl_acquires: Option<u64>,
    /// Groups run by a group-commit lock.
    pub groups: Option<u64>,
    /// Mean operations per group.
    pub mean_group_size: Option<f64>,
    /// Largest group.
    pub max_group_size: Option<u64>,
}

impl LockCounters {
    /// Sums two locks' counters (a workload with a ProcArray and a CLOG lock reports both).
    pub fn merge(self, o: LockCounters) -> LockCounters {
        fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (Some(x), Some(y)) => Some(x + y),
                (x, None) => x,
                (None, y) => y,
            }
        }
        let groups = add(self.groups, o.groups);
        let mean_group_size = match (self.groups, o.groups) {
            (Some(a), Some(b)) if a + b > 0 => Some(
                (self.mean_group_size.unwrap_or(0.0) * a as f64
                    + o.mean_group_size.unwrap_or(0.0) * b as f64)
                    / (a + b) as f64,
            ),
            _ => self.mean_group_size.or(o.mean_group_size),
        };
        LockCounters {
            blocks: add(self.blocks, o.blocks),
            spin_delays: add(self.spin_delays, o.spin_delays),
            excl_acquires: add(self.excl_acquires, o.excl_acquires),
            groups,
            mean_group_size,
            max_group_size: match (self.max_group_size, o.max_group_size) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            },
        }
    }

    fn from_lwlock(s: Option<lwlock::LockStats>) -> LockCounters {
        match s {
            Some(s) => LockCounters {
                blocks: Some(s.block),
                spin_delays: Some(s.spin_delay),
                excl_acquires: Some(s.ex_acquire),
                ..LockCounters::default()
            },
            None => LockCounters::default(),
        }
    }
}

/// A lock that owns its data, as the harness uses it.
pub trait BenchLock<T: Send + Sync>: Send + Sync + Sized {
    /// A new lock around `data`, reporting its waits under `tranche` where the lock supports it.
    fn new(data: T, tranche: Tranche) -> Self;
    /// Runs `f` with the lock held shared.
    fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R;
    /// Runs `f` with the lock held exclusively.
    fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R;
    /// Runs `f` under the exclusive lock, possibly on another thread as part of a group
    /// (ProcArrayGroupClearXid, the CLOG group update, a FlexLock group). `key` is the CLOG page
    /// for the CLOG group lock; other locks ignore it. Plain locks take the lock exclusively.
    fn group<R: Send>(&self, key: u64, f: impl FnOnce(&mut T) -> R + Send) -> R {
        let _ = key;
        self.exclusive(f)
    }
    /// The lock's counters since it was created.
    fn counters(&self) -> LockCounters {
        LockCounters::default()
    }
    /// What the lock says about itself right now: `(held in any mode, held exclusively)`, or
    /// `None` for a lock that cannot tell (std). The workloads' section checks assert on it
    /// from inside critical sections (see `workload::SectionCheck`).
    fn held(&self) -> Option<(bool, bool)> {
        None
    }
}

/// A family of locks: one lock type for any protected data type.
pub trait LockFamily: 'static {
    /// The lock protecting a `T`.
    type Lock<T: Send + Sync + 'static>: BenchLock<T>;
}

/// Any `RawLwLock` with the data it protects.
pub struct RawLocked<L, T> {
    lock: L,
    data: UnsafeCell<T>,
}

impl<L: std::fmt::Debug, T> std::fmt::Debug for RawLocked<L, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawLocked")
            .field("lock", &self.lock)
            .finish()
    }
}

// SAFETY: `data` is only reached through `shared` (lock held shared: `&T` to any number of
// threads, hence `T: Sync`) and `exclusive` (lock held exclusively: `&mut T` to one thread at a
// time, hence `T: Send`). The RawLwLock contract guarantees that exclusion.
unsafe impl<L: RawLwLock, T: Send + Sync> Sync for RawLocked<L, T> {}
// SAFETY: moving the lock moves the data with it; `T: Send` suffices, the lock is `Send`.
unsafe impl<L: RawLwLock, T: Send> Send for RawLocked<L, T> {}

/// Releases the raw lock when dropped, so a panicking closure leaves the lock free.
struct Release<'a, L: RawLwLock>(&'a L, Mode);

impl<L: RawLwLock> Drop for Release<'_, L> {
    fn drop(&mut self) {
        // SAFETY: a `Release` is only created right after a successful acquire in `self.1` by
        // this thread, and dropped exactly once.
        unsafe { self.0.release(self.1) }
    }
}

impl<L: RawLwLock, T: Send + Sync> BenchLock<T> for RawLocked<L, T> {
    fn new(data: T, tranche: Tranche) -> Self {
        RawLocked {
            lock: L::with_tranche(tranche),
            data: UnsafeCell::new(data),
        }
    }

    #[inline]
    fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        self.lock.acquire(Mode::Shared);
        let _g = Release(&self.lock, Mode::Shared);
        // SAFETY: the lock is held shared until `_g` drops, after `f` returns; exclusive holders
        // (the only writers) are excluded meanwhile.
        f(unsafe { &*self.data.get() })
    }

    #[inline]
    fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        self.lock.acquire(Mode::Exclusive);
        let _g = Release(&self.lock, Mode::Exclusive);
        // SAFETY: the lock is held exclusively until `_g` drops, so this is the only reference.
        f(unsafe { &mut *self.data.get() })
    }

    fn counters(&self) -> LockCounters {
        LockCounters::from_lwlock(self.lock.stats())
    }

    #[inline]
    fn held(&self) -> Option<(bool, bool)> {
        Some((self.lock.is_locked(), self.lock.is_locked_exclusive()))
    }
}

/// A deliberately broken lock, for the harness's self-test only: a shared acquire takes
/// nothing, and an exclusive acquire takes the lock shared. It exists to prove that the
/// workloads' invariant checks fail when a lock does not exclude (`--locks broken` must make
/// every workload exit 1). It is unsound by construction: the protected data races, which is
/// what the checks are for; never use it outside that test.
#[derive(Debug)]
pub struct BrokenLock(RawAtomicLwLock);

// SAFETY: none: this implementation violates the trait's contract on purpose (shared holders
// are not counted, exclusive holders do not exclude each other). It is only selectable as
// `--locks broken`, whose one use is to show that the harness detects a lock like it.
unsafe impl RawLwLock for BrokenLock {
    const NAME: &'static str = "broken";
    fn with_tranche(tranche: Tranche) -> Self {
        BrokenLock(RawAtomicLwLock::with_tranche(tranche))
    }
    fn acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => true,
            Mode::Exclusive => self.0.acquire(Mode::Shared),
        }
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        match mode {
            Mode::Shared => true,
            Mode::Exclusive => self.0.conditional_acquire(Mode::Shared),
        }
    }
    fn acquire_or_wait(&self, mode: Mode) -> lwlock::AcquireOrWait {
        self.acquire(mode);
        lwlock::AcquireOrWait::Acquired
    }
    unsafe fn release(&self, mode: Mode) {
        if mode == Mode::Exclusive {
            // SAFETY: an exclusive "hold" of this lock is a shared hold of the inner one.
            unsafe { self.0.release(Mode::Shared) }
        }
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked_exclusive()
    }
    fn tranche(&self) -> Tranche {
        self.0.tranche()
    }
}

/// `std::sync::RwLock` at closure level (std has no raw lock interface).
#[derive(Debug)]
pub struct StdLocked<T>(std::sync::RwLock<T>);

impl<T: Send + Sync> BenchLock<T> for StdLocked<T> {
    fn new(data: T, _tranche: Tranche) -> Self {
        StdLocked(std::sync::RwLock::new(data))
    }
    #[inline]
    fn shared<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        f(&self.0.read().unwrap_or_else(|e| e.into_inner()))
    }
    #[inline]
    fn exclusive<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.0.write().unwrap_or_else(|e| e.into_inner()))
    }
}

/// The family of [`RawLocked`] over one raw lock type.
#[derive(Debug)]
pub struct RawFamily<L>(std::marker::PhantomData<L>);

impl<L: RawLwLock + 'static> LockFamily for RawFamily<L> {
    type Lock<T: Send + Sync + 'static> = RawLocked<L, T>;
}

/// The family of [`StdLocked`].
#[derive(Debug)]
pub struct StdFamily;

impl LockFamily for StdFamily {
    type Lock<T: Send + Sync + 'static> = StdLocked<T>;
}

// The FlexLock and ClogGroupLock adapters live in `flex.rs`.
pub use crate::flex::{ClogGroupFamily, FlexHolderFamily, FlexLeaderFamily, FlexReleaserFamily};

/// Workloads a lock applies to under `--locks all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Every workload.
    All,
    /// Only the CLOG workloads (`clog`, `pgbench-write`).
    Clog,
    /// Every workload, but only when named (never part of `all` or `default`).
    Explicit,
}

macro_rules! registry {
    ($( $variant:ident => $name:literal, $family:ty, project: $project:literal,
        applies: $applies:ident, $doc:literal; )*) => {
        /// A lock of the registry, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum LockKind {
            $( #[doc = $doc] $variant, )*
            /// A lock registered at run time by a user's own `main` ([`crate::Lwbench::lock`]).
            User(UserLockId),
        }

        impl LockKind {
            /// Every built-in lock, in registry order (the column order of tables and plots);
            /// [`LockKind::every`] adds the locks registered at run time.
            pub const ALL: &'static [LockKind] = &[$(LockKind::$variant),*];

            /// The lock's command-line name.
            pub fn name(self) -> &'static str {
                match self { $(LockKind::$variant => $name,)* LockKind::User(u) => u.get().name }
            }

            /// One-line description.
            pub fn description(self) -> &'static str {
                match self {
                    $(LockKind::$variant => $doc,)*
                    LockKind::User(u) => u.get().description,
                }
            }

            /// Whether this is one of the project's own locks (as opposed to a baseline).
            pub fn is_project(self) -> bool {
                match self { $(LockKind::$variant => $project,)* LockKind::User(_) => false }
            }

            fn applies(self) -> Applies {
                match self { $(LockKind::$variant => Applies::$applies,)* LockKind::User(_) => Applies::All }
            }

            /// Calls `v.visit::<Family>()` with this lock's family (a registered lock's family
            /// is known only to its registration: [`LockVisitor::visit_user`]).
            pub fn dispatch<V: LockVisitor>(self, v: V) -> V::Output {
                match self {
                    $(LockKind::$variant => v.visit::<$family>(self),)*
                    LockKind::User(u) => v.visit_user(u),
                }
            }
        }
    };
}

registry! {
    Classic => "classic", RawFamily<RawClassicLwLock>, project: true, applies: All,
        "spinlock-protected LWLock (PostgreSQL <= 9.4)";
    Atomic => "atomic", RawFamily<RawAtomicLwLock>, project: true, applies: All,
        "atomic-state LWLock (PostgreSQL 9.5+)";
    AtomicHandoff => "atomic-handoff", RawFamily<lwlock::RawHandoffLwLock>, project: true,
        applies: All, "atomic-state LWLock with bounded writer starvation (handoff bit)";
    AtomicTaskFair => "atomic-taskfair", RawFamily<lwlock::RawTaskFairLwLock>, project: true,
        applies: All, "atomic-state LWLock, task-fair (a queued writer blocks new readers)";
    FlexLeader => "flex-leader", FlexLeaderFamily, project: true, applies: All,
        "FlexLock, group run by an elected leader (ProcArrayGroupClearXid)";
    FlexReleaser => "flex-releaser", FlexReleaserFamily, project: true, applies: All,
        "FlexLock, group run by the last releaser (Haas 2011)";
    FlexHolder => "flex-holder", FlexHolderFamily, project: true, applies: All,
        "FlexLock variant: holders serve the queue, waiters wait in the lock (beyond PG)";
    ReaderBias => "reader-bias", RawFamily<lwlock::RawReaderBiasLwLock>, project: true,
        applies: All, "BRAVO reader bias over the atomic LWLock (beyond PG)";
    ClogGroup => "clog-group", ClogGroupFamily, project: true, applies: Clog,
        "CLOG group update keyed by page (TransactionGroupUpdateXidStatus)";
    Std => "std", StdFamily, project: false, applies: All,
        "std::sync::RwLock (baseline)";
    ParkingLot => "parking-lot", RawFamily<lwlock::ParkingLotLwLock>, project: false,
        applies: All, "parking_lot::RwLock (baseline)";
    Broken => "broken", RawFamily<BrokenLock>, project: false, applies: Explicit,
        "self-test: shared takes nothing, exclusive takes shared; the checks must fail";
}

/// Generic code to run for one lock family (see [`LockKind::dispatch`]).
pub trait LockVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the family of `kind`.
    fn visit<F: LockFamily>(self, kind: LockKind) -> Self::Output;
    /// Runs with a lock registered at run time. Its type is known only where it was registered,
    /// so the harness's one generic entry, the trial runner, was instantiated there
    /// ([`UserLock::run`]); other visitors (the crate's own tests, benches) do not visit them.
    fn visit_user(self, lock: UserLockId) -> Self::Output
    where
        Self: Sized,
    {
        panic!(
            "lock {} was registered at run time; only the trial runner visits it",
            lock.get().name
        )
    }
}

/// A lock registered at run time: its names and the trial runner instantiated for its family.
#[derive(Clone, Copy, Debug)]
pub struct UserLock {
    /// Its `--locks` name.
    pub name: &'static str,
    /// Its one-line description.
    pub description: &'static str,
    /// `runner::run_trial` for its family.
    pub run: fn(
        &crate::runner::PointSpec,
        &crate::perf::Probe,
    ) -> Result<crate::runner::TrialResult, String>,
}

/// The index of a [`UserLock`] in the run-time registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserLockId(u16);

static USER_LOCKS: std::sync::RwLock<Vec<UserLock>> = std::sync::RwLock::new(Vec::new());

impl UserLockId {
    /// The registration.
    pub fn get(self) -> UserLock {
        USER_LOCKS.read().unwrap_or_else(|e| e.into_inner())[self.0 as usize]
    }
}

/// Registers `lock` (see [`crate::Lwbench::lock`]); an `Err` names a clash with a lock that
/// already has the name.
pub fn register_user_lock(lock: UserLock) -> Result<LockKind, String> {
    if LockKind::from_name(lock.name).is_some() || ["all", "default"].contains(&lock.name) {
        return Err(format!("a lock named {:?} already exists", lock.name));
    }
    let mut v = USER_LOCKS.write().unwrap_or_else(|e| e.into_inner());
    let id = UserLockId(u16::try_from(v.len()).map_err(|_| "too many registered locks")?);
    v.push(lock);
    Ok(LockKind::User(id))
}

impl LockKind {
    /// Every lock: the built-in registry, then the locks registered at run time.
    pub fn every() -> Vec<LockKind> {
        let users = USER_LOCKS.read().unwrap_or_else(|e| e.into_inner()).len();
        LockKind::ALL
            .iter()
            .copied()
            .chain((0..users).map(|i| LockKind::User(UserLockId(i as u16))))
            .collect()
    }

    /// Looks a lock up by its command-line name.
    pub fn from_name(name: &str) -> Option<LockKind> {
        LockKind::every().into_iter().find(|k| k.name() == name)
    }

    /// Whether `--locks all` includes this lock for `workload`.
    pub fn applies_to(self, workload: crate::workload::Workload) -> bool {
        match self.applies() {
            Applies::All | Applies::Explicit => true,
            Applies::Clog => workload.uses_clog(),
        }
    }

    /// Whether `--engine sim` can run this lock: every lock whose atomics go through
    /// `lwlock::sync` (the project's, the self-test lock). std's `RwLock` and parking_lot use
    /// their own atomics and sleeps, which the simulator would not see.
    pub fn simulatable(self) -> bool {
        !matches!(self, LockKind::Std | LockKind::ParkingLot)
    }

    /// Whether `--locks all` may select this lock (the self-test lock only runs when named).
    pub fn in_all(self) -> bool {
        self.applies() != Applies::Explicit
    }

    /// The locks of the default suite: every project lock plus parking_lot, and the locks
    /// registered at run time.
    pub fn default_suite() -> Vec<LockKind> {
        LockKind::every()
            .into_iter()
            .filter(|k| {
                k.is_project() || *k == LockKind::ParkingLot || matches!(k, LockKind::User(_))
            })
            .collect()
    }

    /// All names, comma-separated (for error messages).
    pub fn valid_names() -> String {
        let mut v: Vec<&str> = LockKind::every().iter().map(|k| k.name()).collect();
        v.push("all");
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Exercise;
    impl LockVisitor for Exercise {
        type Output = u64;
        fn visit<F: LockFamily>(self, _kind: LockKind) -> u64 {
            let l = F::Lock::<u64>::new(0, Tranche::DEFAULT);
            l.exclusive(|v| *v += 1);
            l.group(7, |v| *v += 10);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                l.exclusive(|_| panic!("boom"))
            }));
            assert!(r.is_err());
            // The lock is usable after a panic inside the critical section.
            l.shared(|v| *v)
        }
    }

    #[test]
    fn every_lock_runs_and_survives_a_panic() {
        for k in LockKind::ALL.iter().filter(|k| k.in_all()) {
            assert_eq!(k.dispatch(Exercise), 11, "{}", k.name());
            assert_eq!(LockKind::from_name(k.name()), Some(*k));
        }
        assert_eq!(LockKind::from_name("nope"), None);
    }

    #[test]
    fn counters_merge() {
        let a = LockCounters {
            groups: Some(2),
            mean_group_size: Some(3.0),
            blocks: Some(1),
            ..Default::default()
        };
        let b = LockCounters {
            groups: Some(2),
            mean_group_size: Some(5.0),
            max_group_size: Some(9),
            ..Default::default()
        };
        let m = a.merge(b);
        assert_eq!(m.groups, Some(4));
        assert_eq!(m.mean_group_size, Some(4.0));
        assert_eq!(m.blocks, Some(1));
        assert_eq!(m.max_group_size, Some(9));
    }
}
