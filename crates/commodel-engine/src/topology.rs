//! Tree networks for the contention models (`plogpt`, `maxmin`).
//!
//! A [`Topology`] is a tree: compute nodes are its leaves, switches its inner
//! vertices. Every vertex but the root has one link to its parent. Links are
//! full duplex: each has a capacity per direction (bytes/s) and a latency
//! (ps). A link's *height* is PlogPT's (Nomura et al. III-A): 1 for a node's
//! own link, the height of its parent switch in general. Messages follow the
//! unique tree path: up from the source to the lowest common switch, then down.
//!
//! Resources: the up direction of link `v` (the link above vertex `v`) is
//! resource `2v`, its down direction `2v + 1`. Ranks on the same node talk
//! through a per-node loopback resource (one per node, after the link
//! resources) whose capacity is that of the node's own link; such messages
//! touch no link and have height 0.
//!
//! Shapes, built from a [`TopologySpec`] (the `topology` of the model parameters; rates in
//! bytes/s, times in integer picoseconds):
//!
//! | `kind` | keys |
//! |---|---|
//! | `crossbar` | `nodes`, `nic` (B/s), optional `nic_bidir`, `latency` (ps) |
//! | `binary-tree` | `b` (B/s per height h = 1..D, nodes = 2^D), optional `b_bidir`, `d`, `d_bidir` (ps per height), `latency` (ps per height) |
//! | `racks` | `racks` (list: nodes per rack), `nic`, optional `nic_bidir`, `nic_latency`, `backbone` (B/s of each rack's uplink), `backbone_latency`, `backbone_saturation` (flows; Zhu's optical threshold, `zhu` only) |
//! | `leaf-spine` (alias `fat-tree`) | `leaves`, `nodes_per_leaf`, `nic`, `oversubscription` (>= 1), `latency` (ps per link) |
//!
//! `binary-tree`: the paper assumes b(h+1) <= 2 b(h) ("the flow of the edge at
//! height h+1 never exceeds twice the flow at height h"); a larger b(h+1) is
//! clamped to 2 b(h), and [`Topology::clamped`] lists the heights clamped.
//! `leaf-spine`: the spines are folded into one root and each leaf's uplinks
//! into one link of capacity `nodes_per_leaf * nic / oversubscription`
//! (ideal ECMP spreading); a k-ary fat tree is described by its leaf level
//! the same way.

use crate::outcome::SimError;
use crate::params::TopologySpec;
use crate::time::Time;

/// A racks or leaf uplink: rate (bytes/s), latency (ps), Zhu's saturation threshold (flows, 0: none).
struct Uplink {
    rate: f64,
    latency: Time,
    saturation: u32,
}

fn saturation(model: &'static str, s: Option<u64>) -> Result<u32, SimError> {
    match s {
        None => Ok(0),
        Some(n) if n >= 1 && n <= u32::MAX as u64 => Ok(n as u32),
        Some(n) => Err(bad(
            model,
            "backbone_saturation",
            format!("must be a positive flow count, got {n}"),
        )),
    }
}

/// Per-height figures of a tree, as PlogPT's b(h) and d(h) (index h - 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Levels {
    /// Bandwidth of a height-h edge, bytes/s.
    pub b: Vec<f64>,
    /// Buffer delay at height h, ps (empty if unknown).
    pub d: Vec<Time>,
}

/// A tree network with full-duplex links; see the module documentation.
#[derive(Clone, Debug)]
pub struct Topology {
    nodes: u32,
    /// Parent vertex of each vertex (u32::MAX at the root).
    parent: Vec<u32>,
    depth: Vec<u32>,
    /// Per link (indexed by its child vertex): height, capacities and latency.
    height: Vec<u32>,
    cap: Vec<f64>,
    cap_bidir: Vec<f64>,
    latency: Vec<Time>,
    /// Per link: Zhu's optical saturation threshold in flows (0: none).
    saturation: Vec<u32>,
    /// Unidirectional and bidirectional per-height figures (PlogPT's P_S, P_B).
    pub levels: Levels,
    pub levels_bidir: Option<Levels>,
    /// Heights h whose b(h) was clamped to 2 b(h-1).
    pub clamped: Vec<u32>,
}

/// A route: the resources it crosses, its height, and its latency.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Route {
    pub resources: Vec<u32>,
    pub height: u32,
    pub latency: Time,
}

fn bad(model: &'static str, field: &str, what: String) -> SimError {
    SimError::bad(model, format!("topology.{field}"), what)
}

/// A capacity: finite and > 0 bytes/s.
fn positive(model: &'static str, field: &str, r: f64) -> Result<f64, SimError> {
    if r > 0.0 && r.is_finite() {
        Ok(r)
    } else {
        Err(bad(
            model,
            field,
            format!("must be a capacity > 0 bytes/s, got {r}"),
        ))
    }
}

fn rates(model: &'static str, field: &str, v: &[f64]) -> Result<Vec<f64>, SimError> {
    v.iter()
        .enumerate()
        .map(|(i, &x)| positive(model, &format!("{field}[{i}]"), x))
        .collect()
}

/// A node or leaf count: 1 ..= u32::MAX / 4.
fn count(model: &'static str, field: &str, n: u64) -> Result<u32, SimError> {
    if n >= 1 && n <= u32::MAX as u64 / 4 {
        Ok(n as u32)
    } else {
        Err(bad(
            model,
            field,
            format!("must be a positive integer, got {n}"),
        ))
    }
}

/// `members`: every node of 0..`nodes` exactly once.
fn permutation(model: &'static str, members: &[u64], nodes: u32) -> Result<Vec<u32>, SimError> {
    let mut seen = vec![false; nodes as usize];
    if members.len() != nodes as usize {
        return Err(bad(
            model,
            "members",
            format!(
                "must list each of the {nodes} nodes of the racks once, got {} entries",
                members.len()
            ),
        ));
    }
    members
        .iter()
        .enumerate()
        .map(|(i, &m)| match usize::try_from(m) {
            Ok(k) if k < nodes as usize && !seen[k] => {
                seen[k] = true;
                Ok(k as u32)
            }
            _ => Err(bad(
                model,
                &format!("members[{i}]"),
                format!("must be a node 0..{} not listed before, got {m}", nodes - 1),
            )),
        })
        .collect()
}

struct Builder {
    saturation: Vec<u32>,
    parent: Vec<u32>,
    height: Vec<u32>,
    cap: Vec<f64>,
    cap_bidir: Vec<f64>,
    latency: Vec<Time>,
}

impl Builder {
    fn new(nodes: u32) -> Self {
        let n = nodes as usize;
        Builder {
            saturation: vec![0; n],
            parent: vec![u32::MAX; n],
            height: vec![0; n],
            cap: vec![0.0; n],
            cap_bidir: vec![0.0; n],
            latency: vec![0; n],
        }
    }
    fn vertex(&mut self) -> u32 {
        self.parent.push(u32::MAX);
        self.saturation.push(0);
        self.height.push(0);
        self.cap.push(0.0);
        self.cap_bidir.push(0.0);
        self.latency.push(0);
        (self.parent.len() - 1) as u32
    }
    fn link(&mut self, child: u32, parent: u32, height: u32, cap: f64, bidir: f64, lat: Time) {
        let c = child as usize;
        self.parent[c] = parent;
        self.height[c] = height;
        self.cap[c] = cap;
        self.cap_bidir[c] = bidir;
        self.latency[c] = lat;
    }
}

impl Topology {
    /// Build the tree described by `spec` (the `topology` parameter of `model`).
    pub fn build(spec: &TopologySpec, model: &'static str) -> Result<Topology, SimError> {
        match spec {
            TopologySpec::Crossbar {
                nodes,
                nic,
                nic_bidir,
                latency,
                d,
            } => {
                let nodes = count(model, "nodes", *nodes)?;
                let nic = positive(model, "nic", *nic)?;
                let bidir = match nic_bidir {
                    Some(x) => positive(model, "nic_bidir", *x)?,
                    None => nic,
                };
                let mut b = Builder::new(nodes);
                let root = b.vertex();
                for v in 0..nodes {
                    b.link(v, root, 1, nic, bidir, *latency);
                }
                let levels = Levels {
                    b: vec![nic],
                    d: d.clone().unwrap_or_default(),
                };
                Ok(Topology::finish(nodes, b, levels, None, Vec::new()))
            }
            TopologySpec::BinaryTree { .. } => Self::binary_tree(spec, model),
            TopologySpec::Racks {
                racks,
                members,
                nic,
                nic_bidir,
                nic_latency,
                backbone,
                backbone_latency,
                backbone_saturation,
                d,
            } => {
                if racks.is_empty() {
                    return Err(bad(model, "racks", "must name at least one rack".into()));
                }
                let sizes = racks
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| match u32::try_from(n) {
                        Ok(n) if n >= 1 => Ok(n),
                        _ => Err(bad(
                            model,
                            &format!("racks[{i}]"),
                            format!("must be a positive node count, got {n}"),
                        )),
                    })
                    .collect::<Result<Vec<u32>, _>>()?;
                let nic = positive(model, "nic", *nic)?;
                let nic_bidir = match nic_bidir {
                    Some(x) => positive(model, "nic_bidir", *x)?,
                    None => nic,
                };
                let backbone = positive(model, "backbone", *backbone)?;
                let nodes: u32 = sizes.iter().sum();
                let order = match members {
                    None => (0..nodes).collect(),
                    Some(m) => permutation(model, m, nodes)?,
                };
                let up = Uplink {
                    rate: backbone,
                    latency: *backbone_latency,
                    saturation: saturation(model, *backbone_saturation)?,
                };
                Ok(Self::two_level(
                    nodes,
                    &sizes,
                    &order,
                    nic,
                    nic_bidir,
                    *nic_latency,
                    up,
                    d,
                ))
            }
            TopologySpec::LeafSpine {
                leaves,
                nodes_per_leaf,
                nic,
                oversubscription,
                latency,
                backbone_saturation,
                d,
            } => {
                let leaves = count(model, "leaves", *leaves)?;
                let per = count(model, "nodes_per_leaf", *nodes_per_leaf)?;
                let nic = positive(model, "nic", *nic)?;
                let over = match *oversubscription {
                    None => 1.0,
                    Some(o) if o >= 1.0 && o.is_finite() => o,
                    Some(o) => {
                        return Err(bad(
                            model,
                            "oversubscription",
                            format!("must be a number >= 1, got {o}"),
                        ))
                    }
                };
                let sizes = vec![per; leaves as usize];
                let up = Uplink {
                    rate: per as f64 * nic / over,
                    latency: *latency,
                    saturation: saturation(model, *backbone_saturation)?,
                };
                let order: Vec<u32> = (0..leaves * per).collect();
                Ok(Self::two_level(
                    leaves * per,
                    &sizes,
                    &order,
                    nic,
                    nic,
                    *latency,
                    up,
                    d,
                ))
            }
        }
    }

    /// Racks of `sizes` nodes under one root: the racks hold `order`'s nodes, in turn.
    #[allow(clippy::too_many_arguments)]
    fn two_level(
        nodes: u32,
        sizes: &[u32],
        order: &[u32],
        nic: f64,
        nic_bidir: f64,
        nic_lat: Time,
        up: Uplink,
        d: &Option<Vec<Time>>,
    ) -> Topology {
        let mut b = Builder::new(nodes);
        let root = b.vertex();
        let mut next = order.iter();
        for &n in sizes {
            let sw = if sizes.len() == 1 {
                root
            } else {
                let sw = b.vertex();
                b.link(sw, root, 2, up.rate, up.rate, up.latency);
                b.saturation[sw as usize] = up.saturation;
                sw
            };
            for &node in next.by_ref().take(n as usize) {
                b.link(node, sw, 1, nic, nic_bidir, nic_lat);
            }
        }
        let levels = Levels {
            b: vec![nic, up.rate],
            d: d.clone().unwrap_or_default(),
        };
        Topology::finish(nodes, b, levels, None, Vec::new())
    }

    fn binary_tree(spec: &TopologySpec, model: &'static str) -> Result<Topology, SimError> {
        let TopologySpec::BinaryTree {
            nodes,
            b,
            b_bidir,
            d,
            d_bidir,
            latency,
        } = spec
        else {
            unreachable!("binary_tree is called on a binary tree")
        };
        let mut bs = rates(model, "b", b)?;
        let dh = bs.len() as u32;
        if dh == 0 || dh > 24 {
            return Err(bad(
                model,
                "b",
                format!("needs 1..24 heights (nodes = 2^heights), got {dh}"),
            ));
        }
        if let Some(n) = *nodes {
            if n != 1u64 << dh {
                return Err(bad(
                    model,
                    "nodes",
                    format!(
                        "is {n} but `b` gives {dh} heights, a tree of {} nodes",
                        1u64 << dh
                    ),
                ));
            }
        }
        let check_len = |key: &str, len: usize| -> Result<(), SimError> {
            if len != dh as usize {
                return Err(bad(
                    model,
                    key,
                    format!("needs one value per height h = 1..{dh}, got {len}"),
                ));
            }
            Ok(())
        };
        let mut bb = match b_bidir {
            Some(v) => Some(rates(model, "b_bidir", v)?),
            None => None,
        };
        let d = d.clone();
        let db = d_bidir.clone();
        let lat = latency.clone().unwrap_or_else(|| vec![0; dh as usize]);
        for (key, len) in [
            ("b_bidir", bb.as_ref().map(|v| v.len())),
            ("d", d.as_ref().map(|v| v.len())),
            ("d_bidir", db.as_ref().map(|v| v.len())),
            ("latency", Some(lat.len())),
        ] {
            if let Some(len) = len {
                check_len(key, len)?;
            }
        }
        let mut clamped = Vec::new();
        let clamp = |v: &mut Vec<f64>, clamped: &mut Vec<u32>| {
            for h in 1..v.len() {
                if v[h] > 2.0 * v[h - 1] {
                    v[h] = 2.0 * v[h - 1];
                    clamped.push(h as u32 + 1);
                }
            }
        };
        clamp(&mut bs, &mut clamped);
        if let Some(v) = bb.as_mut() {
            clamp(v, &mut clamped);
        }
        clamped.sort_unstable();
        clamped.dedup();
        let nodes = 1u32 << dh;
        let mut b = Builder::new(nodes);
        // Vertices of height h-1, left to right; link each pair to a new parent.
        let mut below: Vec<u32> = (0..nodes).collect();
        for h in 1..=dh {
            let i = (h - 1) as usize;
            let cap_bi = bb.as_ref().map_or(bs[i], |v| v[i]);
            let mut next = Vec::with_capacity(below.len() / 2);
            for pair in below.chunks(2) {
                let p = b.vertex();
                for &c in pair {
                    b.link(c, p, h, bs[i], cap_bi, lat[i]);
                }
                next.push(p);
            }
            below = next;
        }
        let levels = Levels {
            b: bs.clone(),
            d: d.clone().unwrap_or_default(),
        };
        let levels_bidir = bb.map(|b| Levels {
            b,
            d: db.or(d).unwrap_or_default(),
        });
        Ok(Topology::finish(nodes, b, levels, levels_bidir, clamped))
    }

    fn finish(
        nodes: u32,
        b: Builder,
        levels: Levels,
        levels_bidir: Option<Levels>,
        clamped: Vec<u32>,
    ) -> Topology {
        let n = b.parent.len();
        let mut depth = vec![0u32; n];
        // Parents are created after their children: walk from the root down.
        for v in (0..n).rev() {
            let p = b.parent[v];
            if p != u32::MAX {
                depth[v] = depth[p as usize] + 1;
            }
        }
        Topology {
            nodes,
            parent: b.parent,
            depth,
            height: b.height,
            cap: b.cap,
            cap_bidir: b.cap_bidir,
            latency: b.latency,
            saturation: b.saturation,
            levels,
            levels_bidir,
            clamped,
        }
    }

    /// Number of compute nodes (leaves).
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Number of resources: two directions per link, then one loopback per node.
    pub fn num_resources(&self) -> usize {
        2 * self.parent.len() + self.nodes as usize
    }

    /// The loopback resource of `node`.
    pub fn loopback(&self, node: u32) -> u32 {
        (2 * self.parent.len()) as u32 + node
    }

    /// Capacity of resource `r` (bytes/s): unidirectional, or measured with
    /// traffic in both directions (`bidir`).
    pub fn capacity(&self, r: u32, bidir: bool) -> f64 {
        let r = r as usize;
        if r >= 2 * self.parent.len() {
            return self.cap[r - 2 * self.parent.len()];
        }
        let link = r / 2;
        if bidir {
            self.cap_bidir[link]
        } else {
            self.cap[link]
        }
    }

    /// Zhu's saturation threshold of resource `r`: while it carries at most
    /// this many flows it is no constraint (eq. 5); None: always shared.
    pub fn saturation(&self, r: u32) -> Option<u32> {
        let r = r as usize;
        if r >= 2 * self.parent.len() {
            return None;
        }
        Some(self.saturation[r / 2]).filter(|&s| s > 0)
    }

    /// The opposite direction of a link resource (None for a loopback).
    pub fn reverse(&self, r: u32) -> Option<u32> {
        ((r as usize) < 2 * self.parent.len()).then_some(r ^ 1)
    }

    /// Height of the link that resource `r` belongs to (0 for a loopback).
    pub fn resource_height(&self, r: u32) -> u32 {
        let r = r as usize;
        if r >= 2 * self.parent.len() {
            0
        } else {
            self.height[r / 2]
        }
    }

    /// The up direction of `node`'s own link (what the node sends on).
    pub fn node_up(&self, node: u32) -> u32 {
        2 * node
    }

    /// The down direction of `node`'s own link (what the node receives on).
    pub fn node_down(&self, node: u32) -> u32 {
        2 * node + 1
    }

    /// Capacity of `node`'s own link.
    pub fn node_capacity(&self, node: u32, bidir: bool) -> f64 {
        if bidir {
            self.cap_bidir[node as usize]
        } else {
            self.cap[node as usize]
        }
    }

    /// The latency of the path from node `a` to node `b` (that of [`Topology::route`],
    /// without writing the path).
    pub fn latency(&self, a: u32, b: u32) -> Time {
        let (mut x, mut y, mut sum) = (a, b, 0);
        while x != y {
            if self.depth[x as usize] >= self.depth[y as usize] {
                sum += self.latency[x as usize];
                x = self.parent[x as usize];
            } else {
                sum += self.latency[y as usize];
                y = self.parent[y as usize];
            }
        }
        sum
    }

    /// The path from node `a` to node `b`, written into `out`.
    pub fn route_into(&self, a: u32, b: u32, out: &mut Route) {
        out.resources.clear();
        out.height = 0;
        out.latency = 0;
        if a == b {
            out.resources.push(self.loopback(a));
            return;
        }
        // The lowest common ancestor, then the way up to it and the way down from it
        // (found from `b` upwards, so written backwards and reversed: no allocation).
        let (mut x, mut y) = (a, b);
        while self.depth[x as usize] > self.depth[y as usize] {
            x = self.parent[x as usize];
        }
        while self.depth[y as usize] > self.depth[x as usize] {
            y = self.parent[y as usize];
        }
        while x != y {
            x = self.parent[x as usize];
            y = self.parent[y as usize];
        }
        let top = x;
        let mut x = a;
        while x != top {
            self.up_step(&mut x, out);
        }
        let down = out.resources.len();
        let mut y = b;
        while y != top {
            let v = y as usize;
            out.resources.push(2 * y + 1);
            out.height = out.height.max(self.height[v]);
            out.latency += self.latency[v];
            y = self.parent[v];
        }
        out.resources[down..].reverse();
    }

    fn up_step(&self, x: &mut u32, out: &mut Route) {
        let v = *x as usize;
        out.resources.push(2 * *x);
        out.height = out.height.max(self.height[v]);
        out.latency += self.latency[v];
        *x = self.parent[v];
    }

    /// The path from node `a` to node `b`.
    pub fn route(&self, a: u32, b: u32) -> Route {
        let mut r = Route::default();
        self.route_into(a, b, &mut r);
        r
    }
}

/// Rank -> node placement: `rank_to_node` if given, else rank i on node i.
pub fn placement(
    rank_to_node: Option<&[u64]>,
    model: &'static str,
    ranks: u32,
    topo: &Topology,
) -> Result<Vec<u32>, SimError> {
    let Some(map) = rank_to_node else {
        if ranks > topo.nodes() {
            return Err(SimError::TooManyRanks {
                model,
                ranks,
                nodes: topo.nodes(),
            });
        }
        return Ok((0..ranks).collect());
    };
    if map.len() < ranks as usize {
        return Err(SimError::bad(
            model,
            "rank_to_node",
            format!("places {} ranks but the schedule has {ranks}", map.len()),
        ));
    }
    map.iter()
        .take(ranks as usize)
        .enumerate()
        .map(|(i, &n)| {
            if n < topo.nodes() as u64 {
                Ok(n as u32)
            } else {
                Err(SimError::bad(
                    model,
                    format!("rank_to_node[{i}]"),
                    format!("must be a node index below {}, got {n}", topo.nodes()),
                ))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(b: &[f64]) -> TopologySpec {
        TopologySpec::binary_tree(b)
    }

    #[test]
    fn binary_tree_routes_and_heights() {
        let spec = TopologySpec::BinaryTree {
            nodes: None,
            b: vec![3.0, 4.0],
            b_bidir: None,
            d: None,
            d_bidir: None,
            latency: Some(vec![1, 10]),
        };
        let t = Topology::build(&spec, "plogpt").unwrap();
        assert_eq!(t.nodes(), 4);
        let r = t.route(0, 1);
        assert_eq!((r.resources.len(), r.height, r.latency), (2, 1, 2));
        let r = t.route(0, 3);
        assert_eq!((r.resources.len(), r.height, r.latency), (4, 2, 22));
        assert_eq!(r.resources[0], t.node_up(0));
        assert_eq!(*r.resources.last().unwrap(), t.node_down(3));
        assert_eq!(t.capacity(r.resources[1], false), 4.0);
        let back = t.route(3, 0);
        let mut fwd: Vec<u32> = r.resources.iter().map(|&x| x ^ 1).collect();
        fwd.sort_unstable();
        let mut bw = back.resources.clone();
        bw.sort_unstable();
        assert_eq!(
            fwd, bw,
            "the way back uses the other direction of the same links"
        );
        assert_eq!(t.route(2, 2).resources, vec![t.loopback(2)]);
        // In path order: up from 0 to the root, then down to 3.
        let down = back.resources.iter().map(|&x| x ^ 1).collect::<Vec<_>>();
        let path = vec![t.node_up(0), down[2], down[1], t.node_down(3)];
        assert_eq!(r.resources, path);
        for a in 0..4 {
            for b in 0..4 {
                assert_eq!(t.latency(a, b), t.route(a, b).latency, "{a} -> {b}");
            }
        }
    }

    #[test]
    fn clamps_and_rejects() {
        let t = Topology::build(&tree(&[1.0, 3.0, 5.0]), "x").unwrap();
        assert_eq!(t.levels.b, vec![1.0, 2.0, 4.0]);
        assert_eq!(t.clamped, vec![2, 3]);
        let e = Topology::build(&tree(&[1.0, 0.0]), "plogpt")
            .unwrap_err()
            .to_string();
        assert!(e.contains("topology.b[1]") && e.contains("> 0"), "{e}");
        let e = Topology::build(&TopologySpec::racks(&[2, 2], 1.0, f64::NAN), "m")
            .unwrap_err()
            .to_string();
        assert!(e.contains("topology.backbone"), "{e}");
        let mut spec = tree(&[1.0, 2.0]);
        if let TopologySpec::BinaryTree { nodes, .. } = &mut spec {
            *nodes = Some(8);
        }
        let e = Topology::build(&spec, "plogpt").unwrap_err().to_string();
        assert!(e.contains("topology.nodes"), "{e}");
    }

    #[test]
    fn racks_and_leaf_spine() {
        let spec = TopologySpec::Racks {
            racks: vec![2, 3],
            members: None,
            nic: 10.0,
            nic_bidir: None,
            nic_latency: 1,
            backbone: 5.0,
            backbone_latency: 7,
            backbone_saturation: None,
            d: None,
        };
        let t = Topology::build(&spec, "m").unwrap();
        assert_eq!(t.nodes(), 5);
        let r = t.route(0, 4);
        assert_eq!((r.resources.len(), r.height, r.latency), (4, 2, 16));
        assert_eq!(t.route(2, 4).resources.len(), 2);
        for (a, b, latency) in [(0, 4, 16), (4, 0, 16), (0, 1, 2), (3, 3, 0)] {
            assert_eq!((t.latency(a, b), t.route(a, b).latency), (latency, latency));
        }
        let spec = TopologySpec::LeafSpine {
            leaves: 2,
            nodes_per_leaf: 4,
            nic: 10.0,
            oversubscription: Some(4.0),
            latency: 0,
            backbone_saturation: None,
            d: None,
        };
        let t = Topology::build(&spec, "m").unwrap();
        let r = t.route(0, 7);
        assert_eq!(t.capacity(r.resources[1], false), 10.0);
    }

    #[test]
    fn racks_of_named_members() {
        // racks {0, 3, 4} and {1, 2}: 0 -> 3 stays in its rack, 0 -> 1 crosses the backbone
        let spec = TopologySpec::Racks {
            racks: vec![3, 2],
            members: Some(vec![0, 3, 4, 1, 2]),
            nic: 10.0,
            nic_bidir: None,
            nic_latency: 1,
            backbone: 5.0,
            backbone_latency: 7,
            backbone_saturation: None,
            d: None,
        };
        let t = Topology::build(&spec, "m").unwrap();
        assert_eq!((t.route(0, 3).height, t.route(0, 3).latency), (1, 2));
        assert_eq!((t.route(0, 1).height, t.route(0, 1).latency), (2, 16));
        assert_eq!(t.route(1, 2).resources.len(), 2);
        for (members, what) in [
            (vec![0, 3, 4, 1], "each of the 5"),
            (vec![0, 3, 3, 1, 2], "[2]"),
        ] {
            let mut bad = spec.clone();
            if let TopologySpec::Racks { members: m, .. } = &mut bad {
                *m = Some(members);
            }
            let e = Topology::build(&bad, "m").unwrap_err().to_string();
            assert!(e.contains("topology.members") && e.contains(what), "{e}");
        }
    }
}
