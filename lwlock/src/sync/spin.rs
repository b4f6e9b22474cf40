//! Spin waits that a model checker can finish: the release epoch (loom) and the model spin
//! limit (loom and shuttle). Every spin loop of the project is one statement in every build
//! ([`SpinEpoch::wait`], [`release_word`], [`spin_released`], [`spin_limit`]); only what the
//! statement does differs under the models. Mirrors `S_UNLOCK` and `SPIN_DELAY` (`s_lock.h`) as
//! the spin loops of `s_lock.c` and `lwlock.c` use them.
//!
//! # The release epoch (loom)
//! loom explores every choice at every yield, so two threads spinning on a word held by a third
//! may yield to each other forever (an unfair schedule loom cannot rule out), and the model
//! never ends. Under loom a spin wait therefore blocks instead: every release of a spinning word
//! (the TAS spinlock, the atomic LWLock's wait-list bit) bumps one per-execution futex counter,
//! and a failed probe sleeps until the counter moved past the value read *before* that probe.
//! That loses no behaviour of the lock (the word cannot become free without a release) and no
//! wakeup (a release after the read changes the counter), and it turns a spinner that is never
//! released into a reported deadlock.

#[cfg(not(loom))]
use super::spin_loop;
#[cfg(loom)]
use super::Futex;
use super::{AtomicBool, Ordering};

/// The release epoch's futex, one per loom execution.
#[cfg(loom)]
fn release_epoch() -> &'static Futex {
    loom::lazy_static! { static ref EPOCH: Futex = Futex::new(0); }
    &EPOCH
}

/// The release epoch, read before probing a spinning word (loom only).
#[cfg(loom)]
pub fn spin_epoch() -> u32 {
    release_epoch().word.load(Ordering::SeqCst)
}

/// After a failed probe: sleeps until a release happened since `*seen` was read, then reads the
/// epoch again for the next probe (loom only).
#[cfg(loom)]
pub fn spin_wait(seen: &mut u32) {
    let epoch = release_epoch();
    epoch.wait(*seen);
    *seen = epoch.word.load(Ordering::SeqCst);
}

/// Called after every release of a spinning word: bumps the epoch and wakes the spinners
/// (loom only).
#[cfg(loom)]
pub fn spin_released() {
    let epoch = release_epoch();
    epoch.word.fetch_add(1, Ordering::SeqCst);
    epoch.wake_all();
}

/// No-op outside loom: the release epoch exists only there (`spin_epoch` under loom).
/// Callers call it unconditionally after releasing a spinning word, so that the release
/// statement itself is the same in every build.
#[cfg(not(loom))]
#[inline(always)]
pub fn spin_released() {}

/// The state of one spin wait between its probes: under loom the release epoch read before the
/// probe (`spin_wait`), zero-sized in every other build. One type, so that a spin loop is one
/// statement in every build: `epoch.wait()` after each failed probe.
#[derive(Debug, Clone, Copy)]
pub struct SpinEpoch {
    #[cfg(loom)]
    seen: u32,
}

impl SpinEpoch {
    /// Starts a spin wait (under loom: reads the epoch before the first probe).
    #[inline(always)]
    pub fn start() -> Self {
        SpinEpoch {
            #[cfg(loom)]
            seen: spin_epoch(),
        }
    }

    /// After a failed probe: one spin-wait hint ([`spin_loop`](super::spin_loop)); under loom,
    /// blocks until a release of some spinning word happened since the epoch was read (see
    /// `spin_wait`).
    #[inline(always)]
    pub fn wait(&mut self) {
        #[cfg(loom)]
        spin_wait(&mut self.seen);
        #[cfg(not(loom))]
        spin_loop();
    }
}

/// Releases a spinning word (`S_UNLOCK`): `word.store(value, order)`, and under loom
/// `word.swap(value, order)` followed by [`spin_released`]. The ordering is the caller's one
/// expression in every build, so the models check the statement that ships (a weakened `order`
/// is a weakened loom release too).
///
/// Why an RMW under loom: loom orders a plain store only by happens-before against other threads'
/// RMWs, so a spinner's failed TAS (which stores `true` again) may be placed after the unlock
/// forever and the model never progresses. With every access an RMW the word has one total
/// order, as on real hardware.
#[inline(always)]
pub fn release_word(word: &AtomicBool, value: bool, order: Ordering) {
    #[cfg(not(loom))]
    word.store(value, order);
    #[cfg(loom)]
    {
        word.swap(value, order);
        spin_released();
    }
}

/// How many times a spin-then-sleep wait (a FlexLock group member) checks before it sleeps:
/// `n`, the production constant, in every build; under loom or shuttle at most the limit the
/// running model chose with `set_model_spin_limit` (loom and shuttle only). loom explores a spin
/// loop of `n` yields only within its preemption bound, so with the production 200 a member never
/// gets to sleep while its server is busy, and the sleep/post path would go unexplored.
#[inline(always)]
pub fn spin_limit(n: u32) -> u32 {
    #[cfg(any(loom, shuttle))]
    return MODEL_SPIN_LIMIT.with(|l| l.get()).map_or(n, |m| m.min(n));
    #[cfg(not(any(loom, shuttle)))]
    n
}

#[cfg(any(loom, shuttle))]
std::thread_local! {
    /// The running model's spin limit. A std thread-local, not a model one: loom and shuttle run
    /// every model thread on the test's own OS thread, so all of them see the model's choice,
    /// and tests on other OS threads are not affected.
    static MODEL_SPIN_LIMIT: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Sets the spin limit of [`spin_limit`] for models run from this OS thread (`None`: the
/// production count). loom and shuttle only.
#[cfg(any(loom, shuttle))]
pub fn set_model_spin_limit(limit: Option<u32>) {
    MODEL_SPIN_LIMIT.with(|l| l.set(limit));
}

/// Yields the CPU (`sched_yield`) and says whether the yield was *empty*: it came back within
/// `threshold_ns` on the [`clock_nanos`](super::clock_nanos) timeline, so nothing else was
/// runnable on this CPU and a holder of what the caller waits for is running on another one (or
/// not at all): further yields would only busy-wait. A spin that wants to stop then can. The
/// clock is read around the yield only, so a caller that does not use the rule pays nothing.
///
/// Under loom and shuttle time is not modelled: the answer is the model's choice
/// (`set_model_empty_yield`; "not empty" unless set), and a model that sets it explores the early
/// exit on every yield. Under lwsim the clock is the thread's virtual time, so the simulated OS
/// decides.
#[inline]
pub fn yield_was_empty(threshold_ns: u64) -> bool {
    #[cfg(any(loom, shuttle))]
    return {
        let _ = threshold_ns;
        super::thread::yield_now();
        MODEL_EMPTY_YIELD.with(|e| e.get())
    };
    #[cfg(not(any(loom, shuttle)))]
    return {
        let t0 = super::clock_nanos();
        super::thread::yield_now();
        super::clock_nanos().saturating_sub(t0) < threshold_ns
    };
}

#[cfg(any(loom, shuttle))]
std::thread_local! {
    /// The running model's answer for [`yield_was_empty`] (a std thread-local, as
    /// [`MODEL_SPIN_LIMIT`]).
    static MODEL_EMPTY_YIELD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Sets what [`yield_was_empty`] answers for models run from this OS thread (`false`, the
/// default: never empty; `true`: every yield empty). loom and shuttle only.
#[cfg(any(loom, shuttle))]
pub fn set_model_empty_yield(empty: bool) {
    MODEL_EMPTY_YIELD.with(|e| e.set(empty));
}
