//! The section checks: the harness's own test, inside sampled critical sections, that a lock
//! excludes (the workload module's docs, "Checks").

use crossbeam_utils::CachePadded;
use lwlock::sync::{AtomicU32, AtomicU64, Mutex, Ordering};

/// One critical section in this many (on average, randomly spaced) runs the section checks.
pub const CHECK_EVERY: u32 = 16;

/// The harness's own check that a lock excludes (see the module docs, "Checks").
///
/// Everything in it is atomic, so the check itself stays well-defined when the lock under test
/// does not exclude.
///
/// A checked *shared* section writes nothing shared: it reads the writer line at entry and at
/// exit and the four words in between. A check that counted readers in a shared counter would
/// itself move a line between every two readers, and would cap a reader-scalable lock's
/// scaling at the check's own (docs/results.md, "The checks' own cost", has the measurement:
/// dated figures live there, not in comments). So overlap is seen from the reader's side, as a
/// seqlock reader sees a writer:
/// * `writers` counts the checked exclusive holders inside (two at once: a violation), and
///   `epoch` counts checked exclusive entries;
/// * a checked shared holder reads `epoch`, then requires `writers == 0`; after its section it
///   requires `writers == 0` and `epoch` unchanged. A checked writer that overlapped any part of
///   the section either was inside at the first check or entered after it, and then moved
///   `epoch` before the second.
///
/// SeqCst throughout: the writer increments `writers` then `epoch`, the reader loads `epoch` then
/// `writers` (at entry) and `writers` then `epoch` (at exit); the argument above needs the single
/// total order of those accesses. The checks run on sampled sections only, so their cost is
/// small, and the shared side's is a few loads of lines that only writers write.
#[derive(Debug, Default)]
pub struct SectionCheck {
    /// Checked exclusive holders inside, and checked exclusive entries (a line only checked
    /// writers write).
    writer: CachePadded<WriterLine>,
    /// Writers set all four to one new value, word by word; readers require them equal.
    words: CachePadded<[AtomicU64; 4]>,
    violations: AtomicU64,
    first: Mutex<Option<String>>,
}

/// The writer side of a [`SectionCheck`].
#[derive(Debug, Default)]
struct WriterLine {
    writers: AtomicU32,
    epoch: AtomicU64,
}

impl SectionCheck {
    fn violation(&self, what: String) {
        if self.violations.fetch_add(1, Ordering::SeqCst) == 0 {
            *self.first.lock().unwrap_or_else(|e| e.into_inner()) = Some(what);
        }
    }

    /// Runs the checks of a shared section around `f`. `held` is the lock's own view.
    #[inline]
    pub fn shared<R>(&self, held: Option<(bool, bool)>, f: impl FnOnce() -> R) -> R {
        if held.is_some_and(|(locked, _)| !locked) {
            self.violation("a shared holder found the lock not held".into());
        }
        let epoch = self.writer.epoch.load(Ordering::SeqCst);
        if self.writer.writers.load(Ordering::SeqCst) != 0 {
            self.violation("a shared holder overlapped an exclusive holder".into());
        }
        let w: [u64; 4] = std::array::from_fn(|i| self.words[i].load(Ordering::SeqCst));
        if w.iter().any(|&x| x != w[0]) {
            self.violation(format!("a shared holder read a torn value {w:?}"));
        }
        let r = f();
        if self.writer.writers.load(Ordering::SeqCst) != 0
            || self.writer.epoch.load(Ordering::SeqCst) != epoch
        {
            self.violation("an exclusive holder entered beside a shared holder".into());
        }
        r
    }

    /// Runs the checks of an exclusive section around `f`.
    #[inline]
    pub fn exclusive<R>(&self, held: Option<(bool, bool)>, f: impl FnOnce() -> R) -> R {
        if held.is_some_and(|(_, exclusive)| !exclusive) {
            self.violation("an exclusive holder found the lock not held exclusively".into());
        }
        if self.writer.writers.fetch_add(1, Ordering::SeqCst) != 0 {
            self.violation("two exclusive holders at once".into());
        }
        self.writer.epoch.fetch_add(1, Ordering::SeqCst);
        let v = self.words[0].load(Ordering::SeqCst).wrapping_add(1);
        for x in self.words.iter() {
            x.store(v, Ordering::SeqCst);
            lwlock::sync::spin_loop();
        }
        let r = f();
        self.writer.writers.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// `Err(first violation, count)` if any check failed.
    pub fn result(&self) -> Result<(), String> {
        match self.violations.load(Ordering::SeqCst) {
            0 => Ok(()),
            n => Err(format!(
                "{} ({n} section-check violation{})",
                self.first
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
                    .unwrap_or_default(),
                if n == 1 { "" } else { "s" }
            )),
        }
    }
}
