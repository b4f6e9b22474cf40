//! Thread spawning and yielding on the simulated machine (`pthread_create` and `sched_yield` of
//! the OS model), and the thread-locals and lazy statics of simulated threads (lwsim's executor's,
//! which live per run: `coroutines.rs`).

pub use crate::coroutines::{current, AccessError, JoinHandle, LazyStatic, LocalKey, Thread};
pub use crate::{lazy_static, thread_local};

use crate::machine;

/// Spawns a simulated thread: a task of lwsim's executor that takes a core (an idle one, or a place in a run
/// queue) before running `f`, and leaves it when `f` returns.
pub fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    crate::coroutines::spawn(move || {
        machine::thread_start();
        let r = f();
        machine::thread_exit();
        r
    })
}

/// `sched_yield`: a system call; hands the core to the leftmost other thread of the caller's
/// run queue if its vruntime is at most the wakeup granularity past the caller's (CFS's skip
/// buddy; a no-op for a thread alone on its core, as on Linux).
pub fn yield_now() {
    if !machine::active() {
        std::thread::yield_now();
        return;
    }
    machine::serialize();
    machine::sched_yield();
}
