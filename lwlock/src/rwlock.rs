//! The drop-in `RwLock<T>`: `lock_api::RwLock` (the 0.4 line, which parking_lot 0.12 uses) over
//! the atomic-state LWLock under the empty-yield policy ([`RawEmptyYieldLwLock`]: the adaptive
//! spin, ended by a yield that finds the CPU idle); the same with the adaptive spin alone
//! ([`AdaptiveRwLock`], the default before), task-fair ([`TaskFairRwLock`], the default before
//! that), with a 250 µs writer bound and no spinning
//! ([`HandoffRwLock`]), with PostgreSQL's barging policy ([`BargingRwLock`]) and over the classic
//! LWLock.
//!
//! Every atomic flavour has every capability parking_lot's `RwLock` has: recursive reads,
//! upgradable reads (`upgradable_read`, `upgrade`, `try_upgrade`, `with_upgraded`),
//! downgrades, timed acquires (`try_read_for`, `try_write_until`, ...) and fair unlocks
//! (`unlock_fair`, `bump`).
//!
//! ```
//! use lwlock::RwLock;
//! static COUNTER: RwLock<u64> = RwLock::new(0);
//! *COUNTER.write() += 1;
//! assert_eq!(*COUNTER.read(), 1);
//! ```

#![cfg(not(loom))]
use crate::{
    RawAdaptiveLwLock, RawAtomicLwLock, RawClassicLwLock, RawEmptyYieldLwLock, RawHandoffLwLock,
    RawTaskFairLwLock,
};

/// The raw lock under [`RwLock`], under parking_lot's name: `lock_api::RwLock<RawRwLock, T>` is
/// `RwLock<T>` (`lib.rs` checks it at compile time).
pub type RawRwLock = RawEmptyYieldLwLock;
/// A reader-writer lock over the atomic-state LWLock (PostgreSQL 9.5+) under the empty-yield
/// policy ([`EmptyYield`](crate::EmptyYield)): parking_lot's recipe on the LWLock's word, with a
/// spin that stops when a yield finds its CPU idle. `const`-constructible; 16 bytes of lock
/// state.
///
/// **What a thread does when the lock is held.** A reader or a writer held off by a writer spins
/// a bounded while (3 rounds of 2, 4, 8 PAUSEs, then up to 7 yields; only while nobody is queued
/// and no handoff is pending; a yield that comes back within 2 µs, with nothing else to run on
/// its CPU, ends the spin), then queues and sleeps; a release wakes the head writer or the
/// queued readers, which compete with newcomers (barging) and queue again if they lose. A writer
/// held off by readers queues at once with the lock's handoff bit (new readers queue behind it,
/// as behind parking_lot's writer bit) and spins for the readers inside to drain before it
/// sleeps.
///
/// **Starvation bound.** A writer still queued 250 µs after it first queued takes the handoff
/// bit and the front of the queue, unless another waiter owns the bit or a writer is queued ahead
/// of it; then no newcomer gets in and the release that frees the lock wakes it. Nobody takes
/// the bit or the front ahead of a queued writer, so a writer's wait past its bound is bounded by
/// the waiters ahead of it. Readers have no bound of their own: they wait for the writers queued
/// ahead of them and for the owner of the bit. `read_recursive` ignores the bit (it never waits
/// for queued writers, so a thread holding a read lock can take another). `unlock_fair` / `bump`
/// hand the lock to the queue head.
///
/// **Cost on the word.** The uncontended acquire is one CAS and the release one `fetch_sub`, as
/// under every policy; a spinner adds plain loads; no bit beyond the handoff bit.
///
/// [`TaskFairRwLock`] is the task-fair policy (every queued writer closes the lock to newcomers);
/// [`HandoffRwLock`] lets readers barge for up to 250 µs of a writer's wait and does not spin;
/// [`BargingRwLock`] is PostgreSQL's policy unchanged (readers may starve a writer).
///
/// Guards are `Send` (an LWLock hold is not tied to a thread).
pub type RwLock<T> = lock_api::RwLock<RawRwLock, T>;
/// Shared guard of [`RwLock`].
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawRwLock, T>;
/// Exclusive guard of [`RwLock`].
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawRwLock, T>;
/// Upgradable guard of [`RwLock`].
pub type RwLockUpgradableReadGuard<'a, T> = lock_api::RwLockUpgradableReadGuard<'a, RawRwLock, T>;
/// A mapped shared guard of [`RwLock`].
pub type MappedRwLockReadGuard<'a, T> = lock_api::MappedRwLockReadGuard<'a, RawRwLock, T>;
/// A mapped exclusive guard of [`RwLock`].
pub type MappedRwLockWriteGuard<'a, T> = lock_api::MappedRwLockWriteGuard<'a, RawRwLock, T>;
/// A `const` constructor for [`RwLock`] (parking_lot's `const_rwlock`).
pub const fn const_rwlock<T>(val: T) -> RwLock<T> {
    RwLock::const_new(RawRwLock::new(), val)
}

/// [`RwLock`] without the empty-yield rule ([`RawAdaptiveLwLock`]; `lwlock::RwLock` before it):
/// the spin always runs its rounds. Same capabilities as [`RwLock`].
pub type AdaptiveRwLock<T> = lock_api::RwLock<RawAdaptiveLwLock, T>;
/// Shared guard of [`AdaptiveRwLock`].
pub type AdaptiveRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawAdaptiveLwLock, T>;
/// Exclusive guard of [`AdaptiveRwLock`].
pub type AdaptiveRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawAdaptiveLwLock, T>;

/// A task-fair reader-writer lock over the atomic-state LWLock ([`RawTaskFairLwLock`];
/// `lwlock::RwLock` before the spinning policies): readers share the lock and a newcomer takes a
/// free or read-held lock without queueing, except that from the moment a writer queues, new
/// readers and writers queue behind it (the writer sets the lock's handoff bit as it queues, and
/// the release that frees the lock wakes it); writers queued behind that one take the bit in
/// turn. Neither readers nor writers starve, but with more threads than cores the lock passes
/// only to threads that must first be woken and scheduled (a convoy). Same capabilities as
/// [`RwLock`].
pub type TaskFairRwLock<T> = lock_api::RwLock<RawTaskFairLwLock, T>;
/// Shared guard of [`TaskFairRwLock`].
pub type TaskFairRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawTaskFairLwLock, T>;
/// Exclusive guard of [`TaskFairRwLock`].
pub type TaskFairRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawTaskFairLwLock, T>;
/// Upgradable guard of [`TaskFairRwLock`].
pub type TaskFairRwLockUpgradableReadGuard<'a, T> =
    lock_api::RwLockUpgradableReadGuard<'a, RawTaskFairLwLock, T>;

/// A reader-writer lock over the atomic-state LWLock with a bounded writer wait
/// ([`RawHandoffLwLock`]): readers barge as in PostgreSQL until the first queued writer has
/// waited 250 µs; then it sets the handoff bit, new readers and writers queue behind it, and the
/// release that frees the lock wakes it (Linux rwsem's handoff). Same capabilities as
/// [`RwLock`].
pub type HandoffRwLock<T> = lock_api::RwLock<RawHandoffLwLock, T>;
/// Shared guard of [`HandoffRwLock`].
pub type HandoffRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawHandoffLwLock, T>;
/// Exclusive guard of [`HandoffRwLock`].
pub type HandoffRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawHandoffLwLock, T>;
/// Upgradable guard of [`HandoffRwLock`].
pub type HandoffRwLockUpgradableReadGuard<'a, T> =
    lock_api::RwLockUpgradableReadGuard<'a, RawHandoffLwLock, T>;

/// A reader-writer lock over the atomic-state LWLock with PostgreSQL's policy unchanged
/// ([`RawAtomicLwLock`]): shared lockers barge past queued writers, so under a steady stream
/// of readers a writer may wait indefinitely. Same capabilities as [`RwLock`].
pub type BargingRwLock<T> = lock_api::RwLock<RawAtomicLwLock, T>;
/// Shared guard of [`BargingRwLock`].
pub type BargingRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawAtomicLwLock, T>;
/// Exclusive guard of [`BargingRwLock`].
pub type BargingRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawAtomicLwLock, T>;
/// Upgradable guard of [`BargingRwLock`].
pub type BargingRwLockUpgradableReadGuard<'a, T> =
    lock_api::RwLockUpgradableReadGuard<'a, RawAtomicLwLock, T>;
/// A mapped shared guard of [`BargingRwLock`].
pub type MappedBargingRwLockReadGuard<'a, T> =
    lock_api::MappedRwLockReadGuard<'a, RawAtomicLwLock, T>;
/// A mapped exclusive guard of [`BargingRwLock`].
pub type MappedBargingRwLockWriteGuard<'a, T> =
    lock_api::MappedRwLockWriteGuard<'a, RawAtomicLwLock, T>;

/// A reader-writer lock over the classic spinlock-protected LWLock (PostgreSQL ≤ 9.4).
pub type ClassicRwLock<T> = lock_api::RwLock<RawClassicLwLock, T>;
/// Shared guard of [`ClassicRwLock`].
pub type ClassicRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawClassicLwLock, T>;
/// Exclusive guard of [`ClassicRwLock`].
pub type ClassicRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawClassicLwLock, T>;
/// A mapped shared guard of [`ClassicRwLock`].
pub type MappedClassicRwLockReadGuard<'a, T> =
    lock_api::MappedRwLockReadGuard<'a, RawClassicLwLock, T>;
/// A mapped exclusive guard of [`ClassicRwLock`].
pub type MappedClassicRwLockWriteGuard<'a, T> =
    lock_api::MappedRwLockWriteGuard<'a, RawClassicLwLock, T>;
/// A mapped shared guard of [`HandoffRwLock`].
pub type MappedHandoffRwLockReadGuard<'a, T> =
    lock_api::MappedRwLockReadGuard<'a, RawHandoffLwLock, T>;
/// A mapped exclusive guard of [`HandoffRwLock`].
pub type MappedHandoffRwLockWriteGuard<'a, T> =
    lock_api::MappedRwLockWriteGuard<'a, RawHandoffLwLock, T>;

/// Guards that own an `Arc` of the lock (`RwLock::read_arc`, `write_arc`,
/// `upgradable_read_arc`; feature `arc_lock`, as in parking_lot).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcRwLockReadGuard<T> = lock_api::ArcRwLockReadGuard<RawRwLock, T>;
/// An exclusive guard that owns an `Arc` of the [`RwLock`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcRwLockWriteGuard<T> = lock_api::ArcRwLockWriteGuard<RawRwLock, T>;
/// An upgradable guard that owns an `Arc` of the [`RwLock`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcRwLockUpgradableReadGuard<T> = lock_api::ArcRwLockUpgradableReadGuard<RawRwLock, T>;
/// A shared guard that owns an `Arc` of the [`BargingRwLock`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcBargingRwLockReadGuard<T> = lock_api::ArcRwLockReadGuard<RawAtomicLwLock, T>;
/// An exclusive guard that owns an `Arc` of the [`BargingRwLock`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcBargingRwLockWriteGuard<T> = lock_api::ArcRwLockWriteGuard<RawAtomicLwLock, T>;
/// A shared guard that owns an `Arc` of the [`ClassicRwLock`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcClassicRwLockReadGuard<T> = lock_api::ArcRwLockReadGuard<RawClassicLwLock, T>;
/// An exclusive guard that owns an `Arc` of the [`ClassicRwLock`] (feature `arc_lock`).
#[cfg(all(not(loom), feature = "arc_lock"))]
pub type ArcClassicRwLockWriteGuard<T> = lock_api::ArcRwLockWriteGuard<RawClassicLwLock, T>;

#[cfg(test)]
mod tests {
    use super::*;

    static GLOBAL: RwLock<u64> = RwLock::new(7);
    static GLOBAL_CLASSIC: ClassicRwLock<[u64; 2]> = ClassicRwLock::new([0, 0]);

    #[test]
    fn statics_and_guards() {
        {
            let r1 = GLOBAL.read();
            let r2 = GLOBAL.read();
            assert_eq!(*r1 + *r2, 14);
            assert!(GLOBAL.try_write().is_none());
        }
        *GLOBAL.write() += 1;
        assert_eq!(*GLOBAL.read(), 8);
        let mut w = GLOBAL_CLASSIC.write();
        w[0] = 1;
        w[1] = 1;
        drop(w);
        assert_eq!(*GLOBAL_CLASSIC.read(), [1, 1]);
        assert!(!GLOBAL_CLASSIC.is_locked());
    }

    #[test]
    fn mapped_guards_and_send() {
        let l = RwLock::new((1u32, String::from("x")));
        let m = RwLockWriteGuard::map(l.write(), |v| &mut v.1);
        fn is_send<T: Send>(_: &T) {}
        is_send(&m);
        drop(m);
        let c = ClassicRwLock::new([1u8, 2]);
        let r: MappedClassicRwLockReadGuard<'_, u8> =
            ClassicRwLockReadGuard::map(c.read(), |v| &v[1]);
        assert_eq!(*r, 2);
        let r = RwLockReadGuard::map(l.read(), |v| &v.0);
        assert_eq!(*r, 1);
    }
}
