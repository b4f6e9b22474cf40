//! PANIC and critical sections: `elog(PANIC, ...)` and `START_CRIT_SECTION`/`END_CRIT_SECTION`
//! (`elog.c`, `miscadmin.h`).
//!
//! PostgreSQL promotes any error raised inside a critical section to PANIC, which ends the
//! process: shared memory may be half-updated, and unwinding (`longjmp` to the error handler)
//! would leave it so for every other backend. This library has the same rule for Rust unwinding.
//! Where a panic could leave a wait list, a group list or a queued operation inconsistent, the
//! code runs inside a [`CritSection`]; a panic that unwinds out of it aborts the process with a
//! message instead of letting other threads run on broken state (or on a dead stack frame).
//!
//! The rule for each lock and protocol is in [`crate::RawLwLock`]'s docs ("Unwinding").

/// Prints `PANIC: <message>` to stderr and aborts the process (`elog(PANIC)`).
///
/// Used where continuing would be unsound: a stuck spinlock (`s_lock_stuck`), an unwind inside a
/// critical section, a semaphore count overflow.
#[cold]
#[inline(never)]
pub fn panic_abort(args: std::fmt::Arguments<'_>) -> ! {
    eprintln!("PANIC: {args}");
    std::process::abort()
}

/// A critical section: if it is dropped without [`end`](CritSection::end), which only happens
/// when a panic unwinds through it, the process aborts with a message naming `what`.
///
/// Costs nothing when nothing unwinds (`end` forgets it).
#[derive(Debug)]
#[must_use = "a critical section ends with `end()`; dropping it aborts"]
pub struct CritSection {
    what: &'static str,
}

impl CritSection {
    /// `START_CRIT_SECTION()`: `what` says which protocol step could not be unwound.
    #[inline(always)]
    pub fn start(what: &'static str) -> Self {
        CritSection { what }
    }

    /// `END_CRIT_SECTION()`.
    #[inline(always)]
    pub fn end(self) {
        std::mem::forget(self);
    }
}

impl Drop for CritSection {
    #[cold]
    fn drop(&mut self) {
        panic_abort(format_args!(
            "unwinding inside a critical section ({}); continuing could leave shared state \
             inconsistent",
            self.what
        ))
    }
}
