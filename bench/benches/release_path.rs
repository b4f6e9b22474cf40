//! One-thread cost of each step of a group operation's fast path (no contention): where the
//! last-releaser FlexLock's time goes, step by step, against the direct atomic LWLock and the
//! holder-serves variant.
//!
//! `cargo bench -p bench --bench release_path`. Each benchmark is one operation (an increment
//! under the exclusive lock) on one thread:
//! * `direct`: `acquire(Exclusive)`, increment, `release` (the atomic LWLock as the harness
//!   uses it);
//! * `conditional`: the same with `conditional_acquire` (the FlexLock's direct attempt);
//! * `+swap`: plus a `swap` of a padded queue head (the detach of an empty queue);
//! * `+load`: plus a load of it instead (the load-first detach);
//! * `+fence`: plus the releaser's `fence(SeqCst)` and a load of the head (the handshake);
//! * `+swap+fence`: both (the last releaser's release before the load-first detach);
//! * `flex-releaser`, `flex-holder`, `flex-leader`: `group` of the three FlexLocks.

use criterion::{criterion_group, criterion_main, Criterion};
use crossbeam_utils::CachePadded;
use flexlock::{FlexLock, GroupLock, GroupPolicy, HolderServesLock};
use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::time::Duration;

const EMPTY: u32 = u32::MAX;

fn steps(c: &mut Criterion) {
    let mut g = c.benchmark_group("release_path");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600));
    let lock = RawAtomicLwLock::new();
    let head = CachePadded::new(AtomicU32::new(EMPTY));
    let mut v = 0u64;
    g.bench_function("direct", |b| {
        b.iter(|| {
            lock.acquire(Mode::Exclusive);
            v = black_box(v + 1);
            // SAFETY: acquired just above.
            unsafe { lock.release(Mode::Exclusive) };
        })
    });
    g.bench_function("conditional", |b| {
        b.iter(|| {
            assert!(lock.conditional_acquire(Mode::Exclusive));
            v = black_box(v + 1);
            // SAFETY: acquired just above.
            unsafe { lock.release(Mode::Exclusive) };
        })
    });
    g.bench_function("+swap", |b| {
        b.iter(|| {
            assert!(lock.conditional_acquire(Mode::Exclusive));
            v = black_box(v + 1);
            black_box(head.swap(EMPTY, Ordering::Acquire));
            // SAFETY: acquired just above.
            unsafe { lock.release(Mode::Exclusive) };
        })
    });
    g.bench_function("+load", |b| {
        b.iter(|| {
            assert!(lock.conditional_acquire(Mode::Exclusive));
            v = black_box(v + 1);
            black_box(head.load(Ordering::Relaxed));
            // SAFETY: acquired just above.
            unsafe { lock.release(Mode::Exclusive) };
        })
    });
    g.bench_function("+fence", |b| {
        b.iter(|| {
            assert!(lock.conditional_acquire(Mode::Exclusive));
            v = black_box(v + 1);
            black_box(head.load(Ordering::Relaxed));
            // SAFETY: acquired just above.
            unsafe { lock.release(Mode::Exclusive) };
            fence(Ordering::SeqCst);
            black_box(head.load(Ordering::Relaxed));
        })
    });
    g.bench_function("+swap+fence", |b| {
        b.iter(|| {
            assert!(lock.conditional_acquire(Mode::Exclusive));
            v = black_box(v + 1);
            black_box(head.swap(EMPTY, Ordering::Acquire));
            // SAFETY: acquired just above.
            unsafe { lock.release(Mode::Exclusive) };
            fence(Ordering::SeqCst);
            black_box(head.load(Ordering::Relaxed));
        })
    });
    let releaser = FlexLock::<RawAtomicLwLock, u64>::new(0, GroupPolicy::LastReleaser);
    g.bench_function("flex-releaser", |b| {
        b.iter(|| releaser.group(|v| *v = black_box(*v + 1)))
    });
    let holder = HolderServesLock::<RawAtomicLwLock, u64>::new(0);
    g.bench_function("flex-holder", |b| {
        b.iter(|| holder.group(|v| *v = black_box(*v + 1)))
    });
    let leader = FlexLock::<RawAtomicLwLock, u64>::new(0, GroupPolicy::Leader);
    g.bench_function("flex-leader", |b| {
        b.iter(|| leader.group(|v| *v = black_box(*v + 1)))
    });
    g.bench_function("flex-holder-write", |b| {
        b.iter(|| *holder.write() = black_box(1))
    });
    g.bench_function("flex-releaser-write", |b| {
        b.iter(|| *releaser.write() = black_box(1))
    });
    g.finish();
}

criterion_group!(benches, steps);
criterion_main!(benches);
