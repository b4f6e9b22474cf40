//! The coherence model's seam: the [`Coherence`] trait the machine charges every access
//! through, and what the first phase of an access did ([`Req`]). The shipped model is
//! `Directory` (`directory.rs`). The trait is generic over the machine it is given (`M`), so
//! that it, and any model beside `Directory`, depends on nothing of the machine's file.

use crate::access::Access;

/// A coherence model: what each access of a line costs the running task and when it takes
/// effect. The machine calls [`Coherence::request`] at the access's sync point and, for a booked
/// miss, [`Coherence::grant`] at its second one (every earlier event has then run).
pub(crate) trait Coherence<M> {
    /// Phase 1 of an access of `kind` to `line_addr` by the running task of `m`, at its clock:
    /// moves the task's clock to when the operation takes effect (and charges and counts it
    /// through `m`), or to when it may request again after losing arbitration.
    fn request(&mut self, m: &mut M, line_addr: usize, kind: Access, arbitrated: bool) -> Req;
    /// Phase 2: the booked transfer `seq` of `line_addr` (and every one booked before it) is
    /// granted: the granted state becomes its requester's.
    fn grant(&mut self, line_addr: usize, seq: u64);
    /// Marks `line_addr` as watched line `idx` (1-based, see `counters::watch`).
    fn set_watch(&mut self, line_addr: usize, idx: u32);
    /// The watched-line index of `line_addr` (0: not watched).
    fn watch_of(&self, line_addr: usize) -> u32;
    /// Whether hardware thread `agent`'s loads of `line_addr` hit from now on until another
    /// core's request changes the line (it holds the line in the granted state), so that a
    /// spin jump may skip them (`spin.rs`): `None` if not, else when the first exclusive
    /// transfer booked already starts (`u64::MAX`: none), its loads' last chance to hit.
    fn spin_holds(&self, line_addr: usize, agent: usize) -> Option<u64>;
    /// Registers task `task`'s spin jump `epoch` on `line_addr`: the next exclusive booking of
    /// the line wakes it (the machine's `spin_wake`) at the first of its loads the booking makes miss.
    fn add_spinner(&mut self, line_addr: usize, task: usize, epoch: u64);
}

/// What phase 1 of an access did.
pub(crate) enum Req {
    /// Served (a hit): the operation takes effect now.
    Done,
    /// Lost arbitration for a busy line: the task's clock moved on; request again.
    Arbitrate,
    /// Booked as transfer `seq`; the operation takes effect at the grant.
    Booked(u64),
}
