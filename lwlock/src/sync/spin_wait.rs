//! The explicit spin-wait hint: [`spin_wait_while`] is the loop "load the word; while the caller
//! keeps spinning, PAUSE and load it again", written once for every backend. On hardware and
//! under the model checkers it is exactly that loop ([`spin_loop`] between the loads). Under
//! lwsim the simulator may jump over loads that would all hit and read the same value, to the
//! word's line's next event, charging and counting every skipped load and PAUSE as the loop's own
//! (lwsim's `spin_pauses`), so a simulated figure is the same and a long spin costs a few
//! scheduler steps instead of one per PAUSE. [`spin_wait_while_for`] bounds the PAUSEs and
//! returns their count, for loops that count their spins (a spin budget before sleeping).

use super::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// A word a thread can spin on with [`spin_wait_while`]: the shim's atomics.
pub trait SpinWord {
    /// The word's value.
    type Value;
    /// One load of the word (the shim atomic's `load`).
    fn spin_load(&self, order: Ordering) -> Self::Value;
    /// The word's address (its cache line is what the simulator watches).
    fn spin_addr(&self) -> usize {
        self as *const Self as *const u8 as usize
    }
}

macro_rules! spin_word {
    ($t:ty, $v:ty) => {
        impl SpinWord for $t {
            type Value = $v;
            #[inline]
            fn spin_load(&self, order: Ordering) -> $v {
                self.load(order)
            }
        }
    };
}
spin_word!(AtomicU8, u8);
spin_word!(AtomicU32, u32);
spin_word!(AtomicU64, u64);
spin_word!(AtomicBool, bool);

impl<T> SpinWord for AtomicPtr<T> {
    type Value = *mut T;
    #[inline]
    fn spin_load(&self, order: Ordering) -> *mut T {
        self.load(order)
    }
}

/// The PAUSE of a spin-wait loop on the word at `addr` (at most `max` of them): how many were
/// taken (at least 1).
#[inline]
fn pauses(addr: usize, max: u64) -> u64 {
    #[cfg(lwsim)]
    {
        ::lwsim::spin_pauses(addr, max)
    }
    #[cfg(not(lwsim))]
    {
        let _ = (addr, max);
        super::spin_loop();
        1
    }
}

/// Loads `word` with `order` until `keep` is false for the value read, with a PAUSE between two
/// loads; returns that value. `keep` must depend only on the value (it may be called for loads
/// the simulator skips, or not at all for them).
#[inline]
pub fn spin_wait_while<W: SpinWord>(
    word: &W,
    order: Ordering,
    mut keep: impl FnMut(&W::Value) -> bool,
) -> W::Value {
    loop {
        let v = word.spin_load(order);
        if !keep(&v) {
            return v;
        }
        pauses(word.spin_addr(), u64::MAX);
    }
}

/// [`spin_wait_while`] with at most `max_pauses` PAUSEs: returns the last value read and the
/// PAUSEs taken (exactly the loop's count: `max_pauses` when the value still says spin).
#[inline]
pub fn spin_wait_while_for<W: SpinWord>(
    word: &W,
    order: Ordering,
    max_pauses: u64,
    mut keep: impl FnMut(&W::Value) -> bool,
) -> (W::Value, u64) {
    let mut spins = 0;
    loop {
        let v = word.spin_load(order);
        if !keep(&v) || spins >= max_pauses {
            return (v, spins);
        }
        spins += pauses(word.spin_addr(), max_pauses - spins);
    }
}
