//! One collective after another on the same ranks, as an MPI program that
//! calls them in turn (Open MPI's allgather linear: a gather, then a bcast).

use super::{CollectiveError, Ctx};
use crate::schedule::{Op, OpKind, OpRef, Schedule, ScheduleBuilder};

/// `first` then `second` (same number of ranks): [`chain`] of the two.
pub(crate) fn then(
    ctx: &Ctx,
    first: &Schedule,
    second: &Schedule,
) -> Result<Schedule, CollectiveError> {
    chain(ctx, &[first, second])
}

/// The `parts` one after another (same number of ranks, at least one), as
/// an MPI program that calls them in turn: on each rank, every operation of
/// a part that requires nothing of that part requires the operations of the
/// part before that nothing of it requires (its last ones), since a call
/// starts when the one before has returned. Each part's tags are shifted
/// past the largest of the parts before it, so no two parts match each
/// other's messages.
///
/// The parts are built whole (with no stream), so the result is not recorded
/// rank by rank: when `ctx` holds a stream of GOAL text (or a probe for one),
/// the stream is told so (as a generator that goes back to an earlier rank
/// would) and nothing is built; a stream that seals gets the whole schedule.
pub(crate) fn chain(ctx: &Ctx, parts: &[&Schedule]) -> Result<Schedule, CollectiveError> {
    let ranks = parts[0].num_ranks();
    debug_assert!(parts.iter().all(|s| s.num_ranks() == ranks));
    if let Some(stream) = ctx.stream.filter(|s| !s.borrow().seals()) {
        // Not recorded rank by rank: have `write_goal` build it whole first.
        stream.borrow_mut().backstep.get_or_insert((ranks, 0));
        return Ok(ScheduleBuilder::new(ranks).build()?);
    }
    let mut b = ScheduleBuilder::new(ranks);
    let mut offset = 0;
    // per rank: the last operations of the part before
    let mut last: Vec<Vec<OpRef>> = vec![Vec::new(); ranks as usize];
    for part in parts {
        let refs = copy(&mut b, part, offset);
        let has_prereq = prerequisite_flags(part);
        for r in 0..ranks {
            let before = &mut last[r as usize];
            for id in part.ops_of(r).filter(|&id| !has_prereq[id as usize]) {
                for &l in before.iter() {
                    b.requires(refs[id as usize], l);
                }
            }
            let ends: Vec<OpRef> = part
                .ops_of(r)
                .filter(|&id| part.requirers(id).is_empty() && part.irequirers(id).is_empty())
                .map(|id| refs[id as usize])
                .collect();
            if !ends.is_empty() {
                *before = ends;
            }
        }
        offset += (0..part.num_ops() as u32)
            .map(|id| part.tag(id) + 1)
            .max()
            .unwrap_or(0);
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
