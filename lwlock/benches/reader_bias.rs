//! One-thread costs of the reader-biased LWLock (BRAVO) against the atomic LWLock it wraps:
//! a shared acquire + release with the bias on (the fast path), an exclusive acquire + release
//! with the bias off, and a write that must revoke the bias (a read, which re-biases once the
//! inhibition has passed, then a write).
//!
//! `cargo bench -p lwlock --bench reader_bias`.

use criterion::{criterion_group, criterion_main, Criterion};
use lwlock::{Mode, RawAtomicLwLock, RawLwLock, RawReaderBiasLwLock};
use std::time::Duration;

fn pair<L: RawLwLock>(l: &L, mode: Mode) {
    l.acquire(mode);
    // SAFETY: acquired just above.
    unsafe { l.release(mode) };
}

fn costs(c: &mut Criterion) {
    let mut g = c.benchmark_group("reader_bias");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(600));
    let atomic = RawAtomicLwLock::new();
    let biased = RawReaderBiasLwLock::new();
    pair(&biased, Mode::Shared);
    assert!(biased.is_biased());
    g.bench_function("atomic/shared", |b| b.iter(|| pair(&atomic, Mode::Shared)));
    g.bench_function("reader-bias/shared (fast path)", |b| {
        b.iter(|| pair(&biased, Mode::Shared))
    });
    g.bench_function("atomic/exclusive", |b| {
        b.iter(|| pair(&atomic, Mode::Exclusive))
    });
    let off = RawReaderBiasLwLock::new();
    g.bench_function("reader-bias/exclusive (bias off)", |b| {
        b.iter(|| pair(&off, Mode::Exclusive))
    });
    let revoke = RawReaderBiasLwLock::new();
    g.bench_function("reader-bias/read then revoking write", |b| {
        b.iter(|| {
            pair(&revoke, Mode::Shared);
            pair(&revoke, Mode::Exclusive);
        })
    });
    g.bench_function("atomic/read then write", |b| {
        b.iter(|| {
            pair(&atomic, Mode::Shared);
            pair(&atomic, Mode::Exclusive);
        })
    });
    g.finish();
}

criterion_group!(benches, costs);
criterion_main!(benches);
