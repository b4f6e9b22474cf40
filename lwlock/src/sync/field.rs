//! Sub-word stores and exchanges into a 64-bit word, for locks ported from code that writes a
//! byte or half-word of a word that other threads RMW (the Linux kernel's queued spinlock:
//! `WRITE_ONCE(lock->locked, ...)`, `xchg_tail`). Rust has no mixed-size atomics, so on hardware
//! and under the models each is an RMW of the whole word with the same effect; the lwsim backend
//! has its own versions, which cost them as the code being ported does (a plain store into the
//! store buffer; one exchange), so that a simulated figure measures the ported algorithm and not
//! this port's RMWs.

use super::{AtomicU64, Ordering};

/// Replaces the bits `mask` of `word`, which hold `from` (the caller's protocol guarantees that
/// nobody else writes them meanwhile), by `to`'s; the other bits are kept, whatever other threads
/// do to them. Here one RMW: a `fetch_and` when the change only clears bits, a `fetch_or` when it
/// only sets bits (so that a broken precondition cannot reach the neighbouring bits, as the
/// ported byte store cannot), else a `fetch_add` of `to - from` (with the field at `from` the add
/// neither borrows from nor carries out of it). `from` and `to` must lie within `mask`.
#[inline]
pub fn store_field(word: &AtomicU64, mask: u64, from: u64, to: u64, order: Ordering) {
    debug_assert!(
        from & !mask == 0 && to & !mask == 0,
        "field values outside the mask"
    );
    let was = if to & !from == 0 {
        word.fetch_and(!(from & !to), order)
    } else if from & !to == 0 {
        word.fetch_or(to & !from, order)
    } else {
        word.fetch_add(to.wrapping_sub(from), order)
    };
    debug_assert_eq!(
        was & mask,
        from,
        "a sub-word store found its bits changed: the field has another writer"
    );
}

/// Replaces the bits `mask` of `word` by `v`'s, keeping the others; returns the previous word.
/// Here a CAS loop (which may retry); on x86 the ported code's half-word `xchg` is one RMW.
#[inline]
pub fn swap_field(word: &AtomicU64, mask: u64, v: u64, order: Ordering) -> u64 {
    let mut old = word.load(Ordering::Relaxed);
    loop {
        match word.compare_exchange_weak(old, (old & !mask) | (v & mask), order, Ordering::Relaxed)
        {
            Ok(prev) => return prev,
            Err(now) => old = now,
        }
    }
}
