//! The GOAL writer: emits only what LogGOPSim's `txt2bin` accepts.
//!
//! Output: `num_ranks P`, then per rank `rank N {`, one statement per line in local order,
//! then the rank's dependencies in the schedule's edge order ([`Schedule::edges`]), then `}`.
//! No indentation, no comments, sizes as `<n>b`, `-1` for [`ANY`], `tag`/`cpu`/`nic` only
//! when non-zero. Every operation gets a label: its own if it has a valid, unique one,
//! otherwise `o<local index>` (with `_<k>` appended if that name is taken in the rank).
//!
//! The one thing `txt2bin` cannot express is a `calc` with a non-zero `nic`; it is written
//! as `calc N [cpu C] nic K`, which commodel reads back but `txt2bin` rejects.

use std::io::{self, Write};

use rustc_hash::FxHashMap;

use super::parse::RESERVED;
use crate::schedule::{OpId, OpKind, Schedule, ANY};

/// Write a schedule as GOAL text.
pub fn write(schedule: &Schedule) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write_to(schedule, &mut out);
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Write a schedule as GOAL text to `out`, in chunks (no copy of the whole text in memory).
pub fn write_to<W: Write>(schedule: &Schedule, out: W) -> io::Result<()> {
    let mut text = GoalWriter::new(out, schedule.num_ranks());
    for rank in 0..schedule.num_ranks() {
        text.rank(schedule, rank)?;
    }
    text.finish()
}

/// GOAL text written one rank block at a time, in chunks: the header, then
/// [`rank`](Self::rank) for ranks 0, 1, ... in order, then [`finish`](Self::finish).
/// A block depends only on its rank's operations, dependencies and labels, so
/// it is the same whether the schedule holds every rank or that rank alone.
pub(crate) struct GoalWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> GoalWriter<W> {
    const CHUNK: usize = 1 << 16;

    /// Start the text of a schedule of `num_ranks` ranks (nothing is written yet).
    pub(crate) fn new(out: W, num_ranks: u32) -> Self {
        let mut buf: Vec<u8> = Vec::with_capacity(Self::CHUNK + 256);
        buf.extend_from_slice(b"num_ranks ");
        push_u64(&mut buf, u64::from(num_ranks));
        buf.push(b'\n');
        GoalWriter { out, buf }
    }

    /// Rank blocks alone, without the header: a part of the text written by several
    /// writers (the header is written by [`new`](Self::new)'s writer).
    pub(crate) fn headless(out: W) -> Self {
        GoalWriter {
            out,
            buf: Vec::with_capacity(Self::CHUNK + 256),
        }
    }

    /// Write what is buffered to `out` and return it.
    pub(crate) fn into_out(mut self) -> io::Result<W> {
        self.out.write_all(&self.buf)?;
        Ok(self.out)
    }

    /// Write the block of `rank` of `schedule`.
    pub(crate) fn rank(&mut self, schedule: &Schedule, rank: u32) -> io::Result<()> {
        self.rank_as(schedule, rank, rank)
    }

    /// Write the block of `rank` of `schedule` as rank `shown` (a schedule holding one
    /// rank of a larger one as its rank 0).
    pub(crate) fn rank_as(&mut self, schedule: &Schedule, rank: u32, shown: u32) -> io::Result<()> {
        let names = Names::new(schedule, rank);
        self.buf.extend_from_slice(b"rank ");
        push_u64(&mut self.buf, u64::from(shown));
        self.buf.extend_from_slice(b" {\n");
        for id in schedule.ops_of(rank) {
            names.push(&mut self.buf, id);
            self.buf.extend_from_slice(b": ");
            push_op(&mut self.buf, schedule, id);
            self.spill()?;
        }
        for b in schedule.ops_of(rank) {
            for (dependents, word) in [
                (schedule.requirers(b), &b" requires "[..]),
                (schedule.irequirers(b), &b" irequires "[..]),
            ] {
                for a in dependents {
                    names.push(&mut self.buf, a);
                    self.buf.extend_from_slice(word);
                    names.push(&mut self.buf, b);
                    self.buf.push(b'\n');
                    self.spill()?;
                }
            }
        }
        self.buf.extend_from_slice(b"}\n");
        Ok(())
    }

    /// Write what is buffered and flush `out`.
    pub(crate) fn finish(mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        self.out.flush()
    }

    /// Hand a full chunk to `out`.
    fn spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= Self::CHUNK {
            self.out.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

/// Whether `label` can be written as a GOAL label: `[a-zA-Z][a-zA-Z0-9_]*`, not a keyword.
pub fn is_valid_label(label: &str) -> bool {
    let b = label.as_bytes();
    b.first().is_some_and(u8::is_ascii_alphabetic)
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
        && !RESERVED.contains(&label)
}

fn push_op(buf: &mut Vec<u8>, s: &Schedule, id: OpId) {
    let op = s.op(id);
    match op.kind {
        OpKind::Send | OpKind::Recv => {
            buf.extend_from_slice(if op.kind == OpKind::Send {
                b"send "
            } else {
                b"recv "
            });
            push_u64(buf, op.size);
            buf.extend_from_slice(if op.kind == OpKind::Send {
                b"b to "
            } else {
                b"b from "
            });
            push_any(buf, op.peer);
            if op.tag != 0 {
                buf.extend_from_slice(b" tag ");
                push_any(buf, op.tag);
            }
        }
        OpKind::Calc => {
            buf.extend_from_slice(b"calc ");
            push_u64(buf, op.size);
        }
    }
    if op.cpu != 0 {
        buf.extend_from_slice(b" cpu ");
        push_u64(buf, u64::from(op.cpu));
    }
    if op.nic != 0 {
        buf.extend_from_slice(b" nic ");
        push_u64(buf, u64::from(op.nic));
    }
    buf.push(b'\n');
}

fn push_any(buf: &mut Vec<u8>, v: u32) {
    if v == ANY {
        buf.extend_from_slice(b"-1");
    } else {
        push_u64(buf, u64::from(v));
    }
}

fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// The name of one operation in the text.
#[derive(Clone, Copy)]
enum Name<'s> {
    /// Its own label.
    Own(&'s str),
    /// `o<local index>`.
    Plain,
    /// `o<local index>_<k>`, when `o<local index>` is some other operation's label.
    Suffixed(u64),
}

/// The names of one rank's operations, by local index.
struct Names<'s> {
    first: OpId,
    names: Vec<Name<'s>>,
}

impl<'s> Names<'s> {
    fn new(schedule: &'s Schedule, rank: u32) -> Self {
        let ops = schedule.ops_of(rank);
        let labels: Vec<Option<&'s str>> = ops.clone().map(|id| schedule.label(id)).collect();
        // Valid labels of the rank -> the first operation that carries each (which keeps it).
        let mut owner: FxHashMap<&'s str, usize> = FxHashMap::default();
        for (i, l) in labels.iter().enumerate() {
            if let Some(l) = l.filter(|l| is_valid_label(l)) {
                owner.entry(l).or_insert(i);
            }
        }
        let names = labels
            .iter()
            .enumerate()
            .map(|(i, l)| match l {
                Some(l) if owner.get(l) == Some(&i) => Name::Own(l),
                _ if owner.is_empty() => Name::Plain,
                _ => {
                    // `o<i>` and `o<i>_<k>` for different i never coincide, so only the
                    // rank's own labels can clash.
                    let mut k = 0u64;
                    while owner.contains_key(
                        if k == 0 {
                            format!("o{i}")
                        } else {
                            format!("o{i}_{k}")
                        }
                        .as_str(),
                    ) {
                        k += 1;
                    }
                    if k == 0 {
                        Name::Plain
                    } else {
                        Name::Suffixed(k)
                    }
                }
            })
            .collect();
        Names {
            first: ops.start,
            names,
        }
    }

    fn push(&self, buf: &mut Vec<u8>, id: OpId) {
        let local = id.wrapping_sub(self.first);
        match self.names.get(local as usize) {
            Some(Name::Own(l)) => buf.extend_from_slice(l.as_bytes()),
            Some(Name::Suffixed(k)) => {
                buf.push(b'o');
                push_u64(buf, u64::from(local));
                buf.push(b'_');
                push_u64(buf, *k);
            }
            Some(Name::Plain) | None => {
                buf.push(b'o');
                push_u64(buf, u64::from(local));
            }
        }
    }
}
