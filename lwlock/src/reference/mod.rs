//! Reference locks, written only against [`crate::sync`] as a user's own lock would be: a
//! test-and-set spinlock ([`TasLock`]) and a ticket lock ([`TicketLock`]), whose waiters all spin
//! on one line (they collapse past a knee as cores grow), and an MCS queue lock ([`McsLock`]),
//! whose waiters each spin on their own line (flat), and the Linux kernel's queued spinlock
//! ([`QSpinLock`]: a pending bit, then an MCS queue, in one word); and two of folly's locks that
//! published curves measured, its byte spinlock with a PAUSE-then-sleep waiter
//! ([`MicroSpinLock`]) and its one-word reader-writer spinlock ([`RwSpinLock`], the only one here
//! with a real shared mode). None mirrors a PostgreSQL function: they are
//! the textbook shapes the simulator's validation checks and the baselines a user compares a lock
//! against.
//!
//! All but [`RwSpinLock`] are exclusive-only: they implement [`RawLwLock`](crate::RawLwLock) with
//! [`Mode::Shared`](crate::Mode::Shared) taken as exclusive, so that every harness (lwbench,
//! lwsim's sweep) runs them like the project's locks. They build in every configuration (std,
//! loom, shuttle, lwsim); `sweep` (`--cfg lwsim` only) is the lock workload the simulator's
//! sweeps and validation tests run on them, and `published` (`--cfg lwsim` only) the loops of
//! the published benchmarks the simulator is held against.

mod mcs;
mod micro_spin;
#[cfg(lwsim)]
pub mod published;
mod qspinlock;
mod rw_spin;
#[cfg(lwsim)]
pub mod sweep;
mod tas;
mod ticket;

pub use mcs::{McsLock, McsNode};
pub use micro_spin::MicroSpinLock;
pub use qspinlock::{QNode, QSpinLock};
pub use rw_spin::RwSpinLock;
pub use tas::TasLock;
pub use ticket::TicketLock;

#[cfg(all(test, not(any(loom, shuttle, lwsim))))]
mod tests {
    use super::{McsLock, MicroSpinLock, QSpinLock, RwSpinLock, TasLock, TicketLock};
    use crate::{AcquireOrWait, Mode, RawLwLock};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    /// `threads` real threads, alternating the modes (both exclusive here), each make `iters`
    /// non-atomic read-modify-write increments of one counter under `lock`; returns the count.
    fn hammer<L: RawLwLock + Send + Sync + 'static>(
        lock: &Arc<L>,
        threads: u64,
        iters: u64,
    ) -> u64 {
        let count = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..threads)
            .map(|i| {
                let (l, c) = (lock.clone(), count.clone());
                std::thread::spawn(move || {
                    let mode = if i % 2 == 0 {
                        Mode::Exclusive
                    } else {
                        Mode::Shared
                    };
                    for _ in 0..iters {
                        l.acquire(mode);
                        let v = c.load(Ordering::Relaxed);
                        c.store(v + 1, Ordering::Relaxed);
                        // SAFETY: acquired above in `mode` by this thread.
                        unsafe { l.release(mode) };
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        count.load(Ordering::Relaxed)
    }

    /// Two real threads, one per mode, increment a counter with a non-atomic read-modify-write
    /// under the lock (both modes are exclusive): no increment is lost. Then the conditional
    /// forms. Few iterations: a spinlock hand-off to a descheduled waiter (the ticket lock's
    /// FIFO order forces them) costs a time slice on a loaded host.
    fn excludes<L: RawLwLock + Default + Send + Sync + 'static>() {
        let lock = Arc::new(L::default());
        let count = hammer(&lock, 2, 1_000);
        assert_eq!(count, 2_000, "{}", L::NAME);
        assert!(!lock.is_locked(), "{}", L::NAME);
        assert!(lock.conditional_acquire(Mode::Shared), "{}", L::NAME);
        assert!(
            lock.is_locked() && lock.is_locked_exclusive(),
            "{}",
            L::NAME
        );
        assert!(!lock.conditional_acquire(Mode::Exclusive), "{}", L::NAME);
        // SAFETY: acquired above by this thread.
        unsafe { lock.release(Mode::Shared) };
        assert_eq!(
            lock.acquire_or_wait(Mode::Exclusive),
            AcquireOrWait::Acquired,
            "{}",
            L::NAME
        );
        // SAFETY: acquired above by this thread.
        unsafe { lock.release(Mode::Exclusive) };
        assert!(!lock.is_locked(), "{}", L::NAME);
    }

    #[test]
    fn tas_excludes() {
        excludes::<TasLock>();
    }

    #[test]
    fn ticket_excludes() {
        excludes::<TicketLock>();
    }

    #[test]
    fn mcs_excludes() {
        excludes::<McsLock>();
    }

    #[test]
    fn micro_spin_excludes() {
        excludes::<MicroSpinLock>();
    }

    /// The RW spinlock's two modes: writers' non-atomic increments under Exclusive are never
    /// lost while a reader takes Shared; two readers share it and keep a writer out, a writer
    /// keeps a reader out.
    #[test]
    fn rw_spin_excludes_writers_and_shares_readers() {
        let lock = Arc::new(RwSpinLock::default());
        let count = Arc::new(AtomicU64::new(0));
        let hs: Vec<_> = (0..3)
            .map(|i| {
                let (l, c) = (lock.clone(), count.clone());
                std::thread::spawn(move || {
                    for _ in 0..1_000 {
                        if i == 2 {
                            l.acquire(Mode::Shared);
                            let _ = c.load(Ordering::Relaxed);
                            // SAFETY: acquired above in Shared by this thread.
                            unsafe { l.release(Mode::Shared) };
                        } else {
                            l.acquire(Mode::Exclusive);
                            let v = c.load(Ordering::Relaxed);
                            c.store(v + 1, Ordering::Relaxed);
                            // SAFETY: acquired above in Exclusive by this thread.
                            unsafe { l.release(Mode::Exclusive) };
                        }
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(count.load(Ordering::Relaxed), 2_000);
        assert!(lock.conditional_acquire(Mode::Shared));
        assert!(lock.conditional_acquire(Mode::Shared));
        assert!(lock.is_locked() && !lock.is_locked_exclusive());
        assert!(!lock.conditional_acquire(Mode::Exclusive));
        // SAFETY: both shared holds were taken above by this thread.
        unsafe { lock.release(Mode::Shared) };
        // SAFETY: as above.
        unsafe { lock.release(Mode::Shared) };
        assert!(lock.conditional_acquire(Mode::Exclusive));
        assert!(lock.is_locked_exclusive());
        assert!(!lock.conditional_acquire(Mode::Shared));
        // SAFETY: taken above by this thread.
        unsafe { lock.release(Mode::Exclusive) };
        assert!(!lock.is_locked());
        assert_eq!(lock.acquire_or_wait(Mode::Shared), AcquireOrWait::Acquired);
        // SAFETY: taken above by this thread.
        unsafe { lock.release(Mode::Shared) };
    }

    #[test]
    fn qspinlock_excludes() {
        excludes::<QSpinLock>();
    }

    /// Three threads on the queued spinlock, so that besides the holder and the pending waiter
    /// one queues: no increment is lost. Few iterations: more spinners than cores on a loaded
    /// host stall behind a preempted holder.
    #[test]
    fn qspinlock_queues_and_excludes() {
        let lock = Arc::new(QSpinLock::default());
        assert_eq!(hammer(&lock, 3, 3_000), 9_000);
        assert!(!lock.is_locked());
    }
}
