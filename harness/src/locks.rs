//! The lock families: every lock the harness can run, behind one closure-level interface.
//!
//! Workloads are written once against [`BenchLock`] (take the lock shared, take it exclusive, or
//! submit an exclusive operation that a group-commit lock may run on another thread's behalf) and
//! instantiated for a [`LockFamily`]. The registry of named locks is `crate::registry`; a
//! family also says how `lwtorture` drives it ([`LockFamily::torture`]).
//!
//! Adapters:
//! * [`RawLocked`] turns any `lwlock::RawLwLock` (classic, atomic, parking_lot through
//!   `lwlock::ParkingLotLwLock`) into a data-owning lock; its `group` is a plain exclusive
//!   acquire, which is what `ProcArrayEndTransaction` did before PostgreSQL 9.6.
//! * [`StdLocked`] wraps `std::sync::RwLock` (which has no raw interface) at closure level.
//! * The flexlock adapter (`crate::flex`) forwards `group` to `flexlock::GroupLock::group_keyed`
//!   of any group lock (with the CLOG page as the key, which only `ClogGroupLock` reads).
//! * [`SplitFamily`] gives each PostgreSQL lock its own type: ProcArrayLock from one family, the
//!   CLOG lock (tranche XactSLRU) from a second, every other lock of the workload from a third,
//!   so that a baseline can be a release of PostgreSQL where the locks of one transaction were
//!   of different designs (9.6's ProcArrayLock with group clear beside a CLogControlLock taken
//!   directly; the 2011 FlexLock patch, which changed ProcArrayLock only).

use lwlock::{Mode, RawAtomicLwLock, RawLwLock, RawLwLockVar, Tranche};
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
    /// The lock's PostgreSQL entry points by name (`LWLockAcquire`, `LWLockRelease`,
    /// `LWLockConditionalAcquire`, `LWLockAcquireOrWait`, `LWLockWaitForVar`), for a workload
    /// that replays a recorded transaction (see [`crate::entry_points`]); `None` for a lock
    /// without them.
    fn entry_points(&self) -> Option<&dyn crate::entry_points::EntryPoints> {
        None
    }
}

/// A family of locks: one lock type for any protected data type.
pub trait LockFamily: 'static {
    /// The lock protecting a `T`.
    type Lock<T: Send + Sync + 'static>: BenchLock<T>;

    /// Whether the family counts what a transaction takes (`crate::counting`): code that takes
    /// something other than a lock of the family (a buffer header's spinlock) counts it too
    /// when this is set, and compiles the count away when it is not.
    const COUNTING: bool = false;

    /// How `lwtorture` drives this family: by default through [`BenchLock`] only
    /// ([`TortureVisitor::closure`]); a family with a richer interface overrides it (the raw
    /// LWLocks: [`TortureVisitor::raw`]). A registry entry may override it again (see
    /// `crate::registry`).
    fn torture<V: TortureVisitor>(v: V) -> V::Output
    where
        Self: Sized,
    {
        v.closure::<Self>()
    }
}

/// What `lwtorture` can do with a lock, by interface: each method is one torture target,
/// instantiated for the lock's concrete type. A lock picks the richest one it has
/// ([`LockFamily::torture`], or its registry entry).
pub trait TortureVisitor {
    /// The target it builds.
    type Output;
    /// Any family, through [`BenchLock`]: shared and exclusive sections and keyed group
    /// operations, probed with [`BenchLock::held`] where the lock can tell.
    fn closure<F: LockFamily>(self) -> Self::Output;
    /// A raw LWLock through the raw trait: both modes, `conditional_acquire` and
    /// `acquire_or_wait` in both modes.
    fn raw<L: RawLwLock + 'static>(self) -> Self::Output;
    /// A raw LWLock with the variable operations too (`wait_for_var`, `update_var`,
    /// `release_clear_var`: a WAL-insertion-lock dance).
    fn raw_var<L: RawLwLockVar + 'static>(self) -> Self::Output;
    /// A drop-in `lock_api` reader-writer lock over `R`, built by `new`: `read`, `write`,
    /// `try_read`, `try_write`.
    fn drop_in<R: lwlock::lock_api::RawRwLock + Send + Sync + 'static>(
        self,
        new: fn(Tranche) -> R,
    ) -> Self::Output;
    /// `flexlock::FlexLock` over `L` with `policy` and group bound `max_group`: `group` and the
    /// guards.
    fn flex<L: RawLwLock + 'static>(
        self,
        policy: flexlock::GroupPolicy,
        max_group: usize,
    ) -> Self::Output;
    /// `flexlock::HolderServesLock` over `L` with group bound `max_group`.
    fn holder_serves<L: RawLwLock + 'static>(self, max_group: usize) -> Self::Output;
    /// `flexlock::ClogGroupLock` over `L` with group bound `max_group`: keyed `update` and the
    /// guards.
    fn clog_group<L: RawLwLock + 'static>(self, max_group: usize) -> Self::Output;
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

    fn entry_points(&self) -> Option<&dyn crate::entry_points::EntryPoints> {
        Some(&self.lock)
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

    fn torture<V: TortureVisitor>(v: V) -> V::Output {
        v.raw::<L>()
    }
}

/// Each PostgreSQL lock of a workload of its own family: ProcArrayLock (the lock created with
/// tranche [`Tranche::PROC_ARRAY`]) from `P`, the CLOG lock ([`Tranche::XACT_SLRU`]:
/// CLogControlLock, later the XactSLRU bank locks) from `C`, every other lock (the buffer
/// mapping, header and content locks, the lock-manager partitions, the null workloads' lock)
/// from `R`, by default `P`'s.
///
/// The choice is made when the lock is created, by its tranche, the name PostgreSQL gives a
/// lock. Each operation then matches on which of the three it is: one predictable branch on a
/// word the lock does not share with other threads' writes (a plain load that the simulator
/// does not charge), beside the lock's own atomics.
#[derive(Debug)]
pub struct SplitFamily<P, C, R = P>(std::marker::PhantomData<(P, C, R)>);

impl<P: LockFamily, C: LockFamily, R: LockFamily> LockFamily for SplitFamily<P, C, R> {
    type Lock<T: Send + Sync + 'static> = SplitLocked<P, C, R, T>;
}

/// A lock of [`SplitFamily`]: `P`'s for ProcArrayLock, `C`'s for the CLOG lock, `R`'s for the
/// rest.
pub enum SplitLocked<P: LockFamily, C: LockFamily, R: LockFamily, T: Send + Sync + 'static> {
    /// ProcArrayLock: `P`'s.
    ProcArray(P::Lock<T>),
    /// The CLOG lock: `C`'s.
    Clog(C::Lock<T>),
    /// Every other lock: `R`'s.
    Rest(R::Lock<T>),
}

impl<P: LockFamily, C: LockFamily, R: LockFamily, T: Send + Sync + 'static> std::fmt::Debug
    for SplitLocked<P, C, R, T>
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SplitLocked::ProcArray(_) => "SplitLocked::ProcArray",
            SplitLocked::Clog(_) => "SplitLocked::Clog",
            SplitLocked::Rest(_) => "SplitLocked::Rest",
        })
    }
}

/// `$l.$call` on whichever lock `$self` holds.
macro_rules! split {
    ($self:expr, $l:ident => $e:expr) => {
        match $self {
            SplitLocked::ProcArray($l) => $e,
            SplitLocked::Clog($l) => $e,
            SplitLocked::Rest($l) => $e,
        }
    };
}

impl<P: LockFamily, C: LockFamily, R: LockFamily, T: Send + Sync + 'static> BenchLock<T>
    for SplitLocked<P, C, R, T>
{
    fn new(data: T, tranche: Tranche) -> Self {
        if tranche == Tranche::PROC_ARRAY {
            SplitLocked::ProcArray(P::Lock::new(data, tranche))
        } else if tranche == Tranche::XACT_SLRU {
            SplitLocked::Clog(C::Lock::new(data, tranche))
        } else {
            SplitLocked::Rest(R::Lock::new(data, tranche))
        }
    }
    #[inline]
    fn shared<Res>(&self, f: impl FnOnce(&T) -> Res) -> Res {
        split!(self, l => l.shared(f))
    }
    #[inline]
    fn exclusive<Res>(&self, f: impl FnOnce(&mut T) -> Res) -> Res {
        split!(self, l => l.exclusive(f))
    }
    #[inline]
    fn group<Res: Send>(&self, key: u64, f: impl FnOnce(&mut T) -> Res + Send) -> Res {
        split!(self, l => l.group(key, f))
    }
    fn counters(&self) -> LockCounters {
        split!(self, l => l.counters())
    }
    #[inline]
    fn held(&self) -> Option<(bool, bool)> {
        split!(self, l => l.held())
    }
    fn entry_points(&self) -> Option<&dyn crate::entry_points::EntryPoints> {
        split!(self, l => l.entry_points())
    }
}

/// The family of [`StdLocked`].
#[derive(Debug)]
pub struct StdFamily;

impl LockFamily for StdFamily {
    type Lock<T: Send + Sync + 'static> = StdLocked<T>;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// ProcArrayLock comes from the first family, the CLOG tranche's lock from the second, every
    /// other lock from the third; each works (a group operation, a panic inside a section)
    /// through the split.
    #[test]
    fn a_split_family_takes_each_postgresql_lock_from_its_own_family() {
        type Split = SplitFamily<StdFamily, RawFamily<RawAtomicLwLock>, RawFamily<RawAtomicLwLock>>;
        let procs = <Split as LockFamily>::Lock::<u64>::new(0, Tranche::PROC_ARRAY);
        let clog = <Split as LockFamily>::Lock::<u64>::new(0, Tranche::XACT_SLRU);
        let rest = <Split as LockFamily>::Lock::<u64>::new(0, Tranche::BUFFER_CONTENT);
        assert!(matches!(procs, SplitLocked::ProcArray(_)), "{procs:?}");
        assert!(matches!(clog, SplitLocked::Clog(_)), "{clog:?}");
        assert!(matches!(rest, SplitLocked::Rest(_)), "{rest:?}");
        // std cannot say whether it is held; the atomic LWLock can.
        assert_eq!(procs.held(), None);
        assert_eq!(clog.held(), Some((false, false)));
        clog.exclusive(|v| {
            *v += 1;
            assert_eq!(clog.held(), Some((true, true)));
        });
        for l in [&clog, &procs, &rest] {
            l.group(3, |v| *v += 10);
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                l.exclusive(|_| panic!("boom"))
            }));
            assert!(r.is_err());
        }
        assert_eq!(clog.shared(|v| *v), 11);
        assert_eq!(procs.shared(|v| *v), 10);
        assert_eq!(rest.shared(|v| *v), 10);
        // The default third family is the first's.
        let other =
            <SplitFamily<StdFamily, RawFamily<RawAtomicLwLock>> as LockFamily>::Lock::<u64>::new(
                0,
                Tranche::DEFAULT,
            );
        assert!(matches!(other, SplitLocked::Rest(_)) && other.held().is_none());
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
