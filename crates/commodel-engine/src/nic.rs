//! Message-level models without contention: PLogP and Hockney.
//!
//! Both are [`Network`]s with single-port NICs: a rank injects one message at
//! a time and receives one at a time.
//!
//! * `plogp` (Kielmann et al.): a message of m bytes occupies the sender's NIC
//!   for the gap g(m); the send finishes then (PlogPT eq. 13 with g in place
//!   of g_c) and the data is at the receiver L later (eq. 15). The receiving
//!   NIC takes messages one at a time, each for g(m). o_s(m) and o_r(m) are
//!   contained in g(m) and L (Kielmann: RTT(0) = 2(L + g(0))); they are kept
//!   in the platform for reports.
//! * `hockney`: T(m) = alpha + beta·m; the NIC is busy for beta·m.
//!
//! g(m) is a [`Table`] (interpolated as [`crate::table`] describes).

use crate::engine::{Network, XferEvent, XferId};
use crate::table::Table;
use crate::time::{add, Overflow, PerByte, Time};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How long a message occupies a NIC, and the latency after it.
pub trait Cost {
    fn name(&self) -> &'static str;
    /// `None` when the gap exceeds [`Time`].
    fn gap(&self, bytes: u64) -> Option<Time>;
    fn latency(&self) -> Time;
}

/// PLogP: L and g(m) (o_s(m), o_r(m) are contained in them).
#[allow(non_snake_case)]
#[derive(Clone, Debug)]
pub struct PLogP {
    pub L: Time,
    pub g: Table,
}

impl Cost for PLogP {
    fn name(&self) -> &'static str {
        "plogp"
    }
    fn gap(&self, bytes: u64) -> Option<Time> {
        self.g.at(bytes)
    }
    fn latency(&self) -> Time {
        self.L
    }
}

/// Hockney: alpha + beta·m (alpha in ps, beta in ps per byte).
#[derive(Clone, Debug)]
pub struct Hockney {
    pub alpha: Time,
    pub beta: PerByte,
}

impl Cost for Hockney {
    fn name(&self) -> &'static str {
        "hockney"
    }
    fn gap(&self, bytes: u64) -> Option<Time> {
        self.beta.cost(bytes)
    }
    fn latency(&self) -> Time {
        self.alpha
    }
}

/// Single-port NICs priced by a [`Cost`]; no sharing between messages.
pub struct NicNetwork<C: Cost> {
    cost: C,
    send_free: Vec<Time>,
    recv_free: Vec<Time>,
    /// (time, kind 0 = send done / 1 = arrived, transfer)
    pending: BinaryHeap<Reverse<(Time, u8, XferId)>>,
}

impl<C: Cost> NicNetwork<C> {
    pub fn new(cost: C, ranks: u32) -> Self {
        NicNetwork {
            cost,
            send_free: vec![0; ranks as usize],
            recv_free: vec![0; ranks as usize],
            pending: BinaryHeap::new(),
        }
    }
}

impl<C: Cost> Network for NicNetwork<C> {
    fn name(&self) -> &'static str {
        self.cost.name()
    }
    fn control_latency(&self, _src: u32, _dst: u32) -> Time {
        self.cost.latency()
    }
    fn start(
        &mut self,
        now: Time,
        xfer: XferId,
        src: u32,
        dst: u32,
        bytes: u64,
        _size: u64,
    ) -> Result<(), Overflow> {
        let gap = self.cost.gap(bytes).ok_or(Overflow(xfer))?;
        let begin = now.max(self.send_free[src as usize]);
        let sent = add(begin, gap, xfer)?;
        let first = add(begin, self.cost.latency(), xfer)?;
        let arrive = add(first.max(self.recv_free[dst as usize]), gap, xfer)?;
        self.send_free[src as usize] = sent;
        self.recv_free[dst as usize] = arrive;
        self.pending.push(Reverse((sent, 0, xfer)));
        self.pending.push(Reverse((arrive, 1, xfer)));
        Ok(())
    }
    fn next_time(&self) -> Option<Time> {
        self.pending.peek().map(|Reverse((t, _, _))| *t)
    }
    fn advance(&mut self, now: Time, out: &mut Vec<XferEvent>) -> Result<(), Overflow> {
        while let Some(&Reverse((t, kind, x))) = self.pending.peek() {
            if t != now {
                break;
            }
            self.pending.pop();
            out.push(if kind == 0 {
                XferEvent::SendDone(x)
            } else {
                XferEvent::Arrived(x)
            });
        }
        Ok(())
    }
}
