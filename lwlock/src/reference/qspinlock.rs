//! The Linux kernel's queued spinlock (`kernel/locking/qspinlock.c`, Waiman Long, 2015; the
//! generic path without paravirt): one word holds the locked byte, a pending bit and the tail of
//! an MCS queue. An uncontended acquire is one CAS; the first contender spins on the word with
//! the pending bit (no queue node), later ones queue MCS-style, each on its own node, and the
//! queue head spins on the word until the holder and the pending waiter are gone. It mirrors no
//! PostgreSQL function; it is here as the lock of a published curve the simulator is checked
//! against (results, "A published lock-comparison curve").
//!
//! The code ported is `queued_spin_lock_slowpath` as of Linux commit 2c83e8e9 ("locking/qspinlock:
//! Use a simple write to grab the lock", 2015), the version the published curve measured: the
//! pending step is a cmpxchg loop ("trylock || pending", never a speculative pending bit), a
//! pending->locked hand-over in progress is waited for without a bound, and the queue head
//! claims the lock with a cmpxchg loop only while it is the tail, else with `set_locked`. Where
//! this differs from that code:
//! * the word is 64 bits and the tail holds the queue node's address >> 6 (the kernel packs a
//!   CPU number and a nesting index into 16 bits, or 23 with 16K CPUs or more, over per-CPU
//!   nodes); one node per thread: a thread is in at most one slow path at a time (no interrupt
//!   nesting; the node is free again when `acquire` returns, so a thread may hold any number of
//!   these locks);
//! * the kernel's stores of a byte or a half-word into the word (`set_locked`,
//!   `clear_pending_set_locked`, the unlock's `smp_store_release(&lock->locked, 0)`) and x86's
//!   one-instruction `xchg` of the tail half-word go through the shim's [`store_field`] and
//!   [`swap_field`]: on hardware and under the models (the word has no narrower views) an RMW
//!   of the whole word with the same effect, and a CAS loop (which may retry) for the exchange;
//!   under lwsim each is costed as the kernel's instruction, a plain store into the store buffer
//!   and one exchange, so that a simulated figure is the kernel algorithm's. On the real
//!   backends every write to the word stays an RMW: the orderings below rely on the unlock
//!   heading a release sequence;
//! * orderings are Rust's: the kernel's `smp_wmb` before the tail exchange, relaxed `xchg` and
//!   address dependencies (`READ_ONCE` of `next`) become the exchange's AcqRel and Acquire loads;
//! * omitted: `prefetchw`, the qstat counters, tracepoints, `virt_spin_lock`, paravirt.
//!
//! [`store_field`]: crate::sync::store_field
//! [`swap_field`]: crate::sync::swap_field
//!
//! Instruction time (`lwlock::sync::instructions`, counted from the release build's disassembly
//! of `lwlock/examples/lock_path_instructions.rs`): the fast path 2, CAS, 4; the unlock, its store
//! and 1. The slow path (the pending and queue paths, about 100 instructions of code) is not
//! annotated: the published-curve check runs it, so its level omits that instruction time.

use crate::sync::{
    instructions, spin_loop, spin_wait_while, store_field, swap_field, AtomicBool, AtomicPtr,
    AtomicU64, Ordering,
};
use crate::{AcquireOrWait, Mode, RawLwLock, Tranche};

/// The locked byte (`_Q_LOCKED_VAL`).
const LOCKED: u64 = 1;
/// The locked byte's bits (`_Q_LOCKED_MASK`).
const LOCKED_MASK: u64 = 0xff;
/// The pending bit (`_Q_PENDING_VAL`): one waiter spins on the word without a queue node.
const PENDING: u64 = 1 << 8;
/// Locked and pending (`_Q_LOCKED_PENDING_MASK`).
const LOCKED_PENDING: u64 = 0xffff;
/// The tail starts here: the last queued node's address >> 6 (nodes are 64-byte aligned).
const TAIL_SHIFT: u32 = 16;
/// The tail bits (`_Q_TAIL_MASK`).
const TAIL_MASK: u64 = !LOCKED_PENDING;

/// A waiter's queue node (`struct mcs_spinlock`), one per thread, on its own line.
#[derive(Debug)]
#[repr(align(64))]
pub struct QNode {
    /// Set by the predecessor when this node becomes the queue head (Release).
    locked: AtomicBool,
    /// The successor, set by it after it swapped itself into the tail.
    next: AtomicPtr<QNode>,
}

crate::sync::model_thread_local! {
    /// This thread's node. (Not a `const` initializer: the same macro call serves loom's and
    /// shuttle's `thread_local!`, which take none.)
    #[allow(clippy::missing_const_for_thread_local)]
    static Q_NODE: QNode = QNode {
        locked: AtomicBool::new(false),
        next: AtomicPtr::new(std::ptr::null_mut()),
    };
}

fn my_node() -> *mut QNode {
    Q_NODE.with(|n| n as *const QNode as *mut QNode)
}

fn encode_tail(node: *mut QNode) -> u64 {
    let a = node as usize as u64;
    assert!(
        a & 63 == 0 && a >> 6 < 1 << (64 - TAIL_SHIFT),
        "a queue node's address does not fit the tail"
    );
    (a >> 6) << TAIL_SHIFT
}

fn decode_tail(val: u64) -> *mut QNode {
    (((val & TAIL_MASK) >> TAIL_SHIFT) << 6) as usize as *mut QNode
}

/// The queued spinlock.
///
/// State (`val`): bits 0–7 the locked byte (0 or 1), bit 8 pending, bits 16–63 the tail (the
/// last queued node's address >> 6, 0 for none). Free iff `val == 0`. Invariants: at most one
/// holder (the locked byte is set only by the fast path's CAS from 0, by the pending waiter once
/// the byte is clear, or by the queue head once both byte and pending are clear); at most one
/// pending waiter (it set the bit in a CAS from `0,0,1`); the queue head is the
/// only thread that claims the lock from the queue. Orderings: the fast path's CAS, the pending
/// waiter's and the head's loads that see the byte clear are Acquire, paired with the unlock's
/// Release; the tail exchange is AcqRel (it publishes the node's initialisation to the
/// successor's link); a node's `locked` is set with Release and read with Acquire.
#[derive(Debug, Default)]
pub struct QSpinLock {
    val: AtomicU64,
}

impl QSpinLock {
    /// `queued_spin_trylock`: the word must be 0.
    fn trylock(&self) -> bool {
        self.val.load(Ordering::Relaxed) == 0
            && self
                .val
                .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// `queued_spin_lock_slowpath`, entered with the word `val` a failed fast path read.
    #[cold]
    fn slowpath(&self, mut val: u64) {
        // Wait for an in-progress pending -> locked hand-over.
        if val == PENDING {
            spin_loop();
            val = spin_wait_while(&self.val, Ordering::Relaxed, |&v| v == PENDING);
        }
        // trylock || pending: 0,0,0 -> 0,0,1 (we hold it); 0,0,1 -> 0,1,1 (we are pending);
        // anything with pending or a tail -> queue.
        let new = loop {
            if val & !LOCKED_MASK != 0 {
                return self.queue();
            }
            let new = if val == LOCKED {
                LOCKED | PENDING
            } else {
                LOCKED
            };
            match self
                .val
                .compare_exchange(val, new, Ordering::Acquire, Ordering::Relaxed)
            {
                Ok(_) => break new,
                Err(now) => val = now,
            }
        };
        if new == LOCKED {
            return;
        }
        // We are pending: wait for the holder to go, then take the lock and clear pending in
        // one step (`clear_pending_set_locked`, the kernel's half-word store; while we are
        // pending nobody else writes the low 16 bits).
        spin_wait_while(&self.val, Ordering::Acquire, |&v| v & LOCKED_MASK != 0);
        store_field(
            &self.val,
            LOCKED_PENDING,
            PENDING,
            LOCKED,
            Ordering::Relaxed,
        );
    }

    /// The MCS part of the slow path (`queue:` in `queued_spin_lock_slowpath`).
    fn queue(&self) {
        let me = my_node();
        // SAFETY: `me` is this thread's live node; nobody reaches it until the tail exchange.
        let node = unsafe { &*me };
        node.locked.store(false, Ordering::Relaxed);
        node.next.store(std::ptr::null_mut(), Ordering::Relaxed);
        // The node's line may have been cold: try once more before queueing.
        if self.trylock() {
            return;
        }
        let tail = encode_tail(me);
        // xchg_tail: replace the tail bits, keep locked and pending.
        let old = swap_field(&self.val, TAIL_MASK, tail, Ordering::AcqRel);
        if old & TAIL_MASK != 0 {
            let prev = decode_tail(old);
            // SAFETY: `prev` is the node of a thread still in this lock's slow path: it cannot
            // leave before it has handed the lock on to us, which needs our link.
            unsafe { &*prev }.next.store(me, Ordering::Release);
            spin_wait_while(&node.locked, Ordering::Acquire, |&locked| !locked);
        }
        // We are the head: wait for the holder and the pending waiter to go.
        let mut val = spin_wait_while(&self.val, Ordering::Acquire, |&v| v & LOCKED_PENDING != 0);
        // Claim the lock: n,0,0 -> 0,0,1 while we are the tail (uncontended: the tail cleared
        // with it); *,0,0 -> *,0,1 once someone queued behind us (contended). Nobody else sets
        // the locked byte now (newcomers see a tail and queue; one that set pending on the way
        // queues behind us too), so `set_locked` (the kernel's plain byte store).
        loop {
            if val != tail {
                store_field(&self.val, LOCKED_MASK, 0, LOCKED, Ordering::Relaxed);
                break;
            }
            match self
                .val
                .compare_exchange(val, LOCKED, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => val = now,
            }
        }
        // Contended: wait for the successor's link, then hand it the queue head.
        let next = spin_wait_while(&node.next, Ordering::Acquire, |n| n.is_null());
        // SAFETY: `next` is a waiter spinning on its own node, alive until it sees this.
        unsafe { &*next }.locked.store(true, Ordering::Release);
    }
}

// SAFETY: see the invariants on `QSpinLock`: the holder is the one thread whose CAS, pending
// wait or head claim set the locked byte while it was clear; the unlock's Release pairs with the
// next holder's Acquire read of a clear byte. Nodes are thread-locals that outlive every access:
// a node is reachable (as a tail or a `next`) only while its owner is in the slow path.
unsafe impl RawLwLock for QSpinLock {
    const NAME: &'static str = "qspinlock";
    const INSTRUCTIONS_ANNOUNCED: bool = true;
    fn with_tranche(_: Tranche) -> Self {
        QSpinLock::default()
    }
    fn acquire(&self, _: Mode) -> bool {
        // Instruction counts: the module docs (the slow path is not annotated).
        instructions(2);
        match self
            .val
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                instructions(4);
                true
            }
            Err(v) => {
                self.slowpath(v);
                false
            }
        }
    }
    fn conditional_acquire(&self, _: Mode) -> bool {
        self.trylock()
    }
    fn acquire_or_wait(&self, mode: Mode) -> AcquireOrWait {
        if self.conditional_acquire(mode) {
            return AcquireOrWait::Acquired;
        }
        // Until the holder of the moment releases (not until the queue drains).
        while self.val.load(Ordering::Relaxed) & LOCKED_MASK != 0 {
            spin_loop();
        }
        AcquireOrWait::Waited
    }
    unsafe fn release(&self, _: Mode) {
        // The kernel's `smp_store_release(&lock->locked, 0)` (checks, in debug builds and
        // under lwsim, that the byte was set: a release of a lock not held).
        store_field(&self.val, LOCKED_MASK, LOCKED, 0, Ordering::Release);
        instructions(1);
    }
    fn is_locked(&self) -> bool {
        self.val.load(Ordering::Relaxed) != 0
    }
    fn is_locked_exclusive(&self) -> bool {
        self.is_locked()
    }
    fn tranche(&self) -> Tranche {
        Tranche::DEFAULT
    }
}
