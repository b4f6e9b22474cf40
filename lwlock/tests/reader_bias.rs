//! The reader-biased LWLock (BRAVO, `RawReaderBiasLwLock`) and its drop-in `ScalableRwLock`
//! under 64 threads (oversubscribed on small machines): read-mostly work, where most shared
//! holds go through the visible-readers table, with writers revoking the bias throughout. Every
//! read checks that no writer is inside and that the multi-word value is not torn; at the end
//! the value equals the number of exclusive sections, and the fast path was taken.

#![cfg(not(loom))]

mod common;

use lwlock::{Mode, RawLwLock, RawReaderBiasLwLock, ScalableRwLock, Tranche};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

const THREADS: usize = 64;
const OPS_PER_THREAD: usize = 8192;
const WORDS: usize = 4;

struct Shared {
    lock: RawReaderBiasLwLock,
    data: UnsafeCell<[u64; WORDS]>,
    writer_inside: AtomicBool,
    readers_inside: AtomicU32,
    writes: AtomicU64,
    /// Shared holds during which the table showed a fast reader (this thread, if it took the
    /// fast path: then at least one is certain).
    fast_seen: AtomicU64,
}

// SAFETY: `data` is only accessed under `lock` (shared for reads, exclusive for writes).
unsafe impl Sync for Shared {}

impl Shared {
    fn write(&self) {
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
        }
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.writer_inside.store(false, Ordering::Relaxed);
    }

    fn read(&self, i: usize) {
        self.readers_inside.fetch_add(1, Ordering::Relaxed);
        if self.lock.fast_readers() > 0 {
            self.fast_seen.fetch_add(1, Ordering::Relaxed);
        }
        if i % 512 == 0 {
            std::thread::yield_now();
        }
        assert!(
            !self.writer_inside.load(Ordering::Relaxed),
            "a reader saw a writer"
        );
        // SAFETY: shared lock held: no writer.
        let d = unsafe { &*self.data.get() };
        assert!(d.iter().all(|w| *w == d[0]), "torn multi-word value: {d:?}");
        self.readers_inside.fetch_sub(1, Ordering::Relaxed);
    }
}

#[test]
fn reader_bias_read_mostly_64_threads() {
    let _dog = common::Watchdog::new("reader-bias", Duration::from_secs(240));
    let s = Arc::new(Shared {
        lock: RawReaderBiasLwLock::with_tranche(Tranche::PROC_ARRAY),
        data: UnsafeCell::new([0; WORDS]),
        writer_inside: AtomicBool::new(false),
        readers_inside: AtomicU32::new(0),
        writes: AtomicU64::new(0),
        fast_seen: AtomicU64::new(0),
    });
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (s, start) = (s.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut mine = 0u64;
                for i in 0..OPS_PER_THREAD {
                    match (i + t) % 128 {
                        0 => {
                            s.lock.acquire(Mode::Exclusive);
                            s.write();
                            mine += 1;
                            // SAFETY: held exclusively.
                            unsafe { s.lock.release(Mode::Exclusive) };
                        }
                        1 => {
                            if s.lock.conditional_acquire(Mode::Exclusive) {
                                s.write();
                                mine += 1;
                                // SAFETY: held exclusively.
                                unsafe { s.lock.release(Mode::Exclusive) };
                            }
                        }
                        2 => {
                            if s.lock.conditional_acquire(Mode::Shared) {
                                s.read(i);
                                // SAFETY: held shared.
                                unsafe { s.lock.release(Mode::Shared) };
                            }
                        }
                        3 => {
                            // A nested shared hold: in the thread's own slot if the first
                            // took it, else on the inner lock; the releases balance either way.
                            s.lock.acquire(Mode::Shared);
                            s.lock.acquire(Mode::Shared);
                            s.read(i);
                            // SAFETY: held shared twice.
                            unsafe { s.lock.release(Mode::Shared) };
                            // SAFETY: as above.
                            unsafe { s.lock.release(Mode::Shared) };
                        }
                        _ => {
                            s.lock.acquire(Mode::Shared);
                            s.read(i);
                            // SAFETY: held shared.
                            unsafe { s.lock.release(Mode::Shared) };
                        }
                    }
                }
                mine
            })
        })
        .collect();
    let mine: u64 = handles
        .into_iter()
        .map(|h| h.join().expect("worker panicked"))
        .sum();
    let writes = s.writes.load(Ordering::Relaxed);
    assert_eq!(writes, mine, "every exclusive section counted once");
    assert!(writes >= (THREADS * OPS_PER_THREAD / 128) as u64);
    // SAFETY: all threads joined.
    assert_eq!(unsafe { *s.data.get() }, [writes; WORDS]);
    assert!(!s.lock.is_locked(), "nobody holds the lock at the end");
    assert_eq!(s.lock.fast_readers(), 0, "a slot left taken");
    let fast = s.fast_seen.load(Ordering::Relaxed);
    assert!(
        fast > 0,
        "no shared hold went through the visible-readers table"
    );
    eprintln!("reader-bias: {writes} exclusive sections, {fast} reads saw a fast reader");
}

#[test]
fn scalable_rwlock_64_threads() {
    let _dog = common::Watchdog::new("ScalableRwLock", Duration::from_secs(120));
    let l = Arc::new(ScalableRwLock::new([0u64; WORDS]));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let l = l.clone();
            std::thread::spawn(move || {
                for i in 0..4096 {
                    if (i + t) % 64 == 0 {
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
    assert_eq!(*l.read(), [(THREADS * 4096 / 64) as u64; WORDS]);
}

/// After a revocation the bias comes back: the inhibition is a multiple of the revocation's
/// length, not forever.
#[test]
fn bias_returns_after_revocation() {
    let l = RawReaderBiasLwLock::new();
    l.acquire(Mode::Shared);
    // SAFETY: held shared.
    unsafe { l.release(Mode::Shared) };
    assert!(l.is_biased());
    l.acquire(Mode::Exclusive);
    assert!(!l.is_biased(), "a writer did not revoke the bias");
    // SAFETY: held exclusively.
    unsafe { l.release(Mode::Exclusive) };
    // Polls (not a timing assertion: the deadline only turns a hang into a failure).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        l.acquire(Mode::Shared);
        // SAFETY: held shared.
        unsafe { l.release(Mode::Shared) };
        if l.is_biased() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the bias never came back after a revocation"
        );
        std::thread::yield_now();
    }
}

/// A nested shared acquire by a fast-path reader while a writer holds the inner lock and waits
/// for that reader's slot: the nested hold must not wait for the inner lock (it would wait for
/// the writer, which waits for it). This deadlocked before nested holds were counted in the slot.
#[test]
fn nested_read_while_a_writer_revokes() {
    let _dog = common::Watchdog::new("reader-bias nested read", Duration::from_secs(60));
    let lock = Arc::new(RawReaderBiasLwLock::new());
    // Turn the bias on (a slow-path reader does), then hold the lock through our slot.
    lock.acquire(Mode::Shared);
    // SAFETY: held shared.
    unsafe { lock.release(Mode::Shared) };
    assert!(lock.is_biased());
    lock.acquire(Mode::Shared);
    assert_eq!(lock.fast_readers(), 1);
    let writer = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            lock.acquire(Mode::Exclusive);
            // SAFETY: held exclusively.
            unsafe { lock.release(Mode::Exclusive) };
        })
    };
    // Wait until the writer holds the inner lock and has revoked the bias (it now waits for
    // our slot).
    while !lock.inner().is_locked_exclusive() || lock.is_biased() {
        std::thread::yield_now();
    }
    lock.acquire(Mode::Shared);
    assert!(
        lock.inner().is_locked_exclusive(),
        "the writer got in past a reader"
    );
    // SAFETY: held shared twice (both through the slot).
    unsafe { lock.release(Mode::Shared) };
    assert_eq!(
        lock.fast_readers(),
        1,
        "the nested release gave the slot up"
    );
    // SAFETY: the first hold.
    unsafe { lock.release(Mode::Shared) };
    writer.join().unwrap();
    assert!(!lock.is_locked());
}
