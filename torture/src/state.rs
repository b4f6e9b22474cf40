//! The state of one torture run that its threads share: the locks under torture, each with its
//! target and checking context, and the run's flags (stop, done) and configuration.

use crate::checks::{LockCtx, Target};
use crate::config::Config;
use lwharness::registry::LockKind;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Mutex;
use std::time::Instant;

/// One lock under torture.
pub(crate) struct LockRun {
    pub(crate) name: LockKind,
    pub(crate) desc: String,
    pub(crate) threads: usize,
    pub(crate) target: Box<dyn Target>,
    pub(crate) ctx: LockCtx,
}

pub(crate) struct Run {
    pub(crate) cfg: Config,
    pub(crate) locks: Vec<LockRun>,
    pub(crate) stop: AtomicBool,
    /// Set (under `print`) once the final summary is being printed: the monitor stands down.
    pub(crate) done: AtomicBool,
    pub(crate) next_uid: AtomicU64,
    /// Serialises the final summary and a stall report.
    pub(crate) print: Mutex<()>,
    pub(crate) started: Instant,
}
