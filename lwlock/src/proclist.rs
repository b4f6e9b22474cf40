//! Intrusive doubly-linked lists of wait records by record number: PostgreSQL's `proclist.h`.
//!
//! The head and tail live in the lock (8 bytes); the links live in each [`Proc`]
//! (`lw_next`/`lw_prev`). Every operation must run under the lock that protects the list (the
//! classic LWLock's spinlock, the atomic LWLock's wait-list bit), which orders all accesses to
//! the links; the link atomics are therefore Relaxed.

use crate::proc::{lw_mode, Proc, INVALID_PROC};
use crate::sync::Ordering::Relaxed;

/// A list of wait records (`proclist_head`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcList {
    pub head: u32,
    pub tail: u32,
}

impl ProcList {
    pub const EMPTY: ProcList = ProcList {
        head: INVALID_PROC,
        tail: INVALID_PROC,
    };

    pub fn is_empty(&self) -> bool {
        self.head == INVALID_PROC
    }

    /// `proclist_push_tail`.
    pub fn push_tail(&mut self, p: &Proc) {
        p.lw_next.store(INVALID_PROC, Relaxed);
        p.lw_prev.store(self.tail, Relaxed);
        if self.tail == INVALID_PROC {
            self.head = p.number();
        } else {
            Proc::by_number(self.tail)
                .lw_next
                .store(p.number(), Relaxed);
        }
        self.tail = p.number();
    }

    /// `proclist_push_head`.
    pub fn push_head(&mut self, p: &Proc) {
        p.lw_prev.store(INVALID_PROC, Relaxed);
        p.lw_next.store(self.head, Relaxed);
        if self.head == INVALID_PROC {
            self.tail = p.number();
        } else {
            Proc::by_number(self.head)
                .lw_prev
                .store(p.number(), Relaxed);
        }
        self.head = p.number();
    }

    /// `proclist_delete`: unlinks `p`, which must be on this list.
    pub fn delete(&mut self, p: &Proc) {
        let (next, prev) = (p.lw_next.load(Relaxed), p.lw_prev.load(Relaxed));
        if prev == INVALID_PROC {
            debug_assert_eq!(self.head, p.number());
            self.head = next;
        } else {
            Proc::by_number(prev).lw_next.store(next, Relaxed);
        }
        if next == INVALID_PROC {
            debug_assert_eq!(self.tail, p.number());
            self.tail = prev;
        } else {
            Proc::by_number(next).lw_prev.store(prev, Relaxed);
        }
        p.lw_next.store(INVALID_PROC, Relaxed);
        p.lw_prev.store(INVALID_PROC, Relaxed);
    }

    /// `proclist_pop_head_node`.
    pub fn pop_head(&mut self) -> Option<&'static Proc> {
        if self.is_empty() {
            return None;
        }
        let p = Proc::by_number(self.head);
        self.delete(p);
        Some(p)
    }

    /// The first record, if any.
    pub fn first(&self) -> Option<&'static Proc> {
        (!self.is_empty()).then(|| Proc::by_number(self.head))
    }

    /// The record after `p` on this list, if any.
    pub fn next_of(p: &Proc) -> Option<&'static Proc> {
        let n = p.lw_next.load(Relaxed);
        (n != INVALID_PROC).then(|| Proc::by_number(n))
    }

    /// Puts `me` just behind the leading WAIT_UNTIL_FREE run of the list: the place of the atomic
    /// LWLock's handoff owner (`layout`, invariant 7). Must run under the list's lock.
    pub fn push_after_wait_until_free(&mut self, me: &Proc) {
        let mut run = ProcList::EMPTY;
        while let Some(w) = self.first() {
            if w.lw_mode.load(Relaxed) != lw_mode::WAIT_UNTIL_FREE {
                break;
            }
            self.delete(w);
            run.push_head(w); // reversed
        }
        self.push_head(me);
        while let Some(w) = run.pop_head() {
            self.push_head(w); // reversed again: the original order
        }
    }
}
