//! Reference locks, written only against [`crate::sync`] as a user's own lock would be: a
//! test-and-set spinlock ([`TasLock`]) and a ticket lock ([`TicketLock`]), whose waiters all spin
//! on one line (they collapse past a knee as cores grow), and an MCS queue lock ([`McsLock`]),
//! whose waiters each spin on their own line (flat). None mirrors a PostgreSQL function: they are
//! the textbook shapes the simulator's validation checks and the baselines a user compares a lock
//! against.
//!
//! All three are exclusive-only: they implement [`RawLwLock`](crate::RawLwLock) with
//! [`Mode::Shared`](crate::Mode::Shared) taken as exclusive, so that every harness (lwbench,
//! lwsim's sweep) runs them like the project's locks. They build in every configuration (std,
//! loom, shuttle, lwsim); `sweep` (`--cfg lwsim` only) is the lock workload the simulator's
//! sweeps and validation tests run on them.

mod mcs;
#[cfg(lwsim)]
pub mod sweep;
mod tas;
mod ticket;

pub use mcs::{McsLock, McsNode};
pub use tas::TasLock;
pub use ticket::TicketLock;
