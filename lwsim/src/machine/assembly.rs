//! The machine assembled: a new [`Machine`] with the shipped models, the directory of
//! coherence and CFS (built here, so that the machine's own file names neither).

use super::addr_map::Map;
use super::cfs::Cfs;
use super::counters::CoreCounters;
use super::directory::Directory;
use super::stream::Stream;
use super::Machine;
use crate::line_profile::LineProfile;
use crate::profile::{model, Profile};
use crate::trace::Trace;

impl Machine {
    pub(crate) fn new(prof: Profile, ncores: usize, seed: u64, spin_jumps: bool) -> Machine {
        assert!(
            ncores >= 1 && ncores <= prof.hw_threads(),
            "{ncores} cores requested; profile {} has {} hardware threads",
            prof.name,
            prof.hw_threads()
        );
        let mut costs = [0; crate::profile::COST_KEYS.len()];
        costs.copy_from_slice(&prof.costs_ps);
        Machine {
            coherence: Some(Box::new(Directory::new(&prof, Stream::new(seed)))),
            os: Some(Box::new(Cfs::new(&prof, ncores, seed))),
            sb_cap: prof.param(model::STORE_BUFFER_ENTRIES) as usize,
            sb_next: u64::MAX,
            spin_jumps,
            spin_epoch: 0,
            sibling: (0..ncores)
                .map(|c| (0..ncores).find(|&d| d != c && prof.place(d).2 == prof.place(c).2))
                .collect(),
            smt_share: prof.param(model::SMT_SHARE),
            instruction_ps: (prof.param(model::INSTRUCTION_NS) * 1000.0).round() as u64,
            prof,
            costs,
            ncores,
            seed,
            tasks: Vec::new(),
            futexes: Map::default(),
            now: 0,
            current: 0,
            horizon: (u64::MAX, u64::MAX, usize::MAX),
            order: Vec::new(),
            stale: Vec::new(),
            absent: Vec::new(),
            counters: vec![CoreCounters::default(); ncores + 1],
            watched: Vec::new(),
            steps: 0,
            unwound: 0,
            threads: 0,
            end_ps: 0,
            line_profile: LineProfile::from_env().map(Box::new),
            trace: Trace::from_env(),
        }
    }
}
