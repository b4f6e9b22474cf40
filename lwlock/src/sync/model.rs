//! What loom and shuttle share: futexes emulated on the checker's thread parking, and time
//! replaced by interleavings (a sleep or a timed wait is a yield), or, for a model that asks for
//! it ([`model_clock_start`]), a manual clock that its threads move.
//!
//! Mirrors the kernel futex contract (FUTEX_WAIT/FUTEX_WAKE) that the semaphores of
//! `posix_sema.c` rest on, and `pg_usleep` as a yield.
//!
//! # The futex emulation, and the ordering it gives
//!
//! A model backend must not add ordering the real primitive does not give: a lock whose waiter
//! relies on the futex for an acquire it never asked for would pass every model and fail on a
//! weakly ordered machine. So the emulation gives only what Linux's futex gives, and of that only
//! the part the kernel's structure guarantees whatever its hashing, timing or configuration
//! (`kernel/futex/waitwake.c`, `kernel/sched/core.c`):
//!
//! * **The compare orders nothing.** FUTEX_WAIT reads the word with `get_user` (a plain load)
//!   under the hash bucket's spinlock. The lock's acquire would order the load after a waker
//!   that held the same bucket lock before, but a waker takes that lock only if it sees waiters
//!   on the bucket (`futex_hb_waiters_pending`), so nothing is promised: a wait that returns
//!   EAGAIN (the word changed) returns with no acquire of the store it saw. Here the compare is
//!   an atomic read with [`Ordering::Relaxed`], and no checker mutex is taken around it.
//! * **A wake that finds no waiter orders nothing.** `futex_wake` returns at once when
//!   `futex_hb_waiters_pending` is false, without the bucket lock. Here such a wake touches no
//!   checker object that creates an edge.
//! * **A wake orders what its waker did before it with the waiter it wakes, and with no one
//!   else.** `futex_wake` unqueues the waiter (`futex_wake_mark`: `__futex_unqueue`,
//!   `smp_store_release(&q->lock_ptr, NULL)`, `wake_q_add_safe`) and, after dropping the bucket lock, `wake_up_q`
//!   calls `try_to_wake_up` on it: `raw_spin_lock_irqsave(&p->pi_lock)` then
//!   `smp_mb__after_spinlock()`, and the sleeper runs again only after the waker's
//!   `try_to_wake_up` through the run-queue lock (or the `p->on_cpu` release/acquire pair) —
//!   the "Notes on Program-Order guarantees on SMP systems" of `kernel/sched/core.c`, which
//!   promise that a woken task observes everything that happened before its wakeup. If the wake
//!   comes before the waiter has called `schedule()`, `ttwu_runnable` sets it running under the
//!   same run-queue lock that its `__schedule()` then takes, which orders the same way. Here:
//!   the waker's `unpark` of that one waiter, which joins the waker's causality into the
//!   waiter's (loom), and nothing for the waiters it does not wake.
//!
//! What the emulation no longer gives (it did so until the futex was emulated with a checker
//! `Mutex` + `Condvar` per word, whose compare was a SeqCst load under that mutex): an acquire
//! of the compared value (a SeqCst load is an acquire load), and an edge from every wake to every
//! later wait through the mutex (its unlock by the waker, its lock by the waiter), also from
//! wakes that found no waiter. Together they made every "the word changed, the wait returned,
//! the waiter reloads the word" path acquire, so a waiter's reload weakened to Relaxed (the
//! upgrader in `atomic_state/upgrade.rs`) was invisible to every model.
//!
//! The kernel's "compare and sleep atomically with respect to wakers" is kept, so that a lost
//! wakeup is reported as a deadlock rather than a livelock: in the kernel, the waiter's
//! `futex_hb_waiters_inc` + `smp_mb()` (A) pairs with the waker's `smp_mb()` in
//! `futex_hb_waiters_pending` (B), so either the compare sees the waker's store or the waker sees
//! the waiter. The checkers run one thread at a time and switch only at their own operations, so
//! the emulation's compare, its registration on the sleepers' list (host data, not a checker
//! object: it orders nothing) and its park form one step. Under loom a wake's read of the list
//! and its unparks are one step too; shuttle's `unpark` begins with a switch, so there another
//! thread may run between the wake's removal of a sleeper from the list and its unpark. That
//! loses nothing: the sleeper is off the list, so it either still sleeps (the unpark follows) or
//! returns from a spurious park, sees it is off the list and leaves, and the late unpark leaves
//! a token that its next park absorbs.
//!
//! Residuals, each a strengthening the checker's primitives make unavoidable, none an edge:
//! * The compare reads the *newest* value of the word (a `compare_exchange` that fails, Relaxed,
//!   which loom resolves against the newest store in modification order), where a plain Relaxed
//!   load could also return an older one. A plain load cannot be used: it could read a value
//!   older than a store whose wake already ran and found no sleeper, and sleep forever, which
//!   the barrier pairing (A)/(B) rules out in the kernel and nothing but an edge could rule out
//!   in the checker. An older value would only make the waiter sleep where the kernel's could
//!   (then woken by the wake that follows the store); what is lost is that choice in executions
//!   that have no sequentially consistent schedule. The failing exchange compares with
//!   `!expected`; if the word holds exactly that value the exchange succeeds and stores it back
//!   unchanged (a Relaxed RMW: in loom it inherits the release sequence of the store it read, so
//!   it adds no edge either; no word of this workspace is compared against a complement it holds).
//! * A wake reads the word the same way (newest value, Relaxed, comparing with [`WAKE_PROBE`],
//!   no word of this workspace holds it): loom's partial-order reduction explores two steps in
//!   both orders only if they touch a common checker object, and the list is invisible to it.
//!   The read makes a wake and a compare of the same word dependent. Its one effect on the
//!   waker: its own later loads of the word cannot return a value older than the newest at the
//!   wake (the kernel's FUTEX_WAKE does not read the word).
//! * Waiter → waker: the kernel's bucket lock, when the waker takes it, also orders the waiter's
//!   compare before the waker; the emulation gives no edge in that direction (weaker, not
//!   stronger).
//! * A kernel waiter whose sleep ends for another reason (a signal, a timeout) just as a wake
//!   marks it returns 0 after a `READ_ONCE(q->lock_ptr)`, which is not an acquire; the
//!   emulation's waits have no signals, and its timed waits never sleep (see
//!   [`wait_word_until`]), so every wake that reaches a sleeper here orders.
//! * shuttle has no weak memory (its atomics are all SeqCst), so under shuttle only the
//!   interleavings differ from the old emulation, never the values a load may return.
//!
//! Spurious returns from `wait` are allowed (shuttle's `park` may return spuriously; the waiter
//! parks again while it is still on the list), so callers re-check in a loop.

#[cfg(loom)]
use loom as checker;
#[cfg(shuttle)]
use shuttle as checker;

use checker::sync::atomic::{AtomicU32, Ordering};
use checker::thread;

/// A spin-wait hint: a yield to the model's scheduler, so that spin loops are visible to the
/// model (loom's scheduler is deliberately unfair and would otherwise report "exceeded maximum
/// number of branches").
#[inline(always)]
pub fn spin_loop() {
    thread::yield_now();
}

/// Sleep for `micros` microseconds (`pg_usleep`): a yield, since time does not exist under the
/// models, only interleavings.
pub fn sleep_micros(micros: u64) {
    let _ = micros;
    thread::yield_now();
}

/// Wait idle for `nanos` (a backend waiting on its socket): a yield, as `sleep_micros`.
pub fn idle_nanos(nanos: u64) {
    let _ = nanos;
    thread::yield_now();
}

/// The value a wake compares the word with, so that its read of the word (a failing
/// `compare_exchange`) does not store. No futex word of this workspace holds it: a lock state
/// word has unused bits, a semaphore count that high aborts, a condvar sequence would take 2^32
/// notifications. Were it held, the exchange would store the same value back (no edge).
const WAKE_PROBE: u32 = u32::MAX;

/// The newest value of `word`, read without ordering anything: a `compare_exchange` with
/// comparand `probe` that fails (Relaxed), so it stores nothing unless the word holds `probe`
/// (then it stores `probe` back, a Relaxed RMW that inherits the release sequence it read).
/// Under loom an RMW, failing or not, reads the newest store in the word's modification order;
/// a plain load may read an older one (see the module docs for why the compare must not).
#[inline]
fn read_newest(word: &AtomicU32, probe: u32) -> u32 {
    match word.compare_exchange(probe, probe, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(v) | Err(v) => v,
    }
}

/// One thread asleep in an emulated FUTEX_WAIT.
struct Sleeper {
    /// The word's address (the futex key).
    key: usize,
    /// The sleeper, for `unpark` and for finding itself on the list.
    thread: thread::Thread,
}

/// The sleepers of one execution, in arrival order (the kernel wakes waiters of equal priority
/// in FIFO order). Host data behind a host mutex, never held across a checker operation: the
/// checker does not see it, so it orders nothing (the checkers run one thread at a time, so the
/// mutex is never contended).
struct Sleepers(std::sync::Mutex<Vec<Sleeper>>);

impl Sleepers {
    fn with<R>(&self, f: impl FnOnce(&mut Vec<Sleeper>) -> R) -> R {
        let mut list = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut list)
    }
}

/// This execution's sleepers (a checker lazy static: one per execution, dropped at its end).
fn sleepers() -> &'static Sleepers {
    checker::lazy_static! {
        static ref SLEEPERS: Sleepers = Sleepers(std::sync::Mutex::new(Vec::new()));
    }
    &SLEEPERS
}

fn key_of(word: &AtomicU32) -> usize {
    word as *const AtomicU32 as usize
}

/// A 32-bit futex word: `wait` sleeps only while the word still equals `expected`; `wake_*`
/// wake sleepers. Spurious returns from `wait` are allowed, so callers re-check in a loop.
/// The calls are the address-keyed ones ([`wait_word`], [`wake_word`]) on `word`.
#[derive(Debug)]
pub struct Futex {
    /// The futex word itself. Callers change it before calling `wake_*`.
    pub word: AtomicU32,
}

impl Futex {
    /// A futex word holding `value`.
    #[cfg(loom)]
    pub fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
        }
    }
    /// A futex word holding `value`.
    #[cfg(shuttle)]
    pub const fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
        }
    }

    /// Sleeps while the word equals `expected` (FUTEX_WAIT). May return spuriously. Orders
    /// nothing unless a wake wakes it (see the module docs).
    #[inline]
    pub fn wait(&self, expected: u32) {
        wait_word(&self.word, expected);
    }

    /// Wakes one sleeper (FUTEX_WAKE 1).
    #[inline]
    pub fn wake_one(&self) {
        wake_word(&self.word, 1);
    }

    /// Wakes every sleeper (FUTEX_WAKE INT_MAX).
    #[inline]
    pub fn wake_all(&self) {
        wake_word(&self.word, usize::MAX);
    }

    /// Sleeps while the word equals `expected`, at most until `deadline`: time does not exist
    /// here, only interleavings, so a yield, then the deadline counts as passed (the earliest a
    /// timeout may fire) unless the word already changed. Returns `true` if the deadline has
    /// passed.
    pub fn wait_until_nanos(&self, expected: u32, deadline: u64) -> bool {
        wait_word_until(&self.word, expected, deadline)
    }
}

/// Sleeps while `word` equals `expected` (FUTEX_WAIT on the word's address). May return
/// spuriously. The compare orders nothing; a return because a wake woke this thread orders what
/// the waker did before its wake (see the module docs).
pub fn wait_word(word: &AtomicU32, expected: u32) {
    let key = key_of(word);
    let me = thread::current();
    let id = me.id();
    let list = sleepers();
    // One step with the registration and the park: no checker operation in between.
    if read_newest(word, !expected) != expected {
        return; // EAGAIN
    }
    list.with(|l| l.push(Sleeper { key, thread: me }));
    loop {
        thread::park();
        if !list.with(|l| l.iter().any(|s| s.thread.id() == id)) {
            return; // a wake took us off the list
        }
    }
}

/// Wakes up to `n` sleepers of `word`, oldest first (FUTEX_WAKE n). The caller changed the word
/// first. Each woken sleeper is ordered after everything the caller did before this call; a
/// wake that finds no sleeper orders nothing.
pub fn wake_word(word: &AtomicU32, n: usize) {
    let key = key_of(word);
    let list = sleepers();
    // The step's checker operation (see the module docs: it makes this wake and a compare of
    // the same word dependent for loom's partial-order reduction).
    let _ = read_newest(word, WAKE_PROBE);
    let woken: Vec<thread::Thread> = list.with(|l| {
        let mut woken = Vec::new();
        l.retain(|s| {
            if s.key == key && woken.len() < n {
                woken.push(s.thread.clone());
                false
            } else {
                true
            }
        });
        woken
    });
    for t in woken {
        t.unpark();
    }
}

/// Like [`wait_word`], at most until `deadline`: a yield and then "passed" unless the word
/// changed (as [`Futex::wait_until_nanos`]). Under a [`model_clock_start`] clock instead: the
/// word is compared first (a changed word returns at once, not passed), then the deadline passes
/// only once the model clock has reached it; before that the call returns early (not passed), as
/// a futex wait may, and the caller waits again. Never sleeps, so no wake reaches it and it
/// orders nothing through the word: its compares are the untimed wait's (newest value, Relaxed).
pub fn wait_word_until(word: &AtomicU32, expected: u32, deadline: u64) -> bool {
    if model_clock()
        .manual
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        if deadline >= MODEL_CLOCK_NEVER {
            // The clock never gets there: the untimed wait (it blocks until woken, instead of
            // returning after every yield; the same outcomes, far fewer interleavings).
            wait_word(word, expected);
            return false;
        }
        if read_newest(word, !expected) != expected {
            return false;
        }
        thread::yield_now();
        // Acquire: what happened before the clock reached the deadline (a notification before
        // the timeout) is visible to the caller's re-check. A kernel futex wait that times out
        // likewise returns ETIMEDOUT even if the word changed while it slept (when the wake went
        // to another sleeper).
        return model_clock().now.load(Ordering::Acquire) >= deadline;
    }
    let _ = deadline;
    thread::yield_now();
    read_newest(word, !expected) == expected
}

/// The clock of one model execution's timed waits (see [`model_clock_start`]).
struct ModelClock {
    /// Whether the execution switched to the manual clock (a plain flag, written before the
    /// model spawns its threads; not a checker object, so the default mode adds no operations
    /// for the checker to explore).
    manual: std::sync::atomic::AtomicBool,
    /// The model's "now", on the timeline of the deadlines the model passes (`wait_raw(.., Some(d))`).
    now: checker::sync::atomic::AtomicU64,
}

fn model_clock() -> &'static ModelClock {
    checker::lazy_static! {
        static ref CLOCK: ModelClock = ModelClock {
            manual: std::sync::atomic::AtomicBool::new(false),
            now: checker::sync::atomic::AtomicU64::new(0),
        };
    }
    &CLOCK
}

/// Switches this model execution's timed waits to a manual clock that starts at 0 and moves only
/// by [`advance_model_clock`]: a timed wait then times out only once a thread of the model has
/// moved the clock to its deadline, so a model can order an event before the timeout (by making
/// it happen-before the clock's advance). Without it (every model by default) time does not
/// exist and a deadline counts as passed after one yield. Call it at the start of the execution,
/// before spawning.
pub fn model_clock_start() {
    model_clock()
        .manual
        .store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A deadline the manual model clock never reaches ([`advance_model_clock`] refuses it): a
/// timed wait until it, or later, is the untimed wait. A model whose timed acquire must not time
/// out passes it (or a later one), and the acquire runs as it would with a deadline far away.
pub const MODEL_CLOCK_NEVER: u64 = 1 << 63;

/// Moves the manual model clock to `now` (Release: what the caller did before is visible to a
/// timed wait that sees the clock at or past its deadline).
///
/// # Panics
/// If `now` is [`MODEL_CLOCK_NEVER`] or later.
pub fn advance_model_clock(now: u64) {
    assert!(
        now < MODEL_CLOCK_NEVER,
        "the manual model clock never reaches MODEL_CLOCK_NEVER"
    );
    model_clock().now.store(now, Ordering::Release);
}

/// Wakes every sleeper of `word` (FUTEX_WAKE INT_MAX). The caller changed the word first.
pub fn wake_all_word(word: &AtomicU32) {
    wake_word(word, usize::MAX);
}
