//! LogGOPS with LogGOPSim's exact semantics (model `loggops`).
//!
//! Parameters (Hoefler et al., LogGOPSim):
//! * `L` — latency: a message's first byte arrives `o + L` after its send starts;
//! * `o` — CPU overhead per message, at sender and receiver;
//! * `g` — gap between two messages on a NIC (per direction);
//! * `G` — gap per byte (the inverse of bandwidth);
//! * `O` — CPU overhead per byte;
//! * `S` — rendezvous threshold: messages larger than `S` bytes complete at
//!   the sender only once the receiver has matched them.
//!
//! The simulation follows LogGOPSim's event loop step by step, so the same
//! GOAL schedule and parameters give the same finish time for every rank:
//!
//! * Events are ordered by (time, insertion stamp). Every newly created event
//!   gets the next stamp; an event that must wait for a busy CPU or NIC is
//!   re-queued at the later time with its old stamp.
//! * Operations that become executable are collected per rank and sorted by
//!   type (send < recv < calc) with libstdc++'s unstable sort ([`crate::stdsort`]).
//!   A calc or recv is queued at the rank's CPU-free time `nexto`; a send at
//!   `max(nexto, nextgs)`.
//! * A send whose CPU and NIC are free at its time charges `o + (s-1)·O` to
//!   the CPU and `g + (s-1)·G` to the NIC and puts a message event at
//!   `t + o + L`; an eager send (s ≤ S) is finished at once.
//! * A message event whose receiving CPU and NIC are free charges
//!   `o + max((s-1)·O, (s-1)·G)` to the CPU and `g + (s-1)·G` to the NIC, then
//!   matches the posted receives; unmatched, it waits as unexpected.
//! * A receive matches the unexpected messages when it starts; unmatched, it
//!   is posted. A receive may be larger than its message; the message's size
//!   decides whether it is a rendezvous. A match of a rendezvous message finishes the remote send and
//!   moves the sender's `nexto` and `nextgs` up to the current time.
//! * A rank's finish time is the largest `nexto` of its CPUs.
//!
//! A zero-byte message gets `(s-1)·G = -G` as in LogGOPSim (whose unsigned
//! 64-bit arithmetic wraps to that), but for the receiving CPU's
//! `max((s-1)·O, (s-1)·G)`, which is taken in signed arithmetic here: with
//! O = 0 it is 0 here and -G in LogGOPSim (the wrapped value is the larger
//! unsigned one; docs/models.md). `G` and `O` have a fraction of a
//! picosecond ([`PerByte`]); `(s-1)·G` is rounded to the nearest picosecond.
//! Times are computed exactly and checked: one outside 0..2^64 ps (where
//! LogGOPSim wraps around) is a [`SimError::Overflow`] naming the operation;
//! below 0 happens for a zero-byte message at time 0 when `o < O` or `g < G`.
//! A message larger than the receive it matches is a [`SimError::Truncated`].

use crate::countdown::{Countdown, Progress};
use crate::engine::Stop;
use crate::matching::{self, Matcher};
use crate::outcome::{Deadlock, MessageRecord, Outcome, SimError, StuckOp};
use crate::radix::{Keyed, RadixQueue};
use crate::schedule::{OpId, OpKind, Schedule};
use crate::stdsort;
use crate::time::{add, Overflow, PerByte, Time};

/// LogGOPS parameters, in picoseconds (`G`, `O` in picoseconds per byte).
#[allow(non_snake_case)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogGops {
    pub L: Time,
    pub o: Time,
    pub g: Time,
    pub G: PerByte,
    pub O: PerByte,
    /// Rendezvous threshold in bytes: messages larger than S use rendezvous.
    pub S: u64,
    /// A calc of d takes d * calc_scale.0 / calc_scale.1 (ranks sharing cores,
    /// [`crate::params::CpuParams`]); (1, 1) in LogGOPSim.
    pub calc_scale: (u64, u64),
}

impl LogGops {
    /// LogGOPSim's defaults (L=2500, o=1500, g=1000, G=6, O=0 ns; S=65535 B).
    pub fn loggopsim_defaults() -> Self {
        LogGops {
            L: 2_500_000,
            o: 1_500_000,
            g: 1_000_000,
            G: PerByte::from_whole_ps(6_000).expect("below 2^32"),
            O: PerByte::ZERO,
            S: 65535,
            calc_scale: (1, 1),
        }
    }
}

/// `(s-1)·x` for a message of `size` bytes as LogGOPSim computes it: `-x`
/// for a zero-byte message (see the module documentation).
#[inline]
fn m1_cost(x: PerByte, size: u64) -> i128 {
    match size.checked_sub(1) {
        Some(m1) => x.cost_wide(m1) as i128,
        None => -(x.cost_wide(1) as i128),
    }
}

/// `t + a + per_byte`, or [`Overflow`] of `op` when outside [`Time`].
#[inline]
fn after(t: Time, a: Time, per_byte: i128, op: OpId) -> Result<Time, Overflow> {
    Time::try_from(t as i128 + a as i128 + per_byte).map_err(|_| Overflow(op))
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Op,
    Msg,
    /// Stands for the parked events of one group (`op` is the group index,
    /// `host` its version: tokens of older versions are stale).
    Group,
}

/// Events waiting for the same CPU/NIC resources: a host's sends on one
/// (cpu, nic), its incoming messages on one (cpu, nic), or its calcs on one cpu.
///
/// LogGOPSim re-queues an event that finds its CPU or NIC busy at the time
/// the resource becomes free, keeping its stamp. When k events wait for one
/// resource, each is re-queued up to k times (O(k²) heap operations: an
/// all-to-all that posts every send at once re-queues P² times per rank).
/// A resource's free time only grows and cannot change while it is busy (an
/// event must find it free to take it), and a blocked pop has no effect, so
/// all waiting events of a group can be moved to the free time at once: the
/// group keeps one token in the queue, at that time and the smallest stamp
/// of its members. Popping the token tries that member exactly as LogGOPSim
/// would pop it; what LogGOPSim does with each member is unchanged, only the
/// pops that change nothing are skipped.
#[derive(Default)]
struct Group {
    /// Waiting events, the smallest stamp on top; no allocation while empty (a binomial
    /// tree of 2^20 ranks parks sends in half a million groups; a `BTreeMap` kept a
    /// 360-byte node in each).
    members: std::collections::BinaryHeap<Parked>,
    /// Time all members are waiting for.
    time: Time,
    version: u32,
}

/// A member of a [`Group`]: ordered by stamp alone, the smallest greatest (its members
/// all wait for one time; stamps are unique).
struct Parked(Event);

impl PartialEq for Parked {
    fn eq(&self, o: &Self) -> bool {
        self.0.stamp() == o.0.stamp()
    }
}
impl Eq for Parked {}
impl PartialOrd for Parked {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Parked {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.stamp().cmp(&self.0.stamp())
    }
}

/// A queued event: ordered by (time, stamp) only ([`Keyed`]). 24 bytes: the
/// kind shares a word with the stamp (stamps count events: they stay below 2^62).
#[derive(Clone, Copy)]
struct Event {
    time: Time,
    /// The stamp in the low [`STAMP_BITS`] bits, the [`Kind`] above them.
    stamp_kind: u64,
    op: OpId,
    /// Owning host for operations; receiving host for messages.
    host: u32,
}

const STAMP_BITS: u32 = 62;
const STAMP_MASK: u64 = (1 << STAMP_BITS) - 1;

impl Event {
    #[inline]
    fn new(time: Time, stamp: u64, op: OpId, host: u32, kind: Kind) -> Event {
        debug_assert!(stamp <= STAMP_MASK, "stamp {stamp} past 2^62");
        let stamp_kind = stamp | (kind as u64) << STAMP_BITS;
        Event {
            time,
            stamp_kind,
            op,
            host,
        }
    }

    #[inline]
    fn stamp(&self) -> u64 {
        self.stamp_kind & STAMP_MASK
    }

    #[inline]
    fn kind(&self) -> Kind {
        match self.stamp_kind >> STAMP_BITS {
            0 => Kind::Op,
            1 => Kind::Msg,
            _ => Kind::Group,
        }
    }
}

impl Keyed for Event {
    /// (time, stamp): the queue's order.
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.stamp())
    }
}

struct Sim<'a> {
    s: &'a Schedule,
    p: LogGops,
    ncpu: usize,
    nnic: usize,
    nexto: Vec<Time>,
    nextgr: Vec<Time>,
    nextgs: Vec<Time>,
    progress: Countdown,
    /// Operations that became executable while handling the current event, with their
    /// host, in the order they did; issued host by host once it is handled. (One list,
    /// not one per rank: 24 bytes a rank and a small allocation per rank at 2^20 ranks.)
    ready: Vec<(u32, OpId)>,
    /// One host's operations of `ready`, being issued (scratch).
    batch: Vec<OpId>,
    queue: RadixQueue<Event>,
    stamp: u64,
    /// Posted receives (payload: recv op).
    rq: Matcher,
    /// Unexpected messages (payload: send op); their arrival time in `uq_time`.
    uq: Matcher,
    events: u64,
    groups: Vec<Group>,
    /// Re-queue blocked events one by one, exactly as LogGOPSim does (a
    /// reference for tests of the grouped waiting).
    literal: bool,
    group_of: rustc_hash::FxHashMap<(u32, u8, u8, u8), u32>,
    record: bool,
    send_start: Vec<Time>,
    messages: Vec<MessageRecord>,
}

/// Simulate `schedule` under LogGOPS with LogGOPSim's semantics.
pub fn simulate(
    schedule: &Schedule,
    params: &LogGops,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    run(schedule, params, record_messages, false)
}

/// As [`simulate`], but re-queueing every blocked event one by one as
/// LogGOPSim does (quadratic when many events wait for one NIC): the
/// reference the tests compare the grouped waiting with.
#[doc(hidden)]
pub fn simulate_literal(
    schedule: &Schedule,
    params: &LogGops,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    run(schedule, params, record_messages, true)
}

fn run(
    schedule: &Schedule,
    params: &LogGops,
    record_messages: bool,
    literal: bool,
) -> Result<Outcome, SimError> {
    let p = schedule.num_ranks() as usize;
    let ncpu = schedule.max_cpu() as usize + 1;
    let nnic = schedule.max_nic() as usize + 1;
    let n = schedule.num_ops();
    let (rq, uq) = matching::matchers_for(schedule);
    let sim = Sim {
        s: schedule,
        p: *params,
        ncpu,
        nnic,
        nexto: vec![0; p * ncpu],
        nextgr: vec![0; p * nnic],
        nextgs: vec![0; p * nnic],
        progress: Countdown::new(schedule),
        ready: Vec::new(),
        batch: Vec::new(),
        queue: RadixQueue::new(),
        stamp: 0,
        rq,
        uq,
        events: 0,
        groups: Vec::new(),
        literal,
        group_of: Default::default(),
        record: record_messages,
        send_start: if record_messages {
            vec![0; n]
        } else {
            Vec::new()
        },
        messages: Vec::new(),
    };
    sim.run()
}

impl<'a> Sim<'a> {
    #[inline]
    fn cpu(&self, host: u32, op: OpId) -> usize {
        host as usize * self.ncpu + self.s.cpu(op) as usize
    }
    #[inline]
    fn nic(&self, host: u32, op: OpId) -> usize {
        host as usize * self.nnic + self.s.nic(op) as usize
    }

    fn push(&mut self, time: Time, op: OpId, host: u32, kind: Kind) {
        let stamp = self.stamp;
        self.stamp += 1;
        self.queue.push(Event::new(time, stamp, op, host, kind));
    }

    fn started(&mut self, op: OpId, host: u32) {
        self.progress.start(op);
        for d in self.s.irequirers(op) {
            self.release(d, host);
        }
    }

    fn done(&mut self, op: OpId, host: u32) {
        self.progress.finish(op);
        for d in self.s.requirers(op) {
            self.release(d, host);
        }
    }

    #[inline]
    fn release(&mut self, op: OpId, host: u32) {
        if self.progress.release(op) {
            self.ready.push((host, op));
        }
    }

    /// Issue the operations in `ready`: host by host in ascending order, each host's in
    /// the order they became executable (as LogGOPSim checks its hosts after an event).
    fn issue_ready(&mut self, initial: bool) {
        if self.ready.is_empty() {
            return;
        }
        let mut ready = std::mem::take(&mut self.ready);
        // Stable: each host's operations keep their order.
        ready.sort_by_key(|&(host, _)| host);
        let mut batch = std::mem::take(&mut self.batch);
        for run in ready.chunk_by(|a, b| a.0 == b.0) {
            batch.clear();
            batch.extend(run.iter().map(|&(_, op)| op));
            self.issue(run[0].0, &mut batch, initial);
        }
        ready.clear();
        self.ready = ready;
        self.batch = batch;
    }

    /// Queue `ready`, the newly executable operations of `host`, as LogGOPSim does.
    fn issue(&mut self, host: u32, ready: &mut [OpId], initial: bool) {
        stdsort::sort_by_key(ready, |&op| self.s.kind(op));
        for &op in ready.iter() {
            let cpu = self.nexto[self.cpu(host, op)];
            let time = if initial {
                0
            } else if self.s.kind(op) == OpKind::Send {
                cpu.max(self.nextgs[self.nic(host, op)])
            } else {
                cpu
            };
            self.push(time, op, host, Kind::Op);
        }
    }

    fn run(mut self) -> Result<Outcome, SimError> {
        self.events().map_err(|e| e.into_error(self.s))?;
        self.finish()
    }

    /// Handle every event.
    fn events(&mut self) -> Result<(), Stop> {
        let p = self.s.num_ranks();
        for host in 0..p {
            for op in self.s.ops_of(host) {
                if self.progress.is_free(op) {
                    self.ready.push((host, op));
                }
            }
            self.events += self.s.ops_of(host).len() as u64;
            self.issue_ready(true);
        }
        let mut now = 0;
        while let Some(ev) = self.queue.pop() {
            // Time never runs backwards (checked in debug builds and tests).
            debug_assert!(ev.time >= now, "event at {} after {}", ev.time, now);
            now = ev.time;
            match ev.kind() {
                Kind::Op => match self.s.kind(ev.op) {
                    OpKind::Calc => self.calc(ev)?,
                    OpKind::Send => self.send(ev)?,
                    OpKind::Recv => self.recv(ev)?,
                },
                Kind::Msg => self.message(ev)?,
                Kind::Group => self.wake(ev)?,
            }
            self.issue_ready(false);
        }
        Ok(())
    }

    /// `ev` found its resources busy until `free`: it waits in its group
    /// (`what`: 0 send, 1 message, 2 calc), and every member of the group
    /// now waits for `free` (see [`Group`]).
    fn park(&mut self, mut ev: Event, what: u8, free: Time) {
        if self.literal {
            // LogGOPSim's own way: re-queue the event alone.
            ev.time = free;
            self.queue.push(ev);
            return;
        }
        let op = ev.op;
        let nic = if what == 2 { 0 } else { self.s.nic(op) };
        let key = (ev.host, self.s.cpu(op), nic, what);
        let next = self.groups.len() as u32;
        let g = *self.group_of.entry(key).or_insert(next);
        if g == next {
            self.groups.push(Group::default());
        }
        let group = &mut self.groups[g as usize];
        group.members.push(Parked(ev));
        group.time = free;
        self.token(g);
    }

    /// Queue a fresh token for group `g` (older tokens become stale).
    fn token(&mut self, g: u32) {
        let group = &mut self.groups[g as usize];
        group.version = group.version.wrapping_add(1);
        if let Some(first) = group.members.peek() {
            let t = Event::new(group.time, first.0.stamp(), g, group.version, Kind::Group);
            self.queue.push(t);
        }
    }

    /// A group token: try its first member, as LogGOPSim pops it.
    fn wake(&mut self, tok: Event) -> Result<(), Stop> {
        let g = tok.op;
        if self.groups[g as usize].version != tok.host {
            return Ok(()); // stale
        }
        let members = &mut self.groups[g as usize].members;
        let Parked(mut ev) = members.pop().expect("token of an empty group");
        if members.is_empty() {
            // Most groups fill once (a rank's burst of sends): free their storage.
            *members = Default::default();
        }
        ev.time = tok.time;
        // If it finds the resources busy again it parks itself (new token);
        // otherwise the others stay at this time behind the next stamp.
        let before = self.groups[g as usize].version;
        match ev.kind() {
            Kind::Msg => self.message(ev)?,
            _ => match self.s.kind(ev.op) {
                OpKind::Calc => self.calc(ev)?,
                _ => self.send(ev)?,
            },
        }
        if self.groups[g as usize].version == before {
            self.token(g);
        }
        Ok(())
    }

    fn calc(&mut self, ev: Event) -> Result<(), Stop> {
        let c = self.cpu(ev.host, ev.op);
        if self.nexto[c] <= ev.time {
            let (num, den) = self.p.calc_scale;
            let duration =
                (self.s.size(ev.op) as u128 * crate::time::PS_PER_NS as u128 * num as u128
                    / den.max(1) as u128)
                    .try_into()
                    .ok();
            self.nexto[c] = add(ev.time, duration.ok_or(Overflow(ev.op))?, ev.op)?;
            self.started(ev.op, ev.host);
            self.done(ev.op, ev.host);
        } else {
            let free = self.nexto[c];
            self.park(ev, 2, free);
        }
        Ok(())
    }

    fn send(&mut self, ev: Event) -> Result<(), Stop> {
        let (c, g) = (self.cpu(ev.host, ev.op), self.nic(ev.host, ev.op));
        let free = self.nexto[c].max(self.nextgs[g]);
        if free > ev.time {
            self.park(ev, 0, free);
            return Ok(());
        }
        let size = self.s.size(ev.op);
        let p = self.p;
        let op = ev.op;
        let cpu_free = after(ev.time, p.o, m1_cost(p.O, size), op)?;
        let nic_free = after(ev.time, p.g, m1_cost(p.G, size), op)?;
        let arrival = add(add(ev.time, p.o, op)?, p.L, op)?;
        self.started(op, ev.host);
        self.nexto[c] = cpu_free;
        self.nextgs[g] = nic_free;
        if self.record {
            self.send_start[op as usize] = ev.time;
        }
        // One event per message transfer, as LogGOPSim counts them.
        self.events += 1;
        let dst = self.s.peer(op);
        self.push(arrival, op, dst, Kind::Msg);
        if size <= p.S {
            self.done(op, ev.host);
        }
        Ok(())
    }

    fn recv(&mut self, ev: Event) -> Result<(), Stop> {
        let host = ev.host;
        self.started(ev.op, host);
        let (src, tag) = (self.s.peer(ev.op), self.s.tag(ev.op));
        match self.uq.take(host, src, tag) {
            Some(send) => {
                SimError::check_fits(self.s, send, ev.op).map_err(Stop::Error)?;
                // The message's size decides (LogGOPSim asks the receive's, the
                // same when the sizes are equal): an eager send is done already.
                if self.s.size(send) > self.p.S {
                    // Rendezvous: the waiting sender is released now.
                    let sender = self.s.rank_of(send);
                    self.done(send, sender);
                    let sc = sender as usize * self.ncpu + self.s.cpu(ev.op) as usize;
                    let sg = sender as usize * self.nnic + self.s.nic(ev.op) as usize;
                    self.nexto[sc] = self.nexto[sc].max(ev.time);
                    self.nextgs[sg] = self.nextgs[sg].max(ev.time);
                }
                self.done(ev.op, host);
                if self.record {
                    let end = self.nexto[self.cpu(host, ev.op)].max(ev.time);
                    self.record_message(send, ev.op, end);
                }
            }
            None => self.rq.push(host, src, tag, ev.op),
        }
        Ok(())
    }

    fn message(&mut self, ev: Event) -> Result<(), Stop> {
        let host = ev.host;
        let send = ev.op;
        // The receiving side uses the send operation's cpu and nic indices, as LogGOPSim does.
        let (c, g) = (self.cpu(host, send), self.nic(host, send));
        let free = self.nexto[c].max(self.nextgr[g]);
        if free > ev.time {
            self.park(ev, 1, free);
            return Ok(());
        }
        let size = self.s.size(send);
        let p = self.p;
        let per_byte = m1_cost(p.O, size).max(m1_cost(p.G, size));
        self.nexto[c] = after(ev.time, p.o, per_byte, send)?;
        self.nextgr[g] = after(ev.time, p.g, m1_cost(p.G, size), send)?;
        let sender = self.s.rank_of(send);
        match self.rq.take(host, sender, self.s.tag(send)) {
            Some(recv) => {
                SimError::check_fits(self.s, send, recv).map_err(Stop::Error)?;
                if size > p.S {
                    self.done(send, sender);
                    let sc = sender as usize * self.ncpu + self.s.cpu(send) as usize;
                    let sg = sender as usize * self.nnic + self.s.nic(send) as usize;
                    self.nexto[sc] = self.nexto[sc].max(ev.time);
                    self.nextgs[sg] = self.nextgs[sg].max(ev.time);
                }
                self.done(recv, host);
                if self.record {
                    let end = self.nexto[c];
                    self.record_message(send, recv, end);
                }
            }
            None => self.uq.push(host, sender, self.s.tag(send), send),
        }
        Ok(())
    }

    fn record_message(&mut self, send: OpId, recv: OpId, end: Time) {
        let start = self.send_start[send as usize];
        let record = MessageRecord::new(self.s, send, recv, start, end, false);
        self.messages.push(record);
    }

    fn finish(&mut self) -> Result<Outcome, SimError> {
        let p = self.s.num_ranks();
        let mut stuck = Vec::new();
        for r in 0..p {
            for op in self.s.ops_of(r) {
                match self.progress.progress(op) {
                    Progress::Done => {}
                    p => stuck.push(StuckOp::new(self.s, op, p == Progress::Started)),
                }
            }
        }
        let mut unreceived = Vec::new();
        for r in 0..p {
            for (_, _, send) in self.uq.entries(r) {
                unreceived.push(StuckOp::new(self.s, send, true));
            }
        }
        if !stuck.is_empty() || !unreceived.is_empty() {
            return Err(SimError::Deadlock(Deadlock { stuck, unreceived }));
        }
        let finish: Vec<Time> = (0..p as usize)
            .map(|r| {
                self.nexto[r * self.ncpu..(r + 1) * self.ncpu]
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut messages = std::mem::take(&mut self.messages);
        messages.sort_by_key(|m| (m.start, m.send));
        Ok(Outcome::new(
            "loggops",
            finish,
            self.events,
            messages,
            Vec::new(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_24_bytes_and_keeps_its_stamp_and_kind() {
        assert_eq!(std::mem::size_of::<Event>(), 24);
        for kind in [Kind::Op, Kind::Msg, Kind::Group] {
            for stamp in [0, 1, 12345, STAMP_MASK] {
                let ev = Event::new(7, stamp, 3, 9, kind);
                assert!(ev.kind() == kind);
                assert_eq!((ev.stamp(), ev.key()), (stamp, (7, stamp)));
                assert_eq!((ev.op, ev.host), (3, 9));
            }
        }
    }
}
