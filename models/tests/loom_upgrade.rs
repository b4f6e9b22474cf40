//! loom models of the upgrader's wait (a variant beyond PostgreSQL, see
//! `lwlock/src/atomic_state/upgrade.rs`, `upgrade` and `upgrade_until`): an upgradable holder
//! upgrades while one or two readers still hold the lock; it must sleep only until the last of
//! them leaves, and then see everything each reader did inside (the readers' reads of the
//! protected pair, and each reader's own note written under its shared hold).
//!
//! The readers are inside before the upgrade starts (each says so on an atomic flag before it
//! reads, so the flag orders nothing the upgrader must learn from the lock), which makes every
//! interleaving one of "the upgrade closes the lock, then the readers leave": a reader's release
//! may come before the upgrader's futex compare (the wait returns at once, and only the
//! upgrader's Acquire reload of the state orders the reader's section before its write), or
//! after it (the upgrader sleeps and the last reader's release wakes it).
//!
//! What the models rest on: the futex emulation of `lwlock/src/sync/model.rs` adds no ordering a
//! kernel futex does not give (a compare that orders nothing, an edge only from a wake to the
//! waiter it wakes). On the emulation that synchronised the compare with every earlier wake, the
//! weakened reload (mutant `upgrade_reload_relaxed`) survived the one-reader model; see
//! docs/reliability.md.
//!
//! What they cannot prove: readers that arrive after the upgrade (they queue behind EXCLUSIVE:
//! `loom_dropin::upgrade_vs_readers` covers a reader that may come before or after), more than
//! two readers, and the upgrader's own release path beyond one exclusive release.
#![cfg(loom)]

use lwlock::sync::{self, AtomicU32, Ordering};
use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
use models::scenarios::Shared;
use models::Protected;
use std::sync::Arc;

/// The upgrader's lock and data, the readers' notes and their "inside" flags.
struct Upgrade {
    s: Arc<Shared<RawAtomicLwLock>>,
    /// Reader `i`'s note: what it read, written under its shared hold, read by the upgrader
    /// after the upgrade (the lock must order the write before that read).
    notes: Vec<Protected<u64>>,
    /// How many readers hold the lock (set before they read: orders only their acquire).
    inside: AtomicU32,
}

/// Spawns `readers` readers that each take a shared hold, say so, read the pair into their note
/// and leave; the main thread, holding an upgradable read, waits until they are all inside,
/// upgrades with `upgrade`, then checks the notes and writes the pair.
fn upgrade_with_readers(readers: usize, upgrade: fn(&RawAtomicLwLock)) {
    let u = Arc::new(Upgrade {
        s: Shared::<RawAtomicLwLock>::new(),
        notes: (0..readers).map(|_| Protected::new(u64::MAX)).collect(),
        inside: AtomicU32::new(0),
    });
    u.s.lock.acquire_upgradable();
    let handles: Vec<_> = (0..readers)
        .map(|i| {
            let u = u.clone();
            sync::thread::spawn(move || {
                u.s.lock.acquire(Mode::Shared);
                // Relaxed: the flag only tells the upgrader when to start; what the reader does
                // next must be ordered by the lock alone.
                u.inside.fetch_add(1, Ordering::Relaxed);
                // SAFETY: held shared.
                let (a, b) = unsafe { u.s.data.read(|d| *d) };
                assert_eq!(a, b, "a reader saw a half-applied update");
                // SAFETY: only reader `i` writes note `i`, under its hold; the upgrader reads it
                // only once it holds the lock exclusively (after this hold ended).
                unsafe { u.notes[i].write(|n| *n = a) };
                // SAFETY: held shared, taken above.
                unsafe { u.s.lock.release(Mode::Shared) };
            })
        })
        .collect();
    while u.inside.load(Ordering::Relaxed) < readers as u32 {
        sync::thread::yield_now();
    }
    upgrade(&u.s.lock);
    for (i, note) in u.notes.iter().enumerate() {
        // SAFETY: held exclusively: every reader's hold ended before the upgrade returned.
        let seen = unsafe { note.read(|n| *n) };
        assert_eq!(seen, 0, "reader {i}'s note is not visible to the upgrader");
    }
    u.s.bump();
    // SAFETY: held exclusively after the upgrade.
    unsafe { u.s.lock.release(Mode::Exclusive) };
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(u.s.value(), 1, "the upgrader's update was lost");
    u.s.assert_quiescent();
}

/// The untimed upgrade.
fn plain(lock: &RawAtomicLwLock) {
    // SAFETY: the caller holds an upgradable read.
    unsafe { lock.upgrade() };
}

/// The timed upgrade; under loom its deadline passes after one yield unless the word changed,
/// so on a timeout the upgrader (back to upgradable) upgrades again without one.
fn timed(lock: &RawAtomicLwLock) {
    // SAFETY: the caller holds an upgradable read (also after a timed-out attempt).
    unsafe {
        if !lock.upgrade_until(sync::deadline_after(std::time::Duration::from_secs(1))) {
            lock.upgrade();
        }
    }
}

models::loom_model! {
    /// Upgrade with one reader inside: the upgrader sees the reader's section, and is woken.
    upgrade_one_reader_leaves, threads: 2, bound: None, || upgrade_with_readers(1, plain)
}

models::loom_model! {
    /// Upgrade with two readers inside: it sees both sections (the last reader's release
    /// heads a release sequence through the first's), and only the last reader wakes it.
    upgrade_two_readers_leave, threads: 3, bound: Some(3), || upgrade_with_readers(2, plain)
}

models::loom_model! {
    /// Timed upgrade with one reader inside: a wait cut short by the reader's leaving orders
    /// nothing; the upgrader's reload does.
    upgrade_until_one_reader_leaves, threads: 2, bound: None, || upgrade_with_readers(1, timed)
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// The upgrader's reload after its futex wait weakened to Relaxed: when the reader left
    /// before the compare, nothing orders the reader's section before the upgrader's write.
    #[test]
    fn mutant_upgrade_reload_relaxed() {
        expect_caught(
            "upgrade_one_reader_leaves",
            "upgrade_reload_relaxed",
            Failure::Race,
            T,
        );
    }

    /// The same in the timed upgrade's loop.
    #[test]
    fn mutant_upgrade_until_reload_relaxed() {
        expect_caught(
            "upgrade_until_one_reader_leaves",
            "upgrade_until_reload_relaxed",
            Failure::Race,
            T,
        );
    }
}
