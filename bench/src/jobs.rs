//! `--jobs`: a sweep's simulated trials on several OS threads, their results in sweep order.
//!
//! Each simulated trial is one simulation, deterministic and single-threaded: it runs on the OS
//! thread that calls `lwsim::run`, in that thread's own machine (the simulator's state, the
//! executor's and the model statics of `lwlock::sync`, such as the wait-record table the sampler
//! reads, are per OS thread or per simulation). So trials can run side by side on OS threads
//! without sharing anything a figure depends on, and [`run_ordered`] hands their results to the
//! writer in the order of the task list, whatever the number of threads and whichever finishes
//! first: the files are the same for every `--jobs`.
//!
//! The real engine never runs here: its trials measure this machine, one at a time.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

/// Stack of a job thread: the size of a main thread's, which is where a sweep ran before
/// `--jobs` (the simulated threads run on the simulator's own stacks; this is the executor's).
const STACK: usize = 8 << 20;

/// The default `--jobs`: every local core.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `run` on every task on up to `jobs` OS threads and calls `sink(i, result)` for task 0,
/// 1, 2, ... in order, on the calling thread, as soon as each result and all before it are in.
/// A `sink` error stops the dispatch of further tasks and is returned once the tasks already
/// running have finished (their results are dropped): tasks are dispatched in order, so every
/// task before the failing one has run and been handed to `sink`.
pub fn run_ordered<T: Sync, R: Send>(
    jobs: usize,
    tasks: &[T],
    run: impl Fn(&T) -> R + Sync,
    mut sink: impl FnMut(usize, R) -> Result<(), String>,
) -> Result<(), String> {
    let jobs = jobs.clamp(1, tasks.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<(usize, R)>();
        for j in 0..jobs {
            let tx = tx.clone();
            let (next, stop, run) = (&next, &stop, &run);
            std::thread::Builder::new()
                .name(format!("lwbench-job-{j}"))
                .stack_size(STACK)
                .spawn_scoped(s, move || {
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= tasks.len() {
                            break;
                        }
                        let r = run(&tasks[i]);
                        if tx.send((i, r)).is_err() {
                            break;
                        }
                    }
                })
                .expect("spawn a job thread");
        }
        drop(tx);
        let mut done: BTreeMap<usize, R> = BTreeMap::new();
        let mut want = 0;
        // Ends when every job thread has exited (all senders dropped).
        while let Ok((i, r)) = rx.recv() {
            done.insert(i, r);
            while let Some(r) = done.remove(&want) {
                if let Err(e) = sink(want, r) {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
                want += 1;
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn results_come_in_task_order_whatever_finishes_first() {
        // Early tasks take longest, so with 3 threads later ones finish first.
        let tasks: Vec<u64> = (0..12).collect();
        for jobs in [1, 3, 64] {
            let mut seen = Vec::new();
            run_ordered(
                jobs,
                &tasks,
                |&t| {
                    std::thread::sleep(Duration::from_millis(12 - t));
                    t * 10
                },
                |i, r| {
                    seen.push((i, r));
                    Ok(())
                },
            )
            .unwrap();
            let want: Vec<(usize, u64)> = (0..12).map(|i| (i, i as u64 * 10)).collect();
            assert_eq!(seen, want, "jobs {jobs}");
        }
    }

    #[test]
    fn a_sink_error_stops_dispatch_after_the_tasks_before_it() {
        let tasks: Vec<usize> = (0..100).collect();
        let ran = AtomicUsize::new(0);
        let mut seen = Vec::new();
        let e = run_ordered(
            2,
            &tasks,
            |&t| {
                ran.fetch_add(1, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(1));
                t
            },
            |i, _| {
                seen.push(i);
                if i == 5 {
                    Err("five".into())
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(e, Err("five".to_string()));
        assert_eq!(seen, vec![0, 1, 2, 3, 4, 5]);
        assert!(ran.load(Ordering::Relaxed) < 100, "dispatch went on");
    }

    #[test]
    fn no_tasks_is_no_work() {
        let tasks: Vec<u8> = Vec::new();
        run_ordered(4, &tasks, |_| unreachable!(), |_, _: ()| unreachable!()).unwrap();
    }
}
