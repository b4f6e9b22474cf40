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
//! The submitter keeps the `Op` alive (it does not return from the group call) until its record's
//! `member` flag is false. The server reads the op pointer, runs it and only then clears `member`
//! (with Release); after that store it never touches the op again. The submitter reads the outcome
//! after loading `member == false` with Acquire, so the server's writes to the slot are visible.
//!
//! # State
//! `state` goes `Pending(f)` → `Done(r)` or `Panicked(payload)` (by the one server, once) →
//! `Empty` (by the submitter, in [`Op::take`]). `handover` is false except between a server handing
//! the rest of its chain to this member and the member reading it.

use lwlock::sync::{AtomicBool, Ordering, UnsafeCell};
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
    /// Set (Relaxed, before the Release store of `member = false`) by a server that hands the rest
    /// of its chain to this member instead of running its operation; the member reads it after its
    /// Acquire load of `member` and becomes the chain's server.
    pub(crate) handover: AtomicBool,
}

impl OpHeader {
    /// Runs the operation on `data` and records its outcome.
    ///
    /// # Safety
    /// * `this` is the header of a live `Op<T, F, R>` whose operation has not run yet, and its
    ///   submitter keeps it alive until after the caller's Release store of `member = false`;
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
    /// saw `member == false`. A model-checker cell, so a missing happens-before shows up as a race.
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
            },
            state: UnsafeCell::new(State::Pending(f)),
            _data: PhantomData,
        }
    }

    /// The pointer a server calls through (stored in `proc.group.op`).
    pub(crate) fn header(&self) -> *const OpHeader {
        &self.header
    }

    /// Whether a server handed its chain to us (and clears the flag).
    pub(crate) fn take_handover(&self) -> bool {
        // Relaxed: ordered by the Acquire load of `member` that preceded this call.
        self.header.handover.swap(false, Ordering::Relaxed)
    }

    /// The erased entry point stored in the header.
    ///
    /// # Safety
    /// As [`OpHeader::run`], with `this` the header of an `Op<T, F, R>`.
    unsafe fn run_erased(this: *const OpHeader, data: *mut ()) {
        // SAFETY: `Op` is `repr(C)` with the header first, so the header pointer is the op pointer;
        // the op is alive and the caller has exclusive access to its `state` (only one server runs
        // an op, and the submitter does not read `state` before `member` goes false).
        let op = unsafe { &*(this as *const Self) };
        op.state.with_mut(|state| {
            // SAFETY: see above: nobody else accesses `state` until `member` goes false.
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
    /// Call only after the operation ran and `member` was seen false with Acquire (or after running
    /// it here).
    pub(crate) fn take(&self) -> R {
        let state = self.state.with_mut(|state| {
            // SAFETY: the server's last access to the op happened-before our Acquire load of
            // `member == false` (or we ran it ourselves); no one else touches it any more.
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
