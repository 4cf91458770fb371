//! GOAL, the schedule text format of LogGOPSim and Schedgen: reader and writer.
//!
//! ```
//! use commodel_engine::goal;
//!
//! let text = "num_ranks 2\nrank 0 {\ns: send 64KiB to 1 tag 7\n}\nrank 1 {\nr: recv 65536b from -1 tag -1\n}\n";
//! let schedule = goal::parse(text, "example.goal").unwrap();
//! assert_eq!(schedule.size(0), 65536);
//! assert_eq!(
//!     goal::write(&schedule),
//!     "num_ranks 2\nrank 0 {\ns: send 65536b to 1 tag 7\n}\nrank 1 {\nr: recv 65536b from -1 tag -1\n}\n"
//! );
//! ```
//!
//! * [`read`] takes a file of either format: GOAL text, or a LogGOPSim binary schedule
//!   ([`read_binary`]), told apart by content. With [`PARSE_THREADS_VAR`] set to N > 1
//!   it is read by N threads, one part (whole rank blocks, or rank sections) each, with
//!   the schedule and errors of reading on one thread (the default).
//! * [`parse`], [`parse_bytes`], [`parse_reader`], [`read`] accept every file LogGOPSim's `txt2bin` accepts,
//!   and also indentation, a `//` or `/* */` comment after a statement, and sizes with a
//!   unit suffix (`64KiB`, `1MiB`, `2kB`, `1GB`). Errors ([`GoalError`]) display as
//!   `file:line:column: <what was found>, expected <what>`.
//! * [`write`] and [`write_to`] emit only what `txt2bin` accepts (except a `calc` with a
//!   non-zero `nic`, which `txt2bin` cannot express). `parse(write(s))` has the same
//!   operations, in the same order, and the same dependencies, in the same order, as `s`.
//!
//! The grammar and the extensions are described in `docs/formats.md`.

mod binary;
mod cycle;
mod error;
mod parse;
mod parts;
mod write;

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

pub use binary::{is_binary, parse_binary, read_binary, MAGIC, MAGIC_CONSUMED};
pub use error::{GoalError, GoalErrorKind};
pub use parse::{parse, parse_bytes, parse_bytes_in_chunks, parse_reader};
pub use parts::PARSE_THREADS_VAR;
pub(crate) use write::GoalWriter;
pub use write::{is_valid_label, write, write_to};

use crate::schedule::Schedule;

/// Read a schedule file: GOAL text, streamed in chunks, or a LogGOPSim binary schedule
/// (`txt2bin`'s output), told apart by the file's first eight bytes.
///
/// With [`PARSE_THREADS_VAR`] set to N > 1 the file is read by N threads, each on its
/// own part of the file (whole rank blocks of GOAL text, a run of rank sections of a
/// binary schedule); one thread by default. The schedule, or the error, is that of
/// reading on one thread.
pub fn read(path: &Path) -> Result<Schedule, GoalError> {
    read_in(path, None)
}

/// [`read`] with the file cut into `parts` parts (at most one per rank), whatever its
/// size. For tests of the parallel reader.
#[doc(hidden)]
pub fn read_in_parts(path: &Path, parts: usize) -> Result<Schedule, GoalError> {
    read_in(path, Some(parts.max(1)))
}

/// [`parse_bytes`] in `parts` parts, each read through a window of `chunk` bytes and
/// sealed in segments of `segment_ops` operations: the same schedule or error for every
/// `parts`, `chunk` and `segment_ops`; with the schedule, how many parts were read apart
/// and joined (0: the text was read on one thread). For tests of the parallel reader.
#[doc(hidden)]
pub fn parse_bytes_in_parts(
    src: &[u8],
    file: &str,
    parts: usize,
    chunk: usize,
    segment_ops: usize,
) -> Result<(Schedule, usize), GoalError> {
    let open = |at: u64, n: u64| -> std::io::Result<&[u8]> {
        let at = (at as usize).min(src.len());
        Ok(&src[at..(at + n as usize).min(src.len())])
    };
    let (parts, chunk) = (parts.max(1), chunk.max(1));
    parts::parse_in_parts(open, src.len() as u64, file, parts, chunk, segment_ops)
}

/// [`parse_binary`] on `parts` threads, each sealing its ranks in segments of
/// `segment_ops` operations: the same schedule or error for every `parts` and
/// `segment_ops`. For tests of the parallel reader.
#[doc(hidden)]
pub fn parse_binary_in_parts(
    data: &[u8],
    file: &str,
    parts: usize,
    segment_ops: usize,
) -> Result<Schedule, GoalError> {
    let open = || Ok(std::io::Cursor::new(data));
    binary::read_binary_in_parts(open, data.len() as u64, file, parts.max(1), segment_ops)
}

fn read_in(path: &Path, parts: Option<usize>) -> Result<Schedule, GoalError> {
    let file = path.display().to_string();
    let io = |e: std::io::Error| GoalError::Io {
        file: file.clone(),
        message: e.to_string(),
    };
    let mut handle = std::fs::File::open(path).map_err(io)?;
    let len = handle.metadata().map_err(io)?.len();
    let mut head = Vec::with_capacity(8);
    (&mut handle).take(8).read_to_end(&mut head).map_err(io)?;
    handle.seek(SeekFrom::Start(0)).map_err(io)?;
    let parts = parts.unwrap_or_else(parts::parts_for);
    if is_binary(&head) {
        if parts <= 1 {
            return read_binary(std::io::BufReader::new(handle), len, &file);
        }
        drop(handle);
        let open = || std::fs::File::open(path).map(std::io::BufReader::new);
        return binary::read_binary_in_parts(open, len, &file, parts, parts::SEGMENT_OPS);
    }
    if parts <= 1 {
        return parse_reader(handle, len, &file);
    }
    drop(handle);
    // Each part opens the file again: its own handle and position.
    let open = |at: u64, n: u64| -> std::io::Result<std::io::Take<std::fs::File>> {
        let mut f = std::fs::File::open(path)?;
        f.seek(SeekFrom::Start(at))?;
        Ok(f.take(n))
    };
    // The parts share the one-thread reader's window size between them.
    let chunk = (parse::CHUNK / parts).max(64 << 10);
    parts::parse_in_parts(open, len, &file, parts, chunk, parts::SEGMENT_OPS).map(|(s, _)| s)
}
