//! Recording a generator rank by rank: the GOAL text of each rank is written
//! as soon as the generator moves past it, and the rank is then forgotten.
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

use std::io::{self, Write};

use crate::goal::GoalWriter;
use crate::schedule::Schedule;

/// The receiving end of a rank-by-rank recording.
pub(crate) struct RankStream<'w> {
    /// GOAL text of the ranks written so far; `None` for a probe.
    text: Option<GoalWriter<&'w mut dyn Write>>,
    /// The first time the program went back: (rank being recorded, earlier rank).
    pub backstep: Option<(u32, u32)>,
    /// The first write error (nothing more is written after it).
    pub error: Option<io::Error>,
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
            text: None,
            backstep: None,
            error: None,
            peak_held: 0,
            num_ops: 0,
            bytes_sent: 0,
        }
    }

    /// Write the GOAL text of a schedule of `num_ranks` ranks to `out`.
    pub(crate) fn goal(out: &'w mut dyn Write, num_ranks: u32) -> Self {
        RankStream {
            text: Some(GoalWriter::new(out, num_ranks)),
            ..Self::probe()
        }
    }

    /// Whether the recording keeps operations (false for a probe).
    pub(crate) fn keeps_ops(&self) -> bool {
        self.text.is_some()
    }

    /// Rank `rank` is complete: `schedule` holds it alone.
    pub(crate) fn rank_done(&mut self, schedule: &Schedule, rank: u32) {
        let Some(text) = self.text.as_mut() else {
            return;
        };
        if self.error.is_some() || self.backstep.is_some() {
            return;
        }
        self.num_ops += schedule.num_ops() as u64;
        self.bytes_sent += schedule.bytes_sent();
        if let Err(e) = text.rank(schedule, rank) {
            self.error = Some(e);
        }
    }

    /// Write out what is buffered; the first write error, if any.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match self.text.take() {
            Some(text) => text.finish(),
            None => Ok(()),
        }
    }
}
