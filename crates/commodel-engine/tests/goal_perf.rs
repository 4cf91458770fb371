//! Throughput of the GOAL reader and writer (ignored by default; run in release):
//!
//! ```sh
//! cargo test --release -p commodel-engine --test goal_perf -- --ignored --nocapture
//! ```
//!
//! The schedule is an alltoall in the shape of Schedgen's output: every rank posts a
//! receive and a send per peer, labeled, with a `requires` chain between rounds.

use std::time::Instant;

use commodel_engine::goal;

fn alltoall_text(p: u32, labeled: bool) -> String {
    let mut t = format!("num_ranks {p}\n");
    for r in 0..p {
        t.push_str(&format!("rank {r} {{\n"));
        for k in 1..p {
            let (to, from) = ((r + k) % p, (r + p - k) % p);
            if labeled {
                t.push_str(&format!(
                    "r{k}: recv 65536b from {from} tag {k}\ns{k}: send 65536b to {to} tag {k}\n"
                ));
                if k > 1 {
                    t.push_str(&format!("s{k} requires r{}\n", k - 1));
                }
            } else {
                t.push_str(&format!(
                    "recv 65536b from {from} tag {k}\nsend 65536b to {to} tag {k}\n"
                ));
            }
        }
        t.push_str("}\n");
    }
    t
}

/// CPU time of this thread in seconds (Linux), so that a loaded machine does not skew the
/// figures; wall time elsewhere.
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(s.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let (c0, t0) = (cpu_seconds(), Instant::now());
    let out = f();
    let secs = match (c0, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => t0.elapsed().as_secs_f64(),
    };
    (out, secs)
}

#[test]
#[ignore = "benchmark: run in release with --ignored --nocapture"]
fn parse_and_write_throughput() {
    for (p, labeled) in [(1024, true), (1024, false)] {
        let text = alltoall_text(p, labeled);
        let statements = text.lines().count() as f64;
        let (s, parse) = timed(|| goal::parse(&text, "alltoall.goal").unwrap());
        let mut out = Vec::with_capacity(text.len() * 2);
        let ((), write) = timed(|| goal::write_to(&s, &mut out).unwrap());
        println!(
            "P={p} labeled={labeled} (CPU time): {} ops, {:.1} MB; parse {:.3} s = {:.2} M statements/s ({:.0} MB/s); write {:.3} s = {:.2} M lines/s",
            s.num_ops(),
            text.len() as f64 / 1e6,
            parse,
            statements / parse / 1e6,
            text.len() as f64 / parse / 1e6,
            write,
            out.iter().filter(|&&c| c == b'\n').count() as f64 / write / 1e6,
        );
        assert_eq!(s.num_ops() as u64, 2 * u64::from(p) * u64::from(p - 1));
    }
}
