//! The uncontended lock paths as separate functions, for counting their instructions in the
//! release build (the counts the lock paths announce to the simulator with
//! `lwlock::sync::instructions`; the table and the method are in the design document's simulator
//! section).
//!
//! ```text
//! cargo build --release -p lwlock --example lock_path_instructions
//! objdump -d --no-show-raw-insn -C target/release/examples/lock_path_instructions \
//!     | awk '/<lock_path_instructions::.*_(acquire|release)>:/,/^$/'
//! # dynamic counts, per call (the argument is the number of calls of each function):
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \
//!     target/release/examples/lock_path_instructions 1000
//! callgrind_annotate --inclusive=yes /tmp/cg.out | grep lock_path_instructions::
//! ```
//!
//! Each function is one acquire or one release of a free lock, `#[inline(never)]`, so that its
//! body is the path the benchmark's loop inlines (`lwlock/benches/uncontended.rs`), plus the
//! call's own `ret`.

use lwlock::reference::{McsLock, QSpinLock, TasLock, TicketLock};
use lwlock::{Mode, RawAtomicLwLock, RawClassicLwLock, RawLwLock, Tranche};
use std::hint::black_box;

macro_rules! pair {
    ($acq:ident, $rel:ident, $lock:ty, $mode:expr) => {
        #[inline(never)]
        fn $acq(l: &$lock) -> bool {
            l.acquire($mode)
        }
        #[inline(never)]
        fn $rel(l: &$lock) {
            // SAFETY: held in this mode by the caller's preceding acquire.
            unsafe { l.release($mode) }
        }
    };
}

pair!(
    classic_shared_acquire,
    classic_shared_release,
    RawClassicLwLock,
    Mode::Shared
);
pair!(
    classic_exclusive_acquire,
    classic_exclusive_release,
    RawClassicLwLock,
    Mode::Exclusive
);
pair!(
    atomic_shared_acquire,
    atomic_shared_release,
    RawAtomicLwLock,
    Mode::Shared
);
pair!(
    atomic_exclusive_acquire,
    atomic_exclusive_release,
    RawAtomicLwLock,
    Mode::Exclusive
);

pair!(tas_acquire, tas_release, TasLock, Mode::Exclusive);
pair!(ticket_acquire, ticket_release, TicketLock, Mode::Exclusive);
pair!(mcs_acquire, mcs_release, McsLock, Mode::Exclusive);
pair!(
    qspinlock_acquire,
    qspinlock_release,
    QSpinLock,
    Mode::Exclusive
);

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("the number of calls"))
        .unwrap_or(1000);
    let classic = RawClassicLwLock::new();
    let atomic = RawAtomicLwLock::new();
    let tas = TasLock::with_tranche(Tranche::DEFAULT);
    let ticket = TicketLock::with_tranche(Tranche::DEFAULT);
    let mcs = McsLock::with_tranche(Tranche::DEFAULT);
    let qspin = QSpinLock::with_tranche(Tranche::DEFAULT);
    for _ in 0..n {
        black_box(classic_shared_acquire(black_box(&classic)));
        classic_shared_release(black_box(&classic));
        black_box(classic_exclusive_acquire(black_box(&classic)));
        classic_exclusive_release(black_box(&classic));
        black_box(atomic_shared_acquire(black_box(&atomic)));
        atomic_shared_release(black_box(&atomic));
        black_box(atomic_exclusive_acquire(black_box(&atomic)));
        atomic_exclusive_release(black_box(&atomic));
        black_box(tas_acquire(black_box(&tas)));
        tas_release(black_box(&tas));
        black_box(ticket_acquire(black_box(&ticket)));
        ticket_release(black_box(&ticket));
        black_box(mcs_acquire(black_box(&mcs)));
        mcs_release(black_box(&mcs));
        black_box(qspinlock_acquire(black_box(&qspin)));
        qspinlock_release(black_box(&qspin));
    }
    println!("{n} uncontended acquire+release pairs of each lock and mode");
}
