//! Tables y(m) of a message size m, in picoseconds: PLogP's gap g(m) (plogp, plogpt,
//! tcpflow) and the overheads o_s(m), o_r(m) the engine charges.
//!
//! A table is given at measured sizes; between them values are interpolated linearly, below the first size the first value holds, and
//! above the last size the slope of the last two points continues (never
//! below the last value). Interpolation is done in integers (picoseconds,
//! rounded down) so results are exact and repeatable; an extrapolated value
//! past 2^64 ps is an overflow of the message's send.

use crate::time::Time;

/// A table y(m) given at increasing sizes m, in picoseconds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    sizes: Vec<u64>,
    values: Vec<Time>,
}

impl Table {
    /// `sizes` strictly increasing, same length as `values`, at least one point.
    pub fn new(sizes: Vec<u64>, values: Vec<Time>) -> Result<Table, String> {
        if sizes.is_empty() || sizes.len() != values.len() {
            return Err(format!(
                "a table needs one value per size (got {} sizes, {} values)",
                sizes.len(),
                values.len()
            ));
        }
        if let Some(i) = sizes.windows(2).position(|w| w[0] >= w[1]) {
            return Err(format!(
                "sizes must increase: sizes[{}] = {} is not below sizes[{}] = {}",
                i,
                sizes[i],
                i + 1,
                sizes[i + 1]
            ));
        }
        Ok(Table { sizes, values })
    }

    /// A one-point table: the same value at every size.
    pub fn constant(v: Time) -> Table {
        Table {
            sizes: vec![0],
            values: vec![v],
        }
    }

    /// y(m), interpolated as described in the module documentation; `None`
    /// when an extrapolated value exceeds [`Time`].
    pub fn at(&self, m: u64) -> Option<Time> {
        let n = self.sizes.len();
        let k = self.sizes.partition_point(|&s| s <= m);
        if k == 0 {
            return Some(self.values[0]);
        }
        if k == n && (n == 1 || m == self.sizes[n - 1]) {
            return Some(self.values[n - 1]);
        }
        let (i, j) = if k == n { (n - 2, n - 1) } else { (k - 1, k) };
        // x0 <= m, and every product below fits in 128 bits.
        let (dx, dm) = (
            (self.sizes[j] - self.sizes[i]) as u128,
            (m - self.sizes[i]) as u128,
        );
        let (y0, y1) = (self.values[i], self.values[j]);
        let y = if y1 >= y0 {
            y0 as u128 + (y1 - y0) as u128 * dm / dx
        } else {
            (y0 as u128).saturating_sub((y0 - y1) as u128 * dm / dx)
        };
        let y = if k == n { y.max(y1 as u128) } else { y };
        Time::try_from(y).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_interpolates_and_extrapolates() {
        let t = Table::new(vec![0, 100, 200], vec![10, 20, 40]).unwrap();
        assert_eq!(t.at(0), Some(10));
        assert_eq!(t.at(50), Some(15));
        assert_eq!(t.at(100), Some(20));
        assert_eq!(t.at(150), Some(30));
        assert_eq!(t.at(200), Some(40));
        assert_eq!(t.at(300), Some(60));
        let flat = Table::new(vec![10, 20], vec![50, 40]).unwrap();
        assert_eq!(flat.at(5), Some(50));
        assert_eq!(
            flat.at(40),
            Some(40),
            "never below the last value when extrapolating"
        );
        assert!(Table::new(vec![5, 5], vec![1, 2]).is_err());
    }

    #[test]
    fn table_extrapolation_beyond_time_is_none() {
        // Slope 2^63 ps per byte: 2 bytes past the last size leave u64.
        let steep = Table::new(vec![0, 1], vec![0, 1 << 63]).unwrap();
        assert_eq!(steep.at(1), Some(1 << 63));
        assert_eq!(steep.at(2), None);
        // The widest differences fit: (2^64 - 1)² does not overflow.
        let wide = Table::new(vec![0, u64::MAX], vec![u64::MAX, 0]).unwrap();
        assert_eq!(wide.at(u64::MAX - 1), Some(1));
        let up = Table::new(vec![0, u64::MAX], vec![0, u64::MAX]).unwrap();
        assert_eq!(up.at(u64::MAX / 2), Some(u64::MAX / 2));
    }
}
