//! Determinism of the simulator alone: the same program, profile, core count and seed give the
//! same counters to the picosecond, in one process and across processes (different ASLR layouts),
//! with futex sleeps, spinning and more threads than cores (preemptions) in the mix.

use lwsim::atomic::AtomicU32;
use lwsim::{now_nanos, Profile, SimConfig};
use std::sync::atomic::Ordering;
use std::sync::Arc;

// Every block on lines of its own: an object's lines depend only on its own layout.
#[global_allocator]
static LINE_ALIGNED: lwsim::LineAligned = lwsim::LineAligned;

/// A value alone on its 64-byte line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

type Fingerprint = (u64, Vec<lwsim::CoreCounters>, Vec<lwsim::LineCounters>, u64);

/// 12 threads on 4 cores for 8 ms of virtual time: each iteration takes, with probability
/// `mutex_permille`/1000, the futex mutex (sleeping when it is held), else a test-and-set
/// spinlock (spinning with PAUSE), works a while inside, then thinks a pseudo-random time.
/// Returns the operations, the run's fingerprint and its report.
fn contended(seed: u64, mutex_permille: u64) -> (u64, Fingerprint, lwsim::Report) {
    let ops = Arc::new(std::sync::Mutex::new(0u64));
    let o = ops.clone();
    let cfg = SimConfig::new(Profile::builtin("xeon-2s-broadwell").unwrap(), 4).seed(seed);
    let report = lwsim::run(cfg, move || {
        let mutex = Arc::new(lwsim::Mutex::new(0u64));
        let spin = Arc::new(Padded(AtomicU32::new(0)));
        lwsim::watch("mutex", &*mutex as *const lwsim::Mutex<u64>);
        lwsim::watch("spin", &spin.0 as *const AtomicU32);
        let hs: Vec<_> = (0..12u64)
            .map(|i| {
                let (mutex, spin) = (mutex.clone(), spin.clone());
                lwsim::thread::spawn(move || {
                    let mut rng = 0x9E37_79B9_7F4A_7C15 ^ seed ^ ((i + 1) << 32);
                    let mut n = 0u64;
                    while now_nanos() < 8_000_000 {
                        if xorshift(&mut rng) % 1000 < mutex_permille {
                            let mut g = mutex.lock().unwrap();
                            *g += 1;
                            lwsim::compute(2_000);
                        } else {
                            while spin.0.swap(1, Ordering::Acquire) != 0 {
                                lwsim::pause();
                            }
                            lwsim::compute(1_000);
                            spin.0.store(0, Ordering::Release);
                        }
                        n += 1;
                        lwsim::compute(xorshift(&mut rng) % 500);
                    }
                    n
                })
            })
            .collect();
        let sum: u64 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        *o.lock().unwrap() = sum;
    });
    let n = *ops.lock().unwrap();
    (n, report.fingerprint(), report)
}

/// Same seed and profile: identical counters, to the picosecond; and the runs did exercise the
/// futex and the run queues (half on the mutex: sleeps and wakeups queued on busy cores) and
/// preemption (only the spinlock: nobody leaves a core, so slices end with threads queued).
#[test]
fn determinism_same_seed_same_counters() {
    let (na, a, r) = contended(3, 500);
    let (nb, b, _) = contended(3, 500);
    assert_eq!(na, nb);
    assert_eq!(a, b);
    let t = r.total();
    assert!(na > 0, "{}", r.summary());
    assert!(
        t.futex_sleeps > 0
            && t.futex_wakes > 0
            && t.pauses > 0
            && t.context_switches() > 0
            && t.dispatches > 0,
        "{}",
        r.summary()
    );
    assert!(r.line("mutex").unwrap().transfers() > 0, "{}", r.summary());
    let (na, a, r) = contended(3, 0);
    let (nb, b, _) = contended(3, 0);
    assert_eq!(na, nb);
    assert_eq!(a, b);
    assert!(r.total().preemptions > 0, "{}", r.summary());
    assert_eq!(r.total().futex_sleeps, 0, "{}", r.summary());
}

/// The child of [`determinism_across_processes`]: prints the fingerprint of one run.
#[test]
#[ignore = "run as a child process by determinism_across_processes"]
fn determinism_child() {
    if std::env::var_os("LWSIM_DETERMINISM_CHILD").is_none() {
        return;
    }
    let (n, f, _) = contended(11, 500);
    println!("FINGERPRINT {n} {f:?}");
}

/// Two processes (different ASLR layouts: no result may depend on an address beyond which line
/// it is in) give identical counters.
#[test]
fn determinism_across_processes() {
    let exe = std::env::current_exe().unwrap();
    let run = || {
        let out = std::process::Command::new(&exe)
            .args(["determinism_child", "--exact", "--ignored", "--nocapture"])
            .env("LWSIM_DETERMINISM_CHILD", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        stdout
            .lines()
            .find(|l| l.starts_with("FINGERPRINT"))
            .unwrap_or_else(|| panic!("child printed no fingerprint: {stdout}"))
            .to_string()
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b, "two processes disagree");
}
