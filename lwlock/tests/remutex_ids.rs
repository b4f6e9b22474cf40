//! `ReentrantMutex` ownership across threads whose thread ids differ in exactly one bit.
//!
//! The mutex's owner is the thread id `GetThreadId` returns (the wait-record number plus one).
//! An id bug that drops or masks one bit (two record numbers `2k` and `2k + 1`, or `k` and
//! `k + 2^j`, seen as one owner) lets a second thread "re-enter" a mutex another thread holds;
//! with ids as the allocator happens to hand them out, a test catches that only by luck. Here a
//! pool of live threads (each keeps its record while it lives, so its id is stable) is grown
//! until, for every bit 0..=`BITS`, two of its threads have ids (record numbers plus one, as the
//! module docs of `remutex` define them) that differ in that bit alone;
//! then, for each such pair, the first holds the mutex (and re-enters it), and the second must
//! fail `try_lock` and block in `lock` until the first releases.
#![cfg(not(any(loom, shuttle, lwsim)))]

mod common;

use lwlock::lock_api::GetThreadId;
use lwlock::{RawThreadId, ReentrantMutex};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The highest bit position covered (pairs up to ids `2^BITS` apart).
const BITS: u32 = 6;

type Job = Box<dyn FnOnce() + Send>;

/// A live thread that runs jobs; its record (and so its id) stays its own until it is dropped.
struct Worker {
    jobs: Option<Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    id: usize,
    number: u32,
}

impl Worker {
    fn spawn() -> Worker {
        let (jobs, rx) = channel::<Job>();
        let (tx_id, rx_id) = channel();
        let thread = std::thread::spawn(move || {
            let _ = tx_id.send((
                RawThreadId.nonzero_thread_id().get(),
                lwlock::Proc::current().number(),
            ));
            for job in rx {
                job();
            }
        });
        let (id, number) = rx_id.recv().expect("the worker reports its id");
        Worker {
            jobs: Some(jobs),
            thread: Some(thread),
            id,
            number,
        }
    }

    fn run(&self, job: impl FnOnce() + Send + 'static) {
        self.jobs.as_ref().unwrap().send(Box::new(job)).unwrap();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Whether record `number` is asleep on a lock (its published wait event is an LWLock's).
fn sleeps_on_lwlock(number: u32) -> bool {
    lwlock::sample_waits()
        .iter()
        .any(|s| s.proc == number && s.event.to_string().starts_with("LWLock:"))
}

fn recv<T>(rx: &Receiver<T>, what: &str) -> T {
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
}

/// `a` holds the mutex (entered twice); `b` must be kept out until `a` releases.
fn exclusion(a: &Worker, b: &Worker, bit: u32) {
    let what = format!(
        "records {} and {} (ids {:#x} and {:#x}, bit {bit})",
        a.number, b.number, a.id, b.id
    );
    let m = Arc::new(ReentrantMutex::new(()));
    let a_holds = Arc::new(AtomicBool::new(false));
    let (tx_held, rx_held) = channel();
    let (tx_release, rx_release) = channel::<()>();
    let (tx_a_done, rx_a_done) = channel();
    {
        let (m, a_holds) = (m.clone(), a_holds.clone());
        a.run(move || {
            let g1 = m.lock();
            // Re-entry by the owner: must not block (a hang here fails through the watchdog).
            let g2 = m.lock();
            let owned = m.is_owned_by_current_thread();
            a_holds.store(true, Ordering::SeqCst);
            let _ = tx_held.send(owned);
            let _ = rx_release.recv();
            a_holds.store(false, Ordering::SeqCst);
            drop(g2);
            let still = m.is_locked();
            drop(g1);
            let _ = tx_a_done.send(still);
        });
    }
    assert!(
        recv(&rx_held, "the holder"),
        "{what}: the holder does not own the mutex"
    );
    let (tx_try, rx_try) = channel();
    {
        let m = m.clone();
        b.run(move || {
            let _ = tx_try.send((m.try_lock().is_none(), m.is_owned_by_current_thread()));
        });
    }
    let (kept_out, owned) = recv(&rx_try, "the other thread's try_lock");
    assert!(
        kept_out,
        "{what}: another thread entered a held mutex (try_lock)"
    );
    assert!(!owned, "{what}: another thread is seen as the owner");
    let entered = Arc::new(AtomicBool::new(false));
    let (tx_b_done, rx_b_done) = channel();
    {
        let (m, a_holds, entered) = (m.clone(), a_holds.clone(), entered.clone());
        b.run(move || {
            let g = m.lock();
            entered.store(true, Ordering::SeqCst);
            let overlapped = a_holds.load(Ordering::SeqCst);
            drop(g);
            let _ = tx_b_done.send(overlapped);
        });
    }
    // The other thread must go to sleep on the mutex, not enter it.
    let start = Instant::now();
    while !sleeps_on_lwlock(b.number) {
        assert!(
            !entered.load(Ordering::SeqCst),
            "{what}: another thread entered a held mutex (lock)"
        );
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{what}: the other thread neither entered nor slept"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(
        !entered.load(Ordering::SeqCst),
        "{what}: another thread entered a held mutex (lock)"
    );
    tx_release.send(()).unwrap();
    assert!(
        recv(&rx_a_done, "the holder's release"),
        "{what}: the first of two nested guards unlocked the mutex"
    );
    assert!(
        !recv(&rx_b_done, "the other thread's lock"),
        "{what}: another thread entered while the holder still held the mutex"
    );
    assert!(entered.load(Ordering::SeqCst));
    assert!(!m.is_locked());
}

#[test]
fn threads_whose_ids_differ_in_one_bit_exclude_each_other() {
    let _dog = common::Watchdog::new("remutex one-bit ids", Duration::from_secs(120));
    let mut pool: Vec<Worker> = Vec::new();
    // For each bit, the indices in `pool` of two workers whose record numbers differ in that
    // bit alone (`pairs[0]`: numbers 2k and 2k + 1, k and k + 2^j) and of two whose ids do
    // (`pairs[1]`). Paired by the documented id (record number + 1), not by what `GetThreadId`
    // returns: an id bug that merges two ids must not make the test skip that pair.
    let mut pairs: [Vec<Option<(usize, usize)>>; 2] =
        [vec![None; BITS as usize + 1], vec![None; BITS as usize + 1]];
    while pairs.iter().flatten().any(Option::is_none) {
        assert!(
            pool.len() < 1024,
            "no pair for some bit among {} live threads",
            pool.len()
        );
        let w = Worker::spawn();
        for (i, other) in pool.iter().enumerate() {
            let (n, m) = (w.number as usize, other.number as usize);
            for (kind, diff) in [n ^ m, (n + 1) ^ (m + 1)].into_iter().enumerate() {
                if diff.is_power_of_two() && diff.trailing_zeros() <= BITS {
                    pairs[kind][diff.trailing_zeros() as usize].get_or_insert((i, pool.len()));
                }
            }
        }
        pool.push(w);
    }
    for kind in &pairs {
        for (bit, pair) in kind.iter().enumerate() {
            let (i, j) = pair.unwrap();
            // Both directions: the lower number holding and the higher one holding.
            exclusion(&pool[i], &pool[j], bit as u32);
            exclusion(&pool[j], &pool[i], bit as u32);
        }
    }
    // And the contract itself: live threads' ids are distinct and non-zero.
    let mut ids: Vec<usize> = pool.iter().map(|w| w.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), pool.len(), "two live threads share a thread id");
}
