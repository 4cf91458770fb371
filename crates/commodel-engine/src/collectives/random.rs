//! `random-pairs`: the random communication patterns of Zhu et al.,
//! section 7, in passes.

use super::program::Req;
use super::{CollectiveError, Ctx};
use crate::schedule::Schedule;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n >= 1) by multiply-shift (bias below n / 2^64).
    pub(crate) fn below(&mut self, n: u32) -> u32 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u32
    }
}

/// d = `opts.degree` passes. In pass k, each node i = 0..P-1 in turn draws a
/// node j uniformly among the P-1 others (one draw, `below(P-1)`, skipping
/// i), then a coin (the top bit of the next draw); on 1 the pass gets the
/// transfer i -> j of `size` bytes with tag k. Both draws happen for every
/// i, so the stream is fixed by the seed alone.
///
/// All transfers of a pass are posted at once (isend on i, irecv on j); a
/// rank posts its pass k+1 operations after all its pass k operations have
/// finished (a waitall per pass). Zhu et al. run all d matchings of a test
/// together; with d = 1 the two readings agree.
pub(crate) fn random_pairs(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    let p = ctx.p;
    let d = ctx.opts.degree;
    if d == 0 {
        return Err(ctx.invalid("degree", d, "at least one pass is needed"));
    }
    ctx.check_ops(2 * d as u64 * p as u64)?;
    let mut rng = SplitMix64::new(ctx.opts.seed);
    let mut mpi = ctx.mpi();
    if p < 2 {
        return mpi.finish();
    }
    let mut pass_ops: Vec<Vec<Req>> = vec![Vec::new(); p as usize];
    for k in 0..d {
        let mut pairs = Vec::new();
        for i in 0..p {
            let mut j = rng.below(p - 1);
            if j >= i {
                j += 1;
            }
            if rng.next_u64() >> 63 == 1 {
                pairs.push((i, j));
            }
        }
        for (i, j) in pairs {
            let s = mpi.isend(i, j, ctx.size, k);
            pass_ops[i as usize].push(s);
            let r = mpi.irecv(j, i, ctx.size, k);
            pass_ops[j as usize].push(r);
        }
        for ops in pass_ops.iter_mut() {
            mpi.waitall(ops);
            ops.clear();
        }
    }
    mpi.finish()
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn splitmix_reference_values() {
        // First outputs for seed 0 (published with the algorithm's reference code).
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn below_is_in_range_and_covers() {
        let mut g = SplitMix64::new(7);
        let mut seen = [0u32; 5];
        for _ in 0..1000 {
            seen[g.below(5) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| c > 150), "{seen:?}");
    }
}
