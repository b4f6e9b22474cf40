//! `--shard K/N`: which of N parts of a plan a run is (the plan's partition is
//! [`crate::shard`]'s).

/// `--shard K/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardId {
    /// This part, 0 to `n - 1`.
    pub k: usize,
    /// Parts.
    pub n: usize,
}

impl ShardId {
    /// `shard-K-of-N`: the directory of a shard whose `--out` was not given.
    pub fn dir_name(&self) -> String {
        format!("shard-{}-of-{}", self.k, self.n)
    }
}

impl std::fmt::Display for ShardId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// Parses `K/N` (K from 0 to N-1).
pub fn parse_shard(s: &str) -> Result<ShardId, String> {
    let (k, n) = s
        .split_once('/')
        .ok_or_else(|| "expected K/N, e.g. 0/4 (the first of four parts)".to_string())?;
    let num = |x: &str, what: &str| {
        x.trim()
            .parse::<usize>()
            .map_err(|_| format!("{what} '{x}' is not a whole number (expected K/N, e.g. 0/4)"))
    };
    let (k, n) = (num(k, "K")?, num(n, "N")?);
    if n == 0 {
        return Err("N must be at least 1".into());
    }
    if k >= n {
        return Err(format!(
            "K must be below N: the {n} parts are 0/{n} to {}/{n} (K counts from 0, as \
             SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX do)",
            n - 1
        ));
    }
    Ok(ShardId { k, n })
}
