//! The one place that names `std`, `loom` or `shuttle`.
//!
//! Every atomic, cell, spin hint, yield, sleep and futex call in the workspace goes through this
//! module, so that `RUSTFLAGS="--cfg loom"` or `--cfg shuttle` swaps the whole project onto a model
//! checker's types without touching a lock's code.
//!
//! * **std** (default): `std::sync::atomic`, `std::cell::UnsafeCell` wrapped to offer loom's
//!   `with`/`with_mut` API, `atomic_wait` futexes.
//! * **loom**: loom's atomics and `UnsafeCell` (so a missing ordering around protected data is
//!   reported as a race). loom has no futex: [`Futex`] is emulated with a loom `Mutex` + `Condvar`
//!   per futex word, with the kernel's "compare and sleep atomically with respect to wakers"
//!   semantics, so a lost wakeup is reported as a deadlock rather than a livelock.
//! * **shuttle**: shuttle's atomics (all SeqCst) and the same futex emulation.
//!
//! * **lwsim** (`--cfg lwsim`): `sync::lwsim` (`sync/lwsim.rs`), a many-core machine in software. The atomics are
//!   std's, wrapped so that every access is charged virtual time by a cache-coherence model and
//!   ordered by a smallest-virtual-clock-first scheduler on shuttle's executor; futexes, sleeps,
//!   spin hints, thread spawns and [`clock_nanos`] go to its OS model. See the module docs.
//!
//! Spin loops call [`spin_loop`], which yields to the model under loom/shuttle (loom's scheduler
//! is deliberately unfair and would otherwise report "exceeded maximum number of branches").
//!
//! [`touch`] charges plain (non-atomic) data a critical section reads or writes to the simulator;
//! it compiles to nothing in every other build.

#[cfg(not(any(loom, shuttle, lwsim)))]
pub use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

#[cfg(lwsim)]
pub mod lwsim;
#[cfg(lwsim)]
pub use lwsim::atomic::{fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8};
#[cfg(lwsim)]
pub use std::sync::atomic::Ordering;

#[cfg(loom)]
pub use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

#[cfg(shuttle)]
pub use shuttle::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicU8, Ordering,
};

/// A blocking mutex of the active backend. Only the wait-record table uses it (registration, once
/// per thread), never a lock's fast or slow path; under the models it must be the checker's, so
/// that registrations are ordered and a thread switch inside one cannot block the real thread.
#[cfg(loom)]
pub use loom::sync::Mutex;
#[cfg(lwsim)]
pub use lwsim::Mutex;
#[cfg(shuttle)]
pub use shuttle::sync::Mutex;
#[cfg(not(any(loom, shuttle, lwsim)))]
pub use std::sync::Mutex;

#[cfg(all(loom, shuttle))]
compile_error!("--cfg loom and --cfg shuttle are mutually exclusive");
#[cfg(all(lwsim, any(loom, shuttle)))]
compile_error!("--cfg lwsim excludes --cfg loom and --cfg shuttle");

/// Thread spawning and thread-locals of the active backend.
pub mod thread {
    #[cfg(lwsim)]
    pub use super::lwsim::thread::{spawn, yield_now};
    #[cfg(loom)]
    pub use loom::thread::{current, spawn, yield_now, JoinHandle};
    #[cfg(shuttle)]
    pub use shuttle::thread::{current, spawn, yield_now, JoinHandle};
    #[cfg(lwsim)]
    pub use shuttle::thread::{current, JoinHandle};
    #[cfg(not(any(loom, shuttle, lwsim)))]
    pub use std::thread::{current, spawn, yield_now, JoinHandle};
}

#[cfg(loom)]
pub use loom::thread_local as model_thread_local;
#[cfg(any(shuttle, lwsim))]
pub use shuttle::thread_local as model_thread_local;
#[cfg(not(any(loom, shuttle, lwsim)))]
pub use std::thread_local as model_thread_local;

/// A spin-wait hint: PAUSE on x86 (`SPIN_DELAY()` in `s_lock.h`); a yield to the scheduler under
/// loom and shuttle, so that spin loops are visible to the model; one PAUSE's virtual time under
/// lwsim.
#[inline(always)]
pub fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(shuttle)]
    shuttle::thread::yield_now();
    #[cfg(lwsim)]
    lwsim::pause();
    #[cfg(not(any(loom, shuttle, lwsim)))]
    std::hint::spin_loop();
}

/// Charges a plain (non-atomic) access of `len` bytes at `ptr` to the simulator: the protected
/// data a critical section reads (`write == false`) or writes. Compiles to nothing in every build
/// but `--cfg lwsim`, where each 64-byte line the range covers is one coherence access.
#[inline(always)]
pub fn touch<T: ?Sized>(ptr: *const T, len: usize, write: bool) {
    #[cfg(lwsim)]
    lwsim::touch(ptr as *const u8 as usize, len, write);
    #[cfg(not(lwsim))]
    let _ = (ptr, len, write);
}

/// A monotonic clock in nanoseconds: since the first call in this process (std, loom, shuttle),
/// or the calling thread's virtual time (lwsim).
pub fn clock_nanos() -> u64 {
    #[cfg(lwsim)]
    return lwsim::now_nanos();
    #[cfg(not(lwsim))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    }
}

/// Spin waits under loom: the *release epoch*.
///
/// loom explores every choice at every yield, so two threads spinning on a word held by a third
/// may yield to each other forever (an unfair schedule loom cannot rule out), and the model
/// never ends. Under loom a spin wait therefore blocks instead: every release of a spinning word
/// (the TAS spinlock, the atomic LWLock's wait-list bit) bumps one per-execution futex counter,
/// and a failed probe sleeps until the counter moved past the value read *before* that probe.
/// That loses no behaviour of the lock (the word cannot become free without a release) and no
/// wakeup (a release after the read changes the counter), and it turns a spinner that is never
/// released into a reported deadlock.
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

    /// After a failed probe: one spin-wait hint ([`spin_loop`]); under loom, blocks until a
    /// release of some spinning word happened since the epoch was read (see `spin_wait`).
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
/// running model chose with `set_model_spin_limit` (loom and shuttle only). loom explores a spin loop of `n` yields
/// only within its preemption bound, so with the production 200 a member never gets to sleep
/// while its server is busy, and the sleep/post path would go unexplored.
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

/// Read-only probes of lock-internal state for model assertions (loom and shuttle only): a
/// model may assert on what a wait record's owner cannot see from outside, such as whether a
/// record is still queued after a release that had to wake it.
#[cfg(any(loom, shuttle))]
pub mod probe {
    use crate::proc::{lw_waiting, Proc};

    /// Whether `p` is on a lock's wait list (`lwWaiting == LW_WS_WAITING`: queued and not yet
    /// taken off by a waker). A SeqCst load: a probe, ordering nothing for the lock.
    pub fn is_queued(p: &Proc) -> bool {
        p.lw_waiting.load(super::Ordering::SeqCst) == lw_waiting::WAITING
    }
}

/// Sleep for `micros` microseconds (`pg_usleep`). Under the models this is a yield: time does not
/// exist there, only interleavings.
pub fn sleep_micros(micros: u64) {
    #[cfg(any(loom, shuttle))]
    {
        let _ = micros;
        thread::yield_now();
    }
    #[cfg(lwsim)]
    lwsim::sleep_micros(micros);
    #[cfg(not(any(loom, shuttle, lwsim)))]
    std::thread::sleep(std::time::Duration::from_micros(micros));
}

/// An `UnsafeCell` with loom's closure API on every backend.
///
/// Under loom the accesses are tracked, so a lock whose acquire/release orderings do not order
/// the critical sections is reported as a data race on the protected value.
#[derive(Debug)]
pub struct UnsafeCell<T: ?Sized> {
    #[cfg(loom)]
    inner: loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))]
    inner: std::cell::UnsafeCell<T>,
}

impl<T> UnsafeCell<T> {
    /// Wraps `value`. `const` except under loom, whose cells are not.
    #[cfg(not(loom))]
    pub const fn new(value: T) -> Self {
        UnsafeCell {
            inner: std::cell::UnsafeCell::new(value),
        }
    }
    /// Wraps `value`.
    #[cfg(loom)]
    pub fn new(value: T) -> Self {
        UnsafeCell {
            inner: loom::cell::UnsafeCell::new(value),
        }
    }
    /// Consumes the cell, returning the value.
    pub fn into_inner(self) -> T {
        self.inner.into_inner()
    }
}

impl<T: ?Sized> UnsafeCell<T> {
    /// Runs `f` with a shared pointer to the value. The caller must ensure no concurrent writer.
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        #[cfg(loom)]
        return self.inner.with(f);
        #[cfg(not(loom))]
        f(self.inner.get())
    }
    /// Runs `f` with a unique pointer to the value. The caller must ensure exclusive access.
    #[inline(always)]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.inner.with_mut(f);
        #[cfg(not(loom))]
        f(self.inner.get())
    }
    /// A raw pointer to the value, for callers that hand out references (guards). Untracked
    /// under loom.
    #[cfg(not(loom))]
    #[inline(always)]
    pub fn get(&self) -> *mut T {
        self.inner.get()
    }
}

/// A 32-bit futex word: `wait` sleeps only while the word still equals `expected`; `wake_*`
/// wake sleepers. Spurious returns from `wait` are allowed, so callers re-check in a loop.
#[derive(Debug)]
pub struct Futex {
    /// The futex word itself. Callers change it before calling `wake_*`.
    pub word: AtomicU32,
    #[cfg(loom)]
    park: (loom::sync::Mutex<()>, loom::sync::Condvar),
    #[cfg(shuttle)]
    park: (shuttle::sync::Mutex<()>, shuttle::sync::Condvar),
}

impl Futex {
    /// A futex word holding `value`.
    #[cfg(not(any(loom, shuttle)))]
    pub const fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
        }
    }
    /// A futex word holding `value`.
    #[cfg(loom)]
    pub fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            park: (loom::sync::Mutex::new(()), loom::sync::Condvar::new()),
        }
    }
    /// A futex word holding `value`.
    #[cfg(shuttle)]
    pub const fn new(value: u32) -> Self {
        Futex {
            word: AtomicU32::new(value),
            park: (shuttle::sync::Mutex::new(()), shuttle::sync::Condvar::new()),
        }
    }

    /// Sleeps while the word equals `expected` (FUTEX_WAIT). May return spuriously.
    #[inline]
    pub fn wait(&self, expected: u32) {
        #[cfg(lwsim)]
        lwsim::futex_wait(&self.word, expected);
        #[cfg(not(any(loom, shuttle, lwsim)))]
        atomic_wait::wait(&self.word, expected);
        #[cfg(any(loom, shuttle))]
        {
            // The kernel compares and enqueues atomically with respect to FUTEX_WAKE; the shim
            // mutex gives the same guarantee: a waker changes the word and then takes the mutex,
            // so a waiter either sees the new value here or is already waiting on the condvar.
            let guard = self.park.0.lock().unwrap();
            if self.word.load(Ordering::SeqCst) == expected {
                drop(self.park.1.wait(guard).unwrap());
            }
        }
    }

    /// Wakes one sleeper (FUTEX_WAKE 1).
    #[inline]
    pub fn wake_one(&self) {
        #[cfg(lwsim)]
        lwsim::futex_wake(&self.word, 1);
        #[cfg(not(any(loom, shuttle, lwsim)))]
        atomic_wait::wake_one(&self.word);
        #[cfg(any(loom, shuttle))]
        {
            let _guard = self.park.0.lock().unwrap();
            self.park.1.notify_one();
        }
    }

    /// Wakes every sleeper (FUTEX_WAKE INT_MAX).
    #[inline]
    pub fn wake_all(&self) {
        #[cfg(lwsim)]
        lwsim::futex_wake(&self.word, u32::MAX);
        #[cfg(not(any(loom, shuttle, lwsim)))]
        atomic_wait::wake_all(&self.word);
        #[cfg(any(loom, shuttle))]
        {
            let _guard = self.park.0.lock().unwrap();
            self.park.1.notify_all();
        }
    }

    /// Sleeps while the word equals `expected`, at most until `deadline` on the [`clock_nanos`]
    /// timeline (FUTEX_WAIT with a timeout). Returns `true` if the deadline has passed, `false`
    /// if it returned before (woken, the word changed, or spuriously): callers re-check the word
    /// in a loop either way.
    ///
    /// * std on Linux: `FUTEX_WAIT_PRIVATE` with the remaining time as its relative timeout.
    /// * std elsewhere: sleep-polling the word in slices of at most 1 ms (no portable timed
    ///   futex wait exists; a wakeup is seen at the next slice).
    /// * lwsim: sleep-polling in virtual time (slices of at most 10 µs).
    /// * loom/shuttle: time does not exist there, only interleavings: a yield, then the deadline
    ///   counts as passed (the earliest a timeout may fire), unless the word already changed.
    pub fn wait_until_nanos(&self, expected: u32, deadline: u64) -> bool {
        #[cfg(any(loom, shuttle))]
        {
            let _ = deadline;
            thread::yield_now();
            self.word.load(Ordering::SeqCst) == expected
        }
        #[cfg(not(any(loom, shuttle)))]
        {
            let now = clock_nanos();
            if now >= deadline {
                return true;
            }
            let remaining = deadline - now;
            #[cfg(lwsim)]
            {
                if self.word.load(Ordering::Relaxed) == expected {
                    lwsim::sleep_micros((remaining / 1000).clamp(1, 10));
                }
            }
            #[cfg(all(not(lwsim), target_os = "linux"))]
            {
                let ts = libc::timespec {
                    tv_sec: (remaining / 1_000_000_000).min(i32::MAX as u64) as libc::time_t,
                    tv_nsec: (remaining % 1_000_000_000) as libc::c_long,
                };
                // SAFETY: FUTEX_WAIT reads the aligned u32 behind the atomic (valid for the call:
                // it is borrowed) and the timespec on our stack; it writes neither. Its result
                // (0, EAGAIN, EINTR, ETIMEDOUT) needs no handling: the caller re-checks.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        self.word.as_ptr(),
                        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                        expected,
                        &ts as *const libc::timespec,
                    );
                }
            }
            #[cfg(all(not(lwsim), not(target_os = "linux")))]
            {
                if self.word.load(Ordering::Relaxed) == expected {
                    std::thread::sleep(std::time::Duration::from_nanos(remaining.min(1_000_000)));
                }
            }
            clock_nanos() >= deadline
        }
    }
}

/// The [`clock_nanos`] deadline `timeout` from now (saturating: a timeout too long to represent
/// is a wait without end).
pub fn deadline_after(timeout: std::time::Duration) -> u64 {
    clock_nanos().saturating_add(u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX))
}

/// The [`clock_nanos`] deadline of a `std::time::Instant` (under lwsim: the same distance from
/// the thread's virtual now as the instant is from the real now).
pub fn deadline_at(instant: std::time::Instant) -> u64 {
    deadline_after(instant.saturating_duration_since(std::time::Instant::now()))
}

/// Address-keyed futex calls on any [`AtomicU32`] (a lock's own state word), for waits that have
/// no wait record to sleep on: the atomic LWLock's upgrader waiting for the readers to leave.
///
/// Same contract as [`Futex`]: [`wait_word`] sleeps only while the word equals `expected`
/// (compare and sleep atomic with respect to [`wake_all_word`]); spurious returns are allowed.
/// Under loom and shuttle every word shares one per-execution mutex and condvar (a wake wakes
/// the sleepers of every word, which re-check).
#[cfg(any(loom, shuttle))]
fn word_park() -> &'static (Mutex<()>, CondvarShim) {
    #[cfg(loom)]
    loom::lazy_static! {
        static ref PARK: (Mutex<()>, CondvarShim) = (Mutex::new(()), CondvarShim::new());
    }
    #[cfg(shuttle)]
    shuttle::lazy_static! {
        static ref PARK: (Mutex<()>, CondvarShim) = (Mutex::new(()), CondvarShim::new());
    }
    &PARK
}
#[cfg(loom)]
use loom::sync::Condvar as CondvarShim;
#[cfg(shuttle)]
use shuttle::sync::Condvar as CondvarShim;

/// Sleeps while `word` equals `expected` (FUTEX_WAIT on the word's address). May return
/// spuriously.
pub fn wait_word(word: &AtomicU32, expected: u32) {
    #[cfg(lwsim)]
    lwsim::futex_wait(word, expected);
    #[cfg(not(any(loom, shuttle, lwsim)))]
    atomic_wait::wait(word, expected);
    #[cfg(any(loom, shuttle))]
    {
        let park = word_park();
        let guard = park.0.lock().unwrap();
        if word.load(Ordering::SeqCst) == expected {
            drop(park.1.wait(guard).unwrap());
        }
    }
}

/// Like [`wait_word`], at most until `deadline` on the [`clock_nanos`] timeline; returns `true`
/// if the deadline has passed (as [`Futex::wait_until_nanos`], whose per-backend behaviour it
/// shares: under loom and shuttle, a yield and then "passed" unless the word changed).
pub fn wait_word_until(word: &AtomicU32, expected: u32, deadline: u64) -> bool {
    #[cfg(any(loom, shuttle))]
    {
        let _ = deadline;
        thread::yield_now();
        word.load(Ordering::SeqCst) == expected
    }
    #[cfg(not(any(loom, shuttle)))]
    {
        let now = clock_nanos();
        if now >= deadline {
            return true;
        }
        let remaining = deadline - now;
        #[cfg(lwsim)]
        {
            if word.load(Ordering::Relaxed) == expected {
                lwsim::sleep_micros((remaining / 1000).clamp(1, 10));
            }
        }
        #[cfg(all(not(lwsim), target_os = "linux"))]
        {
            let ts = libc::timespec {
                tv_sec: (remaining / 1_000_000_000).min(i32::MAX as u64) as libc::time_t,
                tv_nsec: (remaining % 1_000_000_000) as libc::c_long,
            };
            // SAFETY: FUTEX_WAIT reads the aligned u32 behind the atomic (valid for the call: it
            // is borrowed) and the timespec on our stack; it writes neither. Its result (0,
            // EAGAIN, EINTR, ETIMEDOUT) needs no handling: the caller re-checks.
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    word.as_ptr(),
                    libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                    expected,
                    &ts as *const libc::timespec,
                );
            }
        }
        #[cfg(all(not(lwsim), not(target_os = "linux")))]
        {
            if word.load(Ordering::Relaxed) == expected {
                std::thread::sleep(std::time::Duration::from_nanos(remaining.min(1_000_000)));
            }
        }
        clock_nanos() >= deadline
    }
}

/// Wakes every sleeper of `word` (FUTEX_WAKE INT_MAX). The caller changed the word first.
pub fn wake_all_word(word: &AtomicU32) {
    #[cfg(lwsim)]
    lwsim::futex_wake(word, u32::MAX);
    #[cfg(not(any(loom, shuttle, lwsim)))]
    atomic_wait::wake_all(word);
    #[cfg(any(loom, shuttle))]
    {
        let _ = word;
        let park = word_park();
        let _guard = park.0.lock().unwrap();
        park.1.notify_all();
    }
}

/// `mutant!("name")`: whether the deliberately broken variant `name` is active.
///
/// Used only by the model-checking suites, to prove that each model can fail. It is
/// `cfg!(lwlock_mutant = "name")`, a constant `false` in every normal build (so the broken branch
/// is compiled out). A build with `--cfg lwlock_mutant="runtime"` also selects a variant at run
/// time from the environment variable `LWLOCK_MUTANT`, so that one build serves every variant.
#[cfg(not(lwlock_mutant = "runtime"))]
#[doc(hidden)]
#[macro_export]
macro_rules! mutant {
    ($name:literal) => {
        cfg!(lwlock_mutant = $name)
    };
}

/// `mutant!("name")`: whether the deliberately broken variant `name` is active (here: selected
/// at compile time, or at run time by `LWLOCK_MUTANT=name`).
#[cfg(lwlock_mutant = "runtime")]
#[doc(hidden)]
#[macro_export]
macro_rules! mutant {
    ($name:literal) => {
        cfg!(lwlock_mutant = $name) || $crate::sync::runtime_mutant($name)
    };
}

/// Whether `LWLOCK_MUTANT` names `name` (read once per process).
#[cfg(lwlock_mutant = "runtime")]
#[doc(hidden)]
pub fn runtime_mutant(name: &str) -> bool {
    static SELECTED: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SELECTED
        .get_or_init(|| std::env::var("LWLOCK_MUTANT").ok())
        .as_deref()
        == Some(name)
}
