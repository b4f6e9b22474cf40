//! The PRNG and the random delays of a torture run (locktorture's `torture_random` and its
//! short and long holds).

use std::thread;
use std::time::Duration;

pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xorshift64*: small, fast, good enough for choosing operations and delays.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(splitmix(seed) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    pub(crate) fn pct(&mut self, p: u8) -> bool {
        self.below(100) < u64::from(p)
    }
}

/// A delay inside a critical section: mostly a few spins, sometimes a yield (so that the holder
/// is preempted while others pile up), rarely a short sleep (locktorture's long hold).
pub(crate) fn hold_delay(rng: &mut Rng) {
    let r = rng.next();
    if r % 65_536 == 0 {
        thread::sleep(Duration::from_micros(200));
    } else if r % 512 == 1 {
        thread::yield_now();
    } else {
        for _ in 0..(r >> 59) {
            std::hint::spin_loop();
        }
    }
}

/// A delay between operations: spins, sometimes a yield, rarely a sleep long enough for the lock
/// to go idle.
pub(crate) fn think_delay(rng: &mut Rng) {
    let r = rng.next();
    if r % 4096 == 0 {
        thread::sleep(Duration::from_micros(10 + (r >> 32) % 500));
    } else if r % 64 == 1 {
        thread::yield_now();
    } else {
        for _ in 0..(r >> 58) {
            std::hint::spin_loop();
        }
    }
}
