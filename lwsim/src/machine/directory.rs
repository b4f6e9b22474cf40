//! The directory model of coherence, [`Directory`], behind the [`Coherence`] trait
//! (`coherence.rs`) the machine charges every access through.
//!
//! # The directory model
//! A directory entry per 64-byte line (`Line`): `owner` (a hardware thread holding it Modified or
//! Exclusive) or a sharer set. Costs by case (profile keys in brackets):
//!
//! | access | line state | cost | booked |
//! |---|---|---|---|
//! | load | owned or shared by me | `load_hit` | no |
//! | load | Modified at `o` | transfer(me, o) → both share it | yes |
//! | load | Shared by others | transfer(me, nearest sharer); under `model.shared_load_llc` 1, `llc_shared_load` when a sharer shares my L3 | yes |
//! | store/RMW | owned by me | `store_hit` / `rmw_hit` | no |
//! | store/RMW | Modified at `o` | transfer(me, o) (+ `rmw_hit`) → I own it | yes |
//! | store/RMW | Shared by others | transfer(me, farthest sharer) + `invalidate_per_sharer` × (sharers − 1) (+ `rmw_hit`) | yes |
//! | any | never touched | `memory` (+ `rmw_hit`) | yes |
//!
//! transfer(a, b) is `transfer_smt`, `transfer_l3`, `transfer_socket` or `transfer_remote` by
//! where the two hardware threads sit, times a seeded draw uniform in `[1 − jitter, 1 + jitter]`
//! (the published spread of core-to-core latencies; `model.jitter`).
//!
//! **Pair latencies** (`model.pair_latency`: 1 since model 3 on the profiles with a matrix, 0, the
//! classes above, on the others and model 2's choice everywhere). At 1 transfer(a, b)
//! is the profile's measured matrix value for the pair (`topology.pair_matrix`, a core-to-core
//! CAS ping-pong's one-way latency), fixed: the jitter draw is still made (so no other draw
//! moves) but not applied, the spread it stood for being the matrix's spread across pairs. Memory
//! fills, an L3-served Shared load and the per-sharer invalidation cost are charged as under 0;
//! under `home_node` 1 a cross-socket pair's extra hops are added to its value. The supervisor
//! (no core) is charged as hardware thread 0, as under 0, and its transfers with thread 0 take
//! the SMT class.
//!
//! **When an access takes effect.** An access is two phases. At its request the task's clock is
//! the request time: a hit is served at once. A miss *books* the line's next slot: its transfer
//! starts when the line is free (`busy_until`) and, for a line with an owner, when the owner's
//! residency window has ended; it arrives (the *grant*) one transfer later, and grants keep
//! booking order. The task's clock moves to the grant, and only when every other task's earlier
//! events have run (a second scheduling point, which no preemption can enter: the hardware
//! completes the access) does the operation read and write its value, and does the line's
//! *granted* state become the requester's. So a CAS whose expected value was read before another
//! core's grant fails, as on hardware, and an owner keeps hitting its line until the booked
//! transfer starts. The state a new request is charged against is the *tail* state (after every
//! booked transfer); hits are checked against the granted state.
//!
//! **Residency** (`model.residency_ns`): a new owner keeps the line that long (jittered) before
//! the next booked transfer may start, at least for its own RMW; its accesses in the window hit.
//! A structural option, `model.residency_after_store` (default 0 since model 3; 1 was model 2's
//! choice), decides whether a plain store's grant opens the window too; at 0 only an RMW's does.
//! The window applies only under `model.ownership_until_snoop` 0 (the default).
//! `model.residency_spread` shapes the window's distribution around the same mean (the one-RMW
//! floor aside), from that narrow window (0) to an exponential one (1, not jittered), calibrated
//! on a machine's run lengths.
//! Real cores answer a snoop only after a few local operations, which is why a thread does several
//! `fetch_add`s per line ownership and a 2-thread CAS loop needs about 1.5 CAS per success, not 2.
//!
//! **Ownership until the snoop** (`model.ownership_until_snoop`, default 0, the residency window
//! above, kept in model 3 because the run-length and CAS-loop measurements do not decide between
//! the two). At 1 no window is drawn into the booking (it is still drawn, so no other draw moves):
//! a request for a line with an owner is split into its snoop, `snoop_fraction` (default 0.5) of
//! the transfer's jittered latency `c`, and the data's way back, the rest. The transfer starts
//! when the snoop reaches the owner, `max(request + snoop, the owner's grant + its own operation)`
//! (its RMW's `rmw_hit`; nothing after a plain store), and the line arrives `c − snoop` later, so
//! an uncontended transfer costs `c` as under 0. The owner's accesses issued before the start hit
//! (the hit rule above); the first issued after it misses and is booked behind the requester. A
//! request queued behind others sends its snoop on at once, so a hand-off between waiters costs
//! `c − snoop` after the owner's operation rather than a window plus `c`. Loads of a Shared line
//! and invalidations of sharers are charged as under 0.
//!
//! **Home node** (`model.home_node`, default 0). At 1 a transfer between two sockets goes through
//! the line's home socket (line index mod sockets): requester → home → owner (or sharer) →
//! requester, charged `transfer_remote` plus one one-way hop `(transfer_remote −
//! transfer_socket) / 2` per socket hop beyond the two of a one-hop pair's round trip, hop counts
//! from the profile's `topology.hops` (every pair one hop when it has none). So a home on the
//! requester's or the owner's socket costs nothing extra between one-hop sockets, a third socket
//! one hop, and on a board with two-hop pairs (the 8-socket profile) those pairs pay two hops
//! more. A transfer within a socket is served there as under 0 (the L3's core-valid bits find the
//! owner without the home).
//!
//! **Arbitration** (`model.arbitration`, `model.arbitration_local`): requests that find the line
//! busy are not served first come, first served: each draws a delay uniform over a fraction of the
//! time until the line is free (scaled by `arbitration_local` on the owner's socket) and requests
//! again; the first to request after its delay is booked first. The delay never extends past the
//! time the line would have been free, so a winner pays nothing for arbitration.
//!
//! **Shared loads** hold the line for the profile's `shared_load_occupancy` fraction of their cost
//! (1: the Boyd-Wickizer et al. model, every re-fetch serialized; 0 lets shared reads overlap).
//! A second structural option, `model.shared_load_llc` (1 on the Intel profiles since model 3, 0 on
//! the others and model 2's choice everywhere), decides who
//! serves a load of a line Shared by others (Modified nowhere, in the tail state): at 0 the nearest
//! sharer, by a transfer as above; at 1 the last-level cache, as an inclusive L3 does on Intel
//! parts: at `llc_shared_load` when one of the sharers is in the requester's L3 domain, else at the
//! transfer to the nearest sharer (the remote L3; no Shared-state row for a cross-socket load is
//! transcribed, so the Modified row's figure is kept), and pipelined: the load holds the line for
//! no time, so concurrent Shared loads overlap (`shared_load_occupancy` does not apply). The
//! requester joins the sharer set under both. A load of a Modified line (the first re-fetch after
//! a store) is a transfer from its owner under both.
//!
//! Limits: lines are never evicted (no capacity model); SMT siblings do not share their L1 (a
//! line moves between them at `transfer_smt`), and memory operations' costs do not depend on the
//! sibling; there is no interconnect bandwidth limit beyond one transfer per line at a
//! time; prefetching, speculation and memory-level parallelism of one thread's misses are not
//! modelled (a thread's loads and RMWs are served one after another).
//!

use super::addr_map::Map;
use super::coherence::{Coherence, Req};
use super::stream::Stream;
use super::Machine;
use crate::access::{Access, MAX_AGENTS};
use crate::profile::{cost, model, Profile};
use crate::trace;
use std::collections::VecDeque;

const WORDS: usize = MAX_AGENTS / 64;
const NONE: u16 = u16::MAX;

#[derive(Clone, Copy, Default)]
struct Bits([u64; WORDS]);
impl Bits {
    fn has(&self, a: usize) -> bool {
        self.0[a / 64] >> (a % 64) & 1 != 0
    }
    fn set(&mut self, a: usize) {
        self.0[a / 64] |= 1 << (a % 64);
    }
    fn only(a: usize) -> Bits {
        let mut b = Bits::default();
        b.set(a);
        b
    }
    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
    fn count(&self) -> u64 {
        self.0.iter().map(|w| w.count_ones() as u64).sum()
    }
    fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(i, w)| {
            let mut w = *w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros() as usize;
                w &= w - 1;
                Some(i * 64 + b)
            })
        })
    }
}

/// A transfer booked on a line and not yet granted (see the module docs, *Coherence*).
#[derive(Clone, Copy, Debug)]
struct Booking {
    seq: u64,
    /// When the transfer starts: the previous holders lose the line (an exclusive request) or
    /// the owner is downgraded (a load).
    start: u64,
    agent: u16,
    /// Store/RMW/fill (the requester becomes the only holder) or load (it joins the sharers).
    exclusive: bool,
}

/// A directory entry.
#[derive(Clone)]
struct Line {
    /// The granted state: the hardware thread holding the line Modified/Exclusive, or `NONE`.
    owner: u16,
    /// Threads holding it Shared in the granted state (when `owner == NONE`).
    sharers: Bits,
    /// The state once every booked transfer is granted: what a new request is charged against.
    tail_owner: u16,
    /// See `tail_owner`.
    tail_sharers: Bits,
    /// Booked transfers, in booking (and grant) order.
    pending: VecDeque<Booking>,
    next_seq: u64,
    /// The line serves one transfer at a time: the next one starts at this time.
    busy_until: u64,
    /// The tail owner keeps the line until this time (its residency window).
    resident_until: u64,
    /// The last booked grant (grants are kept in booking order).
    last_grant: u64,
    /// 1 + index into the watched lines, or 0.
    watch: u32,
    /// Tasks in a spin jump on this line, with their jumps' epochs (`spin.rs`): woken by the
    /// next exclusive booking.
    spinners: Vec<(usize, u64)>,
}

impl Default for Line {
    fn default() -> Line {
        Line {
            owner: NONE,
            sharers: Bits::default(),
            tail_owner: NONE,
            tail_sharers: Bits::default(),
            pending: VecDeque::new(),
            next_seq: 0,
            busy_until: 0,
            resident_until: 0,
            last_grant: 0,
            watch: 0,
            spinners: Vec::new(),
        }
    }
}

impl Line {
    /// Whether `a`'s access of `kind` at time `t` is served by the granted state: a load by a
    /// holder before any booked exclusive transfer starts, a store/RMW by the owner before any
    /// booked transfer starts (or by the only sharer, a silent upgrade, when nothing is booked).
    fn hits(&self, a: usize, kind: Access, t: u64) -> bool {
        let a16 = a as u16;
        match kind {
            Access::Load => {
                let excl = self
                    .pending
                    .iter()
                    .find(|b| b.exclusive)
                    .map_or(u64::MAX, |b| b.start);
                (self.owner == a16 || (self.owner == NONE && self.sharers.has(a))) && t < excl
            }
            _ => {
                let any = self.pending.front().map_or(u64::MAX, |b| b.start);
                t < any && self.owner == a16
            }
        }
    }

    /// Grants every booking up to `seq` (in order): the granted state becomes theirs.
    fn grant_through(&mut self, seq: u64) {
        while let Some(b) = self.pending.front().copied() {
            if b.seq > seq {
                break;
            }
            self.pending.pop_front();
            if b.exclusive {
                self.owner = b.agent;
                self.sharers = Bits::default();
            } else {
                if self.owner != NONE {
                    self.sharers = Bits::only(self.owner as usize);
                    self.owner = NONE;
                }
                self.sharers.set(b.agent as usize);
            }
        }
    }
}

/// The shipped coherence model (the module docs): a directory entry per line, its parameters
/// from the profile, and its own random stream.
pub(crate) struct Directory {
    lines: Map<usize, Line>,
    shared_occupancy: f64,
    /// `model.residency_ns` in ps.
    residency: u64,
    /// `model.residency_spread`.
    residency_spread: f64,
    /// `model.jitter`.
    jitter: f64,
    /// `model.arbitration`.
    arbitration: f64,
    /// `model.arbitration_local`.
    arbitration_local: f64,
    /// `model.invalidate_per_sharer_ns` in ps.
    inv_per_sharer: u64,
    /// `model.residency_after_store`: a plain store's grant opens a residency window.
    hold_after_store: bool,
    /// `model.shared_load_llc`: a load of a line Shared by others is served by the last-level
    /// cache, pipelined.
    llc_serves_shared: bool,
    /// `model.ownership_until_snoop`: an owner keeps its line until the next request's snoop
    /// reaches it (instead of a residency window).
    until_snoop: bool,
    /// `model.snoop_fraction`: the snoop's part of a transfer's latency.
    snoop_fraction: f64,
    /// `model.home_node`: a transfer between sockets goes through the line's home socket.
    home_node: bool,
    /// `model.pair_latency`: a transfer between two hardware threads costs the profile's
    /// measured value for the pair, not jittered.
    pairs: bool,
    /// The latency spread's, residency windows' and arbitration delays' draws.
    stream: Stream,
}

impl Directory {
    /// The model with `prof`'s parameters, drawing from `stream`.
    pub(crate) fn new(prof: &Profile, stream: Stream) -> Directory {
        let pairs = prof.param(model::PAIR_LATENCY) >= 0.5;
        let n = prof.hw_threads();
        assert!(
            !pairs || prof.pairs.len() == n * n,
            "lwsim: profile {}: pair_latency 1 needs a measured pair matrix of its {n} hardware \
             threads (topology.pair_matrix), never the distance classes instead",
            prof.name
        );
        Directory {
            lines: Map::default(),
            shared_occupancy: prof.param(model::SHARED_LOAD_OCCUPANCY),
            residency: (prof.param(model::RESIDENCY_NS) * 1000.0).round() as u64,
            residency_spread: prof.param(model::RESIDENCY_SPREAD),
            jitter: prof.param(model::JITTER),
            arbitration: prof.param(model::ARBITRATION),
            arbitration_local: prof.param(model::ARBITRATION_LOCAL),
            inv_per_sharer: (prof.param(model::INVALIDATE_PER_SHARER_NS) * 1000.0).round() as u64,
            hold_after_store: prof.param(model::RESIDENCY_AFTER_STORE) >= 0.5,
            llc_serves_shared: prof.param(model::SHARED_LOAD_LLC) >= 0.5,
            until_snoop: prof.param(model::OWNERSHIP_UNTIL_SNOOP) >= 0.5,
            snoop_fraction: prof.param(model::SNOOP_FRACTION),
            home_node: prof.param(model::HOME_NODE) >= 0.5,
            pairs,
            stream,
        }
    }

    /// The next draw of the model's stream, uniform in `[0, 1)`.
    fn uniform(&mut self) -> f64 {
        self.stream.uniform()
    }

    /// A new owner's residency window: `residency_ns` jittered as a transfer when
    /// `residency_spread` is 0 (the draws as they were before the key existed), else
    /// `residency_ns × ((1 − s) + s × E)` with `E` exponential of mean 1.
    fn residency_window(&mut self) -> u64 {
        let s = self.residency_spread;
        if s == 0.0 || self.residency == 0 {
            return self.jittered(self.residency);
        }
        let e = -(1.0 - self.uniform()).ln();
        (self.residency as f64 * ((1.0 - s) + s * e)).round() as u64
    }

    /// A transfer's cost with the profile's latency spread: uniform in `[1 - j, 1 + j]` times
    /// the nominal cost.
    fn jittered(&mut self, c: u64) -> u64 {
        if self.jitter == 0.0 || c == 0 {
            return c;
        }
        let f = 1.0 + self.jitter * (2.0 * self.uniform() - 1.0);
        (c as f64 * f).round() as u64
    }

    /// [`Coherence::request`] on the directory entry `line` of `line_addr`.
    fn request_line(
        &mut self,
        m: &mut Machine,
        line: &mut Line,
        line_addr: usize,
        kind: Access,
        arbitrated: bool,
    ) -> Req {
        let a = m.agent();
        let t0 = m.tasks[m.current].clock;
        let costs = m.costs;
        let n = m.ncores;
        let hw = |x: usize| if x == n { 0 } else { x };
        let rmw = if kind == Access::Rmw {
            costs[cost::RMW_HIT]
        } else {
            0
        };
        if line.hits(a, kind, t0) {
            let c = match kind {
                Access::Load => costs[cost::LOAD_HIT],
                Access::Store => costs[cost::STORE_HIT],
                Access::Rmw => costs[cost::RMW_HIT],
            };
            m.count(line.watch, line_addr, a, kind, 0, 0, c);
            m.tasks[m.current].clock = t0 + c;
            return Req::Done;
        }
        // Silent upgrade: the only sharer writes, nothing booked.
        if kind != Access::Load
            && line.pending.is_empty()
            && line.owner == NONE
            && line.sharers.has(a)
            && line.sharers.count() == 1
        {
            line.owner = a as u16;
            line.sharers = Bits::default();
            line.tail_owner = a as u16;
            line.tail_sharers = Bits::default();
            let c = if kind == Access::Rmw {
                costs[cost::RMW_HIT]
            } else {
                costs[cost::STORE_HIT]
            };
            line.resident_until = line.resident_until.max(t0 + c);
            m.count(line.watch, line_addr, a, kind, 0, 0, c);
            m.tasks[m.current].clock = t0 + c;
            return Req::Done;
        }
        let prof = &m.prof;
        let home = self.home_node.then_some(line_addr % prof.sockets);
        let pairs = self.pairs;
        let dist = |x: usize| transfer_via(prof, hw(a), hw(x), home, pairs);
        // The transfer's nominal cost, what it is, whether it is exclusive, whether the line has
        // an owner, and whether the cost is a pair's measured latency (`pair_latency` 1: not
        // jittered), from the state the line will be in once every booked transfer is granted.
        let (c, what, exclusive, owned, fixed) = if line.tail_owner == a as u16 {
            // Only reachable with a stale granted state; served as a hit of the tail.
            (0, 0, kind != Access::Load, true, false)
        } else if line.tail_owner != NONE {
            let o = line.tail_owner as usize;
            if kind == Access::Load {
                (dist(o), 1, false, true, pairs)
            } else {
                (dist(o), 3, true, true, pairs)
            }
        } else if !line.tail_sharers.is_empty() {
            let mut others = line.tail_sharers;
            others.0[a / 64] &= !(1 << (a % 64));
            if kind == Access::Load {
                if line.tail_sharers.has(a) {
                    (0, 0, false, false, false)
                } else if self.llc_serves_shared
                    && line
                        .tail_sharers
                        .iter()
                        .any(|x| prof.place(hw(x)).1 == prof.place(hw(a)).1)
                {
                    // A sharer in my L3 domain: the (inclusive) L3 holds the line and serves it.
                    (costs[cost::LLC_SHARED_LOAD], 2, false, false, false)
                } else {
                    let near = line.tail_sharers.iter().map(dist).min().unwrap_or(0);
                    (near, 2, false, false, pairs)
                }
            } else if others.is_empty() {
                (0, 0, true, false, false)
            } else {
                let far = others.iter().map(dist).max().unwrap_or(0);
                let extra = (others.count() - 1) * self.inv_per_sharer;
                m.counters[a].sharers_invalidated += others.count();
                (far + extra, 4, true, false, pairs)
            }
        } else {
            (costs[cost::MEMORY], 5, true, false, false)
        };
        let free_at = if owned {
            line.busy_until.max(line.resident_until)
        } else {
            line.busy_until
        };
        // Arbitration among the requests waiting for a busy line is not first come, first
        // served: each draws a delay within the busy window (halved on the tail owner's
        // socket), and the earliest to request after its delay is booked first.
        if !arbitrated && self.arbitration > 0.0 && free_at > t0 && what != 0 {
            let mut d = self.uniform() * (free_at - t0) as f64 * self.arbitration.min(1.0);
            if line.tail_owner != NONE {
                let local = m.prof.place(hw(a)).0 == m.prof.place(hw(line.tail_owner as usize)).0;
                if local {
                    d *= self.arbitration_local;
                }
            }
            let d = d as u64;
            if d > 0 {
                // Traced with its retry time; the retry's own line follows (its wait without d).
                // (Checked first: `format_args!` formats its arguments' strings at once.)
                if m.trace.is_some() {
                    m.trace_access(
                        line.watch,
                        line_addr,
                        a,
                        kind,
                        t0,
                        format_args!(
                            "arbitrate delay {} retry {}",
                            trace::ns(d),
                            trace::ns(t0 + d)
                        ),
                    );
                }
                m.counters[a].line_wait_ps += d;
                m.counters[a].busy_ps += d;
                m.tasks[m.current].clock = t0 + d;
                return Req::Arbitrate;
            }
        }
        if what == 0 {
            let c = if kind == Access::Load {
                costs[cost::LOAD_HIT]
            } else {
                costs[cost::STORE_HIT].max(rmw)
            };
            m.count(line.watch, line_addr, a, kind, 0, 0, c);
            m.tasks[m.current].clock = t0 + c;
            return Req::Done;
        }
        // Under `pair_latency` 1 a pair's measured latency is fixed; the draw is made either way,
        // so the option moves no other draw.
        let drawn = self.jittered(c);
        let c = if fixed { c } else { drawn };
        // Under `ownership_until_snoop` the request's snoop reaches the owner `snoop` after the
        // request, the transfer starts then (or when the owner's own operation is done) and the
        // line arrives the rest of the latency later.
        let snoop = if self.until_snoop && owned {
            (c as f64 * self.snoop_fraction).round() as u64
        } else {
            0
        };
        let start = (t0 + snoop).max(free_at);
        let grant = (start + c - snoop).max(line.last_grant);
        line.last_grant = grant;
        let seq = line.next_seq;
        line.next_seq += 1;
        line.pending.push_back(Booking {
            seq,
            start,
            agent: a as u16,
            exclusive,
        });
        if exclusive && !line.spinners.is_empty() {
            // Loads before `start` still hit: the spinners resume at their first load after it.
            let waker = m.key(m.current);
            for (task, epoch) in std::mem::take(&mut line.spinners) {
                m.spin_wake(task, epoch, line_addr, start, waker);
            }
        }
        if exclusive {
            line.tail_owner = a as u16;
            line.tail_sharers = Bits::default();
            line.busy_until = grant;
            // The window is drawn either way, so the option moves no other draw.
            let r = self.residency_window();
            let hold = if self.until_snoop {
                // Only the owner's own operation: the next request's snoop decides the rest.
                rmw
            } else if kind == Access::Store && !self.hold_after_store {
                0
            } else {
                r.max(rmw)
            };
            line.resident_until = grant + hold;
        } else if what == 1 {
            line.tail_sharers = Bits::only(line.tail_owner as usize);
            line.tail_sharers.set(a);
            line.tail_owner = NONE;
            line.busy_until = grant;
            line.resident_until = 0;
        } else {
            line.tail_sharers.set(a);
            // Served by the last-level cache: pipelined, the line held for no time.
            let occupancy = if self.llc_serves_shared {
                0.0
            } else {
                self.shared_occupancy
            };
            let hold = (c as f64 * occupancy) as u64;
            line.busy_until = line.busy_until.max(start + hold);
        }
        let end = grant + rmw;
        m.count(line.watch, line_addr, a, kind, what, start - t0, end - t0);
        m.tasks[m.current].clock = end;
        Req::Booked(seq)
    }
}

/// The nominal latency (ps) of a transfer to hardware thread `a` from hardware thread `b`:
/// [`Profile::transfer_ps`] (by distance class), or under `model.pair_latency` (`pairs`) the
/// pair's measured value ([`Profile::pair_ps`]; the class when `a == b`, the supervisor's slot
/// and thread 0); and under `model.home_node` (`home` is the line's home socket) a transfer
/// between two sockets goes requester -> home -> owner -> requester: that latency plus one
/// one-way hop, `(transfer_remote_ns − transfer_socket_ns) / 2`, per socket hop beyond the two
/// of a one-hop pair's round trip.
fn transfer_via(prof: &Profile, a: usize, b: usize, home: Option<usize>, pairs: bool) -> u64 {
    let measured = if pairs { prof.pair_ps(a, b) } else { None };
    let base = measured.unwrap_or_else(|| prof.transfer_ps(a, b));
    let Some(h) = home else { return base };
    let (sa, sb) = (prof.place(a).0, prof.place(b).0);
    if sa == sb {
        return base;
    }
    let hops = prof.socket_hops(sa, h) + prof.socket_hops(h, sb) + prof.socket_hops(sb, sa);
    let hop = prof
        .ps(cost::TRANSFER_REMOTE)
        .saturating_sub(prof.ps(cost::TRANSFER_SOCKET))
        / 2;
    base + hops.saturating_sub(2) * hop
}

impl Coherence<Machine> for Directory {
    /// A hit is served at once; a miss on a busy line may first lose arbitration (a seeded delay
    /// within the line's busy window, after which the caller requests again with `arbitrated`);
    /// otherwise it books the line's next slot and the task's clock moves to when the line
    /// arrives. The operation's value is read and written at that grant (phase 2).
    fn request(
        &mut self,
        m: &mut Machine,
        line_addr: usize,
        kind: Access,
        arbitrated: bool,
    ) -> Req {
        // The directory is moved out while the line is worked on (a move of the map, not of its
        // entries), so that the line can be borrowed in place next to the model's parameters.
        let mut lines = std::mem::take(&mut self.lines);
        let line = lines.entry(line_addr).or_default();
        let r = self.request_line(m, line, line_addr, kind, arbitrated);
        self.lines = lines;
        r
    }

    fn grant(&mut self, line_addr: usize, seq: u64) {
        if let Some(line) = self.lines.get_mut(&line_addr) {
            line.grant_through(seq);
        }
    }

    fn set_watch(&mut self, line_addr: usize, idx: u32) {
        self.lines.entry(line_addr).or_default().watch = idx;
    }

    fn watch_of(&self, line_addr: usize) -> u32 {
        self.lines.get(&line_addr).map_or(0, |l| l.watch)
    }

    fn spin_holds(&self, line_addr: usize, agent: usize) -> Option<u64> {
        let l = self.lines.get(&line_addr)?;
        let holds = l.owner == agent as u16 || (l.owner == NONE && l.sharers.has(agent));
        holds.then(|| {
            l.pending
                .iter()
                .find(|b| b.exclusive)
                .map_or(u64::MAX, |b| b.start)
        })
    }

    fn add_spinner(&mut self, line_addr: usize, task: usize, epoch: u64) {
        let l = self.lines.entry(line_addr).or_default();
        l.spinners.retain(|&(t, _)| t != task);
        l.spinners.push((task, epoch));
    }
}
