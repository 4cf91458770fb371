//! LogGOPSim's binary schedules (what its `txt2bin` writes): a reader.
//!
//! The layout, as read here (all integers little-endian, no padding):
//!
//! * bytes 0..8: a `u64` cookie, 4223 (2342 marks a file that a LogGOPSim run with
//!   `--save-mem` has consumed);
//! * then, at the *base* (byte 8; every offset below counts from it): `u32` number of
//!   ranks P, `u8` largest cpu, `u8` largest nic, and P pairs of `u64` (start, end) giving
//!   where each rank's section lies;
//! * a rank's section: `u32` operation count n, `u32` root count k, k `u32` roots (the
//!   operations without prerequisites), n records of 39 bytes, and the dependents
//!   (`u32` local indices);
//! * a record: `u32` number of prerequisites, `u8` kind (1 send, 2 recv, 3 calc), `u32`
//!   peer, `u64` size (bytes, or ns for calc), `u32` tag, `u8` cpu, `u8` nic, then two
//!   (`u32` count, `u32` first index into the rank's dependents) pairs: the operations
//!   that require this one (start after it finishes), then those that irequire it
//!   (start after it starts). `u32::MAX` is `-1` (any source, any tag).
//!
//! Every redundant field is checked against the rest (prerequisite counts, roots, the
//! largest cpu and nic), so a file accepted here runs the same in LogGOPSim and in
//! commodel. Errors name the file and the byte offset at fault. Ranks are read one at a
//! time: memory is the schedule plus the largest rank's section. The table of sections
//! lets [`read_binary_in_parts`] give runs of ranks to threads, each reading only its
//! own sections.

use std::io::{Read, Seek, SeekFrom};

use super::error::GoalError;
use super::parts::{in_segments, join};
use crate::schedule::{BuildError, DepKind, Op, OpRef, Schedule, ScheduleBuilder, Sealed, ANY};

/// The cookie at the start of a binary schedule.
pub const MAGIC: u64 = 4223;
/// The cookie LogGOPSim writes over [`MAGIC`] when a `--save-mem` run consumed the file.
pub const MAGIC_CONSUMED: u64 = 2342;
/// Bytes before the base that section offsets count from.
const BASE: u64 = 8;
/// Bytes of one operation record.
const RECORD: usize = 39;

/// Whether `head`, the first bytes of a file, start a binary schedule.
pub fn is_binary(head: &[u8]) -> bool {
    head.get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_le_bytes)
        .is_some_and(|c| c == MAGIC || c == MAGIC_CONSUMED)
}

/// Parse a binary schedule held in memory; `file` names it in errors.
pub fn parse_binary(data: &[u8], file: &str) -> Result<Schedule, GoalError> {
    read_binary(std::io::Cursor::new(data), data.len() as u64, file)
}

/// Read a binary schedule of `len` bytes from `input`.
pub fn read_binary(
    mut input: impl Read + Seek,
    len: u64,
    file: &str,
) -> Result<Schedule, GoalError> {
    let header = Header::read(&mut input, len, file)?;
    let mut builder = ScheduleBuilder::new(header.p);
    let mut sections = Sections::new(&header, len, file);
    for rank in 0..header.p {
        sections.rank(&mut input, rank, &mut builder)?;
    }
    header.finish(builder, (sections.seen_cpu, sections.seen_nic), file)
}

/// [`read_binary`] on up to `parts` threads, each reading the sections of a run of
/// ranks (about the same bytes each) through its own reader from `open`, sealed in
/// segments of `segment_ops` operations and joined in rank order: the schedule, or the
/// error, of [`read_binary`] (the first in rank order; a structural error found in the
/// join sends the file to [`read_binary`]).
pub(super) fn read_binary_in_parts<R, O>(
    open: O,
    len: u64,
    file: &str,
    parts: usize,
    segment_ops: usize,
) -> Result<Schedule, GoalError>
where
    R: Read + Seek + Send,
    O: Fn() -> std::io::Result<R> + Sync,
{
    let io = |e: std::io::Error| GoalError::Io {
        file: file.to_string(),
        message: e.to_string(),
    };
    let mut input = open().map_err(io)?;
    let header = Header::read(&mut input, len, file)?;
    let p = header.p;
    // Cut the ranks where the sections passed reach `total * i / parts` bytes.
    let size = |rank: u32| {
        let (start, end) = header.section(rank);
        end.saturating_sub(start)
    };
    let total: u64 = (0..p).map(size).fold(0, u64::saturating_add);
    let mut cuts = vec![0u32];
    let mut sum = 0u64;
    for rank in 0..p {
        let goal = total / parts as u64 * cuts.len() as u64;
        if rank > *cuts.last().unwrap_or(&0) && sum >= goal && cuts.len() < parts {
            cuts.push(rank);
        }
        sum = sum.saturating_add(size(rank));
    }
    cuts.push(p);
    type Part = Result<(ScheduleBuilder, Vec<Sealed>, (u8, u8)), GoalError>;
    let read_part = |i: usize, input: &mut R| -> Part {
        let mut sections = Sections::new(&header, len, file);
        // Part 0's builder is the one the others join: it is not cut.
        let segment_ops = if i == 0 { usize::MAX } else { segment_ops };
        let (last, segments) = in_segments(p, cuts[i]..cuts[i + 1], segment_ops, |rank, b| {
            sections.rank(input, rank, b)
        })?;
        Ok((last, segments, (sections.seen_cpu, sections.seen_nic)))
    };
    let outcomes: Vec<Part> = std::thread::scope(|scope| {
        let others: Vec<_> = (1..cuts.len() - 1)
            .map(|i| {
                let (open, read_part) = (&open, &read_part);
                scope.spawn(move || read_part(i, &mut open().map_err(io)?))
            })
            .collect();
        let mut all = vec![read_part(0, &mut input)];
        all.extend(others.into_iter().map(|t| {
            t.join().unwrap_or_else(|_| {
                Err(GoalError::Io {
                    file: file.to_string(),
                    message: "a reading thread failed".to_string(),
                })
            })
        }));
        all
    });
    let sequential = || read_binary(open().map_err(io)?, len, file);
    let mut joined: Option<ScheduleBuilder> = None;
    let mut seen = (0u8, 0u8);
    for outcome in outcomes {
        let (last, segments, (cpu, nic)) = outcome?;
        seen = (seen.0.max(cpu), seen.1.max(nic));
        match joined.as_mut() {
            None => joined = Some(last),
            Some(done) => {
                if join(done, segments, last).is_err() {
                    return sequential();
                }
            }
        }
    }
    match joined {
        Some(builder) => header.finish(builder, seen, file),
        None => sequential(),
    }
}

/// The start of a binary schedule: ranks, the stored largest cpu and nic, and the table
/// of rank sections.
struct Header {
    p: u32,
    max_cpu: u8,
    max_nic: u8,
    table: Vec<u8>,
}

impl Header {
    fn read(input: &mut (impl Read + Seek), len: u64, file: &str) -> Result<Header, GoalError> {
        let fail = |offset: u64, message: String| GoalError::Binary {
            file: file.to_string(),
            offset,
            message,
        };
        let mut buf = Vec::new();
        load(input, len, file, 0, BASE + 6, &mut buf, "the header")?;
        let cookie = le64(&buf, 0);
        if cookie == MAGIC_CONSUMED {
            return Err(fail(
                0,
                "this binary schedule was consumed by a LogGOPSim run with --save-mem; convert the text again with txt2bin".to_string(),
            ));
        }
        if cookie != MAGIC {
            return Err(fail(
                0,
                format!("cookie {cookie}, expected {MAGIC} (not a LogGOPSim binary schedule)"),
            ));
        }
        let p = le32(&buf, 8);
        let (max_cpu, max_nic) = (buf[12], buf[13]);
        if p == 0 || p == u32::MAX {
            return Err(fail(
                BASE,
                format!("{p} ranks, expected 1 to {}", u32::MAX - 1),
            ));
        }
        let mut table = Vec::new();
        load(
            input,
            len,
            file,
            BASE + 6,
            16 * u64::from(p),
            &mut table,
            "the table of rank sections",
        )?;
        Ok(Header {
            p,
            max_cpu,
            max_nic,
            table,
        })
    }

    /// Where `rank`'s section lies, as stored (offsets from the base).
    fn section(&self, rank: u32) -> (u64, u64) {
        (
            le64(&self.table, 16 * rank as usize),
            le64(&self.table, 16 * rank as usize + 8),
        )
    }

    /// Check the stored largest cpu and nic against those `seen`, and freeze the schedule.
    fn finish(
        &self,
        builder: ScheduleBuilder,
        seen: (u8, u8),
        file: &str,
    ) -> Result<Schedule, GoalError> {
        let (max_cpu, max_nic) = (self.max_cpu, self.max_nic);
        if seen != (max_cpu, max_nic) {
            return Err(GoalError::Binary {
                file: file.to_string(),
                offset: BASE + 4,
                message: format!(
                    "largest cpu {max_cpu} and nic {max_nic} stored, {} and {} used",
                    seen.0, seen.1
                ),
            });
        }
        builder.build().map_err(|e| build_error(e, file))
    }
}

/// Read `n` bytes at `at` of the `len` bytes of `input` into `buf`.
fn load(
    input: &mut (impl Read + Seek),
    len: u64,
    file: &str,
    at: u64,
    n: u64,
    buf: &mut Vec<u8>,
    what: &str,
) -> Result<(), GoalError> {
    if at.checked_add(n).is_none_or(|end| end > len) {
        return Err(GoalError::Binary {
            file: file.to_string(),
            offset: at,
            message: format!("{what} needs {n} bytes, the file has {len}"),
        });
    }
    buf.clear();
    buf.resize(n as usize, 0);
    input
        .seek(SeekFrom::Start(at))
        .and_then(|_| input.read_exact(buf))
        .map_err(|e| GoalError::Io {
            file: file.to_string(),
            message: e.to_string(),
        })
}

/// A reader of rank sections, one at a time, with its scratch space and the largest cpu
/// and nic seen so far.
struct Sections<'h> {
    header: &'h Header,
    len: u64,
    file: &'h str,
    section: Vec<u8>,
    indegree: Vec<u32>,
    is_root: Vec<bool>,
    seen_cpu: u8,
    seen_nic: u8,
}

impl<'h> Sections<'h> {
    fn new(header: &'h Header, len: u64, file: &'h str) -> Self {
        Sections {
            header,
            len,
            file,
            section: Vec::new(),
            indegree: Vec::new(),
            is_root: Vec::new(),
            seen_cpu: 0,
            seen_nic: 0,
        }
    }

    /// Read, check and seal `rank`'s section.
    fn rank(
        &mut self,
        input: &mut (impl Read + Seek),
        rank: u32,
        builder: &mut ScheduleBuilder,
    ) -> Result<(), GoalError> {
        let (p, len, file) = (self.header.p, self.len, self.file);
        let fail = |offset: u64, message: String| GoalError::Binary {
            file: file.to_string(),
            offset,
            message,
        };
        let entry = BASE + 6 + 16 * u64::from(rank);
        let (start, end) = self.header.section(rank);
        if start > end || end > len - BASE {
            return Err(fail(
                entry,
                format!("rank {rank}'s section runs from {start} to {end}, outside the {} bytes after the cookie", len - BASE),
            ));
        }
        let at = BASE + start;
        load(
            input,
            self.len,
            self.file,
            at,
            end - start,
            &mut self.section,
            "a rank section",
        )?;
        let sec = &self.section;
        let need = |k: u64| -> Result<(), GoalError> {
            if k > sec.len() as u64 {
                Err(fail(
                    at + sec.len() as u64,
                    format!(
                        "rank {rank}'s section ends after {} bytes, {k} needed",
                        sec.len()
                    ),
                ))
            } else {
                Ok(())
            }
        };
        need(8)?;
        let n = le32(sec, 0) as usize;
        let roots = le32(sec, 4) as usize;
        let records = 8 + 4 * roots as u64;
        let appendix = records + (RECORD * n) as u64;
        need(appendix)?;
        let records = records as usize;
        let appendix = appendix as usize;
        if !(sec.len() - appendix).is_multiple_of(4) {
            return Err(fail(
                at + appendix as u64,
                format!(
                    "rank {rank}'s dependents take {} bytes, not whole u32",
                    sec.len() - appendix
                ),
            ));
        }
        let dependents = (sec.len() - appendix) / 4;
        self.indegree.clear();
        self.indegree.resize(n, 0);
        for i in 0..n {
            let r = records + RECORD * i;
            let byte = |k: usize| at + (r + k) as u64;
            let peer = le32(sec, r + 5);
            let tag = le32(sec, r + 17);
            let size = le64(sec, r + 9);
            let (cpu, nic) = (sec[r + 21], sec[r + 22]);
            let peer_ok = |peer: u32, any: bool| peer < p || (any && peer == ANY);
            let mut op = match sec[r + 4] {
                1 if peer_ok(peer, false) => Op::send(peer, size, tag),
                2 if peer_ok(peer, true) => Op::recv(peer, size, tag),
                3 => Op::calc(size),
                k @ (1 | 2) => {
                    return Err(fail(
                        byte(5),
                        format!(
                            "rank {rank} operation {i}: {} peer {peer}, expected a rank below {p}{}",
                            if k == 1 { "send" } else { "recv" },
                            if k == 2 { " or 4294967295 (any source)" } else { "" }
                        ),
                    ))
                }
                k => {
                    return Err(fail(
                        byte(4),
                        format!("rank {rank} operation {i}: kind {k}, expected 1 (send), 2 (recv) or 3 (calc)"),
                    ))
                }
            };
            op.cpu = cpu;
            op.nic = nic;
            self.seen_cpu = self.seen_cpu.max(cpu);
            self.seen_nic = self.seen_nic.max(nic);
            builder.push(rank, op);
            for (k, kind) in [(23, DepKind::Requires), (31, DepKind::IRequires)] {
                let count = le32(sec, r + k) as usize;
                let first = le32(sec, r + k + 4) as usize;
                if count == 0 {
                    continue;
                }
                if first.checked_add(count).is_none_or(|e| e > dependents) {
                    return Err(fail(
                        byte(k),
                        format!(
                            "rank {rank} operation {i}: dependents {first} to {} of {dependents}",
                            first.saturating_add(count)
                        ),
                    ));
                }
                for d in first..first + count {
                    let a = le32(sec, appendix + 4 * d);
                    if a as usize >= n {
                        return Err(fail(
                            at + (appendix + 4 * d) as u64,
                            format!("rank {rank}: dependent operation {a}, the rank has {n}"),
                        ));
                    }
                    self.indegree[a as usize] += 1;
                    builder.dep(
                        OpRef { rank, index: a },
                        OpRef {
                            rank,
                            index: i as u32,
                        },
                        kind,
                    );
                }
            }
        }
        // The redundant fields must agree: LogGOPSim starts from the roots and counts
        // prerequisites down from the stored counts.
        self.is_root.clear();
        self.is_root.resize(n, false);
        for j in 0..roots {
            let root = le32(sec, 8 + 4 * j) as usize;
            let bad = root >= n || self.is_root[root] || self.indegree[root] != 0;
            if bad {
                return Err(fail(
                    at + (8 + 4 * j) as u64,
                    format!("rank {rank}: root {root} is not a distinct operation without prerequisites"),
                ));
            }
            self.is_root[root] = true;
        }
        for i in 0..n {
            let stored = le32(sec, records + RECORD * i);
            if stored != self.indegree[i] || (stored == 0 && !self.is_root[i]) {
                return Err(fail(
                    at + (records + RECORD * i) as u64,
                    format!(
                        "rank {rank} operation {i}: {stored} prerequisites stored, {} listed{}",
                        self.indegree[i],
                        if stored == 0 {
                            " (or not among the roots)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        // The section is complete: into the compact columns with it.
        builder.seal(rank).map_err(|e| build_error(e, self.file))?;
        Ok(())
    }
}

/// A structural error the builder found. A cycle is reported at the rank's entry in
/// the table of sections.
fn build_error(e: BuildError, file: &str) -> GoalError {
    let offset = match e {
        BuildError::Cycle { rank, .. } => BASE + 6 + 16 * u64::from(rank),
        _ => 0,
    };
    GoalError::Binary {
        file: file.to_string(),
        offset,
        message: e.to_string(),
    }
}

fn le32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}
