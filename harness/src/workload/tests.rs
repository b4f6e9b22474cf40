//! The workloads' unit tests.

use super::*;
use crate::registry::{LockKind, LockVisitor};
use crate::snapshot::{Outcome, Strategy};

struct RunEach;
impl LockVisitor for RunEach {
    type Output = ();
    fn visit<F: LockFamily>(self, kind: LockKind) {
        let variants = Layout::ALL
            .into_iter()
            .flat_map(|l| Strategy::ALL.into_iter().map(move |st| (l, st)));
        // Layouts and strategies apply only to the workloads with a proc array or snapshots:
        // the others run once, at the first of each.
        for (&wl, (layout, strategy)) in Workload::ALL.iter().flat_map(|w| {
            let n = if w.uses_proc_array() || w.takes_snapshots() {
                usize::MAX
            } else {
                1
            };
            variants.clone().take(n).map(move |v| (w, v))
        }) {
            let s = Shared::<F>::new(wl, 2, layout);
            let cfg = WorkerConfig {
                write_pct: 50,
                work: 3,
                time_every: 2,
                strategy,
                idle_us: 0,
            };
            let mut ws = vec![Worker::new(0, 2, cfg), Worker::new(1, 2, cfg)];
            for _ in 0..100 {
                for w in ws.iter_mut() {
                    transaction(wl, &s, w);
                }
            }
            s.stop.store(true, Ordering::Relaxed);
            for w in ws.iter_mut() {
                run_until_stopped(wl, &s, w);
            }
            check(wl, &s, &ws).unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
            assert_eq!(ws[0].txns, 100);
            // Optimistic snapshots validated without the lock, and pin-vm's map reads, are
            // no lock operation.
            let lockless = ws[0].snapshot_outcomes[Outcome::Validated as usize]
                + if wl == Workload::PinVm { ws[0].txns } else { 0 };
            assert!(ws[0].ops + lockless >= 100);
            let timed = ws[0].shared_wait.len() + ws[0].excl_wait.len() + ws[0].clog_wait.len();
            assert!(timed >= 40, "{} {}: timed {timed}", kind.name(), wl.name());
            if wl.takes_snapshots() {
                let taken: u64 = ws[0].snapshot_outcomes.iter().sum();
                assert!(
                    taken >= 50,
                    "{} {}: {taken} snapshots",
                    kind.name(),
                    wl.name()
                );
            }
        }
    }
}

#[test]
fn every_workload_on_every_lock_passes_its_checks() {
    for k in LockKind::bench_built_in().filter(|k| k.in_bench_all()) {
        k.dispatch(RunEach);
    }
}

/// The self-test lock fails the section checks of every workload even single-threaded:
/// its shared sections find it not held, its exclusive ones not held exclusively.
#[test]
fn the_broken_lock_fails_every_workload() {
    struct Broken;
    impl LockVisitor for Broken {
        type Output = ();
        fn visit<F: LockFamily>(self, _kind: LockKind) {
            // pin-vm takes no lock: there is nothing for a broken lock to break.
            for &wl in Workload::ALL.iter().filter(|&&w| w != Workload::PinVm) {
                let s = Shared::<F>::new(wl, 1, Layout::Dense);
                let cfg = WorkerConfig {
                    write_pct: 50,
                    work: 0,
                    time_every: 4,
                    strategy: Strategy::Scan,
                    idle_us: 0,
                };
                let mut ws = vec![Worker::new(0, 1, cfg)];
                for _ in 0..200 {
                    transaction(wl, &s, &mut ws[0]);
                }
                s.stop.store(true, Ordering::Relaxed);
                run_until_stopped(wl, &s, &mut ws[0]);
                let e = check(wl, &s, &ws).expect_err(wl.name());
                assert!(e.contains("section-check"), "{}: {e}", wl.name());
            }
        }
    }
    LockKind::Broken.dispatch(Broken);
}

#[test]
fn check_catches_a_lost_update() {
    let s = Shared::<crate::locks::StdFamily>::new(Workload::EndXact, 1, Layout::Dense);
    let mut w = Worker::new(
        0,
        1,
        WorkerConfig {
            write_pct: 0,
            work: 0,
            time_every: 1,
            strategy: Strategy::Scan,
            idle_us: 0,
        },
    );
    transaction(Workload::EndXact, &s, &mut w);
    w.ends += 1; // pretend one more transaction ended than the proc array saw
    assert!(check(Workload::EndXact, &s, &[w]).is_err());
}

/// `--time-every` equal to a transaction's operation count used to time the same operation
/// kind every time (pgbench-write had three operations: with 3, one kind was never timed). The spacing
/// is random now: every kind is timed, about one in `time_every` of each.
#[test]
fn time_every_does_not_alias_with_the_transaction() {
    let s = Shared::<crate::locks::StdFamily>::new(Workload::PgbenchWrite, 1, Layout::Dense);
    let mut w = Worker::new(
        0,
        1,
        WorkerConfig {
            write_pct: 0,
            work: 0,
            time_every: 3,
            strategy: Strategy::Scan,
            idle_us: 0,
        },
    );
    let n = 3000u64;
    for _ in 0..n {
        transaction(Workload::PgbenchWrite, &s, &mut w);
    }
    // Per transaction: 6 snapshots (2 per statement), 1 end, 1 CLOG commit.
    for (kind, per_txn, h) in [
        ("snapshot", 6, &w.shared_wait),
        ("end of transaction", 1, &w.excl_wait),
        ("CLOG commit", 1, &w.clog_wait),
    ] {
        let (timed, ops) = (h.len(), n * per_txn);
        assert!(
            (ops / 6..ops * 2 / 3).contains(&timed),
            "{kind}: {timed} of {ops} timed, expected about a third"
        );
    }
}

/// The section checks fail for a lock that does not exclude, and pass for one that does.
#[test]
fn section_checks_catch_overlap_and_a_lock_that_is_not_held() {
    let c = SectionCheck::default();
    c.shared(Some((true, false)), || ());
    c.exclusive(Some((true, true)), || ());
    assert!(c.result().is_ok());
    c.shared(Some((false, false)), || ());
    assert!(c.result().unwrap_err().contains("not held"));
    let c = SectionCheck::default();
    c.exclusive(None, || c.shared(None, || ()));
    assert!(c.result().unwrap_err().contains("overlapped"));
    // A writer that enters and leaves inside a shared section, seen only at its exit.
    let c = SectionCheck::default();
    c.shared(None, || c.exclusive(None, || ()));
    assert!(c.result().unwrap_err().contains("entered beside"));
    let c = SectionCheck::default();
    c.exclusive(None, || c.exclusive(None, || ()));
    assert!(c.result().unwrap_err().contains("two exclusive"));
    let c = SectionCheck::default();
    c.exclusive(Some((true, false)), || ());
    assert!(c.result().unwrap_err().contains("not held exclusively"));
}

fn one_worker(work: u32) -> Worker {
    Worker::new(
        0,
        1,
        WorkerConfig {
            write_pct: 0,
            work,
            time_every: 1,
            strategy: Strategy::Scan,
            idle_us: 0,
        },
    )
}

/// `--work` is the pin workloads' per-page work: with 5 steps per transaction, each of the
/// 10 transactions draws 5 more random numbers (the work's xorshift steps) than with none.
#[test]
fn work_applies_to_the_pin_workloads() {
    for wl in [Workload::Pin, Workload::PinHeld, Workload::PinVm] {
        let draws = |work| {
            let s = Shared::<crate::locks::StdFamily>::new(wl, 1, Layout::Dense);
            let mut w = one_worker(work);
            let mut reference = one_worker(0);
            if wl.holds_pin() {
                s.buffer.pin();
            }
            for _ in 0..10 {
                transaction(wl, &s, &mut w);
            }
            if wl.holds_pin() {
                s.buffer.unpin();
            }
            check(wl, &s, std::slice::from_ref(&w)).unwrap();
            (0..10_000usize)
                .find(|_| {
                    let found = reference.rng == w.rng;
                    reference.rand();
                    found
                })
                .expect("the worker's generator is the reference's, advanced")
        };
        // Without work the only draws are the timer's spacings (time_every 1: none) and
        // the check countdown's.
        let (none, some) = (draws(0), draws(5));
        assert_eq!(some - none, 50, "{}", wl.name());
    }
}

/// pin-vm counts its lock-free map reads, one per transaction, and takes no lock; the
/// check fails if the map word changed.
#[test]
fn pin_vm_reads_the_map_with_no_lock_and_is_checked() {
    let s = Shared::<crate::locks::StdFamily>::new(Workload::PinVm, 1, Layout::Dense);
    let mut w = one_worker(0);
    for _ in 0..50 {
        transaction(Workload::PinVm, &s, &mut w);
    }
    assert_eq!((w.bad_reads, w.ops, w.txns), (0, 0, 50));
    check(Workload::PinVm, &s, std::slice::from_ref(&w)).unwrap();
    w.ops += 1;
    assert!(check(Workload::PinVm, &s, &[w]).is_err());
}

/// pgbench-write-status: 57 or 58 shared CLOG lookups per transaction (5 762 per hundred)
/// besides its 10 snapshots, xid, MultiXactGenLock, 5 WAL records, commit and end, its own
/// previous commit seen committed.
#[test]
fn pgbench_write_status_looks_up_recent_xids_under_the_clog_lock_shared() {
    let wl = Workload::PgbenchWriteStatus;
    let s = Shared::<crate::locks::StdFamily>::new(wl, 1, Layout::Dense);
    let mut w = one_worker(0);
    for _ in 0..100 {
        transaction(wl, &s, &mut w);
    }
    assert_eq!(w.ops, 100 * 19 + STATUS_READS_PER_100);
    assert_eq!(
        (
            status_reads_at(STATUS_READS_PER_100, 0),
            status_reads_at(STATUS_READS_PER_100, 1),
            status_reads_at(STATUS_READS_PER_100, 99),
        ),
        (57, 58, 58)
    );
    assert_eq!(w.bad_reads, 0);
    check(wl, &s, std::slice::from_ref(&w)).unwrap();
    w.ops -= 1;
    assert!(check(wl, &s, &[w]).is_err());
}

/// `--status-lookups` sets pgbench-write-status's lookups per transaction: at 0 and at 10 each
/// transaction takes the CLOG lock shared exactly that often (counted by the counting lock
/// family, transaction by transaction), everything else as at the default; at 10.5 the
/// transactions alternate 10 and 11. The checker holds each trial to its own count.
#[test]
fn status_lookups_set_the_shared_clog_acquisitions_per_transaction() {
    use crate::counting::{take_counts, CountingFamily};
    type Counted = CountingFamily<crate::locks::StdFamily>;
    let wl = Workload::PgbenchWriteStatus;
    for (per_100, each) in [(0u64, 0u64), (1000, 10)] {
        let s = Shared::<Counted>::new(wl, 1, Layout::Dense).with_status_lookups(per_100);
        assert_eq!(s.status_lookups_per_100(), per_100);
        let mut w = one_worker(0);
        let _ = take_counts();
        for t in 0..20 {
            run_transactions(wl, &s, &mut w, 1);
            let got = take_counts();
            let shared = got.get(&("XactSLRU", "shared")).copied().unwrap_or(0);
            assert_eq!(shared, each, "{per_100} per 100, transaction {t}");
            assert_eq!(got.get(&("ProcArray", "shared")), Some(&10));
            assert_eq!(got.get(&("XactSLRU", "exclusive")), Some(&1));
        }
        assert_eq!(w.ops, 20 * (19 + each));
        assert_eq!(w.bad_reads, 0);
        check(wl, &s, std::slice::from_ref(&w)).unwrap();
        // The default's count does not pass for this trial.
        let d = Shared::<Counted>::new(wl, 1, Layout::Dense);
        let e = pgbench::check_write_status(&d, std::slice::from_ref(&w)).unwrap_err();
        assert!(e.contains("lock operations"), "{e}");
    }
    assert_eq!(
        (0..4).map(|t| status_reads_at(1050, t)).collect::<Vec<_>>(),
        [10, 11, 10, 11]
    );
    // The default allocates nothing and reads the constant.
    let d = Shared::<crate::locks::StdFamily>::new(wl, 1, Layout::Dense);
    assert_eq!(d.status_lookups_per_100(), STATUS_READS_PER_100);
    assert!(d.replay().is_none() && d.era().is_none());
}

#[test]
fn names_round_trip() {
    for w in Workload::ALL {
        assert_eq!(Workload::from_name(w.name()), Some(*w));
    }
}

/// What the table's rows say each transaction takes is what it takes: counted through the
/// counting lock family, per transaction, by tranche and mode.
#[test]
fn the_rows_lock_counts_are_what_a_transaction_takes() {
    use crate::counting::{take_counts, CountingFamily};
    type Counted = CountingFamily<crate::locks::StdFamily>;
    /// (tranche, mode, acquisitions per transaction).
    type Takes = &'static [(&'static str, &'static str, u64)];
    let cases: [(Workload, Takes); 5] = [
        (
            Workload::PgbenchSelect,
            &[
                ("ProcArray", "shared", 2),
                ("BufferMapping", "shared", 4),
                ("BufferContent", "shared", 4),
            ],
        ),
        (
            Workload::PgbenchWrite,
            &[
                ("ProcArray", "shared", 6),
                ("ProcArray", "exclusive", 1),
                ("XidGen", "exclusive", 1),
                ("MultiXactGen", "shared", 1),
                ("WALInsert", "exclusive", 3),
                ("XactSLRU", "exclusive", 1),
            ],
        ),
        (
            Workload::PgbenchWriteStatus,
            &[
                ("ProcArray", "shared", 10),
                ("ProcArray", "exclusive", 1),
                ("XidGen", "exclusive", 1),
                ("MultiXactGen", "shared", 1),
                ("WALInsert", "exclusive", 5),
                ("XactSLRU", "exclusive", 1),
            ],
        ),
        (
            Workload::PgbenchN,
            &[
                ("ProcArray", "shared", 6),
                ("ProcArray", "exclusive", 1),
                ("XidGen", "exclusive", 1),
                ("BufferMapping", "shared", 10),
                ("BufferContent", "shared", 8),
                ("BufferContent", "exclusive", 2),
                ("LockFastPath", "exclusive", 8),
                ("LockManager", "exclusive", 2),
                ("MultiXactGen", "shared", 1),
                ("WALInsert", "exclusive", 3),
                ("XactSLRU", "exclusive", 1),
            ],
        ),
        (
            Workload::SelectLazyVxid,
            &[
                ("ProcArray", "shared", 2),
                ("BufferMapping", "shared", 4),
                ("BufferContent", "shared", 4),
                ("LockFastPath", "exclusive", 5),
            ],
        ),
    ];
    for (wl, want) in cases {
        let s = Shared::<Counted>::new(wl, 1, Layout::Dense);
        let mut w = one_worker(0);
        let _ = take_counts();
        run_transactions(wl, &s, &mut w, 10);
        let got = take_counts();
        let mut want: std::collections::BTreeMap<_, _> =
            want.iter().map(|&(t, m, n)| ((t, m), n * 10)).collect();
        if wl == Workload::PgbenchWriteStatus {
            // 10 transactions from the first: 576 lookups (57.62 each, rounded down).
            want.insert(
                ("XactSLRU", "shared"),
                status_reads_total_at(STATUS_READS_PER_100, 10),
            );
        }
        assert_eq!(got, want, "{}", wl.name());
    }
}

/// Seed 003's 9.3 scan rows take, per heap page, what 9.3's `heapgetpage` took with each
/// patch: the mapping partition shared once for the heap page (and once more for patch 2's map
/// page), the heap page's content lock shared once (never the map page's), and the buffer
/// header spinlock twice per pinned-and-released page (the heap page's pin and the previous
/// page's unpin; patch 2 adds the map page's pin and unpin). The scan's first page has no
/// previous page to release; patch 3 pins the map page there, once; the trial's end releases
/// the last page (and patch 3's map page).
#[test]
fn the_93_scan_rows_take_what_heapgetpage_took_per_patch() {
    use crate::counting::{take_counts, CountingFamily};
    type Counted = CountingFamily<crate::locks::StdFamily>;
    let counts = |mapping: u64, content: u64, spin: u64| {
        [
            (("BufferMapping", "shared"), mapping),
            (("BufferContent", "shared"), content),
            (("BufferHeader", "spinlock"), spin),
        ]
        .into_iter()
        .filter(|&(_, n)| n > 0)
        .collect::<std::collections::BTreeMap<_, _>>()
    };
    // (row, per page: mapping shared, header spinlocks; the first page: the same)
    for (wl, mapping, spin, first_mapping, first_spin) in [
        (Workload::Scan93, 1, 2, 1, 1),
        (Workload::Pin93, 2, 4, 2, 3),
        (Workload::PinVm93, 1, 2, 2, 2),
        (Workload::Pin93Locked, 2, 4, 2, 3),
    ] {
        // The map page's content lock: only the model-only row takes it.
        let vm_lock = u64::from(wl == Workload::Pin93Locked);
        let s = Shared::<Counted>::new(wl, 1, Layout::Dense);
        let mut w = one_worker(0);
        let _ = take_counts();
        run_transactions(wl, &s, &mut w, 1);
        assert_eq!(
            take_counts(),
            counts(first_mapping, 1 + vm_lock, first_spin),
            "{}: the first page",
            wl.name()
        );
        run_transactions(wl, &s, &mut w, 10);
        assert_eq!(
            take_counts(),
            counts(10 * mapping, 10 * (1 + vm_lock), 10 * spin),
            "{}: 10 pages",
            wl.name()
        );
        s.stop.store(true, Ordering::Relaxed);
        run_until_stopped(wl, &s, &mut w);
        let end = if wl == Workload::PinVm93 { 2 } else { 1 };
        assert_eq!(take_counts(), counts(0, 0, end), "{}: the end", wl.name());
        check(wl, &s, std::slice::from_ref(&w)).unwrap();
        assert_eq!(
            w.ops,
            11 * mapping + 11 * (1 + vm_lock) + first_mapping - mapping
        );
    }
}

/// A scan whose last page is left pinned fails the trial's check.
#[test]
fn a_93_scan_page_left_pinned_fails_the_check() {
    let s = Shared::<crate::locks::StdFamily>::new(Workload::Scan93, 1, Layout::Dense);
    let mut w = one_worker(0);
    run_transactions(Workload::Scan93, &s, &mut w, 3);
    let e = check(Workload::Scan93, &s, std::slice::from_ref(&w)).unwrap_err();
    assert!(e.contains("heap page 2 left with 1 pins"), "{e}");
}

/// `--era-traffic all` on the `select-*` shapes, two threads interleaved on every lock: the
/// checks pass (every LOCK and PROCLOCK entry removed, 4 `SIGetDataEntries` per transaction),
/// and each transaction does 4 more LWLock operations (SInvalReadLock) than without it.
struct RunEra;
impl LockVisitor for RunEra {
    type Output = ();
    fn visit<F: LockFamily>(self, kind: LockKind) {
        use crate::era_traffic::EraTraffic;
        for wl in [
            Workload::SelectLmgr,
            Workload::SelectFastpath,
            Workload::SelectLazyVxid,
        ] {
            let mut ops = Vec::new();
            for era in [EraTraffic::NONE, EraTraffic::ALL] {
                let s = Shared::<F>::with_era(wl, 2, Layout::Padded, era);
                let cfg = WorkerConfig {
                    write_pct: 0,
                    work: 3,
                    time_every: 2,
                    strategy: Strategy::Scan,
                    idle_us: 0,
                };
                let mut ws = vec![Worker::new(0, 2, cfg), Worker::new(1, 2, cfg)];
                for _ in 0..50 {
                    for w in ws.iter_mut() {
                        transaction(wl, &s, w);
                    }
                }
                check(wl, &s, &ws).unwrap_or_else(|e| panic!("{} {}: {e}", kind.name(), wl.name()));
                assert_eq!(s.sinval().is_some(), era.sinval());
                assert_eq!(s.freelists().is_some(), era.freelist());
                ops.push(ws[0].ops);
            }
            assert_eq!(ops[1], ops[0] + 4 * 50, "{} {}", kind.name(), wl.name());
        }
        // Another workload ignores the setting.
        let s = Shared::<F>::with_era(Workload::PgbenchN, 2, Layout::Dense, EraTraffic::ALL);
        assert!(s.era().is_none());
    }
}

#[test]
fn era_traffic_adds_its_operations_and_passes_the_checks() {
    for k in LockKind::bench_built_in().filter(|k| k.in_bench_all()) {
        k.dispatch(RunEra);
    }
}

/// `WorkerConfig::idle_us` sits in the config's old padding: the config, and so `Worker`,
/// keep the size they had before it, and every simulated run its addresses.
#[test]
fn worker_config_keeps_its_size() {
    assert_eq!(std::mem::size_of::<WorkerConfig>(), 12);
}

/// `pgbench-n` ends an xid in every transaction, and each end invalidates the reusable and the
/// shared snapshot: a lone backend recomputes the first of a transaction's six snapshots after
/// each commit (`reuse`: scanned; `shared`: published) and keeps the other five (reused;
/// copied). `pgbench-select` ends no xid, so only the run's first snapshot is computed.
struct CommitsInvalidate;
impl LockVisitor for CommitsInvalidate {
    type Output = ();
    fn visit<F: LockFamily>(self, kind: LockKind) {
        let cases = [
            (
                Workload::PgbenchN,
                Strategy::Reuse,
                [Outcome::Scanned, Outcome::Reused],
                [40, 200],
            ),
            (
                Workload::PgbenchN,
                Strategy::Shared,
                [Outcome::Published, Outcome::Copied],
                [40, 200],
            ),
            (
                Workload::PgbenchSelect,
                Strategy::Reuse,
                [Outcome::Scanned, Outcome::Reused],
                [1, 79],
            ),
            (
                Workload::PgbenchSelect,
                Strategy::Shared,
                [Outcome::Published, Outcome::Copied],
                [1, 79],
            ),
        ];
        for (wl, strategy, [fresh, kept], [n_fresh, n_kept]) in cases {
            let s = Shared::<F>::new(wl, 1, Layout::PgXact);
            let cfg = WorkerConfig {
                write_pct: 0,
                work: 3,
                time_every: 2,
                strategy,
                idle_us: 0,
            };
            let mut w = Worker::new(0, 1, cfg);
            for _ in 0..40 {
                transaction(wl, &s, &mut w);
            }
            let name = format!("{} {} {:?}", kind.name(), wl.name(), strategy);
            assert_eq!(w.txns, 40, "{name}");
            assert_eq!(w.snapshot_outcomes[fresh as usize], n_fresh, "{name}");
            assert_eq!(w.snapshot_outcomes[kept as usize], n_kept, "{name}");
            assert_eq!(
                w.snapshot_outcomes.iter().sum::<u64>(),
                n_fresh + n_kept,
                "{name}"
            );
        }
    }
}

#[test]
fn pgbench_n_commits_invalidate_reused_and_shared_snapshots() {
    for k in LockKind::bench_built_in().filter(|k| k.name() == "classic" || k.name() == "atomic") {
        k.dispatch(CommitsInvalidate);
    }
}

/// `pgbench-n` as 9.2 ran it (`--era-traffic walinsertlock,nomultixact`): the same
/// transaction without MultiXactGenLock, its three WAL records under one WALInsertLock
/// instead of the backend's own of eight; each addition alone changes only its own part; the
/// `select-*` additions change nothing.
#[test]
fn pgbench_n_era_takes_one_wal_insert_lock_and_no_multixact_gen() {
    use crate::counting::{take_counts, CountingFamily};
    use crate::era_traffic::EraTraffic;
    type Counted = CountingFamily<crate::locks::StdFamily>;
    let wl = Workload::PgbenchN;
    let counts = |era: EraTraffic| {
        let s = Shared::<Counted>::with_era(wl, 1, Layout::Dense, era);
        let mut w = one_worker(0);
        let _ = take_counts();
        run_transactions(wl, &s, &mut w, 10);
        (take_counts(), w.ops)
    };
    let (base, base_ops) = counts(EraTraffic::NONE);
    assert_eq!(base_ops, 43 * 10);
    assert_eq!(counts(EraTraffic::SELECT), (base.clone(), base_ops));
    assert_eq!(
        counts(EraTraffic::WAL_INSERT_LOCK),
        (base.clone(), base_ops)
    );
    let mut without = base.clone();
    without.remove(&("MultiXactGen", "shared"));
    for era in [EraTraffic::NO_MULTIXACT, EraTraffic::WRITE, EraTraffic::ALL] {
        assert_eq!(counts(era), (without.clone(), 42 * 10), "{}", era.name());
    }
    // The locks: eight, a backend's own by its slot; or one for all.
    for (era, locks, multixact) in [
        (EraTraffic::NONE, NUM_XLOGINSERT_LOCKS, true),
        (EraTraffic::WAL_INSERT_LOCK, 1, true),
        (EraTraffic::NO_MULTIXACT, NUM_XLOGINSERT_LOCKS, false),
        (EraTraffic::WRITE, 1, false),
    ] {
        let s = Shared::<crate::locks::StdFamily>::with_era(wl, 3, Layout::Dense, era);
        let st = s.write_state().unwrap();
        assert_eq!(st.wal.len(), locks, "{}", era.name());
        assert_eq!(st.multixact.is_some(), multixact, "{}", era.name());
        assert_eq!(st.hold, DEFAULT_WAL_HOLD);
        let same = std::ptr::eq(st.wal_lock(0), st.wal_lock(1));
        assert_eq!(same, locks == 1, "{}", era.name());
        assert!(std::ptr::eq(
            st.wal_lock(1),
            st.wal_lock(1 + NUM_XLOGINSERT_LOCKS)
        ));
    }
    // The lock-level write shapes have the same state and take the era's differences; the
    // other workloads have none.
    for wl in [Workload::PgbenchWrite, Workload::PgbenchWriteStatus] {
        let s = Shared::<crate::locks::StdFamily>::with_era(wl, 1, Layout::Dense, EraTraffic::ALL);
        let st = s.write_state().unwrap();
        assert_eq!((st.wal.len(), st.multixact.is_some()), (1, false));
        assert!(s.era().is_none());
    }
    let other = Shared::<crate::locks::StdFamily>::with_era(
        Workload::PgbenchSelect,
        1,
        Layout::Dense,
        EraTraffic::ALL,
    );
    assert!(other.write_state().is_none() && other.era().is_none());
}

/// Three workers of each pgbench write shape interleaved, with and without 9.2's one
/// WALInsertLock: the trial's checks pass, each lock counted its records (three per `-N`
/// transaction, five per TPC-B-like one, every one under the one lock in the era), and a lost
/// record fails the check, naming it. The hold comes out of `--work`: a `pgbench-n` worker runs
/// the same xorshift steps with any hold (its random state ends equal: each hold is followed by
/// the rest of its part, so the draws keep their order). The lock-level shapes run their rest
/// after the last record, so their draws interleave with the section checks' differently;
/// their CPU per transaction is held to `--work` on the simulator
/// (`bench/tests/sim_engine.rs`, `work_costs_its_nanoseconds_on_every_pgbench_shape`).
#[test]
fn pgbench_write_shapes_wal_records_are_counted_under_their_locks() {
    use crate::era_traffic::EraTraffic;
    type F = crate::locks::StdFamily;
    for (wl, records) in [
        (Workload::PgbenchN, WAL_RECORDS_PER_N),
        (Workload::PgbenchWrite, WAL_RECORDS_PER_N),
        (Workload::PgbenchWriteStatus, WAL_RECORDS_PER_TPCB),
    ] {
        let mut rngs = Vec::new();
        for (era, hold) in [
            (EraTraffic::NONE, DEFAULT_WAL_HOLD),
            (EraTraffic::WRITE, DEFAULT_WAL_HOLD),
            (EraTraffic::WRITE, 0),
            (EraTraffic::WRITE, 7),
        ] {
            let s = Shared::<F>::with_era(wl, 3, Layout::Dense, era).with_wal_hold(hold);
            let cfg = WorkerConfig {
                write_pct: 0,
                work: 100,
                time_every: 2,
                strategy: Strategy::Scan,
                idle_us: 0,
            };
            let mut ws: Vec<Worker> = (0..3).map(|i| Worker::new(i, 3, cfg)).collect();
            for _ in 0..20 {
                for w in ws.iter_mut() {
                    transaction(wl, &s, w);
                }
            }
            check(wl, &s, &ws).unwrap();
            let st = s.write_state().unwrap();
            assert_eq!(st.hold, hold);
            let per_lock: Vec<u64> = st.wal.iter().map(|l| l.shared(|n| *n)).collect();
            let want: Vec<u64> = if era.wal_insert_lock() {
                vec![records * 60]
            } else {
                (0..NUM_XLOGINSERT_LOCKS)
                    .map(|i| if i < 3 { records * 20 } else { 0 })
                    .collect()
            };
            assert_eq!(per_lock, want, "{} {}", wl.name(), era.name());
            rngs.push(ws.iter().map(|w| w.rng).collect::<Vec<_>>());
            st.wal[0].exclusive(|n| *n -= 1);
            let e = check(wl, &s, &ws).unwrap_err();
            assert!(e.contains("WAL records") && e.contains(wl.name()), "{e}");
        }
        if wl == Workload::PgbenchN {
            assert!(
                rngs.windows(2).all(|p| p[0] == p[1]),
                "{} {rngs:?}",
                wl.name()
            );
        }
    }
}
