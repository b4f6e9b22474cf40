//! The uncontended paths of the group locks as separate functions, for counting their
//! instructions in the release build beyond the wrapped lock's own (the counts the group locks
//! announce to the simulator with `lwlock::sync::instructions`; the method is lwlock's
//! `lock_path_instructions` example's, the table is in the design document's simulator section).
//!
//! ```text
//! cargo build --release -p flexlock --example group_path_instructions
//! objdump -d --no-show-raw-insn -C target/release/examples/group_path_instructions \
//!     | awk '/<group_path_instructions::[a-z_]*>:/,/^$/'
//! ```
//!
//! Each function is one uncontended read (acquire and release), write, or group operation over
//! the atomic LWLock, `#[inline(never)]`; `raw_*` are the wrapped lock's own pairs, for the
//! difference.

use flexlock::{ClogGroupLock, FlexLock, GroupLock, GroupPolicy, HolderServesLock};
use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
use std::hint::black_box;

type Flex = FlexLock<RawAtomicLwLock, u64>;

#[inline(never)]
fn raw_shared_pair(l: &RawAtomicLwLock) {
    l.acquire(Mode::Shared);
    // SAFETY: held shared just above.
    unsafe { l.release(Mode::Shared) }
}

#[inline(never)]
fn raw_exclusive_pair(l: &RawAtomicLwLock) {
    l.acquire(Mode::Exclusive);
    // SAFETY: held exclusively just above.
    unsafe { l.release(Mode::Exclusive) }
}

#[inline(never)]
fn flex_read(l: &Flex) -> u64 {
    *l.read()
}

#[inline(never)]
fn flex_write(l: &Flex) {
    *l.write() += 1;
}

#[inline(never)]
fn flex_group(l: &Flex) {
    l.group(|v| *v += 1);
}

#[inline(never)]
fn holder_serves_group(l: &HolderServesLock<RawAtomicLwLock, u64>) {
    l.group(|v| *v += 1);
}

#[inline(never)]
fn clog_update(l: &ClogGroupLock<RawAtomicLwLock, u64>) {
    l.update(7, |v| *v += 1);
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("the number of calls"))
        .unwrap_or(1000);
    let raw = RawAtomicLwLock::new();
    let leader = Flex::new(0, GroupPolicy::Leader);
    let releaser = Flex::new(0, GroupPolicy::LastReleaser);
    let serves = HolderServesLock::<RawAtomicLwLock, u64>::new(0);
    let clog = ClogGroupLock::<RawAtomicLwLock, u64>::new(0);
    for _ in 0..n {
        raw_shared_pair(black_box(&raw));
        raw_exclusive_pair(black_box(&raw));
        black_box(flex_read(black_box(&leader)));
        flex_write(black_box(&leader));
        flex_group(black_box(&leader));
        black_box(flex_read(black_box(&releaser)));
        flex_write(black_box(&releaser));
        flex_group(black_box(&releaser));
        holder_serves_group(black_box(&serves));
        clog_update(black_box(&clog));
    }
    println!("{n} uncontended operations of each kind");
}
