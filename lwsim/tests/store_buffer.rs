//! The store buffer (`model.store_buffer_entries`): a plain store retires without waiting for its
//! line and becomes visible when the line arrives, in program order (x86-TSO); the storing thread
//! reads its own store at once (forwarding); an RMW waits for the buffer to drain. Exact on fixed
//! latencies (jitter and arbitration off).

use lwsim::atomic::AtomicU64;
use lwsim::profile::cost;
use lwsim::{now_nanos, Profile, SimConfig};
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::sync::{Arc, Mutex};

#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded<T>(T);

/// `xeon-2s-broadwell` with exact costs: no spread, no arbitration, no residency, and the
/// distance classes (`pair_latency` 0) so a transfer within the socket is `transfer_l3_ns`.
fn profile(entries: u32) -> Profile {
    let mut p = Profile::builtin("xeon-2s-broadwell").unwrap();
    p.set_all("jitter=0,arbitration=0,residency_ns=0,pair_latency=0")
        .unwrap();
    p.set("store_buffer_entries", entries as f64).unwrap();
    p
}

#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    store_cost_ns: u64,
    own_read: u64,
    /// When core 0 first read 7 (ns).
    other_read_early: u64,
    rmw_done_ns: u64,
    store_at_ns: u64,
}

/// Core 0 takes line X (an RMW); core 1 then stores 7 to X and at once reads it back, and core 0
/// reads X right after core 1's store was issued; then core 1 does an RMW on its own line.
fn scenario(p: Profile) -> Seen {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let s2 = seen.clone();
    lwsim::run(SimConfig::new(p, 2), move || {
        let x = Arc::new(Padded(AtomicU64::new(0)));
        let z = Arc::new(Padded(AtomicU64::new(0)));
        let go = Arc::new(Padded(AtomicU64::new(0)));
        let (x0, go0, s0) = (x.clone(), go.clone(), s2.clone());
        let owner = lwsim::thread::spawn(move || {
            x0.0.fetch_add(0, Relaxed);
            go0.0.store(1, Release);
            // Read X until the other core's store is visible; note when.
            loop {
                if x0.0.load(Relaxed) == 7 {
                    s0.lock().unwrap().other_read_early = now_nanos();
                    break;
                }
                lwsim::pause();
            }
        });
        let (x1, z1, go1, s1) = (x.clone(), z.clone(), go.clone(), s2.clone());
        let storer = lwsim::thread::spawn(move || {
            z1.0.fetch_add(1, Relaxed);
            while go1.0.load(Acquire) != 1 {
                lwsim::pause();
            }
            let t0 = now_nanos();
            x1.0.store(7, Relaxed);
            let t1 = now_nanos();
            let own = x1.0.load(Relaxed);
            go1.0.fetch_add(1, Release);
            z1.0.fetch_add(1, Relaxed);
            let t2 = now_nanos();
            let mut s = s1.lock().unwrap();
            s.store_cost_ns = t1 - t0;
            s.own_read = own;
            s.rmw_done_ns = t2 - t0;
            s.store_at_ns = t0;
        });
        owner.join().unwrap();
        storer.join().unwrap();
        assert_eq!(
            x.0.as_std().load(Relaxed),
            7,
            "the buffered store drained by the exit"
        );
    });
    let s = *seen.lock().unwrap();
    s
}

#[test]
fn a_buffered_store_retires_at_once_and_becomes_visible_when_its_line_arrives() {
    let p = profile(32);
    let (hit, transfer) = (p.ps(cost::STORE_HIT), p.ps(cost::TRANSFER_L3));
    let with = scenario(p);
    let without = scenario(profile(0));
    println!("store buffer on: {with:?}\nstore buffer off: {without:?}");
    // Retires at the issue cost (ns, rounded) instead of waiting for the line.
    assert!(with.store_cost_ns <= hit.div_ceil(1000), "{with:?}");
    assert!(
        (without.store_cost_ns + 1) * 1000 >= transfer,
        "{without:?}"
    );
    // The storing thread reads its own store at once.
    assert_eq!(with.own_read, 7);
    assert_eq!(without.own_read, 7);
    // The RMW after it waits until the store is visible: at least one transfer after the store.
    assert!((with.rmw_done_ns + 1) * 1000 >= transfer, "{with:?}");
    // The other core sees the store only once its line has travelled (both ways: the value is
    // written at the grant).
    for s in [with, without] {
        assert!(
            (s.other_read_early + 1) * 1000 >= s.store_at_ns * 1000 + transfer,
            "{s:?}"
        );
    }
}

/// Program order: a store to a far line, then a store to a line the thread owns (a hit) do not
/// become visible out of order: whoever sees the second sees the first.
#[test]
fn buffered_stores_become_visible_in_program_order() {
    let bad = Arc::new(Mutex::new(0u32));
    let b2 = bad.clone();
    lwsim::run(SimConfig::new(profile(32), 2), move || {
        let x = Arc::new(Padded(AtomicU64::new(0)));
        let y = Arc::new(Padded(AtomicU64::new(0)));
        let (x0, y0, b0) = (x.clone(), y.clone(), b2.clone());
        let reader = lwsim::thread::spawn(move || {
            x0.0.fetch_add(0, Relaxed); // takes X
            for _ in 0..2000 {
                let yv = y0.0.load(Acquire);
                let xv = x0.0.load(Acquire);
                if yv == 1 && xv == 0 {
                    *b0.lock().unwrap() += 1;
                }
                if yv == 1 {
                    break;
                }
            }
        });
        let (x1, y1) = (x.clone(), y.clone());
        let writer = lwsim::thread::spawn(move || {
            y1.0.fetch_add(0, Relaxed); // owns Y: the second store hits
            lwsim::compute(20);
            x1.0.store(1, Release);
            y1.0.store(1, Release);
        });
        reader.join().unwrap();
        writer.join().unwrap();
    });
    assert_eq!(*bad.lock().unwrap(), 0, "Y became visible before X");
}

/// A full buffer stalls the next store until the oldest entry drains.
#[test]
fn a_full_store_buffer_stalls() {
    let cost_of = |entries: u32| {
        let out = Arc::new(Mutex::new(0u64));
        let o2 = out.clone();
        lwsim::run(SimConfig::new(profile(entries), 2), move || {
            let lines: Arc<Vec<Padded<AtomicU64>>> =
                Arc::new((0..8).map(|_| Padded(AtomicU64::new(0))).collect());
            let flag = Arc::new(Padded(AtomicU64::new(0)));
            let (l0, f0) = (lines.clone(), flag.clone());
            let other = lwsim::thread::spawn(move || {
                for l in l0.iter() {
                    l.0.fetch_add(1, Relaxed);
                }
                f0.0.fetch_add(1, Release);
                while f0.0.load(Acquire) != 2 {
                    lwsim::pause();
                }
            });
            let (l1, f1, o) = (lines.clone(), flag.clone(), o2.clone());
            let writer = lwsim::thread::spawn(move || {
                while f1.0.load(Acquire) != 1 {
                    lwsim::pause();
                }
                let t0 = now_nanos();
                for l in l1.iter() {
                    l.0.store(5, Relaxed);
                }
                *o.lock().unwrap() = now_nanos() - t0;
                f1.0.fetch_add(1, Release);
            });
            other.join().unwrap();
            writer.join().unwrap();
        });
        let v = *out.lock().unwrap();
        v
    };
    let (big, small) = (cost_of(32), cost_of(2));
    println!("8 stores to lines held elsewhere: {big} ns with 32 entries, {small} ns with 2");
    assert!(big < 10, "{big}");
    assert!(small > 100, "{small}");
}

/// Program order on one atomic, and a thread's own view of it: a thread that owns X buffers a
/// store to a far line, then stores 1, 2, … to X (hits, buffered behind the far store) and reads
/// X back after each. The store issued just before the far store drains must not be written
/// ahead of the older, still buffered stores to X: they would then overwrite it with a stale
/// value (a lost update; in lwlock, a wait-list link reset after it was set, a lost wakeup). The
/// far line's transfer ends at a different phase of the loop for each of the leading stores,
/// so one of the rounds issues a store right across the drain.
#[test]
fn a_store_does_not_pass_older_buffered_stores_to_the_same_atomic() {
    const ROUNDS: usize = 8;
    let stale = Arc::new(Mutex::new(Vec::new()));
    let s2 = stale.clone();
    lwsim::run(SimConfig::new(profile(256), 2), move || {
        let far: Arc<Vec<Padded<AtomicU64>>> =
            Arc::new((0..ROUNDS).map(|_| Padded(AtomicU64::new(0))).collect());
        let flag = Arc::new(Padded(AtomicU64::new(0)));
        let (f0, g0) = (far.clone(), flag.clone());
        let other = lwsim::thread::spawn(move || {
            for l in f0.iter() {
                l.0.fetch_add(1, Relaxed); // takes every far line
            }
            g0.0.fetch_add(1, Release);
        });
        let (f1, g1, s) = (far.clone(), flag.clone(), s2.clone());
        let writer = lwsim::thread::spawn(move || {
            let x = Padded(AtomicU64::new(0));
            while g1.0.load(Acquire) != 1 {
                lwsim::pause();
            }
            let mut v = 0;
            for (round, l) in f1.iter().enumerate() {
                x.0.fetch_add(0, Relaxed); // owns X, drains the buffer
                l.0.store(1, Relaxed); // a miss: buffered until the line arrives
                for _ in 0..round {
                    v += 1;
                    x.0.store(v, Relaxed); // shifts the loop's phase by one store
                }
                for _ in 0..60 {
                    v += 1;
                    x.0.store(v, Relaxed);
                    let seen = x.0.load(Relaxed);
                    if seen != v {
                        s.lock().unwrap().push((round, v, seen));
                    }
                }
            }
            x.0.fetch_add(0, Relaxed);
            let last = x.0.load(Relaxed);
            if last != v {
                s.lock().unwrap().push((ROUNDS, v, last));
            }
        });
        other.join().unwrap();
        writer.join().unwrap();
    });
    let stale = stale.lock().unwrap();
    assert!(
        stale.is_empty(),
        "X read back older than the thread's last store to it ((round, stored, read)): {stale:?}"
    );
}

#[derive(Debug, Default, Clone, Copy)]
struct SubWord {
    store_cost_ns: u64,
    own_read: u64,
    own_read_cost_ns: u64,
    last: u64,
}

/// Core 0 takes line X (an RMW) and then sets a high bit of X; core 1, once core 0 has the line,
/// replaces X's low byte (1 -> 2) with a sub-word store and reads X back at once. With
/// `full`, core 1 writes the whole word instead (its value computed from X's initial 1).
fn sub_word_scenario(p: Profile, full: bool) -> SubWord {
    let seen = Arc::new(Mutex::new(SubWord::default()));
    let s2 = seen.clone();
    lwsim::run(SimConfig::new(p, 2), move || {
        let x = Arc::new(Padded(AtomicU64::new(1)));
        let go = Arc::new(Padded(AtomicU64::new(0)));
        let (x0, go0) = (x.clone(), go.clone());
        let owner = lwsim::thread::spawn(move || {
            x0.0.fetch_add(0, Relaxed);
            go0.0.store(1, Release);
            x0.0.fetch_or(1 << 20, Relaxed);
        });
        let (x1, go1, s1) = (x.clone(), go.clone(), s2.clone());
        let storer = lwsim::thread::spawn(move || {
            while go1.0.load(Acquire) != 1 {
                lwsim::pause();
            }
            let t0 = now_nanos();
            if full {
                x1.0.store(2, Relaxed);
            } else {
                x1.0.store_field(0xff, 1, 2, Relaxed);
            }
            let t1 = now_nanos();
            let own = x1.0.load(Relaxed);
            let t2 = now_nanos();
            let mut s = s1.lock().unwrap();
            s.store_cost_ns = t1 - t0;
            s.own_read = own;
            s.own_read_cost_ns = t2 - t1;
        });
        owner.join().unwrap();
        storer.join().unwrap();
        s2.lock().unwrap().last = x.0.as_std().load(Relaxed);
    });
    let s = *seen.lock().unwrap();
    s
}

/// A sub-word store (`store_field`, the kernel's byte store into a word others RMW) retires into
/// the buffer like a store, writes only its bits at the drain (the other core's bit survives,
/// where a whole-word store computed from the old value loses it), and a load of the same
/// atomic by the storing thread is not forwarded from it: the load waits for the drain.
#[test]
fn a_sub_word_store_is_buffered_and_replaces_only_its_bits() {
    let p = profile(32);
    let (hit, transfer) = (p.ps(cost::STORE_HIT), p.ps(cost::TRANSFER_L3));
    let sub = sub_word_scenario(p.clone(), false);
    let full = sub_word_scenario(p, true);
    println!("sub-word: {sub:?}\nfull-width: {full:?}");
    assert!(sub.store_cost_ns <= hit.div_ceil(1000), "{sub:?}");
    assert_eq!(sub.last & 0xff, 2, "{sub:?}");
    // The storing thread reads the merged word (not its own store's bits alone).
    assert_eq!(sub.own_read, (1 << 20) | 2, "{sub:?}");
    // The other core's write lands before the drain (a whole-word store then overwrites it);
    // the sub-word store keeps it.
    assert_eq!(full.last, 2, "{full:?}");
    assert_eq!(sub.last, (1 << 20) | 2, "{sub:?}");
    // The whole-word store is forwarded at a hit's cost; the sub-word store's reader waits for
    // the line (at least one transfer).
    assert!(full.own_read_cost_ns * 1000 < transfer, "{full:?}");
    assert!((sub.own_read_cost_ns + 1) * 1000 >= transfer, "{sub:?}");
}

/// The sub-word store checks its precondition at the write: bits that no longer hold `from`
/// mean the field has another writer (a protocol bug), and the simulation stops.
#[test]
#[should_panic(expected = "sub-word store found its bits")]
fn a_sub_word_store_whose_field_changed_panics() {
    lwsim::run(SimConfig::new(profile(32), 1), || {
        let x = Arc::new(Padded(AtomicU64::new(0)));
        let x1 = x.clone();
        lwsim::thread::spawn(move || x1.0.store_field(0xff, 1, 0, Release))
            .join()
            .unwrap();
    });
}

/// `swap_field` (x86's half-word `xchg` inside the word) replaces only its bits, returns the
/// whole previous word, and is one RMW: it waits for the store buffer like any RMW.
#[test]
fn a_sub_word_exchange_replaces_only_its_bits() {
    let got = Arc::new(Mutex::new((0u64, 0u64)));
    let g2 = got.clone();
    lwsim::run(SimConfig::new(profile(32), 1), move || {
        let x = Arc::new(Padded(AtomicU64::new(0x1234_0101)));
        let x1 = x.clone();
        let g = g2.clone();
        lwsim::thread::spawn(move || {
            let old = x1.0.swap_field(!0xffff, 0x9999_0000, Relaxed);
            *g.lock().unwrap() = (old, x1.0.load(Relaxed));
        })
        .join()
        .unwrap();
    });
    assert_eq!(*got.lock().unwrap(), (0x1234_0101, 0x9999_0101));
}
