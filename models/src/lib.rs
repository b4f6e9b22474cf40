//! Model-checking support for the loom and shuttle suites (the models themselves are in `tests/`).
//!
//! * [`Model`]: one model's identity (name, what it proves, threads, bound) and its runner, which
//!   counts executions, times the run and appends a line to the file named by `MODELS_REPORT`
//!   (the test script turns those lines into the table of models).
//! * [`Protected`]: data guarded by a lock under test. Under loom it is loom's `UnsafeCell`, so a
//!   lock that fails to order two critical sections is reported as a causality violation.
//! * [`mutants`]: runs a model again in a child process with a deliberately broken variant of a
//!   lock selected (`LWLOCK_MUTANT`), and checks that the model reports the bug.
//!
//! Test files are compiled only under `--cfg loom` (`loom_*.rs`) or `--cfg shuttle`
//! (`shuttle_*.rs`); see `ci/models.sh`.

use std::io::Write;

/// A model: what it proves and how it is explored.
#[derive(Clone, Copy, Debug)]
pub struct Model {
    /// The test name (`file::function`).
    pub name: &'static str,
    /// One line: the property the model proves.
    pub proves: &'static str,
    /// Threads taking part, the main thread included.
    pub threads: usize,
    /// loom: the preemption bound (`None`: unbounded, every interleaving). shuttle: unused.
    pub bound: Option<usize>,
}

/// Executions and time of one finished model run.
#[derive(Clone, Copy, Debug)]
pub struct Outcome {
    /// Executions explored.
    pub executions: usize,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl Model {
    /// Appends `| name | proves | checker | threads | bound | executions | seconds |` to the file
    /// named by `MODELS_REPORT`, if set, and prints it to stderr.
    pub fn report(&self, checker: &str, bound: &str, outcome: Outcome) {
        let line = format!(
            "| `{}` | {} | {} | {} | {} | {} | {:.2} |",
            self.name,
            self.proves,
            checker,
            self.threads,
            bound,
            outcome.executions,
            outcome.seconds
        );
        eprintln!("{line}");
        if let Ok(path) = std::env::var("MODELS_REPORT") {
            if let Ok(mut f) = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
            {
                // One write per row (O_APPEND): parallel writers cannot interleave a row and its newline.
                let _ = f.write_all(format!("{line}\n").as_bytes());
            }
        }
    }

    /// Explores `body` with loom at this model's preemption bound.
    #[cfg(loom)]
    pub fn loom<F>(&self, body: F) -> Outcome
    where
        F: Fn() + Send + Sync + 'static,
    {
        let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = executions.clone();
        let mut builder = loom::model::Builder::new();
        // `MODELS_LOOM_BOUND` overrides every model's bound (for exploring costs).
        let bound = match std::env::var("MODELS_LOOM_BOUND") {
            Ok(b) if b == "none" => None,
            Ok(b) => Some(b.parse().expect("MODELS_LOOM_BOUND: a number or `none`")),
            Err(_) => self.bound,
        };
        builder.preemption_bound = bound;
        let start = std::time::Instant::now();
        builder.check(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            body();
        });
        let outcome = Outcome {
            executions: executions.load(std::sync::atomic::Ordering::Relaxed),
            seconds: start.elapsed().as_secs_f64(),
        };
        let bound = bound.map_or("∞".to_string(), |b| b.to_string());
        self.report("loom", &bound, outcome);
        outcome
    }

    /// Runs `body` under shuttle's PCT scheduler for `iterations` schedules at bug depth `depth`.
    #[cfg(shuttle)]
    pub fn pct<F>(&self, iterations: usize, depth: usize, body: F) -> Outcome
    where
        F: Fn() + Send + Sync + 'static,
    {
        let executions = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = executions.clone();
        let start = std::time::Instant::now();
        shuttle::check_pct(
            move || {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                body();
            },
            iterations,
            depth,
        );
        let outcome = Outcome {
            executions: executions.load(std::sync::atomic::Ordering::Relaxed),
            seconds: start.elapsed().as_secs_f64(),
        };
        self.report("shuttle PCT", &format!("depth {depth}"), outcome);
        outcome
    }
}

/// Data protected by the lock under test. Every access names the lock state that makes it sound.
#[derive(Debug)]
pub struct Protected<T>(lwlock::sync::UnsafeCell<T>);

// SAFETY: every access goes through `read`/`write`, whose callers promise to hold the lock under
// test in a compatible mode; the model checks that the lock actually orders those accesses.
unsafe impl<T: Send> Sync for Protected<T> {}

impl<T> Protected<T> {
    /// Wraps `value`.
    pub fn new(value: T) -> Self {
        Protected(lwlock::sync::UnsafeCell::new(value))
    }

    /// Reads the value.
    ///
    /// # Safety
    /// The caller holds the lock at least shared, or otherwise knows no writer runs.
    pub unsafe fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        // SAFETY: no concurrent writer (caller's contract); loom checks it.
        self.0.with(|p| f(unsafe { &*p }))
    }

    /// Modifies the value.
    ///
    /// # Safety
    /// The caller holds the lock exclusively, or otherwise knows no other access runs.
    pub unsafe fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: exclusive access (caller's contract); loom checks it.
        self.0.with_mut(|p| f(unsafe { &mut *p }))
    }
}

pub mod mutants;
pub mod scenarios;

/// Defines a `#[test]` that explores a loom model. The doc line is what the model proves; it is
/// also printed in the report.
///
/// ```ignore
/// models::loom_model! {
///     /// Two writers exclude each other and no wakeup is lost.
///     exclusive_exclusive, threads: 2, bound: None, || scenarios::exclusive_exclusive::<L>(2, 2)
/// }
/// ```
///
/// With `then: |outcome| …` the test also runs a check after the exploration (with the
/// [`Outcome`]): for models that count, outside the model, how often an interleaving of interest
/// was explored, and must fail if it never was.
#[macro_export]
macro_rules! loom_model {
    ($(#[doc = $proves:literal])+ $name:ident, threads: $threads:expr, bound: $bound:expr, $body:expr, then: $then:expr) => {
        $(#[doc = $proves])+
        #[test]
        fn $name() {
            let outcome = $crate::Model {
                name: concat!(module_path!(), "::", stringify!($name)),
                proves: concat!($($proves),+).trim_start(),
                threads: $threads,
                bound: $bound,
            }
            .loom($body);
            #[allow(clippy::redundant_closure_call)]
            ($then)(outcome);
        }
    };
    ($(#[doc = $proves:literal])+ $name:ident, threads: $threads:expr, bound: $bound:expr, $body:expr) => {
        $(#[doc = $proves])+
        #[test]
        fn $name() {
            $crate::Model {
                name: concat!(module_path!(), "::", stringify!($name)),
                proves: concat!($($proves),+).trim_start(),
                threads: $threads,
                bound: $bound,
            }
            .loom($body);
        }
    };
}
