//! The lwsim backend's glue: the [`lwsim`] crate (a many-core machine in software:
//! coherence directory, OS model, smallest-virtual-clock scheduler on shuttle's executor)
//! re-exported as `lwlock::sync::lwsim`, which the shim's `--cfg lwsim` items and the project's
//! harnesses reach.
//!
//! Built with `RUSTFLAGS="--cfg lwsim"` (its own `CARGO_TARGET_DIR`, like the loom and shuttle
//! builds), every atomic, fence, spin hint, futex wait/wake, timed sleep, thread spawn, yield and
//! clock read that goes through [`crate::sync`] is executed by the simulator instead of the host.
//! The simulator itself is a normal crate (`cargo test -p lwsim` needs no cfg); only the choice of
//! backend is a cfg, for the reason the crate's docs give (a feature would be unified across the
//! dependency graph and leak into normal builds).
//!
//! # A user's own lock runs unchanged
//! Any lock written against `lwlock::sync` (atomics, [`crate::sync::spin_loop`],
//! [`crate::sync::Futex`]) is simulated as is; see `lwlock/examples/lwsim.rs` (`UserSpinLock`)
//! and [`crate::reference`]. Outside [`run`] the atomics behave as std's (no simulator is
//! consulted).
//!
//! ```ignore
//! use lwlock::sync::lwsim::{self, Profile, SimConfig};
//! let report = lwsim::run(SimConfig::new(Profile::builtin("xeon-2s-broadwell")?, 8), || {
//!     // spawn threads with lwlock::sync::thread::spawn, run lock code, join them
//! });
//! println!("{}", report.summary());
//! ```

// The crate's modules: the atomics the shim re-exports, the machine (`machine::active`, the
// counters), the profiles (`profile::cost`, `BUILTIN`, `COST_KEYS`), simulated threads.
pub use ::lwsim::{access, atomic, machine, profile, thread};
// The OS calls of the shim (spin hint, touch, clock, sleep, futex) and of harnesses (compute,
// settle, watch, totals) and the entry point.
pub use ::lwsim::{
    compute, futex_wait, futex_wake, now_nanos, pause, run, settle, sleep_micros, totals, touch,
    watch,
};
// The types: configuration, counters, the backend's blocking mutex, the line-aligned allocator.
pub use ::lwsim::{
    CoreCounters, LineAligned, LineCounters, Mutex, MutexGuard, Profile, Report, SimConfig,
};
