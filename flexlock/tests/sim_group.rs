//! lwsim: a FlexLock leader group of k members costs one exclusive acquisition. Only in
//! `--cfg lwsim` builds (`ci/sim.sh`).
#![cfg(lwsim)]

use flexlock::{FlexLock, GroupLock, GroupPolicy};
use lwlock::sync::lwsim::{self, Profile, SimConfig};
use lwlock::{AcquireOrWait, Mode, RawAtomicLwLock, RawLwLock, Tranche};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Successful exclusive acquisitions, counted outside the simulation (a std atomic: the count
/// is a measurement, not simulated traffic).
static EXCLUSIVE: AtomicU64 = AtomicU64::new(0);

struct Counting(RawAtomicLwLock);

// SAFETY: forwards every call to the atomic LWLock; only counts.
unsafe impl RawLwLock for Counting {
    const NAME: &'static str = "counting-atomic";
    fn with_tranche(t: Tranche) -> Self {
        Counting(RawAtomicLwLock::with_tranche(t))
    }
    fn acquire(&self, mode: Mode) -> bool {
        let r = self.0.acquire(mode);
        if mode == Mode::Exclusive {
            EXCLUSIVE.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
    fn conditional_acquire(&self, mode: Mode) -> bool {
        let r = self.0.conditional_acquire(mode);
        if r && mode == Mode::Exclusive {
            EXCLUSIVE.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        let r = self.0.acquire_or_wait(mode);
        if r == AcquireOrWait::Acquired && mode == Mode::Exclusive {
            EXCLUSIVE.fetch_add(1, Ordering::Relaxed);
        }
        r
    }
    unsafe fn release(&self, mode: Mode) {
        // SAFETY: forwarded contract.
        unsafe { self.0.release(mode) }
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked_exclusive()
    }
    fn tranche(&self) -> Tranche {
        self.0.tranche()
    }
}

#[test]
fn leader_group_of_k_costs_one_exclusive_acquisition() {
    for k in [2u64, 8, 32] {
        EXCLUSIVE.store(0, Ordering::Relaxed);
        let p = Profile::builtin("xeon-2s-broadwell").unwrap();
        let out = Arc::new(AtomicU64::new(0));
        let o = out.clone();
        let r = lwsim::run(SimConfig::new(p, k as usize + 1), move || {
            let flex = Arc::new(FlexLock::<Counting, u64>::new(0, GroupPolicy::Leader));
            let f = flex.clone();
            // The holder: takes the lock at t = 0 and keeps it 100 us.
            let holder = lwlock::sync::thread::spawn(move || {
                let g = f.write();
                lwsim::compute(100_000);
                drop(g);
            });
            let members: Vec<_> = (0..k)
                .map(|_| {
                    let f = flex.clone();
                    lwlock::sync::thread::spawn(move || {
                        lwsim::compute(1_000); // after the holder took the lock
                        f.group(|v| *v += 1);
                    })
                })
                .collect();
            holder.join().unwrap();
            for m in members {
                m.join().unwrap();
            }
            o.store(*flex.read(), Ordering::Relaxed);
        });
        assert_eq!(out.load(Ordering::Relaxed), k);
        // The holder's acquisition and one for the whole group.
        assert_eq!(
            EXCLUSIVE.load(Ordering::Relaxed),
            2,
            "k = {k}: {}",
            r.summary()
        );
    }
}
