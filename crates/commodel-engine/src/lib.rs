//! # commodel-engine
//!
//! The prediction engine of commodel, in pure Rust (no Python in this crate).
//!
//! * [`schedule`] — communication schedules (GOAL's operations and dependencies).
//! * [`goal`] — the GOAL text format: parser with `file:line:column` errors, and writer.
//! * [`time`] — simulated time: integer picoseconds.
//! * [`params`] — typed model parameters, one struct per model; [`predict::run`]
//!   simulates a schedule under them.
//! * [`rank_ops`] — one rank's operations in local order, for running a schedule for real.
//!
//! Time is an integer number of picoseconds ([`time::Time`]), so every run of
//! the same schedule with the same parameters gives bit-for-bit the same
//! result. Model parameters keep the symbols of the literature (L, o, g, G, O,
//! S of LogGOPS; o_s(m), o_r(m), g(m) of PLogP; b(h), d(h) of PlogPT).

pub mod collectives;
pub mod contention;
pub mod countdown;
pub mod dependents;
pub mod engine;
pub mod goal;
pub mod jitter;
pub mod loggops;
pub mod matching;
pub mod nic;
pub mod op_id;
pub mod outcome;
pub mod params;
pub mod predict;
mod radix;
pub mod rank_ops;
pub mod schedule;
mod stdsort;
pub mod table;
pub mod time;
pub mod topology;

pub use outcome::{Deadlock, MessageRecord, Outcome, RtoEvent, SimError, StuckOp};
pub use params::ModelParams;
pub use schedule::{DepKind, Op, OpId, OpKind, OpRef, Schedule, ScheduleBuilder, ANY};
pub use time::Time;
