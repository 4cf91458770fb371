//! Per-message noise, for a prediction's spread (`jitter` of the model parameters).
//!
//! Each message that enters the network carries its bytes times a factor
//! exp(σ·Z − σ²/2), Z a standard normal variate (mean factor 1), drawn in the
//! engine's event order from a SplitMix64 stream seeded with `seed`, so a seed
//! gives the same run every time and a set of seeds the distribution of the
//! makespan. σ is the spread of one flow's time that the calibration measured
//! (docs/models.md, *A prediction's spread*), one for every size or σ(m) by the
//! message's size as scheduled; the message records keep the schedule's bytes.

use crate::params::JitterParams;

/// SplitMix64's increment (2^64 / the golden ratio).
pub(crate) const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: the state `z` mixed into 64 well-spread bits.
pub(crate) fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The noise stream of one run.
#[derive(Clone, Debug)]
pub struct Jitter {
    sigma: f64,
    sizes: Vec<u64>,
    sigmas: Vec<f64>,
    state: u64,
    spare: Option<f64>,
}

impl Jitter {
    /// The stream of `p` (σ must be finite and >= 0, the sizes increasing; checked by
    /// `predict::run`).
    pub fn new(p: &JitterParams) -> Self {
        Jitter {
            sigma: p.sigma,
            sizes: p.sizes.clone(),
            sigmas: p.sigmas.clone(),
            state: p.seed,
            spare: None,
        }
    }

    /// σ for a message of `bytes`: `sigma`, or σ(m) linear between the table's sizes and
    /// its end values beyond them.
    pub fn sigma_at(&self, bytes: u64) -> f64 {
        let (xs, ys) = (&self.sizes, &self.sigmas);
        if xs.is_empty() {
            return self.sigma;
        }
        let i = xs.partition_point(|&x| x <= bytes);
        if i == 0 {
            return ys[0];
        }
        if i == xs.len() {
            return ys[xs.len() - 1];
        }
        let (x0, x1) = (xs[i - 1] as f64, xs[i] as f64);
        ys[i - 1] + (ys[i] - ys[i - 1]) * (bytes as f64 - x0) / (x1 - x0)
    }

    /// SplitMix64 as a float in (0, 1].
    fn uniform(&mut self) -> f64 {
        self.state = self.state.wrapping_add(GOLDEN);
        ((mix64(self.state) >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal variate (Box-Muller, the pair's second kept for the next call).
    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let (u1, u2) = (self.uniform(), self.uniform());
        let r = (-2.0 * u1.ln()).sqrt();
        let a = std::f64::consts::TAU * u2;
        self.spare = Some(r * a.sin());
        r * a.cos()
    }

    /// `bytes` times the next factor, at least 1 byte (0 stays 0).
    pub fn scale(&mut self, bytes: u64) -> u64 {
        let sigma = self.sigma_at(bytes);
        if bytes == 0 || sigma == 0.0 {
            return bytes;
        }
        let f = (sigma * self.normal() - sigma * sigma / 2.0).exp();
        ((bytes as f64 * f).round() as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_have_mean_one_and_the_given_spread() {
        let mut j = Jitter::new(&JitterParams {
            sigma: 0.2,
            seed: 7,
            ..Default::default()
        });
        let n = 200_000;
        let xs: Vec<f64> = (0..n).map(|_| j.scale(1_000_000) as f64 / 1e6).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
        let lmean = logs.iter().sum::<f64>() / n as f64;
        let sd = (logs.iter().map(|l| (l - lmean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean - 1.0).abs() < 0.003, "mean {mean}");
        assert!((sd - 0.2).abs() < 0.002, "sd of the log {sd}");
        assert!((lmean + 0.02).abs() < 0.002, "mean of the log {lmean}");
    }

    #[test]
    fn a_seed_repeats_and_zero_is_kept() {
        let p = JitterParams {
            sigma: 0.3,
            seed: 42,
            ..Default::default()
        };
        let (mut a, mut b) = (Jitter::new(&p), Jitter::new(&p));
        let xa: Vec<u64> = (0..100).map(|_| a.scale(4096)).collect();
        let xb: Vec<u64> = (0..100).map(|_| b.scale(4096)).collect();
        assert_eq!(xa, xb);
        assert_eq!(a.scale(0), 0);
        let mut none = Jitter::new(&JitterParams {
            sigma: 0.0,
            seed: 1,
            ..Default::default()
        });
        assert_eq!(none.scale(12345), 12345);
    }

    #[test]
    fn a_table_gives_each_size_its_own_spread() {
        let p = JitterParams {
            sigma: 0.9,
            seed: 3,
            sizes: vec![1000, 3000],
            sigmas: vec![0.1, 0.3],
        };
        let j = Jitter::new(&p);
        assert_eq!(j.sigma_at(10), 0.1);
        assert_eq!(j.sigma_at(1000), 0.1);
        assert!((j.sigma_at(2000) - 0.2).abs() < 1e-12);
        assert_eq!(j.sigma_at(3000), 0.3);
        assert_eq!(j.sigma_at(1 << 40), 0.3);
        for (bytes, want) in [(1000u64, 0.1), (1 << 40, 0.3)] {
            let mut j = Jitter::new(&p);
            let n = 100_000;
            let logs: Vec<f64> = (0..n)
                .map(|_| (j.scale(bytes) as f64 / bytes as f64).ln())
                .collect();
            let m = logs.iter().sum::<f64>() / n as f64;
            let sd = (logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / n as f64).sqrt();
            assert!(
                (sd - want).abs() < 0.01,
                "{bytes} B: sd of the log {sd}, want {want}"
            );
        }
    }
}
