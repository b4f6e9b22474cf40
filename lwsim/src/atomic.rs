//! The simulated atomics: std's atomics, each operation first charged to the coherence model.
//!
//! On x86-64 (every profile's ISA) a `load` is a plain load, a non-SeqCst `store` a plain store, a
//! SeqCst `store` an `xchg` (an RMW), and every `swap`, `fetch_*` and `compare_exchange*` a
//! `lock`-prefixed RMW that takes the line in Modified state even when a CAS fails. `fetch_update`
//! is a load followed by a CAS loop, as it compiles. Acquire/Release fences are free on x86
//! (compiler barriers); a SeqCst fence is an `mfence`.

use crate::access::{Access, Plain};
use crate::machine;
use std::sync::atomic::Ordering;

#[inline(always)]
fn charge<T>(a: &T, kind: Access) {
    machine::access(a as *const T as usize, kind);
}

/// A memory fence: an `mfence` for SeqCst, free otherwise (x86-64).
pub fn fence(order: Ordering) {
    if order == Ordering::SeqCst {
        machine::charge_plain(Plain::Fence);
    }
    std::sync::atomic::fence(order);
}

macro_rules! sim_int {
    ($name:ident, $std:ty, $int:ty) => {
        /// A simulated atomic integer (see the module docs for what each operation costs).
        #[derive(Debug, Default)]
        #[repr(transparent)]
        pub struct $name {
            inner: $std,
        }

        impl $name {
            /// Its width in bytes (what the store buffer records).
            const WIDTH: u8 = std::mem::size_of::<$int>() as u8;
            /// A new atomic holding `v` (no access is charged).
            pub const fn new(v: $int) -> Self {
                Self {
                    inner: <$std>::new(v),
                }
            }
            /// The std atomic underneath (uncharged).
            pub fn as_std(&self) -> &$std {
                &self.inner
            }
            /// Consumes the atomic, returning its value.
            pub fn into_inner(self) -> $int {
                self.inner.into_inner()
            }
            /// A mutable reference to the value (exclusive access, uncharged).
            pub fn get_mut(&mut self) -> &mut $int {
                self.inner.get_mut()
            }
            /// A load (served from the thread's store buffer when it holds a store to this
            /// atomic).
            #[inline]
            pub fn load(&self, order: Ordering) -> $int {
                if let Some(v) = machine::forwarded(self as *const Self as usize, Self::WIDTH) {
                    return v as $int;
                }
                charge(self, Access::Load);
                self.inner.load(order)
            }
            /// A store: an RMW when SeqCst; otherwise a plain store, which the store buffer may
            /// retire before its line arrives (the value is then written at the drain).
            #[inline]
            pub fn store(&self, v: $int, order: Ordering) {
                if order == Ordering::SeqCst {
                    charge(self, Access::Rmw);
                } else if machine::store_plain(self as *const Self as usize, Self::WIDTH, v as u64)
                    == Some(true)
                {
                    return;
                }
                self.inner.store(v, order)
            }
            /// An RMW.
            #[inline]
            pub fn swap(&self, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                self.inner.swap(v, order)
            }
            /// A sub-word store: the bits `mask`, which hold `from`, become `to`'s, as a plain
            /// byte or half-word store into this word would write them (the Linux qspinlock's
            /// `WRITE_ONCE(lock->locked, ...)`). Charged as a plain store (an RMW when SeqCst):
            /// it may retire into the store buffer, and a later load of this atomic by the same
            /// thread cannot be forwarded from it (it waits for the drain). Panics when the bits
            /// no longer hold `from` at the write (the field has another writer), and on an
            /// Acquire or AcqRel ordering, as a store does.
            #[inline]
            pub fn store_field(&self, mask: $int, from: $int, to: $int, order: Ordering) {
                assert!(
                    !matches!(order, Ordering::Acquire | Ordering::AcqRel),
                    "there is no such store ordering: {order:?}"
                );
                let (m, f, t) = (mask as u64, from as u64, to as u64);
                if order == Ordering::SeqCst {
                    charge(self, Access::Rmw);
                } else if machine::store_field(self as *const Self as usize, Self::WIDTH, t, m, f)
                    == Some(true)
                {
                    return;
                }
                // Written now: a hit, no store buffer, or outside a simulation (where other
                // real threads may write the word: a CAS loop, uncharged).
                let _ = self.inner.fetch_update(order, Ordering::Relaxed, |old| {
                    Some(machine::merge_field(old as u64, m, f, t) as $int)
                });
            }
            /// A sub-word exchange: the bits `mask` become `v`'s, the others are kept; returns
            /// the whole previous word. One RMW, as x86's `xchg` of a half-word inside this word
            /// (the Linux qspinlock's `xchg_tail`), never a retried CAS.
            #[inline]
            pub fn swap_field(&self, mask: $int, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                // The closure never refuses, so this is the one exchange's previous word.
                let (Ok(old) | Err(old)) =
                    self.inner.fetch_update(order, Ordering::Relaxed, |old| {
                        Some((old & !mask) | (v & mask))
                    });
                old
            }
            /// An RMW (also when it fails).
            #[inline]
            pub fn compare_exchange(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                charge(self, Access::Rmw);
                self.inner.compare_exchange(current, new, success, failure)
            }
            /// An RMW (also when it fails). Never fails spuriously in the simulation.
            #[inline]
            pub fn compare_exchange_weak(
                &self,
                current: $int,
                new: $int,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$int, $int> {
                charge(self, Access::Rmw);
                self.inner.compare_exchange(current, new, success, failure)
            }
            /// An RMW.
            #[inline]
            pub fn fetch_add(&self, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                self.inner.fetch_add(v, order)
            }
            /// An RMW.
            #[inline]
            pub fn fetch_sub(&self, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                self.inner.fetch_sub(v, order)
            }
            /// An RMW.
            #[inline]
            pub fn fetch_or(&self, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                self.inner.fetch_or(v, order)
            }
            /// An RMW.
            #[inline]
            pub fn fetch_and(&self, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                self.inner.fetch_and(v, order)
            }
            /// An RMW.
            #[inline]
            pub fn fetch_xor(&self, v: $int, order: Ordering) -> $int {
                charge(self, Access::Rmw);
                self.inner.fetch_xor(v, order)
            }
            /// A load, then a CAS loop (as it compiles on x86-64).
            #[inline]
            pub fn fetch_max(&self, v: $int, order: Ordering) -> $int {
                self.fetch_update(order, Ordering::Relaxed, |x| Some(x.max(v)))
                    .unwrap_or_else(|x| x)
            }
            /// A load, then a CAS loop (as it compiles on x86-64).
            #[inline]
            pub fn fetch_min(&self, v: $int, order: Ordering) -> $int {
                self.fetch_update(order, Ordering::Relaxed, |x| Some(x.min(v)))
                    .unwrap_or_else(|x| x)
            }
            /// A load, then one CAS per attempt.
            pub fn fetch_update<F: FnMut($int) -> Option<$int>>(
                &self,
                set_order: Ordering,
                fetch_order: Ordering,
                mut f: F,
            ) -> Result<$int, $int> {
                let mut prev = self.load(fetch_order);
                while let Some(next) = f(prev) {
                    match self.compare_exchange_weak(prev, next, set_order, fetch_order) {
                        Ok(x) => return Ok(x),
                        Err(now) => prev = now,
                    }
                }
                Err(prev)
            }
        }
    };
}

sim_int!(AtomicU8, std::sync::atomic::AtomicU8, u8);
sim_int!(AtomicU32, std::sync::atomic::AtomicU32, u32);
sim_int!(AtomicU64, std::sync::atomic::AtomicU64, u64);
sim_int!(AtomicUsize, std::sync::atomic::AtomicUsize, usize);

/// A simulated `AtomicBool`.
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct AtomicBool {
    inner: std::sync::atomic::AtomicBool,
}

impl AtomicBool {
    /// A new atomic holding `v`.
    pub const fn new(v: bool) -> Self {
        Self {
            inner: std::sync::atomic::AtomicBool::new(v),
        }
    }
    /// Consumes the atomic.
    pub fn into_inner(self) -> bool {
        self.inner.into_inner()
    }
    /// A mutable reference (uncharged).
    pub fn get_mut(&mut self) -> &mut bool {
        self.inner.get_mut()
    }
    /// A load (forwarded from the store buffer, as the integers' loads).
    #[inline]
    pub fn load(&self, order: Ordering) -> bool {
        if let Some(v) = machine::forwarded(self as *const Self as usize, 1) {
            return v != 0;
        }
        charge(self, Access::Load);
        self.inner.load(order)
    }
    /// A store (an RMW when SeqCst; buffered as the integers' stores).
    #[inline]
    pub fn store(&self, v: bool, order: Ordering) {
        if order == Ordering::SeqCst {
            charge(self, Access::Rmw);
        } else if machine::store_plain(self as *const Self as usize, 1, v as u64) == Some(true) {
            return;
        }
        self.inner.store(v, order)
    }
    /// An RMW.
    #[inline]
    pub fn swap(&self, v: bool, order: Ordering) -> bool {
        charge(self, Access::Rmw);
        self.inner.swap(v, order)
    }
    /// An RMW (also when it fails).
    #[inline]
    pub fn compare_exchange(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        charge(self, Access::Rmw);
        self.inner.compare_exchange(current, new, success, failure)
    }
    /// An RMW (also when it fails); never fails spuriously.
    #[inline]
    pub fn compare_exchange_weak(
        &self,
        current: bool,
        new: bool,
        success: Ordering,
        failure: Ordering,
    ) -> Result<bool, bool> {
        self.compare_exchange(current, new, success, failure)
    }
    /// An RMW.
    #[inline]
    pub fn fetch_or(&self, v: bool, order: Ordering) -> bool {
        charge(self, Access::Rmw);
        self.inner.fetch_or(v, order)
    }
    /// An RMW.
    #[inline]
    pub fn fetch_and(&self, v: bool, order: Ordering) -> bool {
        charge(self, Access::Rmw);
        self.inner.fetch_and(v, order)
    }
}

/// A simulated `AtomicPtr`.
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct AtomicPtr<T> {
    inner: std::sync::atomic::AtomicPtr<T>,
}

impl<T> AtomicPtr<T> {
    /// A new atomic holding `p`.
    pub const fn new(p: *mut T) -> Self {
        Self {
            inner: std::sync::atomic::AtomicPtr::new(p),
        }
    }
    /// Consumes the atomic.
    pub fn into_inner(self) -> *mut T {
        self.inner.into_inner()
    }
    /// A mutable reference (uncharged).
    pub fn get_mut(&mut self) -> &mut *mut T {
        self.inner.get_mut()
    }
    /// A load (forwarded from the store buffer, as the integers' loads).
    #[inline]
    pub fn load(&self, order: Ordering) -> *mut T {
        const W: u8 = std::mem::size_of::<usize>() as u8;
        if let Some(v) = machine::forwarded(self as *const Self as usize, W) {
            return v as usize as *mut T;
        }
        charge(self, Access::Load);
        self.inner.load(order)
    }
    /// A store (an RMW when SeqCst; buffered as the integers' stores).
    #[inline]
    pub fn store(&self, p: *mut T, order: Ordering) {
        const W: u8 = std::mem::size_of::<usize>() as u8;
        if order == Ordering::SeqCst {
            charge(self, Access::Rmw);
        } else if machine::store_plain(self as *const Self as usize, W, p as usize as u64)
            == Some(true)
        {
            return;
        }
        self.inner.store(p, order)
    }
    /// An RMW.
    #[inline]
    pub fn swap(&self, p: *mut T, order: Ordering) -> *mut T {
        charge(self, Access::Rmw);
        self.inner.swap(p, order)
    }
    /// An RMW (also when it fails).
    #[inline]
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        charge(self, Access::Rmw);
        self.inner.compare_exchange(current, new, success, failure)
    }
    /// An RMW (also when it fails); never fails spuriously.
    #[inline]
    pub fn compare_exchange_weak(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        self.compare_exchange(current, new, success, failure)
    }
}
