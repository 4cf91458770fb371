//! Simulated time: integer picoseconds, and per-byte costs with a fraction.
//!
//! A `u64` of picoseconds holds 213 days. Every model computes times with
//! checked arithmetic: a time beyond that range is an [`Overflow`] naming the
//! operation being handled, never a wrapped or capped value.
//!
//! Per-byte costs (LogGOPS `G` and `O`, Hockney's beta) are [`PerByte`]:
//! picoseconds per byte with 32 fractional bits. A cost is represented to
//! within 2^-33 ps per byte, a relative error below 2e-10 at 10 Tbit/s
//! (0.8 ps/B); the cost of m bytes is rounded to the nearest picosecond
//! (halves up) once, not per byte.

/// A point in simulated time or a duration, in picoseconds.
pub type Time = u64;

/// Picoseconds per nanosecond (GOAL's and LogGOPSim's time unit).
pub const PS_PER_NS: Time = 1_000;
/// Picoseconds per second.
pub const PS_PER_S: Time = 1_000_000_000_000;

/// Simulated time left the range of [`Time`] (0 to 2^64-1 ps) while the
/// operation with this id (in its [`crate::schedule::Schedule`]) was handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Overflow(pub u32);

/// `a + b`, or [`Overflow`] of operation `op`.
#[inline]
pub fn add(a: Time, b: Time, op: u32) -> Result<Time, Overflow> {
    a.checked_add(b).ok_or(Overflow(op))
}

/// A cost per byte: picoseconds per byte with 32 fractional bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PerByte(u64);

/// Fractional bits of [`PerByte`].
const FRACTION_BITS: u32 = 32;

impl PerByte {
    pub const ZERO: PerByte = PerByte(0);

    /// `ps` picoseconds per byte, rounded to the nearest 2^-32 ps; `None`
    /// unless `0 <= ps < 2^32` (4.3 ms per byte).
    pub fn from_ps(ps: f64) -> Option<PerByte> {
        let raw = (ps * (1u64 << FRACTION_BITS) as f64).round();
        (ps >= 0.0 && raw < u64::MAX as f64).then_some(PerByte(raw as u64))
    }

    /// A whole number of picoseconds per byte (`None` from 2^32 ps on).
    pub fn from_whole_ps(ps: u64) -> Option<PerByte> {
        (ps >> (64 - FRACTION_BITS) == 0).then_some(PerByte(ps << FRACTION_BITS))
    }

    /// Picoseconds per byte.
    pub fn as_ps(self) -> f64 {
        self.0 as f64 / (1u64 << FRACTION_BITS) as f64
    }

    /// The cost of `bytes` bytes in picoseconds, rounded to the nearest (halves
    /// up), as a `u128` (it always fits).
    #[inline]
    pub fn cost_wide(self, bytes: u64) -> u128 {
        (self.0 as u128 * bytes as u128 + (1u128 << (FRACTION_BITS - 1))) >> FRACTION_BITS
    }

    /// The cost of `bytes` bytes in picoseconds, rounded to the nearest
    /// (halves up); `None` when it exceeds [`Time`].
    #[inline]
    pub fn cost(self, bytes: u64) -> Option<Time> {
        Time::try_from(self.cost_wide(bytes)).ok()
    }
}

/// Seconds (float) to picoseconds, rounded to the nearest picosecond.
pub fn from_seconds(s: f64) -> Time {
    (s * PS_PER_S as f64).round() as Time
}

/// Picoseconds to seconds (float).
pub fn to_seconds(t: Time) -> f64 {
    t as f64 / PS_PER_S as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trips_common_values() {
        assert_eq!(from_seconds(5e-6), 5_000_000);
        assert_eq!(from_seconds(0.2), 200_000_000_000);
        assert_eq!(to_seconds(1_500_000), 1.5e-6);
    }

    const GIB: u64 = 1 << 30;

    #[test]
    fn per_byte_costs_keep_their_fraction() {
        // 0.4 ps/B (20 Tbit/s): 1 GiB takes 429,496,729.6 ps.
        assert_eq!(PerByte::from_ps(0.4).unwrap().cost(GIB), Some(429_496_730));
        // 1.4 ps/B: 1,503,238,553.6 ps.
        assert_eq!(
            PerByte::from_ps(1.4).unwrap().cost(GIB),
            Some(1_503_238_554)
        );
        // 20 ps/B (400 Gbit/s) is exact.
        assert_eq!(PerByte::from_ps(20.0).unwrap().cost(GIB), Some(20 * GIB));
        assert_eq!(PerByte::from_whole_ps(20), PerByte::from_ps(20.0));
        // Rounding is to the nearest picosecond, halves up.
        let half = PerByte::from_ps(0.5).unwrap();
        assert_eq!(
            (half.cost(1), half.cost(2), half.cost(3)),
            (Some(1), Some(1), Some(2))
        );
        assert_eq!(PerByte::from_ps(0.4).unwrap().cost(1), Some(0));
    }

    #[test]
    fn per_byte_error_below_1e_6_up_to_10_tbit_per_s() {
        // 10 Tbit/s = 0.8 ps/B; any rate below it costs more per byte.
        for ps in [0.8, 0.8000001, 0.9999, 1.23456789, 7.3, 80.0, 1234.5678] {
            let exact = ps * (1u64 << 40) as f64;
            let got = PerByte::from_ps(ps).unwrap().cost(1 << 40).unwrap() as f64;
            assert!(
                (got - exact).abs() / exact < 1e-6,
                "{ps} ps/B: {got} vs {exact}"
            );
        }
    }

    #[test]
    fn per_byte_refuses_what_it_cannot_hold() {
        assert_eq!(PerByte::from_ps(-1e-3), None);
        assert_eq!(PerByte::from_ps(f64::NAN), None);
        assert_eq!(PerByte::from_ps(f64::INFINITY), None);
        assert_eq!(PerByte::from_ps(4294967296.0), None);
        assert_eq!(PerByte::from_whole_ps(1 << 32), None);
        let max = PerByte::from_ps(4294967295.0).unwrap();
        assert_eq!(max.cost(u64::MAX), None);
        assert_eq!(
            PerByte::from_ps(1.0).unwrap().cost(u64::MAX),
            Some(u64::MAX)
        );
        assert_eq!(PerByte::from_ps(1.5).unwrap().cost(u64::MAX), None);
    }

    #[test]
    fn add_names_the_operation() {
        assert_eq!(add(1, 2, 7), Ok(3));
        assert_eq!(add(u64::MAX, 1, 7), Err(Overflow(7)));
    }
}
