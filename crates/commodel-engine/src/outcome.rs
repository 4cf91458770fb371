//! What a simulation returns: per-rank finish times, per-message records,
//! RTO events — or why it could not finish.

use crate::schedule::{OpId, OpKind, Schedule};
use crate::time::Time;
use std::fmt;

/// One delivered message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageRecord {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub tag: u32,
    /// When the send started.
    pub start: Time,
    /// When the matching receive completed.
    pub end: Time,
    pub send: OpId,
    pub recv: OpId,
    /// Whether a retransmission timeout delayed it.
    pub rto: bool,
}

impl MessageRecord {
    /// The message of `send` in `s`, received by `recv`, from `start` to `end`.
    pub fn new(s: &Schedule, send: OpId, recv: OpId, start: Time, end: Time, rto: bool) -> Self {
        MessageRecord {
            src: s.rank_of(send),
            dst: s.peer(send),
            bytes: s.size(send),
            tag: s.tag(send),
            start,
            end,
            send,
            recv,
            rto,
        }
    }
}

/// A retransmission timeout and the message it delays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtoEvent {
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    pub tag: u32,
    pub send: OpId,
    /// When the timeout started (the message's finish time without it).
    pub at: Time,
    pub delay: Time,
}

/// The result of a simulation.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub model: &'static str,
    /// Finish time of each rank.
    pub finish: Vec<Time>,
    /// Largest finish time.
    pub makespan: Time,
    /// Events processed (operations plus message transfers).
    pub events: u64,
    /// Delivered messages (empty unless recording was asked for).
    pub messages: Vec<MessageRecord>,
    pub rto_events: Vec<RtoEvent>,
}

impl Outcome {
    pub fn new(
        model: &'static str,
        finish: Vec<Time>,
        events: u64,
        messages: Vec<MessageRecord>,
        rto_events: Vec<RtoEvent>,
    ) -> Self {
        let makespan = finish.iter().copied().max().unwrap_or(0);
        Outcome {
            model,
            finish,
            makespan,
            events,
            messages,
            rto_events,
        }
    }
    /// The rank that finishes last (the lowest such rank on ties).
    pub fn slowest_rank(&self) -> u32 {
        self.finish
            .iter()
            .enumerate()
            .max_by_key(|&(i, &t)| (t, std::cmp::Reverse(i)))
            .map(|(i, _)| i as u32)
            .unwrap_or(0)
    }
}

/// An operation, named for an error: one that never completed (a deadlock),
/// or one at which time overflowed or a message was truncated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckOp {
    pub rank: u32,
    /// Label, or `#<local index>`.
    pub label: String,
    pub kind: OpKind,
    pub peer: u32,
    pub tag: u32,
    pub started: bool,
}

impl StuckOp {
    pub fn new(s: &Schedule, op: OpId, started: bool) -> Self {
        StuckOp {
            rank: s.rank_of(op),
            label: s.describe(op),
            kind: s.kind(op),
            peer: s.peer(op),
            tag: s.tag(op),
            started,
        }
    }
}

impl fmt::Display for StuckOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let any = |v: u32| {
            if v == crate::ANY {
                "-1".to_string()
            } else {
                v.to_string()
            }
        };
        match self.kind {
            OpKind::Send => write!(
                f,
                "rank {} {} (send to {} tag {})",
                self.rank,
                self.label,
                self.peer,
                any(self.tag)
            ),
            OpKind::Recv => write!(
                f,
                "rank {} {} (recv from {} tag {})",
                self.rank,
                self.label,
                any(self.peer),
                any(self.tag)
            ),
            OpKind::Calc => write!(f, "rank {} {} (calc)", self.rank, self.label),
        }
    }
}

/// Why a schedule could not finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deadlock {
    /// Operations that never finished (receives nobody sent to, sends waiting
    /// for a receive, operations waiting on those).
    pub stuck: Vec<StuckOp>,
    /// Sends whose message arrived but was never received.
    pub unreceived: Vec<StuckOp>,
}

const SHOW: usize = 12;

impl fmt::Display for Deadlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut ranks: Vec<u32> = self
            .stuck
            .iter()
            .chain(&self.unreceived)
            .map(|s| s.rank)
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
        write!(
            f,
            "the schedule cannot finish: {} operation(s) stuck",
            self.stuck.len()
        )?;
        if !self.unreceived.is_empty() {
            write!(
                f,
                " and {} message(s) never received",
                self.unreceived.len()
            )?;
        }
        let shown: Vec<String> = ranks.iter().take(SHOW).map(|r| r.to_string()).collect();
        write!(
            f,
            " on rank(s) {}{}",
            shown.join(", "),
            if ranks.len() > SHOW { ", ..." } else { "" }
        )?;
        // Root causes first: started operations (a receive nobody sends to, a
        // send waiting for its receiver), then those waiting on them.
        let mut list: Vec<&StuckOp> = self.stuck.iter().filter(|s| s.started).collect();
        list.extend(self.stuck.iter().filter(|s| !s.started));
        for s in list.iter().take(SHOW) {
            write!(
                f,
                "\n  {}: {}",
                if s.started { "blocked" } else { "waiting" },
                s
            )?;
        }
        if list.len() > SHOW {
            write!(f, "\n  ... and {} more", list.len() - SHOW)?;
        }
        for s in self.unreceived.iter().take(SHOW) {
            write!(f, "\n  never received: {}", s)?;
        }
        if self.unreceived.len() > SHOW {
            write!(f, "\n  ... and {} more", self.unreceived.len() - SHOW)?;
        }
        Ok(())
    }
}

/// Why a simulation failed.
#[non_exhaustive]
#[derive(Clone, Debug, thiserror::Error)]
pub enum SimError {
    /// The schedule cannot finish (who waits on whom).
    #[error("{0}")]
    Deadlock(Deadlock),
    /// A model name the engine does not know.
    #[error("unknown model `{0}`; known models: {known}", known = crate::params::MODELS.join(", "))]
    UnknownModel(String),
    /// A parameter of `model` that is missing, of the wrong type or out of range.
    #[error("model {model}: parameter `{field}` {problem}")]
    BadParameter {
        model: &'static str,
        field: String,
        problem: String,
    },
    /// More ranks than the topology has nodes, and no placement given.
    #[error(
        "model {model}: the schedule has {ranks} ranks but the topology has {nodes} nodes; \
         give `rank_to_node` (or ranks_per_node in the platform) to place several ranks on a node"
    )]
    TooManyRanks {
        model: &'static str,
        ranks: u32,
        nodes: u32,
    },
    /// Simulated time left the range of [`Time`] (2^64 ps, about 213 days).
    #[error("simulated time out of range (0 to 2^64 ps, 213 days) at {0}")]
    Overflow(StuckOp),
    /// A receive smaller than the message it matched (an MPI truncation error).
    #[error("message truncated: {send} sends {send_bytes} B, but {recv} receives {recv_bytes} B")]
    Truncated {
        send: StuckOp,
        recv: StuckOp,
        send_bytes: u64,
        recv_bytes: u64,
    },
}

impl SimError {
    /// A [`SimError::BadParameter`].
    pub fn bad(model: &'static str, field: impl Into<String>, problem: impl Into<String>) -> Self {
        SimError::BadParameter {
            model,
            field: field.into(),
            problem: problem.into(),
        }
    }

    /// The [`SimError::Overflow`] of an [`crate::time::Overflow`] in `s`.
    pub fn overflow(s: &Schedule, o: crate::time::Overflow) -> SimError {
        SimError::Overflow(StuckOp::new(s, o.0, true))
    }

    /// Check that receive `recv` can hold the message of `send` (both in `s`).
    #[inline]
    pub fn check_fits(s: &Schedule, send: OpId, recv: OpId) -> Result<(), SimError> {
        let (send_bytes, recv_bytes) = (s.size(send), s.size(recv));
        if send_bytes <= recv_bytes {
            return Ok(());
        }
        Err(SimError::Truncated {
            send: StuckOp::new(s, send, true),
            recv: StuckOp::new(s, recv, true),
            send_bytes,
            recv_bytes,
        })
    }
}
