//! A recorded PostgreSQL LWLock trace: the probe events that `perf script` prints, turned into
//! each client backend's transactions (the operations in order, with lock identity, tranche,
//! mode, entry point, result and times), the steady state cut out of them, and the files a
//! recording writes (`trace.tsv`, `trace-summary.csv`).
//!
//! The trace file's format (`trace.tsv`, format 1) is defined, with its reader, in
//! [`lwharness::pgtrace`]: one row per operation of a client backend's steady-state
//! transactions, in order, ending with a `# end: ROWS rows` line. A transaction runs from one
//! `xact_start` to the next of its backend, so the work a backend does after a commit
//! (statistics, the next query's reception) belongs to the transaction that committed. What
//! comes before a backend's first `xact_start` (connection start-up) is not a transaction and is
//! left out.

pub use lwharness::pgtrace::{Entry, Mode, FORMAT};
use lwharness::pgtrace::{COLUMNS, TITLE};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

/// One probe of a recording: its event name within the recording's group, and what it marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Probe {
    /// `LWLockAcquire(lock, mode)` entered.
    Acquire,
    /// `LWLockAcquire` returned.
    AcquireRet,
    /// `LWLockConditionalAcquire(lock, mode)` entered.
    Conditional,
    /// ... returned.
    ConditionalRet,
    /// `LWLockAcquireOrWait(lock, mode)` entered.
    AcquireOrWait,
    /// ... returned.
    AcquireOrWaitRet,
    /// `LWLockWaitForVar(lock, valptr, oldval, newval)` entered.
    WaitForVar,
    /// ... returned.
    WaitForVarRet,
    /// `LWLockRelease(lock)` entered.
    Release,
    /// The `transaction__start` marker (`StartTransaction`).
    XactStart,
    /// The `transaction__commit` marker (`CommitTransaction`).
    XactCommit,
    /// The `transaction__abort` marker (`AbortTransaction`).
    XactAbort,
    /// `ProcArrayEndTransaction(proc, latestXid)` entered.
    EndXact,
    /// ... returned.
    EndXactRet,
    /// `TransactionIdSetTreeStatus(xid, nsubxids, subxids, status, lsn)` entered.
    SetStatus,
    /// ... returned.
    SetStatusRet,
}

impl Probe {
    /// Every probe, in the order they are defined.
    pub const ALL: [Probe; 16] = [
        Probe::Acquire,
        Probe::AcquireRet,
        Probe::Conditional,
        Probe::ConditionalRet,
        Probe::AcquireOrWait,
        Probe::AcquireOrWaitRet,
        Probe::WaitForVar,
        Probe::WaitForVarRet,
        Probe::Release,
        Probe::XactStart,
        Probe::XactCommit,
        Probe::XactAbort,
        Probe::EndXact,
        Probe::EndXactRet,
        Probe::SetStatus,
        Probe::SetStatusRet,
    ];

    /// The event's name in the recording's probe set (`perf` appends `__return` to a return
    /// probe's name; [`Probe::from_event`] accepts both).
    pub fn event(self) -> &'static str {
        match self {
            Probe::Acquire => "acq",
            Probe::AcquireRet => "acq_ret",
            Probe::Conditional => "cond",
            Probe::ConditionalRet => "cond_ret",
            Probe::AcquireOrWait => "aow",
            Probe::AcquireOrWaitRet => "aow_ret",
            Probe::WaitForVar => "var",
            Probe::WaitForVarRet => "var_ret",
            Probe::Release => "rel",
            Probe::XactStart => "xact_start",
            Probe::XactCommit => "xact_commit",
            Probe::XactAbort => "xact_abort",
            Probe::EndXact => "end_xact",
            Probe::EndXactRet => "end_xact_ret",
            Probe::SetStatus => "set_status",
            Probe::SetStatusRet => "set_status_ret",
        }
    }

    /// The probe of event `NAME_TAG` of the recording tagged `tag` (with or without perf's
    /// `__return` suffix).
    pub fn from_event(name: &str, tag: &str) -> Option<Probe> {
        let name = name.strip_suffix("__return").unwrap_or(name);
        let name = name.strip_suffix(tag)?.strip_suffix('_')?;
        Probe::ALL.into_iter().find(|p| p.event() == name)
    }

    /// The entry probe a return probe completes.
    fn entry_of(self) -> Option<Probe> {
        Some(match self {
            Probe::AcquireRet => Probe::Acquire,
            Probe::ConditionalRet => Probe::Conditional,
            Probe::AcquireOrWaitRet => Probe::AcquireOrWait,
            Probe::WaitForVarRet => Probe::WaitForVar,
            Probe::EndXactRet => Probe::EndXact,
            Probe::SetStatusRet => Probe::SetStatus,
            _ => return None,
        })
    }
}

/// One event of `perf script -F pid,time,event,trace --ns`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The server process.
    pub pid: u32,
    /// Its time stamp, ns.
    pub t_ns: u64,
    /// Which probe.
    pub probe: Probe,
    /// The probe's arguments by name (`tranche`, `mode`, `lock`, `ret`, `xid`, `status`).
    pub args: Vec<(String, u64)>,
}

impl Event {
    fn arg(&self, name: &str) -> Option<u64> {
        self.args.iter().find(|(k, _)| k == name).map(|&(_, v)| v)
    }
}

/// Parses one line of `perf script -F pid,time,event,trace --ns` for the recording tagged `tag`
/// (perf group `lwrec_TAG`, events `NAME_TAG`): `Ok(None)` for a line of another set or a
/// blank line, `Err` for a line that does not parse.
///
/// The line looks like `  1234 970.117272123: lwrec_TAG:acq_TAG: (55d96b80a1c0) tranche=72
/// mode=0 lock=139802634788764` (a return probe's location is `(FUNC <- CALLER)`).
pub fn parse_line(line: &str, tag: &str) -> Result<Option<Event>, String> {
    let mut words = line.split_whitespace();
    let Some(pid) = words.next() else {
        return Ok(None);
    };
    let pid: u32 = pid.parse().map_err(|_| format!("bad pid {pid:?}"))?;
    let time = words.next().ok_or("no time stamp")?;
    let t_ns = parse_time_ns(time.trim_end_matches(':'))?;
    let event = words.next().ok_or("no event name")?;
    let event = event.trim_end_matches(':');
    let Some((g, name)) = event.split_once(':') else {
        return Err(format!("bad event name {event:?}"));
    };
    if g.strip_prefix("lwrec_") != Some(tag) {
        return Ok(None);
    }
    let probe = Probe::from_event(name, tag).ok_or_else(|| format!("unknown event {name:?}"))?;
    let mut args = Vec::new();
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            continue; // the probe location: `(addr)`, `(addr`, `<-`, `addr)`
        };
        let v = if let Some(hex) = v.strip_prefix("0x") {
            u64::from_str_radix(hex, 16)
        } else {
            v.parse::<u64>()
        }
        .map_err(|_| format!("bad value of {k}: {v:?}"))?;
        args.push((k.to_string(), v));
    }
    Ok(Some(Event {
        pid,
        t_ns,
        probe,
        args,
    }))
}

/// `SECONDS.FRACTION` (perf's time stamp, with `--ns` nine digits) as ns.
fn parse_time_ns(s: &str) -> Result<u64, String> {
    let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
    let sec: u64 = sec.parse().map_err(|_| format!("bad time stamp {s:?}"))?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("bad time stamp {s:?}"));
    }
    let scale = 10u64.pow(9 - frac.len() as u32);
    Ok(sec * 1_000_000_000 + frac.parse::<u64>().expect("digits") * scale)
}

/// The mode of `LWLockMode` value `v` (`LW_EXCLUSIVE` 0, `LW_SHARED` 1, `LW_WAIT_UNTIL_FREE` 2,
/// in `lwlock.h`).
fn mode_from_pg(v: u64) -> Result<Mode, String> {
    Ok(match v {
        0 => Mode::Exclusive,
        1 => Mode::Shared,
        2 => Mode::WaitUntilFree,
        _ => return Err(format!("unknown LWLockMode {v}")),
    })
}

/// One operation of a backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// Entry time stamp, ns.
    pub t_ns: u64,
    /// Entry to return, for the entry points probed at their return.
    pub dur_ns: Option<u64>,
    /// The entry point or marker.
    pub entry: Entry,
    /// The lock's tranche (lock entry points).
    pub tranche: Option<u16>,
    /// The lock's address in the server (lock entry points).
    pub lock: Option<u64>,
    /// The mode.
    pub mode: Mode,
    /// The result, as the trace file writes it.
    pub result: &'static str,
}

/// What the events of one server process become: its operations in order, split into
/// transactions at each `xact_start`.
#[derive(Clone, Debug, Default)]
pub struct Backend {
    /// The server process.
    pub pid: u32,
    /// Operations before its first `xact_start` (connection start-up): never part of the trace.
    pub startup: Vec<Op>,
    /// Its transactions, each starting with its `xact_start`.
    pub txns: Vec<Vec<Op>>,
}

impl Backend {
    /// Where the next operation goes: the current transaction, or start-up before the first.
    fn current(&mut self) -> &mut Vec<Op> {
        match self.txns.last_mut() {
            Some(t) => t,
            None => &mut self.startup,
        }
    }
}

/// Groups `events` (in time order, as `perf script` prints them) by process and pairs each return
/// probe with its entry. Errors name the event (its index) that does not fit.
pub fn backends(events: &[Event]) -> Result<Vec<Backend>, String> {
    struct State {
        backend: Backend,
        /// Entries waiting for their return probe: (probe, index into the current op list).
        pending: Vec<(Probe, usize)>,
        /// Locks held by address: the modes of the acquires not yet released.
        held: HashMap<u64, Vec<Mode>>,
    }
    let mut by_pid: BTreeMap<u32, State> = BTreeMap::new();
    let mut order: Vec<u32> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let st = by_pid.entry(e.pid).or_insert_with(|| {
            order.push(e.pid);
            State {
                backend: Backend {
                    pid: e.pid,
                    ..Backend::default()
                },
                pending: Vec::new(),
                held: HashMap::new(),
            }
        });
        let need = |name: &str| {
            e.arg(name)
                .ok_or_else(|| format!("event {i} ({}): no argument {name}", e.probe.event()))
        };
        if let Some(entry_probe) = e.probe.entry_of() {
            let ret = need("ret")?;
            let Some(pos) = st.pending.iter().rposition(|&(p, _)| p == entry_probe) else {
                // A return whose entry came before the recording started: nothing to complete.
                continue;
            };
            let (_, idx) = st.pending.remove(pos);
            let ops = st.backend.current();
            let Some(op) = ops.get_mut(idx) else {
                continue; // its transaction ended before it returned (cannot happen in PG)
            };
            op.dur_ns = Some(e.t_ns.saturating_sub(op.t_ns));
            op.result = match (entry_probe, ret & 0xff) {
                (Probe::Acquire, 0) => "waited",
                (Probe::Acquire, _) => "immediate",
                (Probe::Conditional, 0) => "failed",
                (Probe::Conditional, _) => "acquired",
                (Probe::AcquireOrWait, 0) => "waited",
                (Probe::AcquireOrWait, _) => "acquired",
                (Probe::WaitForVar, 0) => "changed",
                (Probe::WaitForVar, _) => "free",
                _ => op.result,
            };
            // LWLockAcquire always ends holding the lock (its result says whether it slept);
            // the conditional and acquire-or-wait entry points only when they return true.
            let acquired = match entry_probe {
                Probe::Acquire => true,
                Probe::Conditional | Probe::AcquireOrWait => ret & 0xff != 0,
                _ => false,
            };
            if acquired {
                let lock = op.lock.expect("lock entry points carry the lock");
                st.held.entry(lock).or_default().push(op.mode);
            }
            if matches!(entry_probe, Probe::EndXact | Probe::SetStatus) {
                let entry = if entry_probe == Probe::EndXact {
                    Entry::EndXactDone
                } else {
                    Entry::SetStatusDone
                };
                ops.push(Op {
                    t_ns: e.t_ns,
                    dur_ns: None,
                    entry,
                    tranche: None,
                    lock: None,
                    mode: Mode::None,
                    result: "-",
                });
            }
            continue;
        }
        if e.probe == Probe::XactStart {
            st.backend.txns.push(Vec::new());
            // Entries still waiting for a return belong to the previous list; they cannot
            // span a transaction start in PostgreSQL.
            st.pending.clear();
        }
        let (entry, tranche, lock, mode, result) = match e.probe {
            Probe::Acquire | Probe::Conditional | Probe::AcquireOrWait => (
                match e.probe {
                    Probe::Acquire => Entry::Acquire,
                    Probe::Conditional => Entry::Conditional,
                    _ => Entry::AcquireOrWait,
                },
                Some(need("tranche")? as u16),
                Some(need("lock")?),
                mode_from_pg(need("mode")?).map_err(|m| format!("event {i}: {m}"))?,
                "-",
            ),
            Probe::WaitForVar => (
                Entry::WaitForVar,
                Some(need("tranche")? as u16),
                Some(need("lock")?),
                Mode::None,
                "-",
            ),
            Probe::Release => {
                let lock = need("lock")?;
                let mode = st
                    .held
                    .get_mut(&lock)
                    .and_then(|m| m.pop())
                    .unwrap_or(Mode::Unknown);
                (
                    Entry::Release,
                    Some(need("tranche")? as u16),
                    Some(lock),
                    mode,
                    "-",
                )
            }
            Probe::XactStart => (Entry::XactStart, None, None, Mode::None, "-"),
            Probe::XactCommit => (Entry::XactCommit, None, None, Mode::None, "-"),
            Probe::XactAbort => (Entry::XactAbort, None, None, Mode::None, "-"),
            Probe::EndXact => (
                Entry::EndXact,
                None,
                None,
                Mode::None,
                if need("xid")? == 0 { "no_xid" } else { "xid" },
            ),
            Probe::SetStatus => (
                Entry::SetStatus,
                None,
                None,
                Mode::None,
                match need("status")? {
                    1 => "committed",
                    2 => "aborted",
                    3 => "sub_committed",
                    _ => "other",
                },
            ),
            _ => unreachable!("return probes are handled above"),
        };
        let ops = st.backend.current();
        if matches!(
            e.probe,
            Probe::Acquire | Probe::Conditional | Probe::AcquireOrWait | Probe::WaitForVar
        ) || matches!(e.probe, Probe::EndXact | Probe::SetStatus)
        {
            st.pending.push((e.probe, ops.len()));
        }
        ops.push(Op {
            t_ns: e.t_ns,
            dur_ns: None,
            entry,
            tranche,
            lock,
            mode,
            result,
        });
    }
    Ok(order
        .into_iter()
        .map(|pid| by_pid.remove(&pid).expect("seen").backend)
        .collect())
}

/// The steady state of the client backends: each one's transactions without its first `skip`
/// and without its last (cut by the end of the run, and carrying the disconnection).
pub fn steady(clients: &[Backend], skip: usize) -> Vec<&[Vec<Op>]> {
    clients
        .iter()
        .map(|b| {
            let end = b.txns.len().saturating_sub(1);
            &b.txns[skip.min(end)..end]
        })
        .collect()
}

/// Writes the trace file of `clients`' steady-state transactions. `name(id)` names a tranche;
/// an id it cannot name is an error naming it.
pub fn write_trace(
    steady: &[&[Vec<Op>]],
    name: impl Fn(u16) -> Option<&'static str>,
) -> Result<String, String> {
    let mut out = String::new();
    writeln!(out, "{TITLE}").unwrap();
    writeln!(out, "# format: {FORMAT}").unwrap();
    writeln!(
        out,
        "# one row per operation of a client backend's steady-state transactions; the columns \
         are documented in lwharness::pgtrace and docs/guide.md"
    )
    .unwrap();
    writeln!(out, "{}", COLUMNS.join("\t")).unwrap();
    let mut rows = 0usize;
    let mut ids: HashMap<u64, usize> = HashMap::new();
    for (c, txns) in steady.iter().enumerate() {
        for (t, ops) in txns.iter().enumerate() {
            let t0 = ops.first().map_or(0, |o| o.t_ns);
            for (s, op) in ops.iter().enumerate() {
                let (tid, tname, lock) = match (op.tranche, op.lock) {
                    (Some(tr), Some(addr)) => {
                        let n = name(tr).ok_or_else(|| format!("unknown tranche id {tr}"))?;
                        let next = ids.len();
                        let id = *ids.entry(addr).or_insert(next);
                        (tr.to_string(), n, id.to_string())
                    }
                    _ => ("-".to_string(), "-", "-".to_string()),
                };
                let dur = op.dur_ns.map_or("-".to_string(), |d| d.to_string());
                writeln!(
                    out,
                    "{c}\t{t}\t{s}\t{}\t{dur}\t{}\t{tid}\t{tname}\t{lock}\t{}\t{}",
                    op.t_ns - t0,
                    op.entry.name(),
                    op.mode.name(),
                    op.result
                )
                .unwrap();
                rows += 1;
            }
        }
    }
    writeln!(out, "# end: {rows} rows").unwrap();
    Ok(out)
}

/// `trace-summary.csv`: the LWLock entry points per steady-state transaction, by tranche, mode
/// and entry point (attempts: a failed conditional acquire counts), over every client.
pub fn summary(
    steady: &[&[Vec<Op>]],
    name: impl Fn(u16) -> Option<&'static str>,
) -> Result<String, String> {
    let txns: usize = steady.iter().map(|t| t.len()).sum();
    if txns == 0 {
        return Err("no steady-state transaction was recorded".into());
    }
    let mut counts: BTreeMap<(&'static str, &'static str, &'static str), u64> = BTreeMap::new();
    for op in steady.iter().flat_map(|t| t.iter()).flatten() {
        if !op.entry.is_lock() {
            continue;
        }
        let tr = op.tranche.expect("lock entry points carry a tranche");
        let n = name(tr).ok_or_else(|| format!("unknown tranche id {tr}"))?;
        *counts
            .entry((n, op.mode.name(), op.entry.name()))
            .or_default() += 1;
    }
    let mut out = String::from("tranche,mode,entry,per_txn\n");
    for ((t, m, e), n) in counts {
        writeln!(out, "{t},{m},{e},{:.4}", n as f64 / txns as f64).unwrap();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: &str = "1_2";

    fn ev(line: &str) -> Event {
        parse_line(line, G).unwrap().unwrap()
    }

    #[test]
    fn parses_perf_script_lines() {
        let e = ev(
            "  12801 970.117272123: lwrec_1_2:acq_1_2: (55d96b80a1c0) tranche=4 mode=1 lock=140",
        );
        assert_eq!(e.pid, 12801);
        assert_eq!(e.t_ns, 970_117_272_123);
        assert_eq!(e.probe, Probe::Acquire);
        assert_eq!(e.arg("mode"), Some(1));
        let r = ev("12801 970.117294000: lwrec_1_2:acq_ret_1_2__return: (55d96b80a1c0 <- 55d96b970725) ret=0x1");
        assert_eq!((r.probe, r.arg("ret")), (Probe::AcquireRet, Some(1)));
        // Another recording's probe set: not ours.
        assert_eq!(
            parse_line("1 1.000000001: lwrec_9_9:acq_9_9: (1) tranche=4", G),
            Ok(None)
        );
        assert!(parse_line("x 1.0: lwrec_1_2:acq_1_2:", G).is_err());
        assert!(parse_line("1 1.0: lwrec_1_2:nope_1_2: (1)", G).is_err());
        assert!(parse_line("1 1.0: lwrec_1_2:acq_1_2: (1) mode=z", G).is_err());
        // Fewer than nine digits (perf without --ns) still scale to ns.
        assert_eq!(
            ev("1 2.5: lwrec_1_2:rel_1_2: (1) lock=1 tranche=4").t_ns,
            2_500_000_000
        );
    }

    /// A backend's events: start-up, then two transactions; acquires paired with their returns,
    /// a release taking its acquire's mode, a failed conditional acquire, the markers.
    fn sample() -> Vec<Event> {
        [
            "7 1.000000000: lwrec_1_2:acq_1_2: (1) tranche=72 mode=0 lock=900",
            "7 1.000000010: lwrec_1_2:acq_ret_1_2__return: (1 <- 2) ret=1",
            "7 1.000000020: lwrec_1_2:rel_1_2: (1) lock=900 tranche=72",
            "7 2.000000000: lwrec_1_2:xact_start_1_2: (1)",
            "7 2.000000100: lwrec_1_2:acq_1_2: (1) tranche=4 mode=1 lock=100",
            "7 2.000000300: lwrec_1_2:acq_ret_1_2__return: (1 <- 2) ret=0",
            "7 2.000000400: lwrec_1_2:cond_1_2: (1) tranche=59 mode=0 lock=200",
            "7 2.000000410: lwrec_1_2:cond_ret_1_2__return: (1 <- 2) ret=0",
            "7 2.000000500: lwrec_1_2:rel_1_2: (1) lock=100 tranche=4",
            "7 2.000000600: lwrec_1_2:xact_commit_1_2: (1)",
            "7 2.000000700: lwrec_1_2:end_xact_1_2: (1) xid=0",
            "7 2.000000800: lwrec_1_2:end_xact_ret_1_2__return: (1 <- 2) ret=0",
            "7 3.000000000: lwrec_1_2:xact_start_1_2: (1)",
            "7 3.000000100: lwrec_1_2:acq_1_2: (1) tranche=4 mode=0 lock=100",
            "7 3.000000110: lwrec_1_2:acq_ret_1_2__return: (1 <- 2) ret=1",
            "7 3.000000200: lwrec_1_2:rel_1_2: (1) lock=100 tranche=4",
            "7 3.000000300: lwrec_1_2:rel_1_2: (1) lock=555 tranche=5",
        ]
        .iter()
        .map(|l| ev(l))
        .collect()
    }

    #[test]
    fn pairs_returns_and_takes_release_modes_from_acquires() {
        let b = backends(&sample()).unwrap();
        assert_eq!(b.len(), 1);
        let b = &b[0];
        assert_eq!(b.startup.len(), 2, "start-up is not a transaction");
        assert_eq!(b.txns.len(), 2);
        let t = &b.txns[0];
        let entries: Vec<_> = t.iter().map(|o| o.entry).collect();
        assert_eq!(
            entries,
            [
                Entry::XactStart,
                Entry::Acquire,
                Entry::Conditional,
                Entry::Release,
                Entry::XactCommit,
                Entry::EndXact,
                Entry::EndXactDone
            ]
        );
        assert_eq!(
            (t[1].result, t[1].dur_ns, t[1].mode),
            ("waited", Some(200), Mode::Shared)
        );
        assert_eq!(t[2].result, "failed");
        assert_eq!(
            t[3].mode,
            Mode::Shared,
            "the release takes its acquire's mode"
        );
        assert_eq!(t[5].result, "no_xid");
        let t = &b.txns[1];
        assert_eq!(t[2].mode, Mode::Exclusive);
        assert_eq!(
            t[3].mode,
            Mode::Unknown,
            "a release of a lock never acquired here"
        );
    }

    #[test]
    fn steady_state_drops_the_first_and_the_last_transactions() {
        let b = backends(&sample()).unwrap();
        assert_eq!(steady(&b, 0)[0].len(), 1, "the last transaction is dropped");
        assert_eq!(steady(&b, 1)[0].len(), 0);
        assert_eq!(steady(&b, 5)[0].len(), 0);
    }

    #[test]
    fn writes_the_trace_and_its_summary() {
        let b = backends(&sample()).unwrap();
        let s = steady(&b, 0);
        let name = |id| crate::pg::tranches::name(15, id);
        let trace = write_trace(&s, name).unwrap();
        let rows: Vec<&str> = trace.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(rows[0].split('\t').count(), 11);
        assert_eq!(rows.len(), 1 + 7);
        assert_eq!(
            rows[2],
            "0\t0\t1\t100\t200\tacquire\t4\tProcArray\t0\tshared\twaited"
        );
        assert_eq!(
            rows[3],
            "0\t0\t2\t400\t10\tconditional\t59\tLockFastPath\t1\texclusive\tfailed"
        );
        let sum = summary(&s, name).unwrap();
        assert_eq!(
            sum,
            "tranche,mode,entry,per_txn\n\
             LockFastPath,exclusive,conditional,1.0000\n\
             ProcArray,shared,acquire,1.0000\n\
             ProcArray,shared,release,1.0000\n"
        );
        // The reader of the replay reads it back, operation for operation.
        let back = lwharness::pgtrace::Trace::parse(&trace, "t").unwrap();
        assert_eq!(back.transactions(), 1);
        let ops = &back.clients[0][0];
        assert_eq!(ops.len(), s[0][0].len());
        for (r, w) in ops.iter().zip(&s[0][0]) {
            assert_eq!(
                (r.entry, r.mode, r.result, r.dur_ns),
                (w.entry, w.mode, w.result, w.dur_ns)
            );
        }
        // A tranche the version cannot name is an error naming it.
        let err = write_trace(&s, |id| (id != 4).then_some("x")).unwrap_err();
        assert!(err.contains("tranche id 4"), "{err}");
    }
}
