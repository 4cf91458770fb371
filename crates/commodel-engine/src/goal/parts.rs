//! Reading GOAL text on several threads, one part of the text each.
//!
//! The text is cut into parts at rank blocks: the boundary of part `i` is the first line
//! at or after byte `len * i / n` that starts with `rank K {` (at the first column). Each
//! part is read through its own reader of its byte range, in chunks, by its own thread
//! ([`Stream`]), and parsed into its own builders, which seal its ranks `K..` into compact
//! columns as their blocks close, in segments of [`SEGMENT_OPS`] operations. Part 0 reads
//! the header first; the other parts learn `num_ranks` from it before they start. The
//! segments are then moved, in order, into part 0's columns ([`ScheduleBuilder::append`]),
//! each dropped once moved.
//!
//! A part is *clean* when it parsed exactly the blocks from its own `rank K {` up to the
//! next part's `K` and then nothing but blank lines and comments up to its end. The parts
//! before the first part that is not clean are exactly what the sequential reader makes
//! of that text, since a clean part ends outside any block and comment, at a line start
//! where the next part's `rank` begins. From the start of the first part that is not
//! clean (an error, a `rank K {` line inside a comment or a block, blocks out of order,
//! ...), the rest of the text is read sequentially with the line count of the parts
//! before it: the schedule, or the first error in file order with its file:line:column,
//! is that of the sequential reader.

use std::io::Read;
use std::ops::Range;

use super::error::GoalError;
use super::parse::Stream;
use crate::schedule::{BuildError, Schedule, ScheduleBuilder, Sealed};

/// The environment variable that sets the number of parts (a positive integer).
pub const PARSE_THREADS_VAR: &str = "COMMODEL_PARSE_THREADS";

/// How many parts to read a file in: `COMMODEL_PARSE_THREADS` if set to a positive
/// integer, else 1. One thread is the default because two did not pay overall on 2-core
/// machines (docs/benchmarks.md, "Reading on both cores"): 25% faster on a 155 MB file,
/// no faster on a 94 MB one, 8% slower and 110 MiB more on a 2.6 GB one (likely, not
/// profiled: the join rebuilds the later parts' columns on one thread).
pub(super) fn parts_for() -> usize {
    std::env::var(PARSE_THREADS_VAR)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// A part of the text: bytes `bytes`, rank blocks from `first` on.
#[derive(Clone, Debug)]
struct Part {
    bytes: Range<u64>,
    first: u32,
}

/// What one part's thread made of it, if clean: its ranks, sealed in segments of about
/// [`SEGMENT_OPS`] operations (part 0: in one builder, the one the others join), and the
/// lines it holds.
type Outcome = Option<(ScheduleBuilder, Vec<Sealed>, u64)>;

/// Operations per segment of a part's sealed ranks. The join moves one segment at a time
/// into part 0's columns and drops it: memory is the schedule and about one segment,
/// where whole parts would be the schedule and all but part 0 (1.5 schedules for two).
pub(super) const SEGMENT_OPS: usize = 1 << 17;

/// Parse the `len` bytes of text that `open(at, n)` gives `n` bytes of from byte `at`,
/// in up to `parts` parts (see the module documentation). `chunk`: bytes read at a time;
/// `segment_ops`: operations per segment of a part's ranks ([`SEGMENT_OPS`] but in tests).
/// Also returns how many parts were clean and joined (0 when the text was read on one
/// thread from its start).
pub(super) fn parse_in_parts<R, O>(
    open: O,
    len: u64,
    file: &str,
    parts: usize,
    chunk: usize,
    segment_ops: usize,
) -> Result<(Schedule, usize), GoalError>
where
    R: Read + Send,
    O: Fn(u64, u64) -> std::io::Result<R> + Sync,
{
    let io = |e: std::io::Error| GoalError::Io {
        file: file.to_string(),
        message: e.to_string(),
    };
    let sequential = || {
        let s = Stream::new(open(0, len).map_err(io)?, len, file, chunk).run()?;
        Ok((s, 0))
    };
    let starts = block_starts(&open, len, parts).map_err(io)?;
    if starts.is_empty() {
        return sequential();
    }
    // Part 0 reads the header; a failure here (even one that only the cut made) sends
    // the whole text to the sequential reader.
    let mut head = Stream::new(open(0, starts[0].0).map_err(io)?, len, file, chunk);
    let p = match head.header() {
        Ok(p) if starts[0].1 < p => p,
        _ => return sequential(),
    };
    let mut bounds = vec![0u64];
    let mut firsts = vec![0u32];
    for &(at, k) in &starts {
        if k >= p {
            break;
        }
        bounds.push(at);
        firsts.push(k);
    }
    bounds.push(len);
    let part_list: Vec<Part> = (0..firsts.len())
        .map(|i| Part {
            bytes: bounds[i]..bounds[i + 1],
            first: firsts[i],
        })
        .collect();
    let rank_end = |i: usize| firsts.get(i + 1).copied().unwrap_or(p);
    let read_part = |i: usize, stream: &mut Stream<'_, R>| -> Outcome {
        let (first, end) = (part_list[i].first, rank_end(i));
        // Part 0's builder is the one the others join: it is not cut.
        let segment_ops = if i == 0 { usize::MAX } else { segment_ops };
        let (mut last, segments) = in_segments(p, first..end, segment_ops, |rank, b| {
            stream.blocks(b, rank..rank + 1)
        })
        .ok()?;
        stream.end(&mut last).ok()?;
        Some((last, segments, stream.lines()))
    };
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..part_list.len())
            .map(|i| {
                let (open, part, read_part) = (&open, &part_list[i], &read_part);
                scope.spawn(move || {
                    let n = part.bytes.end - part.bytes.start;
                    let reader = open(part.bytes.start, n).ok()?;
                    read_part(i, &mut Stream::resume(reader, len, file, chunk, 0))
                })
            })
            .collect();
        let mut all = vec![read_part(0, &mut head)];
        all.extend(others.into_iter().map(|t| t.join().ok().flatten()));
        all
    });
    // Join the clean parts in order; the text from the first part that is not clean on
    // is read again, sequentially.
    let mut joined: Option<ScheduleBuilder> = None;
    let mut lines = 0u64;
    let mut outcomes = outcomes.into_iter().enumerate();
    while let Some((i, outcome)) = outcomes.next() {
        let Some((last, segments, part_lines)) = outcome else {
            // The later parts are not needed: free them before reading again.
            outcomes.for_each(drop);
            return match joined {
                None => sequential(),
                Some(mut done) => {
                    let part = &part_list[i];
                    let reader = open(part.bytes.start, len - part.bytes.start).map_err(io)?;
                    let mut tail = Stream::resume(reader, len, file, chunk, lines);
                    let mut rest = ScheduleBuilder::starting_at(p, part.first);
                    tail.blocks(&mut rest, part.first..p)?;
                    tail.end(&mut rest)?;
                    match done.append(rest.into_sealed()).and_then(|()| done.build()) {
                        Ok(s) => Ok((s, i)),
                        Err(_) => sequential(),
                    }
                }
            };
        };
        lines += part_lines;
        match joined.as_mut() {
            None => joined = Some(last),
            Some(done) => {
                if join(done, segments, last).is_err() {
                    return sequential();
                }
            }
        }
    }
    match joined.map(ScheduleBuilder::build) {
        Some(Ok(s)) => Ok((s, part_list.len())),
        // A structural error (too many operations, a cycle): the sequential reader
        // names the place.
        _ => sequential(),
    }
}

/// Read the ranks `ranks` of a schedule of `p` ranks, one at a time by `read`, into
/// builders that seal them in segments of about `segment_ops` operations: the last
/// builder (to which more may be added) and the segments before it, in order.
pub(super) fn in_segments<E>(
    p: u32,
    ranks: Range<u32>,
    segment_ops: usize,
    mut read: impl FnMut(u32, &mut ScheduleBuilder) -> Result<(), E>,
) -> Result<(ScheduleBuilder, Vec<Sealed>), E> {
    let end = ranks.end;
    let mut segments = Vec::new();
    let mut builder = ScheduleBuilder::starting_at(p, ranks.start);
    for rank in ranks {
        read(rank, &mut builder)?;
        if builder.sealed_ops() >= segment_ops && rank + 1 < end {
            let next = ScheduleBuilder::starting_at(p, rank + 1);
            segments.push(std::mem::replace(&mut builder, next).into_sealed());
        }
    }
    Ok((builder, segments))
}

/// Move a part's segments, then its last builder, into `done` (the parts before it),
/// dropping each once moved.
pub(super) fn join(
    done: &mut ScheduleBuilder,
    segments: Vec<Sealed>,
    last: ScheduleBuilder,
) -> Result<(), BuildError> {
    segments
        .into_iter()
        .chain(std::iter::once(last.into_sealed()))
        .try_for_each(|segment| done.append(segment))
}

/// Where parts `1..parts` begin: for each, the byte offset and rank number of the first
/// line at or after `len * i / parts` that starts with `rank K {`, before the next
/// target; offsets and ranks strictly increasing (a line that breaks the order is left
/// out, its part joined to the one before).
fn block_starts<R: Read, O: Fn(u64, u64) -> std::io::Result<R>>(
    open: &O,
    len: u64,
    parts: usize,
) -> std::io::Result<Vec<(u64, u32)>> {
    let parts = parts as u64;
    let mut out: Vec<(u64, u32)> = Vec::new();
    for i in 1..parts {
        let from = len * i / parts;
        let limit = len * (i + 1) / parts;
        if out.last().is_some_and(|&(at, _)| at >= from) {
            continue;
        }
        if let Some((at, k)) = find_block_start(open, from, limit, len)? {
            if out.last().is_none_or(|&(_, last)| k > last) && k > 0 {
                out.push((at, k));
            }
        }
    }
    Ok(out)
}

/// Longest `rank K {` line start recognised (longer ones are not boundaries).
const HEADER_MAX: usize = 64;

/// The first line starting at or after byte `from` (and by `limit`) with `rank K {`,
/// in a text of `len` bytes.
fn find_block_start<R: Read, O: Fn(u64, u64) -> std::io::Result<R>>(
    open: &O,
    from: u64,
    limit: u64,
    len: u64,
) -> std::io::Result<Option<(u64, u32)>> {
    if from == 0 || from >= limit {
        return Ok(None);
    }
    // Read from the byte before `from`, to know whether `from` starts a line.
    let base = from - 1;
    let end = limit.saturating_add(HEADER_MAX as u64).min(len);
    let mut reader = open(base, end - base)?;
    let mut buf = vec![0u8; 64 << 10];
    let mut window: Vec<u8> = Vec::new();
    // `window[0]` is byte `offset` of the text.
    let mut offset = base;
    let mut eof = false;
    let mut i = 0usize;
    loop {
        if !eof && window.len() < i + HEADER_MAX + 1 {
            let n = loop {
                match reader.read(&mut buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            eof = n == 0;
            window.extend_from_slice(&buf[..n]);
            continue;
        }
        if offset + i as u64 >= limit || i + 1 >= window.len() {
            return Ok(None);
        }
        if window[i] == b'\n' {
            if let Some(k) = block_header(&window[i + 1..]) {
                return Ok(Some((offset + i as u64 + 1, k)));
            }
        }
        i += 1;
        if i > buf.len() {
            window.drain(..i);
            offset += i as u64;
            i = 0;
        }
    }
}

/// The rank of a line that starts `rank K {` (spaces or tabs between), if it does.
fn block_header(line: &[u8]) -> Option<u32> {
    let line = line.get(..HEADER_MAX.min(line.len()))?;
    let rest = line.strip_prefix(b"rank")?;
    let after_ws = rest.iter().position(|&c| c != b' ' && c != b'\t')?;
    if after_ws == 0 {
        return None;
    }
    let rest = &rest[after_ws..];
    let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 10 {
        return None;
    }
    let k: u64 = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    let rest = &rest[digits..];
    let brace = rest.iter().position(|&c| c != b' ' && c != b'\t')?;
    (rest[brace] == b'{').then_some(u32::try_from(k).ok()?)
}

#[cfg(test)]
mod tests {
    use super::block_header;

    #[test]
    fn block_headers_are_recognised() {
        assert_eq!(block_header(b"rank 12 {\n"), Some(12));
        assert_eq!(block_header(b"rank\t3\t{"), Some(3));
        assert_eq!(block_header(b"rank 3{"), Some(3));
        assert_eq!(block_header(b"rank3 {"), None);
        assert_eq!(block_header(b" rank 3 {"), None);
        assert_eq!(block_header(b"rank 3 }"), None);
        assert_eq!(block_header(b"rank 99999999999 {"), None);
        assert_eq!(block_header(b"rank 4294967296 {"), None);
        assert_eq!(block_header(b"rank 5 "), None);
    }
}
