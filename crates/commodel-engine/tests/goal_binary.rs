//! LogGOPSim's binary schedules (`txt2bin` output): a hand-made file with known content,
//! every example GOAL file written in that layout and read back, and errors with their
//! byte offsets. (The comparison with `txt2bin` itself is in tests/test_loggopsim_binary.py,
//! which needs LogGOPSim's source.)

use commodel_engine::goal::{self, GoalErrorKind};
use commodel_engine::schedule::{OpKind, Schedule, ANY};

/// Little-endian bytes, the layout described in `goal::binary` and docs/formats.md.
#[derive(Default)]
struct Bytes(Vec<u8>);

impl Bytes {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
}

/// One operation of a hand-made rank: kind, peer, size, tag, cpu, nic, and the local
/// indices of the operations that require it and that irequire it.
struct Rec {
    kind: u8,
    peer: u32,
    size: u64,
    tag: u32,
    cpu: u8,
    nic: u8,
    req: Vec<u32>,
    ireq: Vec<u32>,
}

/// A whole binary schedule from its ranks' operations.
fn encode(ranks: &[Vec<Rec>], max_cpu: u8, max_nic: u8) -> Vec<u8> {
    let p = ranks.len() as u32;
    let mut sections = Vec::new();
    for ops in ranks {
        let mut indegree = vec![0u32; ops.len()];
        for o in ops {
            for &a in o.req.iter().chain(&o.ireq) {
                indegree[a as usize] += 1;
            }
        }
        let roots: Vec<u32> = (0..ops.len() as u32)
            .filter(|&i| indegree[i as usize] == 0)
            .collect();
        let mut s = Bytes::default();
        s.u32(ops.len() as u32).u32(roots.len() as u32);
        for &r in &roots {
            s.u32(r);
        }
        let mut next = 0u32;
        for (o, &deg) in ops.iter().zip(&indegree) {
            s.u32(deg)
                .u8(o.kind)
                .u32(o.peer)
                .u64(o.size)
                .u32(o.tag)
                .u8(o.cpu)
                .u8(o.nic);
            s.u32(o.req.len() as u32).u32(next);
            next += o.req.len() as u32;
            s.u32(o.ireq.len() as u32).u32(next);
            next += o.ireq.len() as u32;
        }
        for o in ops {
            for &a in o.req.iter().chain(&o.ireq) {
                s.u32(a);
            }
        }
        sections.push(s.0);
    }
    let mut f = Bytes::default();
    f.u64(goal::MAGIC).u32(p).u8(max_cpu).u8(max_nic);
    let mut at = 4 + 2 + 16 * u64::from(p);
    for s in &sections {
        f.u64(at).u64(at + s.len() as u64);
        at += s.len() as u64;
    }
    for s in sections {
        f.0.extend_from_slice(&s);
    }
    f.0
}

/// A schedule in the binary layout, as `txt2bin` would write it.
fn encode_schedule(s: &Schedule) -> Vec<u8> {
    let ranks: Vec<Vec<Rec>> = (0..s.num_ranks())
        .map(|r| {
            let first = s.ops_of(r).start;
            s.ops_of(r)
                .map(|id| {
                    let op = s.op(id);
                    Rec {
                        kind: op.kind as u8,
                        peer: op.peer,
                        size: op.size,
                        tag: op.tag,
                        cpu: op.cpu,
                        nic: op.nic,
                        req: s.requirers(id).map(|a| a - first).collect(),
                        ireq: s.irequirers(id).map(|a| a - first).collect(),
                    }
                })
                .collect()
        })
        .collect();
    encode(&ranks, s.max_cpu(), s.max_nic())
}

fn rec(kind: u8, peer: u32, size: u64, tag: u32) -> Rec {
    Rec {
        kind,
        peer,
        size,
        tag,
        cpu: 0,
        nic: 0,
        req: vec![],
        ireq: vec![],
    }
}

/// Rank 0: send 8 bytes to 1 tag 5, then a calc of 100 ns on cpu 1 that requires it,
/// and a send that irequires the calc. Rank 1: two receives from any source, any tag.
fn small() -> Vec<Vec<Rec>> {
    let mut send = rec(1, 1, 8, 5);
    send.req = vec![1];
    let mut calc = rec(3, 0, 100, 0);
    calc.cpu = 1;
    calc.ireq = vec![2];
    let mut second = rec(1, 1, 65536, 6);
    second.nic = 2;
    vec![
        vec![send, calc, second],
        vec![rec(2, ANY, 8, ANY), rec(2, ANY, 65536, ANY)],
    ]
}

#[test]
fn a_hand_made_file_reads_as_written() {
    let bytes = encode(&small(), 1, 2);
    // 8 cookie + 6 + 2 * 16 table + (8 + 4 roots + 3 * 39 + 8 dependents)
    // + (8 + 8 roots + 2 * 39).
    assert_eq!(bytes.len(), 8 + 6 + 32 + (8 + 4 + 117 + 8) + (8 + 8 + 78));
    assert!(goal::is_binary(&bytes));
    let s = goal::parse_binary(&bytes, "small.bin").unwrap();
    assert_eq!(
        goal::write(&s),
        "num_ranks 2\nrank 0 {\no0: send 8b to 1 tag 5\no1: calc 100 cpu 1\no2: send 65536b to 1 tag 6 nic 2\no1 requires o0\no2 irequires o1\n}\nrank 1 {\no0: recv 8b from -1 tag -1\no1: recv 65536b from -1 tag -1\n}\n"
    );
    assert_eq!((s.max_cpu(), s.max_nic()), (1, 2));
    assert_eq!(s.kind(3), OpKind::Recv);
    assert_eq!((s.peer(3), s.tag(3)), (ANY, ANY));
    assert_eq!(s.dep_counts(), vec![0, 1, 1, 0, 0]);
}

#[test]
fn example_schedules_read_back_from_the_binary_layout() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    let dirs = ["../../examples/schedules", "tests/data/goal"];
    for e in dirs
        .iter()
        .flat_map(|d| std::fs::read_dir(crate_dir.join(d)).unwrap())
    {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "goal") {
            continue;
        }
        let text = goal::read(&path).unwrap();
        let bytes = encode_schedule(&text);
        let bin = goal::parse_binary(&bytes, "x.bin").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(bin.num_ops(), text.num_ops());
        for id in 0..text.num_ops() as u32 {
            assert_eq!(
                bin.op(id),
                text.op(id),
                "{}: operation {id}",
                path.display()
            );
            assert!(bin.requirers(id).eq(text.requirers(id)));
            assert!(bin.irequirers(id).eq(text.irequirers(id)));
        }
        n += 1;
    }
    assert!(n >= 7, "only {n} schedules");
}

#[test]
fn read_tells_the_formats_apart_by_content() {
    let dir = std::env::temp_dir().join(format!("commodel-goal-binary-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("small.goal");
    std::fs::write(&bin, encode(&small(), 1, 2)).unwrap();
    let text = dir.join("small.bin");
    std::fs::write(&text, goal::write(&goal::read(&bin).unwrap())).unwrap();
    let (a, b) = (goal::read(&bin).unwrap(), goal::read(&text).unwrap());
    assert_eq!(a.num_ops(), 5);
    assert_eq!(goal::write(&a), goal::write(&b));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[track_caller]
fn check(bytes: &[u8], message: &str) {
    let e = goal::parse_binary(bytes, "b.bin").unwrap_err();
    assert_eq!(e.kind(), GoalErrorKind::Binary);
    assert_eq!(e.to_string(), message);
}

#[test]
fn errors_name_the_byte_at_fault() {
    let good = encode(&small(), 1, 2);
    // Rank 0's section starts at 8 + 38 = 46; its records at 46 + 12 = 58.
    let mut consumed = good.clone();
    consumed[..8].copy_from_slice(&goal::MAGIC_CONSUMED.to_le_bytes());
    check(&consumed, "b.bin: byte 0: this binary schedule was consumed by a LogGOPSim run with --save-mem; convert the text again with txt2bin");
    check(
        &good[..100],
        "b.bin: byte 14: rank 0's section runs from 38 to 175, outside the 92 bytes after the cookie",
    );
    check(
        &good[..30],
        "b.bin: byte 14: the table of rank sections needs 32 bytes, the file has 30",
    );
    let mut kind = good.clone();
    kind[58 + 4] = 9;
    check(
        &kind,
        "b.bin: byte 62: rank 0 operation 0: kind 9, expected 1 (send), 2 (recv) or 3 (calc)",
    );
    let mut peer = good.clone();
    peer[58 + 5..58 + 9].copy_from_slice(&2u32.to_le_bytes());
    check(
        &peer,
        "b.bin: byte 63: rank 0 operation 0: send peer 2, expected a rank below 2",
    );
    let mut count = good.clone();
    count[58 + 39] = 2; // operation 1 claims two prerequisites, one is listed
    check(
        &count,
        "b.bin: byte 97: rank 0 operation 1: 2 prerequisites stored, 1 listed",
    );
    let mut cpu = good.clone();
    cpu[12] = 0;
    check(
        &cpu,
        "b.bin: byte 12: largest cpu 0 and nic 2 stored, 1 and 2 used",
    );
    check(
        &[1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0],
        "b.bin: byte 0: cookie 578437695752307201, expected 4223 (not a LogGOPSim binary schedule)",
    );
}

mod collectives_support;

/// What a read gave, comparable: the schedule written as GOAL, or the error.
fn outcome(r: Result<Schedule, goal::GoalError>) -> Result<String, goal::GoalError> {
    r.map(|s| goal::write(&s))
}

/// `data` read on 2, 3, 4 and 7 threads, in whole parts and in segments of a few
/// operations: what one thread reads.
fn same_in_parts(data: &[u8]) {
    let whole = outcome(goal::parse_binary(data, "s.bin"));
    for parts in [2, 3, 4, 7] {
        for segment in [1 << 17, 3] {
            let got = outcome(goal::parse_binary_in_parts(data, "s.bin", parts, segment));
            assert_eq!(got, whole, "{parts} parts, segments of {segment}");
        }
    }
}

#[test]
fn every_collective_reads_the_same_in_parts() {
    for name in collectives_support::names() {
        for p in collectives_support::rank_counts(name, &[3, 8, 17]) {
            let s = collectives_support::gen(name, p, 100_000);
            let data = encode_schedule(&s);
            same_in_parts(&data);
            let (a, b) = (
                goal::parse_binary(&data, "s.bin").unwrap(),
                goal::parse_binary_in_parts(&data, "s.bin", 3, 5).unwrap(),
            );
            assert_eq!(goal::write(&a), goal::write(&s), "{name} P={p}");
            assert_eq!(
                a.edges().collect::<Vec<_>>(),
                b.edges().collect::<Vec<_>>(),
                "{name} P={p}"
            );
        }
    }
}

/// Every truncation and every byte changed: errors in every part (the first in rank
/// order wins), in the header and the table of sections, and the largest cpu and nic.
#[test]
fn errors_in_parts_are_those_of_one_thread() {
    let mut ranks = small();
    for k in 0..4u32 {
        let mut send = rec(1, (k + 1) % 6, 64, k);
        send.cpu = (k % 2) as u8;
        // The receive, then a calc that requires it, then the send that irequires the calc.
        let mut recv = rec(2, ANY, 64, ANY);
        recv.req = vec![1];
        let mut calc = rec(3, 0, 10, 0);
        calc.ireq = vec![2];
        ranks.push(vec![recv, calc, send]);
    }
    let data = encode(&ranks, 1, 2);
    goal::parse_binary(&data, "s.bin").unwrap();
    same_in_parts(&data);
    for i in 0..data.len() {
        same_in_parts(&data[..i]);
        for v in [data[i].wrapping_add(1), 0xFF] {
            let mut d = data.clone();
            d[i] = v;
            same_in_parts(&d);
        }
    }
}
