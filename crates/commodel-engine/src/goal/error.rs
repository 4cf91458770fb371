//! Errors of the GOAL reader.

/// What went wrong, for callers that react to the kind of error (the Python
/// bindings map every kind to `GoalError`, tests match on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GoalErrorKind {
    /// The file could not be read.
    Io,
    /// Text that does not fit the grammar (a missing `}`, a stray character,
    /// an unterminated `/* */` comment, ...).
    Syntax,
    /// A word where a keyword was expected (`sned`, `tga`, ...).
    UnknownKeyword,
    /// A dependency names a label that is not defined earlier in the same rank.
    UndefinedLabel,
    /// A label defined twice within one rank.
    DuplicateLabel,
    /// A send destination or receive source outside `0..num_ranks`.
    RankOutOfRange,
    /// Rank blocks out of order, missing, or more of them than `num_ranks`.
    RankBlock,
    /// `num_ranks` missing, zero, or larger than the file could hold.
    NumRanks,
    /// A number that does not fit its field (size > u64, tag or rank > u32, cpu or nic > 255).
    Overflow,
    /// The dependencies of a rank form a cycle.
    Cycle,
    /// The schedule has more operations than the engine can index.
    TooLarge,
    /// A binary schedule (LogGOPSim's `txt2bin` output) that is cut short, inconsistent,
    /// or invalidated.
    Binary,
}

/// An error found while reading GOAL text.
///
/// Parse errors display as `file:line:column: <what was found>, expected <what>`,
/// with 1-based line and column (the column counts characters).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GoalError {
    /// The file could not be opened or read.
    #[error("{file}: cannot read the file: {message}")]
    Io { file: String, message: String },
    /// The text is not a valid GOAL schedule.
    #[error("{file}:{line}:{column}: {found}, expected {expected}")]
    Parse {
        kind: GoalErrorKind,
        file: String,
        line: u64,
        column: u64,
        found: String,
        expected: String,
    },
    /// A binary schedule (LogGOPSim's `txt2bin` output) that cannot be read;
    /// `offset` is the byte of the file at fault.
    #[error("{file}: byte {offset}: {message}")]
    Binary {
        file: String,
        offset: u64,
        message: String,
    },
}

impl GoalError {
    /// The kind of error.
    pub fn kind(&self) -> GoalErrorKind {
        match self {
            GoalError::Io { .. } => GoalErrorKind::Io,
            GoalError::Parse { kind, .. } => *kind,
            GoalError::Binary { .. } => GoalErrorKind::Binary,
        }
    }

    /// The file name given to the reader.
    pub fn file(&self) -> &str {
        match self {
            GoalError::Io { file, .. }
            | GoalError::Parse { file, .. }
            | GoalError::Binary { file, .. } => file,
        }
    }

    /// `(line, column)`, both 1-based, of a parse error.
    pub fn position(&self) -> Option<(u64, u64)> {
        match self {
            GoalError::Io { .. } | GoalError::Binary { .. } => None,
            GoalError::Parse { line, column, .. } => Some((*line, *column)),
        }
    }
}
