//! A recorded PostgreSQL LWLock trace (`lwbench pg record`'s `trace.tsv`): the format, shared
//! by the recorder that writes it and the replay that reads it, and its reader, which checks
//! every record and names the file and line of the first one that is wrong.
//!
//! # Format 1
//! Comment lines first: `# lwlock-lab PostgreSQL LWLock trace`, `# format: 1`, free text; then
//! the header row ([`COLUMNS`], tab-separated); then one tab-separated row per operation; last,
//! the line `# end: ROWS rows`, so that a truncated file is told from a complete one.
//!
//! | column | meaning |
//! |---|---|
//! | `client` | the client backend, numbered from 0 |
//! | `txn` | the transaction, numbered from 0 within the client |
//! | `seq` | the operation's place within its transaction, from 0; a transaction's first operation is its `xact_start` |
//! | `t_ns` | when the operation was entered, ns after its transaction's `xact_start` |
//! | `dur_ns` | entry to return, for the entry points probed at their return (`-` otherwise) |
//! | `entry` | an [`Entry`] name |
//! | `tranche_id`, `tranche` | the lock's tranche id and its name in the server's major version (`-` for markers) |
//! | `lock` | the lock's identity within the trace, from 0 (`-` for markers); one lock, one tranche |
//! | `mode` | a [`Mode`] name: a release takes the mode of the acquire it ends |
//! | `result` | `acquire`: `immediate` or `waited`; `conditional`: `acquired` or `failed`; `acquire_or_wait`: `acquired` or `waited`; `wait_for_var`: `free` or `changed`; `end_xact`: `xid` or `no_xid`; `set_status`: `committed`, `aborted`, `sub_committed` or `other`; `-` otherwise |
//!
//! A transaction runs from one `xact_start` of its backend to the next: the work after a commit
//! belongs to the transaction that committed.

use std::fmt;
use std::path::Path;

/// The format version this module writes and reads.
pub const FORMAT: u32 = 1;

/// The first comment line of every trace.
pub const TITLE: &str = "# lwlock-lab PostgreSQL LWLock trace";

/// The header row's columns.
pub const COLUMNS: [&str; 11] = [
    "client",
    "txn",
    "seq",
    "t_ns",
    "dur_ns",
    "entry",
    "tranche_id",
    "tranche",
    "lock",
    "mode",
    "result",
];

/// An entry point or marker of the `entry` column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Entry {
    /// `LWLockAcquire`.
    Acquire,
    /// `LWLockConditionalAcquire`.
    Conditional,
    /// `LWLockAcquireOrWait`.
    AcquireOrWait,
    /// `LWLockWaitForVar`.
    WaitForVar,
    /// `LWLockRelease`.
    Release,
    /// The `transaction__start` marker.
    XactStart,
    /// The `transaction__commit` marker.
    XactCommit,
    /// The `transaction__abort` marker.
    XactAbort,
    /// `ProcArrayEndTransaction` entered: the group-clear call site.
    EndXact,
    /// `ProcArrayEndTransaction` returned.
    EndXactDone,
    /// `TransactionIdSetTreeStatus` entered: the CLOG-group call site.
    SetStatus,
    /// `TransactionIdSetTreeStatus` returned.
    SetStatusDone,
}

impl Entry {
    /// Every entry, in a fixed order.
    pub const ALL: [Entry; 12] = [
        Entry::Acquire,
        Entry::Conditional,
        Entry::AcquireOrWait,
        Entry::WaitForVar,
        Entry::Release,
        Entry::XactStart,
        Entry::XactCommit,
        Entry::XactAbort,
        Entry::EndXact,
        Entry::EndXactDone,
        Entry::SetStatus,
        Entry::SetStatusDone,
    ];

    /// The name in the trace file.
    pub fn name(self) -> &'static str {
        match self {
            Entry::Acquire => "acquire",
            Entry::Conditional => "conditional",
            Entry::AcquireOrWait => "acquire_or_wait",
            Entry::WaitForVar => "wait_for_var",
            Entry::Release => "release",
            Entry::XactStart => "xact_start",
            Entry::XactCommit => "xact_commit",
            Entry::XactAbort => "xact_abort",
            Entry::EndXact => "end_xact",
            Entry::EndXactDone => "end_xact_done",
            Entry::SetStatus => "set_status",
            Entry::SetStatusDone => "set_status_done",
        }
    }

    /// The entry of `name`.
    pub fn from_name(name: &str) -> Option<Entry> {
        Entry::ALL.into_iter().find(|e| e.name() == name)
    }

    /// Whether it is an LWLock entry point (it names a lock), not a marker.
    pub fn is_lock(self) -> bool {
        matches!(
            self,
            Entry::Acquire
                | Entry::Conditional
                | Entry::AcquireOrWait
                | Entry::WaitForVar
                | Entry::Release
        )
    }

    /// The results this entry may have (`["-"]` where it has none).
    pub fn results(self) -> &'static [&'static str] {
        match self {
            Entry::Acquire => &["immediate", "waited"],
            Entry::Conditional | Entry::AcquireOrWait => &["acquired", "failed", "waited"],
            Entry::WaitForVar => &["free", "changed"],
            Entry::EndXact => &["xid", "no_xid"],
            Entry::SetStatus => &["committed", "aborted", "sub_committed", "other"],
            _ => &["-"],
        }
    }
}

/// A lock mode (`LWLockMode`: `LW_EXCLUSIVE`, `LW_SHARED`, `LW_WAIT_UNTIL_FREE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    /// `LW_EXCLUSIVE`.
    Exclusive,
    /// `LW_SHARED`.
    Shared,
    /// `LW_WAIT_UNTIL_FREE`.
    WaitUntilFree,
    /// A release whose acquire was not traced.
    Unknown,
    /// No mode (`wait_for_var`, markers): `-`.
    None,
}

impl Mode {
    /// Every mode, in a fixed order.
    pub const ALL: [Mode; 5] = [
        Mode::Exclusive,
        Mode::Shared,
        Mode::WaitUntilFree,
        Mode::Unknown,
        Mode::None,
    ];

    /// The name in the trace file.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::Shared => "shared",
            Mode::WaitUntilFree => "wait_until_free",
            Mode::Unknown => "unknown",
            Mode::None => "-",
        }
    }

    /// The mode of `name`.
    pub fn from_name(name: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// One operation of a recorded transaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Op {
    /// ns after the transaction's `xact_start`.
    pub t_ns: u64,
    /// Entry to return, where probed.
    pub dur_ns: Option<u64>,
    /// The entry point or marker.
    pub entry: Entry,
    /// The lock (an index into [`Trace::locks`]) of an LWLock entry point.
    pub lock: Option<u32>,
    /// The mode.
    pub mode: Mode,
    /// The result (one of [`Entry::results`]).
    pub result: &'static str,
}

/// A lock of the trace: its tranche.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    /// The tranche id in the recorded server's major version.
    pub tranche_id: u16,
    /// The tranche's name.
    pub tranche: String,
}

/// A whole trace: each client's transactions, each a list of operations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    /// `clients[c][t]`: client `c`'s transaction `t`.
    pub clients: Vec<Vec<Vec<Op>>>,
    /// The locks, by the trace's lock id.
    pub locks: Vec<Lock>,
}

/// A trace that cannot be read: the file, the line (1-based; 0 for the file as a whole) and
/// what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The file.
    pub file: String,
    /// The line, from 1 (0: the whole file).
    pub line: usize,
    /// What is wrong.
    pub what: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.what)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.what)
        }
    }
}

impl std::error::Error for TraceError {}

impl Trace {
    /// Reads and checks the trace file at `path`.
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path).map_err(|e| TraceError {
            file: path.display().to_string(),
            line: 0,
            what: format!("cannot read: {e}"),
        })?;
        Trace::parse(&text, &path.display().to_string())
    }

    /// Parses and checks a trace's text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<Trace, TraceError> {
        let err = |line: usize, what: String| TraceError {
            file: file.to_string(),
            line,
            what,
        };
        let mut lines = text.split('\n').enumerate().map(|(i, l)| (i + 1, l));
        match lines.next() {
            Some((_, TITLE)) => {}
            _ => {
                return Err(err(
                    1,
                    format!("not a trace: the first line is not {TITLE:?}"),
                ))
            }
        }
        let mut format = None;
        let mut trace = Trace::default();
        let mut header = false;
        let mut rows = 0usize;
        let mut ended = None;
        for (n, line) in lines.by_ref() {
            if let Some(rest) = line.strip_prefix("# format: ") {
                let v: u32 = rest
                    .trim()
                    .parse()
                    .map_err(|_| err(n, format!("bad format version {rest:?}")))?;
                if v != FORMAT {
                    return Err(err(
                        n,
                        format!("format {v}: this build reads format {FORMAT}"),
                    ));
                }
                format = Some(v);
                continue;
            }
            if let Some(rest) = line.strip_prefix("# end: ") {
                let want: usize = rest
                    .trim()
                    .strip_suffix(" rows")
                    .and_then(|r| r.parse().ok())
                    .ok_or_else(|| err(n, format!("bad end line {line:?}")))?;
                if want != rows {
                    return Err(err(
                        n,
                        format!("the end line says {want} rows, the file has {rows}"),
                    ));
                }
                ended = Some(n);
                break;
            }
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            if format.is_none() {
                return Err(err(n, "no `# format:` line before the data".into()));
            }
            let fields: Vec<&str> = line.split('\t').collect();
            if !header {
                if fields != COLUMNS {
                    return Err(err(
                        n,
                        format!("the header row is not {}", COLUMNS.join(" ")),
                    ));
                }
                header = true;
                continue;
            }
            trace.push_row(&fields).map_err(|w| err(n, w))?;
            rows += 1;
        }
        let Some(end) = ended else {
            return Err(err(0, "truncated: no `# end:` line".into()));
        };
        if let Some((n, extra)) = lines.find(|(_, l)| !l.is_empty()) {
            return Err(err(n, format!("text after the end line: {extra:?}")));
        }
        if trace.clients.is_empty() {
            return Err(err(end, "no transaction".into()));
        }
        Ok(trace)
    }

    /// Appends one data row, checking it against what came before.
    fn push_row(&mut self, f: &[&str]) -> Result<(), String> {
        if f.len() != COLUMNS.len() {
            return Err(format!("{} fields, not {}", f.len(), COLUMNS.len()));
        }
        let num = |i: usize| -> Result<u64, String> {
            f[i].parse::<u64>()
                .map_err(|_| format!("{}: {:?} is not a number", COLUMNS[i], f[i]))
        };
        let (client, txn, seq) = (num(0)? as usize, num(1)? as usize, num(2)? as usize);
        // Clients, transactions and operations come in order, without gaps.
        if client == self.clients.len() {
            self.clients.push(Vec::new());
        } else if client + 1 != self.clients.len() {
            return Err(format!("client {client} out of order"));
        }
        let txns = self.clients.last_mut().expect("pushed");
        if txn == txns.len() {
            txns.push(Vec::new());
        } else if txn + 1 != txns.len() {
            return Err(format!("transaction {txn} of client {client} out of order"));
        }
        let ops = txns.last_mut().expect("pushed");
        if seq != ops.len() {
            return Err(format!(
                "operation {seq} out of order (expected {})",
                ops.len()
            ));
        }
        let entry = Entry::from_name(f[5]).ok_or_else(|| format!("unknown entry {:?}", f[5]))?;
        if (seq == 0) != (entry == Entry::XactStart) {
            return Err("a transaction starts with its xact_start, and only there".into());
        }
        let t_ns = num(3)?;
        let dur_ns = if f[4] == "-" { None } else { Some(num(4)?) };
        let mode = Mode::from_name(f[9]).ok_or_else(|| format!("unknown mode {:?}", f[9]))?;
        let result = *entry
            .results()
            .iter()
            .find(|r| **r == f[10])
            .ok_or_else(|| format!("result {:?} is not one of {}'s", f[10], entry.name()))?;
        let lock = if entry.is_lock() {
            let id = num(8)? as usize;
            let tranche_id = u16::try_from(num(6)?).map_err(|_| "tranche_id too large")?;
            let lock = Lock {
                tranche_id,
                tranche: f[7].to_string(),
            };
            if id == self.locks.len() {
                self.locks.push(lock);
            } else if id > self.locks.len() {
                return Err(format!("lock {id} before lock {}", self.locks.len()));
            } else if self.locks[id] != lock {
                return Err(format!("lock {id} in two tranches"));
            }
            let ok_mode = match entry {
                Entry::WaitForVar => mode == Mode::None,
                Entry::Release => mode != Mode::None,
                _ => matches!(mode, Mode::Exclusive | Mode::Shared | Mode::WaitUntilFree),
            };
            if !ok_mode {
                return Err(format!("mode {} for {}", mode.name(), entry.name()));
            }
            Some(id as u32)
        } else {
            if f[6..=9] != ["-", "-", "-", "-"] {
                return Err(format!("the marker {} names a lock", entry.name()));
            }
            None
        };
        ops.push(Op {
            t_ns,
            dur_ns,
            entry,
            lock,
            mode,
            result,
        });
        Ok(())
    }

    /// Steady-state transactions in all.
    pub fn transactions(&self) -> usize {
        self.clients.iter().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> String {
        [
            TITLE,
            "# format: 1",
            "# free text",
            &COLUMNS.join("\t"),
            "0\t0\t0\t0\t-\txact_start\t-\t-\t-\t-\t-",
            "0\t0\t1\t100\t20\tacquire\t4\tProcArray\t0\tshared\timmediate",
            "0\t0\t2\t200\t-\trelease\t4\tProcArray\t0\tshared\t-",
            "0\t1\t0\t0\t-\txact_start\t-\t-\t-\t-\t-",
            "0\t1\t1\t10\t5\tconditional\t59\tLockFastPath\t1\texclusive\tfailed",
            "1\t0\t0\t0\t-\txact_start\t-\t-\t-\t-\t-",
            "1\t0\t1\t30\t-\tend_xact\t-\t-\t-\t-\tno_xid",
            "# end: 7 rows",
            "",
        ]
        .join("\n")
    }

    #[test]
    fn reads_a_trace() {
        let t = Trace::parse(&sample(), "t.tsv").unwrap();
        assert_eq!(t.clients.len(), 2);
        assert_eq!(t.transactions(), 3);
        assert_eq!(t.locks.len(), 2);
        assert_eq!(t.locks[1].tranche, "LockFastPath");
        let op = &t.clients[0][0][1];
        assert_eq!(
            (op.entry, op.lock, op.mode, op.result),
            (Entry::Acquire, Some(0), Mode::Shared, "immediate")
        );
        assert_eq!(op.dur_ns, Some(20));
    }

    /// Every damage names the file and the line.
    #[test]
    fn names_the_file_and_line_of_a_bad_record() {
        let good = sample();
        let lines: Vec<&str> = good.split('\n').collect();
        let with = |i: usize, l: &str| {
            let mut v = lines.clone();
            v[i] = l;
            v.join("\n")
        };
        for (text, line, what) in [
            (good.replace("# end: 7 rows\n", ""), 0, "truncated"),
            (lines[..8].join("\n"), 0, "truncated"),
            (
                with(5, "0\t0\t1\t100\t20\tacquire\t4\tProcArray\t0\tshared"),
                6,
                "10 fields",
            ),
            (
                with(
                    5,
                    "0\t0\t1\t1x0\t20\tacquire\t4\tProcArray\t0\tshared\timmediate",
                ),
                6,
                "not a number",
            ),
            (
                with(
                    5,
                    "0\t0\t1\t100\t20\tgrab\t4\tProcArray\t0\tshared\timmediate",
                ),
                6,
                "unknown entry",
            ),
            (
                with(
                    5,
                    "0\t0\t1\t100\t20\tacquire\t4\tProcArray\t0\tshared\tfailed",
                ),
                6,
                "result",
            ),
            (
                with(
                    5,
                    "0\t0\t2\t100\t20\tacquire\t4\tProcArray\t0\tshared\timmediate",
                ),
                6,
                "out of order",
            ),
            (
                with(6, "0\t0\t2\t200\t-\trelease\t5\tSInvalRead\t0\tshared\t-"),
                7,
                "two tranches",
            ),
            (with(1, "# format: 2"), 2, "format 2"),
            (with(3, "client\ttxn"), 4, "header"),
            (with(11, "# end: 8 rows"), 12, "8 rows"),
            (with(0, "hello"), 1, "not a trace"),
        ] {
            let e = Trace::parse(&text, "t.tsv").unwrap_err();
            assert_eq!((e.file.as_str(), e.line), ("t.tsv", line), "{e}");
            assert!(e.what.contains(what), "{e} (wanted {what:?})");
        }
    }
}
