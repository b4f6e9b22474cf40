//! Random streams: each model draws from a stream of its own, keyed by the run's seed (see the
//! machine's docs, *Random streams*), and the hash they are made of.

pub(crate) fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A model's seeded random stream: its `n`-th draw is a hash of its key and `n`, so one model's
/// draws depend only on its key and on how many it made.
#[derive(Clone, Debug)]
pub(crate) struct Stream {
    key: u64,
    n: u64,
}

impl Stream {
    /// The stream keyed by `key` (a run's seed, or a hash of it).
    pub fn new(key: u64) -> Stream {
        Stream { key, n: 0 }
    }
    /// The next draw, uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        self.n = self.n.wrapping_add(1);
        (splitmix(self.key ^ self.n.wrapping_mul(0xD1B5_4A32_D192_ED03)) >> 11) as f64
            / (1u64 << 53) as f64
    }
}
