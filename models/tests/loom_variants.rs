//! loom models of the variants beyond PostgreSQL: the reader-biased LWLock (BRAVO, `lwlock`'s
//! `reader_bias`) and the holder-serves FlexLock (`flexlock::HolderServesLock`), each with a
//! mutant that its model must catch.
//!
//! * Reader bias: a fast-path reader (the bias is turned on by a slow-path read before the
//!   threads start) races a writer's revocation. The data is a pair in a [`Protected`] cell, so a
//!   reader and a writer in their critical sections together are reported as a race; the reader
//!   also checks the pair. Mutant `bravo_no_fence` drops the reader's SeqCst fence between its
//!   publish and its re-check of the bias; mutant `bravo_draining_is_off` lets a conditional
//!   writer that gave up (a fast reader inside) mark the bias OFF instead of DRAINING, so the
//!   next writer does not wait for that reader.
//! * Holder serves: a submitter whose attempt failed queues its operation while an exclusive
//!   holder releases (the holder's load of the queue may miss the push, and no release re-checks
//!   it): the submitter must still get its operation run (by the holder, or by itself after
//!   waiting for the lock). Mutant `flex_holder_sleeps_on_op` sleeps on the operation instead,
//!   trusting the holder: the model must report the deadlock. The `_sleep2` and `detached_`
//!   models let submitters spin once, so that a submitter whose record a drain has detached
//!   sleeps on its operation (the server posts it) and one whose record may still be queued
//!   waits in the lock; `holder_detached_chain3` is the one that reaches the rewritten-link
//!   sign (a chain of two records).
#![cfg(loom)]

use flexlock::{GroupLock, HolderServesLock};
use lwlock::sync::thread;
use lwlock::{Mode, RawAtomicLwLock, RawLwLock, RawReaderBiasLwLock};
use models::Protected;
use std::sync::Arc;

/// The reader-biased lock and a pair it protects.
struct Biased {
    lock: RawReaderBiasLwLock,
    pair: Protected<(u64, u64)>,
}

impl Biased {
    /// A lock whose bias a slow-path read has turned on.
    fn new_biased() -> Arc<Biased> {
        let b = Arc::new(Biased {
            lock: RawReaderBiasLwLock::new(),
            pair: Protected::new((0, 0)),
        });
        b.lock.acquire(Mode::Shared);
        // SAFETY: held shared just above.
        unsafe { b.lock.release(Mode::Shared) };
        assert!(
            b.lock.is_biased(),
            "a slow-path read did not turn the bias on"
        );
        b
    }

    fn read(&self) {
        self.lock.acquire(Mode::Shared);
        // SAFETY: held shared.
        let (a, b) = unsafe { self.pair.read(|p| *p) };
        assert_eq!(a, b, "a reader saw a half-done write");
        // SAFETY: held shared above.
        unsafe { self.lock.release(Mode::Shared) };
    }

    fn write(&self) {
        self.lock.acquire(Mode::Exclusive);
        // SAFETY: held exclusively.
        unsafe {
            self.pair.write(|p| {
                p.0 += 1;
                p.1 += 1;
            })
        };
        // SAFETY: held exclusively above.
        unsafe { self.lock.release(Mode::Exclusive) };
    }

    fn try_write(&self) -> bool {
        if !self.lock.conditional_acquire(Mode::Exclusive) {
            return false;
        }
        // SAFETY: held exclusively.
        unsafe {
            self.pair.write(|p| {
                p.0 += 1;
                p.1 += 1;
            })
        };
        // SAFETY: held exclusively above.
        unsafe { self.lock.release(Mode::Exclusive) };
        true
    }

    fn writes(&self) -> u64 {
        assert!(!self.lock.is_locked(), "lock left held");
        // SAFETY: every thread has been joined.
        let (a, b) = unsafe { self.pair.read(|p| *p) };
        assert_eq!(a, b);
        a
    }
}

fn bias_reader_writer() {
    let b = Biased::new_biased();
    let r = b.clone();
    let t = thread::spawn(move || r.read());
    b.write();
    t.join().unwrap();
    assert_eq!(b.writes(), 1);
}

fn bias_try_writer_then_writer() {
    let b = Biased::new_biased();
    let r = b.clone();
    let t = thread::spawn(move || r.read());
    let tried = b.try_write();
    b.write();
    t.join().unwrap();
    assert_eq!(b.writes(), 1 + tried as u64);
}

models::loom_model! {
    /// Reader bias: a fast-path reader and a revoking writer never overlap (the store-load fence pair).
    bias_reader_writer2, threads: 2, bound: Some(3), bias_reader_writer
}

models::loom_model! {
    /// Reader bias: a conditional writer that finds a fast reader gives up; the next writer waits for it (DRAINING).
    bias_try_writer_then_writer2, threads: 2, bound: Some(3), bias_try_writer_then_writer
}

/// The value of the holder-serves models: a pair changed together and which ops ran.
#[derive(Debug, Default)]
struct Data {
    a: u64,
    b: u64,
    applied: [u8; 2],
}

type Holder = HolderServesLock<RawAtomicLwLock, Data>;

fn submit(lock: &Holder, me: usize) {
    let done = Arc::new(Protected::new(0u64));
    let cell = done.clone();
    let (who, seq) = lock.group(move |d: &mut Data| {
        d.applied[me] += 1;
        assert_eq!(d.applied[me], 1, "operation {me} ran twice");
        d.a += 1;
        d.b += 1;
        // SAFETY: only this operation writes the cell; the submitter reads it after `group`
        // returned, which must be after this operation ran.
        unsafe { cell.write(|x| *x = d.a) };
        (me, d.a)
    });
    assert_eq!(who, me, "a submitter got another operation's result");
    // SAFETY: see above; the model checks the happens-before.
    let seen = unsafe { done.read(|x| *x) };
    assert_eq!(seen, seq, "group returned before its operation was applied");
}

fn finish(lock: &Holder, submitters: usize, writes: u64) {
    let g = lock.read();
    for me in 0..submitters {
        assert_eq!(g.applied[me], 1, "operation {me} never ran");
    }
    assert_eq!(g.a, g.b);
    assert_eq!(g.a, submitters as u64 + writes, "an update was lost");
    drop(g);
    assert_eq!(lock.group_head(), None, "operations left queued");
}

fn holder_writer_and_submitter() {
    let lock = Arc::new(Holder::new(Data::default()));
    let l = lock.clone();
    let t = thread::spawn(move || {
        let mut g = l.write();
        g.a += 1;
        g.b += 1;
    });
    submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 1, 1);
}

fn holder_two_submitters() {
    let lock = Arc::new(Holder::new(Data::default()));
    let mut g = lock.write();
    g.a += 1;
    g.b += 1;
    let l = lock.clone();
    let t = thread::spawn(move || submit(&l, 1));
    drop(g);
    submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 2, 1);
}

fn holder_submitter_and_reader() {
    let lock = Arc::new(Holder::new(Data::default()));
    let l = lock.clone();
    let t = thread::spawn(move || {
        let g = l.read();
        assert_eq!(g.a, g.b, "a reader saw a half-applied operation");
    });
    submit(&lock, 0);
    t.join().unwrap();
    finish(&lock, 1, 0);
}

models::loom_model! {
    /// Holder serves: a writer's release and a queued submitter: the operation runs once, nobody is stranded.
    holder_writer_submitter2, threads: 2, bound: Some(3), holder_writer_and_submitter
}

models::loom_model! {
    /// Holder serves: two submitters behind a hold: each op runs once, each gets its own result.
    holder_two_submitters2, threads: 2, bound: Some(3), holder_two_submitters
}

models::loom_model! {
    /// Holder serves: a reader and a submitter: the reader never overlaps the operation.
    holder_submitter_reader2, threads: 2, bound: Some(3), holder_submitter_and_reader
}

/// A writer and two submitters: both operations can be pushed while the writer holds, so one
/// submitter's drain (or the writer's) detaches a chain of both records, and the other
/// submitter finds its link rewritten (the detached sign that needs a chain of two).
fn holder_writer_and_two_submitters() {
    let lock = Arc::new(Holder::new(Data::default()));
    let l = lock.clone();
    let w = thread::spawn(move || {
        let mut g = l.write();
        g.a += 1;
        g.b += 1;
    });
    let l = lock.clone();
    let t = thread::spawn(move || submit(&l, 1));
    submit(&lock, 0);
    w.join().unwrap();
    t.join().unwrap();
    finish(&lock, 2, 1);
}

/// Runs `body` with submitters spinning `spins` times before they wait (in `L`, or on their
/// operation once detached): loom never lets a submitter spin the production 200 times while a
/// server is busy, so without this those paths are never explored.
fn with_spins(spins: u32, body: impl FnOnce()) {
    lwlock::sync::set_model_spin_limit(Some(spins));
    body();
    lwlock::sync::set_model_spin_limit(None);
}

models::loom_model! {
    /// Holder serves, submitters spin once: a detached submitter sleeps on its op and its server posts it; an undetached one waits in `L`.
    holder_detached_sleep2, threads: 2, bound: Some(3), || with_spins(1, holder_two_submitters)
}

models::loom_model! {
    /// Holder serves, submitters spin once: a writer's release and a queued submitter, pushed alone (so no detached sign: it waits in `L`), with the short spin.
    holder_writer_submitter_sleep2, threads: 2, bound: Some(3), || with_spins(1, holder_writer_and_submitter)
}

models::loom_model! {
    /// Holder serves, submitters spin once, a writer and two submitters: a submitter whose record a drain detached with another sleeps on its op and is posted.
    holder_detached_chain3, threads: 3, bound: Some(3), || with_spins(1, holder_writer_and_two_submitters)
}

/// Proof that these models fail on the broken variants (selected at run time).
mod mutants {
    #[allow(unused_imports)]
    use models::mutants::{expect_caught, Failure};
    #[allow(dead_code)]
    const T: std::time::Duration = std::time::Duration::from_secs(120);

    /// A fast reader that does not fence between its publish and its re-check overlaps a writer.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_bravo_no_fence() {
        expect_caught("bias_reader_writer2", "bravo_no_fence", Failure::Race, T);
    }

    /// A conditional writer that gave up marks the bias OFF: the next writer overlaps the reader.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_bravo_draining_is_off() {
        expect_caught(
            "bias_try_writer_then_writer2",
            "bravo_draining_is_off",
            Failure::Race,
            T,
        );
    }

    /// A holder-serves submitter that sleeps on its operation is stranded.
    #[cfg(lwlock_mutant = "runtime")]
    #[test]
    fn mutant_flex_holder_sleeps_on_op() {
        expect_caught(
            "holder_writer_submitter2",
            "flex_holder_sleeps_on_op",
            Failure::Deadlock,
            T,
        );
    }
}
