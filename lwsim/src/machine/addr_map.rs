//! The maps of line and futex addresses, with a tiny deterministic hasher.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A tiny multiplicative hasher for line and futex addresses (deterministic, fast).
#[derive(Default)]
pub(crate) struct AddrHasher(u64);
impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(5) ^ *b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
pub(crate) type Map<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;
