//! lwsim: a many-core machine in software that runs the project's real lock code.
//!
//! Built with `RUSTFLAGS="--cfg lwsim"` (its own `CARGO_TARGET_DIR`, like the loom and shuttle
//! builds), every atomic, fence, spin hint, futex wait/wake, timed sleep, thread spawn, yield and
//! clock read that goes through [`crate::sync`] is executed by this simulator instead of the host:
//!
//! * **Executor.** Simulated threads are shuttle tasks (coroutines on one OS thread), run by a
//!   custom shuttle `Scheduler` that always picks the eligible task with the smallest virtual clock
//!   (ties broken by a seeded per-task priority): a conservative discrete-event order. A task runs
//!   ahead without a switch while its clock stays below every other eligible task's
//!   ([`machine`]'s *horizon*), so a switch happens only where another thread's event comes first.
//! * **Coherence model** ([`machine`]): a directory entry per 64-byte line (owner in Modified, or a
//!   sharer set), each access charged by case (hit; load of a line Modified elsewhere; load of a
//!   Shared line; store/RMW that needs ownership, from a Modified owner or invalidating sharers;
//!   first touch from memory) and by distance (SMT sibling, same L3, same socket, other socket).
//!   Every miss queues on its line: a line serves one transfer at a time, which is what makes one
//!   hot word collapse. Plain data is charged with [`crate::sync::touch`].
//! * **OS model**: futex wait/wake system-call costs and wake-to-run latency, timed sleeps that
//!   advance the sleeper's clock (plus timer slack), per-core run queues with a time slice and a
//!   context-switch cost when there are more threads than cores, wakeups placed on an idle core if
//!   any. Lock-holder preemption is not scripted: a holder whose slice ends is queued behind the
//!   other threads of its core like any thread.
//! * **Profiles** ([`profile`]): JSON files, each value with its source; built-in by name
//!   (`this-machine`, `xeon-2s-broadwell`, `xeon-4s-westmere-ex`, `epyc-2s-genoa`) or by path.
//! * **Counters** ([`Report`]): per simulated core and per watched line (lock): virtual time,
//!   operations, line transfers by kind, time waiting for a line, futex sleeps and wakes,
//!   preemptions, context switches; simulated events per real second.
//! * **Line profile** (off by default, `LWSIM_LINES=N`): the top-N lines by transfers, printed
//!   to stderr when a simulation ends, each with its sampled call sites (see `line_profile.rs`).
//!
//! Why a cfg and not a cargo feature: the shim's types must be the same for every crate of a
//! build (lwlock, flexlock, a user's crate), and a feature is unified across the dependency graph,
//! so `--all-features` (or one dependent enabling it) would silently put every normal test and
//! benchmark on the simulator. A cfg applies to the whole build, cannot leak into normal builds,
//! and is mutually exclusive with loom/shuttle like theirs (a `compile_error!` checks it).
//!
//! # A user's own lock runs unchanged
//! Any lock written against `lwlock::sync` (atomics, [`crate::sync::spin_loop`],
//! [`crate::sync::Futex`]) is simulated as is; see `lwlock/examples/lwsim.rs` (`UserSpinLock`)
//! and [`reference`]. Outside [`run`] the atomics behave as std's (no simulator is consulted).
//!
//! ```ignore
//! use lwlock::sync::lwsim::{self, Profile, SimConfig};
//! let report = lwsim::run(SimConfig::new(Profile::builtin("xeon-2s-broadwell")?, 8), || {
//!     // spawn threads with lwlock::sync::thread::spawn, run lock code, join them
//! });
//! println!("{}", report.summary());
//! ```

pub mod atomic;
mod line_profile;
pub mod machine;
pub mod profile;
pub mod reference;
pub mod workload;

mod sched;

pub use machine::{totals, watch, CoreCounters, LineCounters, Report};
pub use profile::Profile;
pub use sched::{run, SimConfig};

use machine::{with_machine, Access};

/// One PAUSE (`spin_loop`): its virtual time, no coherence traffic.
pub fn pause() {
    machine::charge_plain(machine::Plain::Pause);
}

/// Virtual work of `nanos` nanoseconds that touches no shared memory (a critical section's or a
/// think time's computation). Preemption is checked at its end.
pub fn compute(nanos: u64) {
    machine::charge_plain(machine::Plain::Compute(nanos * 1000));
}

/// Charges the lines of `[addr, addr + len)` as plain loads or stores ([`crate::sync::touch`]).
pub fn touch(addr: usize, len: usize, write: bool) {
    if len == 0 {
        return;
    }
    let first = addr >> machine::LINE_SHIFT;
    let last = (addr + len - 1) >> machine::LINE_SHIFT;
    for line in first..=last {
        machine::access(
            line << machine::LINE_SHIFT,
            if write { Access::Store } else { Access::Load },
        );
    }
}

/// The calling thread's virtual time in nanoseconds (0 outside a simulation).
pub fn now_nanos() -> u64 {
    with_machine(|m| m.map(|m| m.clock_of_current() / 1000).unwrap_or(0))
}

/// A timed sleep (`pg_usleep`): system call, leave the core, come back after `micros` plus the
/// profile's timer slack.
pub fn sleep_micros(micros: u64) {
    if !machine::active() {
        std::thread::sleep(std::time::Duration::from_micros(micros));
        return;
    }
    machine::sleep(micros * 1_000_000);
}

/// `FUTEX_WAIT`: sleeps while `word` equals `expected` (compare and enqueue are atomic with
/// respect to [`futex_wake`], as in the kernel).
pub fn futex_wait(word: &atomic::AtomicU32, expected: u32) {
    if !machine::active() {
        atomic_wait::wait(word.as_std(), expected);
        return;
    }
    machine::futex_wait(word.as_std(), expected);
}

/// `FUTEX_WAKE`: wakes up to `n` sleepers of `word`.
pub fn futex_wake(word: &atomic::AtomicU32, n: u32) {
    if !machine::active() {
        if n == 1 {
            atomic_wait::wake_one(word.as_std());
        } else {
            atomic_wait::wake_all(word.as_std());
        }
        return;
    }
    machine::futex_wake(word.as_std() as *const _ as usize, n);
}

/// A global allocator for simulated programs: the system allocator with every block aligned to a
/// 64-byte line.
///
/// The coherence model charges by line, so two allocations that share a line contend (false
/// sharing) or not depending on where the allocator put them, which depends on everything the
/// process allocated before: a simulated point would not repeat. With every block starting on a
/// line of its own, each object's lines depend only on its own layout, and the same point gives
/// the same counters in any process and after any earlier run. A harness declares it with
/// `#[global_allocator]` (lwbench does in `--cfg lwsim` builds); the cost is up to 63 bytes per
/// allocation.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineAligned;

impl LineAligned {
    fn widen(layout: std::alloc::Layout) -> std::alloc::Layout {
        // A power-of-two alignment at least as large as the original: always valid, and the size
        // rounds up to the new alignment so no two blocks share a line.
        std::alloc::Layout::from_size_align(layout.size(), layout.align().max(64))
            .map(|l| l.pad_to_align())
            .unwrap_or(layout)
    }
}

// SAFETY: every call forwards to the system allocator with a layout whose alignment is at least
// the requested one (so the block satisfies the caller's layout), and `dealloc` recomputes the
// same widened layout from the caller's layout, so System sees matching alloc/dealloc pairs.
unsafe impl std::alloc::GlobalAlloc for LineAligned {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: `widen` keeps the size non-zero if it was (the caller's precondition).
        unsafe { std::alloc::System.alloc(Self::widen(layout)) }
    }
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { std::alloc::System.alloc_zeroed(Self::widen(layout)) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from `alloc`/`alloc_zeroed` (or the default `realloc`, which
        // allocates through `alloc`) with this same caller layout, hence the same widened one.
        unsafe { std::alloc::System.dealloc(ptr, Self::widen(layout)) }
    }
}

/// A scheduling decision point for the supervisor (the main task of [`run`]).
///
/// The machine learns of a spawned thread at the scheduler's next decision, and a supervisor
/// that neither blocks (a join) nor makes another shuttle call never reaches one: it would run
/// ahead alone, for instance while it polls a start gate with timed sleeps. Call this after
/// spawning, before such a loop: the new threads join the machine (at the last decision's
/// clock) and run until they pass the supervisor's clock or block.
pub fn settle() {
    if machine::active() {
        shuttle::thread::yield_now();
    }
}

/// Thread spawning and yielding on the simulated machine.
pub mod thread {
    /// Spawns a simulated thread: a shuttle task that takes a core (an idle one, or a place in a
    /// run queue) before running `f`, and leaves it when `f` returns.
    pub fn spawn<F, T>(f: F) -> shuttle::thread::JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        shuttle::thread::spawn(move || {
            super::machine::thread_start();
            let r = f();
            super::machine::thread_exit();
            r
        })
    }

    /// `sched_yield`: a system call; moves the caller behind the other threads of its core's run
    /// queue if there are any (a no-op for a thread alone on its core, as on Linux).
    pub fn yield_now() {
        if !super::machine::active() {
            std::thread::yield_now();
            return;
        }
        super::machine::sched_yield();
    }
}

/// The blocking mutex of the lwsim backend ([`crate::sync::Mutex`]): a futex mutex (Drepper's
/// three-state algorithm) on a simulated atomic, so that its waits go through the simulated futex
/// and its cost through the coherence model. (A shuttle mutex would block tasks where the
/// scheduler cannot see it and let the unblocker run ahead of them.)
///
/// State: `0` free, `1` held without waiters, `2` held with (possible) sleepers.
#[derive(Debug, Default)]
pub struct Mutex<T: ?Sized> {
    state: atomic::AtomicU32,
    data: std::cell::UnsafeCell<T>,
}

// SAFETY: the mutex hands out `&mut T` to one guard at a time (the state word's Acquire/Release
// transitions order the accesses), so sharing it needs only `T: Send`, as for std's.
unsafe impl<T: ?Sized + Send> Sync for Mutex<T> {}
// SAFETY: owning the mutex owns the value.
unsafe impl<T: ?Sized + Send> Send for Mutex<T> {}

/// The guard of a held [`Mutex`].
#[derive(Debug)]
pub struct MutexGuard<'a, T: ?Sized> {
    mutex: &'a Mutex<T>,
}

impl<T> Mutex<T> {
    /// A free mutex holding `value`.
    pub const fn new(value: T) -> Self {
        Mutex {
            state: atomic::AtomicU32::new(0),
            data: std::cell::UnsafeCell::new(value),
        }
    }
}

impl<T: ?Sized> Mutex<T> {
    /// Takes the mutex, sleeping on its futex while it is held. Never poisoned (the `Result`
    /// mirrors std's signature).
    pub fn lock(&self) -> std::sync::LockResult<MutexGuard<'_, T>> {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        if self.state.compare_exchange(0, 1, Acquire, Relaxed).is_err() {
            while self.state.swap(2, Acquire) != 0 {
                futex_wait(&self.state, 2);
            }
        }
        Ok(MutexGuard { mutex: self })
    }
}

impl<T: ?Sized> std::ops::Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the mutex: no other reference to the value exists.
        unsafe { &*self.mutex.data.get() }
    }
}

impl<T: ?Sized> std::ops::DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the mutex, and `&mut self` makes this the only access.
        unsafe { &mut *self.mutex.data.get() }
    }
}

impl<T: ?Sized> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        if self
            .mutex
            .state
            .swap(0, std::sync::atomic::Ordering::Release)
            == 2
        {
            futex_wake(&self.mutex.state, 1);
        }
    }
}
