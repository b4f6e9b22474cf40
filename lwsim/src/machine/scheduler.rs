//! The OS model's seam: the [`Scheduler`] trait the machine asks before every operation of a
//! thread and at every system call that takes or leaves a core. The shipped model is `Cfs`
//! (`cfs.rs`, CFS before Linux 6.6); EEVDF would be a second one. The trait is generic over the
//! machine it is given (`M`), so that it, and each model, depends on nothing of the machine's file.

/// An OS model: which thread runs on which core, and when it gives the core up.
pub(crate) trait Scheduler<M> {
    /// Before an operation of thread `id` (the running task of `m`): take a core if it needs
    /// one, balance, check its slice. Returns whether it may go on (else it is parked or
    /// preempted, and yields).
    fn before_operation(&mut self, m: &mut M, id: usize) -> bool;
    /// Thread `id` leaves its core (sleep, futex wait, exit) at its clock.
    fn leave_core(&mut self, m: &mut M, id: usize);
    /// `sched_yield` by thread `id`: whether another thread took its core (it then yields).
    fn yield_now(&mut self, m: &mut M, id: usize) -> bool;
    /// The thread running on `core`, if any.
    fn running(&self, core: usize) -> Option<usize>;
    /// `core`'s idle time from 0 up to time `t` (ps).
    fn idle_through(&self, core: usize, t: u64) -> u64;
    /// The core on whose run queue thread `id` waits, if any.
    fn queued_on(&self, id: usize) -> Option<usize>;
    /// Each busy core's state, one line each, for `debug_state`.
    fn describe_cores(&self) -> String;
    /// For a spin jump of the running thread `id`: `None` if the model may act on it at any
    /// operation (it has no core, or threads wait for its core), else the time of the model's
    /// next own event on it (a periodic balance; `u64::MAX`: none). Until then, only another
    /// thread's arrival on its core (which interrupts the jump) changes what its operations see.
    fn spin_quiet(&self, m: &M, id: usize) -> Option<u64>;
}
