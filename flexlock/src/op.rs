//! A pending group operation: a closure, its result slot and its panic slot, on the submitter's
//! stack.
//!
//! Mirrors the `procArrayGroupMemberXid` / `clogGroupMember*` fields of `PGPROC`, generalised from
//! "the xid to clear" to "any closure over the protected data".
//!
//! # Design
//! A submitter builds an [`Op`] on its own stack and publishes a pointer to its header in its wait
//! record (`proc.group.op`). Whoever serves the group calls [`OpHeader::run`] through that pointer,
//! under the exclusive lock. The header starts with a monomorphised function pointer, so the server
//! needs neither the closure type nor the result type, and nothing is allocated. The closure runs
//! inside `catch_unwind`: a panic is stored in the slot and re-raised by the submitter when it
//! takes the result ([`Op::take`]), so a panicking operation never unwinds through a server that is
//! running other threads' operations.
//!
//! # Lifetime
//! The submitter keeps the `Op` alive (it does not return from the group call) until the op's
//! completion state is DONE. The server reads the op pointer, runs it, clears the record's `member`
//! and only then swaps the state to DONE (with Release) in [`OpHeader::complete`]; after that swap
//! it never touches the op again. The submitter reads the outcome after loading DONE with Acquire,
//! so the server's writes to the slot are visible.
//!
//! # State
//! `state` goes `Pending(f)` → `Done(r)` or `Panicked(payload)` (by the one server, once) →
//! `Empty` (by the submitter, in [`Op::take`]). `handover` is false except between a server handing
//! the rest of its chain to this member and the member reading it.

use lwlock::sync::{spin_loop, AtomicBool, AtomicU8, Ordering, UnsafeCell};
use lwlock::{Proc, WaitEvent};
use std::any::Any;
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

/// A caught panic payload.
pub(crate) type Payload = Box<dyn Any + Send + 'static>;

/// The type-erased part of an operation that a server sees. `#[repr(C)]` and first in [`Op`], so a
/// pointer to an `Op` is a pointer to its header.
#[repr(C)]
pub(crate) struct OpHeader {
    /// `Op::<T, F, R>::run_erased` for the op's own types.
    run: unsafe fn(*const OpHeader, *mut ()),
    /// Set (Relaxed, before the Release swap in [`OpHeader::complete`]) by a server that hands the
    /// rest of its chain to this member instead of running its operation; the member reads it after
    /// its Acquire load of DONE and becomes the chain's server.
    pub(crate) handover: AtomicBool,
    /// [`PENDING`] → [`SLEEPING`] (submitter, before it sleeps) → [`DONE`] (server, `swap`); or
    /// [`PENDING`] → [`DONE`] directly if the server finishes while the submitter still spins. The
    /// server posts the submitter's semaphore only if the swap returned [`SLEEPING`], so posts and
    /// sleeps stay balanced although a submitter may return without sleeping.
    done: AtomicU8,
}

/// The operation is queued; its submitter spins or has not looked yet.
const PENDING: u8 = 0;
/// The submitter is going to sleep (or sleeps) on its semaphore: the server must post it.
const SLEEPING: u8 = 1;
/// The server is finished with the op (ran it, or handed the chain over); the submitter owns it.
const DONE: u8 = 2;

/// How many times a submitter checks for completion before sleeping on its semaphore. A leader on
/// another core usually finishes a small group within this; a sleep costs two system calls and a
/// context switch. PostgreSQL sleeps at once. The measurement behind the count is in
/// `docs/results.md` ("The group locks' constants, measured"; dated figures live there, not in
/// code). Under loom and shuttle a model may lower it (`lwlock::sync::set_model_spin_limit`) to
/// explore the sleep/post path.
pub(crate) const SPINS_BEFORE_SLEEP: u32 = 200;

impl OpHeader {
    /// Marks the op finished for its submitter (after running it, or after a handover). Returns
    /// whether the submitter sleeps and must be posted. After this call the op may be gone: the
    /// caller must not touch it again.
    ///
    /// # Safety
    /// `this` is a live header whose submitter waits in [`Op::wait`].
    pub(crate) unsafe fn complete(this: *const OpHeader) -> bool {
        // Release: the op's outcome, the reset link and `handover` happen-before the submitter's
        // Acquire load of DONE. Acquire: pairs with the submitter's SLEEPING CAS (nothing to read,
        // but it keeps the decision to post ordered after it).
        // SAFETY: live (caller contract); this is our last access.
        let sleeping = unsafe { (*this).done.swap(DONE, Ordering::AcqRel) == SLEEPING };
        // Mutant `flex_member_never_posted` (models only): a sleeping member is never posted.
        sleeping && !lwlock::mutant!("flex_member_never_posted")
    }

    /// Runs the operation on `data` and records its outcome.
    ///
    /// # Safety
    /// * `this` is the header of a live `Op<T, F, R>` whose operation has not run yet, and its
    ///   submitter keeps it alive until the caller's [`OpHeader::complete`];
    /// * `data` points to the `T` of the lock the op was submitted to, and the caller holds that
    ///   lock exclusively (so the `&mut T` handed to the closure is unique).
    pub(crate) unsafe fn run(this: *const OpHeader, data: *mut ()) {
        // SAFETY: `this` is a live header (caller contract); reading its fn pointer is a plain read
        // of a field written before the op was published.
        let run = unsafe { (*this).run };
        // SAFETY: forwarded caller contract; `run` was built for this op's own types.
        unsafe { run(this, data) }
    }
}

/// What the op holds.
enum State<F, R> {
    Pending(F),
    Done(R),
    Panicked(Payload),
    Empty,
}

/// One operation on a `T`, with closure `F` returning `R`.
#[repr(C)]
pub(crate) struct Op<T, F, R> {
    header: OpHeader,
    /// Written by the server (once, under the exclusive lock) and read by the submitter after it
    /// saw DONE. A model-checker cell, so a missing happens-before shows up as a race.
    state: UnsafeCell<State<F, R>>,
    _data: PhantomData<fn(&mut T)>,
}

impl<T, F, R> Op<T, F, R>
where
    F: FnOnce(&mut T) -> R,
{
    /// A pending operation.
    pub(crate) fn new(f: F) -> Self {
        Op {
            header: OpHeader {
                run: Self::run_erased,
                handover: AtomicBool::new(false),
                done: AtomicU8::new(PENDING),
            },
            state: UnsafeCell::new(State::Pending(f)),
            _data: PhantomData,
        }
    }

    /// The pointer a server calls through (stored in `proc.group.op`).
    pub(crate) fn header(&self) -> *const OpHeader {
        // A pointer to the whole op, cast: `run_erased` casts it back and reads past the header,
        // which a pointer derived from `&self.header` would not be allowed to (Stacked Borrows).
        (self as *const Self).cast::<OpHeader>()
    }

    /// Waits until a server has finished with this op: spins a little, then sleeps on `me`'s
    /// semaphore (absorbing and re-posting foreign wakeups).
    pub(crate) fn wait(&self, me: &Proc, event: WaitEvent) {
        let done = &self.header.done;
        // Under the models, as few as the model chose (`spin_limit`), so that loom reaches the
        // sleep below.
        for _ in 0..lwlock::sync::spin_limit(SPINS_BEFORE_SLEEP) {
            // Acquire: pairs with the server's Release swap in `complete`.
            if done.load(Ordering::Acquire) == DONE {
                return;
            }
            spin_loop();
        }
        // Acquire on failure: the value is DONE, pairs as above.
        if done
            .compare_exchange(PENDING, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        // Acquire: pairs with the server's Release swap, as above. The semaphore's own Acquire
        // does not cover it: the wakeup may be a foreign post (another protocol's, absorbed and
        // re-posted by `sleep_until`) that arrives after the server's swap and before its post.
        // Mutant `flex_sleep_done_relaxed` (models only): this load Relaxed; only a model whose
        // member is woken by a foreign post can tell (`loom_flexlock::flex_leader_foreign_post2`).
        let order = if lwlock::mutant!("flex_sleep_done_relaxed") {
            Ordering::Relaxed
        } else {
            Ordering::Acquire
        };
        me.sleep_until(event, || done.load(order) == DONE);
    }

    /// Whether a server is finished with this op (ran it, or handed us its chain), without
    /// waiting. For submitters that wait elsewhere than on their semaphore (the holder-serves
    /// policy waits in the lock's own queue): they never announce SLEEPING, so no server posts.
    pub(crate) fn is_done(&self) -> bool {
        // Acquire: pairs with the server's Release swap in `complete`, as in `wait`.
        self.header.done.load(Ordering::Acquire) == DONE
    }

    /// Whether a server handed its chain to us (and clears the flag).
    pub(crate) fn take_handover(&self) -> bool {
        // Relaxed: ordered by the Acquire load of DONE in `wait` that preceded this call.
        self.header.handover.swap(false, Ordering::Relaxed)
    }

    /// The erased entry point stored in the header.
    ///
    /// # Safety
    /// As [`OpHeader::run`], with `this` the header of an `Op<T, F, R>`.
    unsafe fn run_erased(this: *const OpHeader, data: *mut ()) {
        // SAFETY: `Op` is `repr(C)` with the header first, so the header pointer is the op pointer;
        // the op is alive and the caller has exclusive access to its `state` (only one server runs
        // an op, and the submitter does not read `state` before the op is DONE).
        let op = unsafe { &*(this as *const Self) };
        op.state.with_mut(|state| {
            // SAFETY: see above: nobody else accesses `state` until the op is DONE.
            let state = unsafe { &mut *state };
            let State::Pending(f) = std::mem::replace(state, State::Empty) else {
                unreachable!("flexlock: a group operation was run twice");
            };
            // SAFETY: the caller holds the lock exclusively and `data` is that lock's `T`.
            let data = unsafe { &mut *(data as *mut T) };
            *state = match catch_unwind(AssertUnwindSafe(move || f(data))) {
                Ok(r) => State::Done(r),
                Err(payload) => State::Panicked(payload),
            };
        });
    }

    /// Runs the operation on this thread (the submitter is its own server).
    ///
    /// # Safety
    /// As [`OpHeader::run`].
    pub(crate) unsafe fn run_here(&self, data: *mut T) {
        // SAFETY: forwarded caller contract.
        unsafe { OpHeader::run(self.header(), data as *mut ()) }
    }

    /// The operation's result; re-raises its panic in this (the submitting) thread.
    ///
    /// Call only after the operation ran and [`Op::wait`] returned (or after running it here).
    pub(crate) fn take(&self) -> R {
        let state = self.state.with_mut(|state| {
            // SAFETY: the server's last access to the op happened-before our Acquire load of DONE
            // (or we ran it ourselves); no one else touches it any more.
            unsafe { std::mem::replace(&mut *state, State::Empty) }
        });
        match state {
            State::Done(r) => r,
            State::Panicked(payload) => resume_unwind(payload),
            State::Pending(_) | State::Empty => {
                unreachable!("flexlock: group operation completed without running")
            }
        }
    }
}
