//! Platform profiles: a topology and the cost of every modelled event, each value with its source.
//!
//! A profile is a JSON file (the built-in ones live in the crate's `profiles/` and are compiled in,
//! so they are selectable by name from anywhere):
//!
//! ```json
//! { "name": "...", "description": "...",
//!   "topology": { "sockets": 2, "cores_per_socket": 18, "threads_per_core": 2,
//!                 "cores_per_l3": 18, "source": "..." },
//!   "costs": { "load_hit_ns": { "value": 1.9, "source": "..." }, ... } }
//! ```
//!
//! The topology may carry a hop table, `"hops": { "table": [[0, 1, ..], ..], "source": "..." }`
//! (socket hops between every two sockets, used only under the structural option
//! `model.home_node` 1; without one every two sockets are one hop apart), and a measured pair
//! matrix, `"pair_matrix": { "file": "matrices/NAME.csv", "source": "..." }`: the one-way
//! transfer latency between every two hardware threads, used only under the structural option
//! `model.pair_latency` 1 (the file: `#` comment lines with its source, then line `k` = 1..n−1
//! lists the latencies between thread `k` and threads `0..k`, comma-separated integers in tenths
//! of a nanosecond; the same value both ways). A built-in profile's file is compiled in
//! ([`BUILTIN_MATRICES`]); a profile loaded from a path reads it beside the JSON file.
//!
//! Hardware threads are numbered as Linux numbers them on these machines: first thread of every
//! physical core, socket by socket, then the SMT siblings in the same order. A run on `n` cores
//! uses hardware threads `0..n`.
//!
//! Cost keys (all nanoseconds): `load_hit_ns`, `store_hit_ns`, `rmw_hit_ns` (an uncontended
//! `lock`-prefixed RMW on an owned line), `mfence_ns`, `pause_ns`, `memory_ns` (first touch of a
//! line), `transfer_smt_ns`, `transfer_l3_ns`, `transfer_socket_ns`, `transfer_remote_ns` (one
//! line transfer between two hardware threads at that distance), `syscall_ns`, `futex_wake_ns`
//! (waker's cost of a FUTEX_WAKE that wakes someone), `wake_to_run_ns`, `context_switch_ns`,
//! `time_slice_ns` (an upper bound on the CFS slice that [`MODEL_KEYS`]' scheduler keys give:
//! a profile that sets it to the scaled `sched_latency` leaves the CFS slice alone, one that sets
//! it lower gets a fixed slice, as EEVDF's base slice), `timer_slack_ns`, `llc_shared_load_ns` (a
//! load of a line Shared by other cores of the requester's L3, served by that L3: charged only
//! under the structural option `model.shared_load_llc` 1).

use crate::access::MAX_AGENTS;
use serde_json::Value;

/// The built-in profiles, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    (
        "this-machine",
        include_str!("../profiles/this-machine.json"),
    ),
    (
        "xeon-2s-broadwell",
        include_str!("../profiles/xeon-2s-broadwell.json"),
    ),
    (
        "xeon-4s-westmere-ex",
        include_str!("../profiles/xeon-4s-westmere-ex.json"),
    ),
    (
        "xeon-4s-nehalem-ex",
        include_str!("../profiles/xeon-4s-nehalem-ex.json"),
    ),
    (
        "xeon-8s-westmere-ex",
        include_str!("../profiles/xeon-8s-westmere-ex.json"),
    ),
    (
        "epyc-2s-genoa",
        include_str!("../profiles/epyc-2s-genoa.json"),
    ),
    (
        "xeon-2s-e5-2680v4",
        include_str!("../profiles/xeon-2s-e5-2680v4.json"),
    ),
    (
        "xeon-2s-e5-2660",
        include_str!("../profiles/xeon-2s-e5-2660.json"),
    ),
    (
        "xeon-4s-e7-8895v3",
        include_str!("../profiles/xeon-4s-e7-8895v3.json"),
    ),
    (
        "opteron-4s-6128",
        include_str!("../profiles/opteron-4s-6128.json"),
    ),
];

/// The built-in profiles' measured pair matrices (`topology.pair_matrix.file`), by their path
/// relative to the profiles' directory.
pub const BUILTIN_MATRICES: &[(&str, &str)] = &[
    (
        "matrices/xeon-2s-e5-2680v4.csv",
        include_str!("../profiles/matrices/xeon-2s-e5-2680v4.csv"),
    ),
    (
        "matrices/xeon-2s-broadwell.csv",
        include_str!("../profiles/matrices/xeon-2s-broadwell.csv"),
    ),
    (
        "matrices/xeon-2s-e5-2660.csv",
        include_str!("../profiles/matrices/xeon-2s-e5-2660.csv"),
    ),
];

/// The cost keys every profile must define.
pub const COST_KEYS: &[&str] = &[
    "load_hit_ns",
    "store_hit_ns",
    "rmw_hit_ns",
    "mfence_ns",
    "pause_ns",
    "memory_ns",
    "transfer_smt_ns",
    "transfer_l3_ns",
    "transfer_socket_ns",
    "transfer_remote_ns",
    "syscall_ns",
    "futex_wake_ns",
    "wake_to_run_ns",
    "context_switch_ns",
    "time_slice_ns",
    "timer_slack_ns",
    "llc_shared_load_ns",
];

/// A machine: topology and costs (in picoseconds, the simulator's unit).
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Short name.
    pub name: String,
    /// Sockets.
    pub sockets: usize,
    /// Physical cores per socket.
    pub cores_per_socket: usize,
    /// Hardware threads per core.
    pub threads_per_core: usize,
    /// Physical cores sharing one L3 (a CCX on AMD; the socket on Intel).
    pub cores_per_l3: usize,
    /// The costs, picoseconds, in [`COST_KEYS`] order.
    pub costs_ps: Vec<u64>,
    /// The sources, in [`COST_KEYS`] order.
    pub sources: Vec<String>,
    /// The model parameters, in [`MODEL_KEYS`] order (the profile's value, else the key's default).
    pub model: Vec<f64>,
    /// Their sources: the profile's, or `"default: ..."` (the key's documented default).
    pub model_sources: Vec<String>,
    /// QPI/socket hops between sockets (`topology.hops`, a sockets x sockets table), or empty:
    /// one hop between any two sockets. Used only under the structural option `home_node` 1.
    pub hops: Vec<Vec<u8>>,
    /// The source of `hops` (empty when the profile has no table).
    pub hops_source: String,
    /// The measured one-way transfer latency (ps) between every two hardware threads,
    /// `hw_threads()` x `hw_threads()` row-major (`topology.pair_matrix`), or empty. Used only
    /// under the structural option `pair_latency` 1.
    pub pairs: Vec<u64>,
    /// The source of `pairs` (the profile's `topology.pair_matrix.source`, and its file; empty
    /// when the profile has none).
    pub pairs_source: String,
    /// The matrix as loaded and the transfer classes' values (ps, in `cost::TRANSFER_*` order
    /// from `TRANSFER_SMT`) when it was: an override of a class rescales that class's pairs from
    /// these, so overrides in turn (a class set to 0 and back among them) compose.
    measured: (Vec<u64>, [u64; 4]),
}

/// A model parameter: its key in the profile's `"model"` section, its default (the value that
/// switches the mechanism off, or its documented general value), the allowed range, and what it
/// means. A profile that sets one must give its source, as for a cost.
#[derive(Clone, Copy, Debug)]
pub struct ModelKey {
    /// The key.
    pub key: &'static str,
    /// The value when the profile does not set it.
    pub default: f64,
    /// Inclusive bounds.
    pub range: (f64, f64),
    /// One line for `describe` and the docs.
    pub doc: &'static str,
    /// A structural option's choices (the model's structure, not a quantity: each value selects
    /// another mechanism, and a sensitivity run compares the choices instead of halving and
    /// doubling); empty for a parameter.
    pub choices: &'static [f64],
}

/// The model parameters (the `"model"` section; every one optional, each with its source).
pub const MODEL_KEYS: &[ModelKey] = &[
    ModelKey {
    key: "shared_load_occupancy",
    default: 1.0,
    range: (0.0, 1.0),
    doc: "fraction of its cost for which a load of a line Shared elsewhere holds the line against \
          the next request (1: every miss is one serialized transfer, the Boyd-Wickizer et al. \
          assumption that a hand-off waits behind the spinners' re-fetches; 0: shared reads overlap \
          and only ownership changes serialize)",
        choices: &[],
    },
    ModelKey {
        key: "residency_ns",
        default: 0.0,
        range: (0.0, 1e6),
        doc: "how long a new owner keeps a line before it answers the next request for it (its \
              accesses in that window hit); 0: the line is handed on as soon as it arrived",
        choices: &[],
    },
    ModelKey {
        key: "jitter",
        default: 0.0,
        range: (0.0, 0.9),
        doc: "latency spread of a line transfer: each transfer costs its nominal value times a \
              seeded draw uniform in [1 - jitter, 1 + jitter]; 0: fixed latencies",
        choices: &[],
    },
    ModelKey {
        key: "arbitration",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "non-FIFO arbitration among requests for a busy line: each waiting request draws a \
              seeded delay uniform in [0, arbitration x the time until the line is free] and the \
              earliest after its delay is booked first; 0: first come, first served",
        choices: &[],
    },
    ModelKey {
        key: "arbitration_local",
        default: 1.0,
        range: (0.0, 1.0),
        doc: "the locality bias of arbitration: a requester on the socket of the line's owner \
              draws its delay times this factor (1: no bias)",
        choices: &[],
    },
    ModelKey {
        key: "invalidate_per_sharer_ns",
        default: 0.0,
        range: (0.0, 1e4),
        doc: "the extra cost of an invalidation per sharer beyond the farthest one (the \
              requester collects one acknowledgement per sharer); 0: the farthest sharer's \
              transfer alone",
        choices: &[],
    },
    ModelKey {
        key: "store_buffer_entries",
        default: 0.0,
        range: (0.0, 256.0),
        doc: "store-buffer entries per hardware thread: a plain store retires at once and \
              becomes visible when its line arrives, in program order; an RMW, an mfence, a system \
              call or a full buffer waits for it to drain; 0: every store stalls for its line",
        choices: &[],
    },
    ModelKey {
        key: "instruction_ns",
        default: 0.0,
        range: (0.0, 10.0),
        doc: "time of one instruction between memory operations, ns (the lock paths announce \
              their instruction counts with `lwsim::instructions(n)`, counted from their \
              release-build disassembly; 0: instructions cost nothing, only memory operations \
              take time)",
        choices: &[],
    },
    ModelKey {
        key: "sched_latency_ns",
        default: 6_000_000.0,
        range: (1_000.0, 1e9),
        doc: "CFS sysctl_sched_latency before scaling (kernel/sched/fair.c before 6.6: 6 ms): \
              the period in which every runnable thread of a run queue runs once; a thread's \
              slice is max(sched_latency / nr_running, min_granularity), both scaled by \
              1 + ilog2(min(cpus, 8)); a woken thread is placed sched_latency / 2 behind the \
              queue's min_vruntime at most (place_entity, GENTLE_FAIR_SLEEPERS)",
        choices: &[],
    },
    ModelKey {
        key: "min_granularity_ns",
        default: 750_000.0,
        range: (1_000.0, 1e9),
        doc: "CFS sysctl_sched_min_granularity before scaling (kernel/sched/fair.c before 6.6: \
              0.75 ms): the shortest slice when many threads share a core (sched_slice's \
              BASE_SLICE floor) and the run time before check_preempt_tick compares vruntimes",
        choices: &[],
    },
    ModelKey {
        key: "wakeup_granularity_ns",
        default: 1_000_000.0,
        range: (0.0, 1e9),
        doc: "CFS sysctl_sched_wakeup_granularity before scaling (kernel/sched/fair.c before \
              6.6: 1 ms): a woken thread preempts the running one when the running one's \
              vruntime exceeds the wakee's by more than this (check_preempt_wakeup)",
        choices: &[],
    },
    ModelKey {
        key: "idle_exit_ns",
        default: 0.0,
        range: (0.0, 1e7),
        doc: "exit latency of the deepest idle state a core reaches (intel_idle's per-model \
              exit_latency of C6; 0: no idle states, as in a VM or with idle=poll), paid by the \
              next thread placed on a core idle longer than idle_exit_after_ns",
        choices: &[],
    },
    ModelKey {
        key: "idle_exit_after_ns",
        default: 0.0,
        range: (0.0, 1e9),
        doc: "idle time after which a core is in its deepest idle state (the state's \
              target_residency, which the cpuidle governor requires before it picks the state)",
        choices: &[],
    },
    ModelKey {
        key: "smt_share",
        default: 1.0,
        range: (0.5, 1.0),
        doc: "speed of a hardware thread's computation and instructions while its SMT sibling \
              runs a thread, as a fraction of its speed alone (1: siblings are full cores; 0.5: \
              two siblings together are one core; 0.65: together 1.3 cores, the 'up to 30 %' \
              that Intel reports for Hyper-Threading on server workloads). Sampled when the \
              computation starts",
        choices: &[],
    },
    ModelKey {
        key: "residency_spread",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "shape of the residency window's distribution: each window lasts residency_ns x \
              ((1 - s) + s x E), E exponential with mean 1, so the mean stays residency_ns (but \
              for the one-RMW floor of every window) and s sets the spread (0: residency_ns \
              jittered as a transfer, a narrow window; above 0 not jittered; 1: exponential, a \
              snoop answered after a memoryless number of local operations). \
              Calibrated on a machine's own fetch_add run lengths (lwsim's cas_runs example)",
        choices: &[],
    },
    ModelKey {
        key: "balance_busy_factor",
        default: 0.0,
        range: (0.0, 1024.0),
        doc: "CFS periodic load balancing from a busy core (kernel/sched/topology.c sd_init: \
              busy_factor 32, balance_interval sd_weight ms): each scheduling domain of a busy \
              core (its SMT pair, its L3, the machine) is balanced every (hardware threads in \
              the domain) ms x this factor, at a phase of its own; a balance moves one queued \
              thread that has not run for 0.5 ms (sysctl_sched_migration_cost) from the \
              domain's busiest run queue when that queue holds at least two threads more than \
              its own; 0: no periodic balancing (an idle core still steals)",
        choices: &[],
    },
    ModelKey {
        key: "residency_after_store",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "structural option, whether a plain store's grant (a release store, a touch write, \
              a store that first touches a line) opens a residency window like an RMW's: 1 \
              (model 2's choice) holds the line residency_ns after every exclusive grant; 0 (the \
              default since model 3) holds it only after an RMW, a plain store's line answering \
              the next request as soon as it arrived (no source says a store keeps its line; the \
              residency is calibrated on RMW run lengths). Applies only under \
              ownership_until_snoop 0 (the default)",
        choices: &[0.0, 1.0],
    },
    ModelKey {
        key: "shared_load_llc",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "structural option, who serves a load of a line Shared by other cores (Modified \
              nowhere): 0 (model 2's choice; the default on the AMD profiles and this-machine) a transfer from \
              the nearest sharer at transfer_*_ns, holding the line shared_load_occupancy of its \
              cost; 1 the last-level cache, as on Intel parts with an inclusive L3 (their profiles' default since model 3): \
              llc_shared_load_ns when a sharer is in the requester's L3, else the transfer from \
              the nearest sharer (the remote L3), pipelined (the line is held for no time, so \
              concurrent Shared loads overlap and shared_load_occupancy does not apply), the \
              sharer set kept as under 0",
        choices: &[0.0, 1.0],
    },
    ModelKey {
        key: "wake_placement",
        default: 1.0,
        range: (0.0, 1.0),
        doc: "structural option, where a woken thread (FUTEX_WAKE, the end of a timed sleep) is \
              placed: 0 (model 2's choice) its previous core if \
              idle, else the lowest-numbered idle core of the machine, else its previous core's \
              run queue; 1 (the default since model 3) as kernel/sched/fair.c before 6.6 (select_task_rq_fair's fast path): \
              a target from wake_affine (simplified: the previous core if the waker shares its \
              L3 and is idle or the previous core is idle, else the waker's core when its run \
              queue is lighter by wake_affine_weight's test reduced to thread counts), then \
              select_idle_sibling: the target if idle, else the previous core if idle and in the \
              target's L3, else the first idle core of the target's L3 scanning from the one \
              after the target, else the target's run queue (a timed sleep's waker is the \
              sleeper's own previous core; the supervisor's wake has none)",
        choices: &[0.0, 1.0],
    },
    ModelKey {
        key: "ownership_until_snoop",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "structural option, how long a new owner keeps a line it was granted exclusively: 0 \
              (the default, model 2's choice kept in model 3) a residency window \
              (residency_ns, residency_after_store) after the grant before the next booked \
              transfer may start; 1 until the next request's snoop reaches it (not the default: the \
              run-length and CAS-loop measurements do not decide between 0 and 1, so model 3 keeps \
              model 2's choice): the transfer \
              starts at max(the grant + the owner's own operation (its RMW; nothing after a \
              plain store), the request + snoop_fraction of the transfer's latency), the \
              owner's accesses issued before then hit, and the line arrives the rest of the \
              transfer's latency later (an uncontended transfer costs what it costs under 0)",
        choices: &[0.0, 1.0],
    },
    ModelKey {
        key: "snoop_fraction",
        default: 0.5,
        range: (0.0, 1.0),
        doc: "under ownership_until_snoop 1, the part of a transfer's latency (transfer_*_ns) \
              that is the request's way to the owner (its snoop), the rest being the data's way \
              back (0.5: the two legs of the request/response round trip taken as equal; no \
              collected source splits a core-to-core transfer into its legs)",
        choices: &[],
    },
    ModelKey {
        key: "home_node",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "structural option, the path of a transfer between two sockets: 0 (the default: the \
              profiles' remote latencies are measured end to end, home agent included) straight from the owner (or sharer) to the \
              requester at transfer_remote_ns; 1 through the line's home socket (line index mod \
              sockets), whose agent forwards the request: transfer_remote_ns plus one one-way \
              socket hop ((transfer_remote_ns - transfer_socket_ns) / 2) per hop the path \
              requester -> home -> owner -> requester takes beyond a one-hop pair's two, hops \
              from the profile's topology.hops (1 between any two sockets when it has none). A \
              transfer within a socket is served there (its L3's directory), as under 0",
        choices: &[0.0, 1.0],
    },
    ModelKey {
        key: "pair_latency",
        default: 0.0,
        range: (0.0, 1.0),
        doc: "structural option, the latency of a transfer between two hardware threads: 0 (model 2's \
              choice, the default on a profile without a matrix) its distance class's transfer_*_ns \
              times a per-transfer draw of jitter; 1 (the default since model 3 on the profiles \
              with a matrix) the profile's measured matrix \
              (topology.pair_matrix: the one-way CAS ping-pong latency of every pair of the \
              machine's CPUs), fixed per pair, with no per-transfer draw (jitter's source is a \
              spread across pairs, which the matrix gives pair by pair; the draw is still made, \
              so no other draw moves); memory fills, L3-served Shared loads, per-sharer \
              invalidation and residency windows are charged as under 0, and under home_node 1 \
              the extra hops are added to the pair's value. A profile without a matrix cannot \
              take 1 (an error naming the profile, never the classes instead)",
        choices: &[0.0, 1.0],
    },
];

/// The structural choices of model 2, the defaults before model 3: a residency window after a
/// plain store's grant too, Shared loads served by a sharer one at a time, wakeups on the lowest
/// idle core, distance classes instead of a measured pair matrix (`ownership_until_snoop` and
/// `home_node` are 0 under both). `--set model=2` (or these overrides) restores the structure of
/// a figure the documents mark as model 2's (one made before a later fix needs that fix's build
/// too); model 3 differs on a profile only where the profile's default
/// differs (`shared_load_llc` and `pair_latency` are 1 only on the profiles whose sources
/// support them).
pub const MODEL_2: &str =
    "residency_after_store=1,shared_load_llc=0,wake_placement=0,pair_latency=0";

/// The choices of structural option `key` (see [`ModelKey::choices`]); `None` for a parameter or
/// an unknown key.
pub fn structural_choices(key: &str) -> Option<&'static [f64]> {
    MODEL_KEYS
        .iter()
        .find(|m| m.key == key)
        .map(|m| m.choices)
        .filter(|c| !c.is_empty())
}

/// Indices into [`Profile::model`].
#[allow(missing_docs)]
pub mod model {
    pub const SHARED_LOAD_OCCUPANCY: usize = 0;
    pub const RESIDENCY_NS: usize = 1;
    pub const JITTER: usize = 2;
    pub const ARBITRATION: usize = 3;
    pub const ARBITRATION_LOCAL: usize = 4;
    pub const INVALIDATE_PER_SHARER_NS: usize = 5;
    pub const STORE_BUFFER_ENTRIES: usize = 6;
    pub const INSTRUCTION_NS: usize = 7;
    pub const SCHED_LATENCY: usize = 8;
    pub const MIN_GRANULARITY: usize = 9;
    pub const WAKEUP_GRANULARITY: usize = 10;
    pub const IDLE_EXIT: usize = 11;
    pub const IDLE_EXIT_AFTER: usize = 12;
    pub const SMT_SHARE: usize = 13;
    pub const RESIDENCY_SPREAD: usize = 14;
    pub const BALANCE_BUSY_FACTOR: usize = 15;
    pub const RESIDENCY_AFTER_STORE: usize = 16;
    pub const SHARED_LOAD_LLC: usize = 17;
    pub const WAKE_PLACEMENT: usize = 18;
    pub const OWNERSHIP_UNTIL_SNOOP: usize = 19;
    pub const SNOOP_FRACTION: usize = 20;
    pub const HOME_NODE: usize = 21;
    pub const PAIR_LATENCY: usize = 22;
}

/// Indices into [`Profile::costs_ps`].
#[allow(missing_docs)]
pub mod cost {
    pub const LOAD_HIT: usize = 0;
    pub const STORE_HIT: usize = 1;
    pub const RMW_HIT: usize = 2;
    pub const MFENCE: usize = 3;
    pub const PAUSE: usize = 4;
    pub const MEMORY: usize = 5;
    pub const TRANSFER_SMT: usize = 6;
    pub const TRANSFER_L3: usize = 7;
    pub const TRANSFER_SOCKET: usize = 8;
    pub const TRANSFER_REMOTE: usize = 9;
    pub const SYSCALL: usize = 10;
    pub const FUTEX_WAKE: usize = 11;
    pub const WAKE_TO_RUN: usize = 12;
    pub const CONTEXT_SWITCH: usize = 13;
    pub const TIME_SLICE: usize = 14;
    pub const TIMER_SLACK: usize = 15;
    pub const LLC_SHARED_LOAD: usize = 16;
}

impl Profile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Result<Profile, String> {
        let (_, text) = BUILTIN.iter().find(|(n, _)| *n == name).ok_or_else(|| {
            let names: Vec<_> = BUILTIN.iter().map(|(n, _)| *n).collect();
            format!("no built-in profile {name:?} (have: {})", names.join(", "))
        })?;
        Profile::parse(text)
    }

    /// A built-in profile by name, or a profile file by path (anything with a `/` or `.json`;
    /// its `topology.pair_matrix.file`, if any, is read relative to the file's directory).
    pub fn load(name_or_path: &str) -> Result<Profile, String> {
        if name_or_path.contains('/') || name_or_path.ends_with(".json") {
            let text = std::fs::read_to_string(name_or_path)
                .map_err(|e| format!("{name_or_path}: {e}"))?;
            let dir = std::path::Path::new(name_or_path)
                .parent()
                .unwrap_or(std::path::Path::new("."));
            Profile::parse_in(&text, Some(dir)).map_err(|e| format!("{name_or_path}: {e}"))
        } else {
            Profile::builtin(name_or_path)
        }
    }

    /// Parses a profile's JSON text (a `topology.pair_matrix.file` must be one of
    /// [`BUILTIN_MATRICES`]).
    pub fn parse(text: &str) -> Result<Profile, String> {
        Profile::parse_in(text, None)
    }

    /// Parses a profile's JSON text; its `topology.pair_matrix.file` is read from `dir` when
    /// given, else looked up among [`BUILTIN_MATRICES`].
    pub fn parse_in(text: &str, dir: Option<&std::path::Path>) -> Result<Profile, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let name = v["name"].as_str().ok_or("missing \"name\"")?.to_string();
        let topo = &v["topology"];
        let int = |k: &str| -> Result<usize, String> {
            topo[k]
                .as_u64()
                .filter(|&x| x > 0)
                .map(|x| x as usize)
                .ok_or_else(|| format!("topology.{k}: missing or not a positive integer"))
        };
        let (sockets, cores_per_socket, threads_per_core, cores_per_l3) = (
            int("sockets")?,
            int("cores_per_socket")?,
            int("threads_per_core")?,
            int("cores_per_l3")?,
        );
        if cores_per_socket % cores_per_l3 != 0 {
            return Err("topology: cores_per_l3 must divide cores_per_socket".into());
        }
        let (hops, hops_source) = parse_hops(&topo["hops"], sockets)?;
        let (pairs, pairs_source) = parse_pair_matrix(
            &topo["pair_matrix"],
            sockets * cores_per_socket * threads_per_core,
            dir,
        )?;
        let mut costs_ps = Vec::new();
        let mut sources = Vec::new();
        for k in COST_KEYS {
            let e = &v["costs"][*k];
            let value = e["value"]
                .as_f64()
                .filter(|x| *x >= 0.0)
                .ok_or_else(|| format!("costs.{k}.value: missing or negative"))?;
            let source = e["source"]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| format!("costs.{k}.source: every value needs its source"))?;
            costs_ps.push((value * 1000.0).round() as u64);
            sources.push(source.to_string());
        }
        let mut model = Vec::new();
        let mut model_sources = Vec::new();
        if let Some(section) = v["model"].as_object() {
            for k in section.keys() {
                if !MODEL_KEYS.iter().any(|m| m.key == k) {
                    let names: Vec<_> = MODEL_KEYS.iter().map(|m| m.key).collect();
                    return Err(format!(
                        "model.{k}: unknown model parameter (have: {})",
                        names.join(", ")
                    ));
                }
            }
        }
        for m in MODEL_KEYS {
            let e = &v["model"][m.key];
            if e.is_null() {
                model.push(m.default);
                model_sources.push(format!("default: {}", m.doc));
                continue;
            }
            let source = e["source"]
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| format!("model.{}.source: every value needs its source", m.key))?;
            let value = e["value"]
                .as_f64()
                .filter(|x| (m.range.0..=m.range.1).contains(x))
                .ok_or_else(|| {
                    format!(
                        "model.{}.value: missing or outside [{}, {}]",
                        m.key, m.range.0, m.range.1
                    )
                })?;
            model.push(value);
            model_sources.push(source.to_string());
        }
        let measured = (
            pairs.clone(),
            [
                costs_ps[cost::TRANSFER_SMT],
                costs_ps[cost::TRANSFER_L3],
                costs_ps[cost::TRANSFER_SOCKET],
                costs_ps[cost::TRANSFER_REMOTE],
            ],
        );
        let p = Profile {
            measured,
            model,
            model_sources,
            name,
            sockets,
            cores_per_socket,
            threads_per_core,
            cores_per_l3,
            costs_ps,
            sources,
            hops,
            hops_source,
            pairs,
            pairs_source,
        };
        if p.param(model::PAIR_LATENCY) >= 0.5 && p.pairs.is_empty() {
            return Err(format!(
                "model.pair_latency: {}",
                p.no_matrix_error().trim_start_matches("pair_latency: ")
            ));
        }
        if p.hw_threads() > MAX_AGENTS - 1 {
            return Err(format!(
                "{} hardware threads: the simulator supports {}",
                p.hw_threads(),
                MAX_AGENTS - 1
            ));
        }
        Ok(p)
    }

    /// Hardware threads of the whole machine.
    pub fn hw_threads(&self) -> usize {
        self.sockets * self.cores_per_socket * self.threads_per_core
    }

    /// A cost in picoseconds (see [`cost`]).
    pub fn ps(&self, idx: usize) -> u64 {
        self.costs_ps[idx]
    }

    /// `(socket, l3 domain, physical core)` of hardware thread `h` (Linux numbering).
    pub fn place(&self, h: usize) -> (usize, usize, usize) {
        let phys = self.sockets * self.cores_per_socket;
        let core = h % phys;
        (core / self.cores_per_socket, core / self.cores_per_l3, core)
    }

    /// The transfer cost (ps) between two distinct hardware threads.
    pub fn transfer_ps(&self, a: usize, b: usize) -> u64 {
        self.ps(self.transfer_class(a, b))
    }

    /// The distance class of two distinct hardware threads: the `cost::TRANSFER_*` index of
    /// their transfer (SMT siblings, one L3, one socket, other sockets).
    pub fn transfer_class(&self, a: usize, b: usize) -> usize {
        let (sa, la, ca) = self.place(a);
        let (sb, lb, cb) = self.place(b);
        if ca == cb {
            cost::TRANSFER_SMT
        } else if la == lb {
            cost::TRANSFER_L3
        } else if sa == sb {
            cost::TRANSFER_SOCKET
        } else {
            cost::TRANSFER_REMOTE
        }
    }

    /// The measured one-way transfer latency (ps) between distinct hardware threads `a` and `b`
    /// (`topology.pair_matrix`), or `None`: no matrix (or one that no longer fits the topology),
    /// `a == b` or a thread outside the machine.
    pub fn pair_ps(&self, a: usize, b: usize) -> Option<u64> {
        let n = self.hw_threads();
        if a == b || a >= n || b >= n || self.pairs.len() != n * n {
            return None;
        }
        Some(self.pairs[a * n + b])
    }

    /// An override of the transfer class `key` (a `cost::TRANSFER_*` index) to `new` ps sets the
    /// measured pairs of that class (`pair_ps`, distinct hardware threads whose distance class
    /// [`Profile::transfer_ps`] names it) to their measured values times `new` / the class's
    /// value when the matrix was loaded, so that `--set` and `--sensitivity` on `transfer_*_ns`
    /// move a profile's transfers under `pair_latency` 1 as they do under 0. Nothing to scale
    /// without a matrix (or one that no longer fits the topology) or from a class loaded as 0 ps.
    fn scale_pairs_of_class(&mut self, key: usize, new: u64) {
        let Some(k) = key.checked_sub(cost::TRANSFER_SMT).filter(|&k| k < 4) else {
            return;
        };
        let (measured, class) = &self.measured;
        let n = self.hw_threads();
        if class[k] == 0 || self.pairs.len() != n * n || measured.len() != n * n {
            return;
        }
        for a in 0..n {
            for b in (0..n).filter(|&b| b != a) {
                if self.transfer_class(a, b) == key {
                    let i = a * n + b;
                    self.pairs[i] =
                        (measured[i] as f64 * new as f64 / class[k] as f64).round() as u64;
                }
            }
        }
    }

    /// The error of `pair_latency` 1 on a profile without a measured pair matrix.
    fn no_matrix_error(&self) -> String {
        let with: Vec<&str> = BUILTIN
            .iter()
            .filter(|(_, text)| text.contains("\"pair_matrix\""))
            .map(|(n, _)| *n)
            .collect();
        format!(
            "pair_latency: profile {} has no measured pair matrix (topology.pair_matrix), so \
             pair_latency=1 cannot apply (built-in profiles with one: {})",
            self.name,
            with.join(", ")
        )
    }

    /// Socket hops between sockets `a` and `b` (`topology.hops`; 0 for the same socket, else 1
    /// when the profile has no table).
    pub fn socket_hops(&self, a: usize, b: usize) -> u64 {
        if a == b {
            0
        } else if self.hops.is_empty() {
            1
        } else {
            self.hops[a][b] as u64
        }
    }

    /// A model parameter (see [`model`]).
    pub fn param(&self, idx: usize) -> f64 {
        self.model[idx]
    }

    /// The value of a cost key (ns) or a model key, by name.
    pub fn get(&self, key: &str) -> Option<f64> {
        if let Some(i) = COST_KEYS.iter().position(|k| *k == key) {
            return Some(self.costs_ps[i] as f64 / 1000.0);
        }
        MODEL_KEYS
            .iter()
            .position(|m| m.key == key)
            .map(|i| self.model[i])
    }

    /// Overrides a cost key (in ns) or a model key by name, for sensitivity runs; the source
    /// becomes `"override"`. Unknown keys and out-of-range values are errors naming the key.
    pub fn set(&mut self, key: &str, value: f64) -> Result<(), String> {
        if let Some(i) = COST_KEYS.iter().position(|k| *k == key) {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(format!(
                    "{key}: a cost in ns must be finite and >= 0, not {value}"
                ));
            }
            let new = (value * 1000.0).round() as u64;
            self.scale_pairs_of_class(i, new);
            self.costs_ps[i] = new;
            self.sources[i] = "override".into();
            return Ok(());
        }
        let Some(i) = MODEL_KEYS.iter().position(|m| m.key == key) else {
            let mut names: Vec<&str> = COST_KEYS.to_vec();
            names.extend(MODEL_KEYS.iter().map(|m| m.key));
            return Err(format!(
                "{key}: unknown profile key (have: {})",
                names.join(", ")
            ));
        };
        let m = &MODEL_KEYS[i];
        if !(m.range.0..=m.range.1).contains(&value) {
            return Err(format!(
                "{key}: {value} is outside [{}, {}]",
                m.range.0, m.range.1
            ));
        }
        if i == model::PAIR_LATENCY && value >= 0.5 && self.pairs.is_empty() {
            return Err(self.no_matrix_error());
        }
        self.model[i] = value;
        self.model_sources[i] = "override".into();
        Ok(())
    }

    /// Applies `KEY=VALUE[,KEY=VALUE...]` overrides (see [`Profile::set`]): the one parser of
    /// an override list (commas, `=`, blanks around each part trimmed, empty items skipped).
    /// Returns each override applied, in order: its key, its value, and the profile's value
    /// before it.
    /// `model=2` stands for [`MODEL_2`], the previous model's structural choices, applied in its
    /// place (each of its keys returned as applied).
    pub fn set_all(&mut self, spec: &str) -> Result<Vec<(String, f64, f64)>, String> {
        let mut applied = Vec::new();
        for kv in spec.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("{kv}: expected KEY=VALUE"))?;
            if k.trim() == "model" {
                if v.trim() != "2" {
                    return Err(format!(
                        "model: {:?}: only 2 (model 2's structural choices: {MODEL_2}) can be \
                         set; model 3's are the profiles' defaults",
                        v.trim()
                    ));
                }
                applied.extend(self.set_all(MODEL_2)?);
                continue;
            }
            let v: f64 = v
                .trim()
                .parse()
                .map_err(|_| format!("{}: {v:?} is not a number", k.trim()))?;
            let before = self.get(k.trim()).unwrap_or(f64::NAN);
            self.set(k.trim(), v)?;
            applied.push((k.trim().to_string(), v, before));
        }
        Ok(applied)
    }

    /// One line per cost: key, value (ns) and source.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "profile {}: {} sockets x {} cores x {} threads ({} hw threads), {} cores per L3\n",
            self.name,
            self.sockets,
            self.cores_per_socket,
            self.threads_per_core,
            self.hw_threads(),
            self.cores_per_l3
        );
        if !self.hops.is_empty() {
            let rows: Vec<String> = self
                .hops
                .iter()
                .map(|r| r.iter().map(|h| h.to_string()).collect::<String>())
                .collect();
            s += &format!("  hops {}  {}\n", rows.join(" "), self.hops_source);
        }
        if !self.pairs.is_empty() {
            let n = self.hw_threads();
            s += &format!("  pairs {n}x{n} measured  {}\n", self.pairs_source);
        }
        for (i, k) in COST_KEYS.iter().enumerate() {
            s += &format!(
                "  {k:<20} {:>12.3}  {}\n",
                self.costs_ps[i] as f64 / 1000.0,
                self.sources[i]
            );
        }
        for (i, m) in MODEL_KEYS.iter().enumerate() {
            s += &format!(
                "  {:<20} {:>12.3}  {}\n",
                m.key, self.model[i], self.model_sources[i]
            );
        }
        s
    }
}

/// Parses the optional `topology.hops` section, `{ "table": [[..], ..], "source": ".." }`: a
/// sockets x sockets table of hop counts, 0 on the diagonal, 1..=8 elsewhere, symmetric.
fn parse_hops(v: &Value, sockets: usize) -> Result<(Vec<Vec<u8>>, String), String> {
    if v.is_null() {
        return Ok((Vec::new(), String::new()));
    }
    let source = v["source"]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or("topology.hops.source: the hop table needs its source")?;
    let rows = v["table"]
        .as_array()
        .filter(|r| r.len() == sockets)
        .ok_or_else(|| format!("topology.hops.table: expected {sockets} rows"))?;
    let mut t = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let r = r
            .as_array()
            .filter(|r| r.len() == sockets)
            .ok_or_else(|| format!("topology.hops.table[{i}]: expected {sockets} entries"))?;
        let mut row = Vec::new();
        for (j, h) in r.iter().enumerate() {
            let h = h
                .as_u64()
                .filter(|&h| if i == j { h == 0 } else { (1..=8).contains(&h) })
                .ok_or_else(|| {
                    format!("topology.hops.table[{i}][{j}]: 0 on the diagonal, else 1..8")
                })?;
            row.push(h as u8);
        }
        t.push(row);
    }
    for (i, row) in t.iter().enumerate() {
        for (j, h) in row.iter().enumerate() {
            if *h != t[j][i] {
                return Err(format!("topology.hops.table: [{i}][{j}] != [{j}][{i}]"));
            }
        }
    }
    Ok((t, source.to_string()))
}

/// Parses the optional `topology.pair_matrix` section, `{ "file": "..", "source": ".." }`, and
/// its file (see the module docs) for a machine of `n` hardware threads: the matrix in ps,
/// `n` x `n` row-major and symmetric (0 on the diagonal), and its source.
fn parse_pair_matrix(
    v: &Value,
    n: usize,
    dir: Option<&std::path::Path>,
) -> Result<(Vec<u64>, String), String> {
    if v.is_null() {
        return Ok((Vec::new(), String::new()));
    }
    let source = v["source"]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or("topology.pair_matrix.source: the pair matrix needs its source")?;
    let file = v["file"]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or("topology.pair_matrix.file: missing (the matrix file's path)")?;
    let text = match dir {
        Some(d) => std::fs::read_to_string(d.join(file))
            .map_err(|e| format!("topology.pair_matrix.file: {file}: {e}"))?,
        None => BUILTIN_MATRICES
            .iter()
            .find(|(f, _)| *f == file)
            .map(|(_, t)| t.to_string())
            .ok_or_else(|| format!("topology.pair_matrix.file: {file}: not a built-in matrix"))?,
    };
    let mut m = vec![0u64; n * n];
    let mut k = 0;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        k += 1;
        let at = || format!("{file} line {}", i + 1);
        if k >= n {
            return Err(format!(
                "{}: more rows than the {n} hardware threads' {}",
                at(),
                n - 1
            ));
        }
        let cells: Vec<&str> = line.split(',').map(str::trim).collect();
        if cells.len() != k {
            return Err(format!(
                "{}: row of hardware thread {k} has {} values, expected {k} (threads 0..{k})",
                at(),
                cells.len()
            ));
        }
        for (j, c) in cells.iter().enumerate() {
            let tenths: u64 = c
                .parse()
                .ok()
                .filter(|&t| t > 0 && t <= 1_000_000)
                .ok_or_else(|| {
                    format!(
                        "{}: {c:?} (threads {k}, {j}) is not a latency in tenths of ns (1..=1000000)",
                        at()
                    )
                })?;
            m[k * n + j] = tenths * 100;
            m[j * n + k] = tenths * 100;
        }
    }
    if k + 1 != n {
        return Err(format!(
            "{file}: {k} rows, expected {} (one per hardware thread after thread 0)",
            n - 1
        ));
    }
    Ok((m, format!("{source} [{file}]")))
}
