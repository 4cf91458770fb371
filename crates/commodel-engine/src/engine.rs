//! The message-level event engine, shared by the models that price whole
//! messages (`plogp`, `hockney`, and the contention models built on a
//! [`Network`]).
//!
//! Semantics, following PlogPT's Isend/Irecv/Wait rules (Nomura et al.,
//! eq. 10-15), with GOAL dependencies playing the role of Waits:
//!
//! * An operation is *ready* once every operation it `requires` has finished
//!   and every operation it `irequires` has started. It starts then (Isend and
//!   Irecv cost nothing to enter, eq. 12); a `calc` starts when its CPU is free
//!   and runs for its duration.
//! * An eager send (size ≤ S) hands its message to the [`Network`] at once. The
//!   network decides when the send finishes (eq. 13: `f = l + g_c(m)`) and when
//!   the data has arrived at the receiver (eq. 15: `f + L` without contention).
//! * A rendezvous send (size > S) first sends a request; it reaches the
//!   receiver after the control latency, is matched there, and once the
//!   receive is posted a clear-to-send returns after the control latency; only
//!   then is the data handed to the network.
//! * Messages are matched at the receiver when they arrive (eager) or when
//!   their request arrives (rendezvous), against posted receives in posting
//!   order ([`Matcher`]); a receive posted later searches the arrived messages
//!   in arrival order. A receive finishes at the later of its start and its
//!   message's arrival.
//! * With [`CpuShare`] (ranks sharing C cores), a send first takes the extra
//!   CPU time (s - 1) o_s(m) on its rank's CPU before it enters, a receive
//!   takes (s - 1) o_r(m) there after its message has arrived, and a calc runs
//!   s times its duration; s = P / C. Without it nothing changes.
//! * A rank finishes when its last operation finishes.
//! * A message larger than the receive it matches is [`SimError::Truncated`];
//!   a time past [`Time`] (network or engine) is [`SimError::Overflow`].
//!
//! Ties: events at the same picosecond are handled in the order they were
//! created; network completions due at a time come before engine events at
//! that time, in transfer order. Results are bit-for-bit repeatable.

use crate::countdown::{Countdown, Progress};
use crate::jitter::Jitter;
use crate::matching::{self, Matcher};
use crate::outcome::{Deadlock, MessageRecord, Outcome, RtoEvent, SimError, StuckOp};
use crate::radix::{Keyed, RadixQueue};
use crate::schedule::{OpId, OpKind, Schedule};
use crate::table::Table;
use crate::time::{add, Overflow, Time, PS_PER_NS};

/// Index of a transfer handed to a [`Network`] (the send operation's id).
pub type XferId = OpId;

/// What a network reports about a transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum XferEvent {
    /// The sender is done with the message (its send operation finishes).
    SendDone(XferId),
    /// The whole message is at the receiver.
    Arrived(XferId),
    /// A retransmission timeout delays the transfer (reported, not acted on).
    Rto { xfer: XferId, at: Time, delay: Time },
}

/// A send that enters: (transfer, src rank, dst rank, bytes).
pub type Entering = (XferId, u32, u32, u64);

/// See [`Network::advance_with`].
pub type Lookahead<'a> = &'a mut dyn FnMut(XferId, &mut Vec<Entering>);

/// Prices transfers: when each send finishes and each message arrives.
pub trait Network {
    /// Model name for reports.
    fn name(&self) -> &'static str;
    /// Latency of a small control message (rendezvous request / clear-to-send).
    fn control_latency(&self, src: u32, dst: u32) -> Time;
    /// A transfer of `bytes` from rank `src` to rank `dst` starts at `now`: a message of
    /// `size` bytes as scheduled, `bytes` the work it puts on the network (`size`, or in a
    /// noisy run `size` scaled by its noise; a model that classifies messages by size, as
    /// `tcpflow`'s rules do, classifies by `size`). `Err` when a time it would set leaves
    /// [`Time`].
    fn start(
        &mut self,
        now: Time,
        xfer: XferId,
        src: u32,
        dst: u32,
        bytes: u64,
        size: u64,
    ) -> Result<(), Overflow>;
    /// The time of the next pending [`XferEvent`], if any.
    fn next_time(&self) -> Option<Time>;
    /// Append the events due at `now` (`now` is `next_time()`), in a deterministic order.
    /// `Err` names a transfer whose times leave [`Time`].
    fn advance(&mut self, now: Time, out: &mut Vec<XferEvent>) -> Result<(), Overflow>;
    /// Whether the network's events at an instant are handled after the
    /// engine's own events at that instant (so that every flow starting then
    /// is known before rates are set; the contention models). Default: before.
    fn late(&self) -> bool {
        false
    }
    /// A send operation is posted (PlogPT's Isend *enters*) at `now`; for a
    /// rendezvous send this is before its data is handed over by `start`.
    fn send_entered(&mut self, _now: Time, _xfer: XferId, _src: u32, _dst: u32, _bytes: u64) {}
    /// [`Network::advance`], with `lookahead(x, sends)` appending the sends
    /// (transfer, src, dst, bytes) that enter at `now` as soon as send `x`
    /// finishes (they wait for nothing else). PlogPT's RTO rule uses it.
    fn advance_with(
        &mut self,
        now: Time,
        out: &mut Vec<XferEvent>,
        _lookahead: Lookahead<'_>,
    ) -> Result<(), Overflow> {
        self.advance(now, out)
    }
}

/// Ranks sharing cores: every rank of a run busy-polls (as MPI ranks wait), so when
/// the P ranks share C < P cores each gets C / P of a core and its CPU work takes
/// s = P / C times as long. The per-message overheads o_s(m), o_r(m) are the ones
/// measured on a core of its own (PLogP's); L and g(m) already contain them once,
/// so a message adds the difference, (s - 1) o(m), in two parts:
///
/// * the message's own, (s - 1) o(m_1) with m_1 = min(m, 1): a send takes it before
///   it enters, a receive after its message is all there;
/// * the bytes', w(m) = (s - 1) (o(m) - o(m_1)), the copies between the user's buffer
///   and the socket, which go on while the message is on the wire: a send enters
///   without waiting for it (it takes the sender's CPU after the message's own part),
///   and a receive pays only what its transfer (from its start to its arrival) did
///   not cover, max(0, w_r(m) - transfer).
///
/// Beyond the last size of a table its last value holds.
#[derive(Clone, Debug)]
pub struct CpuShare {
    /// s = P / C as the fraction `ranks / cores` (ranks > cores).
    ranks: u64,
    cores: u64,
    /// The last size of the tables: larger messages take its values.
    last_size: u64,
    /// (s - 1) o_s(m) and (s - 1) o_r(m) at the sizes given, ps.
    send: Table,
    recv: Table,
}

impl CpuShare {
    /// The sharing of `cores` cores by `ranks` ranks with overheads o_s, o_r (ps) at
    /// `sizes`; None when every rank has a core (ranks <= cores), after the tables are
    /// checked all the same. `Err`: the field at fault (`cores`, `o_s`, `o_r`) and what
    /// is wrong with it.
    pub fn new(
        ranks: u64,
        cores: u64,
        sizes: &[u64],
        o_s: &[Time],
        o_r: &[Time],
    ) -> Result<Option<CpuShare>, (&'static str, String)> {
        if cores == 0 {
            return Err(("cores", "must be at least 1".into()));
        }
        let extra = |o: &[Time], name: &'static str| {
            let v = o
                .iter()
                .map(|&x| {
                    let y = x as u128 * ranks.saturating_sub(cores) as u128 / cores as u128;
                    Time::try_from(y).map_err(|_| (name, "(s - 1) times it exceeds 2^64 ps".into()))
                })
                .collect::<Result<Vec<_>, (&'static str, String)>>()?;
            Table::new(sizes.to_vec(), v).map_err(|e| (name, e))
        };
        let (send, recv) = (extra(o_s, "o_s")?, extra(o_r, "o_r")?);
        if ranks <= cores {
            return Ok(None);
        }
        Ok(Some(CpuShare {
            ranks,
            cores,
            last_size: *sizes.last().expect("Table::new refuses an empty table"),
            send,
            recv,
        }))
    }

    fn clamp(&self, bytes: u64) -> u64 {
        bytes.min(self.last_size)
    }

    /// (s - 1) o(m) split into the message's own part and its bytes' (see the type), ps.
    fn split(table: &Table, bytes: u64) -> Option<(Time, Time)> {
        let own = table.at(bytes.min(1))?;
        Some((own, table.at(bytes)?.saturating_sub(own)))
    }

    /// The send's (own, bytes') CPU work, ps.
    pub fn send_parts(&self, bytes: u64) -> Option<(Time, Time)> {
        Self::split(&self.send, self.clamp(bytes))
    }

    /// The receive's (own, bytes') CPU work, ps.
    pub fn recv_parts(&self, bytes: u64) -> Option<(Time, Time)> {
        Self::split(&self.recv, self.clamp(bytes))
    }

    /// A calc of `d` ps on a shared core: s d, ps.
    pub fn calc(&self, d: Time) -> Option<Time> {
        Time::try_from(d as u128 * self.ranks as u128 / self.cores as u128).ok()
    }
}

/// Why the event loop stopped early.
pub(crate) enum Stop {
    Overflow(Overflow),
    Error(SimError),
}

impl Stop {
    /// The error of `s` this stop reports.
    pub(crate) fn into_error(self, s: &Schedule) -> SimError {
        match self {
            Stop::Overflow(o) => SimError::overflow(s, o),
            Stop::Error(e) => e,
        }
    }
}

impl From<Overflow> for Stop {
    fn from(o: Overflow) -> Stop {
        Stop::Overflow(o)
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    /// The operation is ready (dependencies satisfied).
    Ready(OpId),
    /// The calc operation ends.
    CalcEnd(OpId),
    /// The rendezvous request of this send reaches the receiver.
    Request(OpId),
    /// The clear-to-send for this send reaches the sender: data may go.
    ClearToSend(OpId),
    /// The send's CPU work under [`CpuShare`] is done: it enters.
    Enter(OpId),
    /// The receive's CPU work under [`CpuShare`] is done: it finishes.
    RecvEnd(OpId),
}

/// A queued engine event, ordered by (time, stamp) ([`Keyed`]).
struct Queued {
    time: Time,
    stamp: u64,
    ev: Ev,
}

impl Keyed for Queued {
    #[inline]
    fn key(&self) -> (u64, u64) {
        (self.time, self.stamp)
    }
}

/// Simulate `schedule` with the given network and rendezvous threshold `S`
/// (bytes; `None`: every message is eager).
pub fn simulate<N: Network>(
    schedule: &Schedule,
    net: &mut N,
    rendezvous: Option<u64>,
    record_messages: bool,
) -> Result<Outcome, SimError> {
    simulate_shared(schedule, net, rendezvous, record_messages, None)
}

/// [`simulate`], with the ranks sharing cores as `cpu` says (None: a core each).
pub fn simulate_shared<N: Network>(
    schedule: &Schedule,
    net: &mut N,
    rendezvous: Option<u64>,
    record_messages: bool,
    cpu: Option<&CpuShare>,
) -> Result<Outcome, SimError> {
    simulate_noisy(schedule, net, rendezvous, record_messages, cpu, None)
}

/// [`simulate_shared`], each message's bytes on the network scaled by `jitter`'s next
/// factor (None: as scheduled).
pub fn simulate_noisy<N: Network>(
    schedule: &Schedule,
    net: &mut N,
    rendezvous: Option<u64>,
    record_messages: bool,
    cpu: Option<&CpuShare>,
    jitter: Option<Jitter>,
) -> Result<Outcome, SimError> {
    let mut e = Engine::new(schedule, net, rendezvous, record_messages);
    e.cpu = cpu;
    e.jitter = jitter;
    if cpu.is_some() {
        e.transfer = vec![0; schedule.num_ops()];
    }
    e.run()
}

struct Engine<'a, N: Network> {
    s: &'a Schedule,
    net: &'a mut N,
    rdv: u64,
    queue: RadixQueue<Queued>,
    stamp: u64,
    progress: Countdown,
    /// Per op: start time (kept only when messages are recorded).
    start: Vec<Time>,
    finish_rank: Vec<Time>,
    cpu_free: Vec<Time>,
    ncpu: usize,
    /// Posted receives not yet matched (payload: recv op).
    posted: Matcher,
    /// Arrived (eager) or announced (rendezvous) messages not yet matched (payload: send op).
    unexpected: Matcher,
    /// Rendezvous sends matched and waiting for their data: the receive.
    partner: rustc_hash::FxHashMap<OpId, OpId>,
    events: u64,
    record: bool,
    messages: Vec<MessageRecord>,
    rtos: Vec<RtoEvent>,
    buf: Vec<XferEvent>,
    cpu: Option<&'a CpuShare>,
    /// Per-message noise ([`crate::jitter`]).
    jitter: Option<Jitter>,
    /// Per send, under [`CpuShare`] only: when the network started its message, and
    /// from its arrival on how long the transfer took.
    transfer: Vec<Time>,
}

impl<'a, N: Network> Engine<'a, N> {
    fn new(s: &'a Schedule, net: &'a mut N, rendezvous: Option<u64>, record: bool) -> Self {
        let p = s.num_ranks() as usize;
        let n = s.num_ops();
        let (posted, unexpected) = matching::matchers_for(s);
        let ncpu = s.max_cpu() as usize + 1;
        Engine {
            s,
            net,
            rdv: rendezvous.unwrap_or(u64::MAX),
            queue: RadixQueue::new(),
            stamp: 0,
            progress: Countdown::new(s),
            start: if record { vec![0; n] } else { Vec::new() },
            finish_rank: vec![0; p],
            cpu_free: vec![0; p * ncpu],
            ncpu,
            posted,
            unexpected,
            partner: Default::default(),
            events: 0,
            record,
            messages: Vec::new(),
            rtos: Vec::new(),
            buf: Vec::new(),
            cpu: None,
            jitter: None,
            transfer: Vec::new(),
        }
    }

    /// Take `d` ps of `op`'s CPU from `t` on, after the work queued there before it:
    /// (begin, end).
    fn occupy(&mut self, op: OpId, t: Time, d: Time) -> Result<(Time, Time), Stop> {
        let c = self.s.rank_of(op) as usize * self.ncpu + self.s.cpu(op) as usize;
        let begin = t.max(self.cpu_free[c]);
        let end = add(begin, d, op)?;
        self.cpu_free[c] = end;
        Ok((begin, end))
    }

    fn push(&mut self, t: Time, ev: Ev) {
        self.queue.push(Queued {
            time: t,
            stamp: self.stamp,
            ev,
        });
        self.stamp += 1;
    }

    fn run(mut self) -> Result<Outcome, SimError> {
        self.events().map_err(|e| e.into_error(self.s))?;
        self.finish()
    }

    /// Handle every event.
    fn events(&mut self) -> Result<(), Stop> {
        for op in 0..self.s.num_ops() as OpId {
            if self.progress.is_free(op) {
                self.push(0, Ev::Ready(op));
            }
        }
        let mut now = 0;
        loop {
            let te = self.queue.peek().map(|q| q.time);
            let tn = self.net.next_time();
            // Time never runs backwards (checked in debug builds and tests).
            debug_assert!(
                te.into_iter().chain(tn).all(|t| t >= now),
                "time ran backwards from {now}"
            );
            now = te.into_iter().chain(tn).min().unwrap_or(now);
            match (te, tn) {
                (None, None) => break,
                (_, Some(n)) if te.is_none_or(|e| n < e || (n == e && !self.net.late())) => {
                    let mut buf = std::mem::take(&mut self.buf);
                    let (s, progress) = (self.s, &self.progress);
                    self.net.advance_with(n, &mut buf, &mut |x, sends| {
                        for d in s.requirers(x) {
                            if progress.waits_for_one(d) && s.kind(d) == OpKind::Send {
                                sends.push((d, s.rank_of(d), s.peer(d), s.size(d)));
                            }
                        }
                    })?;
                    for &x in &buf {
                        self.on_network(n, x)?;
                    }
                    buf.clear();
                    self.buf = buf;
                }
                _ => {
                    let q = self.queue.pop().expect("peeked");
                    self.on_event(q.time, q.ev)?;
                }
            }
        }
        Ok(())
    }

    fn on_event(&mut self, t: Time, ev: Ev) -> Result<(), Stop> {
        self.events += 1;
        match ev {
            Ev::Ready(op) => match self.s.kind(op) {
                OpKind::Calc => {
                    let mut duration = self.s.size(op).checked_mul(PS_PER_NS);
                    if let (Some(cpu), Some(d)) = (self.cpu, duration) {
                        duration = cpu.calc(d);
                    }
                    let (begin, end) = self.occupy(op, t, duration.ok_or(Overflow(op))?)?;
                    self.started(op, begin);
                    self.push(end, Ev::CalcEnd(op));
                }
                OpKind::Send => match self.cpu {
                    Some(cpu) => {
                        let (own, bytes) = cpu.send_parts(self.s.size(op)).ok_or(Overflow(op))?;
                        let (_, end) = self.occupy(op, t, own)?;
                        self.occupy(op, end, bytes)?; // the copy, while the message goes
                        self.push(end, Ev::Enter(op));
                    }
                    None => self.enter(t, op)?,
                },
                OpKind::Recv => {
                    self.started(op, t);
                    let rank = self.s.rank_of(op);
                    match self.unexpected.take(rank, self.s.peer(op), self.s.tag(op)) {
                        Some(send) => self.matched(t, send, op)?,
                        None => self.posted.push(rank, self.s.peer(op), self.s.tag(op), op),
                    }
                }
            },
            Ev::CalcEnd(op) | Ev::RecvEnd(op) => self.finished(op, t),
            Ev::Enter(op) => self.enter(t, op)?,
            Ev::Request(send) => self.envelope(t, send)?,
            Ev::ClearToSend(send) => {
                let (src, dst) = (self.s.rank_of(send), self.s.peer(send));
                self.started_transfer(send, t);
                let size = self.s.size(send);
                let bytes = self.on_wire(size);
                self.net.start(t, send, src, dst, bytes, size)?;
            }
        }
        Ok(())
    }

    /// The bytes a message of `bytes` puts on the network: as scheduled, or with noise.
    fn on_wire(&mut self, bytes: u64) -> u64 {
        match self.jitter.as_mut() {
            Some(j) => j.scale(bytes),
            None => bytes,
        }
    }

    /// The send `op` enters at `t` (PlogPT's Isend): its message goes to the network,
    /// or its rendezvous request does.
    fn enter(&mut self, t: Time, op: OpId) -> Result<(), Stop> {
        self.started(op, t);
        let (src, dst) = (self.s.rank_of(op), self.s.peer(op));
        let size = self.s.size(op);
        self.net.send_entered(t, op, src, dst, size);
        if size <= self.rdv {
            self.started_transfer(op, t);
            let bytes = self.on_wire(size);
            self.net.start(t, op, src, dst, bytes, size)?;
        } else {
            let l = self.net.control_latency(src, dst);
            self.push(add(t, l, op)?, Ev::Request(op));
        }
        Ok(())
    }

    fn on_network(&mut self, t: Time, x: XferEvent) -> Result<(), Stop> {
        self.events += 1;
        match x {
            XferEvent::SendDone(send) => self.finished(send, t),
            XferEvent::Arrived(send) => {
                if let Some(x) = self.transfer.get_mut(send as usize) {
                    *x = t.saturating_sub(*x);
                }
                if self.s.size(send) <= self.rdv {
                    self.envelope(t, send)?;
                } else {
                    let recv = self
                        .partner
                        .remove(&send)
                        .expect("rendezvous data arrives after its match");
                    self.complete_recv(t, send, recv)?;
                }
            }
            XferEvent::Rto { xfer, at, delay } => {
                let s = self.s;
                self.rtos.push(RtoEvent {
                    src: s.rank_of(xfer),
                    dst: s.peer(xfer),
                    bytes: s.size(xfer),
                    tag: s.tag(xfer),
                    send: xfer,
                    at,
                    delay,
                });
            }
        }
        Ok(())
    }

    /// A message (eager data, or rendezvous request) reaches its receiver: match it.
    fn envelope(&mut self, t: Time, send: OpId) -> Result<(), Stop> {
        let (src, dst, tag) = (self.s.rank_of(send), self.s.peer(send), self.s.tag(send));
        match self.posted.take(dst, src, tag) {
            Some(recv) => self.matched(t, send, recv)?,
            None => self.unexpected.push(dst, src, tag, send),
        }
        Ok(())
    }

    /// `send` and `recv` matched at `t` (both are known to the receiver).
    fn matched(&mut self, t: Time, send: OpId, recv: OpId) -> Result<(), Stop> {
        SimError::check_fits(self.s, send, recv).map_err(Stop::Error)?;
        if self.s.size(send) <= self.rdv {
            // Eager: matching happens on arrival, or later when the recv is posted.
            self.complete_recv(t, send, recv)?;
        } else {
            self.partner.insert(send, recv);
            let l = self
                .net
                .control_latency(self.s.peer(send), self.s.rank_of(send));
            self.push(add(t, l, send)?, Ev::ClearToSend(send));
        }
        Ok(())
    }

    /// `recv`'s message (from `send`) is all there at `t`; the receive finishes then, or
    /// after its CPU work under [`CpuShare`]. The message record ends at `t`.
    fn complete_recv(&mut self, t: Time, send: OpId, recv: OpId) -> Result<(), Stop> {
        if self.record {
            let rto = self.rtos.iter().any(|r| r.send == send);
            let start = self.start[send as usize];
            let record = MessageRecord::new(self.s, send, recv, start, t, rto);
            self.messages.push(record);
        }
        match self.cpu {
            Some(cpu) => {
                let (own, bytes) = cpu.recv_parts(self.s.size(send)).ok_or(Overflow(recv))?;
                // the copy the transfer covered is done (`transfer`: its duration by now)
                let d = own + bytes.saturating_sub(self.transfer[send as usize]);
                let (_, end) = self.occupy(recv, t, d)?;
                self.push(end, Ev::RecvEnd(recv));
            }
            None => self.finished(recv, t),
        }
        Ok(())
    }

    fn started_transfer(&mut self, send: OpId, t: Time) {
        if let Some(x) = self.transfer.get_mut(send as usize) {
            *x = t;
        }
    }

    fn started(&mut self, op: OpId, t: Time) {
        self.progress.start(op);
        if self.record {
            self.start[op as usize] = t;
        }
        let rank = self.s.rank_of(op) as usize;
        self.finish_rank[rank] = self.finish_rank[rank].max(t);
        let s = self.s;
        for d in s.irequirers(op) {
            self.release(d, t);
        }
    }

    fn finished(&mut self, op: OpId, t: Time) {
        self.progress.finish(op);
        let rank = self.s.rank_of(op) as usize;
        self.finish_rank[rank] = self.finish_rank[rank].max(t);
        let s = self.s;
        for d in s.requirers(op) {
            self.release(d, t);
        }
    }

    fn release(&mut self, op: OpId, t: Time) {
        if self.progress.release(op) {
            self.push(t, Ev::Ready(op));
        }
    }

    fn finish(&mut self) -> Result<Outcome, SimError> {
        let s = self.s;
        let mut stuck = Vec::new();
        for op in 0..s.num_ops() as OpId {
            match self.progress.progress(op) {
                Progress::Done => {}
                p => stuck.push(StuckOp::new(s, op, p == Progress::Started)),
            }
        }
        let mut unreceived = Vec::new();
        for r in 0..s.num_ranks() {
            for (_, _, send) in self.unexpected.entries(r) {
                if self.progress.progress(send) == Progress::Done {
                    unreceived.push(StuckOp::new(s, send, true));
                }
            }
        }
        if !stuck.is_empty() || !unreceived.is_empty() {
            return Err(SimError::Deadlock(Deadlock { stuck, unreceived }));
        }
        let mut messages = std::mem::take(&mut self.messages);
        messages.sort_by_key(|m| (m.start, m.send));
        Ok(Outcome::new(
            self.net.name(),
            std::mem::take(&mut self.finish_rank),
            self.events,
            messages,
            std::mem::take(&mut self.rtos),
        ))
    }
}
