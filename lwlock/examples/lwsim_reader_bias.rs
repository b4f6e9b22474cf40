//! `lwsim_reader_bias`: read scaling of the reader-biased LWLock (BRAVO) against the atomic
//! LWLock on the simulated many-core machine, and the cost of its exclusive path.
//!
//! ```text
//! RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim \
//!   cargo run --release -p lwlock --example lwsim_reader_bias -- [PROFILE] [CORES,...]
//! ```
//!
//! Defaults: profile `xeon-2s-broadwell`, cores `1,2,4,8,16,32,64`. For each core count (one
//! thread per core, 1 ms of virtual time, 50 ns critical sections, 200 ns between operations)
//! it prints, for read-only work and for 1 % writes, each lock's throughput, its scaling against
//! one core, and the lock lines' transfers per operation; then, at one core, the exclusive-only
//! throughput of both (the exclusive path's cost with the bias off).

#[cfg(not(lwsim))]
fn main() {
    eprintln!(
        "lwsim_reader_bias: build with RUSTFLAGS=\"--cfg lwsim\" and a separate \
         CARGO_TARGET_DIR (see the module docs)"
    );
    std::process::exit(2);
}

#[cfg(lwsim)]
fn main() {
    use lwlock::reference::sweep::{run_lock, Workload};
    use lwlock::sync::lwsim::{Profile, SimConfig};
    use lwlock::{RawAtomicLwLock, RawReaderBiasLwLock};

    let args: Vec<String> = std::env::args().skip(1).collect();
    let profile = args
        .first()
        .cloned()
        .unwrap_or_else(|| "xeon-2s-broadwell".into());
    let cores: Vec<usize> = match args.get(1) {
        Some(list) => list
            .split(',')
            .map(|c| {
                c.parse().unwrap_or_else(|_| {
                    eprintln!("lwsim_reader_bias: CORES: not a number: {c:?}");
                    std::process::exit(2)
                })
            })
            .collect(),
        None => vec![1, 2, 4, 8, 16, 32, 64],
    };
    let prof = Profile::load(&profile).unwrap_or_else(|e| {
        eprintln!("lwsim_reader_bias: PROFILE: {e}");
        std::process::exit(2)
    });
    let base = Workload {
        threads: 1,
        duration_ns: 1_000_000,
        shared_permille: 1000,
        cs_ns: 50,
        think_ns: 200,
        touch_data: true,
    };
    for permille in [1000u32, 990] {
        println!("\nshared_permille = {permille} on {profile}");
        println!("| cores | atomic Mops/s | x1 | lines/op | reader-bias Mops/s | x1 | lines/op | bias/atomic |");
        println!("|---|---|---|---|---|---|---|---|");
        let (mut a1, mut b1) = (0.0, 0.0);
        for &n in &cores {
            if n > prof.hw_threads() {
                continue;
            }
            let w = Workload {
                threads: n,
                shared_permille: permille,
                ..base.clone()
            };
            let a = run_lock::<RawAtomicLwLock>(SimConfig::new(prof.clone(), n), &w);
            let b = run_lock::<RawReaderBiasLwLock>(SimConfig::new(prof.clone(), n), &w);
            let (ta, tb) = (a.throughput(&w) / 1e6, b.throughput(&w) / 1e6);
            if a1 == 0.0 {
                (a1, b1) = (ta, tb);
            }
            println!(
                "| {n} | {ta:.2} | {:.2} | {:.2} | {tb:.2} | {:.2} | {:.2} | {:.2} |",
                ta / a1,
                a.transfers_per_op(),
                tb / b1,
                b.transfers_per_op(),
                tb / ta
            );
        }
    }
    let w = Workload {
        threads: 1,
        shared_permille: 0,
        ..base
    };
    let a = run_lock::<RawAtomicLwLock>(SimConfig::new(prof.clone(), 1), &w);
    let b = run_lock::<RawReaderBiasLwLock>(SimConfig::new(prof.clone(), 1), &w);
    println!(
        "\nexclusive only, 1 core: atomic {:.2} Mops/s, reader-bias {:.2} Mops/s ({:.3}x)",
        a.throughput(&w) / 1e6,
        b.throughput(&w) / 1e6,
        b.throughput(&w) / a.throughput(&w)
    );
}
