//! Generating on several threads: each runs the whole generator but keeps only
//! its blocks of ranks ([`Share`]), finishes them (GOAL text, or ranks as added)
//! and sends them through a short queue to the calling thread, which writes or
//! seals them in rank order. The output is the one-thread output, byte for byte.
//!
//! Memory stays bounded: at most [`QUEUE`] finished blocks wait per thread.
//! The generator's own loop runs on every thread (only the recording is shared),
//! so it pays where recording, not the loop, is the cost: schedules of many
//! operations per rank.

use std::cell::RefCell;
use std::sync::mpsc::{sync_channel, Receiver};

use super::record::{Block, RankStream, Share};
use super::{run, CollectiveError, Ctx};

/// Finished blocks that may wait per thread before it pauses.
const QUEUE: usize = 2;
/// Ranks per block for `p` ranks: 8192 / P, 1 to 64, so that a block of the
/// all-to-alls (2(P-1) operations a rank) holds about 16 K operations, 1 MB of text.
pub(crate) fn block_ranks(p: u32) -> u32 {
    (8192 / p.max(1)).clamp(1, 64)
}
/// Below this many ranks one thread generates: there is too little to share.
pub(crate) const MIN_RANKS: u32 = 256;
/// Environment variable forcing the number of generating threads (1: the calling
/// thread alone); unset, [`threads`] decides.
pub const THREADS_VAR: &str = "COMMODEL_GENERATE_THREADS";

/// Threads to generate `p` ranks on: [`THREADS_VAR`] if set, else 2 from
/// [`MIN_RANKS`] ranks on where there are 2 cores or more, else 1.
pub(crate) fn threads(ctx: &Ctx) -> Result<u32, CollectiveError> {
    threads_from(std::env::var(THREADS_VAR).ok().as_deref(), ctx)
}

/// [`threads`], [`THREADS_VAR`] holding `var`.
pub(crate) fn threads_from(var: Option<&str>, ctx: &Ctx) -> Result<u32, CollectiveError> {
    if let Some(v) = var {
        return match v.trim().parse::<u32>() {
            Ok(n) if (1..=64).contains(&n) => Ok(n),
            _ => {
                let shown: String = v.chars().take(20).collect();
                Err(ctx.invalid(THREADS_VAR, shown, "must be a whole number from 1 to 64"))
            }
        };
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    Ok(if ctx.p >= MIN_RANKS { cores.min(2) } else { 1 })
}

/// How the threads of [`on_threads`] ended.
pub(crate) struct Ended {
    /// Every block reached the calling thread, and `take` accepted each.
    pub complete: bool,
    /// The first thread's error, in thread order.
    pub error: Option<CollectiveError>,
    /// Whether a thread saw the program go back to an earlier rank.
    pub backstep: bool,
    pub num_ops: u64,
    pub bytes_sent: u64,
    pub peak_held: usize,
}

/// Run the generator of `ctx` (which holds no stream) on `workers` threads of
/// blocks of `block` ranks, each finished block as GOAL text (`text`) or as
/// added, and hand the blocks to `take` in rank order until it returns false.
pub(crate) fn on_threads(
    ctx: &Ctx,
    workers: u32,
    block: u32,
    text: bool,
    mut take: impl FnMut(Block) -> bool,
) -> Ended {
    let (name, generate, p, size, opts) = (ctx.name, ctx.generate, ctx.p, ctx.size, ctx.opts);
    std::thread::scope(|scope| {
        let mut queues: Vec<Receiver<Block>> = Vec::new();
        let mut threads = Vec::new();
        for worker in 0..workers {
            let (to, from) = sync_channel(QUEUE);
            queues.push(from);
            threads.push(scope.spawn(move || {
                let share = Share {
                    worker,
                    workers,
                    block,
                };
                let stream = RefCell::new(RankStream::worker(share, p, text, to));
                let ctx = Ctx {
                    name,
                    generate,
                    p,
                    size,
                    opts,
                    stream: Some(&stream),
                };
                let result = run(ctx).map(|_| ());
                // Dropping the stream, on return, closes the queue: the caller stops waiting.
                let s = stream.borrow();
                (
                    result,
                    s.backstep.is_some(),
                    s.num_ops,
                    s.bytes_sent,
                    s.peak_held,
                )
            }));
        }
        let mut complete = true;
        for b in 0..p.div_ceil(block) {
            let accepted = queues[(b % workers) as usize].recv().is_ok_and(&mut take);
            if !accepted {
                complete = false;
                break;
            }
        }
        // A thread still sending finds its queue closed and stops keeping ranks.
        drop(queues);
        let mut ended = Ended {
            complete,
            error: None,
            backstep: false,
            num_ops: 0,
            bytes_sent: 0,
            peak_held: 0,
        };
        for t in threads {
            let (result, backstep, ops, bytes, held) =
                t.join().expect("a generating thread panicked");
            if let Err(e) = result {
                ended.error.get_or_insert(e);
            }
            ended.backstep |= backstep;
            ended.num_ops += ops;
            ended.bytes_sent += bytes;
            ended.peak_held = ended.peak_held.max(held);
        }
        ended
    })
}
