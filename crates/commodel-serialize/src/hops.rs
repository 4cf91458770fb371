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

/// A frame's departure from a port: when its last bit left (ps) and the port's rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Departure {
    pub at_ps: u64,
    pub rate_bit_s: u64,
}

pub struct Departures {
    /// (key, departure); departure at 0 = empty
    slots: Vec<(u64, Departure)>,
    mask: usize,
}

const EMPTY: (u64, Departure) = (
    0,
    Departure {
        at_ps: 0,
        rate_bit_s: 0,
    },
);

impl Departures {
    /// A table of `2^bits` slots.
    pub fn new(bits: u32) -> Self {
        Departures {
            slots: vec![EMPTY; 1 << bits],
            mask: (1 << bits) - 1,
        }
    }

    /// Frame `key` left a port (`at_ps` > 0).
    pub fn record(&mut self, key: u64, departure: Departure) {
        self.slots[key as usize & self.mask] = (key, departure);
    }

    /// The departure recorded for `key`, if there is one no later than `now_ps` and no older
    /// than [`MAX_HOP_PS`]; the record is used up.
    pub fn take(&mut self, key: u64, now_ps: u64) -> Option<Departure> {
        let slot = &mut self.slots[key as usize & self.mask];
        let (k, d) = *slot;
        if d.at_ps == 0 || k != key {
            return None;
        }
        *slot = EMPTY;
        (d.at_ps <= now_ps && now_ps - d.at_ps <= MAX_HOP_PS).then_some(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(at_ps: u64) -> Departure {
        Departure {
            at_ps,
            rate_bit_s: 100_000_000,
        }
    }

    #[test]
    fn a_recorded_departure_is_taken_once_by_its_key() {
        let mut t = Departures::new(4);
        t.record(0x1234, at(5_000));
        assert_eq!(t.take(0x1235, 9_000), None);
        assert_eq!(t.take(0x1234, 9_000), Some(at(5_000)));
        assert_eq!(t.take(0x1234, 9_000), None);
    }

    #[test]
    fn stale_future_and_overwritten_records_are_not_used() {
        let mut t = Departures::new(4);
        t.record(7, at(1_000));
        assert_eq!(t.take(7, 1_000 + MAX_HOP_PS + 1), None);
        t.record(7, at(1_000));
        assert_eq!(t.take(7, 1_000 + MAX_HOP_PS), Some(at(1_000)));
        t.record(8, at(2_000));
        assert_eq!(t.take(8, 1_999), None); // left after now: not a departure we saw
                                            // keys 3 and 19 share a slot of 16: the newer record wins
        t.record(3, at(1_000));
        t.record(19, at(1_100));
        assert_eq!(t.take(3, 5_000), None);
        assert_eq!(t.take(19, 5_000), Some(at(1_100)));
    }
}
