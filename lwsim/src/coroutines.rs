//! lwsim's own executor: every simulated thread, and the supervisor (the closure given to
//! [`crate::run()`]), is a stackful coroutine on the OS thread that called `run`, and the machine's
//! scheduler (`Machine::pick`, `machine/executor.rs`) makes every decision.
//!
//! At a scheduling point the running task asks the machine for the task to run next; if that is
//! another, it suspends to the driver loop ([`drive`]), which resumes that one. The scheduling
//! points are the ones shuttle's executor had, which ran lwsim before this one, so every decision
//! falls where it did: a spawn (before the new task exists), a yield (the machine's sync points,
//! which yield until the task's key is the smallest), a join, the supervisor's return, the
//! decision after a task finishes, and two around a lazy static's initializer (shuttle's `Once`).
//! (A simulated line is a real address, so a figure still depends on where the process heap puts
//! what the code under test allocates during a run, which this executor's own allocations shape
//! differently from shuttle's.) Shuttle's executor built a list of every live task at each
//! decision, which the machine then compared with the last: a cost per step that grew with the
//! thread count. Here the machine is told only what changed (a spawn, a block, a finish).
//!
//! Also here: the simulated threads' thread-locals ([`LocalKey`], [`crate::thread_local!`]),
//! destroyed at the thread's exit in the order they were first used, and the lazy statics of a
//! run ([`LazyStatic`], [`crate::lazy_static!`]), dropped when it ends.
//!
//! A panic in a task unwinds its stack and ends the run: it propagates out of the driver, and
//! [`crate::run()`] resumes it. While a task unwinds, the machine's sync points give way (they act
//! as outside a simulation) rather than switch: a stack that unwinds is not suspended here (the
//! panic count is the OS thread's, so every other task would run as if it unwound too, and one
//! left suspended would keep it raised after the run). A destructor that releases goes on; one
//! that waits for another thread cannot, and the process aborts with the reason after a bound
//! (`machine/executor.rs`) rather than hang. (So a `catch_unwind` inside a simulated thread is
//! not simulated: what runs between the panic and the catch acts as outside a simulation.) The
//! other tasks' stacks are then leaked, not unwound: nothing of a failed run runs again.

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

type Co = Coroutine<(), (), (), DefaultStack>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Runnable,
    /// Waiting in a join: not offered to the machine's scheduler (it is absent).
    Blocked,
    Finished,
}

struct Slot {
    /// `None` while the task runs (the driver holds it) and once it has finished.
    co: Option<Co>,
    /// The coroutine's handle for suspending itself, set when it first runs.
    yielder: *const Yielder<(), ()>,
    state: State,
    /// The task blocked joining this one.
    waiter: Option<usize>,
    /// Thread-locals: a key's address and its value (`None` once destroyed), in the order of
    /// first use.
    locals: Vec<(usize, Option<Box<dyn Any>>)>,
}

struct Runtime {
    slots: Vec<Slot>,
    current: usize,
    /// The task a suspending task asked the driver to resume.
    next: usize,
    /// Whether the set of runnable tasks changed since the last decision.
    changed: bool,
    stack_size: usize,
    /// Lazy statics: a static's address and its value, or the tasks waiting for it while its
    /// initializer runs.
    statics: Vec<(usize, Static)>,
    /// The decision (the machine's scheduler, given by `run.rs`: this file names nothing of the
    /// machine, whose sync points call [`switch`]).
    decide: Decide,
}

/// What a decision is offered: the tasks, which of them are runnable, and whether that set
/// changed since the last decision.
pub(crate) struct Offer<'a> {
    slots: &'a [Slot],
    changed: bool,
}

impl Offer<'_> {
    /// Tasks `0..len()` exist.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }
    /// Whether task `id` is runnable (else it is blocked in a join, finished, or unknown).
    pub(crate) fn runnable(&self, id: usize) -> bool {
        self.slots
            .get(id)
            .is_some_and(|s| s.state == State::Runnable)
    }
    /// Whether the set of runnable tasks may differ from the last decision's.
    pub(crate) fn changed(&self) -> bool {
        self.changed
    }
}

/// A decision: the task to run next among the offered ones.
pub(crate) type Decide = fn(&Offer<'_>) -> usize;

enum Static {
    Making(Vec<usize>),
    Made(Box<dyn Any>),
}

thread_local! {
    static RUNTIME: RefCell<Option<Runtime>> = const { RefCell::new(None) };
}

fn with_runtime<R>(f: impl FnOnce(&mut Runtime) -> R) -> Option<R> {
    RUNTIME.with(|cell| cell.borrow_mut().as_mut().map(f))
}

/// Whether a run's executor is active on this OS thread.
fn running() -> bool {
    RUNTIME.with(|cell| cell.borrow().is_some())
}

impl Runtime {
    /// The run's decision: the task to run next among the runnable ones.
    fn decide(&mut self) -> usize {
        let offer = Offer {
            slots: &self.slots,
            changed: std::mem::take(&mut self.changed),
        };
        (self.decide)(&offer)
    }
}

/// [`Runtime::decide`] on the run's runtime (the driver's decisions).
fn decide() -> usize {
    with_runtime(Runtime::decide).expect("lwsim: a decision outside a run")
}

/// A scheduling point of the running task: the machine decides, and if it chose another task
/// the running one suspends until it is chosen again. Does nothing outside a run or while the
/// task unwinds a panic.
pub(crate) fn switch() {
    if std::thread::panicking() {
        return;
    }
    let yielder = with_runtime(|rt| {
        let next = rt.decide();
        if next == rt.current {
            return None;
        }
        rt.next = next;
        Some(rt.slots[rt.current].yielder)
    })
    .flatten();
    if let Some(y) = yielder {
        // SAFETY: the pointer was set by the running task's coroutine when it first ran, from
        // the `Yielder` corosensei passes it, which lives as long as the coroutine; the running
        // task is that coroutine (only a running task reaches a scheduling point), so it is alive
        // and we are on its stack, where `suspend` must be called.
        unsafe { (*y).suspend(()) };
    }
}

/// The body of every task: `f`, then (for the supervisor, task 0) a last scheduling point, the
/// result kept for a join if a handle is left (else dropped while the thread-locals still exist),
/// the thread-locals destroyed, the result published and a joiner woken.
fn body<T: 'static>(
    f: impl FnOnce() -> T + 'static,
    result: Arc<Mutex<Option<T>>>,
) -> impl FnOnce(&Yielder<(), ()>, ()) + 'static {
    move |yielder, ()| {
        let me = with_runtime(|rt| {
            rt.slots[rt.current].yielder = yielder;
            rt.current
        })
        .expect("lwsim: a task outside a run");
        let ret = f();
        if me == 0 {
            switch();
        }
        let ret = if Arc::strong_count(&result) > 1 {
            Some(ret)
        } else {
            drop(ret);
            None
        };
        destroy_locals();
        if let Some(ret) = ret {
            *result.lock().unwrap_or_else(|e| e.into_inner()) = Some(ret);
        }
        with_runtime(|rt| {
            if let Some(w) = rt.slots[rt.current].waiter.take() {
                rt.slots[w].state = State::Runnable;
                rt.changed = true;
            }
        });
    }
}

fn new_slot(co: Co) -> Slot {
    Slot {
        co: Some(co),
        yielder: std::ptr::null(),
        state: State::Runnable,
        waiter: None,
        locals: Vec::new(),
    }
}

fn stack(size: usize) -> DefaultStack {
    DefaultStack::new(size).unwrap_or_else(|e| panic!("lwsim: a task's stack: {e}"))
}

/// Runs `main` as task 0 and every task it spawns until all have finished. A panic, in a task
/// or in a decision (the machine's deadlock report), propagates; [`uninstall`] must follow
/// either way.
pub(crate) fn drive(stack_size: usize, decide_with: Decide, main: impl FnOnce() + 'static) {
    let co = Co::with_stack(stack(stack_size), body(main, Arc::new(Mutex::new(None))));
    RUNTIME.with(|cell| {
        let mut b = cell.borrow_mut();
        assert!(b.is_none(), "lwsim: a run's executor is already active");
        *b = Some(Runtime {
            slots: vec![new_slot(co)],
            current: 0,
            next: 0,
            changed: true,
            stack_size,
            statics: Vec::new(),
            decide: decide_with,
        });
    });
    let mut next = decide();
    loop {
        let mut co = with_runtime(|rt| {
            rt.current = next;
            rt.slots[next].co.take()
        })
        .flatten()
        .expect("lwsim: the machine chose a task that cannot run");
        match co.resume(()) {
            CoroutineResult::Yield(()) => {
                next = with_runtime(|rt| {
                    rt.slots[rt.current].co = Some(co);
                    rt.next
                })
                .expect("lwsim: the run ended under a task");
            }
            CoroutineResult::Return(()) => {
                drop(co);
                let blocked = with_runtime(|rt| {
                    rt.slots[rt.current].state = State::Finished;
                    rt.changed = true;
                    if rt.slots.iter().any(|s| s.state == State::Runnable) {
                        return None;
                    }
                    let blocked =
                        (0..rt.slots.len()).filter(|&i| rt.slots[i].state == State::Blocked);
                    Some(blocked.collect::<Vec<_>>())
                })
                .expect("lwsim: the run ended under a task");
                let Some(blocked) = blocked else {
                    next = decide();
                    continue;
                };
                assert!(
                    blocked.is_empty(),
                    "lwsim: deadlock: every unfinished thread waits to join another \
                     (tasks {blocked:?})"
                );
                return;
            }
        }
    }
}

/// What a run's executor leaves when it ends: its lazy statics, and after a failure the stacks
/// of the tasks that did not finish.
pub(crate) struct Leftovers(Runtime);

/// Ends the run's executor; the caller drops what it leaves with [`Leftovers::dispose`] once the
/// machine is gone, so that no destructor acts on the machine after the run.
pub(crate) fn uninstall() -> Option<Leftovers> {
    RUNTIME.with(|cell| cell.borrow_mut().take()).map(Leftovers)
}

impl Leftovers {
    /// Drops the lazy statics (their destructors run as outside a simulation). After a failure
    /// the unfinished tasks' stacks are leaked, not unwound, so that nothing of the run runs
    /// again; after a run that finished every task has, and nothing is leaked.
    pub(crate) fn dispose(self, failed: bool) {
        let mut rt = self.0;
        let statics = std::mem::take(&mut rt.statics);
        if failed {
            std::mem::forget(rt);
        } else {
            drop(rt);
        }
        drop(statics);
    }
}

/// Destroys the running task's thread-locals, in the order they were first used; one that a
/// destructor uses for the first time is destroyed after the others.
fn destroy_locals() {
    let mut i = 0;
    loop {
        let next = with_runtime(|rt| {
            let locals = &mut rt.slots[rt.current].locals;
            (i < locals.len()).then(|| locals[i].1.take())
        })
        .flatten();
        match next {
            None => return,
            // Dropped with the runtime released: a destructor may use other thread-locals, or the
            // machine.
            Some(value) => drop(value),
        }
        i += 1;
    }
}

/// A simulated thread's handle: [`JoinHandle::join`] waits for it to finish.
#[derive(Debug)]
pub struct JoinHandle<T> {
    id: usize,
    result: Arc<Mutex<Option<T>>>,
}

impl<T> JoinHandle<T> {
    /// Waits for the thread to finish and returns its result. (A panic in a simulated thread ends
    /// the whole run, so this never returns an error.)
    pub fn join(self) -> std::thread::Result<T> {
        let finished = with_runtime(|rt| rt.slots[self.id].state == State::Finished)
            .expect("lwsim: a join outside the run that spawned the thread");
        if !finished {
            with_runtime(|rt| {
                let me = rt.current;
                rt.slots[self.id].waiter = Some(me);
                rt.slots[me].state = State::Blocked;
                rt.changed = true;
            });
        }
        switch();
        let r = self.result.lock().unwrap_or_else(|e| e.into_inner()).take();
        Ok(r.expect("lwsim: a joined thread left no result"))
    }

    /// The simulated thread's task id.
    pub fn thread(&self) -> Thread {
        Thread(self.id)
    }
}

/// A simulated thread, as [`current`] and [`JoinHandle::thread`] name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Thread(usize);

impl Thread {
    /// Its task id (0: the supervisor), unique within a run.
    pub fn id(&self) -> usize {
        self.0
    }
}

/// The running simulated thread (task 0, the supervisor, outside a run).
pub fn current() -> Thread {
    // `try_borrow`: a panic hook may ask while a decision holds the runtime.
    let id = RUNTIME.with(|cell| cell.try_borrow().ok()?.as_ref().map(|rt| rt.current));
    Thread(id.unwrap_or(0))
}

/// Spawns a task: a scheduling point first (shuttle's), then the task, which runs when the machine
/// chooses it. Panics outside a run.
pub(crate) fn spawn<F, T>(f: F) -> JoinHandle<T>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    assert!(running(), "lwsim: thread::spawn outside a simulation");
    switch();
    let result = Arc::new(Mutex::new(None));
    let size = with_runtime(|rt| rt.stack_size).expect("lwsim: thread::spawn outside a simulation");
    let co = Co::with_stack(stack(size), body(f, result.clone()));
    let id = with_runtime(|rt| {
        rt.slots.push(new_slot(co));
        rt.changed = true;
        rt.slots.len() - 1
    })
    .expect("lwsim: thread::spawn outside a simulation");
    JoinHandle { id, result }
}

/// The error of [`LocalKey::try_with`] on a thread-local already destroyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccessError;

impl std::fmt::Display for AccessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("already destroyed")
    }
}

impl std::error::Error for AccessError {}

/// A thread-local of simulated threads (declared with [`crate::thread_local!`]): each simulated
/// thread has its own value, made by `init` at its first use and destroyed at the thread's exit.
#[derive(Debug)]
pub struct LocalKey<T: 'static> {
    #[doc(hidden)]
    pub init: fn() -> T,
}

impl<T: 'static> LocalKey<T> {
    /// Runs `f` on this thread's value. Panics if it was already destroyed, or outside a run.
    pub fn with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> R {
        self.try_with(f)
            .expect("lwsim: a thread-local used during or after its destruction")
    }

    /// Runs `f` on this thread's value, or returns [`AccessError`] if it was already destroyed.
    /// Panics outside a run.
    pub fn try_with<F: FnOnce(&T) -> R, R>(&'static self, f: F) -> Result<R, AccessError> {
        let key = self as *const Self as usize;
        let found = with_runtime(|rt| {
            let locals = &rt.slots[rt.current].locals;
            locals.iter().find(|(k, _)| *k == key).map(|(_, v)| {
                v.as_ref()
                    .map(|b| b.downcast_ref::<T>().expect("a key's own type") as *const T)
            })
        })
        .expect("lwsim: a simulated thread-local used outside a simulation");
        let ptr = match found {
            Some(Some(p)) => p,
            Some(None) => return Err(AccessError),
            None => {
                // Made with the runtime released: `init` may use the machine, or switch.
                let value: Box<T> = Box::new((self.init)());
                let p: *const T = &*value;
                with_runtime(|rt| rt.slots[rt.current].locals.push((key, Some(value))));
                p
            }
        };
        // SAFETY: `ptr` points into a box held by the running task's `locals`, which only
        // `destroy_locals` empties, on this task's own stack after its closure returned; `f` runs
        // before that, on this stack, and the box does not move when the vector grows.
        Ok(f(unsafe { &*ptr }))
    }
}

/// A lazy static of a run (declared with [`crate::lazy_static!`]): made at its first use in the
/// run, dropped when the run ends, so that each run starts from its own (as a model checker's
/// executions do). Its initializer must not wait on another simulated thread.
#[derive(Debug)]
pub struct LazyStatic<T: Sync + 'static> {
    #[doc(hidden)]
    pub init: fn() -> T,
}

impl<T: Sync + 'static> std::ops::Deref for LazyStatic<T> {
    type Target = T;
    /// The run's value, made at its first use. The first user runs the initializer between two
    /// scheduling points (where shuttle's `Once` had its lock and its release); a task that
    /// arrives meanwhile blocks until the value is stored, then passes a scheduling point of its
    /// own (its release of the `Once`).
    fn deref(&self) -> &T {
        let key = self as *const Self as usize;
        loop {
            let found = with_runtime(|rt| {
                let me = rt.current;
                match rt.statics.iter_mut().find(|(k, _)| *k == key) {
                    None => {
                        rt.statics.push((key, Static::Making(Vec::new())));
                        None
                    }
                    Some((_, Static::Made(b))) => Some(Some(
                        b.downcast_ref::<T>().expect("a static's own type") as *const T,
                    )),
                    Some((_, Static::Making(waiters))) => {
                        waiters.push(me);
                        rt.slots[me].state = State::Blocked;
                        rt.changed = true;
                        Some(None)
                    }
                }
            })
            .expect("lwsim: a simulated lazy static used outside a simulation");
            match found {
                // SAFETY: the pointer is into a box held by the runtime's `statics` until the run
                // ends (`Leftovers::dispose`); a static is used only inside the run (outside it
                // the lookup above panics), and the box does not move when the vector grows.
                Some(Some(p)) => return unsafe { &*p },
                Some(None) => {
                    // Blocked until the maker stores the value and wakes us.
                    switch();
                    switch();
                }
                None => {
                    switch();
                    let value: Box<dyn Any> = Box::new((self.init)());
                    with_runtime(|rt| {
                        let e = rt.statics.iter_mut().find(|(k, _)| *k == key);
                        let e = &mut e.expect("the entry pushed above").1;
                        if let Static::Making(waiters) = std::mem::replace(e, Static::Made(value)) {
                            for w in waiters {
                                rt.slots[w].state = State::Runnable;
                                rt.changed = true;
                            }
                        }
                    });
                    switch();
                }
            }
        }
    }
}

/// Declares thread-locals of simulated threads ([`LocalKey`]), with `std::thread_local!`'s syntax
/// (a `const { }` initializer is accepted and made lazily like the others).
#[macro_export]
macro_rules! thread_local {
    () => {};
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }; $($rest:tt)*) => (
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init; $($rest)*);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = const { $init:expr }) => (
        $crate::thread_local!($(#[$attr])* $vis static $name: $t = $init);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr; $($rest:tt)*) => (
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> =
            $crate::thread::LocalKey { init: || $init };
        $crate::thread_local!($($rest)*);
    );
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty = $init:expr) => (
        $(#[$attr])* $vis static $name: $crate::thread::LocalKey<$t> =
            $crate::thread::LocalKey { init: || $init };
    );
}

/// Declares lazy statics of a run ([`LazyStatic`]), with the `lazy_static` crate's syntax
/// (`static ref NAME: T = init;`).
#[macro_export]
macro_rules! lazy_static {
    () => {};
    ($(#[$attr:meta])* $vis:vis static ref $name:ident: $t:ty = $init:expr; $($rest:tt)*) => (
        $(#[$attr])* $vis static $name: $crate::thread::LazyStatic<$t> =
            $crate::thread::LazyStatic { init: || $init };
        $crate::lazy_static!($($rest)*);
    );
}
