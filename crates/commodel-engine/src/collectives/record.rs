//! Recording a generator rank by rank: the GOAL text of each rank is written
//! as soon as the generator moves past it, and the rank is then forgotten; or
//! (for [`generate`](super::generate)) each rank is sealed into the schedule's
//! compact columns as soon as the generator moves past it.
//!
//! A generator drives an [`Mpi`](super::program::Mpi) program. When
//! [`Ctx::stream`](super::Ctx) holds a [`RankStream`], `Mpi` keeps only the
//! rank being recorded: when the program first touches a higher rank, the
//! ranks before it are complete (dependencies are rank-local), so each is
//! frozen alone, handed to the stream and dropped. This holds only if the
//! generator records each rank in one stretch, ranks in ascending order; a
//! [`RankStream::probe`] run, which keeps and writes nothing, tells whether it
//! does ([`RankStream::backstep`]), so that [`write_goal`](super::write_goal)
//! can fall back to the whole schedule in memory before writing a byte.
//!
//! On several threads (`parallel.rs`), each runs the whole program but keeps
//! only its [`Share`] of the ranks, and hands each finished block of ranks
//! (GOAL text, or the ranks as added) to the thread that puts them in order.

use std::io::{self, Write};
use std::sync::mpsc::SyncSender;

use crate::goal::GoalWriter;
use crate::schedule::{RankPart, Schedule};

/// One worker's ranks when a program is recorded on several threads: the
/// ranks cut into blocks of `block` consecutive ranks, block `b` recorded by
/// worker `b % workers`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Share {
    pub worker: u32,
    pub workers: u32,
    pub block: u32,
}

impl Share {
    pub(crate) fn owns(&self, rank: u32) -> bool {
        (rank / self.block) % self.workers == self.worker
    }

    /// Whether `rank` is the last of its block (of `ranks` in all).
    fn ends_block(&self, rank: u32, ranks: u32) -> bool {
        rank % self.block == self.block - 1 || rank == ranks - 1
    }
}

/// A finished block of a worker's ranks.
pub(crate) enum Block {
    /// Their GOAL text.
    Text(Vec<u8>),
    /// Their operations, dependencies and labels as added, with their ranks.
    Parts(Vec<(u32, RankPart)>),
}

/// Where the ranks of a rank-by-rank recording go.
enum Sink<'w> {
    /// Nowhere: a probe keeps and writes nothing.
    Probe,
    /// GOAL text, written as each rank is complete.
    Goal(GoalWriter<&'w mut dyn Write>),
    /// The [`Mpi`](super::program::Mpi) program's own builder, each rank sealed
    /// ([`ScheduleBuilder::seal`](crate::ScheduleBuilder)) as it is complete.
    Seal,
    /// A worker's share, in blocks of GOAL text.
    Text {
        share: Share,
        ranks: u32,
        text: GoalWriter<Vec<u8>>,
        to: SyncSender<Block>,
    },
    /// A worker's share, in blocks of ranks as added.
    Parts {
        share: Share,
        ranks: u32,
        parts: Vec<(u32, RankPart)>,
        to: SyncSender<Block>,
    },
}

/// The receiving end of a rank-by-rank recording.
pub(crate) struct RankStream<'w> {
    sink: Sink<'w>,
    /// The first time the program went back: (rank being recorded, earlier rank).
    pub backstep: Option<(u32, u32)>,
    /// The first write error (nothing more is written after it).
    pub error: Option<io::Error>,
    /// A worker's blocks are no longer taken: the program may stop keeping ranks.
    pub stopped: bool,
    /// The most operations `Mpi` held at once.
    pub peak_held: usize,
    /// Operations and bytes sent of the ranks written.
    pub num_ops: u64,
    pub bytes_sent: u64,
}

impl<'w> RankStream<'w> {
    /// Keep and write nothing; only record [`backstep`](Self::backstep).
    pub(crate) fn probe() -> Self {
        RankStream {
            sink: Sink::Probe,
            backstep: None,
            error: None,
            stopped: false,
            peak_held: 0,
            num_ops: 0,
            bytes_sent: 0,
        }
    }

    /// Write the GOAL text of a schedule of `num_ranks` ranks to `out`.
    pub(crate) fn goal(out: &'w mut dyn Write, num_ranks: u32) -> Self {
        RankStream {
            sink: Sink::Goal(GoalWriter::new(out, num_ranks)),
            ..Self::probe()
        }
    }

    /// Seal each rank into the program's schedule as it is complete.
    pub(crate) fn seal() -> Self {
        RankStream {
            sink: Sink::Seal,
            ..Self::probe()
        }
    }

    /// A worker's `share` of `ranks` ranks, each finished block sent `to` the
    /// thread that puts them in order: as GOAL text if `text`, else as added.
    pub(crate) fn worker(share: Share, ranks: u32, text: bool, to: SyncSender<Block>) -> Self {
        let sink = if text {
            let text = GoalWriter::headless(Vec::new());
            Sink::Text {
                share,
                ranks,
                text,
                to,
            }
        } else {
            let parts = Vec::new();
            Sink::Parts {
                share,
                ranks,
                parts,
                to,
            }
        };
        RankStream {
            sink,
            ..Self::probe()
        }
    }

    /// Whether the recording keeps operations (false for a probe).
    pub(crate) fn keeps_ops(&self) -> bool {
        !matches!(self.sink, Sink::Probe)
    }

    /// Whether complete ranks are sealed into the program's schedule (rather
    /// than handed to [`rank_done`](Self::rank_done)).
    pub(crate) fn seals(&self) -> bool {
        matches!(self.sink, Sink::Seal)
    }

    /// Whether complete ranks are handed to [`part_done`](Self::part_done) as added.
    pub(crate) fn takes_parts(&self) -> bool {
        matches!(self.sink, Sink::Parts { .. })
    }

    /// A worker's share of the ranks (`None`: every rank).
    pub(crate) fn share(&self) -> Option<Share> {
        match self.sink {
            Sink::Text { share, .. } | Sink::Parts { share, .. } => Some(share),
            _ => None,
        }
    }

    /// Rank `rank` is complete: `schedule` holds it alone, as its rank 0.
    pub(crate) fn rank_done(&mut self, schedule: &Schedule, rank: u32) {
        if self.error.is_some() || self.backstep.is_some() {
            return;
        }
        let written = match &mut self.sink {
            Sink::Goal(text) => text.rank_as(schedule, 0, rank),
            Sink::Text { text, .. } => text.rank_as(schedule, 0, rank),
            _ => return,
        };
        self.num_ops += schedule.num_ops() as u64;
        self.bytes_sent += schedule.bytes_sent();
        if let Err(e) = written {
            self.error = Some(e);
            return;
        }
        if let Sink::Text {
            share,
            ranks,
            text,
            to,
        } = &mut self.sink
        {
            if share.ends_block(rank, *ranks) {
                let done = std::mem::replace(text, GoalWriter::headless(Vec::new()));
                match done.into_out() {
                    Ok(bytes) => self.stopped |= to.send(Block::Text(bytes)).is_err(),
                    Err(e) => self.error = Some(e),
                }
            }
        }
    }

    /// Rank `rank` is complete: `part` holds it as added.
    pub(crate) fn part_done(&mut self, part: RankPart, rank: u32) {
        if let Sink::Parts {
            share,
            ranks,
            parts,
            to,
        } = &mut self.sink
        {
            parts.push((rank, part));
            if share.ends_block(rank, *ranks) {
                let block = Block::Parts(std::mem::take(parts));
                self.stopped |= to.send(block).is_err();
            }
        }
    }

    /// Write out what is buffered; the first write error, if any.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match std::mem::replace(&mut self.sink, Sink::Probe) {
            Sink::Goal(text) => text.finish(),
            _ => Ok(()),
        }
    }
}
