//! Finding a dependency cycle among one rank's operations (Kahn's algorithm).

use rustc_hash::FxHashMap;

/// Scratch buffers, reused across ranks so that checking a rank allocates little.
#[derive(Default)]
pub(super) struct CycleCheck {
    indegree: Vec<u32>,
    edge_start: Vec<u32>,
    fill: Vec<u32>,
    edge_dependent: Vec<u32>,
    stack: Vec<u32>,
}

impl CycleCheck {
    /// `edges[k] = (a, b)` means operation `a` waits for operation `b` (both `< n`).
    /// Returns `None` if the edges form no cycle, else the indices into `edges` of one
    /// cycle, in walking order: `a` of each edge is `b` of the edge before it.
    pub(super) fn find(&mut self, n: usize, edges: &[(u32, u32)]) -> Option<Vec<usize>> {
        if edges.is_empty() {
            return None;
        }
        self.indegree.clear();
        self.indegree.resize(n, 0);
        self.edge_start.clear();
        self.edge_start.resize(n + 1, 0);
        for &(a, b) in edges {
            self.indegree[a as usize] += 1;
            self.edge_start[b as usize + 1] += 1;
        }
        for i in 0..n {
            self.edge_start[i + 1] += self.edge_start[i];
        }
        // Dependents of each prerequisite, in compressed rows.
        self.edge_dependent.clear();
        self.edge_dependent.resize(edges.len(), 0);
        self.fill.clear();
        self.fill.extend_from_slice(&self.edge_start);
        for &(a, b) in edges {
            let slot = &mut self.fill[b as usize];
            self.edge_dependent[*slot as usize] = a;
            *slot += 1;
        }
        self.stack.clear();
        self.stack
            .extend((0..n as u32).filter(|&i| self.indegree[i as usize] == 0));
        let mut done = 0usize;
        while let Some(b) = self.stack.pop() {
            done += 1;
            let rows =
                self.edge_start[b as usize] as usize..self.edge_start[b as usize + 1] as usize;
            for k in rows {
                let a = self.edge_dependent[k] as usize;
                self.indegree[a] -= 1;
                if self.indegree[a] == 0 {
                    self.stack.push(a as u32);
                }
            }
        }
        if done == n {
            return None;
        }
        // Every operation left over waits on another left-over one: walk prerequisites
        // until an operation repeats.
        let left = |i: u32| self.indegree[i as usize] > 0;
        let mut via: FxHashMap<u32, usize> = FxHashMap::default();
        for (k, &(a, b)) in edges.iter().enumerate() {
            if left(a) && left(b) {
                via.entry(a).or_insert(k);
            }
        }
        let start = edges
            .iter()
            .map(|&(a, _)| a)
            .find(|a| via.contains_key(a))?;
        let mut seen: FxHashMap<u32, usize> = FxHashMap::default();
        let mut path: Vec<usize> = Vec::new();
        let mut cur = start;
        while !seen.contains_key(&cur) {
            seen.insert(cur, path.len());
            let &k = via.get(&cur)?;
            path.push(k);
            cur = edges[k].1;
        }
        let from = seen.get(&cur).copied().unwrap_or(0);
        path.get(from..).map(<[usize]>::to_vec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cycles_and_only_cycles() {
        let mut c = CycleCheck::default();
        assert_eq!(c.find(3, &[]), None);
        assert_eq!(c.find(4, &[(1, 0), (2, 0), (3, 1), (3, 2)]), None);
        assert_eq!(c.find(1, &[(0, 0)]), Some(vec![0]));
        // 3 -> 2 -> 1 -> 3, with a tail 0 -> 3 and an acyclic edge 4 -> 0.
        let edges = [(4, 0), (0, 3), (3, 2), (2, 1), (1, 3)];
        let cycle = c.find(5, &edges).unwrap();
        assert_eq!(cycle, vec![2, 3, 4]);
        // The same scratch space serves the next rank.
        assert_eq!(c.find(2, &[(1, 0)]), None);
    }
}
