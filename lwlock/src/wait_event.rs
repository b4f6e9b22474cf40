//! Tranches and wait-event publication: the `pg_stat_activity` view of this library.
//!
//! Mirrors `LWLockReportWaitStart`/`LWLockReportWaitEnd` (`lwlock.c`),
//! `pgstat_report_wait_start`/`_end` (`wait_event.h`) and the tranche table of `lwlocklist.h`.
//!
//! Every lock carries a [`Tranche`] (a `u16` id, as in PostgreSQL 10+, where each named lock has its
//! own tranche). While a thread waits, its wait record holds one `u32` [`WaitEvent`]: the class in
//! the top byte and the event id (the tranche, or an IPC event) in the low 16 bits. Publication is a
//! single relaxed store, exactly like PostgreSQL's volatile store into `MyProc->wait_event_info`;
//! samplers read the word once, so samples are racy but never torn. The sampler itself
//! ([`sample_waits`](crate::sample_waits)) walks the wait records, so it lives with them in `proc`.
//!
//! Unlike PostgreSQL, which shows only the semaphore sleep, this library also publishes *spinning*
//! (on the classic LWLock's mutex and on the atomic LWLock's wait-list bit) as its own class, so the
//! blind spot of §8.1 of the reference (`Timeout:SpinDelay` covering only the sleeps) is visible.

use std::sync::Mutex;

/// A lock tranche: the name under which waits on a lock are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tranche(u16);

/// Names of the built-in tranches, indexed by id. Ids are fixed, like `lwlocklist.h`.
const BUILTIN_TRANCHES: [&str; 6] = [
    "LWLock",
    "ProcArray",
    "XactSLRU",
    "WALWrite",
    "XidGen",
    "BufferContent",
];

/// Tranches registered at run time (`LWLockNewTrancheId`), after the built-ins.
static REGISTERED: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

impl Tranche {
    /// The default tranche of a lock created without a name.
    pub const DEFAULT: Tranche = Tranche(0);
    /// `ProcArrayLock`.
    pub const PROC_ARRAY: Tranche = Tranche(1);
    /// `CLogControlLock` (`XactSLRU` since PostgreSQL 13).
    pub const XACT_SLRU: Tranche = Tranche(2);
    /// `WALWriteLock`.
    pub const WAL_WRITE: Tranche = Tranche(3);
    /// `XidGenLock`.
    pub const XID_GEN: Tranche = Tranche(4);
    /// Buffer content locks.
    pub const BUFFER_CONTENT: Tranche = Tranche(5);

    /// Registers a new tranche name and returns its id (`LWLockNewTrancheId`). Registering the same
    /// name twice returns the first id.
    ///
    /// # Panics
    /// If more than 65 535 tranches are registered.
    pub fn register(name: &'static str) -> Tranche {
        if let Some(i) = BUILTIN_TRANCHES.iter().position(|n| *n == name) {
            return Tranche(i as u16);
        }
        let mut reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = reg.iter().position(|n| *n == name) {
            return Tranche((BUILTIN_TRANCHES.len() + i) as u16);
        }
        let id = BUILTIN_TRANCHES.len() + reg.len();
        assert!(
            id <= u16::MAX as usize,
            "too many lock tranches registered (limit 65535)"
        );
        reg.push(name);
        Tranche(id as u16)
    }

    /// The tranche id.
    pub const fn id(self) -> u16 {
        self.0
    }

    /// The tranche with this id. Unknown ids are allowed; they are named `"unknown"`.
    pub const fn from_id(id: u16) -> Tranche {
        Tranche(id)
    }

    /// The tranche's name (`GetLWTrancheName`).
    pub fn name(self) -> &'static str {
        let i = self.0 as usize;
        if i < BUILTIN_TRANCHES.len() {
            return BUILTIN_TRANCHES[i];
        }
        let reg = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
        reg.get(i - BUILTIN_TRANCHES.len())
            .copied()
            .unwrap_or("unknown")
    }
}

/// The class of a wait, in the top byte of a [`WaitEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum WaitClass {
    /// Sleeping on the wait record's semaphore for an LWLock (`PG_WAIT_LWLOCK`, 0x01).
    LwLock = 0x01,
    /// Spinning (or backing off) on a lock's spinlock or wait-list bit. PostgreSQL shows only the
    /// backoff sleeps, as `Timeout:SpinDelay`; this library shows all of it.
    Spin = 0x02,
    /// Sleeping for another thread to do our work (`PG_WAIT_IPC`, 0x08): group updates.
    Ipc = 0x08,
}

/// IPC wait events (group protocols), the low 16 bits of a [`WaitClass::Ipc`] event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum IpcEvent {
    /// A follower waiting for a group leader to clear its xid (`ProcArrayGroupUpdate`).
    ProcArrayGroupUpdate = 1,
    /// A follower waiting for a group leader to set its CLOG status (`XactGroupUpdate`).
    XactGroupUpdate = 2,
    /// A submitter waiting for a FlexLock's last releaser to run its operation.
    FlexLockGroupUpdate = 3,
}

/// One published wait: class in bits 24..32, event id in bits 0..16. Zero means "not waiting".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WaitEvent(u32);

impl WaitEvent {
    /// Not waiting.
    pub const NONE: WaitEvent = WaitEvent(0);

    /// Sleeping on a lock of this tranche.
    pub const fn lwlock(tranche: Tranche) -> WaitEvent {
        WaitEvent(((WaitClass::LwLock as u32) << 24) | tranche.0 as u32)
    }
    /// Spinning on a lock of this tranche.
    pub const fn spin(tranche: Tranche) -> WaitEvent {
        WaitEvent(((WaitClass::Spin as u32) << 24) | tranche.0 as u32)
    }
    /// Waiting for a group protocol.
    pub const fn ipc(event: IpcEvent) -> WaitEvent {
        WaitEvent(((WaitClass::Ipc as u32) << 24) | event as u32)
    }
    /// The raw encoding.
    pub const fn to_bits(self) -> u32 {
        self.0
    }
    /// Decodes a raw word as read from a wait record.
    pub const fn from_bits(bits: u32) -> WaitEvent {
        WaitEvent(bits)
    }
    /// Whether this is a wait at all.
    pub const fn is_waiting(self) -> bool {
        self.0 != 0
    }
    /// The class, or `None` when not waiting or unknown.
    pub fn class(self) -> Option<WaitClass> {
        match self.0 >> 24 {
            0x01 => Some(WaitClass::LwLock),
            0x02 => Some(WaitClass::Spin),
            0x08 => Some(WaitClass::Ipc),
            _ => None,
        }
    }
    /// `pg_stat_activity.wait_event_type`: `"LWLock"`, `"Spin"`, `"IPC"` or `""`.
    pub fn type_name(self) -> &'static str {
        match self.class() {
            Some(WaitClass::LwLock) => "LWLock",
            Some(WaitClass::Spin) => "Spin",
            Some(WaitClass::Ipc) => "IPC",
            None => "",
        }
    }
    /// `pg_stat_activity.wait_event`: the tranche or IPC event name.
    pub fn event_name(self) -> &'static str {
        let id = (self.0 & 0xFFFF) as u16;
        match self.class() {
            Some(WaitClass::LwLock | WaitClass::Spin) => Tranche(id).name(),
            Some(WaitClass::Ipc) => match id {
                1 => "ProcArrayGroupUpdate",
                2 => "XactGroupUpdate",
                3 => "FlexLockGroupUpdate",
                _ => "unknown",
            },
            None => "",
        }
    }
}

impl std::fmt::Display for WaitEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.is_waiting() {
            write!(f, "{}:{}", self.type_name(), self.event_name())
        } else {
            f.write_str("-")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_round_trips_and_names() {
        let e = WaitEvent::lwlock(Tranche::PROC_ARRAY);
        assert_eq!(e.class(), Some(WaitClass::LwLock));
        assert_eq!(e.to_string(), "LWLock:ProcArray");
        assert_eq!(
            WaitEvent::spin(Tranche::XACT_SLRU).to_string(),
            "Spin:XactSLRU"
        );
        assert_eq!(
            WaitEvent::ipc(IpcEvent::ProcArrayGroupUpdate).to_string(),
            "IPC:ProcArrayGroupUpdate"
        );
        assert_eq!(WaitEvent::from_bits(e.to_bits()), e);
        assert!(!WaitEvent::NONE.is_waiting());
        assert_eq!(WaitEvent::NONE.to_string(), "-");
    }

    #[test]
    fn register_is_idempotent_and_named() {
        let a = Tranche::register("test_tranche_a");
        let b = Tranche::register("test_tranche_b");
        assert_ne!(a, b);
        assert_eq!(Tranche::register("test_tranche_a"), a);
        assert_eq!(a.name(), "test_tranche_a");
        assert_eq!(Tranche::register("ProcArray"), Tranche::PROC_ARRAY);
        assert_eq!(Tranche::from_id(60000).name(), "unknown");
    }
}
