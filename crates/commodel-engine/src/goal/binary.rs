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
//! time: memory is the schedule plus the largest rank's section.

use std::io::{Read, Seek, SeekFrom};

use super::error::GoalError;
use crate::schedule::{BuildError, DepKind, Op, OpRef, Schedule, ScheduleBuilder, ANY};

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
    let fail = |offset: u64, message: String| GoalError::Binary {
        file: file.to_string(),
        offset,
        message,
    };
    let mut load = |at: u64, n: u64, buf: &mut Vec<u8>, what: &str| -> Result<(), GoalError> {
        if at.checked_add(n).is_none_or(|end| end > len) {
            return Err(fail(
                at,
                format!("{what} needs {n} bytes, the file has {len}"),
            ));
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
    };
    let mut buf = Vec::new();
    load(0, BASE + 6, &mut buf, "the header")?;
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
        BASE + 6,
        16 * u64::from(p),
        &mut table,
        "the table of rank sections",
    )?;
    let mut builder = ScheduleBuilder::new(p);
    let (mut seen_cpu, mut seen_nic) = (0u8, 0u8);
    let mut section = Vec::new();
    let mut indegree: Vec<u32> = Vec::new();
    let mut is_root: Vec<bool> = Vec::new();
    for rank in 0..p {
        let entry = BASE + 6 + 16 * u64::from(rank);
        let (start, end) = (
            le64(&table, 16 * rank as usize),
            le64(&table, 16 * rank as usize + 8),
        );
        if start > end || end > len - BASE {
            return Err(fail(
                entry,
                format!("rank {rank}'s section runs from {start} to {end}, outside the {} bytes after the cookie", len - BASE),
            ));
        }
        let at = BASE + start;
        load(at, end - start, &mut section, "a rank section")?;
        let sec = &section;
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
        indegree.clear();
        indegree.resize(n, 0);
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
            seen_cpu = seen_cpu.max(cpu);
            seen_nic = seen_nic.max(nic);
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
                    indegree[a as usize] += 1;
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
        is_root.clear();
        is_root.resize(n, false);
        for j in 0..roots {
            let root = le32(sec, 8 + 4 * j) as usize;
            let bad = root >= n || is_root[root] || indegree[root] != 0;
            if bad {
                return Err(fail(
                    at + (8 + 4 * j) as u64,
                    format!("rank {rank}: root {root} is not a distinct operation without prerequisites"),
                ));
            }
            is_root[root] = true;
        }
        for i in 0..n {
            let stored = le32(sec, records + RECORD * i);
            if stored != indegree[i] || (stored == 0 && !is_root[i]) {
                return Err(fail(
                    at + (records + RECORD * i) as u64,
                    format!(
                        "rank {rank} operation {i}: {stored} prerequisites stored, {} listed{}",
                        indegree[i],
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
        builder.seal(rank).map_err(|e| build_error(e, file))?;
    }
    if (seen_cpu, seen_nic) != (max_cpu, max_nic) {
        return Err(fail(
            BASE + 4,
            format!(
                "largest cpu {max_cpu} and nic {max_nic} stored, {seen_cpu} and {seen_nic} used"
            ),
        ));
    }
    builder.build().map_err(|e| build_error(e, file))
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
