//! commodel-serialize: makes every frame on the emulated cluster's shaped ports take its
//! serialization time at line rate, as a real Ethernet port does.
//!
//! netfilter hands every IP packet leaving a shaped port to a queue (`iptables -j NFQUEUE`:
//! host NICs in the host namespace's POSTROUTING, switch ports through bridge netfilter in
//! the switch namespace). This daemon reads each packet's id, length and headers, keeps one
//! virtual FIFO per port (see `port.rs`), and lets each packet go (a batch verdict per
//! queue) when its last bit would have left the port; packets that do not fit the port
//! buffer are dropped. A packet's arrival at its next port is its departure from the one
//! before (`hops.rs`). One process, one thread, for every namespace of a cluster.
//!
//! ```text
//! commodel-serialize [--rt-priority N] [--stats FILE] [--cut-through] PORT...
//!   PORT = NETNS,QUEUE,RATE_BIT_S,BUFFER_BYTES,LABEL
//! ```
//! With `--cut-through` a port starts sending a frame that comes from another port (at
//! least as fast) once its destination address has arrived, instead of once all of it has.
//! NETNS is a name under /run/netns or a path. It prints `ready` once every queue is bound,
//! writes its counters as JSON to the stats file every second and on exit, and exits on
//! SIGTERM, SIGINT or SIGHUP.

mod hops;
mod nfq;
mod port;
mod sys;

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use hops::{Departure, Departures};
use port::{cut_through_ready_ps, Offer, Port};

const RECV_BUFFER: usize = 32 << 20;
const STATS_EVERY_PS: u64 = 1_000_000_000_000;

struct PortSpec {
    netns: String,
    queue: u16,
    rate_bit_s: u64,
    buffer_bytes: u64,
    label: String,
}

struct Options {
    rt_priority: i32,
    cut_through: bool,
    stats: Option<String>,
    ports: Vec<PortSpec>,
}

fn parse_port(text: &str) -> Result<PortSpec, String> {
    let fields: Vec<&str> = text.split(',').collect();
    let shown: String = text.chars().take(80).collect();
    // (a longer argument is shown cut at 80 characters)
    if fields.len() != 5 {
        return Err(format!(
            "port {shown:?}: expected NETNS,QUEUE,RATE_BIT_S,BUFFER_BYTES,LABEL"
        ));
    }
    let number = |i: usize, what: &str| -> Result<u64, String> {
        fields[i]
            .parse::<u64>()
            .map_err(|_| format!("port {shown:?}: {what} {:?} is not a number", fields[i]))
    };
    let queue = number(1, "QUEUE")?;
    let rate = number(2, "RATE_BIT_S")?;
    let buffer = number(3, "BUFFER_BYTES")?;
    if queue > u64::from(u16::MAX) || rate == 0 || buffer == 0 {
        return Err(format!(
            "port {shown:?}: QUEUE must be 0..65535, RATE_BIT_S and BUFFER_BYTES positive"
        ));
    }
    Ok(PortSpec {
        netns: fields[0].to_string(),
        queue: queue as u16,
        rate_bit_s: rate,
        buffer_bytes: buffer,
        label: fields[4].to_string(),
    })
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        rt_priority: 0,
        cut_through: false,
        stats: None,
        ports: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--rt-priority" => {
                let value = it.next().ok_or("--rt-priority needs a value")?;
                opts.rt_priority = value
                    .parse()
                    .ok()
                    .filter(|p| (0..=99).contains(p))
                    .ok_or_else(|| format!("--rt-priority must be 0..99, got {value:?}"))?;
            }
            "--stats" => opts.stats = Some(it.next().ok_or("--stats needs a file")?.clone()),
            "--cut-through" => opts.cut_through = true,
            "-h" | "--help" => return Err(String::new()),
            _ => opts.ports.push(parse_port(arg)?),
        }
    }
    if opts.ports.is_empty() {
        return Err("no port given".into());
    }
    let mut seen = BTreeMap::new();
    for p in &opts.ports {
        if let Some(other) = seen.insert((p.netns.as_str(), p.queue), p.label.as_str()) {
            return Err(format!(
                "ports {other} and {} both use queue {} in {}",
                p.label, p.queue, p.netns
            ));
        }
    }
    Ok(opts)
}

fn netns_path(name: &str) -> String {
    if name.contains('/') {
        name.to_string()
    } else {
        format!("/run/netns/{name}")
    }
}

/// One queue socket per namespace, opened inside it.
fn open_sockets(ports: &[PortSpec]) -> Result<(Vec<sys::Netlink>, Vec<usize>), String> {
    let home = sys::open("/proc/self/ns/net").map_err(|e| format!("own namespace: {e}"))?;
    let mut names: Vec<&str> = Vec::new();
    let mut sockets = Vec::new();
    let mut socket_of = Vec::new();
    for p in ports {
        let index = match names.iter().position(|n| *n == p.netns) {
            Some(i) => i,
            None => {
                let path = netns_path(&p.netns);
                let ns = sys::open(&path).map_err(|e| format!("namespace {path}: {e}"))?;
                sys::enter_netns(&ns).map_err(|e| format!("entering {path}: {e}"))?;
                let sock = sys::Netlink::open(nfq::NETLINK_NETFILTER, RECV_BUFFER);
                sys::enter_netns(&home).map_err(|e| format!("returning from {path}: {e}"))?;
                sockets.push(sock.map_err(|e| format!("netfilter socket in {path}: {e}"))?);
                names.push(&p.netns);
                names.len() - 1
            }
        };
        socket_of.push(index);
    }
    Ok((sockets, socket_of))
}

/// Bind every port's queue and wait for the kernel's acknowledgements.
fn bind_queues(
    ports: &[PortSpec],
    sockets: &[sys::Netlink],
    socket_of: &[usize],
) -> Result<(), String> {
    let mut pending = BTreeMap::new();
    for (i, p) in ports.iter().enumerate() {
        let mut buf = Vec::new();
        let seq = 2 * i as u32 + 1;
        nfq::bind(&mut buf, p.queue, seq);
        let max_len = (p.buffer_bytes / 60 + 64).min(u64::from(u32::MAX)) as u32;
        nfq::configure(&mut buf, p.queue, max_len, seq + 1);
        sockets[socket_of[i]]
            .send(&buf)
            .map_err(|e| format!("binding queue {} for {}: {e}", p.queue, p.label))?;
        pending.insert(seq, i);
        pending.insert(seq + 1, i);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut buf = vec![0u8; 65536];
    let mut events = Vec::new();
    while !pending.is_empty() {
        if Instant::now() > deadline {
            return Err("the kernel did not acknowledge the queue bindings".into());
        }
        let mut got = false;
        for sock in sockets {
            while let Some(data) = sock
                .recv(&mut buf)
                .map_err(|e| format!("reading acks: {e}"))?
            {
                got = true;
                events.clear();
                nfq::parse(data, &mut events)?;
                for ev in &events {
                    if let nfq::Event::Ack { seq, errno } = *ev {
                        if let Some(i) = pending.remove(&seq) {
                            if errno != 0 {
                                let p = &ports[i];
                                return Err(format!(
                                    "queue {} in {} for {}: {} (is another listener bound?)",
                                    p.queue,
                                    p.netns,
                                    p.label,
                                    io::Error::from_raw_os_error(-errno)
                                ));
                            }
                        }
                    }
                }
            }
        }
        if !got {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    Ok(())
}

struct Daemon {
    specs: Vec<PortSpec>,
    ports: Vec<Port>,
    sockets: Vec<sys::Netlink>,
    socket_of: Vec<usize>,
    /// (socket, queue) -> port
    port_of: BTreeMap<(usize, u16), usize>,
    out: Vec<Vec<u8>>,
    departures: Departures,
    departed: Vec<(u64, u64)>,
    cut_through: bool,
    recv_errors: u64,
    zero_wakeup_latency: bool,
    started_ps: u64,
}

impl Daemon {
    fn drain(&mut self, s: usize, buf: &mut [u8], events: &mut Vec<nfq::Event>) {
        loop {
            let data = match self.sockets[s].recv(buf) {
                Ok(Some(data)) => data,
                Ok(None) => return,
                Err(_) => {
                    // ENOBUFS: queue messages were lost. Their packets stay queued in the
                    // kernel until the next batch verdict on that queue lets them through.
                    self.recv_errors += 1;
                    continue;
                }
            };
            let now = sys::now_ps();
            events.clear();
            if let Err(msg) = nfq::parse(data, events) {
                if self.recv_errors < 5 {
                    eprintln!(
                        "commodel-serialize: unreadable message: {msg} {:02x?}",
                        &data[..data.len().min(96)]
                    );
                }
                self.recv_errors += 1;
                continue;
            }
            for ev in events.iter() {
                let nfq::Event::Packet {
                    queue,
                    id,
                    len,
                    key,
                } = *ev
                else {
                    continue;
                };
                let Some(&p) = self.port_of.get(&(s, queue)) else {
                    nfq::verdict(&mut self.out[s], queue, id, nfq::NF_ACCEPT);
                    continue;
                };
                let port = &mut self.ports[p];
                let l3 = u64::from(len);
                let ready = match self.departures.take(key, now) {
                    Some(Departure { at_ps, rate_bit_s }) => {
                        port.stats.chained += 1;
                        if self.cut_through {
                            cut_through_ready_ps(l3, at_ps, rate_bit_s, port.rate_bit_s)
                        } else {
                            at_ps
                        }
                    }
                    None => now,
                };
                if port.offer(id, key, l3, ready, now) == Offer::Dropped {
                    nfq::verdict(&mut self.out[s], queue, id, nfq::NF_DROP);
                }
            }
        }
    }

    /// Remember when the frames that left went, for their next port: before their
    /// verdicts go out (a frame that left while an offer made room is handed on by the
    /// next [`Daemon::release`], which records it).
    fn record_departures(&mut self) {
        for port in &mut self.ports {
            port.take_departed(&mut self.departed);
            for (key, at_ps) in self.departed.drain(..) {
                let rate_bit_s = port.rate_bit_s;
                self.departures.record(key, Departure { at_ps, rate_bit_s });
            }
        }
    }

    fn release(&mut self) {
        let now = sys::now_ps();
        for (p, port) in self.ports.iter_mut().enumerate() {
            if let Some(id) = port.release(now) {
                let s = self.socket_of[p];
                nfq::verdict_batch(&mut self.out[s], self.specs[p].queue, id, nfq::NF_ACCEPT);
            }
        }
        self.record_departures();
    }

    fn flush(&mut self) -> io::Result<()> {
        for (s, out) in self.out.iter_mut().enumerate() {
            if !out.is_empty() {
                self.sockets[s].send(out)?;
                out.clear();
            }
        }
        Ok(())
    }

    fn held_frames(&self) -> usize {
        self.ports.iter().map(Port::held_frames).sum()
    }

    fn next_departure(&self) -> Option<u64> {
        self.ports.iter().filter_map(Port::next_departure).min()
    }

    fn stats_json(&self) -> String {
        let mut text = format!(
            "{{\"pid\": {}, \"uptime_s\": {:.3}, \"cpu_s\": {:.3}, \"recv_errors\": {}, \
             \"zero_wakeup_latency\": {}, \"ports\": [",
            std::process::id(),
            (sys::now_ps() - self.started_ps) as f64 * 1e-12,
            sys::cpu_time_us() as f64 * 1e-6,
            self.recv_errors,
            self.zero_wakeup_latency
        );
        for (i, (spec, port)) in self.specs.iter().zip(&self.ports).enumerate() {
            let st = port.stats;
            let released = st
                .frames
                .saturating_sub(port.next_departure().map_or(0, |_| 1));
            let late_mean_us = if released > 0 {
                st.late_sum_ps as f64 / released as f64 * 1e-6
            } else {
                0.0
            };
            text += &format!(
                "{}\n {{\"label\": \"{}\", \"netns\": \"{}\", \"queue\": {}, \"rate_bit_s\": {}, \
                 \"buffer_bytes\": {}, \"frames\": {}, \"bytes\": {}, \"drops\": {}, \
                 \"held_bytes\": {}, \"max_held_bytes\": {}, \"chained\": {}, \"late_mean_us\": {:.2}, \"late_max_us\": {:.2}}}",
                if i > 0 { "," } else { "" },
                spec.label.replace(['"', '\\'], "_"),
                spec.netns.replace(['"', '\\'], "_"),
                spec.queue,
                spec.rate_bit_s,
                spec.buffer_bytes,
                st.frames,
                st.bytes,
                st.drops,
                port.held_bytes(),
                st.max_held_bytes,
                st.chained,
                late_mean_us,
                st.late_max_ps as f64 * 1e-6
            );
        }
        text + "]}\n"
    }

    fn write_stats(&self, path: &Option<String>) {
        if let Some(path) = path {
            let tmp = format!("{path}.tmp");
            if std::fs::write(&tmp, self.stats_json()).is_ok() {
                let _ = std::fs::rename(&tmp, path);
            }
        }
    }
}

/// How late the timer wakes us: a moving average of the last wake-ups, so that the timer
/// can be set that much before a departure and the rest waited out by spinning. A
/// departure then is kept to within the wake-up's jitter instead of being late by its
/// whole latency (tens of microseconds on a loaded machine whose kernel does not preempt
/// kernel code). Capped, so that the spinning stays short.
#[derive(Default)]
struct WakeUp {
    mean_ps: u64,
}

impl WakeUp {
    const MAX_EARLY_PS: u64 = 30_000_000; // 30 us
    const SAMPLE_CAP_PS: u64 = 200_000_000; // a stall longer than this counts as this

    fn observe(&mut self, late_ps: u64) {
        let sample = late_ps.min(Self::SAMPLE_CAP_PS);
        self.mean_ps = (self.mean_ps * 15 + sample) / 16;
    }

    fn early_ps(&self) -> u64 {
        self.mean_ps.min(Self::MAX_EARLY_PS)
    }
}

/// Wake early and spin to a departure only while at most this many frames are held.
const SPIN_MAX_HELD_FRAMES: usize = 4;

const TOKEN_SIGNAL: u64 = u64::MAX;
const TOKEN_TIMER: u64 = u64::MAX - 1;

fn run(opts: Options) -> Result<(), String> {
    let signals = sys::Signals::new().map_err(|e| format!("signals: {e}"))?;
    let (sockets, socket_of) = open_sockets(&opts.ports)?;
    bind_queues(&opts.ports, &sockets, &socket_of)?;
    let timer = sys::Timer::new().map_err(|e| format!("timer: {e}"))?;
    let epoll = sys::Epoll::new().map_err(|e| format!("epoll: {e}"))?;
    let add = |fd, token| epoll.add(fd, token).map_err(|e| format!("epoll: {e}"));
    add(signals.raw(), TOKEN_SIGNAL)?;
    add(timer.raw(), TOKEN_TIMER)?;
    for (s, sock) in sockets.iter().enumerate() {
        add(sock.raw(), s as u64)?;
    }
    sys::set_realtime(opts.rt_priority)
        .map_err(|e| format!("SCHED_FIFO priority {}: {e}", opts.rt_priority))?;
    // held (the request stands) until the daemon exits
    let wakeup_latency = sys::hold_zero_wakeup_latency();

    let port_of = opts
        .ports
        .iter()
        .enumerate()
        .map(|(p, spec)| ((socket_of[p], spec.queue), p))
        .collect();
    let ports = opts
        .ports
        .iter()
        .map(|p| Port::new(p.rate_bit_s, p.buffer_bytes))
        .collect();
    let stats_path = opts.stats.clone();
    let mut daemon = Daemon {
        out: vec![Vec::new(); sockets.len()],
        departures: Departures::new(16),
        departed: Vec::new(),
        cut_through: opts.cut_through,
        specs: opts.ports,
        ports,
        sockets,
        socket_of,
        port_of,
        recv_errors: 0,
        zero_wakeup_latency: wakeup_latency.is_some(),
        started_ps: sys::now_ps(),
    };
    daemon.write_stats(&stats_path);
    println!("ready");
    io::stdout().flush().ok();

    let mut buf = vec![0u8; 1 << 16];
    let mut events = Vec::new();
    let mut epoll_events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
    let mut ready = Vec::new();
    let mut stats_at = sys::now_ps() + STATS_EVERY_PS;
    let mut wake_up = WakeUp::default();
    loop {
        // only while few frames are held (isolated messages, whose latency is the point);
        // a busy network keeps its rate whatever the wake-up latency, and spinning there
        // would take the CPU from the traffic itself
        let early = if daemon.held_frames() <= SPIN_MAX_HELD_FRAMES {
            wake_up.early_ps()
        } else {
            0
        };
        let wake = daemon
            .next_departure()
            .map_or(stats_at, |d| d.saturating_sub(early).min(stats_at));
        timer.arm(Some(wake)).map_err(|e| format!("timer: {e}"))?;
        epoll
            .wait(&mut epoll_events, &mut ready)
            .map_err(|e| format!("epoll: {e}"))?;
        for &token in &ready {
            match token {
                TOKEN_SIGNAL => {
                    daemon.write_stats(&stats_path);
                    return Ok(());
                }
                TOKEN_TIMER => {
                    timer.clear();
                    wake_up.observe(sys::now_ps().saturating_sub(wake));
                    // woken ahead of the departure by the expected latency: wait out the rest
                    if let Some(departure) = daemon.next_departure() {
                        while sys::now_ps() < departure && departure <= wake + early {
                            std::hint::spin_loop();
                        }
                    }
                }
                s => daemon.drain(s as usize, &mut buf, &mut events),
            }
        }
        daemon.release();
        daemon
            .flush()
            .map_err(|e| format!("sending verdicts: {e}"))?;
        if sys::now_ps() >= stats_at {
            daemon.write_stats(&stats_path);
            stats_at += STATS_EVERY_PS;
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse_args(&args) {
        Ok(opts) => opts,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("commodel-serialize: error: {msg}");
            }
            eprintln!(
                "usage: commodel-serialize [--rt-priority N] [--stats FILE] [--cut-through] \
                 NETNS,QUEUE,RATE_BIT_S,BUFFER_BYTES,LABEL..."
            );
            return ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("commodel-serialize: error: {msg}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_up_latency_is_a_capped_moving_average() {
        let mut w = WakeUp::default();
        assert_eq!(w.early_ps(), 0);
        for _ in 0..200 {
            w.observe(16_000_000); // 16 us
        }
        assert!(
            (15_900_000..=16_000_000).contains(&w.early_ps()),
            "{}",
            w.early_ps()
        );
        // one 2-second stall moves it by at most the sample cap / 16
        w.observe(2_000_000_000_000);
        assert!(w.mean_ps <= 16_000_000 + WakeUp::SAMPLE_CAP_PS / 16);
        // never more than 30 us early
        for _ in 0..200 {
            w.observe(100_000_000);
        }
        assert_eq!(w.early_ps(), WakeUp::MAX_EARLY_PS);
    }

    #[test]
    fn port_arguments_are_checked() {
        let p = parse_port("cm-a-h0,0,100000000,1048576,h0->rack0").unwrap();
        assert_eq!(
            (p.queue, p.rate_bit_s, p.buffer_bytes),
            (0, 100_000_000, 1_048_576)
        );
        let err = parse_port("cm-a-h0,0,fast,1048576,x").err().unwrap();
        assert!(err.contains("RATE_BIT_S \"fast\" is not a number"), "{err}");
        assert!(parse_port("cm-a-h0,70000,1,1,x").is_err());
        let dup = ["cm-a-sw,1,1,1,p".to_string(), "cm-a-sw,1,2,2,q".to_string()];
        let err = parse_args(&dup).err().unwrap();
        assert_eq!(err, "ports p and q both use queue 1 in cm-a-sw");
    }
}
