//! The operations of one rank in local order, with their dependencies as local
//! indices: what a rank needs to execute a schedule for real (`commodel measure
//! pattern` runs them with MPI).

use crate::schedule::{OpKind, Schedule, ANY};

/// One operation of a rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankOp<'a> {
    pub kind: OpKind,
    /// Peer rank, None for any source (send: destination; calc: unused).
    pub peer: Option<u32>,
    /// Tag, None for any tag.
    pub tag: Option<u32>,
    /// Bytes (calc: nanoseconds).
    pub size: u64,
    pub label: Option<&'a str>,
    /// Local indices of the operations this one starts after the end of.
    pub requires: Vec<u32>,
    /// Local indices of the operations this one starts after the start of.
    pub irequires: Vec<u32>,
}

/// A rank the schedule does not have.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("rank {rank} out of range: the schedule has {ranks} ranks")]
pub struct RankOutOfRange {
    pub rank: u32,
    pub ranks: u32,
}

/// The operations of `rank` in local order.
pub fn rank_ops(s: &Schedule, rank: u32) -> Result<Vec<RankOp<'_>>, RankOutOfRange> {
    if rank >= s.num_ranks() {
        return Err(RankOutOfRange {
            rank,
            ranks: s.num_ranks(),
        });
    }
    let ids = s.ops_of(rank);
    let first = ids.start;
    let any = |v: u32| (v != ANY).then_some(v);
    let mut ops: Vec<RankOp<'_>> = ids
        .clone()
        .map(|id| RankOp {
            kind: s.kind(id),
            peer: any(s.peer(id)),
            tag: any(s.tag(id)),
            size: s.size(id),
            label: s.label(id),
            requires: Vec::new(),
            irequires: Vec::new(),
        })
        .collect();
    for b in ids {
        for a in s.requirers(b) {
            ops[(a - first) as usize].requires.push(b - first);
        }
        for a in s.irequirers(b) {
            ops[(a - first) as usize].irequires.push(b - first);
        }
    }
    Ok(ops)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goal;

    #[test]
    fn local_indices_and_any() {
        let s = goal::parse(
            "num_ranks 2\nrank 0 {\nc: calc 5\ns: send 8b to 1 tag 3\ns requires c\n}\n\
             rank 1 {\nr: recv 8b from -1 tag -1\nt: send 4b to 0\nt irequires r\n}\n",
            "x.goal",
        )
        .unwrap();
        let r1 = rank_ops(&s, 1).unwrap();
        assert_eq!(r1.len(), 2);
        assert_eq!(
            (r1[0].kind, r1[0].peer, r1[0].tag, r1[0].size, r1[0].label),
            (OpKind::Recv, None, None, 8, Some("r"))
        );
        assert_eq!(
            (r1[1].irequires.clone(), r1[1].requires.clone()),
            (vec![0], vec![])
        );
        let r0 = rank_ops(&s, 0).unwrap();
        assert_eq!(
            (r0[1].peer, r0[1].tag, r0[1].requires.clone()),
            (Some(1), Some(3), vec![0])
        );
        assert_eq!(
            rank_ops(&s, 2).unwrap_err().to_string(),
            "rank 2 out of range: the schedule has 2 ranks"
        );
    }
}
