//! Counting: each access charged to the counters of its core and watched line, the reads a
//! harness makes at a window's edges ([`totals`], [`watched_lines`]), the line watch, the
//! scheduler's state for a diagnosis, and the access trace's lines (`LWSIM_TRACE`).

use super::counters::{CoreCounters, LineCounters};
use super::{with_machine, Machine};
use crate::access::{Access, LINE_SHIFT};
use crate::trace;

impl Machine {
    /// A hardware thread as the trace prints it (`hw-` for the supervisor).
    fn hw_label(&self, a: usize) -> String {
        if a == self.ncores {
            "hw-".to_string()
        } else {
            format!("hw{a}")
        }
    }

    /// A line as the trace prints it: its watched name, else its address >> 6 in hex.
    pub(super) fn line_label(&self, watch: u32, line_addr: usize) -> String {
        if watch != 0 {
            self.watched[watch as usize - 1].name.clone()
        } else {
            format!("{line_addr:x}")
        }
    }

    /// Prints one trace line for an access by hardware thread `a` requested at `t0`, if the
    /// trace is on and its window covers `t0`: `@<t0> hw<a> t<task> <line> <kind> <tail>`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn trace_access(
        &self,
        watch: u32,
        line_addr: usize,
        a: usize,
        kind: Access,
        t0: u64,
        tail: std::fmt::Arguments<'_>,
    ) {
        if let Some(tr) = self.trace {
            if tr.covers(t0) {
                eprintln!(
                    "@{} {} t{} {} {} {tail}",
                    trace::ns(t0),
                    self.hw_label(a),
                    self.current,
                    self.line_label(watch, line_addr),
                    access_name(kind),
                );
            }
        }
    }

    /// Counts one access: `what` is 0 for a hit, else the transfer kind (1 load from Modified,
    /// 2 load from Shared, 3 RFO from Modified, 4 invalidation, 5 fill).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn count(
        &mut self,
        watch: u32,
        line_addr: usize,
        a: usize,
        kind: Access,
        what: u8,
        wait: u64,
        busy: u64,
    ) {
        if self.trace.is_some() {
            let t0 = self.tasks[self.current].clock;
            self.trace_access(
                watch,
                line_addr,
                a,
                kind,
                t0,
                format_args!(
                    "{} wait {} done {}",
                    trace::case_name(what),
                    trace::ns(wait),
                    trace::ns(t0 + busy)
                ),
            );
        }
        let cnt = &mut self.counters[a];
        cnt.ops += 1;
        match what {
            0 => cnt.hits += 1,
            1 => cnt.load_from_modified += 1,
            2 => cnt.load_from_shared += 1,
            3 => cnt.rfo_from_modified += 1,
            4 => cnt.invalidations += 1,
            _ => cnt.fills += 1,
        }
        cnt.line_wait_ps += wait;
        cnt.busy_ps += busy;
        if let Some(p) = self.line_profile.as_deref_mut() {
            p.record(line_addr, kind, what != 0, wait);
        }
        if watch != 0 {
            let w = &mut self.watched[watch as usize - 1];
            w.ops += 1;
            match kind {
                Access::Load => w.loads += 1,
                Access::Store => w.stores += 1,
                Access::Rmw => w.rmws += 1,
            }
            match what {
                0 => w.hits += 1,
                1 => w.load_from_modified += 1,
                2 => w.load_from_shared += 1,
                3 => w.rfo_from_modified += 1,
                4 => w.invalidations += 1,
                _ => w.fills += 1,
            }
            w.wait_ps += wait;
        }
    }
}

/// An access kind as the trace prints it.
fn access_name(kind: Access) -> &'static str {
    match kind {
        Access::Load => "load",
        Access::Store => "store",
        Access::Rmw => "rmw",
    }
}

/// The simulated cores' counters summed so far (the supervisor's left out), or `None` outside a
/// simulation. A harness reads it at the start and at the end of a measurement window and
/// reports the difference, so that warm-up and tail are not counted.
///
/// `idle_ps` is the cores' idle time up to the calling task's clock (exact when the caller is at
/// a sync point, as after any simulated call: see the module docs, *OS*), so `idle_ps` of a
/// window over `cores × window` is the share of the machine no thread ran on.
pub fn totals() -> Option<CoreCounters> {
    with_machine(|m| {
        m.map(|m| {
            let mut t = CoreCounters::default();
            for c in &m.counters[..m.ncores] {
                t.add(c);
            }
            let now = m.clock_of_current();
            t.idle_ps = (0..m.ncores).map(|c| m.os().idle_through(c, now)).sum();
            for (_, _, loads, pauses, busy) in m.spins_elapsed() {
                t.ops += loads;
                t.hits += loads;
                t.pauses += pauses;
                t.busy_ps += busy;
            }
            t
        })
    })
}

/// The watched lines' counters so far ([`watch`]), in registration order, or `None` outside a
/// simulation. Read at a window's edges (after [`supervisor_wait_until`](super::supervisor_wait_until)) and subtracted
/// ([`LineCounters::since`]), they count the window's traffic alone.
pub fn watched_lines() -> Option<Vec<LineCounters>> {
    with_machine(|m| {
        m.map(|m| {
            let mut lines = m.watched.clone();
            for (_, watch, loads, _, _) in m.spins_elapsed() {
                if watch != 0 {
                    let w = &mut lines[watch as usize - 1];
                    w.ops += loads;
                    w.loads += loads;
                    w.hits += loads;
                }
            }
            lines
        })
    })
}

/// Registers the line holding `ptr` for per-line counters under `name` (a lock word).
pub fn watch<T: ?Sized>(name: &str, ptr: *const T) {
    with_machine(|m| {
        let Some(m) = m else { return };
        let line_addr = (ptr as *const u8 as usize) >> LINE_SHIFT;
        let idx = m.watched.len() as u32 + 1;
        m.watched.push(LineCounters {
            name: name.to_string(),
            ..Default::default()
        });
        m.with_coherence(|c, _| c.set_watch(line_addr, idx));
    });
}

/// The scheduler's state in a few lines (every task's clock, vruntime, core, run queue or
/// sleep, and each busy core's running task, queue and `min_vruntime`), for a diagnosis such as
/// a stuck spinlock's; `None` outside a simulation.
pub fn debug_state() -> Option<String> {
    with_machine(|m| {
        let m = m?;
        let ms = |ps: u64| ps as f64 / 1e9;
        let mut out = format!(
            "lwsim state at {:.3} ms virtual (task {} running):\n",
            ms(m.now),
            m.current
        );
        for (i, t) in m.tasks.iter().enumerate() {
            if t.supervisor || t.exited {
                continue;
            }
            let queued = m.os().queued_on(i);
            out += &format!(
                "  task {i}: clock {:.3} ms, vruntime {:.3} ms, core {:?}, last core {:?}, \
                 parked {}, needs core {}, queued on {:?}\n",
                ms(t.clock),
                t.vruntime as f64 / 1e9,
                t.core,
                t.last_core,
                t.parked,
                t.needs_core,
                queued
            );
        }
        out += &m.os().describe_cores();
        Some(out)
    })
}
