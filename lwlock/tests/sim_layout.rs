//! lwsim: a simulated line is a real address, so a figure must not follow where the process
//! heap happens to put the project's own shared structures. The wait-record table's chunk
//! pointers (`proc.rs`) are line-aligned under lwsim for that reason: the classic LWLock at 160
//! threads (three chunks of records) gives the same run however the heap is shifted before it.
//! (Before the alignment, the flag `--verbose` of the lwsim example, whose allocations shifted
//! the heap, moved its 256-thread figure by 14 %.) Only in `--cfg lwsim` builds (`ci/sim.sh`).
#![cfg(lwsim)]

use lwlock::reference::sweep::{run_lock, Workload};
use lwlock::sync::lwsim::{Profile, SimConfig};
use lwlock::RawClassicLwLock;

#[test]
fn the_wait_record_table_does_not_follow_the_heap() {
    let p = Profile::builtin("epyc-2s-genoa").unwrap();
    let w = Workload {
        threads: 160,
        duration_ns: 5_000_000,
        shared_permille: 950,
        cs_ns: 50,
        think_ns: 200,
        touch_data: true,
    };
    let run = || {
        let pt = run_lock::<RawClassicLwLock>(SimConfig::new(p.clone(), 160), &w);
        (
            pt.ops,
            pt.tail_ops,
            pt.per_thread,
            format!("{:?}", pt.window_lines),
        )
    };
    let base = run();
    assert!(base.0 > 0, "{base:?}");
    // Shift the heap by live allocations of every size class up to a line, 16 bytes apart
    // (the allocator's granularity), so that a structure allocated next lands at each offset.
    let mut held = Vec::new();
    for extra in [16usize, 32, 48, 80] {
        held.push(vec![0u8; extra]);
        assert_eq!(run(), base, "with {extra} more bytes held on the heap");
    }
    drop(held);
}
