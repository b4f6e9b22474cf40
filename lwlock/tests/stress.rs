//! 64 threads (oversubscribed on small machines) doing over a million mixed shared, exclusive,
//! conditional and acquire-or-wait operations on each LWLock, checking on every operation that
//! no reader sees a writer, no multi-word value is torn, and at the end that the counter equals
//! the number of exclusive critical sections.

mod common;

use lwlock::{AcquireOrWait, Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const THREADS: usize = 64;
const TOTAL_OPS: usize = 1 << 20;
const WORDS: usize = 4;

struct Shared<L> {
    lock: L,
    data: UnsafeCell<[u64; WORDS]>,
    writer_inside: AtomicBool,
    readers_inside: AtomicU32,
    writes: AtomicU64,
}

// SAFETY: `data` is only accessed under `lock` (shared for reads, exclusive for writes).
unsafe impl<L: Sync> Sync for Shared<L> {}

impl<L: RawLwLock> Shared<L> {
    /// The exclusive critical section. Caller holds `lock` exclusively. Every so often it yields
    /// while holding the lock, so that other threads run into it and take the sleep paths.
    fn write(&self, i: usize) {
        assert!(
            !self.writer_inside.swap(true, Ordering::Relaxed),
            "two writers inside"
        );
        assert_eq!(
            self.readers_inside.load(Ordering::Relaxed),
            0,
            "a writer saw a reader"
        );
        // SAFETY: exclusive lock held.
        let d = unsafe { &mut *self.data.get() };
        for w in d.iter_mut() {
            *w += 1;
            if i % 64 == 0 {
                std::thread::yield_now();
            }
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.writer_inside.store(false, Ordering::Relaxed);
    }

    /// The shared critical section. Caller holds `lock` shared.
    fn read(&self, i: usize) {
        self.readers_inside.fetch_add(1, Ordering::Relaxed);
        if i % 256 == 0 {
            std::thread::yield_now();
        }
        assert!(
            !self.writer_inside.load(Ordering::Relaxed),
            "a reader saw a writer"
        );
        // SAFETY: shared lock held: no writer.
        let d = unsafe { &*self.data.get() };
        let first = d[0];
        assert!(
            d.iter().all(|w| *w == first),
            "torn multi-word value: {d:?}"
        );
        self.readers_inside.fetch_sub(1, Ordering::Relaxed);
    }
}

fn stress<L: RawLwLock + 'static>() {
    let _dog = common::Watchdog::new(L::NAME, Duration::from_secs(240));
    let s = Arc::new(Shared {
        lock: L::with_tranche(Tranche::PROC_ARRAY),
        data: UnsafeCell::new([0; WORDS]),
        writer_inside: AtomicBool::new(false),
        readers_inside: AtomicU32::new(0),
        writes: AtomicU64::new(0),
    });
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (s, start) = (s.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let (mut my_writes, mut slept) = (0u64, 0u64);
                for i in 0..TOTAL_OPS / THREADS {
                    match (i + t) % 16 {
                        0 | 1 => {
                            slept += u64::from(!s.lock.acquire(Mode::Exclusive));
                            s.write(i);
                            my_writes += 1;
                            // SAFETY: held exclusively.
                            unsafe { s.lock.release(Mode::Exclusive) };
                        }
                        2 => {
                            if s.lock.conditional_acquire(Mode::Exclusive) {
                                s.write(i);
                                my_writes += 1;
                                // SAFETY: held exclusively.
                                unsafe { s.lock.release(Mode::Exclusive) };
                            }
                        }
                        3 => {
                            if s.lock.acquire_or_wait(Mode::Exclusive) == AcquireOrWait::Acquired {
                                s.write(i);
                                my_writes += 1;
                                // SAFETY: held exclusively.
                                unsafe { s.lock.release(Mode::Exclusive) };
                            }
                        }
                        4 => {
                            if s.lock.conditional_acquire(Mode::Shared) {
                                s.read(i);
                                // SAFETY: held shared.
                                unsafe { s.lock.release(Mode::Shared) };
                            }
                        }
                        _ => {
                            slept += u64::from(!s.lock.acquire(Mode::Shared));
                            s.read(i);
                            // SAFETY: held shared.
                            unsafe { s.lock.release(Mode::Shared) };
                        }
                    }
                }
                (my_writes, slept)
            })
        })
        .collect();
    let (mut mine, mut slept) = (0, 0);
    for h in handles {
        let (w, s) = h.join().expect("worker panicked");
        mine += w;
        slept += s;
    }
    assert!(slept > 0, "the run never exercised the sleep path");
    let writes = s.writes.load(Ordering::Relaxed);
    assert_eq!(writes, mine, "every exclusive section counted once");
    assert!(
        writes >= (TOTAL_OPS / 8) as u64,
        "at least the unconditional writes happened"
    );
    // SAFETY: all threads joined.
    let d = unsafe { &*s.data.get() };
    assert_eq!(
        *d, [writes; WORDS],
        "the counter equals the sum of increments"
    );
    assert!(!s.lock.is_locked(), "nobody holds the lock at the end");
    eprintln!(
        "{}: {writes} exclusive sections, {slept} acquisitions slept",
        L::NAME
    );
}

#[test]
fn atomic_lwlock_64_threads() {
    stress::<RawAtomicLwLock>();
}

#[test]
fn classic_lwlock_64_threads() {
    stress::<RawClassicLwLock>();
}

#[test]
fn drop_in_rwlock_64_threads() {
    let _dog = common::Watchdog::new("RwLock", Duration::from_secs(120));
    let l = Arc::new(lwlock::RwLock::new([0u64; WORDS]));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let l = l.clone();
            std::thread::spawn(move || {
                for i in 0..4096 {
                    if (i + t) % 8 == 0 {
                        let mut g = l.write();
                        for w in g.iter_mut() {
                            *w += 1;
                        }
                    } else {
                        let g = l.read();
                        assert!(g.iter().all(|w| *w == g[0]), "torn: {:?}", *g);
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(*l.read(), [(THREADS * 4096 / 8) as u64; WORDS]);
}
