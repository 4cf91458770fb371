//! From port to port: the time a frame left its last port.
//!
//! Store and forward with no propagation delay means a frame arrives at its next port at the
//! moment it left the one before. The daemon only sees it there when the kernel has carried
//! it across and the daemon has woken up to read it, tens of microseconds later on a loaded
//! machine; stamping the arrival then would add that delay at every hop and, on a chain of
//! equal rates, leave the downstream port idle for it, a loss of rate never made up. So every
//! frame that leaves a port is recorded here by its key (`nfq::packet_key`) with its
//! departure, and a port that is offered a recorded frame takes that departure as its
//! arrival. A frame from a host (its first port) or whose record was overwritten arrives
//! when it is read.
//!
//! The table is direct-mapped (one slot per key's low bits, the newest record wins): it
//! needs to hold only the frames between two ports, and a lost record costs only the
//! accuracy of one arrival.

/// Records older than this (picoseconds) are not used: the frame was dropped or went to a
/// host, and the record is stale.
pub const MAX_HOP_PS: u64 = 50_000_000_000; // 50 ms

pub struct Departures {
    /// (key, departure ps); departure 0 = empty
    slots: Vec<(u64, u64)>,
    mask: usize,
}

impl Departures {
    /// A table of `2^bits` slots.
    pub fn new(bits: u32) -> Self {
        Departures {
            slots: vec![(0, 0); 1 << bits],
            mask: (1 << bits) - 1,
        }
    }

    /// Frame `key` left a port at `departure_ps` (> 0).
    pub fn record(&mut self, key: u64, departure_ps: u64) {
        self.slots[key as usize & self.mask] = (key, departure_ps);
    }

    /// The departure recorded for `key`, if there is one no later than `now_ps` and no older
    /// than [`MAX_HOP_PS`]; the record is used up.
    pub fn take(&mut self, key: u64, now_ps: u64) -> Option<u64> {
        let slot = &mut self.slots[key as usize & self.mask];
        let (k, d) = *slot;
        if d == 0 || k != key {
            return None;
        }
        *slot = (0, 0);
        (d <= now_ps && now_ps - d <= MAX_HOP_PS).then_some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_departure_is_taken_once_by_its_key() {
        let mut t = Departures::new(4);
        t.record(0x1234, 5_000);
        assert_eq!(t.take(0x1235, 9_000), None);
        assert_eq!(t.take(0x1234, 9_000), Some(5_000));
        assert_eq!(t.take(0x1234, 9_000), None);
    }

    #[test]
    fn stale_future_and_overwritten_records_are_not_used() {
        let mut t = Departures::new(4);
        t.record(7, 1_000);
        assert_eq!(t.take(7, 1_000 + MAX_HOP_PS + 1), None);
        t.record(7, 1_000);
        assert_eq!(t.take(7, 1_000 + MAX_HOP_PS), Some(1_000));
        t.record(8, 2_000);
        assert_eq!(t.take(8, 1_999), None); // left after now: not a departure we saw
                                            // keys 3 and 19 share a slot of 16: the newer record wins
        t.record(3, 1_000);
        t.record(19, 1_100);
        assert_eq!(t.take(3, 5_000), None);
        assert_eq!(t.take(19, 5_000), Some(1_100));
    }
}
