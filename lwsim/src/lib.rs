//! lwsim: a many-core machine in software that runs real lock code.
//!
//! Every atomic, fence, spin hint, futex wait/wake, timed sleep, thread spawn, yield and clock
//! read a program makes through this crate (its [`atomic`] types, [`pause`], [`futex_wait`],
//! [`thread::spawn`], [`now_nanos`], ...) is executed by the simulator when it runs inside
//! [`run()`]; outside a simulation they behave as std's. lwlock's `sync` shim re-exports it under
//! `RUSTFLAGS="--cfg lwsim"` (`lwlock::sync::lwsim`), which puts every lock written against
//! `lwlock::sync` on the simulated machine unchanged; the crate itself needs no cfg and no lwlock
//! (`cargo test -p lwsim` runs its tests in a normal build).
//!
//! * **Executor.** Simulated threads are stackful coroutines on one OS thread (lwsim's own
//!   executor, `coroutines.rs`, on corosensei's context switch), and every decision runs the
//!   eligible task with the smallest virtual clock (ties broken by a seeded per-task priority): a
//!   conservative discrete-event order. A task runs ahead without a switch while its clock stays
//!   below every other eligible task's ([`machine`]'s *horizon*), so a switch happens only where
//!   another thread's event comes first.
//! * **Coherence model** (`machine/directory.rs`, behind the trait of `machine/coherence.rs`): a directory entry per 64-byte line (owner in Modified, or a
//!   sharer set), each access charged by case (hit; load of a line Modified elsewhere; load of a
//!   Shared line; store/RMW that needs ownership, from a Modified owner or invalidating sharers;
//!   first touch from memory) and by distance (SMT sibling, same L3, same socket, other socket),
//!   with a seeded latency spread. A miss books its line's next slot and takes effect when the line
//!   arrives (the grant), not when it was requested; a new owner keeps the line for a residency
//!   window; requests waiting for a busy line are arbitrated in a seeded, not first-come, order;
//!   plain stores go through a store buffer (x86-TSO). Plain data is charged with [`touch`].
//! * **OS model** (`machine/cfs.rs`, behind the trait of `machine/scheduler.rs`): CFS as before Linux 6.6 (per-core run queues ordered by
//!   vruntime; the slice max(sched_latency / nr_running, min_granularity) and the wakeup
//!   granularity, scaled as the kernel scales them; a woken thread's sleeper credit and wakeup
//!   preemption; `sched_yield`'s skip; periodic load balancing by scheduling domain from a busy
//!   core), a context-switch cost, wakeups placed on an idle core if any, an idle-state exit latency on a core idle longer than the state's target residency,
//!   futex wait/wake system-call costs and wake-to-run latency (the wait's compare is its own
//!   scheduling point, after the word's coherence access), timed sleeps that advance the
//!   sleeper's clock (plus timer slack). Lock-holder preemption is not scripted: a holder whose
//!   slice ends is queued behind the other threads of its core like any thread.
//! * **Profiles** ([`profile`]): JSON files, each value with its source; built-in by name
//!   (`this-machine`, `xeon-2s-broadwell`, `xeon-4s-nehalem-ex`, `xeon-4s-westmere-ex`,
//!   `xeon-8s-westmere-ex`, `epyc-2s-genoa`, compiled in from the crate's `profiles/`) or by
//!   path.
//! * **Counters** ([`Report`]): per simulated core and per watched line (lock): virtual time,
//!   operations, line transfers by kind, time waiting for a line, futex sleeps and wakes,
//!   preemptions, context switches; simulated events per real second.
//! * **Line profile** (off by default, `LWSIM_LINES=N`): the top-N lines by transfers, printed
//!   to stderr when a simulation ends, each with its sampled call sites (see `line_profile.rs`).
//! * **Trace** (off by default, `LWSIM_TRACE=FROM_NS..TO_NS`): every coherence access and
//!   store-buffer drain in that window of virtual time, one line each on stderr, to follow a
//!   hand-off step by step (see `trace.rs`).
//!
//! Why lwlock selects it with a cfg and not a cargo feature: the shim's types must be the same for
//! every crate of a build (lwlock, flexlock, a user's crate), and a feature is unified across the
//! dependency graph, so `--all-features` (or one dependent enabling it) would silently put every
//! normal test and benchmark on the simulator. A cfg applies to the whole build, cannot leak into
//! normal builds, and is mutually exclusive with loom's and shuttle's like theirs.
//!
//! # The modules, bottom up
//! [`access`] (line size, access kinds) ← [`profile`], `line_profile` ← [`machine`] (its
//! executor, coherence model, store buffer, OS model and counters, each a file of its own) ←
//! `coroutines` (the tasks) ← `run` ([`run()`], [`SimConfig`]), [`atomic`], the OS calls
//! (`os`: [`pause`], [`compute`], [`instructions`], [`touch`], [`now_nanos`], [`sleep_micros`],
//! [`idle_nanos`], [`futex_wait`], [`futex_wake`], [`settle`]) and [`thread`] ← [`Mutex`]. [`LineAligned`] stands
//! alone.
//!
//! ```
//! use lwsim::atomic::AtomicU64;
//! use lwsim::{Profile, SimConfig};
//! use std::sync::atomic::Ordering;
//! use std::sync::Arc;
//!
//! let profile = Profile::builtin("xeon-2s-broadwell").unwrap();
//! let report = lwsim::run(SimConfig::new(profile, 2), || {
//!     let counter = Arc::new(AtomicU64::new(0));
//!     let threads: Vec<_> = (0..2)
//!         .map(|_| {
//!             let c = counter.clone();
//!             lwsim::thread::spawn(move || {
//!                 for _ in 0..100 {
//!                     c.fetch_add(1, Ordering::Relaxed);
//!                 }
//!             })
//!         })
//!         .collect();
//!     for t in threads {
//!         t.join().unwrap();
//!     }
//! });
//! // 200 RMWs on one line; most of them take it from the other core.
//! assert_eq!(report.total().ops, 200);
//! assert!(report.total().rfo_from_modified > 0);
//! println!("{}", report.summary());
//! ```

pub mod access;
mod alloc;
pub mod atomic;
mod coroutines;
mod host;
mod line_profile;
pub mod machine;
mod mutex;
mod os;
pub mod profile;
mod run;
pub mod thread;
mod trace;

pub use alloc::LineAligned;
pub use machine::{
    debug_state, supervisor_wait_until, totals, watch, watched_lines, CoreCounters, LineCounters,
    Report,
};
pub use mutex::{Mutex, MutexGuard};
pub use os::{
    compute, futex_wait, futex_wake, idle_nanos, instructions, now_nanos, pause, settle,
    sleep_micros, spin_pauses, touch,
};
pub use profile::Profile;
pub use run::{run, SimConfig};
