//! Simulated time: integer picoseconds.
//!
//! One picosecond resolves per-byte costs of 100 Gbit/s links (80 ps/byte)
//! and a `u64` holds 213 days, far beyond any schedule we simulate.

/// A point in simulated time or a duration, in picoseconds.
pub type Time = u64;

/// Picoseconds per nanosecond (GOAL's and LogGOPSim's time unit).
pub const PS_PER_NS: Time = 1_000;
/// Picoseconds per second.
pub const PS_PER_S: Time = 1_000_000_000_000;

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
}
