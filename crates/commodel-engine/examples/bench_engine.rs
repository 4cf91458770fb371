//! One engine benchmark case per process, so that peak memory is the case's own.
//!
//! `cargo run --release --example bench_engine -- MODEL COLLECTIVE RANKS SIZE`
//! (MODEL: `loggops`, `plogp`, or `maxmin` / `zhu` / `tcpflow` on the two racks of
//! `benches/contention.py`; `tcpflow` with its calibrated `tcp` section, [`tcp_section`])
//! prints one JSON line: ops, events, generation and simulation seconds (wall
//! and CPU), events per CPU second and peak resident memory (VmHWM).

use commodel_engine::collectives::{generate, CollectiveOptions};
use commodel_engine::params::{
    Common, Efficiency, FanIn, LogGopsParams, MaxminParams, PlogpParams, RtoRule, TcpflowParams,
    TopologySpec, ZhuParams,
};
use commodel_engine::{predict, ModelParams};
use serde_json::json;
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // utime + stime of this process, from /proc/self/stat (clock ticks).
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// The two racks of `benches/contention.py`: P/2 nodes each, 1 Gbit/s NICs and 10 us per
/// link, each rack's uplink a quarter of its aggregate NIC bandwidth.
fn two_racks(ranks: u32) -> TopologySpec {
    let (half, nic) = ((ranks / 2) as u64, 125e6);
    TopologySpec::Racks {
        racks: vec![half, half],
        members: None,
        nic,
        nic_bidir: None,
        nic_latency: 10_000_000,
        backbone: half as f64 * nic / 4.0,
        backbone_latency: 10_000_000,
        backbone_saturation: None,
        d: None,
    }
}

/// `tcpflow` on the two racks with the `tcp` section of `benches/contention.py`'s
/// `TCP_SECTION` (efficiency tables with fan-in, `fifo_limit` 16384) and its plogp
/// (L = 30 us, g(m) = 10 us + m / 125 MB/s).
fn tcp_section(ranks: u32) -> TcpflowParams {
    TcpflowParams {
        topology: two_racks(ranks),
        L: 30_000_000,
        sizes: vec![0, 65536],
        g: vec![10_000_000, 10_000_000 + 524_288_000],
        efficiency: Some(Efficiency {
            sizes: vec![4096, 16384, 65536, 262144],
            exchange: vec![0.8407, 0.8963, 0.5725, 0.5917],
            duplex: vec![0.9516, 0.885, 0.8137, 0.835],
            fanin: Some(FanIn {
                peers: 7,
                sizes: vec![4096, 16384, 65536, 262144],
                e: vec![1.0, 0.9, 0.09, 0.33],
            }),
        }),
        fifo_limit: Some(16384),
        rto: None,
        rto_rule: RtoRule::Plogpt,
        buffer: None,
        bucket: None,
        overhead: None,
        ack: None,
        timeouts: None,
        port_timeouts: None,
        pair: None,
        common: Common::default(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 {
        eprintln!("usage: bench_engine MODEL COLLECTIVE RANKS SIZE");
        std::process::exit(2);
    }
    let (model, name) = (&args[1], &args[2]);
    let ranks: u32 = args[3].parse().expect("RANKS");
    let size: u64 = args[4].parse().expect("SIZE");
    let params = match model.as_str() {
        "loggops" => ModelParams::LogGops(LogGopsParams {
            L: 5_000_000,
            o: 1_500_000,
            g: 1_000_000,
            G: 8_000.0,
            O: 0.0,
            S: 65535,
            cpu_cores: None,
        }),
        "plogp" => ModelParams::Plogp(PlogpParams {
            L: 5_000_000,
            sizes: vec![0, 65536],
            g: vec![1_000_000, 525_000_000],
            common: Common::default(),
        }),
        "maxmin" => ModelParams::Maxmin(MaxminParams::new(two_racks(ranks), true)),
        "zhu" => ModelParams::Zhu(ZhuParams::new(two_racks(ranks), true)),
        "tcpflow" => ModelParams::Tcpflow(tcp_section(ranks)),
        other => {
            eprintln!(
                "bench_engine: no benchmark parameters for model {other:?} (loggops, plogp, maxmin, zhu, tcpflow)"
            );
            std::process::exit(2);
        }
    };
    let (c0, w0) = (cpu_seconds(), Instant::now());
    let s = generate(name, ranks, size, &CollectiveOptions::default()).expect("collective");
    let gen_peak = peak_rss_mib();
    // Reset the peak (Linux: write 5 to clear_refs) to measure the simulation alone,
    // as a simulator reading a prepared schedule (LogGOPSim's txt2bin output) would.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let (c1, w1) = (cpu_seconds(), Instant::now());
    let out = predict::run(&s, &params, false).expect("simulation");
    let (c2, w2) = (cpu_seconds(), Instant::now());
    let sim_cpu = (c2 - c1).max(0.01);
    println!(
        "{}",
        json!({
            "model": model, "collective": name, "ranks": ranks, "size": size,
            "ops": s.num_ops(), "events": out.events, "makespan_ps": out.makespan,
            "gen_wall_s": (w1 - w0).as_secs_f64(), "gen_cpu_s": c1 - c0,
            "sim_wall_s": (w2 - w1).as_secs_f64(), "sim_cpu_s": c2 - c1,
            "events_per_cpu_s": out.events as f64 / sim_cpu,
            "peak_rss_mib": gen_peak.max(peak_rss_mib()),
            "sim_peak_rss_mib": peak_rss_mib(),
        })
    );
}
