//! Uncontended shared and exclusive acquire+release for every lock of the trait, the drop-in
//! guards (`lwlock::RwLock`, the empty-yield policy; `lwlock::BargingRwLock`, PostgreSQL's), with
//! parking_lot's and std's `RwLock` as baselines, and `lwlock::Mutex` beside `parking_lot::Mutex`.
//!
//! `cargo bench -p lwlock --bench uncontended` (a 2 s window per function; the command line's
//! `--measurement-time S` overrides it: the window is configured in `criterion_group!`, which
//! applies the command line last).

use criterion::{criterion_group, criterion_main, Criterion};
use lwlock::{
    LockApiAdapter, Mode, Named, RawAtomicLwLock, RawClassicLwLock, RawHandoffLwLock, RawLwLock,
    Tranche,
};
use std::hint::black_box;
use std::time::Duration;

/// parking_lot's raw lock, named for the adapter.
struct ParkingLot(parking_lot::RawRwLock);

// SAFETY: forwards every method to parking_lot's `RawRwLock`.
unsafe impl lock_api::RawRwLock for ParkingLot {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = ParkingLot(<parking_lot::RawRwLock as lock_api::RawRwLock>::INIT);
    type GuardMarker = lock_api::GuardNoSend;
    fn lock_shared(&self) {
        self.0.lock_shared()
    }
    fn try_lock_shared(&self) -> bool {
        self.0.try_lock_shared()
    }
    unsafe fn unlock_shared(&self) {
        // SAFETY: forwarded caller contract.
        unsafe { self.0.unlock_shared() }
    }
    fn lock_exclusive(&self) {
        self.0.lock_exclusive()
    }
    fn try_lock_exclusive(&self) -> bool {
        self.0.try_lock_exclusive()
    }
    unsafe fn unlock_exclusive(&self) {
        // SAFETY: forwarded caller contract.
        unsafe { self.0.unlock_exclusive() }
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

impl Named for ParkingLot {
    const NAME: &'static str = "parking-lot";
}

fn trait_lock<L: RawLwLock>(c: &mut Criterion) {
    let lock = L::with_tranche(Tranche::DEFAULT);
    let mut g = c.benchmark_group("uncontended");
    g.bench_function(format!("shared/{}", L::NAME), |b| {
        b.iter(|| {
            black_box(&lock).acquire(Mode::Shared);
            // SAFETY: held shared.
            unsafe { black_box(&lock).release(Mode::Shared) };
        })
    });
    g.bench_function(format!("exclusive/{}", L::NAME), |b| {
        b.iter(|| {
            black_box(&lock).acquire(Mode::Exclusive);
            // SAFETY: held exclusively.
            unsafe { black_box(&lock).release(Mode::Exclusive) };
        })
    });
    g.finish();
}

fn baselines(c: &mut Criterion) {
    let pl = parking_lot::RwLock::new(0u64);
    let std_lock = std::sync::RwLock::new(0u64);
    let dropin = lwlock::RwLock::new(0u64);
    let barging = lwlock::BargingRwLock::new(0u64);
    let mut g = c.benchmark_group("uncontended");
    g.bench_function("shared/lwlock::RwLock", |b| {
        b.iter(|| drop(black_box(&dropin).read()))
    });
    g.bench_function("exclusive/lwlock::RwLock", |b| {
        b.iter(|| drop(black_box(&dropin).write()))
    });
    g.bench_function("shared/lwlock::BargingRwLock", |b| {
        b.iter(|| drop(black_box(&barging).read()))
    });
    g.bench_function("exclusive/lwlock::BargingRwLock", |b| {
        b.iter(|| drop(black_box(&barging).write()))
    });
    g.bench_function("shared/parking_lot::RwLock", |b| {
        b.iter(|| drop(black_box(&pl).read()))
    });
    g.bench_function("exclusive/parking_lot::RwLock", |b| {
        b.iter(|| drop(black_box(&pl).write()))
    });
    let mutex = lwlock::Mutex::new(0u64);
    let pl_mutex = parking_lot::Mutex::new(0u64);
    g.bench_function("exclusive/lwlock::Mutex", |b| {
        b.iter(|| drop(black_box(&mutex).lock()))
    });
    g.bench_function("exclusive/parking_lot::Mutex", |b| {
        b.iter(|| drop(black_box(&pl_mutex).lock()))
    });
    g.bench_function("shared/std::sync::RwLock", |b| {
        b.iter(|| drop(black_box(&std_lock).read().unwrap()))
    });
    g.bench_function("exclusive/std::sync::RwLock", |b| {
        b.iter(|| drop(black_box(&std_lock).write().unwrap()))
    });
    g.finish();
}

fn all(c: &mut Criterion) {
    trait_lock::<RawAtomicLwLock>(c);
    trait_lock::<RawHandoffLwLock>(c);
    trait_lock::<lwlock::RawTaskFairLwLock>(c);
    trait_lock::<lwlock::RawAdaptiveLwLock>(c);
    trait_lock::<RawClassicLwLock>(c);
    trait_lock::<LockApiAdapter<ParkingLot>>(c);
    baselines(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = all
}
criterion_main!(benches);
