//! The store buffer (`model.store_buffer_entries`; 0 = none): a plain (non-SeqCst) atomic store or
//! a `touch` write retires at the issue cost and is buffered: it books its line like any store,
//! and its value is written when the line arrives and every older buffered store of the thread is
//! visible (x86-TSO's program-order visibility). The thread's own loads of that atomic read the
//! buffered value (forwarding). An RMW, an `mfence`, a system call (futex, sleep, yield) or the
//! thread's exit waits for the buffer to drain; a full buffer stalls the next store until its
//! oldest entry drains. The supervisor (main task) has no store buffer. A sub-word store
//! (`store_field`: a byte or half-word store into a word that others RMW, as the Linux
//! qspinlock's `WRITE_ONCE(lock->locked, ...)`) is buffered the same way and writes only its bits
//! at the drain; a load of that atomic by the same thread is not forwarded from it (x86 forwards
//! only from a store that covers the load) and waits for the drain.

use super::charge::access;
use super::coherence::Req;
use super::executor::at_sync_point;
use super::task::SbEntry;
use super::{with_machine, Machine};
use crate::access::{Access, LINE_SHIFT};
use crate::profile::cost;
use crate::trace;

/// A full-width store's mask.
const FULL: u64 = u64::MAX;

/// The word `old` after a sub-word store of `value` into the bits `mask`, which must hold `from`
/// (the protocol's precondition: a sub-word store replaces a field only its owner writes; a
/// panic names another writer).
pub(crate) fn merge_field(old: u64, mask: u64, from: u64, value: u64) -> u64 {
    assert!(
        old & mask == from,
        "a sub-word store found its bits at {:#x}, not {from:#x} (mask {mask:#x}): the field \
         has another writer",
        old & mask
    );
    (old & !mask) | (value & mask)
}

/// Writes a store of `width` bytes at `addr` into memory: the whole atomic, or for a masked
/// (sub-word) store only the masked bits ([`merge_field`]).
///
/// # Safety
/// `addr` is a live simulated atomic of `width` bytes.
unsafe fn write_store(addr: usize, width: u8, value: u64, mask: u64, from: u64) {
    use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed, Ordering::Release};
    // Only one simulated task runs at a time, so a masked load-then-store is atomic with respect
    // to every other simulated access.
    macro_rules! put {
        ($atomic:ty) => {{
            // SAFETY: the caller's contract.
            let a = unsafe { &*(addr as *const $atomic) };
            let v = if mask == FULL {
                value
            } else {
                merge_field(u64::from(a.load(Relaxed)), mask, from, value)
            };
            a.store(v as _, Release)
        }};
    }
    match width {
        1 => put!(AtomicU8),
        4 => put!(AtomicU32),
        8 => put!(AtomicU64),
        _ => {}
    }
}

impl Machine {
    /// The earliest drain time among the buffered stores (every task's) that write `line` or
    /// grant a booking of it (`u64::MAX`: none): a store's value, and for a booked one the
    /// line's new owner, take effect only then, possibly after the line was granted on.
    pub(super) fn next_drain_on(&self, line: usize) -> u64 {
        if self.sb_next == u64::MAX {
            // No store is buffered anywhere: no pass over every task's buffer.
            return u64::MAX;
        }
        self.tasks
            .iter()
            .flat_map(|t| t.sb.iter())
            .filter(|e| e.addr >> LINE_SHIFT == line || e.booking.is_some_and(|b| b.0 == line))
            .map(|e| e.drain)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Makes visible every buffered store whose drain time is at or before `t` (the running
    /// task's clock: every event before it has happened), in drain order.
    pub(super) fn drain_stores(&mut self, t: u64) {
        if t < self.sb_next {
            return;
        }
        let mut due = Vec::new();
        let mut next = u64::MAX;
        for (id, task) in self.tasks.iter_mut().enumerate() {
            while let Some(e) = task.sb.front().copied() {
                if e.drain > t {
                    next = next.min(e.drain);
                    break;
                }
                task.sb.pop_front();
                due.push((e.drain, id, e));
            }
        }
        self.sb_next = next;
        due.sort_by_key(|(d, id, _)| (*d, *id));
        for (drain, id, e) in due {
            if let Some(tr) = self.trace {
                if tr.covers(drain) {
                    let line_addr = e.addr >> LINE_SHIFT;
                    let label = self.line_label(self.coherence().watch_of(line_addr), line_addr);
                    let t = &self.tasks[id];
                    let hw = t
                        .core
                        .or(t.last_core)
                        .map_or("hw-".to_string(), |c| format!("hw{c}"));
                    eprintln!("@{} {hw} t{id} {label} drain", trace::ns(drain));
                }
            }
            if let Some((line, seq)) = e.booking {
                self.grant(line, seq);
            }
            // SAFETY: `addr` is a live simulated atomic of `width` bytes: the store was issued by
            // a task through `&self` of that atomic, and the memory cannot have been freed since:
            // a buffer drains in program order before its task's exit, system calls, RMWs and
            // SeqCst fences, so no other thread can have learned that the storing thread is done
            // with the object before this store is visible.
            unsafe { write_store(e.addr, e.width, e.value, e.mask, e.from) };
        }
    }

    /// Moves the running task's clock to when its store buffer is empty (an RMW, an `mfence`,
    /// a system call or an exit waits for it); the next sync point makes the stores visible.
    pub(super) fn serialize_own(&mut self) {
        let id = self.current;
        if let Some(last) = self.tasks[id].sb.back() {
            let d = last.drain;
            let t = &mut self.tasks[id];
            if d > t.clock {
                let a = self.agent();
                let wait = d - self.tasks[id].clock;
                self.tasks[id].clock = d;
                self.counters[a].busy_ps += wait;
            }
        }
    }

    /// A plain store by the running task: into its store buffer when the buffer is on and the
    /// store cannot complete at once (a miss, or older stores still buffered). Returns whether it
    /// was buffered (then the caller must not write the value: the drain will). `mask` and
    /// `from`: as [`SbEntry`]'s.
    fn store(
        &mut self,
        line_addr: usize,
        addr: usize,
        width: u8,
        value: u64,
        mask: u64,
        from: u64,
    ) -> StoreReq {
        let id = self.current;
        if self.sb_cap == 0 || self.tasks[id].supervisor {
            return StoreReq::Unbuffered;
        }
        if self.tasks[id].sb.len() >= self.sb_cap {
            // Full: wait for the oldest entry, then try again.
            let d = self.tasks[id].sb.front().map_or(0, |e| e.drain);
            let a = self.agent();
            let t = &mut self.tasks[id];
            let wait = d.saturating_sub(t.clock);
            t.clock += wait;
            self.counters[a].busy_ps += wait;
            return StoreReq::Retry;
        }
        let t0 = self.tasks[id].clock;
        let after = self.tasks[id].sb.back().map_or(0, |e| e.drain);
        let (done_at, booking) = match self.request(line_addr, Access::Store, true) {
            Req::Booked(seq) => (self.tasks[id].clock, Some((line_addr, seq))),
            _ => (self.tasks[id].clock, None),
        };
        // The sync point drained every entry due by `t0`; one still here is not yet visible (even
        // if due by `done_at`: only the next sync point writes it), so a store written now would
        // pass it, and could be overwritten by it when both are to the same atomic.
        if booking.is_none() && self.tasks[id].sb.is_empty() {
            // A hit with nothing older buffered: visible now.
            return StoreReq::Done;
        }
        let issue = self.costs[cost::STORE_HIT];
        let a = self.agent();
        // The task retires the store and goes on; undo the stall `request` charged.
        self.counters[a].busy_ps = self.counters[a].busy_ps.saturating_sub(done_at - t0) + issue;
        self.tasks[id].clock = t0 + issue;
        let drain = done_at.max(after);
        self.tasks[id].sb.push_back(SbEntry {
            drain,
            addr,
            width,
            value,
            mask,
            from,
            booking,
        });
        self.sb_next = self.sb_next.min(drain);
        StoreReq::Buffered
    }

    /// The youngest buffered store of the running task to `addr` of `width` bytes (store-to-load
    /// forwarding), charging a load hit. When that store is a sub-word store, the load cannot be
    /// forwarded from it (x86 forwards a load only from a store that covers it: Intel's
    /// optimization manual, "store forwarding"): the task waits until that store is visible and
    /// this returns `None`, so the load reads memory at its next sync point.
    fn forward(&mut self, addr: usize, width: u8) -> Option<u64> {
        let id = self.current;
        let e = *self.tasks[id]
            .sb
            .iter()
            .rev()
            .find(|e| e.addr == addr && e.width == width)?;
        if e.mask != FULL {
            // Wait for that store (and, in program order, every older one) to be visible.
            if e.drain > self.tasks[id].clock {
                let a = self.agent();
                self.counters[a].busy_ps += e.drain - self.tasks[id].clock;
                self.tasks[id].clock = e.drain;
            }
            return None;
        }
        let v = e.value;
        let a = self.agent();
        self.counters[a].ops += 1;
        self.counters[a].hits += 1;
        self.advance(self.costs[cost::LOAD_HIT]);
        Some(v)
    }
}

enum StoreReq {
    /// Performed (a hit): the caller writes the value now.
    Done,
    /// No store buffer here: the caller takes the ordinary path.
    Unbuffered,
    /// The buffer was full; the clock moved to its oldest drain: try again.
    Retry,
    /// In the buffer: the drain writes the value.
    Buffered,
}

/// A non-SeqCst atomic store of `value` (`width` bytes at `addr`): returns whether the simulator
/// took it (buffered, or performed as a hit; the caller must then write the value itself only
/// when this returns `Some(false)`). `None` outside a simulation.
pub fn store_plain(addr: usize, width: u8, value: u64) -> Option<bool> {
    store_field(addr, width, value, FULL, 0)
}

/// A sub-word store: the bits `mask` of the atomic (`width` bytes at `addr`), which hold `from`,
/// become `value`'s, as a plain store of a byte or half-word inside the word would write them; a
/// store like any other for the coherence model and the store buffer. `store_plain` is the
/// full-width case (`mask` all ones). Returns as [`store_plain`]; when the caller must write
/// itself (`Some(false)`), it replaces only the masked bits. Panics at the write if the bits no
/// longer hold `from` (another writer of the field: a protocol bug).
pub fn store_field(addr: usize, width: u8, value: u64, mask: u64, from: u64) -> Option<bool> {
    let line = addr >> LINE_SHIFT;
    loop {
        match at_sync_point(|m| m.store(line, addr, width, value, mask, from))? {
            StoreReq::Done => return Some(false),
            StoreReq::Buffered => return Some(true),
            StoreReq::Retry => continue,
            StoreReq::Unbuffered => {
                access(addr, Access::Store);
                return Some(false);
            }
        }
    }
}

/// A load's store-to-load forwarding: the running task's youngest buffered store to the same
/// address and width, if any (it is then charged as a hit and the caller returns that value).
pub fn forwarded(addr: usize, width: u8) -> Option<u64> {
    let buffered = with_machine(|m| m.is_some_and(|m| !m.tasks[m.current].sb.is_empty()));
    if !buffered {
        return None;
    }
    // A sync point, as every load: earlier events (and this task's due drains) happen first.
    at_sync_point(|m| m.forward(addr, width)).flatten()
}
