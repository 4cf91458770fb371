//! Barrier: the dissemination barrier (Open MPI's `barrier_intra_bruck`).

use super::patterns::{bruck_exchange, Toward};
use super::{CollectiveError, Ctx};
use crate::schedule::Schedule;

/// For distance = 1, 2, 4, ... < P: a zero-byte sendrecv, send to
/// r+distance, receive from r-distance. Tag = step. `size` is ignored.
pub(crate) fn dissemination(ctx: &Ctx) -> Result<Schedule, CollectiveError> {
    bruck_exchange(ctx, Toward::Higher, |_| 0)
}
