//! `lwsim_releaser`: the end-of-transaction group operation on the simulated many-core machine:
//! the direct atomic LWLock, the last-releaser FlexLock (2011) and its holder-serves variant,
//! with their throughput and cache-line transfers per operation.
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim \
//!   cargo run --release -p bench --example lwsim_releaser -- [CORES,...]
//! ```
//!
//! One thread per core (default 1,2,4,8,16,32,64) on the xeon-2s-broadwell profile; each loops
//! "200 ns of work, then an exclusive increment of a shared counter" for 200 us of virtual time.

#[cfg(not(lwsim))]
fn main() {
    eprintln!("lwsim_releaser: build with RUSTFLAGS=\"--cfg lwsim\" (see the module docs)");
    std::process::exit(2);
}

#[cfg(lwsim)]
fn main() {
    use flexlock::{FlexLock, GroupLock, GroupPolicy, HolderServesLock};
    use lwlock::sync::lwsim::{self, Profile, SimConfig};
    use lwlock::{Mode, RawAtomicLwLock, RawLwLock};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    const DURATION_NS: u64 = 200_000;
    const THINK_NS: u64 = 200;

    let cores: Vec<usize> = match std::env::args().nth(1) {
        Some(list) => list
            .split(',')
            .map(|c| {
                c.parse().unwrap_or_else(|_| {
                    eprintln!("lwsim_releaser: CORES: not a number: {c:?}");
                    std::process::exit(2)
                })
            })
            .collect(),
        None => vec![1, 2, 4, 8, 16, 32, 64],
    };
    let prof = Profile::builtin("xeon-2s-broadwell").expect("built-in profile");

    /// One lock under test: `op` is one end-of-transaction.
    trait Lock: Send + Sync + 'static {
        fn make() -> Self;
        fn op(&self);
        fn value(&self) -> u64;
    }
    struct Direct(RawAtomicLwLock, lwlock::sync::UnsafeCell<u64>);
    // SAFETY: the cell is only touched under the exclusive lock.
    unsafe impl Sync for Direct {}
    impl Lock for Direct {
        fn make() -> Self {
            Direct(RawAtomicLwLock::new(), lwlock::sync::UnsafeCell::new(0))
        }
        fn op(&self) {
            self.0.acquire(Mode::Exclusive);
            // SAFETY: held exclusively.
            unsafe { *self.1.get() += 1 };
            // SAFETY: acquired above.
            unsafe { self.0.release(Mode::Exclusive) };
        }
        fn value(&self) -> u64 {
            self.0.acquire(Mode::Shared);
            // SAFETY: held shared.
            let v = unsafe { *self.1.get() };
            // SAFETY: acquired above.
            unsafe { self.0.release(Mode::Shared) };
            v
        }
    }
    impl Lock for FlexLock<RawAtomicLwLock, u64> {
        fn make() -> Self {
            FlexLock::new(0, GroupPolicy::LastReleaser)
        }
        fn op(&self) {
            self.group(|v| *v += 1);
        }
        fn value(&self) -> u64 {
            *self.read()
        }
    }
    impl Lock for HolderServesLock<RawAtomicLwLock, u64> {
        fn make() -> Self {
            HolderServesLock::new(0)
        }
        fn op(&self) {
            self.group(|v| *v += 1);
        }
        fn value(&self) -> u64 {
            *self.read()
        }
    }

    fn point<L: Lock>(prof: &Profile, n: usize) -> (f64, f64) {
        let ops = Arc::new(AtomicU64::new(0));
        let o = ops.clone();
        let r = lwsim::run(SimConfig::new(prof.clone(), n), move || {
            let l = Arc::new(L::make());
            let hs: Vec<_> = (0..n)
                .map(|_| {
                    let (l, o) = (l.clone(), o.clone());
                    lwlock::sync::thread::spawn(move || {
                        while lwlock::sync::clock_nanos() < DURATION_NS {
                            lwsim::compute(THINK_NS);
                            l.op();
                            o.fetch_add(1, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(
                l.value(),
                o.load(Ordering::Relaxed),
                "an operation was lost"
            );
        });
        let ops = ops.load(Ordering::Relaxed).max(1) as f64;
        (
            ops / (DURATION_NS as f64 * 1e-9) / 1e6,
            r.total().transfers() as f64 / ops,
        )
    }

    println!("| cores | atomic Mops/s (lines/op) | flex-releaser | flex-holder | releaser/atomic | holder/atomic |");
    println!("|---|---|---|---|---|---|");
    for &n in &cores {
        let a = point::<Direct>(&prof, n);
        let r = point::<FlexLock<RawAtomicLwLock, u64>>(&prof, n);
        let h = point::<HolderServesLock<RawAtomicLwLock, u64>>(&prof, n);
        println!(
            "| {n} | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.2} ({:.2}) | {:.2} | {:.2} |",
            a.0,
            a.1,
            r.0,
            r.1,
            h.0,
            h.1,
            r.0 / a.0,
            h.0 / a.0
        );
    }
}
