//! A thread-local destructor that takes a contended lock (flushing a per-thread buffer into a
//! shared map, the common metrics pattern) must be able to wait, even after the thread's wait
//! record was destroyed: such a destructor runs after the record's when the buffer was created
//! before the thread first waited (destructors run in reverse order of registration). Before the
//! fallback record this aborted ("wait record used during thread-local destruction").
//!
//! Its own test binary: a regression aborts the process.

mod common;

use lwlock::RwLock;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static SHARED: RwLock<Option<HashMap<u64, u64>>> = RwLock::new(None);
/// Acquisitions of `SHARED` by the spawned threads (body and destructors).
static PASSED: AtomicU32 = AtomicU32::new(0);
/// The main thread holds `SHARED` again after this many passes.
static RETAKEN: AtomicU32 = AtomicU32::new(0);

/// Counts a pass through `SHARED` (called with it held; returns after releasing it, once the main
/// thread holds it again, so that the thread's next acquisition is contended too).
fn pass<G>(guard: G) {
    let me = PASSED.fetch_add(1, Ordering::SeqCst) + 1;
    drop(guard);
    while RETAKEN.load(Ordering::SeqCst) < me {
        std::thread::sleep(Duration::from_millis(1));
    }
}

struct Buffer {
    id: u64,
    counts: u64,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let mut map = SHARED.write();
        *map.get_or_insert_with(HashMap::new)
            .entry(self.id)
            .or_default() += self.counts;
        pass(map);
    }
}

thread_local! {
    static EARLY: RefCell<Option<Buffer>> = const { RefCell::new(None) };
    static BUFFER: RefCell<Option<Buffer>> = const { RefCell::new(None) };
}

fn live_records() -> usize {
    let mut n = 0;
    lwlock::proc::for_each_live(|_| n += 1);
    n
}

/// Spawns a thread that creates its buffers first and then waits once on `SHARED` (registering
/// its wait record after them, so that the record is destroyed before them), and exits. The
/// caller holds `SHARED` whenever the thread tries to take it, so every one of its acquisitions
/// (the body's and each destructor's) has to wait.
fn run_thread(id: u64, early_buffer: bool) {
    let passes = PASSED.load(Ordering::SeqCst);
    let mut w = Some(SHARED.write());
    let t = std::thread::spawn(move || {
        if early_buffer {
            EARLY.with(|b| *b.borrow_mut() = Some(Buffer { id, counts: 10 }));
        }
        BUFFER.with(|b| *b.borrow_mut() = Some(Buffer { id, counts: 1 }));
        pass(SHARED.read());
    });
    // SAFETY: only the state word is read.
    let raw = unsafe { SHARED.raw() };
    for k in 1..=(2 + u32::from(early_buffer)) {
        // Wait until the thread is queued behind us, let it through, and take the lock back.
        while raw.state() & lwlock::layout::HAS_WAITERS == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(w.take());
        while PASSED.load(Ordering::SeqCst) < passes + k {
            std::thread::sleep(Duration::from_millis(1));
        }
        w = Some(SHARED.write());
        RETAKEN.store(passes + k, Ordering::SeqCst);
    }
    drop(w);
    t.join().expect("the destructor thread finished");
}

#[test]
fn destructors_after_the_record_can_wait() {
    let _dog = common::Watchdog::new("tls destructor", Duration::from_secs(60));
    // Warm up: this thread's own record and the table's first chunk.
    run_thread(0, false);
    let live = live_records();
    // A destructor that runs after the record's: it waits on the fallback record, which goes
    // back to the free list with the thread.
    for id in 1..=4 {
        run_thread(id, false);
    }
    assert_eq!(live_records(), live, "a fallback record was not returned");
    // Two waiting destructors: the second runs after the fallback's own destructor too, and
    // waits on a record leased for the rest of the thread's life (at most one per thread).
    for id in 5..=8 {
        run_thread(id, true);
    }
    let leaked = live_records() - live;
    assert!(leaked <= 4, "{leaked} records leased by 4 threads");
    let map = SHARED.read();
    let map = map.as_ref().expect("flushed");
    for id in 1..=8u64 {
        let expect = if id > 4 { 11 } else { 1 };
        assert_eq!(map.get(&id), Some(&expect), "buffer {id} flushed");
    }
}
