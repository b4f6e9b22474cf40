//! What several backends take from the host unchanged: the `UnsafeCell` wrapper over std's cell
//! (every backend but loom, whose cells are tracked), the real monotonic clock and the no-ops
//! [`touch`] and [`instructions`] (every backend but lwsim, which has virtual time and charges
//! plain data and instruction time).
//!
//! Mirrors `instr_time`'s monotonic clock (`portability/instr_time.h`); the cell has no
//! PostgreSQL counterpart (C accesses shared memory directly).

/// An `UnsafeCell` with loom's closure API on every backend.
///
/// Under loom the accesses are tracked, so a lock whose acquire/release orderings do not order
/// the critical sections is reported as a data race on the protected value.
#[cfg(not(loom))]
#[derive(Debug)]
pub struct UnsafeCell<T: ?Sized> {
    inner: std::cell::UnsafeCell<T>,
}

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// Wraps `value`. `const` except under loom, whose cells are not.
    pub const fn new(value: T) -> Self {
        UnsafeCell {
            inner: std::cell::UnsafeCell::new(value),
        }
    }
    /// Consumes the cell, returning the value.
    pub fn into_inner(self) -> T {
        self.inner.into_inner()
    }
}

#[cfg(not(loom))]
impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared pointer to the value. The caller must ensure no concurrent writer.
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.inner.get())
    }
    /// Runs `f` with a unique pointer to the value. The caller must ensure exclusive access.
    #[inline(always)]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.inner.get())
    }
    /// A raw pointer to the value, for callers that hand out references (guards). Untracked
    /// under loom.
    #[inline(always)]
    pub fn get(&self) -> *mut T {
        self.inner.get()
    }
}

/// A monotonic clock in nanoseconds: since the first call in this process (std, loom, shuttle),
/// or the calling thread's virtual time (lwsim).
#[cfg(not(lwsim))]
pub fn clock_nanos() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// Charges a plain (non-atomic) access of `len` bytes at `ptr` to the simulator: the protected
/// data a critical section reads (`write == false`) or writes. Compiles to nothing in every build
/// but `--cfg lwsim`, where each 64-byte line the range covers is one coherence access.
#[cfg(not(lwsim))]
#[inline(always)]
pub fn touch<T: ?Sized>(ptr: *const T, len: usize, write: bool) {
    let _ = (ptr, len, write);
}

/// Announces `n` instructions of straight-line code between two memory operations of a lock path
/// (counted from the release build's disassembly; see the simulator section of the design
/// document). Compiles to nothing in every build but `--cfg lwsim`, where it charges `n` times
/// the profile's `instruction_ns` of virtual time.
#[cfg(not(lwsim))]
#[inline(always)]
pub fn instructions(n: u32) {
    let _ = n;
}
