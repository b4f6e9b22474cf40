//! [`GroupLock`]: the API every group lock of this crate shares ([`crate::FlexLock`] under both
//! policies, [`crate::HolderServesLock`], [`crate::ClogGroupLock`]), written once.
//!
//! Mirrors no single PostgreSQL function: it is what `ProcArrayLock` with
//! `ProcArrayGroupClearXid` and `XactSLRULock` with `TransactionGroupUpdateXidStatus` offer their
//! callers: `LWLockAcquire` / `LWLockConditionalAcquire` in either mode, and the group update.
//!
//! # Design
//! Each lock type implements one method, [`GroupLock::group_keyed`] (its policy's protocol), and
//! names its state (the shared core of `group/core.rs`); every other method is provided here over
//! that state, so the guards, counters and accessors exist once. The trait is sealed: the
//! protocols' invariants are those of this crate's core, which other crates cannot reach.
//!
//! **The key.** Only [`crate::ClogGroupLock`] is keyed: an operation joins only a group whose
//! operations have its key (the CLOG page); the other locks ignore the key. [`GroupLock::group`]
//! is `group_keyed(0, op)`: for the clog lock, every such operation is on one page (page 0), the
//! protocol of `ProcArrayGroupClearXid`.

use crate::group::core::Core;
use crate::group::guards::{FlexReadGuard, FlexWriteGuard};
use crate::stats::GroupStats;
use lwlock::RawLwLock;

/// The seal: implemented by this crate's group locks only.
pub(crate) mod sealed {
    /// A group lock of this crate.
    pub trait Sealed {}
}

/// A shared/exclusive lock over a [`RawLwLock`] whose exclusive operations can be combined into
/// groups run by one thread: [`crate::FlexLock`], [`crate::HolderServesLock`],
/// [`crate::ClogGroupLock`].
///
/// ```
/// use flexlock::{ClogGroupLock, FlexLock, GroupLock, HolderServesLock, GroupPolicy};
/// use lwlock::RawAtomicLwLock;
///
/// fn bump(lock: &impl GroupLock<Data = u64>) -> u64 {
///     lock.group(|v| {
///         *v += 1;
///         *v
///     })
/// }
/// assert_eq!(bump(&FlexLock::<RawAtomicLwLock, u64>::new(0, GroupPolicy::Leader)), 1);
/// assert_eq!(bump(&FlexLock::<RawAtomicLwLock, u64>::new(0, GroupPolicy::LastReleaser)), 1);
/// assert_eq!(bump(&HolderServesLock::<RawAtomicLwLock, u64>::new(0)), 1);
/// let clog = ClogGroupLock::<RawAtomicLwLock, u64>::new(0);
/// assert_eq!(bump(&clog), 1);
/// assert_eq!(clog.group_keyed(7, |v| *v), 1);
/// assert_eq!(*clog.read(), 1);
/// ```
pub trait GroupLock: sealed::Sealed {
    /// The wrapped lock.
    type Raw: RawLwLock;
    /// The protected value.
    type Data;

    /// Runs `op` on the value under the exclusive lock, here or on another thread (a leader, a
    /// last releaser, a holder), and returns its result. If `op` panics, the panic is re-raised
    /// here after the rest of the group ran and the lock was released.
    ///
    /// `key` decides which operations may share a group: for [`crate::ClogGroupLock`] only
    /// operations with the same key (the CLOG page; a joiner whose key differs from the group's
    /// takes the lock on its own), for the other locks any (the key is ignored).
    ///
    /// `op` must not take this lock (it runs while it is held exclusively) and must not start
    /// another group operation on any lock: it may run as part of a group, and a nested group
    /// operation from a thread whose own operation is pending panics. (When `op` runs directly
    /// on its own thread, nesting on another lock is not detected and works.)
    ///
    /// A member waiting for its server publishes the wait event of its lock's protocol (see
    /// `group_keyed` in the trait implementations of [`crate::FlexLock`],
    /// [`crate::HolderServesLock`] and [`crate::ClogGroupLock`]).
    fn group_keyed<R: Send>(&self, key: u64, op: impl FnOnce(&mut Self::Data) -> R + Send) -> R;

    /// [`group_keyed`](Self::group_keyed) with key 0: the group operation of an unkeyed lock
    /// (for [`crate::ClogGroupLock`], an operation on page 0).
    #[inline]
    fn group<R: Send>(&self, op: impl FnOnce(&mut Self::Data) -> R + Send) -> R {
        self.group_keyed(0, op)
    }

    /// Takes the lock shared. Under the last-releaser policies ([`crate::GroupPolicy::LastReleaser`],
    /// [`crate::HolderServesLock`]) queued operations are applied first, so a thread must not
    /// take a second read guard of such a lock while it holds one (it may wait for its own first
    /// guard).
    #[inline]
    fn read(&self) -> FlexReadGuard<'_, Self::Raw, Self::Data> {
        self.core().read()
    }

    /// Takes the lock shared if that is possible without waiting (and, under the last-releaser
    /// policies, no operation is queued).
    #[inline]
    fn try_read(&self) -> Option<FlexReadGuard<'_, Self::Raw, Self::Data>> {
        self.core().try_read()
    }

    /// Takes the lock exclusively. Under the last-releaser policies, dropping the guard applies
    /// the operations queued meanwhile before the lock is released.
    #[inline]
    fn write(&self) -> FlexWriteGuard<'_, Self::Raw, Self::Data> {
        self.core().write()
    }

    /// Takes the lock exclusively if that is possible without waiting.
    #[inline]
    fn try_write(&self) -> Option<FlexWriteGuard<'_, Self::Raw, Self::Data>> {
        self.core().try_write()
    }

    /// Group counters (`Some` only with the `stats` feature).
    #[inline]
    fn stats(&self) -> Option<GroupStats> {
        self.core().stats()
    }

    /// The wrapped lock, for inspection (`is_locked`, `stats`) and for configuring it (a
    /// `FaultLock`'s plan, say).
    ///
    /// Acquiring and releasing through it bypasses the policy: under
    /// [`crate::GroupPolicy::LastReleaser`] a release through `raw()` does not run the operations
    /// queued meanwhile (the last-releaser re-check is in this crate's guards and group calls),
    /// so they wait for the next release through the group lock, which may never come; under
    /// [`crate::HolderServesLock`] they are run by their own submitters (which wait for the
    /// lock), not stranded. Take holds with [`read`](Self::read) and [`write`](Self::write).
    #[inline]
    fn raw(&self) -> &Self::Raw {
        self.core().raw()
    }

    /// The record number at the head of the group list (the newest member), if any: a racy
    /// snapshot for tests and diagnostics.
    #[inline]
    fn group_head(&self) -> Option<u32> {
        self.core().group_head()
    }

    /// Consumes the lock, returning the value.
    #[inline]
    fn into_inner(self) -> Self::Data
    where
        Self: Sized,
    {
        self.into_core().into_inner()
    }

    /// The shared state (this crate's; not reachable from other crates).
    #[doc(hidden)]
    fn core(&self) -> &Core<Self::Raw, Self::Data>;

    /// The shared state, by value (for [`into_inner`](Self::into_inner)).
    #[doc(hidden)]
    fn into_core(self) -> Core<Self::Raw, Self::Data>
    where
        Self: Sized;
}
