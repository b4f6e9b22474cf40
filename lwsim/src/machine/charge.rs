//! Charging the running task: an access of a line through the coherence model ([`access`]),
//! time that touches no shared memory ([`charge_plain`], [`charge_instructions`]), and the wait
//! for its store buffer to drain ([`serialize`]).

use super::coherence::Req;
use super::executor::{at_sync_point, at_turn};
use super::with_machine;
use crate::access::{Access, Plain, LINE_SHIFT};
use crate::profile::cost;

/// Charges one access of the line holding `addr` to the running task.
#[inline]
pub fn access(addr: usize, kind: Access) {
    let line = addr >> LINE_SHIFT;
    if kind == Access::Rmw {
        serialize();
    }
    let mut arbitrated = false;
    loop {
        match at_sync_point(|m| m.request(line, kind, arbitrated)) {
            None | Some(Req::Done) => return,
            Some(Req::Arbitrate) => arbitrated = true,
            Some(Req::Booked(seq)) => {
                at_turn(|m| m.grant(line, seq));
                return;
            }
        }
    }
}

/// Charges time that touches no shared memory. Computation and fences then pass a sync point
/// (other threads' earlier events, such as an arrival in this core's run queue, happen first, and
/// the slice is checked); a PAUSE does not (a spin loop's next load is one).
pub fn charge_plain(p: Plain) {
    let sync = with_machine(|m| {
        let Some(m) = m else { return false };
        let a = m.agent();
        let ps = match p {
            Plain::Pause => {
                m.counters[a].pauses += 1;
                m.costs[cost::PAUSE]
            }
            Plain::Fence => {
                m.serialize_own();
                m.costs[cost::MFENCE]
            }
            Plain::Compute(ps) => m.smt_stretched(ps),
        };
        m.advance(ps);
        !matches!(p, Plain::Pause)
    });
    if sync {
        at_sync_point(|_| ());
    }
}

/// Charges `n` instructions of the running task: `n` times the profile's `instruction_ns`
/// (rounded to whole picoseconds per instruction), no coherence traffic, and, like a PAUSE, no
/// scheduling point (the next memory operation is one, at the later clock).
pub fn charge_instructions(n: u32) {
    with_machine(|m| {
        let Some(m) = m else { return };
        let ps = m.smt_stretched(m.instruction_ps * n as u64);
        m.advance(ps);
    });
}

/// Waits for the running task's store buffer to drain (RMWs, `mfence`, system calls, exit).
pub fn serialize() {
    let pending = with_machine(|m| m.is_some_and(|m| !m.tasks[m.current].sb.is_empty()));
    if pending {
        at_sync_point(|m| m.serialize_own());
    }
}
