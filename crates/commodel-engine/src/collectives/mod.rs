//! Collective schedule generators: MPI collectives written out as GOAL
//! schedules, one [`Schedule`] per (algorithm, ranks, size).
//!
//! ```
//! use commodel_engine::collectives::{generate, CollectiveOptions};
//! let s = generate("bcast-binomial", 8, 65536, &CollectiveOptions::default()).unwrap();
//! assert_eq!(s.num_ranks(), 8);
//! assert_eq!(s.bytes_sent(), 7 * 65536);
//! ```
//!
//! [`generate`] seals each rank into the schedule's compact columns as the
//! generator moves past it, so it holds one rank in building form at a time.
//! [`write_goal`] writes the same schedule as GOAL text while generating it,
//! rank by rank, in memory that does not grow with the schedule. From 256
//! ranks on, where there are two cores, both generate on two threads that
//! record alternate blocks of ranks, put in rank order by the calling thread
//! (the same schedule and bytes); [`THREADS_VAR`] (`COMMODEL_GENERATE_THREADS`)
//! forces the number of threads, 1 for the calling thread alone.
//!
//! [`catalog`] lists every name with a one-line summary. The families:
//!
//! * `alltoall-xor-pairwise`, `alltoall-xor-post-all` — Alltoall_A and
//!   Alltoall_B of Nomura et al. (PlogPT, Fig. 13-14); P must be a power of two.
//! * Open MPI's `coll/base` algorithms used by the `tuned` component, named
//!   `<collective>-<algorithm>` after Open MPI's names with dashes. The
//!   communication patterns (who sends what to whom, in which order, which
//!   operation waits for which) follow Open MPI's main branch as read in
//!   2025 (`ompi/mca/coll/base/coll_base_*.c`); the code here is our own.
//!   The generators added later (bcast chain, binary_tree, split_binary_tree,
//!   knomial, scatter_allgather[_ring]; allgather neighbor, two_proc, linear; allreduce
//!   segmented_ring, basic_linear, nonoverlapping; barrier linear, double_ring,
//!   recursive_doubling, tree, two_proc; alltoall two_proc; scatter
//!   linear_nb) follow Open MPI 4.1.4's sources; each doc comment names its
//!   function.
//! * MPICH 5.0's algorithms where they send otherwise than Open MPI's, named
//!   `<collective>-mpich-<algorithm>` after MPICH's names (the values of
//!   `MPIR_CVAR_<COLL>_INTRA_ALGORITHM`) with dashes, read in MPICH's 5.0.x
//!   branch (`src/mpi/coll/<coll>/<coll>_intra_<algorithm>.c`, commit
//!   f5694eb9); the code here is our own. `tests/collectives_mpich_trace.rs`
//!   checks them, and the Open MPI generators MPICH's other algorithms share,
//!   call by call against that source.
//! * `gather-split` (Lastovetsky et al., section 7) and `random-pairs`
//!   (Zhu et al., section 7).
//!
//! # Modelling conventions
//!
//! * **Sizes.** `size` is the per-rank message size in bytes as MPI counts it:
//!   alltoall — bytes each rank sends to each other rank; gather/scatter/
//!   allgather — bytes each rank contributes or gets; bcast/allreduce — the
//!   whole buffer; random-pairs — bytes of each transfer; barrier — ignored.
//!   Data are treated as `MPI_BYTE`, so where Open MPI splits a count into
//!   blocks or halves we split bytes the same way (early blocks one byte
//!   larger when the split is uneven).
//! * **Waits.** `MPI_Isend`/`MPI_Irecv` become GOAL `send`/`recv`; each
//!   `MPI_Wait`/`MPI_Waitall` becomes `requires` edges from every operation the
//!   program posts afterwards to the waited operations. A blocking `MPI_Send`
//!   or `MPI_Recv` is one operation that the rank's next operations require.
//!   `MPI_Sendrecv` (Open MPI's irecv + send + wait) is a recv and a send that
//!   start together and that the next operations both require. A final
//!   `MPI_Waitall` adds nothing: a rank finishes when all its operations have.
//!   (The rules are implemented once, in `program.rs`.)
//! * **Tags.** Open MPI uses one tag per collective and relies on MPI's
//!   non-overtaking order. We number tags by step (round, segment, pass,
//!   sub-gather) instead, so every send matches its receive without relying
//!   on posting order. The engine's matching gives the same pairs either way.
//! * **Reductions.** After receiving data to reduce (allreduce), a rank runs
//!   a `calc` of `ceil(bytes * reduce_ns_per_byte)` ns; with the default
//!   `reduce_ns_per_byte = 0.0` no calc is emitted at all.
//! * **Local copies.** Open MPI copies a rank's own block locally; we emit no
//!   operation for it, and never a send to self.
//! * **Roots.** Rooted collectives (gather, scatter, bcast) use
//!   `opts.root`; the trees are Open MPI's, rotated so the root is virtual rank 0.
//! * **P = 1.** Every collective is then a local copy: the schedule has one
//!   rank and no operation (random-pairs too: there is no other node to pick).
//!
//! # Where Open MPI needs a power of two
//!
//! * `allgather-recursive-doubling` for P not a power of two: Open MPI falls
//!   back to the radix-2 Bruck algorithm; so do we (the schedule is
//!   `allgather-bruck`'s).
//! * `allreduce-recursive-doubling`: Open MPI's non-power-of-two steps
//!   (extra ranks fold into their neighbours first and get the result last)
//!   are implemented.
//! * `allreduce-ring` with `size < P` bytes: Open MPI falls back to recursive
//!   doubling; so do we.
//! * `allreduce-rabenseifner`: non-power-of-two steps implemented; `size`
//!   below the largest power of two <= P is an error (Open MPI documents
//!   `count >= 2^floor(log2 P)` as the algorithm's limitation).
//! * `alltoall-xor-*`: the xor pairing needs a power of two; other P is an error.
//!
//! # Parameters chosen
//!
//! * `bcast-pipeline`: segments of `opts.segment` bytes, default
//!   [`DEFAULT_PIPELINE_SEGMENT`] = 8 KiB (our choice; Open MPI's forced-algorithm
//!   default is 0, "no segmentation", which would make the pipeline a plain
//!   chain). `bcast-binomial` is unsegmented unless `opts.segment` is given
//!   (Open MPI's forced default).
//! * `gather-linear-sync`: first segment `opts.segment` bytes, default
//!   [`DEFAULT_GATHER_SYNC_FIRST_SEGMENT`] = 1 KiB (the small segment size of
//!   Open MPI's fixed decision rules; the forced default 0 means "whole message
//!   in the first segment"). The second segment is the rest, sent even when
//!   empty (0 bytes), as Open MPI does.
//! * Forced-algorithm defaults of Open MPI 4.1.4 elsewhere: segment size 0
//!   (unsegmented) for the other tree bcasts and `allreduce-segmented-ring`
//!   (which is then `allreduce-ring`, as in Open MPI); `bcast-chain` 4 chains
//!   and `bcast-knomial` radix 4 ([`DEFAULT_FANOUT`], `opts.fanout`).
//! * `*-two-proc`: P must be 2 (1 gives the empty schedule); larger P is
//!   [`CollectiveError::NeedsTwoRanks`].
//! * `alltoall-linear-sync`: at most `opts.max_requests` outstanding receives
//!   and as many sends; 0 (Open MPI's default) means no limit, and then the
//!   schedule equals `alltoall-basic-linear`'s. With a limit K, Open MPI
//!   refills a request slot with `MPI_Waitany`; we model it as "request i + K
//!   waits for request i" (completions assumed in posting order).

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod fixed;
mod gather;
mod options;
mod parallel;
mod patterns;
mod program;
mod random;
mod record;
mod reduce;
mod scatter;
mod sequence;
mod trees;

use std::cell::RefCell;
use std::io::{self, Write};

use crate::schedule::{BuildError, Schedule, ScheduleBuilder};
pub use options::{
    CollectiveOptions, OptionError, OptionKind, OptionSpec, OptionValue, DEFAULT_FANOUT,
    DEFAULT_GATHER_SYNC_FIRST_SEGMENT, DEFAULT_PIPELINE_SEGMENT, OPTIONS,
};
pub use parallel::THREADS_VAR;
use program::Mpi;
use record::{Block, RankStream};

/// A generator: the schedule of one collective algorithm in a checked context.
type Generator = for<'a> fn(&Ctx<'a>) -> Result<Schedule, CollectiveError>;

/// One entry of the [`catalog`]: a name, its one-line summary and its generator.
#[derive(Clone, Copy)]
pub struct CollectiveInfo {
    pub name: &'static str,
    pub summary: &'static str,
    generate: Generator,
}

impl std::fmt::Debug for CollectiveInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectiveInfo")
            .field("name", &self.name)
            .field("summary", &self.summary)
            .finish()
    }
}

const fn entry(name: &'static str, summary: &'static str, generate: Generator) -> CollectiveInfo {
    CollectiveInfo {
        name,
        summary,
        generate,
    }
}

static CATALOG: &[CollectiveInfo] = &[
    entry("alltoall-xor-pairwise", "PlogPT Alltoall_A: P-1 rounds, exchange with rank xor i, both waited (P power of two)", alltoall::xor_pairwise),
    entry("alltoall-xor-post-all", "PlogPT Alltoall_B: post all P-1 receives, then blocking sends to rank xor i (P power of two)", alltoall::xor_post_all),
    entry("alltoall-basic-linear", "Open MPI basic_linear: all receives and sends posted at once, then one waitall", alltoall::basic_linear),
    entry("alltoall-pairwise", "Open MPI pairwise: P-1 sendrecv steps, send to rank+i, receive from rank-i", alltoall::pairwise),
    entry("alltoall-modified-bruck", "Open MPI modified_bruck: ceil(log2 P) sendrecv steps at distance 2^k carrying the blocks with bit k set", alltoall::modified_bruck),
    entry("alltoall-linear-sync", "Open MPI linear_sync: like basic_linear with at most max_requests outstanding per direction", alltoall::linear_sync),
    entry("alltoall-two-proc", "Open MPI two_proc: one sendrecv between the two ranks (P = 2 only)", alltoall::two_proc),
    entry("alltoall-mpich-pairwise", "MPICH pairwise: P-1 sendrecv steps, with rank xor i for P a power of two, else send to rank+i, receive from rank-i", alltoall::mpich_pairwise),
    entry("alltoall-mpich-scattered", "MPICH scattered: receives and sends posted 32 peers at a time (its default throttle), each block waited for", alltoall::mpich_scattered),
    entry("gather-basic-linear", "Open MPI basic_linear: every rank sends to the root, which receives in rank order", gather::basic_linear),
    entry("gather-binomial", "Open MPI binomial: in-order binomial tree, each node receives its subtrees then forwards", gather::binomial),
    entry("gather-linear-sync", "Open MPI linear_sync: root sends a 0-byte go to each rank in turn, which sends two segments", gather::linear_sync),
    entry("scatter-basic-linear", "Open MPI basic_linear: the root sends each rank its block in rank order", scatter::basic_linear),
    entry("scatter-binomial", "Open MPI binomial: in-order binomial tree, each node forwards its subtrees' blocks, largest first", scatter::binomial),
    entry("scatter-linear-nb", "Open MPI linear_nb: the root posts an isend to each rank in rank order, then waits for all", scatter::linear_nb),
    entry("bcast-basic-linear", "Open MPI basic_linear: the root posts a send to every rank, then waits for all", bcast::basic_linear),
    entry("bcast-binomial", "Open MPI binomial: binomial tree, children served together (segmented if segment is set)", bcast::binomial),
    entry("bcast-pipeline", "Open MPI pipeline: a chain root -> root+1 -> ..., message cut into segments (default 8 KiB)", bcast::pipeline),
    entry("bcast-chain", "Open MPI chain: the root feeds fanout (default 4) chains of consecutive ranks, unsegmented by default", bcast::chain),
    entry("bcast-binary-tree", "Open MPI bintree: level-order binary tree, children served together, unsegmented by default", bcast::binary_tree),
    entry("bcast-split-binary-tree", "Open MPI split_bintree: each half down one subtree of the binary tree, then pairs swap halves", bcast::split_binary_tree),
    entry("bcast-knomial", "Open MPI knomial: k-nomial tree of radix fanout (default 4), unsegmented by default", bcast::knomial),
    entry("bcast-scatter-allgather", "Open MPI scatter_allgather: binomial scatter of P blocks, then recursive-doubling allgather", bcast::scatter_allgather),
    entry("bcast-scatter-allgather-ring", "Open MPI scatter_allgather_ring: binomial scatter of P blocks, then ring allgather", bcast::scatter_allgather_ring),
    entry("bcast-mpich-binomial", "MPICH binomial: in-order binomial tree, each node receives, then blocking sends to its children, largest subtree first", bcast::mpich_binomial),
    entry("bcast-mpich-scatter-recursive-doubling-allgather", "MPICH scatter_recursive_doubling_allgather: Open MPI's scatter_allgather calls, also below P bytes", bcast::mpich_scatter_recursive_doubling_allgather),
    entry("bcast-mpich-scatter-ring-allgather", "MPICH scatter_ring_allgather: Open MPI's scatter_allgather_ring calls, also below P bytes", bcast::mpich_scatter_ring_allgather),
    entry("allgather-ring", "Open MPI ring: P-1 sendrecv steps passing one block to the right neighbour", allgather::ring),
    entry("allgather-recursive-doubling", "Open MPI recursive_doubling: log2 P exchanges with rank xor 2^k (Bruck if P is not a power of two)", allgather::recursive_doubling),
    entry("allgather-bruck", "Open MPI bruck: ceil(log2 P) steps, send to rank-2^k, receive from rank+2^k, doubling blocks", allgather::bruck),
    entry("allgather-neighbor", "Open MPI neighbor exchange: P/2 sendrecv steps alternating between the two neighbours (ring if P is odd)", allgather::neighbor),
    entry("allgather-linear", "Open MPI linear: gather to rank 0, then bcast from rank 0, both as Open MPI's fixed rules pick them", allgather::linear),
    entry("allgather-sparbit", "Open MPI 5.0 sparbit: ceil(log2 P) steps at halving distances, a sparse binomial tree per block", allgather::sparbit),
    entry("allgather-two-proc", "Open MPI two_proc: one sendrecv between the two ranks (P = 2 only)", allgather::two_proc),
    entry("allgather-mpich-recursive-doubling", "MPICH recursive_doubling: log2 P exchanges with rank xor 2^k; other P: bruck below 81920 bytes gathered, else ring", allgather::mpich_recursive_doubling),
    entry("allreduce-ring", "Open MPI ring: reduce-scatter ring then allgather ring over P blocks", allreduce::ring),
    entry("allreduce-recursive-doubling", "Open MPI recursive_doubling: log2 of the power of two below P full-buffer exchanges", allreduce::recursive_doubling),
    entry("allreduce-rabenseifner", "Open MPI Rabenseifner: recursive-halving reduce-scatter then recursive-doubling allgather", allreduce::rabenseifner),
    entry("allreduce-segmented-ring", "Open MPI segmented_ring: ring reduce-scatter in phases of segment-sized parts (the ring without segment)", allreduce::segmented_ring),
    entry("allreduce-basic-linear", "Open MPI basic_linear: linear reduce to rank 0, then linear bcast from rank 0", allreduce::basic_linear),
    entry("allreduce-nonoverlapping", "Open MPI nonoverlapping: reduce to rank 0, then bcast, both as Open MPI's fixed rules pick them", allreduce::nonoverlapping),
    entry("allreduce-mpich-ring", "MPICH ring: reduce-scatter ring of ceil(size/P)-byte blocks, then an allgatherv ring in chunks of 32 KiB", allreduce::mpich_ring),
    entry("allreduce-mpich-reduce-scatter-allgather", "MPICH Rabenseifner: ranks below 2(P-p') fold whole buffers, halving over p' blocks, then doubling", allreduce::mpich_reduce_scatter_allgather),
    entry("barrier-dissemination", "Open MPI bruck barrier: ceil(log2 P) zero-byte sendrecv steps at distance 2^k", barrier::dissemination),
    entry("barrier-linear", "Open MPI basic_linear: everyone sends to rank 0, which then releases each rank in turn", barrier::linear),
    entry("barrier-double-ring", "Open MPI double_ring: a zero-byte token goes twice round the ring from rank 0", barrier::double_ring),
    entry("barrier-recursive-doubling", "Open MPI recursive_doubling: log2 p' exchanges, ranks above p' folded in before and released after", barrier::recursive_doubling),
    entry("barrier-tree", "Open MPI tree: binomial fan-in to rank 0, then fan-out", barrier::tree),
    entry("barrier-two-proc", "Open MPI two_proc: one zero-byte sendrecv between the two ranks (P = 2 only)", barrier::two_proc),
    entry("gather-split", "Lastovetsky: a gather of M bytes as k linear sub-gathers of M/k bytes, a barrier between two", gather::split),
    entry("random-pairs", "Zhu: d passes; each node in turn picks a random other node, transfer kept with probability 1/2", random::random_pairs),
];

/// The algorithm number Open MPI 4.1.4's fixed decision rules pick for the collectives
/// composed collectives call through the communicator ("bcast", "gather", "reduce"), for
/// `p` ranks and `size` bytes (bcast, reduce: the buffer; gather: per rank); None for other
/// names. The Python package transcribes the same rules for every collective
/// (`commodel.openmpi.default_algorithm`); a test checks that the two agree.
pub fn fixed_decision(collective: &str, p: u32, size: u64) -> Option<u32> {
    match collective {
        "bcast" => Some(fixed::bcast(p, size)),
        "gather" => Some(fixed::gather(p, size)),
        "reduce" => Some(fixed::reduce(p, size)),
        _ => None,
    }
}

/// Every collective [`generate`] knows, with a one-line description.
pub fn catalog() -> &'static [CollectiveInfo] {
    CATALOG
}

/// Why a collective could not be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CollectiveError {
    #[error("unknown collective '{name}'{}; valid names: {valid}", suggestion.map(|s| format!(" (did you mean '{s}'?)")).unwrap_or_default())]
    UnknownName {
        name: String,
        suggestion: Option<&'static str>,
        valid: String,
    },
    #[error("{name}: ranks must be at least 1, got 0")]
    NoRanks { name: &'static str },
    #[error("{name}: root {root} is out of range: ranks are 0..{}", ranks - 1)]
    RootOutOfRange {
        name: &'static str,
        root: u32,
        ranks: u32,
    },
    #[error(
        "{name}: needs a power-of-two number of ranks, got {ranks} (nearest: {below} or {above})"
    )]
    NeedsPowerOfTwo {
        name: &'static str,
        ranks: u32,
        below: u32,
        above: u64,
    },
    #[error("{name}: needs exactly 2 ranks (Open MPI's two_procs algorithm), got {ranks}")]
    NeedsTwoRanks { name: &'static str, ranks: u32 },
    #[error("{name}: at {ranks} ranks and {size} bytes Open MPI 4.1.4's fixed rules pick {what}, which is not modelled")]
    NotModelled {
        name: &'static str,
        ranks: u32,
        size: u64,
        what: &'static str,
    },
    #[error("{name}: size must be at least {min} bytes, got {size} ({why})")]
    SizeTooSmall {
        name: &'static str,
        size: u64,
        min: u64,
        why: &'static str,
    },
    #[error("{name}: size {size} bytes times {ranks} ranks does not fit in 64 bits")]
    SizeTooLarge {
        name: &'static str,
        size: u64,
        ranks: u32,
    },
    #[error("{name}: option {field} = {value} is invalid: {why}")]
    InvalidOption {
        name: &'static str,
        field: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("{name}: {source}")]
    Build {
        name: &'static str,
        source: BuildError,
    },
}

impl From<BuildError> for CollectiveError {
    fn from(source: BuildError) -> Self {
        CollectiveError::Build {
            name: "schedule",
            source,
        }
    }
}

/// Everything a generator needs: the name (for errors), P, size, options,
/// and where its [`Mpi`] program goes (`None`: one whole schedule).
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub name: &'static str,
    /// The catalog entry's generator ([`run`] calls it).
    pub generate: Generator,
    pub p: u32,
    pub size: u64,
    pub opts: &'a CollectiveOptions,
    pub stream: Option<&'a RefCell<RankStream<'a>>>,
}

impl<'a> Ctx<'a> {
    pub(crate) fn require_power_of_two(&self) -> Result<(), CollectiveError> {
        if self.p.is_power_of_two() {
            return Ok(());
        }
        let below = 1u32 << (31 - self.p.leading_zeros());
        Err(CollectiveError::NeedsPowerOfTwo {
            name: self.name,
            ranks: self.p,
            below,
            above: 2 * below as u64,
        })
    }

    pub(crate) fn invalid(
        &self,
        field: &'static str,
        value: impl ToString,
        why: &'static str,
    ) -> CollectiveError {
        CollectiveError::InvalidOption {
            name: self.name,
            field,
            value: value.to_string(),
            why,
        }
    }

    /// Refuse up front a schedule of more operations than a [`Schedule`]
    /// holds, before building it exhausts memory.
    pub(crate) fn check_ops(&self, count: u64) -> Result<(), CollectiveError> {
        let max = u32::MAX as u64 - 1;
        if count > max {
            return Err(CollectiveError::Build {
                name: self.name,
                source: BuildError::TooLarge { count, max },
            });
        }
        Ok(())
    }

    pub(crate) fn mpi(&self) -> Mpi<'a> {
        Mpi::new(self.p, self.opts.reduce_ns_per_byte, self.stream)
    }
}

/// Generate the schedule of collective `name` on `ranks` ranks with
/// per-rank message size `size` bytes (see the module documentation).
pub fn generate(
    name: &str,
    ranks: u32,
    size: u64,
    opts: &CollectiveOptions,
) -> Result<Schedule, CollectiveError> {
    let ctx = checked_ctx(name, ranks, size, opts)?;
    generate_on(ctx, parallel::threads(&ctx)?, parallel::block_ranks(ranks))
}

/// [`generate`] on `threads` threads (see `parallel.rs`), blocks of `block` ranks.
fn generate_on(ctx: Ctx, threads: u32, block: u32) -> Result<Schedule, CollectiveError> {
    if threads > 1 {
        let mut builder = ScheduleBuilder::new(ctx.p);
        let ended = parallel::on_threads(&ctx, threads, block, false, |b| {
            let Block::Parts(parts) = b else {
                unreachable!("blocks of ranks as added were asked for")
            };
            parts
                .into_iter()
                .all(|(rank, part)| builder.seal_part(rank, part).is_ok())
        });
        if ended.complete && ended.error.is_none() && !ended.backstep {
            return Ok(builder.build()?);
        }
        // A generator that does not record rank by rank, or an error: run again on
        // one thread, which reports the error as one whole build would.
    }
    // Seal each rank as the generator moves past it, so that one rank at a time is
    // held in building form; a generator that goes back to an earlier rank is run
    // again, built whole.
    let seal = RefCell::new(RankStream::seal());
    let schedule = run(Ctx {
        stream: Some(&seal),
        ..ctx
    })?;
    if seal.borrow().backstep.is_none() {
        return Ok(schedule);
    }
    run(ctx)
}

/// What [`write_goal`] wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GoalSummary {
    pub num_ranks: u32,
    pub num_ops: u64,
    pub bytes_sent: u64,
    /// Whether the text was written rank by rank while generating (else the
    /// generator does not record rank by rank and the whole schedule was built first).
    pub streamed: bool,
    /// The most operations held in memory at once while generating rank by
    /// rank (0 when not streamed): the largest rank's, not the schedule's.
    pub peak_ops_held: u64,
}

/// Why [`write_goal`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteGoalError {
    #[error(transparent)]
    Collective(#[from] CollectiveError),
    #[error("cannot write: {0}")]
    Io(#[from] io::Error),
}

/// Generate collective `name` like [`generate`] and write it as GOAL text to
/// `out`, the same bytes as `goal::write_to(&generate(..)?, out)`.
///
/// Memory does not grow with the schedule: each rank's text is written as
/// soon as the generator has moved past the rank, which is then dropped. A
/// first run that keeps nothing checks that the generator records rank by
/// rank (each rank in one stretch, in ascending order); one that does not
/// (`gather-split`, `random-pairs`, and the two composed of whole
/// collectives, `allgather-linear` and `allreduce-nonoverlapping`) is built
/// whole, then written.
///
/// From 256 ranks on, where there are two cores, two threads generate and
/// format alternate blocks of ranks and this one writes them in order (the
/// same bytes); [`THREADS_VAR`] forces the number of threads (as for [`generate`]).
pub fn write_goal<W: Write>(
    name: &str,
    ranks: u32,
    size: u64,
    opts: &CollectiveOptions,
    out: W,
) -> Result<GoalSummary, WriteGoalError> {
    let ctx = checked_ctx(name, ranks, size, opts)?;
    let threads = parallel::threads(&ctx)?;
    write_goal_on(ctx, threads, parallel::block_ranks(ranks), out)
}

/// [`write_goal`] on `threads` threads, blocks of `block` ranks.
fn write_goal_on<W: Write>(
    ctx: Ctx,
    threads: u32,
    block: u32,
    mut out: W,
) -> Result<GoalSummary, WriteGoalError> {
    let (name, ranks) = (ctx.name, ctx.p);
    let probe = RefCell::new(RankStream::probe());
    run(Ctx {
        stream: Some(&probe),
        ..ctx
    })?;
    if probe.borrow().backstep.is_some() {
        let schedule = run(ctx)?;
        crate::goal::write_to(&schedule, &mut out)?;
        return Ok(GoalSummary {
            num_ranks: ranks,
            num_ops: schedule.num_ops() as u64,
            bytes_sent: schedule.bytes_sent(),
            streamed: false,
            peak_ops_held: 0,
        });
    }
    if threads > 1 {
        let (mut written, mut started) = (Ok(()), false);
        let ended = parallel::on_threads(&ctx, threads, block, true, |b| {
            let Block::Text(text) = b else {
                unreachable!("blocks of text were asked for")
            };
            if !std::mem::replace(&mut started, true) {
                // The header, as one thread writes it, with the first block (nothing is
                // written before); writing to a Vec cannot fail.
                let mut head = Vec::new();
                let _ = crate::goal::GoalWriter::new(&mut head, ranks).finish();
                written = out.write_all(&head);
            }
            if written.is_ok() {
                written = out.write_all(&text);
            }
            written.is_ok()
        });
        written?;
        if let Some(e) = ended.error {
            return Err(e.into());
        }
        assert!(
            ended.complete && !ended.backstep,
            "{name}: a generating thread stopped early after a probe in order"
        );
        out.flush()?;
        return Ok(GoalSummary {
            num_ranks: ranks,
            num_ops: ended.num_ops,
            bytes_sent: ended.bytes_sent,
            streamed: true,
            peak_ops_held: ended.peak_held as u64,
        });
    }
    let stream = RefCell::new(RankStream::goal(&mut out, ranks));
    run(Ctx {
        stream: Some(&stream),
        ..ctx
    })?;
    let mut stream = stream.borrow_mut();
    if let Some((from, to)) = stream.backstep {
        unreachable!("{name}: went back from rank {from} to rank {to} after a probe in order");
    }
    stream.finish()?;
    Ok(GoalSummary {
        num_ranks: ranks,
        num_ops: stream.num_ops,
        bytes_sent: stream.bytes_sent,
        streamed: true,
        peak_ops_held: stream.peak_held as u64,
    })
}

/// The context of catalog entry `name`, once the checks shared by all
/// generators pass.
fn checked_ctx<'a>(
    name: &str,
    ranks: u32,
    size: u64,
    opts: &'a CollectiveOptions,
) -> Result<Ctx<'a>, CollectiveError> {
    let Some(entry) = CATALOG.iter().find(|c| c.name == name) else {
        return Err(unknown(name));
    };
    let ctx = Ctx {
        name: entry.name,
        generate: entry.generate,
        p: ranks,
        size,
        opts,
        stream: None,
    };
    check_common(&ctx)?;
    Ok(ctx)
}

/// Run the generator of `ctx`'s catalog entry, errors named after it.
fn run(ctx: Ctx) -> Result<Schedule, CollectiveError> {
    let result = (ctx.generate)(&ctx);
    result.map_err(|e| match e {
        CollectiveError::Build { source, .. } => CollectiveError::Build {
            name: ctx.name,
            source,
        },
        e => e,
    })
}

/// Checks shared by all generators: ranks, root, size, option ranges.
fn check_common(ctx: &Ctx) -> Result<(), CollectiveError> {
    let name = ctx.name;
    if ctx.p == 0 {
        return Err(CollectiveError::NoRanks { name });
    }
    let rooted =
        name.starts_with("gather") || name.starts_with("scatter") || name.starts_with("bcast");
    if rooted && ctx.opts.root >= ctx.p {
        return Err(CollectiveError::RootOutOfRange {
            name,
            root: ctx.opts.root,
            ranks: ctx.p,
        });
    }
    if ctx.size == 0 && !name.starts_with("barrier") {
        return Err(CollectiveError::SizeTooSmall {
            name,
            size: 0,
            min: 1,
            why: "a collective of 0 bytes moves nothing",
        });
    }
    if ctx.size.checked_mul(ctx.p as u64).is_none() {
        return Err(CollectiveError::SizeTooLarge {
            name,
            size: ctx.size,
            ranks: ctx.p,
        });
    }
    if ctx.opts.segment == Some(0) {
        return Err(ctx.invalid("segment", 0, "a segment must hold at least one byte"));
    }
    if ctx.opts.fanout == Some(0) {
        return Err(ctx.invalid("fanout", 0, "a tree needs at least one child per node"));
    }
    let rate = ctx.opts.reduce_ns_per_byte;
    if !(rate.is_finite() && rate >= 0.0) {
        return Err(ctx.invalid("reduce_ns_per_byte", rate, "must be a finite number >= 0"));
    }
    Ok(())
}

fn unknown(name: &str) -> CollectiveError {
    let suggestion = CATALOG
        .iter()
        .map(|c| (edit_distance(name, c.name), c.name))
        .min()
        .filter(|&(d, _)| d <= name.len().max(4) / 2 + 2)
        .map(|(_, n)| n);
    let valid = CATALOG
        .iter()
        .map(|c| c.name)
        .collect::<Vec<_>>()
        .join(", ");
    CollectiveError::UnknownName {
        name: name.to_string(),
        suggestion,
        valid,
    }
}

/// Levenshtein distance (ASCII-insensitive to case), for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_ascii_lowercase().replace('_', "-").chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// `(r + d) mod p` without overflow.
pub(crate) fn add(r: u32, d: u32, p: u32) -> u32 {
    ((r as u64 + d as u64) % p as u64) as u32
}

/// `(r - d) mod p` without overflow (d <= p).
pub(crate) fn sub(r: u32, d: u32, p: u32) -> u32 {
    ((r as u64 + p as u64 - d as u64) % p as u64) as u32
}

/// Bytes of block `i` when `total` bytes are cut into `n` blocks the way
/// Open MPI's `COLL_BASE_COMPUTE_BLOCKCOUNT` does: the first `total % n`
/// blocks get one byte more.
pub(crate) fn block_bytes(total: u64, n: u64, i: u64) -> u64 {
    total / n + u64::from(i < total % n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        match generate("bcast-binomal", 4, 8, &CollectiveOptions::default()) {
            Err(CollectiveError::UnknownName {
                suggestion, valid, ..
            }) => {
                assert_eq!(suggestion, Some("bcast-binomial"));
                assert!(valid.contains("random-pairs"));
            }
            other => panic!("{other:?}"),
        }
        match generate("alltoall_pairwise", 4, 8, &CollectiveOptions::default()) {
            Err(CollectiveError::UnknownName { suggestion, .. }) => {
                assert_eq!(suggestion, Some("alltoall-pairwise"))
            }
            other => panic!("{other:?}"),
        }
        match generate(
            "zzzzzzzzzzzzzzzzzzzzzzzzzzzz",
            4,
            8,
            &CollectiveOptions::default(),
        ) {
            Err(CollectiveError::UnknownName { suggestion, .. }) => assert_eq!(suggestion, None),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn block_bytes_sum() {
        for total in [1u64, 7, 64, 1000] {
            for n in 1..10 {
                assert_eq!((0..n).map(|i| block_bytes(total, n, i)).sum::<u64>(), total);
            }
        }
    }

    /// Everything a schedule hands out, operation by operation.
    #[allow(clippy::type_complexity)]
    fn dump(s: &Schedule) -> (Vec<(crate::Op, u32, Vec<u32>, Vec<u32>)>, u8, u8, String) {
        let ops = (0..s.num_ops() as u32)
            .map(|i| {
                let req = s.requirers(i).collect();
                (s.op(i), s.rank_of(i), req, s.irequirers(i).collect())
            })
            .collect();
        (ops, s.max_cpu(), s.max_nic(), crate::goal::write(s))
    }

    fn option_sets(p: u32) -> [CollectiveOptions; 2] {
        let other = CollectiveOptions {
            root: p / 2,
            seed: 7,
            segment: Some(300),
            degree: 3,
            splits: 3,
            max_requests: 2,
            reduce_ns_per_byte: 0.5,
            fanout: Some(3),
        };
        [CollectiveOptions::default(), other]
    }

    /// `generate` seals rank by rank; the schedule is the one built whole.
    #[test]
    fn sealed_generation_is_the_whole_schedule() {
        let mut compared = 0;
        for c in catalog() {
            for p in [1u32, 2, 3, 5, 8, 16, 32] {
                for o in option_sets(p) {
                    let whole = checked_ctx(c.name, p, 1000, &o).and_then(run);
                    match (generate(c.name, p, 1000, &o), whole) {
                        (Ok(a), Ok(b)) => assert!(dump(&a) == dump(&b), "{} P={p}", c.name),
                        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                        (a, b) => panic!("{} P={p}: {a:?} vs {b:?}", c.name),
                    }
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, catalog().len() * 7 * 2);
    }

    /// While generating, the builder holds the largest rank's operations, not the
    /// schedule's, but for the generators that do not record rank by rank (the three
    /// composed of whole collectives are built whole, random-pairs is run again).
    #[test]
    fn generation_holds_one_rank_at_a_time() {
        let o = CollectiveOptions::default();
        let mut sealed = 0;
        let whole = [
            "allgather-linear",
            "allreduce-nonoverlapping",
            "gather-split",
        ];
        for c in catalog().iter().filter(|c| !c.name.ends_with("-two-proc")) {
            let seal = RefCell::new(RankStream::seal());
            let ctx = checked_ctx(c.name, 16, 1000, &o).unwrap();
            let s = run(Ctx {
                stream: Some(&seal),
                ..ctx
            })
            .unwrap();
            let (backstep, peak_held) = (seal.borrow().backstep, seal.borrow().peak_held);
            if backstep.is_some() || whole.contains(&c.name) {
                assert_eq!(backstep.is_some(), c.name == "random-pairs", "{}", c.name);
                continue;
            }
            let largest = (0..16).map(|r| s.ops_of(r).len()).max().unwrap();
            assert_eq!(peak_held, largest, "{}", c.name);
            assert!(largest < s.num_ops(), "{}", c.name);
            sealed += 1;
        }
        // All but gather-split, random-pairs, allgather-linear, allreduce-nonoverlapping.
        assert_eq!(sealed, catalog().len() - 4 - 3);
    }

    /// On several threads, in blocks of a few ranks: the text and the schedule of one
    /// thread, byte for byte.
    #[test]
    fn threads_give_what_one_thread_gives() {
        let mut compared = 0;
        for c in catalog() {
            for p in [2u32, 5, 8, 17] {
                for o in option_sets(p) {
                    let Ok(ctx) = checked_ctx(c.name, p, 1000, &o) else {
                        continue;
                    };
                    let mut one = Vec::new();
                    let want = write_goal_on(ctx, 1, 8, &mut one).map_err(|e| e.to_string());
                    let whole = generate_on(ctx, 1, 8).map(|s| dump(&s));
                    for (threads, block) in [(2, 1), (2, 3), (3, 2)] {
                        let mut text = Vec::new();
                        let got = write_goal_on(ctx, threads, block, &mut text);
                        let got = got.map_err(|e| e.to_string());
                        assert_eq!(got, want, "{} P={p} on {threads}", c.name);
                        assert!(text == one, "{} P={p} on {threads}: text differs", c.name);
                        let s = generate_on(ctx, threads, block).map(|s| dump(&s));
                        match (&s, &whole) {
                            (Ok(a), Ok(b)) => assert!(a == b, "{} P={p}", c.name),
                            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                            _ => panic!("{} P={p}: {s:?} vs {whole:?}", c.name),
                        }
                        compared += 1;
                    }
                }
            }
        }
        assert!(compared > 700, "{compared}");
    }

    /// The threads hand every block, in rank order, each holding one rank at a time.
    #[test]
    fn threads_hand_every_block_in_order() {
        let o = CollectiveOptions::default();
        let ctx = checked_ctx("alltoall-pairwise", 17, 8, &o).unwrap();
        let mut ranks = Vec::new();
        let ended = parallel::on_threads(&ctx, 2, 3, false, |b| {
            let Block::Parts(parts) = b else {
                panic!("text")
            };
            ranks.extend(parts.iter().map(|&(r, _)| r));
            true
        });
        assert!(ended.complete && ended.error.is_none() && !ended.backstep);
        assert_eq!(ranks, (0..17).collect::<Vec<_>>());
        assert_eq!(ended.peak_held, 2 * 16);
        let split = checked_ctx("gather-split", 17, 8, &o).unwrap();
        let ended = parallel::on_threads(&split, 2, 3, false, |_| true);
        assert!(!ended.complete && ended.backstep);
    }

    /// On threads, a write error is reported and a generator's error leaves nothing written.
    #[test]
    fn threads_report_errors() {
        /// Accepts `room` bytes, then fails.
        struct Full {
            room: usize,
        }
        impl Write for Full {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.room == 0 {
                    return Err(io::Error::other("disk full"));
                }
                let n = buf.len().min(self.room);
                self.room -= n;
                Ok(n)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let o = CollectiveOptions::default();
        let ctx = checked_ctx("alltoall-pairwise", 64, 8, &o).unwrap();
        for room in [0, 100, 70_000] {
            match write_goal_on(ctx, 2, 3, Full { room }) {
                Err(WriteGoalError::Io(e)) => assert_eq!(e.to_string(), "disk full"),
                other => panic!("room {room}: {other:?}"),
            }
        }
        let ctx = checked_ctx("alltoall-xor-pairwise", 17, 8, &o).unwrap();
        let mut out = Vec::new();
        let e = write_goal_on(ctx, 2, 3, &mut out).unwrap_err();
        assert!(e.to_string().contains("power-of-two"), "{e}");
        assert!(out.is_empty());
        assert!(generate_on(ctx, 2, 3).is_err());
    }

    #[test]
    fn the_thread_count_is_forced_or_chosen_by_size() {
        let o = CollectiveOptions::default();
        let small = checked_ctx("alltoall-pairwise", 255, 8, &o).unwrap();
        let large = checked_ctx("alltoall-pairwise", 256, 8, &o).unwrap();
        let threads = parallel::threads_from;
        assert_eq!(threads(None, &small).unwrap(), 1);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(threads(None, &large).unwrap(), cores.min(2) as u32);
        assert_eq!(threads(Some("3"), &small).unwrap(), 3);
        assert_eq!(threads(Some(" 1\n"), &large).unwrap(), 1);
        let blocks = [2, 256, 1024, 4096, 65536].map(parallel::block_ranks);
        assert_eq!(blocks, [64, 32, 8, 2, 1]);
        for bad in ["0", "65", "two", "", "-1"] {
            let e = threads(Some(bad), &large).unwrap_err().to_string();
            assert!(e.contains("COMMODEL_GENERATE_THREADS"), "{e}");
        }
    }

    #[test]
    fn catalog_names_are_unique_and_all_generate() {
        let mut names: Vec<_> = catalog().iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), catalog().len());
        for c in catalog() {
            let p = if c.name.ends_with("two-proc") { 2 } else { 4 };
            assert!(
                generate(c.name, p, 64, &CollectiveOptions::default()).is_ok(),
                "{}",
                c.name
            );
        }
    }
}
