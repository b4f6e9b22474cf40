//! The MCS queue lock (Mellor-Crummey and Scott 1991): each waiter spins on its own node's line,
//! and the holder hands the lock to its successor with one store to that line, so throughput stays
//! flat as cores grow. It mirrors no PostgreSQL function; PostgreSQL's queued analogue is the
//! LWLock wait list (`proclist`), which sleeps instead of spinning.
//!
//! Instruction time (`lwlock::sync::instructions`, counted from the release build's disassembly
//! of `lwlock/examples/lock_path_instructions.rs`; the node's thread-local lookup included):
//! acquire 6, the node's two stores, 1, swap, 2, then 4 (uncontended) or the link, the spin on
//! the own node (a PAUSE and a load per iteration, not more), 4; release 6, the load of `next`,
//! 2, then the hand-over store and 2, or 2, the tail CAS and 3 (uncontended).

use crate::sync::{instructions, spin_loop, spin_wait_while, AtomicBool, AtomicPtr, Ordering};
use crate::{AcquireOrWait, Mode, RawLwLock, Tranche};

/// A waiter's queue node, one per thread, on its own line.
#[derive(Debug)]
#[repr(align(64))]
pub struct McsNode {
    /// `true` while the owner must wait; cleared by its predecessor (Release).
    locked: AtomicBool,
    /// The successor, set by it after it swapped itself into the tail.
    next: AtomicPtr<McsNode>,
}

crate::sync::model_thread_local! {
    /// This thread's node. (Not a `const` initializer: the same macro call serves loom's and
    /// shuttle's `thread_local!`, which take none.)
    #[allow(clippy::missing_const_for_thread_local)]
    static MCS_NODE: McsNode = McsNode {
        locked: AtomicBool::new(false),
        next: AtomicPtr::new(std::ptr::null_mut()),
    };
}

fn my_node() -> *mut McsNode {
    MCS_NODE.with(|n| n as *const McsNode as *mut McsNode)
}

/// The MCS queue lock (Mellor-Crummey & Scott 1991): `tail` is null when free, else the last
/// waiter's node; each waiter spins on its own node. A thread holds at most one MCS lock at a
/// time (one node per thread).
#[derive(Debug)]
pub struct McsLock {
    tail: AtomicPtr<McsNode>,
}

impl Default for McsLock {
    fn default() -> Self {
        McsLock {
            tail: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
}

// SAFETY: the tail swap orders the waiters; a node's owner holds the lock once its predecessor
// cleared `locked` (Release, paired with the owner's Acquire) or it found the queue empty. Nodes
// are thread-locals that outlive every access: a node is reachable only while its owner is in
// acquire or release of the lock.
unsafe impl RawLwLock for McsLock {
    const NAME: &'static str = "mcs";
    const INSTRUCTIONS_ANNOUNCED: bool = true;
    fn with_tranche(_: Tranche) -> Self {
        McsLock::default()
    }
    fn acquire(&self, _: Mode) -> bool {
        // Instruction counts: the module docs.
        instructions(6);
        let me = my_node();
        // SAFETY: `me` is this thread's live node; nobody else reaches it until the swap below.
        let node = unsafe { &*me };
        node.next.store(std::ptr::null_mut(), Ordering::Relaxed);
        node.locked.store(true, Ordering::Relaxed);
        instructions(1);
        let prev = self.tail.swap(me, Ordering::AcqRel);
        instructions(2);
        if prev.is_null() {
            instructions(4);
            return true;
        }
        // SAFETY: `prev` is the node of a thread still in acquire/release of this lock: it cannot
        // return from release before it has seen our link (it waits for `next`).
        unsafe { &*prev }.next.store(me, Ordering::Release);
        // Spin on the own node (the explicit spin-wait hint: the loop load, PAUSE, load).
        spin_wait_while(&node.locked, Ordering::Acquire, |&locked| locked);
        instructions(4);
        false
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        let me = my_node();
        // SAFETY: this thread's live node.
        let node = unsafe { &*me };
        node.next.store(std::ptr::null_mut(), Ordering::Relaxed);
        self.tail
            .compare_exchange(
                std::ptr::null_mut(),
                me,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_ok()
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        while self.is_locked() {
            spin_loop();
        }
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, _: Mode) {
        instructions(6);
        let me = my_node();
        // SAFETY: this thread's live node (it holds the lock through it).
        let node = unsafe { &*me };
        let mut next = node.next.load(Ordering::Acquire);
        instructions(2);
        if next.is_null() {
            instructions(2);
            if self
                .tail
                .compare_exchange(
                    me,
                    std::ptr::null_mut(),
                    Ordering::Release,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                instructions(3);
                return;
            }
            next = spin_wait_while(&node.next, Ordering::Acquire, |n| n.is_null());
        }
        // SAFETY: `next` is a waiter spinning in acquire on its own node, alive until it sees this.
        unsafe { &*next }.locked.store(false, Ordering::Release);
        instructions(2);
    }
    fn is_locked(&self) -> bool {
        !self.tail.load(Ordering::Relaxed).is_null()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}
