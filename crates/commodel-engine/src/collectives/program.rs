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

use super::CollectiveError;
use crate::schedule::{OpRef, Schedule, ScheduleBuilder};

/// A schedule under construction, with each rank's observed completions.
pub(crate) struct Mpi {
    builder: ScheduleBuilder,
    /// Per rank: completed operations the next posted operation must require.
    observed: Vec<Vec<OpRef>>,
    /// Per rank: how many times `observed` changed.
    epoch: Vec<u32>,
    /// Per rank, per operation: the rank's epoch when it was posted.
    posted_at: Vec<Vec<u32>>,
    /// Nanoseconds of local reduction per byte received (0: no calc ops).
    reduce_ns_per_byte: f64,
}

impl Mpi {
    pub(crate) fn new(ranks: u32, reduce_ns_per_byte: f64) -> Mpi {
        Mpi {
            builder: ScheduleBuilder::new(ranks),
            observed: vec![Vec::new(); ranks as usize],
            epoch: vec![0; ranks as usize],
            posted_at: vec![Vec::new(); ranks as usize],
            reduce_ns_per_byte,
        }
    }

    /// Make `op` require everything `rank` has observed so far.
    fn after_observed(&mut self, op: OpRef) {
        let rank = op.rank as usize;
        for &prev in &self.observed[rank] {
            self.builder.requires(op, prev);
        }
        debug_assert_eq!(self.posted_at[rank].len(), op.index as usize);
        self.posted_at[rank].push(self.epoch[rank]);
    }

    /// Replace `rank`'s observed set by `ops`.
    fn observe_only(&mut self, rank: u32, ops: &[OpRef]) {
        let rank = rank as usize;
        self.observed[rank].clear();
        self.observed[rank].extend_from_slice(ops);
        self.epoch[rank] += 1;
    }

    /// `MPI_Isend`: posted now, completes later (see [`wait`](Self::wait)).
    pub(crate) fn isend(&mut self, rank: u32, dst: u32, bytes: u64, tag: u32) -> OpRef {
        debug_assert_ne!(rank, dst, "a generator tried to send to itself");
        let op = self.builder.send(rank, dst, bytes, tag);
        self.after_observed(op);
        op
    }

    /// `MPI_Irecv`: posted now, completes later.
    pub(crate) fn irecv(&mut self, rank: u32, src: u32, bytes: u64, tag: u32) -> OpRef {
        debug_assert_ne!(rank, src, "a generator tried to receive from itself");
        let op = self.builder.recv(rank, src, bytes, tag);
        self.after_observed(op);
        op
    }

    /// Like [`irecv`](Self::irecv), and the receive also waits for `extra`
    /// (used where a request slot is reused once its previous request is done).
    pub(crate) fn irecv_after(
        &mut self,
        rank: u32,
        src: u32,
        bytes: u64,
        tag: u32,
        extra: OpRef,
    ) -> OpRef {
        let op = self.irecv(rank, src, bytes, tag);
        self.builder.requires(op, extra);
        op
    }

    /// Like [`isend`](Self::isend), and the send also waits for `extra`.
    pub(crate) fn isend_after(
        &mut self,
        rank: u32,
        dst: u32,
        bytes: u64,
        tag: u32,
        extra: OpRef,
    ) -> OpRef {
        let op = self.isend(rank, dst, bytes, tag);
        self.builder.requires(op, extra);
        op
    }

    /// `MPI_Wait`: the program observes `op`'s completion.
    pub(crate) fn wait(&mut self, op: OpRef) {
        let rank = op.rank as usize;
        if self.posted_at[rank][op.index as usize] == self.epoch[rank] {
            // Posted after everything observed so far: it stands for all of it.
            self.observe_only(op.rank, &[op]);
        } else {
            self.observed[rank].push(op);
            self.epoch[rank] += 1;
        }
    }

    /// `MPI_Waitall`.
    pub(crate) fn waitall(&mut self, ops: &[OpRef]) {
        for &op in ops {
            self.wait(op);
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
        let op = self.builder.send(rank, dst, bytes, tag);
        self.blocking(op);
        op
    }

    /// Blocking `MPI_Recv`.
    pub(crate) fn recv(&mut self, rank: u32, src: u32, bytes: u64, tag: u32) -> OpRef {
        debug_assert_ne!(rank, src, "a generator tried to receive from itself");
        let op = self.builder.recv(rank, src, bytes, tag);
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
        self.observe_only(rank, &[r, s]);
    }

    /// Local reduction of `bytes` received bytes: a blocking `calc` of
    /// `ceil(bytes * reduce_ns_per_byte)` ns, emitted only when that is > 0.
    pub(crate) fn reduce(&mut self, rank: u32, bytes: u64) {
        let ns = (bytes as f64 * self.reduce_ns_per_byte).ceil();
        if ns > 0.0 {
            let op = self.builder.calc(rank, ns as u64);
            self.blocking(op);
        }
    }

    pub(crate) fn finish(self) -> Result<Schedule, CollectiveError> {
        Ok(self.builder.build()?)
    }
}
