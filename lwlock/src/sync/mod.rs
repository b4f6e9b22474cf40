//! The one place that names `std`, `loom` or `shuttle`: a selector over one file per backend.
//!
//! Every atomic, cell, spin hint, yield, sleep and futex call in the workspace goes through this
//! module, so that `RUSTFLAGS="--cfg loom"` or `--cfg shuttle` swaps the whole project onto a model
//! checker's types without touching a lock's code. Each backend defines the same items
//! (crossbeam-utils' `primitive` module, tokio's `loom/{std,mocked}`), and this module re-exports
//! the active one:
//!
//! * **std** (default, `sync/std.rs`): `std::sync::atomic`, `std::cell::UnsafeCell` wrapped to
//!   offer loom's `with`/`with_mut` API, `atomic_wait` futexes.
//! * **loom** (`sync/loom.rs`): loom's atomics and `UnsafeCell` (so a missing ordering around
//!   protected data is reported as a race). loom has no futex: [`Futex`] is emulated on loom's
//!   thread parking (`sync/model.rs`), with the kernel's "compare and sleep atomically with
//!   respect to wakers" semantics, so a lost wakeup is reported as a deadlock rather than a
//!   livelock, and with no ordering a kernel futex does not give: the compare is Relaxed, and
//!   only a wake that wakes a sleeper orders the waker before it.
//! * **shuttle** (`sync/shuttle.rs`): shuttle's atomics (all SeqCst) and the same futex emulation.
//! * **lwsim** (`--cfg lwsim`, `sync/lwsim.rs` over the `lwsim` crate, which is re-exported as
//!   `sync::lwsim`): a many-core machine in software. The atomics are std's, wrapped so that
//!   every access is charged virtual time by a cache-coherence model and ordered by a
//!   smallest-virtual-clock-first scheduler on lwsim's own executor; futexes, sleeps, spin hints,
//!   thread spawns and [`clock_nanos`] go to its OS model. See the module docs.
//!
//! `sync/host.rs` holds what several backends take from the host unchanged (std's cell, the real
//! clock); `sync/spin.rs` the spin waits a model checker can finish (the loom release epoch, the
//! model spin limit); `sync/field.rs` the sub-word stores and exchanges of a 64-bit word
//! ([`store_field`], [`swap_field`]) for every backend but lwsim, which costs them as the ported
//! code's plain store and one exchange.
//!
//! Spin loops call [`spin_loop`], which yields to the model under loom/shuttle (loom's scheduler
//! is deliberately unfair and would otherwise report "exceeded maximum number of branches").
//! A loop that only reloads one word until its value changes can say so with [`spin_wait_while`]
//! (`sync/spin_wait.rs`): the same loop in every build, but under lwsim the simulator jumps over
//! the loads that would all hit, to the line's next event, with the same figures.
//!
//! [`touch`] charges plain (non-atomic) data a critical section reads or writes to the simulator;
//! it compiles to nothing in every other build. [`instructions`] announces a lock path's
//! instruction count between two memory operations (the simulator charges the profile's
//! `instruction_ns` per instruction); it too compiles to nothing outside `--cfg lwsim`.

#[cfg(all(loom, shuttle))]
compile_error!("--cfg loom and --cfg shuttle are mutually exclusive");
#[cfg(all(lwsim, any(loom, shuttle)))]
compile_error!("--cfg lwsim excludes --cfg loom and --cfg shuttle");

mod host;
#[cfg(any(loom, shuttle))]
mod model;
mod spin;
mod spin_wait;

#[cfg(not(any(loom, shuttle, lwsim)))]
mod std;
#[cfg(not(any(loom, shuttle, lwsim)))]
pub use self::std::*;

#[cfg(loom)]
mod loom;
#[cfg(loom)]
pub use self::loom::*;

#[cfg(shuttle)]
mod shuttle;
#[cfg(shuttle)]
pub use self::shuttle::*;

#[cfg(lwsim)]
#[path = "lwsim.rs"]
mod lwsim_backend;
#[cfg(lwsim)]
pub use self::lwsim_backend::*;
/// The simulator crate itself (its `run`, `SimConfig`, `Profile`, counters), for harnesses.
#[cfg(lwsim)]
pub use ::lwsim;

pub use self::spin::*;
pub use self::spin_wait::{spin_wait_while, spin_wait_while_for, SpinWord};

#[cfg(not(lwsim))]
mod field;
#[cfg(not(lwsim))]
pub use self::field::*;

/// A statistics counter's value as the harness reads it: a Relaxed load, which under lwsim is
/// not charged to the simulated machine. Reading LWLOCK_STATS-style counters is the observer's
/// measurement, not the simulated program's work: charged, a driver that reads the counters of
/// thousands of locks at a measurement window's edge (a buffer pool's) spends simulated
/// milliseconds doing it while the workers run on, and pulls every counter's line into its own
/// cache. The counters are only ever bumped by read-modify-writes, which under lwsim write the
/// word at once (no store buffer holds them), so the uncharged load sees every bump made so far.
#[inline]
pub fn stat_load(counter: &AtomicU64) -> u64 {
    #[cfg(lwsim)]
    return counter.as_std().load(Ordering::Relaxed);
    #[cfg(not(lwsim))]
    counter.load(Ordering::Relaxed)
}

/// Adds `n` to a statistics counter (Relaxed: statistics order nothing). Under lwsim the
/// increment is not charged to the simulated machine, for the reason [`stat_load`]'s reads are
/// not: PostgreSQL's `LWLOCK_STATS` counters live in each backend's private memory
/// (`get_lwlock_stats_entry` in `lwlock.c`), so counting an acquire moves no cache line. Charged,
/// every counted acquire would add a read-modify-write on the lock's own line (the counters sit
/// in the lock), another transfer for each waiter in the simulated convoy: the simulated figures
/// of a `stats` build would measure the counters as much as the lock.
#[inline(always)]
pub fn stat_add(counter: &AtomicU64, n: u64) {
    #[cfg(lwsim)]
    counter.as_std().fetch_add(n, Ordering::Relaxed);
    #[cfg(not(lwsim))]
    counter.fetch_add(n, Ordering::Relaxed);
}

/// Raises a statistics counter to at least `v` (Relaxed), uncharged under lwsim as
/// [`stat_add`] is.
#[inline(always)]
pub fn stat_max(counter: &AtomicU64, v: u64) {
    #[cfg(lwsim)]
    counter.as_std().fetch_max(v, Ordering::Relaxed);
    #[cfg(not(lwsim))]
    counter.fetch_max(v, Ordering::Relaxed);
}

/// The [`clock_nanos`] deadline `timeout` from now (saturating: a timeout too long to represent
/// is a wait without end).
pub fn deadline_after(timeout: ::std::time::Duration) -> u64 {
    clock_nanos().saturating_add(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX))
}

/// The [`clock_nanos`] deadline of a `std::time::Instant` (under lwsim: the same distance from
/// the thread's virtual now as the instant is from the real now).
pub fn deadline_at(instant: ::std::time::Instant) -> u64 {
    deadline_after(instant.saturating_duration_since(::std::time::Instant::now()))
}
