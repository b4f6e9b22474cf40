//! The calls a program makes into the simulated machine's CPU and OS: a spin hint, computation,
//! instruction time, plain data accesses, the clock, timed sleeps, futex wait/wake, and the
//! supervisor's scheduling point. Each is charged by [`crate::machine`] inside a simulation and
//! falls back to the host (std, or the std futex emulation of `host.rs`) outside one.
//!
//! These are what lwlock's shim calls for `spin_loop` (`SPIN_DELAY()`), `instructions`, `touch`,
//! `clock_nanos`, `pg_usleep` and its futexes under `--cfg lwsim`.

use crate::access::{Access, Plain, LINE_SHIFT};
use crate::atomic::AtomicU32;
use crate::host;
use crate::machine::{self, with_machine};

/// One PAUSE (`spin_loop`): its virtual time, no coherence traffic.
pub fn pause() {
    machine::charge_plain(Plain::Pause);
}

/// The PAUSE of a spin-wait loop on the word at `addr`: the caller loaded the word, keeps
/// spinning, and will load it again right after. Inside a simulation the loop may jump over
/// loads that would all hit and read the same value (the machine's `spin.rs`): returns the
/// PAUSEs charged, at least 1 and at most `max_pauses` (at least 1), each counted as the loop's
/// own would be. Outside a simulation: one `std::hint::spin_loop`, 1.
pub fn spin_pauses(addr: usize, max_pauses: u64) -> u64 {
    if !machine::active() {
        std::hint::spin_loop();
        return 1;
    }
    machine::spin_pauses(addr, max_pauses.max(1))
}

/// Virtual work of `nanos` nanoseconds that touches no shared memory (a critical section's or a
/// think time's computation). Preemption is checked at its end.
pub fn compute(nanos: u64) {
    machine::charge_plain(Plain::Compute(nanos * 1000));
}

/// `n` instructions between memory operations (a lock path's straight-line code): `n` times the
/// profile's `instruction_ns` of virtual time, no coherence traffic and no scheduling point. With
/// `instruction_ns` 0 (the default) it costs nothing; outside a simulation it does nothing.
#[inline]
pub fn instructions(n: u32) {
    machine::charge_instructions(n);
}

/// Charges the lines of `[addr, addr + len)` as plain loads or stores (the protected data a
/// critical section reads or writes).
pub fn touch(addr: usize, len: usize, write: bool) {
    if len == 0 {
        return;
    }
    let first = addr >> LINE_SHIFT;
    let last = (addr + len - 1) >> LINE_SHIFT;
    for line in first..=last {
        if write {
            machine::store_plain(line << LINE_SHIFT, 0, 0);
        } else {
            machine::access(line << LINE_SHIFT, Access::Load);
        }
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
    machine::serialize();
    machine::sleep(micros * 1_000_000);
}

/// An idle wait of `nanos` (a backend waiting on its socket for the client's next query):
/// system call, leave the core, come back after exactly `nanos`, no timer slack.
pub fn idle_nanos(nanos: u64) {
    if !machine::active() {
        std::thread::sleep(std::time::Duration::from_nanos(nanos));
        return;
    }
    machine::serialize();
    machine::idle_wait(nanos * 1000);
}

/// `FUTEX_WAIT`: sleeps while `word` equals `expected` (compare and enqueue are atomic with
/// respect to [`futex_wake`], as in the kernel). Spurious returns are allowed, as the kernel's.
pub fn futex_wait(word: &AtomicU32, expected: u32) {
    if !machine::active() {
        host::wait(word.as_std(), expected);
        return;
    }
    machine::serialize();
    machine::futex_wait(word.as_std(), expected);
}

/// `FUTEX_WAKE`: wakes up to `n` sleepers of `word`.
pub fn futex_wake(word: &AtomicU32, n: u32) {
    if !machine::active() {
        host::wake(word.as_std(), n);
        return;
    }
    machine::serialize();
    machine::futex_wake(word.as_std() as *const _ as usize, n);
}

/// A scheduling decision point for the supervisor (the main task of `run`).
///
/// The machine learns of a spawned thread at the scheduler's next decision, and a supervisor
/// that neither blocks (a join) nor passes another scheduling point never reaches one: it would run
/// ahead alone, for instance while it polls a start gate with timed sleeps. Call this after
/// spawning, before such a loop: the new threads join the machine (at the last decision's
/// clock) and run until they pass the supervisor's clock or block.
pub fn settle() {
    if machine::active() {
        crate::coroutines::switch();
    }
}
