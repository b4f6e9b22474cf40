//! The drop-in `RwLock<T>`: `lock_api::RwLock` (the 0.4 line, which parking_lot 0.12 uses) over
//! the atomic-state LWLock, and the same over the classic one.
//!
//! ```
//! use lwlock::RwLock;
//! static COUNTER: RwLock<u64> = RwLock::new(0);
//! *COUNTER.write() += 1;
//! assert_eq!(*COUNTER.read(), 1);
//! ```

#![cfg(not(loom))]
use crate::{RawAtomicLwLock, RawClassicLwLock};

/// A reader-writer lock over the atomic-state LWLock (PostgreSQL 9.5+). `const`-constructible.
pub type RwLock<T> = lock_api::RwLock<RawAtomicLwLock, T>;
/// Shared guard of [`RwLock`].
pub type RwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawAtomicLwLock, T>;
/// Exclusive guard of [`RwLock`].
pub type RwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawAtomicLwLock, T>;
/// A mapped shared guard of [`RwLock`].
pub type MappedRwLockReadGuard<'a, T> = lock_api::MappedRwLockReadGuard<'a, RawAtomicLwLock, T>;
/// A mapped exclusive guard of [`RwLock`].
pub type MappedRwLockWriteGuard<'a, T> = lock_api::MappedRwLockWriteGuard<'a, RawAtomicLwLock, T>;

/// A reader-writer lock over the classic spinlock-protected LWLock (PostgreSQL ≤ 9.4).
pub type ClassicRwLock<T> = lock_api::RwLock<RawClassicLwLock, T>;
/// Shared guard of [`ClassicRwLock`].
pub type ClassicRwLockReadGuard<'a, T> = lock_api::RwLockReadGuard<'a, RawClassicLwLock, T>;
/// Exclusive guard of [`ClassicRwLock`].
pub type ClassicRwLockWriteGuard<'a, T> = lock_api::RwLockWriteGuard<'a, RawClassicLwLock, T>;

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
        let r = RwLockReadGuard::map(l.read(), |v| &v.0);
        assert_eq!(*r, 1);
    }
}
