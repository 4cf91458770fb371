//! One collective after another on the same ranks, as an MPI program that
//! calls them in turn (Open MPI's allgather linear: a gather, then a bcast).

use super::{CollectiveError, Ctx};
use crate::schedule::{Op, OpKind, OpRef, Schedule, ScheduleBuilder};

/// `first` then `second` (same number of ranks): on each rank, every
/// operation of `second` that requires nothing of `second` requires the
/// operations of `first` that nothing of `first` requires (its last ones),
/// since the second call starts when the first has returned. `second`'s tags
/// are shifted past `first`'s largest, so the two never match each other.
///
/// The parts are built whole (with no stream), so the result is not recorded
/// rank by rank: when `ctx` holds a stream of GOAL text (or a probe for one),
/// the stream is told so (as a generator that goes back to an earlier rank
/// would) and nothing is built; a stream that seals gets the whole schedule.
pub(crate) fn then(
    ctx: &Ctx,
    first: &Schedule,
    second: &Schedule,
) -> Result<Schedule, CollectiveError> {
    debug_assert_eq!(first.num_ranks(), second.num_ranks());
    if let Some(stream) = ctx.stream.filter(|s| !s.borrow().seals()) {
        // Not recorded rank by rank: have `write_goal` build it whole first.
        let ranks = first.num_ranks();
        stream.borrow_mut().backstep.get_or_insert((ranks, 0));
        return Ok(ScheduleBuilder::new(ranks).build()?);
    }
    let offset = (0..first.num_ops() as u32)
        .map(|id| first.tag(id) + 1)
        .max()
        .unwrap_or(0);
    let mut b = ScheduleBuilder::new(first.num_ranks());
    let first_refs = copy(&mut b, first, 0);
    let second_refs = copy(&mut b, second, offset);
    let has_prereq = prerequisite_flags(second);
    for r in 0..first.num_ranks() {
        let last: Vec<OpRef> = first
            .ops_of(r)
            .filter(|&id| first.requirers(id).is_empty() && first.irequirers(id).is_empty())
            .map(|id| first_refs[id as usize])
            .collect();
        for id in second.ops_of(r).filter(|&id| !has_prereq[id as usize]) {
            for &l in &last {
                b.requires(second_refs[id as usize], l);
            }
        }
    }
    Ok(b.build()?)
}

/// Which operations of `s` require or irequire something.
fn prerequisite_flags(s: &Schedule) -> Vec<bool> {
    let mut flags = vec![false; s.num_ops()];
    for (a, _, _) in s.edges() {
        flags[a as usize] = true;
    }
    flags
}

/// Append every operation and edge of `s` to `b`, tags shifted by `offset`;
/// returns the new reference of each operation id.
fn copy(b: &mut ScheduleBuilder, s: &Schedule, offset: u32) -> Vec<OpRef> {
    let mut refs = Vec::with_capacity(s.num_ops());
    for r in 0..s.num_ranks() {
        for id in s.ops_of(r) {
            let op: Op = s.op(id);
            let tag = if s.kind(id) == OpKind::Calc {
                op.tag
            } else {
                op.tag + offset
            };
            refs.push(b.push(r, Op { tag, ..op }));
        }
    }
    for (a, z, kind) in s.edges() {
        b.dep(refs[a as usize], refs[z as usize], kind);
    }
    refs
}
