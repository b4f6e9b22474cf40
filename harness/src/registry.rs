//! The lock registry: every named lock of `lwbench` and `lwtorture`, in one table.
//!
//! Adding a lock is one entry in the `registry!` invocation below: its name, its lock family
//! (the closure-level adapter the workloads run, or `-` for a lock only `lwtorture` runs),
//! whether it is one of the project's own locks, which workloads it applies to, how `lwtorture`
//! drives it (by default as its family says, [`LockFamily::torture`]), whether it is part of
//! `lwtorture --locks all`, and the one-line descriptions. A lock registered at run time
//! ([`register_user_lock`], from `Lwbench::lock` in a user's own `main`) joins the same table:
//! both programs list, select and run it like a built-in one.
//!
//! A registered lock's type is known only where it was registered, so each program that runs
//! it instantiates its generic entry point there ([`Program`], [`UserLock::with`]) and finds
//! it again by the program's type ([`UserLock::entry`]).
//!
//! Harness plumbing: it mirrors no PostgreSQL function (each entry's description names the
//! PostgreSQL mechanism its lock stands for).

use crate::flex::{
    ClogGroupFamily, FlexHolderFamily, FlexLeaderClassicFamily, FlexLeaderFamily,
    FlexReleaserClassicFamily, FlexReleaserFamily,
};
use crate::locks::{BrokenLock, LockFamily, RawFamily, SplitFamily, StdFamily, TortureVisitor};
use flexlock::{GroupPolicy, DEFAULT_MAX_GROUP};
use lwlock::{RawAtomicLwLock, RawClassicLwLock};
use std::any::{Any, TypeId};

/// `group-clear` (9.6 and 10): ProcArrayLock with the group clear (`clog-group`'s, keyed by 0),
/// the CLOG lock and every other lock the atomic LWLock taken directly.
pub type GroupClearFamily =
    SplitFamily<ClogGroupFamily, RawFamily<RawAtomicLwLock>, RawFamily<RawAtomicLwLock>>;
/// `flexlock-2011`: the 2011 FlexLock patch as posted, which made ProcArrayLock a FlexLock (its
/// last-releaser design) over the 9.2 spinlock LWLock and left every other lock as it was.
pub type Flexlock2011Family = SplitFamily<
    FlexReleaserClassicFamily,
    RawFamily<RawClassicLwLock>,
    RawFamily<RawClassicLwLock>,
>;

/// Group bound of the group locks over the atomic LWLock under torture: small, so that servers
/// hand the rest of a chain over even at a few threads per lock.
pub const TORTURE_SMALL_GROUP: usize = 2;

/// Workloads a lock applies to in `lwbench` under `--locks all`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// Every workload.
    All,
    /// Only the CLOG workloads (`clog`, `pgbench-write`).
    Clog,
    /// Every workload, but only when named (never part of `all` or `default`).
    Explicit,
    /// None: `lwbench` does not run it (an `lwtorture`-only lock, whose interface the workloads
    /// do not use).
    Never,
}

macro_rules! registry {
    (@visit $v:ident, $kind:expr, $family:ty) => { $v.visit::<$family>($kind) };
    (@visit $v:ident, $kind:expr,) => {
        panic!("lock {} is not one of lwbench's (only lwtorture runs it)", $kind.name())
    };
    ($( $variant:ident => $name:literal, family: [$($family:ty)?], project: $project:literal,
        applies: $applies:ident, torture($tv:ident): $torture:expr, in_torture_all: $tall:literal,
        torture_desc: $tdesc:literal, $doc:literal; )*) => {
        /// A lock of the registry, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum LockKind {
            $( #[doc = $doc] $variant, )*
            /// A lock registered at run time by a user's own `main` (`Lwbench::lock`).
            User(UserLockId),
        }

        impl LockKind {
            /// Every built-in entry, in registry order (the column order of tables and plots,
            /// and the order of torture's summary), `lwtorture`-only ones included;
            /// [`LockKind::bench_locks`] is `lwbench`'s, with the locks registered at run time.
            pub const BUILT_IN: &'static [LockKind] = &[$(LockKind::$variant),*];

            /// The built-in locks `lwbench` runs (those with a family), in registry order (the
            /// column order of tables and plots); [`LockKind::bench_locks`] adds the locks
            /// registered at run time. (`ALL` names every value of an enum elsewhere; `all`,
            /// the `--locks` keyword, is [`LockKind::in_bench_all`] and
            /// [`LockKind::in_torture_all`].)
            pub const BENCH_BUILT_IN: &'static [LockKind] = &[$($({
                let _: Option<$family> = None;
                LockKind::$variant
            },)?)*];

            /// The lock's command-line name (in both programs).
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
                match self {
                    $(LockKind::$variant => Applies::$applies,)*
                    LockKind::User(_) => Applies::All,
                }
            }

            /// Calls `v.visit::<Family>()` with this lock's family (a registered lock's family
            /// is known only to its registration: [`LockVisitor::visit_user`]).
            ///
            /// # Panics
            /// On an `lwtorture`-only lock (`!self.is_bench()`): it has no family.
            pub fn dispatch<V: LockVisitor>(self, v: V) -> V::Output {
                match self {
                    $(LockKind::$variant => registry!(@visit v, self, $($family)?),)*
                    LockKind::User(u) => v.visit_user(u),
                }
            }

            /// Builds this lock's torture target with `v`: the entry's choice, by default its
            /// family's ([`LockFamily::torture`]); a registered lock's through
            /// [`UserTortureVisitor::user`].
            pub fn torture<V: UserTortureVisitor>(self, v: V) -> V::Output {
                match self {
                    $(LockKind::$variant => { let $tv = v; $torture })*
                    LockKind::User(u) => v.user(u),
                }
            }

            /// Whether `lwtorture --locks all` runs it (every registered lock does).
            pub fn in_torture_all(self) -> bool {
                match self { $(LockKind::$variant => $tall,)* LockKind::User(_) => true }
            }

            /// What `lwtorture` runs for it, for its summary's "lock under test" column.
            pub fn torture_description(self) -> &'static str {
                match self {
                    $(LockKind::$variant => $tdesc,)*
                    LockKind::User(u) => u.get().description,
                }
            }

            /// The tranche `lwtorture` registers the lock's waits under (so that a stall report
            /// names it): `torture-<name>`.
            pub fn torture_tranche(self) -> &'static str {
                match self {
                    $(LockKind::$variant => concat!("torture-", $name),)*
                    LockKind::User(u) => u.get().tranche,
                }
            }
        }
    };
}

registry! {
    Classic => "classic", family: [RawFamily<RawClassicLwLock>], project: true, applies: All,
        torture(v): v.raw::<RawClassicLwLock>(), in_torture_all: true,
        torture_desc: "RawClassicLwLock, raw trait",
        "spinlock-protected LWLock (PostgreSQL <= 9.4)";
    Atomic => "atomic", family: [RawFamily<RawAtomicLwLock>], project: true, applies: All,
        torture(v): v.raw_var::<RawAtomicLwLock>(), in_torture_all: true,
        torture_desc: "RawAtomicLwLock, raw trait + var ops",
        "atomic-state LWLock (PostgreSQL 9.5+)";
    AtomicHandoff => "atomic-handoff", family: [RawFamily<lwlock::RawHandoffLwLock>],
        project: true, applies: All,
        torture(v): v.raw::<lwlock::RawHandoffLwLock>(), in_torture_all: true,
        torture_desc: "RawHandoffLwLock, raw trait",
        "atomic-state LWLock with bounded writer starvation (handoff bit)";
    AtomicTaskFair => "atomic-taskfair", family: [RawFamily<lwlock::RawTaskFairLwLock>],
        project: true, applies: All,
        torture(v): <RawFamily<lwlock::RawTaskFairLwLock> as LockFamily>::torture(v),
        in_torture_all: false, torture_desc: "RawTaskFairLwLock, raw trait",
        "atomic-state LWLock, task-fair (a queued writer blocks new readers)";
    AtomicAdaptive => "atomic-adaptive", family: [RawFamily<lwlock::RawAdaptiveLwLock>],
        project: true, applies: All,
        torture(v): <RawFamily<lwlock::RawAdaptiveLwLock> as LockFamily>::torture(v),
        in_torture_all: false, torture_desc: "RawAdaptiveLwLock, raw trait",
        "atomic-state LWLock, bounded adaptive spinning then the handoff bound";
    AtomicEmptyYield => "atomic-empty-yield", family: [RawFamily<lwlock::RawEmptyYieldLwLock>],
        project: true, applies: All,
        torture(v): <RawFamily<lwlock::RawEmptyYieldLwLock> as LockFamily>::torture(v),
        in_torture_all: false, torture_desc: "RawEmptyYieldLwLock, raw trait",
        "atomic-adaptive whose spinner sleeps once a yield finds its CPU idle";
    RwLock => "rwlock", family: [], project: true, applies: Never,
        torture(v): v.drop_in(lwlock::RawRwLock::new_in), in_torture_all: true,
        torture_desc: "lwlock::RwLock<T> guards",
        "the drop-in lwlock::RwLock (the empty-yield policy), through its lock_api guards";
    BargingRwLock => "barging-rwlock", family: [], project: true, applies: Never,
        torture(v): v.drop_in(RawAtomicLwLock::new_in), in_torture_all: true,
        torture_desc: "lwlock::BargingRwLock<T> guards",
        "the drop-in lwlock::BargingRwLock (PostgreSQL's policy), through its guards";
    ClassicRwLock => "classic-rwlock", family: [], project: true, applies: Never,
        torture(v): v.drop_in(RawClassicLwLock::new_in), in_torture_all: true,
        torture_desc: "lwlock::ClassicRwLock<T> guards",
        "the drop-in lwlock::ClassicRwLock, through its guards";
    FlexLeader => "flex-leader", family: [FlexLeaderFamily], project: true, applies: All,
        torture(v): v.flex::<RawAtomicLwLock>(GroupPolicy::Leader, TORTURE_SMALL_GROUP),
        in_torture_all: true, torture_desc: "FlexLock<atomic> Leader, group bound 2",
        "FlexLock, group run by an elected leader (ProcArrayGroupClearXid)";
    FlexReleaser => "flex-releaser", family: [FlexReleaserFamily], project: true, applies: All,
        torture(v): v.flex::<RawAtomicLwLock>(GroupPolicy::LastReleaser, TORTURE_SMALL_GROUP),
        in_torture_all: true, torture_desc: "FlexLock<atomic> LastReleaser, group bound 2",
        "FlexLock, group run by the last releaser (Haas 2011)";
    FlexHolder => "flex-holder", family: [FlexHolderFamily], project: true, applies: All,
        torture(v): v.holder_serves::<RawAtomicLwLock>(TORTURE_SMALL_GROUP), in_torture_all: true,
        torture_desc: "HolderServesLock<atomic>, group bound 2",
        "FlexLock variant: holders serve the queue, waiters wait in the lock (beyond PG)";
    FlexLeaderClassic => "flex-leader-classic", family: [FlexLeaderClassicFamily], project: true,
        applies: Explicit,
        torture(v): v.flex::<RawClassicLwLock>(GroupPolicy::Leader, DEFAULT_MAX_GROUP),
        in_torture_all: true, torture_desc: "FlexLock<classic> Leader, group bound 64",
        "FlexLock over the classic LWLock (9.2, as the 2011 patch), elected leader";
    FlexReleaserClassic => "flex-releaser-classic", family: [FlexReleaserClassicFamily],
        project: true, applies: Explicit,
        torture(v): v.flex::<RawClassicLwLock>(GroupPolicy::LastReleaser, DEFAULT_MAX_GROUP),
        in_torture_all: true, torture_desc: "FlexLock<classic> LastReleaser, group bound 64",
        "FlexLock over the classic LWLock (9.2, as the 2011 patch), last releaser";
    GroupClear => "group-clear",
        family: [GroupClearFamily],
        project: true, applies: Explicit,
        torture(v): v.closure::<GroupClearFamily>(),
        in_torture_all: false, torture_desc: "group clear + direct CLOG lock, closure level",
        "9.6-10: ProcArrayLock with group clear (clog-group's), CLOG and other locks atomic";
    Flexlock2011 => "flexlock-2011",
        family: [Flexlock2011Family],
        project: true, applies: Explicit,
        torture(v): v.closure::<Flexlock2011Family>(),
        in_torture_all: false, torture_desc: "2011 FlexLock ProcArrayLock + classic rest, closure level",
        "the 2011 patch as posted: ProcArrayLock a last-releaser FlexLock, every other lock classic";
    ReaderBias => "reader-bias", family: [RawFamily<lwlock::RawReaderBiasLwLock>],
        project: true, applies: All,
        torture(v): <RawFamily<lwlock::RawReaderBiasLwLock> as LockFamily>::torture(v),
        in_torture_all: false, torture_desc: "RawReaderBiasLwLock, raw trait",
        "BRAVO reader bias over the atomic LWLock (beyond PG)";
    ClogGroup => "clog-group", family: [ClogGroupFamily], project: true, applies: Clog,
        torture(v): v.clog_group::<RawAtomicLwLock>(TORTURE_SMALL_GROUP), in_torture_all: true,
        torture_desc: "ClogGroupLock<atomic>, 4 keys, group bound 2",
        "CLOG group update keyed by page (TransactionGroupUpdateXidStatus)";
    ScalableRwLock => "scalable-rwlock", family: [], project: true, applies: Never,
        torture(v): v.drop_in(lwlock::RawReaderBiasLwLock::new_in), in_torture_all: true,
        torture_desc: "lwlock::ScalableRwLock<T> guards (reader bias)",
        "the drop-in lwlock::ScalableRwLock (BRAVO reader bias), through its guards";
    Std => "std", family: [StdFamily], project: false, applies: All,
        torture(v): <StdFamily as LockFamily>::torture(v), in_torture_all: false,
        torture_desc: "std::sync::RwLock, closure level",
        "std::sync::RwLock (baseline)";
    ParkingLot => "parking-lot", family: [RawFamily<lwlock::ParkingLotLwLock>], project: false,
        applies: All,
        torture(v): <RawFamily<lwlock::ParkingLotLwLock> as LockFamily>::torture(v),
        in_torture_all: false, torture_desc: "ParkingLotLwLock, raw trait",
        "parking_lot::RwLock (baseline)";
    Broken => "broken", family: [RawFamily<BrokenLock>], project: false, applies: Explicit,
        torture(v): <RawFamily<BrokenLock> as LockFamily>::torture(v), in_torture_all: false,
        torture_desc: "BrokenLock, raw trait (BROKEN on purpose)",
        "self-test: shared takes nothing, exclusive takes shared; the checks must fail";
}

/// Generic code to run for one lock family (see [`LockKind::dispatch`]).
pub trait LockVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the family of `kind`.
    fn visit<F: LockFamily>(self, kind: LockKind) -> Self::Output;
    /// Runs with a lock registered at run time. Its type is known only where it was registered,
    /// so a program that runs such locks instantiated its entry point there
    /// ([`UserLock::entry`]); other visitors (the crate's own tests, benches) do not visit them.
    fn visit_user(self, lock: UserLockId) -> Self::Output
    where
        Self: Sized,
    {
        panic!(
            "lock {} was registered at run time; only the programs it was registered with run it",
            lock.get().name
        )
    }
}

/// A [`TortureVisitor`] that can also build the target of a lock registered at run time (from
/// the entry its program instantiated at registration, [`UserLock::entry`]).
pub trait UserTortureVisitor: TortureVisitor {
    /// Builds the target of the registered lock `lock`.
    fn user(self, lock: UserLockId) -> Self::Output;
}

/// A program that runs registered locks: its entry point, instantiated for a family.
pub trait Program: 'static {
    /// The instantiated entry point (typically a function pointer).
    type Entry: Copy + Send + Sync + 'static;
    /// The entry point for family `F`.
    fn entry<F: LockFamily>() -> Self::Entry;
}

/// A lock registered at run time: its names and each program's entry point for its family.
#[derive(Clone, Debug)]
pub struct UserLock {
    /// Its `--locks` name.
    pub name: &'static str,
    /// Its one-line description.
    pub description: &'static str,
    /// Its torture tranche name (`torture-<name>`).
    tranche: &'static str,
    entries: Vec<(TypeId, &'static (dyn Any + Send + Sync))>,
}

impl UserLock {
    /// A registration named `name`, with no program entry yet.
    pub fn new(name: &'static str, description: &'static str) -> UserLock {
        UserLock {
            name,
            description,
            tranche: Box::leak(format!("torture-{name}").into_boxed_str()),
            entries: Vec::new(),
        }
    }

    /// Adds program `P`'s entry point, instantiated for family `F` (the lock's).
    pub fn with<P: Program, F: LockFamily>(mut self) -> UserLock {
        let e: &'static (dyn Any + Send + Sync) = Box::leak(Box::new(P::entry::<F>()));
        self.entries.retain(|(t, _)| *t != TypeId::of::<P>());
        self.entries.push((TypeId::of::<P>(), e));
        self
    }

    /// Program `P`'s entry point, if the lock was registered with one.
    pub fn entry<P: Program>(&self) -> Option<P::Entry> {
        self.entries
            .iter()
            .find(|(t, _)| *t == TypeId::of::<P>())
            .and_then(|(_, e)| e.downcast_ref::<P::Entry>().copied())
    }
}

/// The index of a [`UserLock`] in the run-time registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UserLockId(u16);

static USER_LOCKS: std::sync::RwLock<Vec<UserLock>> = std::sync::RwLock::new(Vec::new());

impl UserLockId {
    /// The registration.
    pub fn get(self) -> UserLock {
        USER_LOCKS.read().unwrap_or_else(|e| e.into_inner())[self.0 as usize].clone()
    }
}

/// Registers `lock` (see `Lwbench::lock`); an `Err` names a clash with a lock that already has
/// the name (in either program).
pub fn register_user_lock(lock: UserLock) -> Result<LockKind, String> {
    if LockKind::from_any_name(lock.name).is_some() || ["all", "default"].contains(&lock.name) {
        return Err(format!("a lock named {:?} already exists", lock.name));
    }
    let mut v = USER_LOCKS.write().unwrap_or_else(|e| e.into_inner());
    let id = UserLockId(u16::try_from(v.len()).map_err(|_| "too many registered locks")?);
    v.push(lock);
    Ok(LockKind::User(id))
}

impl LockKind {
    /// The built-in locks `lwbench` runs, in registry order (the column order of tables and
    /// plots); [`LockKind::bench_locks`] adds the locks registered at run time.
    pub fn bench_built_in() -> impl Iterator<Item = LockKind> {
        LockKind::BENCH_BUILT_IN.iter().copied()
    }

    /// Every entry of the registry, `lwtorture`-only ones included, then the locks registered
    /// at run time.
    pub fn registered() -> Vec<LockKind> {
        let users = USER_LOCKS.read().unwrap_or_else(|e| e.into_inner()).len();
        LockKind::BUILT_IN
            .iter()
            .copied()
            .chain((0..users).map(|i| LockKind::User(UserLockId(i as u16))))
            .collect()
    }

    /// Every lock `lwbench` runs: its built-in ones, then the locks registered at run time.
    pub fn bench_locks() -> Vec<LockKind> {
        LockKind::registered()
            .into_iter()
            .filter(|k| k.is_bench())
            .collect()
    }

    /// Whether `lwbench` runs it (it has a lock family).
    pub fn is_bench(self) -> bool {
        self.applies() != Applies::Never
    }

    /// Looks an `lwbench` lock up by its command-line name.
    pub fn from_name(name: &str) -> Option<LockKind> {
        LockKind::bench_locks()
            .into_iter()
            .find(|k| k.name() == name)
    }

    /// Looks any registry entry up by its name (`lwtorture`'s lookup).
    pub fn from_any_name(name: &str) -> Option<LockKind> {
        LockKind::registered()
            .into_iter()
            .find(|k| k.name() == name)
    }

    /// The locks of `lwtorture --locks all`, in summary order.
    pub fn torture_locks_all() -> Vec<LockKind> {
        LockKind::registered()
            .into_iter()
            .filter(|k| k.in_torture_all())
            .collect()
    }

    /// Whether `--locks all` includes this lock for a workload (`uses_clog`: whether the
    /// workload runs the CLOG; see `Workload::uses_clog`).
    pub fn applies_to_workload(self, uses_clog: bool) -> bool {
        match self.applies() {
            Applies::All | Applies::Explicit => true,
            Applies::Clog => uses_clog,
            Applies::Never => false,
        }
    }

    /// Whether `--engine sim` can run this lock: every lock whose atomics go through
    /// `lwlock::sync` (the project's, the self-test lock). std's `RwLock` and parking_lot use
    /// their own atomics and sleeps, which the simulator would not see.
    pub fn simulatable(self) -> bool {
        !matches!(self, LockKind::Std | LockKind::ParkingLot)
    }

    /// Whether `--locks all` may select this lock (the self-test lock only runs when named).
    pub fn in_bench_all(self) -> bool {
        matches!(self.applies(), Applies::All | Applies::Clog)
    }

    /// The locks of the default suite: every project lock plus parking_lot, and the locks
    /// registered at run time (a project lock that runs only when named, an era's
    /// composition such as `group-clear`, is not part of it).
    pub fn default_suite() -> Vec<LockKind> {
        LockKind::bench_locks()
            .into_iter()
            .filter(|k| {
                (k.is_project() && k.applies() != Applies::Explicit)
                    || *k == LockKind::ParkingLot
                    || matches!(k, LockKind::User(_))
            })
            .collect()
    }

    /// All `lwbench` names, comma-separated (for error messages).
    pub fn valid_names() -> String {
        let mut v: Vec<&str> = LockKind::bench_locks().iter().map(|k| k.name()).collect();
        v.push("all");
        v.join(", ")
    }

    /// All `lwtorture` names, comma-separated (for error messages).
    pub fn valid_torture_names() -> String {
        LockKind::registered()
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::BenchLock;
    use lwlock::Tranche;

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
        for k in LockKind::bench_built_in().filter(|k| k.in_bench_all()) {
            assert_eq!(k.dispatch(Exercise), 11, "{}", k.name());
            assert_eq!(LockKind::from_name(k.name()), Some(k));
        }
        assert_eq!(LockKind::from_name("nope"), None);
        // An lwtorture-only lock is not lwbench's, but the registry knows it.
        assert_eq!(LockKind::from_name("rwlock"), None);
        assert_eq!(LockKind::from_any_name("rwlock"), Some(LockKind::RwLock));
    }

    #[test]
    fn the_torture_set_is_the_thirteen_locks_in_summary_order() {
        let names: Vec<&str> = LockKind::torture_locks_all()
            .iter()
            .map(|k| k.name())
            .collect();
        assert_eq!(
            names,
            [
                "classic",
                "atomic",
                "atomic-handoff",
                "rwlock",
                "barging-rwlock",
                "classic-rwlock",
                "flex-leader",
                "flex-releaser",
                "flex-holder",
                "flex-leader-classic",
                "flex-releaser-classic",
                "clog-group",
                "scalable-rwlock"
            ]
        );
        assert!(LockKind::torture_locks_all()
            .iter()
            .all(|k| k.torture_tranche() == format!("torture-{}", k.name())));
    }

    struct Echo;
    impl Program for Echo {
        type Entry = fn() -> &'static str;
        fn entry<F: LockFamily>() -> Self::Entry {
            std::any::type_name::<F>
        }
    }

    #[test]
    fn a_registration_keeps_each_programs_entry() {
        let u = UserLock::new("t", "t").with::<Echo, StdFamily>();
        assert_eq!(
            u.entry::<Echo>().map(|f| f()),
            Some(std::any::type_name::<StdFamily>())
        );
        struct Other;
        impl Program for Other {
            type Entry = u8;
            fn entry<F: LockFamily>() -> u8 {
                7
            }
        }
        assert_eq!(u.entry::<Other>(), None);
    }
}
