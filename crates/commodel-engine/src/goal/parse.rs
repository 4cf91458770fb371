//! The GOAL reader: a hand-written, single-pass scanner over bytes.
//!
//! It accepts the language of LogGOPSim's `txt2bin` (see `docs/formats.md`), including its
//! looser corners (`8 b`, `a:send8b to1`, `a requiresb`, several top-level items on one line),
//! plus extensions: indentation, a comment after a statement, size suffixes, `nic` on a
//! `calc`, a byte order mark. It is stricter than `txt2bin` where `txt2bin` silently
//! produces a different schedule: rank blocks must come in order `0..P-1`, all of them and
//! no more; labels must be unique within a rank; peers must be in range; numbers must fit
//! their field; dependencies must not form a cycle (`docs/formats.md` has the full list).
//!
//! Every error names `file:line:column`, what was found and what was expected. The parser
//! never panics: the input is read through `get`, numbers from it with checked arithmetic,
//! and the remaining indexing is bounded by construction (labels map to existing operations).
//!
//! The text is streamed: [`Stream`] keeps a window of the text (read in chunks of
//! [`CHUNK`] bytes), and each step (the header, one rank block, the end of the text) parses
//! inside the window straight into the [`ScheduleBuilder`]. A step that looks at the end of
//! the window before the end of the text is undone and run again on a larger window, so
//! the result and every error are those of parsing the whole text at once. Each complete
//! rank block is sealed into the schedule's compact columns at once
//! ([`ScheduleBuilder::seal`]), so memory is the schedule plus one rank's building storage
//! and the window (a few chunks, or the longest rank block or line). A large file is read
//! by several streams at once, one per part of its rank blocks (`parts.rs`).

use std::cell::Cell;
use std::collections::hash_map::Entry;
use std::io::Read;

use rustc_hash::FxHashMap;

use super::cycle::CycleCheck;
use super::error::{GoalError, GoalErrorKind};
use crate::schedule::{
    canonical_index, DepKind, Op, OpKind, OpRef, Schedule, ScheduleBuilder, ANY,
};

/// An operation of the rank whose label is not canonical, in [`Parser::canonical`].
const NOT_CANONICAL: usize = usize::MAX;

/// Words with a meaning in GOAL; a misplaced one is a syntax error, not an "unknown keyword".
const KEYWORDS: [&[u8]; 12] = [
    b"num_ranks",
    b"rank",
    b"send",
    b"recv",
    b"calc",
    b"requires",
    b"irequires",
    b"tag",
    b"cpu",
    b"nic",
    b"to",
    b"from",
];

/// Words that cannot be labels (`txt2bin` reads them as keywords at the start of a statement).
pub(crate) const RESERVED: [&str; 5] = ["send", "recv", "calc", "rank", "num_ranks"];

/// Parse GOAL text. `file` is the name used in error messages.
pub fn parse(text: &str, file: &str) -> Result<Schedule, GoalError> {
    parse_bytes(text.as_bytes(), file)
}

/// Parse GOAL text given as bytes (bytes that are not UTF-8 may appear inside comments).
pub fn parse_bytes(src: &[u8], file: &str) -> Result<Schedule, GoalError> {
    Stream::new(src, src.len() as u64, file, CHUNK).run()
}

/// Parse GOAL text from a reader, in chunks: memory follows the schedule, not the text.
/// `len`, the length of the text, bounds `num_ranks` before anything is allocated for
/// the ranks (`u64::MAX` if unknown).
pub fn parse_reader(reader: impl Read, len: u64, file: &str) -> Result<Schedule, GoalError> {
    Stream::new(reader, len, file, CHUNK).run()
}

/// [`parse_bytes`] through a window of `chunk` bytes (at least 1): the same schedule
/// or error for every `chunk`. For tests of the streaming.
#[doc(hidden)]
pub fn parse_bytes_in_chunks(src: &[u8], file: &str, chunk: usize) -> Result<Schedule, GoalError> {
    Stream::new(src, src.len() as u64, file, chunk.max(1)).run()
}

/// Bytes read from the text at a time.
pub(super) const CHUNK: usize = 1 << 20;

/// The text seen through a window that slides over it; see the module documentation.
pub(super) struct Stream<'f, R> {
    reader: R,
    file: &'f str,
    /// Length of the whole text (for the bound on `num_ranks`).
    file_len: u64,
    /// The window: the text from the start of a line up to what has been read so far.
    buf: Vec<u8>,
    /// The cursor, an offset into `buf`.
    start: usize,
    /// Whether `buf` reaches the end of the text.
    eof: bool,
    /// Lines before the window.
    line_base: u64,
    /// Whether the window begins at the start of the text (where a byte order mark may be).
    at_text_start: bool,
    /// Bytes read at a time ([`CHUNK`] but in tests).
    chunk: usize,
    dep_pairs: Vec<(u32, u32)>,
    cycles: CycleCheck,
    /// [`Parser::canonical`]'s buffer, kept from rank to rank.
    canonical: Vec<usize>,
}

impl<'f, R: Read> Stream<'f, R> {
    /// A stream over the text from its start.
    pub(super) fn new(reader: R, file_len: u64, file: &'f str, chunk: usize) -> Self {
        Stream {
            reader,
            file,
            file_len,
            buf: Vec::new(),
            start: 0,
            eof: false,
            line_base: 0,
            at_text_start: true,
            chunk,
            dep_pairs: Vec::new(),
            cycles: CycleCheck::default(),
            canonical: Vec::new(),
        }
    }

    /// A stream over a tail of the text that starts at the start of line
    /// `line_base + 1`, between two top-level items (see `parts`).
    pub(super) fn resume(
        reader: R,
        file_len: u64,
        file: &'f str,
        chunk: usize,
        line_base: u64,
    ) -> Self {
        let mut s = Stream::new(reader, file_len, file, chunk);
        s.line_base = line_base;
        s.at_text_start = false;
        s
    }

    /// Read until the window holds at least `ahead` bytes after the cursor, or the text ends.
    fn fill(&mut self, ahead: usize) -> Result<(), GoalError> {
        let want = self.start.saturating_add(ahead);
        while !self.eof && self.buf.len() < want {
            let have = self.buf.len();
            let next = want.min(have.saturating_add(self.chunk));
            self.buf.resize(next, 0);
            let got = loop {
                match self.reader.read(&mut self.buf[have..next]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        self.buf.truncate(have);
                        return Err(GoalError::Io {
                            file: self.file.to_string(),
                            message: e.to_string(),
                        });
                    }
                }
            };
            self.buf.truncate(have + got);
            self.eof = got == 0;
        }
        Ok(())
    }

    /// Drop the lines before the cursor once they fill a chunk.
    fn compact(&mut self) {
        if self.start < self.chunk {
            return;
        }
        let Some(cut) = self.buf[..self.start].iter().rposition(|&c| c == b'\n') else {
            return;
        };
        let cut = cut + 1;
        self.line_base += count_newlines(&self.buf[..cut]);
        self.buf.drain(..cut);
        self.start -= cut;
        self.at_text_start = false;
    }

    /// Run one step of the parse at the cursor and move the cursor past what it read.
    /// If the step looked past the window before the end of the text, the operations it
    /// added to rank `undo` are taken back and it runs again on a window twice as large.
    fn step<T>(
        &mut self,
        builder: &mut ScheduleBuilder,
        undo: Option<u32>,
        mut f: impl FnMut(&mut Parser<'_>, &mut ScheduleBuilder) -> Result<T, GoalError>,
    ) -> Result<T, GoalError> {
        self.compact();
        let mut ahead = self.chunk;
        loop {
            self.fill(ahead)?;
            let mut p = Parser::window(&self.buf, self.file, self.line_base, self.at_text_start);
            p.pos = self.start;
            p.more = !self.eof;
            p.file_len = self.file_len;
            p.num_ranks = builder.num_ranks();
            p.dep_pairs = std::mem::take(&mut self.dep_pairs);
            p.cycles = std::mem::take(&mut self.cycles);
            p.canonical = std::mem::take(&mut self.canonical);
            let result = f(&mut p, builder);
            let (pos, hit_end) = (p.pos, p.hit_end.get());
            self.dep_pairs = p.dep_pairs;
            self.cycles = p.cycles;
            self.canonical = p.canonical;
            if hit_end && !self.eof {
                if let Some(rank) = undo {
                    builder.clear_rank(rank);
                }
                ahead = (self.buf.len() - self.start)
                    .saturating_mul(2)
                    .max(self.chunk);
                continue;
            }
            if result.is_ok() {
                self.start = pos;
            }
            return result;
        }
    }

    pub(super) fn run(mut self) -> Result<Schedule, GoalError> {
        let p = self.header()?;
        let mut builder = ScheduleBuilder::new(p);
        self.blocks(&mut builder, 0..p)?;
        self.end(&mut builder)?;
        builder
            .build()
            .map_err(|e| self.build_error(e, self.buf.len()))
    }

    /// `num_ranks P` after what may precede it (a byte order mark, blank lines, comments).
    pub(super) fn header(&mut self) -> Result<u32, GoalError> {
        let mut none = ScheduleBuilder::new(0);
        self.step(&mut none, None, |p, _| {
            p.pos = p.bom;
            p.skip_blank()?;
            p.header()
        })
    }

    /// The rank blocks `ranks`, in order, each sealed into `builder` as soon as it is read.
    pub(super) fn blocks(
        &mut self,
        builder: &mut ScheduleBuilder,
        ranks: std::ops::Range<u32>,
    ) -> Result<(), GoalError> {
        for rank in ranks {
            self.step(builder, Some(rank), |p, b| {
                p.skip_blank()?;
                let open = p.rank_header(rank)?;
                p.block(rank, open, b)
            })?;
            // The block is complete: into the compact columns with it.
            builder
                .seal(rank)
                .map_err(|e| self.build_error(e, self.start))?;
        }
        Ok(())
    }

    /// Nothing but blank lines and comments up to the end of the text.
    pub(super) fn end(&mut self, builder: &mut ScheduleBuilder) -> Result<(), GoalError> {
        self.step(builder, None, |p, _| p.end())
    }

    /// Lines of the whole text, once [`end`](Self::end) has read it to its end.
    pub(super) fn lines(&self) -> u64 {
        self.line_base + count_newlines(&self.buf)
    }

    /// A structural error the builder found, reported at offset `pos` of the window.
    fn build_error(&self, e: crate::schedule::BuildError, pos: usize) -> GoalError {
        let kind = match e {
            crate::schedule::BuildError::TooLarge { .. } => GoalErrorKind::TooLarge,
            crate::schedule::BuildError::Cycle { .. } => GoalErrorKind::Cycle,
            _ => GoalErrorKind::Syntax,
        };
        let p = Parser::window(&self.buf, self.file, self.line_base, self.at_text_start);
        p.error(
            pos,
            kind,
            e.to_string(),
            "a schedule the engine can hold".to_string(),
        )
    }
}

/// What `num_ranks P` asks of the rank blocks, for error messages.
fn blocks_note(p: u32) -> String {
    if p == 1 {
        "num_ranks 1 needs exactly one block, rank 0".to_string()
    } else {
        format!("num_ranks {p} needs blocks 0 to {}, in order", p - 1)
    }
}

#[inline]
fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic()
}

#[inline]
fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// One dependency statement of the rank being parsed, kept for the cycle check.
struct DepLine<'a> {
    a: u32,
    b: u32,
    kind: DepKind,
    /// Byte offset of the statement (its first label).
    pos: usize,
    a_label: &'a [u8],
    b_label: &'a [u8],
}

struct Parser<'a> {
    /// The window of the text (see [`Stream`]).
    src: &'a [u8],
    file: &'a str,
    pos: usize,
    /// Whether the text goes on after the window.
    more: bool,
    /// Set when the parser looked at the end of the window while `more`.
    hit_end: Cell<bool>,
    /// Lines of the text before the window.
    line_base: u64,
    /// Length of a byte order mark at the start of the window (skipped, not a column).
    bom: usize,
    /// Length of the whole text.
    file_len: u64,
    num_ranks: u32,
    /// Labels of the current rank but canonical ones: label -> (local index, byte offset of
    /// the definition).
    labels: FxHashMap<&'a [u8], (u32, usize)>,
    /// The current rank's canonical labels (`o<k>` on its operation k, as `commodel
    /// schedule -o` writes them, [`canonical_index`]): `canonical[k]` is the byte offset of
    /// o<k>'s definition, [`NOT_CANONICAL`] where operation k has another label or none.
    /// They are found without hashing; two labels of one rank are the same text exactly
    /// when both are canonical with the same k, or neither is and the map has it.
    canonical: Vec<usize>,
    deps: Vec<DepLine<'a>>,
    /// `(a, b)` of `deps`, and the cycle search's scratch space, reused across ranks.
    dep_pairs: Vec<(u32, u32)>,
    cycles: CycleCheck,
}

/// The optional fields of a statement, in the only order GOAL allows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Tag,
    Cpu,
    Nic,
}

impl Field {
    fn keyword(self) -> &'static str {
        match self {
            Field::Tag => "tag",
            Field::Cpu => "cpu",
            Field::Nic => "nic",
        }
    }
}

impl<'a> Parser<'a> {
    /// A parser over a window that ends where the text ends.
    fn window(src: &'a [u8], file: &'a str, line_base: u64, at_text_start: bool) -> Self {
        let bom = if at_text_start && src.starts_with(b"\xEF\xBB\xBF") {
            3
        } else {
            0
        };
        Parser {
            src,
            file,
            pos: 0,
            more: false,
            hit_end: Cell::new(false),
            line_base,
            bom,
            file_len: src.len() as u64,
            num_ranks: 0,
            labels: FxHashMap::default(),
            canonical: Vec::new(),
            deps: Vec::new(),
            dep_pairs: Vec::new(),
            cycles: CycleCheck::default(),
        }
    }

    // ---------------------------------------------------------------- positions and errors

    /// Note a look at offset `i`: past the window while the text goes on, what the parser
    /// saw is not what the text holds.
    #[inline]
    fn reach(&self, i: usize) {
        if self.more && i >= self.src.len() {
            self.hit_end.set(true);
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.byte_at(self.pos)
    }

    #[inline]
    fn byte_at(&self, i: usize) -> Option<u8> {
        let c = self.src.get(i).copied();
        if c.is_none() {
            self.reach(i);
        }
        c
    }

    /// The window after the cursor. Callers look at its first few bytes (a keyword,
    /// `-1`), so being within 16 bytes of the end of the window counts as reaching it.
    #[inline]
    fn rest(&self) -> &'a [u8] {
        self.reach(self.pos.saturating_add(16));
        self.src.get(self.pos..).unwrap_or(&[])
    }

    #[inline]
    fn slice(&self, from: usize, to: usize) -> &'a [u8] {
        if to > self.src.len() {
            self.reach(to);
        }
        self.src.get(from..to.min(self.src.len())).unwrap_or(&[])
    }

    /// 1-based (line, column) of a byte offset; columns count characters.
    fn line_col(&self, pos: usize) -> (u64, u64) {
        let pos = pos.min(self.src.len());
        let before = self.slice(0, pos);
        let line = self.line_base + 1 + before.iter().filter(|&&c| c == b'\n').count() as u64;
        let line_start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1)
            .max(self.bom.min(pos));
        let column = 1 + self
            .slice(line_start, pos)
            .iter()
            .filter(|&&c| (c & 0xC0) != 0x80)
            .count() as u64;
        (line, column)
    }

    fn line_of(&self, pos: usize) -> u64 {
        self.line_col(pos).0
    }

    fn error(&self, pos: usize, kind: GoalErrorKind, found: String, expected: String) -> GoalError {
        let (line, column) = self.line_col(pos);
        GoalError::Parse {
            kind,
            file: self.file.to_string(),
            line,
            column,
            found,
            expected,
        }
    }

    /// Describe the token at `pos` for an error message; the flag says whether it is a word.
    fn describe(&self, pos: usize) -> (String, bool) {
        let Some(c) = self.byte_at(pos) else {
            return ("end of file".to_string(), false);
        };
        if c == b'\n' || (c == b'\r' && self.byte_at(pos + 1) == Some(b'\n')) {
            return ("end of line".to_string(), false);
        }
        let run = |from: usize, ok: fn(u8) -> bool| {
            let mut end = from;
            while self.byte_at(end).is_some_and(ok) {
                end += 1;
            }
            end
        };
        if is_ident_start(c) || c.is_ascii_digit() {
            let end = run(pos, is_ident_char);
            let word = String::from_utf8_lossy(self.slice(pos, end)).into_owned();
            return (format!("\"{word}\""), is_ident_start(c));
        }
        if c == b'-' {
            let end = run(pos + 1, |c| c.is_ascii_digit());
            return (
                format!("\"{}\"", String::from_utf8_lossy(self.slice(pos, end))),
                false,
            );
        }
        let tail = self.slice(pos, pos + 4);
        let ch = match std::str::from_utf8(tail) {
            Ok(s) => s.chars().next(),
            Err(e) => std::str::from_utf8(tail.get(..e.valid_up_to()).unwrap_or(&[]))
                .ok()
                .and_then(|s| s.chars().next()),
        };
        match ch {
            Some(ch) => (format!("\"{}\"", ch.escape_debug()), false),
            None => (format!("byte 0x{c:02X}"), false),
        }
    }

    /// An error for an unexpected token at `pos`: an unknown word is an `UnknownKeyword`.
    fn unexpected(&self, pos: usize, expected: impl Into<String>) -> GoalError {
        let (found, is_word) = self.describe(pos);
        let word = self.word_at(pos);
        if is_word && !KEYWORDS.contains(&word) {
            self.error(
                pos,
                GoalErrorKind::UnknownKeyword,
                format!("unknown keyword {found}"),
                expected.into(),
            )
        } else {
            self.error(pos, GoalErrorKind::Syntax, found, expected.into())
        }
    }

    fn word_at(&self, pos: usize) -> &'a [u8] {
        let mut end = pos;
        if self.byte_at(pos).is_some_and(is_ident_start) {
            while self.byte_at(end).is_some_and(is_ident_char) {
                end += 1;
            }
        }
        self.slice(pos, end)
    }

    // ---------------------------------------------------------------- lexical helpers

    /// Skip spaces and tabs.
    #[inline]
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Skip whitespace, line ends and comments: what may separate statements.
    fn skip_blank(&mut self) -> Result<(), GoalError> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n') => self.pos += 1,
                Some(b'\r') if self.byte_at(self.pos + 1) == Some(b'\n') => self.pos += 2,
                Some(b'/') => match self.byte_at(self.pos + 1) {
                    Some(b'/') => {
                        while !matches!(self.peek(), None | Some(b'\n')) {
                            self.pos += 1;
                        }
                    }
                    Some(b'*') => {
                        let open = self.pos;
                        self.pos += 2;
                        loop {
                            match self.peek() {
                                None => {
                                    return Err(self.error(
                                        self.pos,
                                        GoalErrorKind::Syntax,
                                        "end of file".to_string(),
                                        format!(
                                            "\"*/\" to close the comment opened on line {}",
                                            self.line_of(open)
                                        ),
                                    ))
                                }
                                Some(b'*') if self.byte_at(self.pos + 1) == Some(b'/') => {
                                    self.pos += 2;
                                    break;
                                }
                                Some(_) => self.pos += 1,
                            }
                        }
                    }
                    _ => return Ok(()),
                },
                _ => return Ok(()),
            }
        }
    }

    /// Read an identifier-like word (`[a-zA-Z][a-zA-Z0-9_]*`) at the cursor; empty if none.
    #[inline]
    fn word(&mut self) -> &'a [u8] {
        let w = self.word_at(self.pos);
        self.pos += w.len();
        w
    }

    /// If the input continues with the keyword `kw`, not followed by a letter or `_`, consume it.
    /// (Digits may follow: `txt2bin` reads `to1` as `to 1`.)
    #[inline]
    fn keyword(&mut self, kw: &[u8]) -> bool {
        let rest = self.rest();
        if rest.starts_with(kw)
            && !rest
                .get(kw.len())
                .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_')
        {
            self.pos += kw.len();
            true
        } else {
            false
        }
    }

    /// Whether the cursor is at the end of a statement: a line end, the end of the file, or a
    /// comment (which then runs to the end of the line or of the comment).
    #[inline]
    fn at_statement_end(&self) -> bool {
        match self.peek() {
            None | Some(b'\n') => true,
            Some(b'\r') => self.byte_at(self.pos + 1) == Some(b'\n'),
            Some(b'/') => matches!(self.byte_at(self.pos + 1), Some(b'/' | b'*')),
            _ => false,
        }
    }

    /// Read an unsigned decimal number of at most `max`; `what` names the field in errors.
    fn number(&mut self, max: u64, what: &str, expected: &str) -> Result<u64, GoalError> {
        self.number_else(max, what, || expected.to_string())
    }

    /// [`Parser::number`], with what was expected written only for an error (its
    /// `expected` is formatted per operation otherwise).
    fn number_else(
        &mut self,
        max: u64,
        what: &str,
        expected: impl FnOnce() -> String,
    ) -> Result<u64, GoalError> {
        let start = self.pos;
        let mut value: Option<u64> = Some(0);
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            value = value
                .and_then(|v| v.checked_mul(10))
                .and_then(|v| v.checked_add(u64::from(c - b'0')));
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.unexpected(start, expected()));
        }
        match value {
            Some(v) if v <= max => Ok(v),
            _ => {
                let digits = String::from_utf8_lossy(self.slice(start, self.pos)).into_owned();
                Err(self.error(
                    start,
                    GoalErrorKind::Overflow,
                    format!("{what} {digits}"),
                    format!("a {what} of at most {max}"),
                ))
            }
        }
    }

    /// `-1` (any: `None`) or a number of at most `max`.
    fn number_or_any(
        &mut self,
        max: u64,
        what: &str,
        expected: impl FnOnce() -> String,
    ) -> Result<Option<u64>, GoalError> {
        if self.rest().starts_with(b"-1")
            && !self
                .byte_at(self.pos + 2)
                .is_some_and(|c| c.is_ascii_digit())
        {
            self.pos += 2;
            return Ok(None);
        }
        self.number_else(max, what, expected).map(Some)
    }

    /// A message size: a number, optional spaces, and a unit (`b`, `B`, `KiB`, `kB`, ...).
    fn size(&mut self) -> Result<u64, GoalError> {
        const UNITS: &str = "a unit: b (bytes), KiB, MiB, GiB, TiB, kB, KB, MB, GB or TB";
        let start = self.pos;
        let n = self.number(u64::MAX, "size", "a size in bytes (a number followed by b)")?;
        self.skip_ws();
        let factor: u64 = match self.peek() {
            Some(b'b' | b'B') => {
                self.pos += 1;
                1
            }
            Some(p @ (b'k' | b'K' | b'M' | b'G' | b'T')) => {
                let binary = p != b'k' && self.byte_at(self.pos + 1) == Some(b'i');
                let unit_at = self.pos + 1 + usize::from(binary);
                if self.byte_at(unit_at) != Some(b'B') {
                    return Err(self.unexpected(self.pos, UNITS));
                }
                self.pos = unit_at + 1;
                let exp = match p {
                    b'k' | b'K' => 1,
                    b'M' => 2,
                    b'G' => 3,
                    _ => 4,
                };
                if binary {
                    1u64 << (10 * exp)
                } else {
                    1000u64.pow(exp)
                }
            }
            _ => return Err(self.unexpected(self.pos, UNITS)),
        };
        match n.checked_mul(factor) {
            Some(v) => Ok(v),
            None => {
                let text = String::from_utf8_lossy(self.slice(start, self.pos)).into_owned();
                Err(self.error(
                    start,
                    GoalErrorKind::Overflow,
                    format!("size {text}"),
                    format!("a size of at most {} bytes", u64::MAX),
                ))
            }
        }
    }

    // ---------------------------------------------------------------- the grammar

    /// After the last rank block: nothing but blanks and comments up to the end of the text.
    fn end(&mut self) -> Result<(), GoalError> {
        let p = self.num_ranks;
        self.skip_blank()?;
        if self.peek().is_some() {
            let at = self.pos;
            if self.word_at(at) == b"rank" {
                self.pos += 4;
                self.skip_ws();
                let n = String::from_utf8_lossy(self.slice(self.pos, self.pos + self.digits_len()))
                    .into_owned();
                return Err(self.error(
                    at,
                    GoalErrorKind::RankBlock,
                    format!("rank block {n}"),
                    format!("end of file ({})", blocks_note(p)),
                ));
            }
            return Err(self.unexpected(at, "end of file"));
        }
        Ok(())
    }

    fn digits_len(&self) -> usize {
        self.rest()
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count()
    }

    /// `num_ranks P`, the first item of a file.
    fn header(&mut self) -> Result<u32, GoalError> {
        let at = self.pos;
        if self.word_at(at) != b"num_ranks" {
            let (found, _) = self.describe(at);
            return Err(self.error(
                at,
                GoalErrorKind::NumRanks,
                found,
                "\"num_ranks P\" (the first line of a GOAL file)".to_string(),
            ));
        }
        self.pos += b"num_ranks".len();
        self.skip_ws();
        let num_at = self.pos;
        let p = self.number(u64::from(u32::MAX - 1), "num_ranks", "the number of ranks")?;
        if p == 0 {
            return Err(self.error(
                num_at,
                GoalErrorKind::NumRanks,
                "num_ranks 0".to_string(),
                "at least 1 rank".to_string(),
            ));
        }
        // Every rank needs its own block, at least "rank N{}": a larger count cannot be
        // satisfied by this file, so say so now rather than allocate for it.
        let most = self.file_len / 8 + 1;
        if p > most {
            return Err(self.error(
                num_at,
                GoalErrorKind::NumRanks,
                format!("num_ranks {p}"),
                format!("at most {most} for a file of {} bytes (every rank needs a \"rank N {{ }}\" block)", self.file_len),
            ));
        }
        Ok(p as u32)
    }

    /// `rank N {`; returns the byte offset of `rank`.
    fn rank_header(&mut self, rank: u32) -> Result<usize, GoalError> {
        let p = self.num_ranks;
        let at = self.pos;
        if self.peek().is_none() {
            let blocks = if rank == 1 {
                "1 rank block".to_string()
            } else {
                format!("{rank} rank blocks")
            };
            return Err(self.error(
                at,
                GoalErrorKind::RankBlock,
                format!("end of file after {blocks}"),
                format!("rank block {rank} ({})", blocks_note(p)),
            ));
        }
        if self.word_at(at) != b"rank" {
            return Err(self.unexpected(at, format!("\"rank {rank} {{\"")));
        }
        self.pos += 4;
        self.skip_ws();
        let n_at = self.pos;
        let n = self.number(u64::MAX, "rank", "a rank number")?;
        if n != u64::from(rank) {
            return Err(self.error(
                n_at,
                GoalErrorKind::RankBlock,
                format!("rank block {n}"),
                format!("rank block {rank} ({})", blocks_note(p)),
            ));
        }
        self.skip_ws();
        if self.peek() != Some(b'{') {
            return Err(self.unexpected(self.pos, "\"{\""));
        }
        self.pos += 1;
        Ok(at)
    }

    /// The statements of one rank up to and including the closing `}`.
    fn block(
        &mut self,
        rank: u32,
        open: usize,
        builder: &mut ScheduleBuilder,
    ) -> Result<(), GoalError> {
        self.labels.clear();
        self.canonical.clear();
        self.deps.clear();
        let mut count: u32 = 0;
        loop {
            self.skip_blank()?;
            let at = self.pos;
            let Some(c) = self.peek() else {
                return Err(self.error(
                    at,
                    GoalErrorKind::Syntax,
                    "end of file".to_string(),
                    format!(
                        "\"}}\" to close rank block {rank} (opened on line {})",
                        self.line_of(open)
                    ),
                ));
            };
            if c == b'}' {
                self.pos += 1;
                return self.check_cycles(rank, count);
            }
            if !is_ident_start(c) {
                return Err(self.unexpected(
                    at,
                    format!("a statement or \"}}\" closing rank block {rank}"),
                ));
            }
            let word = self.word();
            let kind = match word {
                b"send" => Some(OpKind::Send),
                b"recv" => Some(OpKind::Recv),
                b"calc" => Some(OpKind::Calc),
                b"rank" | b"num_ranks" => {
                    return Err(self.error(
                        at,
                        GoalErrorKind::Syntax,
                        format!(
                            "\"{}\" inside rank block {rank}",
                            String::from_utf8_lossy(word)
                        ),
                        format!("a statement or \"}}\" closing rank block {rank}"),
                    ))
                }
                _ => None,
            };
            if let Some(kind) = kind {
                self.operation(rank, kind, None, builder)?;
                count = count.saturating_add(1);
                continue;
            }
            // A label: `label: op` or `label requires|irequires label`.
            self.skip_ws();
            if self.peek() == Some(b':') {
                self.pos += 1;
                let duplicate = self.define(word, count, at);
                if let Some(first) = duplicate {
                    return Err(self.error(
                        at,
                        GoalErrorKind::DuplicateLabel,
                        format!(
                            "duplicate label \"{}\" in rank {rank} (first defined on line {})",
                            String::from_utf8_lossy(word),
                            self.line_of(first)
                        ),
                        format!("a label not yet used in rank {rank}"),
                    ));
                }
                self.skip_ws();
                let kw_at = self.pos;
                let kind = if self.keyword(b"send") {
                    OpKind::Send
                } else if self.keyword(b"recv") {
                    OpKind::Recv
                } else if self.keyword(b"calc") {
                    OpKind::Calc
                } else {
                    return Err(self.unexpected(kw_at, "send, recv or calc"));
                };
                self.operation(rank, kind, Some(word), builder)?;
                count = count.saturating_add(1);
            } else if self.rest().starts_with(b"irequires") {
                self.pos += b"irequires".len();
                self.dependency(rank, at, word, DepKind::IRequires, builder)?;
            } else if self.rest().starts_with(b"requires") {
                self.pos += b"requires".len();
                self.dependency(rank, at, word, DepKind::Requires, builder)?;
            } else if self.peek().is_some_and(is_ident_start) {
                return Err(
                    self.unexpected(self.pos, "\":\" after a label, or requires or irequires")
                );
            } else {
                return Err(self.unexpected(
                    at,
                    "send, recv, calc, \"label: ...\" or \"label requires label\"",
                ));
            }
        }
    }

    /// The rest of a send, recv or calc statement after its keyword.
    fn operation(
        &mut self,
        rank: u32,
        kind: OpKind,
        label: Option<&'a [u8]>,
        builder: &mut ScheduleBuilder,
    ) -> Result<(), GoalError> {
        let p = self.num_ranks;
        self.skip_ws();
        let mut op = match kind {
            OpKind::Calc => Op::calc(self.number(u64::MAX, "calc duration", "a duration in ns")?),
            OpKind::Send | OpKind::Recv => {
                let size = self.size()?;
                self.skip_ws();
                let (word, noun) = if kind == OpKind::Send {
                    ("to", "destination")
                } else {
                    ("from", "source")
                };
                if !self.keyword(word.as_bytes()) {
                    return Err(self.unexpected(self.pos, word));
                }
                self.skip_ws();
                let peer_at = self.pos;
                let what = if kind == OpKind::Send {
                    "send to"
                } else {
                    "recv from"
                };
                let expected = || {
                    if kind == OpKind::Send {
                        format!("a destination rank from 0 to {} (num_ranks {p})", p - 1)
                    } else {
                        format!(
                            "a source rank from 0 to {} (num_ranks {p}) or -1 (any source)",
                            p - 1
                        )
                    }
                };
                let peer = match self.number_or_any(u64::from(u32::MAX), noun, expected)? {
                    None if kind == OpKind::Recv => ANY,
                    None => {
                        return Err(self.error(
                            peer_at,
                            GoalErrorKind::RankOutOfRange,
                            "send to -1".to_string(),
                            expected(),
                        ))
                    }
                    Some(n) if n >= u64::from(p) => {
                        return Err(self.error(
                            peer_at,
                            GoalErrorKind::RankOutOfRange,
                            format!("{what} rank {n} out of range"),
                            expected(),
                        ))
                    }
                    Some(n) => n as u32,
                };
                if kind == OpKind::Send {
                    Op::send(peer, size, 0)
                } else {
                    Op::recv(peer, size, 0)
                }
            }
        };
        // Optional fields, in order. `txt2bin` takes no tag and no nic on calc; nic on calc
        // is our extension (the writer needs it to keep a calc's nic).
        let fields: &[Field] = if kind == OpKind::Calc {
            &[Field::Cpu, Field::Nic]
        } else {
            &[Field::Tag, Field::Cpu, Field::Nic]
        };
        let mut next = 0;
        loop {
            self.skip_ws();
            if self.at_statement_end() {
                break;
            }
            let at = self.pos;
            let Some(k) = fields
                .iter()
                .skip(next)
                .position(|f| self.rest().starts_with(f.keyword().as_bytes()))
            else {
                let names: Vec<&str> = fields.iter().skip(next).map(|f| f.keyword()).collect();
                let list = if names.is_empty() {
                    String::new()
                } else {
                    format!("{} or ", names.join(", "))
                };
                return Err(self.unexpected(at, format!("{list}end of line")));
            };
            let field = fields[next + k];
            if !self.keyword(field.keyword().as_bytes()) {
                let names: Vec<&str> = fields.iter().skip(next).map(|f| f.keyword()).collect();
                return Err(self.unexpected(at, format!("{} or end of line", names.join(", "))));
            }
            next += k + 1;
            self.skip_ws();
            match field {
                Field::Tag => {
                    op.tag = self
                        .number_or_any(u64::from(u32::MAX), "tag", || {
                            "a tag or -1 (any tag)".to_string()
                        })?
                        .map_or(ANY, |t| t as u32)
                }
                Field::Cpu => op.cpu = self.number(255, "cpu", "a cpu number")? as u8,
                Field::Nic => op.nic = self.number(255, "nic", "a nic number")? as u8,
            }
        }
        let r = builder.push(rank, op);
        if let Some(label) = label {
            builder.label(r, std::str::from_utf8(label).unwrap_or("?"));
        }
        Ok(())
    }

    /// The rest of `a requires b` / `a irequires b` after the keyword.
    fn dependency(
        &mut self,
        rank: u32,
        at: usize,
        a_label: &'a [u8],
        kind: DepKind,
        builder: &mut ScheduleBuilder,
    ) -> Result<(), GoalError> {
        let a = self.lookup(rank, at, a_label)?;
        self.skip_ws();
        let b_at = self.pos;
        let b_label = self.word();
        if b_label.is_empty() {
            return Err(self.unexpected(b_at, "a label"));
        }
        let b = self.lookup(rank, b_at, b_label)?;
        self.skip_ws();
        if !self.at_statement_end() {
            let (found, _) = self.describe(self.pos);
            return Err(self.error(
                self.pos,
                GoalErrorKind::Syntax,
                found,
                "end of line".to_string(),
            ));
        }
        builder.dep(OpRef { rank, index: a }, OpRef { rank, index: b }, kind);
        self.deps.push(DepLine {
            a,
            b,
            kind,
            pos: at,
            a_label,
            b_label,
        });
        Ok(())
    }

    /// Record `label` as the label of the rank's operation `index`, defined at offset `at`;
    /// the offset of its earlier definition if the rank has one.
    fn define(&mut self, label: &'a [u8], index: u32, at: usize) -> Option<usize> {
        let k = canonical_index(label);
        if k == Some(index) {
            // Operation `index` is new: no canonical label names it yet.
            let first = self.labels.get(label).map(|&(_, pos)| pos);
            if first.is_none() {
                let i = index as usize;
                if self.canonical.len() <= i {
                    self.canonical.resize(i + 1, NOT_CANONICAL);
                }
                self.canonical[i] = at;
            }
            return first;
        }
        if let Some(pos) = k.and_then(|k| self.canonical_at(k)) {
            return Some(pos);
        }
        match self.labels.entry(label) {
            Entry::Occupied(e) => Some(e.get().1),
            Entry::Vacant(v) => {
                v.insert((index, at));
                None
            }
        }
    }

    /// Offset of the definition of the rank's canonical label o<k>, if it has one.
    #[inline]
    fn canonical_at(&self, k: u32) -> Option<usize> {
        let pos = *self.canonical.get(k as usize)?;
        (pos != NOT_CANONICAL).then_some(pos)
    }

    fn lookup(&self, rank: u32, at: usize, label: &[u8]) -> Result<u32, GoalError> {
        if let Some(k) = canonical_index(label) {
            if self.canonical_at(k).is_some() {
                return Ok(k);
            }
        }
        match self.labels.get(label) {
            Some(&(index, _)) => Ok(index),
            None => Err(self.error(
                at,
                GoalErrorKind::UndefinedLabel,
                format!(
                    "undefined label \"{}\" in rank {rank}",
                    String::from_utf8_lossy(label)
                ),
                format!("a label defined earlier in rank {rank}"),
            )),
        }
    }

    /// Report a cycle among the rank's dependencies at the dependency statement of the
    /// cycle that comes last in the file, naming its labels.
    fn check_cycles(&mut self, rank: u32, count: u32) -> Result<(), GoalError> {
        self.dep_pairs.clear();
        self.dep_pairs.extend(self.deps.iter().map(|d| (d.a, d.b)));
        let Some(mut cycle) = self.cycles.find(count as usize, &self.dep_pairs) else {
            return Ok(());
        };
        let pos_of = |k: &usize| self.deps.get(*k).map_or(0, |d| d.pos);
        if let Some(last) = (0..cycle.len()).max_by_key(|&i| cycle.get(i).map_or(0, pos_of)) {
            cycle.rotate_left(last);
        }
        let text: Vec<String> = cycle
            .iter()
            .filter_map(|&k| self.deps.get(k))
            .map(|d| {
                let word = if d.kind == DepKind::Requires {
                    "requires"
                } else {
                    "irequires"
                };
                format!(
                    "{} {word} {}",
                    String::from_utf8_lossy(d.a_label),
                    String::from_utf8_lossy(d.b_label)
                )
            })
            .collect();
        Err(self.error(
            cycle.first().map_or(self.pos, pos_of),
            GoalErrorKind::Cycle,
            format!("dependency cycle in rank {rank}: {}", text.join(", ")),
            "dependencies without a cycle".to_string(),
        ))
    }
}

/// The newlines in `bytes`, counted in blocks of 255 bytes whose sums fit a byte
/// (a form the compiler turns into vector instructions; a plain filtered count ran a
/// few instructions per byte).
fn count_newlines(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|block| u64::from(block.iter().map(|&c| u8::from(c == b'\n')).sum::<u8>()))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::count_newlines;

    #[test]
    fn newlines_are_counted_across_blocks() {
        // All newlines: every block's byte sum is at its largest (255).
        assert_eq!(count_newlines(&[b'\n'; 600]), 600);
        let text: Vec<u8> = (0..1000)
            .map(|i| if i % 3 == 2 { b'\n' } else { b'x' })
            .collect();
        assert_eq!(count_newlines(&text), 333);
        assert_eq!(count_newlines(b""), 0);
    }
}
