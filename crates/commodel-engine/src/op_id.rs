//! [`OpId`], the global index of an operation in a schedule: shared by the schedule
//! ([`crate::schedule`]) and its dependency rows ([`crate::dependents`]), which both
//! need it and neither owns.

/// Global operation index (rank-major: rank 0's operations first).
pub type OpId = u32;
