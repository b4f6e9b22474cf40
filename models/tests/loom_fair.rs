//! loom models of the atomic LWLock's fair unlock (a variant beyond PostgreSQL, see
//! `lwlock/src/atomic_state/fair_unlock.rs`: `release_fair`, `release_upgradable_fair`, `bump`,
//! `bump_upgradable`; lock_api's `RawRwLockFair`, `RawRwLockUpgradeFair` and `RawMutexFair`
//! forward to them). A fair release that frees the lock while someone waits hands it, in the same
//! AcqRel CAS that removes its own hold, to the waiters a release would wake (the head writer
//! alone, or every reader and the first upgradable waiter), and wakes them with `lw_granted`
//! set (invariant 8 of `lwlock::layout`).
//!
//! What the models check, besides loom's own checks (a data race on the protected pair is a
//! "Causality violation", a lost wakeup a deadlock):
//! * **grant accounting**: every grantee, inside its section, finds exactly its hold in the word
//!   (`EXCLUSIVE` alone for a writer; for readers a count from one to the readers' units, see
//!   `assert_shared_hold`; `UPGRADABLE` for the upgradable grantee), and the lock is free at the
//!   end;
//! * **the order of the grantee's flags**: a grantee that wakes on a foreign post (a wakeup meant
//!   for another protocol on the same semaphore) sees `lw_granted` whenever it sees NOT_WAITING;
//! * **the CAS's ordering**: its Release half orders the releaser's section before a newcomer
//!   that joins shared grantees, its Acquire half orders a reader that left just before the
//!   release before an exclusive grantee;
//! * **a grant racing a deadline**: a timed grantee is granted or times out, never both;
//! * **no barging**: a newcomer that arrives while the head writer waits never gets the lock
//!   between the fair release and the grantee's section, and `bump` lets the queued waiter in.
//!
//! Each waiter's thread publishes its record number; the holder waits (yielding to the model)
//! until the waiters it needs sleep on their semaphores (`wait_event`), so that every execution
//! reaches the grant, and loom explores the order in which they queued and every interleaving of
//! the release with the grantees and the newcomer.
//!
//! Bounds (each model under about 40 s on a 2-core machine; the report of `ci/models.sh` gives
//! executions and seconds): the two-thread models (`fair_grant_foreign_post` at preemption bound
//! 4, `fair_grant_races_timeout` at 3, `bump_with_waiter` and `bump_upgradable_with_waiter` at 2) and the three-thread ones at 2
//! (`fair_exclusive_no_barging`, the two task-fair ones) or 1 (`fair_exclusive_writer_reader`,
//! `fair_exclusive_reader_newcomer`, `fair_shared_last_reader`,
//! `fair_upgradable_writer_upgradable`: at 2 each took over 80 s; the holder's wait for its
//! waiters to sleep is what costs, and the races they look for need one preemption of the
//! releaser). Each mutant of the fair unlock in `ci/mutation.list` is reported by its model.
//!
//! What they cannot prove: interleavings beyond the bound (at bound 1 an execution has one
//! preemption, of any thread at any point, so a race that needs the releaser and a waiter both
//! preempted is out of reach there);
//! more than two waiters (a grant to several readers and an upgradable waiter at once, a
//! WAIT_UNTIL_FREE run in front of the grantees); a timed grantee under the handoff policies;
//! the `Handoff` policy's bound (only `TaskFair`, whose writer owns
//! `HANDOFF` from its queueing); a grant while the handoff owner is off the list; a fair release
//! that finds no waiter visible (it is an ordinary release: the models make the holder see
//! `HAS_WAITERS` first); lock_api's trait impls themselves (not compiled under loom: each
//! forwards one call, and the unit and peer tests run them).
#![cfg(loom)]

use lwlock::layout::{HANDOFF, HAS_WAITERS, LOCK_MASK, SHARED_MASK, UPGRADABLE, VAL_EXCLUSIVE};
use lwlock::sync::{thread, AtomicU32, Ordering};
use lwlock::{
    AtomicLwLock, Mode, Policy, Proc, RawAtomicLwLock, RawLwLock, RawTaskFairLwLock, Tranche,
    WaitEvent, INVALID_PROC,
};
use models::scenarios::Shared;
use std::sync::Arc;

// ---- helpers ---------------------------------------------------------------------------------

/// Yields to the model until `cond` holds.
fn await_model(mut cond: impl FnMut() -> bool) {
    while !cond() {
        thread::yield_now();
    }
}

/// Yields until `ready` holds, then makes sure that the word's `HAS_WAITERS` is visible here. A
/// fair release and `bump` look for waiters with a Relaxed load (as parking_lot's do), so a
/// waiter whose queueing this thread cannot see yet is not one they must serve. The probe is a
/// failing conditional exclusive acquire (we hold the lock): an RMW, which reads the newest
/// value of the word, so the release's later Relaxed load cannot read an older one (coherence).
/// It is cheaper for loom than a loop of Relaxed loads, each of which may read any older value.
/// Its Acquire orders us after the releases before it; the races the models look for (a reader
/// leaving during our release, a newcomer after it) come later, so loom still explores them.
fn await_waiters<P: Policy>(lock: &AtomicLwLock<P>, ready: impl FnMut() -> bool) {
    await_model(ready);
    assert!(
        !lock.conditional_acquire(Mode::Exclusive),
        "the holder's probe got the lock"
    );
    assert_ne!(
        lock.state() & HAS_WAITERS,
        0,
        "a sleeping waiter not in the word"
    );
}

/// A spawned waiter: its join handle and the slot where it publishes its record number.
struct Waiter<R> {
    handle: thread::JoinHandle<R>,
    slot: Arc<AtomicU32>,
}

impl<R> Waiter<R> {
    /// Whether the waiter sleeps on its semaphore for the lock (queued, its re-check failed).
    fn asleep(&self) -> bool {
        asleep(&self.slot)
    }

    fn join(self) -> R {
        self.handle.join().unwrap()
    }
}

/// Whether the thread that published its number in `slot` sleeps for the lock.
fn asleep(slot: &AtomicU32) -> bool {
    let n = slot.load(Ordering::SeqCst);
    n != INVALID_PROC && Proc::by_number(n).wait_event() == WaitEvent::lwlock(Tranche::DEFAULT)
}

/// Spawns `f` on a model thread that first publishes its record number.
fn waiter<P: Policy, R: Send + 'static>(
    s: &Arc<Shared<AtomicLwLock<P>>>,
    f: impl FnOnce(&Shared<AtomicLwLock<P>>) -> R + Send + 'static,
) -> Waiter<R> {
    let slot = Arc::new(AtomicU32::new(INVALID_PROC));
    let (s2, slot2) = (s.clone(), slot.clone());
    let handle = thread::spawn(move || {
        slot2.store(Proc::current().number(), Ordering::SeqCst);
        f(&s2)
    });
    Waiter { handle, slot }
}

/// Inside an exclusive section: the word holds `EXCLUSIVE` and nothing else (no shared unit, no
/// `UPGRADABLE`, no `HANDOFF`: a granted head writer's handoff is cleared by the grant).
fn assert_exclusive_hold<P: Policy>(lock: &AtomicLwLock<P>) {
    let w = lock.state();
    assert_eq!(
        w & (LOCK_MASK | UPGRADABLE),
        VAL_EXCLUSIVE,
        "grant accounting: a writer's hold is not the word's ({w:#x})"
    );
    assert_eq!(w & HANDOFF, 0, "a granted writer left HANDOFF set ({w:#x})");
}

/// Inside a shared section: no `EXCLUSIVE`, and between one and `units` shared units. A reader
/// inside holds one; a reader still in its acquire may hold two for a moment (its re-check after
/// queueing succeeded just after a fair release granted it one: it gives the second back,
/// invariant 8), so with `n` readers `units` is `2n - 1`.
fn assert_shared_hold<P: Policy>(lock: &AtomicLwLock<P>, units: u32) {
    let w = lock.state();
    assert_eq!(
        w & VAL_EXCLUSIVE,
        0,
        "a reader inside beside a writer ({w:#x})"
    );
    let n = w & SHARED_MASK;
    assert!(
        (1..=units).contains(&n),
        "grant accounting: {n} shared units in the word with a reader inside ({w:#x})"
    );
}

/// One exclusive section that checks the word: increments the pair, returns its value before.
fn write_checked<P: Policy>(s: &Shared<AtomicLwLock<P>>) -> u64 {
    s.lock.acquire(Mode::Exclusive);
    assert_exclusive_hold(&s.lock);
    // SAFETY: held exclusively.
    let before = unsafe { s.data.read(|d| d.0) };
    s.bump();
    // SAFETY: held exclusively, taken above.
    unsafe { s.lock.release(Mode::Exclusive) };
    before
}

/// One shared section that checks the word (at most `units` shared units, see
/// [`assert_shared_hold`]): returns the pair's value.
fn read_checked<P: Policy>(s: &Shared<AtomicLwLock<P>>, units: u32) -> u64 {
    s.lock.acquire(Mode::Shared);
    assert_shared_hold(&s.lock, units);
    // SAFETY: held shared.
    let (a, b) = unsafe { s.data.read(|d| *d) };
    // SAFETY: held shared, taken above.
    unsafe { s.lock.release(Mode::Shared) };
    assert_eq!(a, b, "a reader saw a half-applied update");
    a
}

/// One upgradable section that checks the word (`UPGRADABLE` and its unit are in it): returns
/// the pair's value.
fn read_upgradable_checked<P: Policy>(s: &Shared<AtomicLwLock<P>>, units: u32) -> u64 {
    s.lock.acquire_upgradable();
    let w = s.lock.state();
    assert_ne!(
        w & UPGRADABLE,
        0,
        "grant accounting: an upgradable holder without UPGRADABLE in the word ({w:#x})"
    );
    assert_shared_hold(&s.lock, units);
    // SAFETY: an upgradable read is a shared hold.
    let (a, b) = unsafe { s.data.read(|d| *d) };
    // SAFETY: held upgradable, taken above.
    unsafe { s.lock.release_upgradable() };
    assert_eq!(a, b, "an upgradable reader saw a half-applied update");
    a
}

// ---- fair unlock of an exclusive hold ----------------------------------------------------------

/// A writer and a reader queue behind an exclusive holder, in either order; its fair release
/// hands the lock to the head (the writer alone, or the reader, the writer staying queued): the
/// grantee sees the holder's update and finds exactly its hold in the word, and the other is
/// woken by the grantee's release.
fn exclusive_writer_reader() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let w = waiter(&s, write_checked);
    let r = waiter(&s, |s| read_checked(s, 1));
    s.bump();
    await_waiters(&s.lock, || w.asleep() && r.asleep());
    // SAFETY: held exclusively.
    unsafe { s.lock.release_fair(Mode::Exclusive) };
    assert_eq!(w.join(), 1, "the writer did not see the holder's update");
    let seen = r.join();
    assert!(seen == 1 || seen == 2, "the reader saw {seen}");
    assert_eq!(s.value(), 2);
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock of an exclusive hold, a writer and a reader queued: the head gets it, accounted.
    fair_exclusive_writer_reader, threads: 3, bound: Some(1), exclusive_writer_reader
}

/// A reader queues behind an exclusive holder; a second reader may queue too, or come after the
/// grant. A newcomer whose attempt reads the word with the grant
/// in it joins the granted reader: only the Release half of the grant's CAS orders the holder's
/// update before its read.
fn exclusive_to_readers_newcomer() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    // Two readers: at most three units (see `assert_shared_hold`).
    let r = waiter(&s, |s| read_checked(s, 3));
    let n = waiter(&s, |s| read_checked(s, 3));
    s.bump();
    await_waiters(&s.lock, || r.asleep());
    // SAFETY: held exclusively.
    unsafe { s.lock.release_fair(Mode::Exclusive) };
    assert_eq!(
        r.join(),
        1,
        "the granted reader did not see the holder's update"
    );
    assert_eq!(n.join(), 1, "the newcomer did not see the holder's update");
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock to a queued reader: a newcomer reader joining the grant sees the holder's section.
    fair_exclusive_reader_newcomer, threads: 3, bound: Some(1), exclusive_to_readers_newcomer
}

/// A writer queues behind an exclusive holder; a newcomer writer arrives once it sleeps, before
/// or during the release. The
/// fair release hands the lock to the queued writer: the newcomer never gets in first (lock_api's
/// `RawMutexFair::unlock_fair` is this release).
fn exclusive_no_barging() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let w = waiter(&s, write_checked);
    s.bump();
    await_waiters(&s.lock, || w.asleep());
    // The newcomer starts now (its spawn orders it after our update, which it does not need to
    // be: only the order of the sections is checked here).
    let n = waiter(&s, write_checked);
    // SAFETY: held exclusively.
    unsafe { s.lock.release_fair(Mode::Exclusive) };
    assert_eq!(
        w.join(),
        1,
        "a newcomer barged in between the fair release and the grant"
    );
    assert_eq!(n.join(), 2);
    assert_eq!(s.value(), 3);
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock with a writer queued: a newcomer writer never gets in before the grantee.
    fair_exclusive_no_barging, threads: 3, bound: Some(2), exclusive_no_barging
}

/// The grantee has a foreign post on its semaphore (a wakeup meant for another protocol), so its
/// first wait returns at once and it looks at NOT_WAITING while the releaser sets its flags:
/// seeing NOT_WAITING, it must see `lw_granted` too (else it competes for the lock it already
/// holds, and sleeps for ever). Every post is accounted for at the end.
fn grant_with_foreign_post() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let w = waiter(&s, |s| {
        Proc::current().sem().unlock(); // the foreign post
        write_checked(s)
    });
    s.bump();
    await_waiters(&s.lock, || w.asleep());
    // SAFETY: held exclusively.
    unsafe { s.lock.release_fair(Mode::Exclusive) };
    let number = w.slot.load(Ordering::SeqCst);
    assert_eq!(w.join(), 1, "the grantee did not see the holder's update");
    assert_eq!(
        Proc::by_number(number).sem().count(),
        1,
        "a post was lost or invented (only the foreign one stays)"
    );
    assert_eq!(s.value(), 2);
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock to a grantee woken early by a foreign post: it sees lw_granted with NOT_WAITING.
    fair_grant_foreign_post, threads: 2, bound: Some(4), grant_with_foreign_post
}

/// A timed writer queues behind an exclusive holder; its deadline (under loom: its first sleep)
/// races the fair release that grants it the lock. Granted or timed out, never both: a granted
/// waiter whose deadline passed finds itself detached, takes the post and holds the lock; a
/// timed-out one unlinked itself first, so the release found nobody to hand the lock to. No post
/// is left behind, and the lock ends free.
fn grant_races_timeout() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let done = Arc::new(AtomicU32::new(0));
    let done2 = done.clone();
    let w = waiter(&s, move |s| {
        let deadline = lwlock::sync::deadline_after(std::time::Duration::from_secs(1));
        let got = s.lock.acquire_until(Mode::Exclusive, deadline);
        let seen = got.then(|| {
            assert_exclusive_hold(&s.lock);
            // SAFETY: held exclusively.
            let seen = unsafe { s.data.read(|d| d.0) };
            s.bump();
            // SAFETY: held exclusively, taken above.
            unsafe { s.lock.release(Mode::Exclusive) };
            seen
        });
        done2.store(1, Ordering::SeqCst);
        seen
    });
    s.bump();
    // Release once the waiter sleeps (or already gave up): the grant and the deadline race.
    await_model(|| w.asleep() || done.load(Ordering::SeqCst) == 1);
    // SAFETY: held exclusively.
    unsafe { s.lock.release_fair(Mode::Exclusive) };
    let number = w.slot.load(Ordering::SeqCst);
    let seen = w.join();
    assert_eq!(
        Proc::by_number(number).sem().count(),
        0,
        "a post was left behind (granted and timed out)"
    );
    if let Some(seen) = seen {
        assert_eq!(seen, 1, "the timed grantee did not see the holder's update");
    }
    assert_eq!(s.value(), 1 + seen.is_some() as u64);
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock racing a timed writer's deadline: granted or timed out, never both, no post left.
    fair_grant_races_timeout, threads: 2, bound: Some(3), grant_races_timeout
}

// ---- fair unlock of a shared hold ---------------------------------------------------------------

/// A reader holds the lock beside us and leaves at any moment; a writer queues. If our fair
/// release is the last, it hands the lock to the writer: the writer's update must come after
/// the other reader's read, which the grant's CAS reaches only by its Acquire half (the reader's
/// Release `fetch_sub` precedes it).
fn shared_last_reader() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Shared);
    let r = waiter(&s, |s| read_checked(s, 2));
    let w = waiter(&s, write_checked);
    await_waiters(&s.lock, || w.asleep());
    // SAFETY: held shared.
    let mine = unsafe { s.data.read(|d| *d) };
    // SAFETY: held shared.
    unsafe { s.lock.release_fair(Mode::Shared) };
    assert_eq!(mine, (0, 0));
    assert_eq!(w.join(), 0, "the writer went before the shared holder");
    assert!(r.join() <= 1);
    assert_eq!(s.value(), 1);
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock of the last shared hold: the granted writer comes after the reader that left first.
    fair_shared_last_reader, threads: 3, bound: Some(1), shared_last_reader
}

/// Under `TaskFair` a writer queues behind our hold (shared or upgradable) and takes `HANDOFF`,
/// so a reader that comes after it queues too. The fair release hands the lock to the writer
/// alone (its hold exactly, `HANDOFF` cleared for it), and the reader follows it.
fn taskfair_writer_reader(upgradable: bool) {
    let s = Shared::<RawTaskFairLwLock>::new();
    if upgradable {
        s.lock.acquire_upgradable();
    } else {
        s.lock.acquire(Mode::Shared);
    }
    let w = waiter(&s, write_checked);
    await_model(|| w.asleep());
    // The reader starts once the writer sleeps (queued, owning HANDOFF).
    let r = waiter(&s, |s| read_checked(s, 1));
    await_waiters(&s.lock, || r.asleep());
    if upgradable {
        // SAFETY: held upgradable.
        unsafe { s.lock.release_upgradable_fair() };
    } else {
        // SAFETY: held shared.
        unsafe { s.lock.release_fair(Mode::Shared) };
    }
    assert_eq!(w.join(), 0);
    assert_eq!(r.join(), 1, "the queued reader overtook the granted writer");
    s.assert_quiescent();
}

models::loom_model! {
    /// Task-fair, fair unlock of a shared hold: the handoff writer is granted alone, then the reader.
    fair_shared_taskfair_writer_reader, threads: 3, bound: Some(2), || taskfair_writer_reader(false)
}

// ---- fair unlock of an upgradable hold ----------------------------------------------------------

models::loom_model! {
    /// Task-fair, fair unlock of an upgradable hold: the handoff writer is granted alone, then the reader.
    fair_upgradable_taskfair_writer_reader, threads: 3, bound: Some(2), || taskfair_writer_reader(true)
}

/// A writer and an upgradable reader (the reader that queues behind an upgradable hold under
/// PostgreSQL's barging policy; plain readers get in beside it) queue behind our upgradable
/// hold, in either order. Its fair release hands the lock to the head: the writer alone, or the
/// upgradable waiter with its unit and `UPGRADABLE` (the writer staying queued).
fn upgradable_writer_upgradable() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire_upgradable();
    let w = waiter(&s, write_checked);
    let u = waiter(&s, |s| read_upgradable_checked(s, 1));
    await_waiters(&s.lock, || w.asleep() && u.asleep());
    // SAFETY: held upgradable.
    unsafe { s.lock.release_upgradable_fair() };
    assert_eq!(w.join(), 0);
    assert!(u.join() <= 1);
    assert_eq!(s.value(), 1);
    s.assert_quiescent();
}

models::loom_model! {
    /// Fair unlock of an upgradable hold, a writer and an upgradable waiter queued: the head gets it.
    fair_upgradable_writer_upgradable, threads: 3, bound: Some(1), upgradable_writer_upgradable
}

// ---- bump ---------------------------------------------------------------------------------------

/// `bump` (lock_api's `bump_exclusive`, `RawMutexFair::bump`) with a writer queued: the writer
/// gets the lock before we have it again.
fn bump_exclusive_waiter() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire(Mode::Exclusive);
    let w = waiter(&s, write_checked);
    s.bump();
    await_waiters(&s.lock, || w.asleep());
    // SAFETY: held exclusively.
    unsafe { s.lock.bump(Mode::Exclusive) };
    assert_exclusive_hold(&s.lock);
    // SAFETY: held exclusively again.
    let seen = unsafe { s.data.read(|d| d.0) };
    assert_eq!(seen, 2, "bump did not let the queued writer in");
    // SAFETY: held exclusively.
    unsafe { s.lock.release(Mode::Exclusive) };
    assert_eq!(w.join(), 1);
    s.assert_quiescent();
}

models::loom_model! {
    /// bump with a writer queued: the writer runs before the bumping thread has the lock again.
    bump_with_waiter, threads: 2, bound: Some(2), bump_exclusive_waiter
}

/// `bump_upgradable` with a writer queued behind the upgradable hold: the writer runs in between.
fn bump_upgradable_waiter() {
    let s = Shared::<RawAtomicLwLock>::new();
    s.lock.acquire_upgradable();
    let w = waiter(&s, write_checked);
    await_waiters(&s.lock, || w.asleep());
    // SAFETY: held upgradable.
    unsafe { s.lock.bump_upgradable() };
    assert_ne!(s.lock.state() & UPGRADABLE, 0);
    // SAFETY: an upgradable read is a shared hold.
    let seen = unsafe { s.data.read(|d| d.0) };
    assert_eq!(seen, 1, "bump_upgradable did not let the queued writer in");
    // SAFETY: held upgradable.
    unsafe { s.lock.release_upgradable() };
    assert_eq!(w.join(), 0);
    s.assert_quiescent();
}

models::loom_model! {
    /// bump_upgradable with a writer queued: the writer runs before the upgradable hold is back.
    bump_upgradable_with_waiter, threads: 2, bound: Some(2), bump_upgradable_waiter
}

#[cfg(lwlock_mutant = "runtime")]
mod mutants {
    use models::mutants::{expect_caught, Failure};
    use std::time::Duration;

    const T: Duration = Duration::from_secs(120);

    /// A fair release whose CAS drops its Release half: a reader that joins the granted reader
    /// through the word is not ordered after the holder's update.
    #[test]
    fn mutant_fair_cas_acquire_only() {
        expect_caught(
            "fair_exclusive_reader_newcomer",
            "fair_cas_acquire_only",
            Failure::Race,
            T,
        );
    }

    /// A fair release whose CAS drops its Acquire half: the granted writer is not ordered after
    /// the reader that left just before.
    #[test]
    fn mutant_fair_cas_release_only() {
        expect_caught(
            "fair_shared_last_reader",
            "fair_cas_release_only",
            Failure::Race,
            T,
        );
    }

    /// NOT_WAITING published before `lw_granted`: a grantee woken by a foreign post competes for
    /// the lock it holds and sleeps for ever.
    #[test]
    fn mutant_fair_granted_after_wakeup() {
        expect_caught(
            "fair_grant_foreign_post",
            "fair_granted_after_wakeup",
            Failure::Deadlock,
            T,
        );
    }

    /// One shared hold fewer in the word than readers granted.
    #[test]
    fn mutant_fair_grant_shared_short() {
        expect_caught(
            "fair_exclusive_writer_reader",
            "fair_grant_shared_short",
            Failure::Assertion("grant accounting"),
            T,
        );
    }

    /// A timed-out waiter that unlinks itself without asking whether a waker chose it (the timed
    /// acquire's mutant, listed with `loom_dropin::timeout_races_wakeup`): here the fair release
    /// had already granted it the lock, which nobody then holds or releases.
    #[test]
    fn mutant_timeout_unconditional_dequeue_granted() {
        expect_caught(
            "fair_grant_races_timeout",
            "timeout_unconditional_dequeue",
            Failure::Assertion("a post was left behind"),
            T,
        );
    }

    /// The upgradable grantee gets its unit but not `UPGRADABLE`.
    #[test]
    fn mutant_fair_grant_no_upgradable_bit() {
        expect_caught(
            "fair_upgradable_writer_upgradable",
            "fair_grant_no_upgradable_bit",
            Failure::Assertion("grant accounting"),
            T,
        );
    }

    /// The granted head writer keeps `HANDOFF`.
    #[test]
    fn mutant_fair_grant_keeps_handoff() {
        expect_caught(
            "fair_shared_taskfair_writer_reader",
            "fair_grant_keeps_handoff",
            Failure::Assertion("left HANDOFF set"),
            T,
        );
    }

    /// A fair release that is an ordinary one: a newcomer barges in before the woken writer.
    #[test]
    fn mutant_fair_unlock_not_fair() {
        expect_caught(
            "fair_exclusive_no_barging",
            "fair_unlock_not_fair",
            Failure::Assertion("barged in"),
            T,
        );
    }

    /// A bump that releases ordinarily takes the lock back before the woken writer.
    #[test]
    fn mutant_bump_not_fair() {
        expect_caught(
            "bump_with_waiter",
            "bump_not_fair",
            Failure::Assertion("did not let the queued writer in"),
            T,
        );
    }
}
