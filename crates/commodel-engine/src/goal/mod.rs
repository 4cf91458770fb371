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
//! * [`parse`], [`parse_bytes`], [`parse_reader`], [`read`] accept every file LogGOPSim's `txt2bin` accepts,
//!   and also indentation, a `//` or `/* */` comment after a statement, and sizes with a
//!   unit suffix (`64KiB`, `1MiB`, `2kB`, `1GB`). Errors ([`GoalError`]) display as
//!   `file:line:column: <what was found>, expected <what>`.
//! * [`write`] and [`write_to`] emit only what `txt2bin` accepts (except a `calc` with a
//!   non-zero `nic`, which `txt2bin` cannot express). `parse(write(s))` has the same
//!   operations, in the same order, and the same dependencies, in the same order, as `s`.
//!
//! The grammar and the extensions are described in `docs/formats.md`.

mod cycle;
mod error;
mod parse;
mod write;

use std::path::Path;

pub use error::{GoalError, GoalErrorKind};
pub use parse::{parse, parse_bytes, parse_bytes_in_chunks, parse_reader};
pub use write::{is_valid_label, write, write_to};

use crate::schedule::Schedule;

/// Read a GOAL text file, streaming it in chunks.
pub fn read(path: &Path) -> Result<Schedule, GoalError> {
    let file = path.display().to_string();
    let io = |e: std::io::Error| GoalError::Io {
        file: file.clone(),
        message: e.to_string(),
    };
    let handle = std::fs::File::open(path).map_err(io)?;
    let len = handle.metadata().map_err(io)?.len();
    parse_reader(handle, len, &file)
}
