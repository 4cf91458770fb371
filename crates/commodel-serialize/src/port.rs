//! A shaped port: a virtual FIFO that serializes every frame at line rate.
//!
//! A frame of `w` wire bytes arriving at time `t` at a port of rate `R` leaves (its last bit
//! is on the cable) at `d = max(t, d_prev) + 8 w / R`, where `d_prev` is the departure of
//! the frame before it: an idle port still takes one frame time, a busy one queues. The
//! next hop sees the frame arrive at `d` (store and forward, no propagation delay; the
//! daemon passes `d` on, see `hops.rs`). Bytes held (frames offered whose departure is
//! still ahead) may not exceed the port buffer: a frame that does not fit is dropped (tail
//! drop).
//!
//! Sizes: the netfilter hooks see the IP packet (`l3` bytes). On the wire it becomes an
//! Ethernet frame of `l3 + 14` (MAC header) `+ 4` (FCS) bytes, at least 64, plus 8 bytes
//! of preamble and start delimiter and a 12-byte inter-frame gap: `wire_bytes`. The buffer
//! counts `l3 + 14` per frame, as a Linux qdisc counts its backlog.

use std::collections::VecDeque;

/// MAC header (14) and frame check sequence (4) around an IP packet.
pub const MAC_HEADER_FCS: u64 = 14 + 4;
/// Preamble and start frame delimiter (8) and the inter-frame gap (12).
pub const PREAMBLE_IFG: u64 = 8 + 12;
/// The minimum Ethernet frame, MAC header to FCS.
pub const MIN_FRAME: u64 = 64;
/// Picoseconds per second.
pub const PS_PER_S: u128 = 1_000_000_000_000;

/// Bytes a frame carrying an IP packet of `l3` bytes occupies on the wire (preamble to gap).
pub fn wire_bytes(l3: u64) -> u64 {
    (l3 + MAC_HEADER_FCS).max(MIN_FRAME) + PREAMBLE_IFG
}

/// Bytes the frame holds in a port buffer (MAC header and IP packet).
pub fn buffer_bytes(l3: u64) -> u64 {
    l3 + 14
}

/// Time in picoseconds to serialize `wire` bytes at `rate_bit_s` (rounded up).
pub fn serialization_ps(wire: u64, rate_bit_s: u64) -> u64 {
    let bits = u128::from(wire) * 8 * PS_PER_S;
    let rate = u128::from(rate_bit_s);
    bits.div_ceil(rate) as u64
}

/// Preamble and start delimiter (8) and destination address (6): what a cut-through switch
/// reads of a frame before it starts sending it on.
pub const CUT_THROUGH_BYTES: u64 = 8 + 6;

/// When a cut-through port may start sending a frame of `l3` bytes whose last bit arrived at
/// `arrival_ps` from a port of rate `in_bit_s`: once its destination address has arrived.
/// Only where the frame comes in at least as fast as it goes out (`out_bit_s`); a faster
/// output would run out of bits, and switches store and forward there, as does this.
pub fn cut_through_ready_ps(l3: u64, arrival_ps: u64, in_bit_s: u64, out_bit_s: u64) -> u64 {
    if out_bit_s > in_bit_s {
        return arrival_ps;
    }
    let head = arrival_ps.saturating_sub(serialization_ps(wire_bytes(l3), in_bit_s));
    head + serialization_ps(CUT_THROUGH_BYTES, in_bit_s)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    id: u32,
    key: u64,
    departure_ps: u64,
    buffer_bytes: u64,
}

/// What became of a frame offered to a port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Queued; it leaves at this time (picoseconds).
    Queued(u64),
    /// The buffer was full: dropped.
    Dropped,
}

/// Counters of one port since start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    pub frames: u64,
    pub bytes: u64,
    pub drops: u64,
    pub max_held_bytes: u64,
    /// Frames whose arrival was their departure from the port before (the rest arrived
    /// when the daemon read them: from a host, or after the previous port's record was lost).
    pub chained: u64,
    /// Frames that have left.
    pub left: u64,
    /// Release lateness (actual release time minus departure), summed and maximum, ps.
    pub late_sum_ps: u64,
    pub late_max_ps: u64,
}

#[derive(Debug)]
pub struct Port {
    pub rate_bit_s: u64,
    pub buffer_bytes: u64,
    held: VecDeque<Held>,
    held_bytes: u64,
    last_departure_ps: u64,
    /// The last frame that has left but has not been handed on by [`Port::release`].
    left: Option<u32>,
    /// (key, departure) of the frames that have left since [`Port::take_departed`].
    departed: Vec<(u64, u64)>,
    pub stats: PortStats,
}

impl Port {
    pub fn new(rate_bit_s: u64, buffer_bytes: u64) -> Self {
        Port {
            rate_bit_s,
            buffer_bytes,
            held: VecDeque::new(),
            held_bytes: 0,
            last_departure_ps: 0,
            left: None,
            departed: Vec::new(),
            stats: PortStats::default(),
        }
    }

    /// Offer frame `id` (key `key`) carrying an IP packet of `l3` bytes, whose first bit may
    /// go out from `ready_ps` on (taken as at most `now_ps`, the time it is offered): its
    /// arrival (store and forward), or, cut through, when its destination address arrived
    /// ([`cut_through_ready_ps`]).
    ///
    /// Frames whose departure is not after `now_ps` no longer count against the buffer,
    /// whether or not [`Port::release`] has handed them on yet.
    pub fn offer(&mut self, id: u32, key: u64, l3: u64, ready_ps: u64, now_ps: u64) -> Offer {
        self.retire(now_ps);
        let held_now = self.held_bytes;
        let size = buffer_bytes(l3);
        if held_now + size > self.buffer_bytes {
            self.stats.drops += 1;
            return Offer::Dropped;
        }
        let start = ready_ps.min(now_ps).max(self.last_departure_ps);
        let departure = start + serialization_ps(wire_bytes(l3), self.rate_bit_s);
        self.last_departure_ps = departure;
        self.held.push_back(Held {
            id,
            key,
            departure_ps: departure,
            buffer_bytes: size,
        });
        self.held_bytes += size;
        self.stats.frames += 1;
        self.stats.bytes += size;
        self.stats.max_held_bytes = self.stats.max_held_bytes.max(held_now + size);
        Offer::Queued(departure)
    }

    /// Take frames that have left by `now_ps` out of the buffer.
    fn retire(&mut self, now_ps: u64) {
        while let Some(front) = self.held.front() {
            if front.departure_ps > now_ps {
                break;
            }
            let late = now_ps - front.departure_ps;
            self.stats.late_sum_ps += late;
            self.stats.late_max_ps = self.stats.late_max_ps.max(late);
            self.held_bytes -= front.buffer_bytes;
            self.stats.left += 1;
            self.left = Some(front.id);
            self.departed.push((front.key, front.departure_ps));
            self.held.pop_front();
        }
    }

    /// Hand on every frame that has left by `now_ps`: returns the id of the last one (the
    /// frames leave in the order offered), or None if none left since the last call.
    pub fn release(&mut self, now_ps: u64) -> Option<u32> {
        self.retire(now_ps);
        self.left.take()
    }

    /// (key, departure) of every frame that has left since the last call, in order.
    pub fn take_departed(&mut self, into: &mut Vec<(u64, u64)>) {
        into.append(&mut self.departed);
    }

    /// When the next frame leaves, if any is held.
    pub fn next_departure(&self) -> Option<u64> {
        self.held.front().map(|h| h.departure_ps)
    }

    /// Frames offered that have not left.
    pub fn held_frames(&self) -> usize {
        self.held.len()
    }

    /// Bytes of frames offered that have not left.
    pub fn held_bytes(&self) -> u64 {
        self.held_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R100M: u64 = 100_000_000;

    #[test]
    fn a_full_frame_takes_its_wire_time() {
        // 1500-byte IP packet: 1518-byte frame + 20 bytes of preamble and gap = 1538 bytes,
        // 12304 bits at 100 Mbit/s = 123.04 us
        assert_eq!(wire_bytes(1500), 1538);
        assert_eq!(serialization_ps(wire_bytes(1500), R100M), 123_040_000);
        // a 40-byte packet (a bare TCP ACK) is padded to the 64-byte minimum frame
        assert_eq!(wire_bytes(40), 84);
        assert_eq!(buffer_bytes(1500), 1514);
    }

    #[test]
    fn an_idle_port_still_takes_one_frame_time() {
        let mut port = Port::new(R100M, 32 * 1024);
        let t0 = 5_000_000_000; // 5 ms
        assert_eq!(
            port.offer(1, 0, 1500, t0, t0),
            Offer::Queued(t0 + 123_040_000)
        );
        assert_eq!(port.release(t0 + 123_039_999), None);
        assert_eq!(port.next_departure(), Some(t0 + 123_040_000));
        assert_eq!(port.release(t0 + 123_040_000), Some(1));
        assert_eq!(port.next_departure(), None);
    }

    #[test]
    fn a_busy_port_queues_back_to_back_and_releases_in_order() {
        let mut port = Port::new(R100M, 1 << 20);
        let frame = 123_040_000;
        for id in 0..10 {
            assert_eq!(
                port.offer(id, 0, 1500, 0, 0),
                Offer::Queued((u64::from(id) + 1) * frame)
            );
        }
        assert_eq!((port.held_frames(), port.held_bytes()), (10, 10 * 1514));
        assert_eq!(port.release(3 * frame + 1), Some(2));
        assert_eq!(port.held_bytes(), 7 * 1514);
        // a frame arriving after the queue drained starts at its own arrival
        assert_eq!(port.release(100 * frame), Some(9));
        assert_eq!(
            port.offer(10, 0, 1500, 200 * frame, 200 * frame),
            Offer::Queued(201 * frame)
        );
        assert_eq!(port.stats.frames, 11);
    }

    #[test]
    fn a_full_buffer_drops_the_arriving_frame_only() {
        // room for two 1514-byte frames, not three
        let mut port = Port::new(R100M, 3 * 1514 - 1);
        let frame = 123_040_000;
        assert_eq!(port.offer(1, 0, 1500, 0, 0), Offer::Queued(frame));
        assert_eq!(port.offer(2, 0, 1500, 0, 0), Offer::Queued(2 * frame));
        assert_eq!(port.offer(3, 0, 1500, 0, 0), Offer::Dropped);
        assert_eq!(port.stats.drops, 1);
        // once the first frame has left there is room again, behind the second
        assert_eq!(
            port.offer(4, 0, 1500, frame, frame),
            Offer::Queued(3 * frame)
        );
        assert_eq!(port.stats.max_held_bytes, 2 * 1514);
    }

    #[test]
    fn store_and_forward_over_two_hops_of_equal_rate() {
        // three frames through two ports: the second hop finishes one frame time after
        // the first, whatever the first hop's backlog
        let mut nic = Port::new(R100M, 1 << 20);
        let mut switch = Port::new(R100M, 32 * 1024);
        let frame = 123_040_000;
        let mut last = 0;
        for id in 0..3 {
            let Offer::Queued(d) = nic.offer(id, 0, 1500, 0, 0) else {
                panic!("dropped")
            };
            let Offer::Queued(d2) = switch.offer(id, 0, 1500, d, d) else {
                panic!("dropped")
            };
            last = d2;
        }
        assert_eq!(last, 4 * frame);
    }

    #[test]
    fn a_frame_offered_late_starts_at_its_arrival_and_is_recorded_on_leaving() {
        // offered 30 us after it arrived (the daemon was late to read it): it still leaves
        // one frame time after its arrival, and a second frame queues behind it
        let mut port = Port::new(R100M, 1 << 20);
        let frame = 123_040_000;
        let t = 1_000_000_000;
        assert_eq!(
            port.offer(1, 11, 1500, t, t + 30_000_000),
            Offer::Queued(t + frame)
        );
        assert_eq!(
            port.offer(2, 22, 1500, t + 10_000_000, t + 40_000_000),
            Offer::Queued(t + 2 * frame)
        );
        let mut departed = Vec::new();
        port.take_departed(&mut departed);
        assert!(departed.is_empty());
        // an arrival after the time offered is taken as the time offered (here after both
        // frames left: a 40-byte packet's minimum frame, 84 wire bytes, 6.72 us)
        assert_eq!(
            port.offer(3, 33, 40, t + 9 * frame, t + 3 * frame),
            Offer::Queued(t + 3 * frame + 6_720_000)
        );
        assert_eq!(port.release(t + 3 * frame), Some(2));
        port.take_departed(&mut departed);
        assert_eq!(departed, vec![(11, t + frame), (22, t + 2 * frame)]);
        port.take_departed(&mut departed);
        assert_eq!(departed.len(), 2);
    }

    #[test]
    fn cut_through_starts_after_the_destination_address_when_not_faster_out() {
        let frame = 123_040_000; // 1538 wire bytes at 100 Mbit/s
        let d = 10 * frame;
        // 100 -> 100 Mbit/s: head at d - frame, plus 14 bytes (1.12 us)
        assert_eq!(
            cut_through_ready_ps(1500, d, R100M, R100M),
            d - frame + 1_120_000
        );
        // 200 -> 100 Mbit/s: the frame came in in half the time
        assert_eq!(
            cut_through_ready_ps(1500, d, 2 * R100M, R100M),
            d - frame / 2 + 560_000
        );
        // 100 -> 200 Mbit/s: store and forward
        assert_eq!(cut_through_ready_ps(1500, d, R100M, 2 * R100M), d);
        // a lone frame over two equal hops, the second cut through, has left both 1.12 us
        // after one frame time (store and forward: two frame times)
        let mut nic = Port::new(R100M, 1 << 20);
        let mut sw = Port::new(R100M, 1 << 20);
        let Offer::Queued(d1) = nic.offer(1, 0, 1500, 0, 0) else {
            panic!("dropped")
        };
        let ready = cut_through_ready_ps(1500, d1, R100M, R100M);
        assert_eq!(
            sw.offer(1, 0, 1500, ready, d1),
            Offer::Queued(1_120_000 + frame)
        );
    }
}
