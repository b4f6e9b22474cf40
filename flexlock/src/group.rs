//! The machinery under the group locks ([`crate::FlexLock`], [`crate::HolderServesLock`],
//! [`crate::ClogGroupLock`]), one file per mechanism. This file only declares them.
//!
//! * `config`: the policies, the group bound and the configuration (no PostgreSQL counterpart:
//!   PostgreSQL has the leader policy only, unbounded).
//! * `core`: the state every group lock shares (the wrapped lock, the group list, the value, the
//!   counters) and the wrappers of lock calls that may unwind.
//! * `drain`: the server of the last-releaser policies: serve the queue under an exclusive hold,
//!   release, and the releaser half of the 2011 FlexLock's handshake.
//! * `guards`: the read and write guards and the release each one performs per policy.
//! * `leader`: the elected leader, `ProcArrayGroupClearXid` (with a key rule,
//!   `TransactionGroupUpdateXidStatus`).
//! * `last_releaser`: the submitter of the 2011 FlexLock's last-releaser design.
//! * `holder_serves`: the submitter of the holder-serves variant (beyond PostgreSQL).
//!
//! Each file uses only those listed before it (the three protocols use none of each other).

pub(crate) mod config;
pub(crate) mod core;
pub(crate) mod drain;
pub(crate) mod guards;
pub(crate) mod holder_serves;
pub(crate) mod last_releaser;
pub(crate) mod leader;
