//! Recording MPI programs as schedules.
//!
//! [`Mpi`] lets a generator be written the way the MPI code reads: one rank
//! at a time, calling `isend`, `irecv`, `wait`, blocking `send`/`recv`,
//! `sendrecv` and `calc` in program order. It turns the program order into
//! GOAL `requires` edges with one rule:
//!
//! > an operation requires every operation whose completion the rank's
//! > program observed before posting it.
//!
//! Completions are observed by `wait`/`waitall` (nonblocking requests) and by
//! blocking calls (`send`, `recv`, `sendrecv`, `calc`), which complete before
//! the program moves on. To keep the edge count small, a blocking operation
//! stands for everything observed before it: it requires those operations
//! itself, and later operations require only it (the rest follows
//! transitively). Nonblocking posts do not absorb anything, since a later
//! operation does not depend on them.
//!
//! Likewise, waiting for a request posted after the last observed completion
//! replaces the observed set by that request (it already requires them all).
//!
//! A rank's final `waitall` adds nothing: the rank finishes when all its
//! operations have finished, so nothing after it needs an edge.
//!
//! The operations go into one schedule, or, when the generator's context
//! holds a [`RankStream`], rank by rank into the stream (see `record.rs`):
//! GOAL text, or the schedule's compact columns, one rank sealed at a time.

use std::cell::RefCell;

use super::record::{RankStream, Share};
use super::CollectiveError;
use crate::schedule::{BuildError, Op, OpRef, Schedule, ScheduleBuilder};

/// A posted nonblocking request: its operation and the rank's epoch (count
/// of changes to the observed set) when it was posted.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Req {
    pub op: OpRef,
    epoch: u32,
}

/// A schedule under construction, with each rank's observed completions.
pub(crate) struct Mpi<'a> {
    builder: ScheduleBuilder,
    /// Rank by rank: where each rank goes once the program has moved past it.
    stream: Option<&'a RefCell<RankStream<'a>>>,
    /// Whether operations are kept (not while probing the rank order).
    keep: bool,
    /// On one of several threads: the ranks kept (the others are skipped).
    share: Option<Share>,
    /// Rank by rank: the rank being recorded; those below it are done.
    current: u32,
    /// Operations held in `builder`, now and at most.
    held: usize,
    peak_held: usize,
    /// The first error freezing a finished rank.
    error: Option<BuildError>,
    /// Per rank: completed operations the next posted operation must require.
    observed: Vec<Vec<OpRef>>,
    /// Per rank: how many times `observed` changed.
    epoch: Vec<u32>,
    /// Nanoseconds of local reduction per byte received (0: no calc ops).
    reduce_ns_per_byte: f64,
}

impl<'a> Mpi<'a> {
    pub(crate) fn new(
        ranks: u32,
        reduce_ns_per_byte: f64,
        stream: Option<&'a RefCell<RankStream<'a>>>,
    ) -> Mpi<'a> {
        Mpi {
            builder: ScheduleBuilder::new(ranks),
            stream,
            keep: stream.is_none_or(|s| s.borrow().keeps_ops()),
            share: stream.and_then(|s| s.borrow().share()),
            current: 0,
            held: 0,
            peak_held: 0,
            error: None,
            observed: vec![Vec::new(); ranks as usize],
            epoch: vec![0; ranks as usize],
            reduce_ns_per_byte,
        }
    }

    /// Append `op` to `rank`. Rank by rank, moving to a higher rank completes
    /// the ranks before it; moving back to a lower one is noted in the stream,
    /// and nothing more is kept.
    fn push(&mut self, rank: u32, op: Op) -> OpRef {
        if let Some(stream) = self.stream {
            if rank < self.current {
                stream
                    .borrow_mut()
                    .backstep
                    .get_or_insert((self.current, rank));
                self.keep = false;
            } else if rank > self.current {
                self.complete_until(rank);
            }
        }
        if !self.keeps(rank) {
            return OpRef { rank, index: 0 };
        }
        self.held += 1;
        self.peak_held = self.peak_held.max(self.held);
        self.builder.push(rank, op)
    }

    /// Whether operations of `rank` are kept.
    fn keeps(&self, rank: u32) -> bool {
        self.keep && self.share.is_none_or(|s| s.owns(rank))
    }

    /// Rank by rank: hand ranks `current..end` to the stream (each alone,
    /// then dropped here) or seal them, and record `end` from now on.
    fn complete_until(&mut self, end: u32) {
        let Some(stream) = self.stream else {
            return;
        };
        let (seals, parts) = {
            let s = stream.borrow();
            (s.seals(), s.takes_parts())
        };
        for rank in self.current..end {
            // A complete rank's observed set is never read again.
            self.observed[rank as usize] = Vec::new();
            if !self.keeps(rank) {
                continue;
            }
            self.held -= self.builder.len_of(rank) as usize;
            let done = if seals {
                self.builder.seal(rank)
            } else if parts {
                let part = self.builder.take_part(rank);
                part.map(|part| stream.borrow_mut().part_done(part, rank))
            } else {
                let alone = self.builder.take_rank(rank);
                alone.map(|alone| stream.borrow_mut().rank_done(&alone, rank))
            };
            if let Err(e) = done {
                self.error.get_or_insert(e);
                self.keep = false;
            }
            if stream.borrow().stopped {
                self.keep = false;
            }
        }
        self.current = end;
    }

    /// `a requires b`, where both are this rank's (kept) operations.
    fn requires(&mut self, a: OpRef, b: OpRef) {
        if self.keeps(a.rank) {
            self.builder.requires(a, b);
        }
    }

    /// Make `op` require everything `rank` has observed so far.
    fn after_observed(&mut self, op: OpRef) {
        if !self.keeps(op.rank) {
            return;
        }
        for &prev in &self.observed[op.rank as usize] {
            self.builder.requires(op, prev);
        }
    }

    /// A nonblocking request posted now.
    fn request(&mut self, op: OpRef) -> Req {
        self.after_observed(op);
        Req {
            op,
            epoch: self.epoch[op.rank as usize],
        }
    }

    /// Replace `rank`'s observed set by `ops`.
    fn observe_only(&mut self, rank: u32, ops: &[OpRef]) {
        let rank = rank as usize;
        self.observed[rank].clear();
        self.observed[rank].extend_from_slice(ops);
        self.epoch[rank] += 1;
    }

    /// `MPI_Isend`: posted now, completes later (see [`wait`](Self::wait)).
    pub(crate) fn isend(&mut self, rank: u32, dst: u32, bytes: u64, tag: u32) -> Req {
        debug_assert_ne!(rank, dst, "a generator tried to send to itself");
        let op = self.push(rank, Op::send(dst, bytes, tag));
        self.request(op)
    }

    /// `MPI_Irecv`: posted now, completes later.
    pub(crate) fn irecv(&mut self, rank: u32, src: u32, bytes: u64, tag: u32) -> Req {
        debug_assert_ne!(rank, src, "a generator tried to receive from itself");
        let op = self.push(rank, Op::recv(src, bytes, tag));
        self.request(op)
    }

    /// Like [`irecv`](Self::irecv), and the receive also waits for `extra`
    /// (used where a request slot is reused once its previous request is done).
    pub(crate) fn irecv_after(
        &mut self,
        rank: u32,
        src: u32,
        bytes: u64,
        tag: u32,
        extra: Req,
    ) -> Req {
        let req = self.irecv(rank, src, bytes, tag);
        self.requires(req.op, extra.op);
        req
    }

    /// Like [`isend`](Self::isend), and the send also waits for `extra`.
    pub(crate) fn isend_after(
        &mut self,
        rank: u32,
        dst: u32,
        bytes: u64,
        tag: u32,
        extra: Req,
    ) -> Req {
        let req = self.isend(rank, dst, bytes, tag);
        self.requires(req.op, extra.op);
        req
    }

    /// `MPI_Wait`: the program observes the request's completion.
    pub(crate) fn wait(&mut self, req: Req) {
        let rank = req.op.rank as usize;
        if req.epoch == self.epoch[rank] {
            // Posted after everything observed so far: it stands for all of it.
            self.observe_only(req.op.rank, &[req.op]);
        } else {
            self.observed[rank].push(req.op);
            self.epoch[rank] += 1;
        }
    }

    /// `MPI_Waitall`.
    pub(crate) fn waitall(&mut self, reqs: &[Req]) {
        for &req in reqs {
            self.wait(req);
        }
    }

    /// A blocking operation: posted after everything observed, and from now
    /// on it stands for all of that.
    fn blocking(&mut self, op: OpRef) {
        self.after_observed(op);
        self.observe_only(op.rank, &[op]);
    }

    /// Blocking `MPI_Send`.
    pub(crate) fn send(&mut self, rank: u32, dst: u32, bytes: u64, tag: u32) -> OpRef {
        debug_assert_ne!(rank, dst, "a generator tried to send to itself");
        let op = self.push(rank, Op::send(dst, bytes, tag));
        self.blocking(op);
        op
    }

    /// Blocking `MPI_Recv`.
    pub(crate) fn recv(&mut self, rank: u32, src: u32, bytes: u64, tag: u32) -> OpRef {
        debug_assert_ne!(rank, src, "a generator tried to receive from itself");
        let op = self.push(rank, Op::recv(src, bytes, tag));
        self.blocking(op);
        op
    }

    /// `MPI_Sendrecv` (Open MPI's `ompi_coll_base_sendrecv`: irecv, send,
    /// wait): both operations start together; what follows requires both.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sendrecv(
        &mut self,
        rank: u32,
        dst: u32,
        send_bytes: u64,
        send_tag: u32,
        src: u32,
        recv_bytes: u64,
        recv_tag: u32,
    ) {
        let r = self.irecv(rank, src, recv_bytes, recv_tag);
        let s = self.isend(rank, dst, send_bytes, send_tag);
        self.observe_only(rank, &[r.op, s.op]);
    }

    /// Local reduction of `bytes` received bytes: a blocking `calc` of
    /// `ceil(bytes * reduce_ns_per_byte)` ns, emitted only when that is > 0.
    pub(crate) fn reduce(&mut self, rank: u32, bytes: u64) {
        let ns = (bytes as f64 * self.reduce_ns_per_byte).ceil();
        if ns > 0.0 {
            let op = self.push(rank, Op::calc(ns as u64));
            self.blocking(op);
        }
    }

    /// The whole schedule. Rank by rank, the remaining ranks go to the
    /// stream, and the schedule returned is the sealed one, or empty when
    /// the ranks went elsewhere (GOAL text) or the program went back to an
    /// earlier rank.
    pub(crate) fn finish(mut self) -> Result<Schedule, CollectiveError> {
        let Some(stream) = self.stream else {
            return Ok(self.builder.build()?);
        };
        let ranks = self.builder.num_ranks();
        self.complete_until(ranks);
        if let Some(e) = self.error {
            return Err(e.into());
        }
        let mut stream = stream.borrow_mut();
        stream.peak_held = stream.peak_held.max(self.peak_held);
        if stream.seals() && stream.backstep.is_none() {
            return Ok(self.builder.build()?);
        }
        Ok(ScheduleBuilder::new(ranks).build()?)
    }
}
