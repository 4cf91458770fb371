//! Nothing silently wrong: time arithmetic is checked in every model (an
//! overflow is an error naming the operation), per-byte costs keep a fraction
//! of a picosecond, and a message larger than its receive is an MPI
//! truncation error naming both operations.

use commodel_engine::params::{
    Common, HockneyParams, IncastParams, IncastRow, LogGopsParams, MaxminParams, PlogpParams,
    PlogptParams, TopologySpec, ZhuParams,
};
use commodel_engine::{goal, predict, ModelParams, Outcome, Schedule, SimError};

const GIB: u64 = 1 << 30;

fn eager_above(s: u64) -> Common {
    Common {
        S: Some(s),
        ..Common::default()
    }
}

/// Parameters of every model for two ranks (times in ps, rates in B/s).
fn every_model() -> Vec<ModelParams> {
    let crossbar = TopologySpec::crossbar(2, 1e9);
    let mut incast = MaxminParams::new(crossbar.clone(), true);
    incast.common.incast = Some(IncastParams {
        levels: vec![1_000_000],
        table: vec![IncastRow {
            n: 3,
            m: 8,
            f: vec![1.0],
        }],
        seed: 1,
    });
    let mut plain = MaxminParams::new(crossbar.clone(), false);
    plain.common = eager_above(4096);
    vec![
        ModelParams::LogGops(LogGopsParams {
            L: 2_500_000,
            o: 1_500_000,
            g: 1_000_000,
            G: 6_000.0,
            O: 0.0,
            S: 65535,
            cpu_cores: None,
        }),
        ModelParams::Plogp(PlogpParams {
            L: 3_000_000,
            sizes: vec![0, 1024],
            g: vec![1_000, 9_000],
            common: Common::default(),
        }),
        ModelParams::Hockney(HockneyParams {
            alpha: 4_000_000,
            beta: 8.0,
            common: eager_above(4096),
        }),
        ModelParams::Plogpt(PlogptParams::new(
            TopologySpec::binary_tree(&[1.0]),
            3_000,
            vec![0, 1024],
            vec![1_000, 9_000],
        )),
        ModelParams::Maxmin(MaxminParams::new(crossbar.clone(), true)),
        ModelParams::Maxmin(plain),
        ModelParams::Zhu(ZhuParams::new(crossbar.clone(), true)),
        ModelParams::Zhu(ZhuParams::new(crossbar, false)),
        ModelParams::Maxmin(incast),
    ]
}

fn schedule(text: &str) -> Schedule {
    goal::parse(text, "t.goal").unwrap()
}

fn run(s: &Schedule, params: &ModelParams) -> Result<Outcome, SimError> {
    predict::run(s, params, true)
}

fn pair(send: u64, recv: u64) -> Schedule {
    schedule(&format!(
        "num_ranks 2\nrank 0 {{\na: send {send}b to 1 tag 3\n}}\n\
         rank 1 {{\nb: recv {recv}b from 0 tag 3\n}}\n"
    ))
}

#[test]
fn a_huge_message_overflows_in_every_model_naming_the_send() {
    let s = pair(u64::MAX, u64::MAX);
    for params in every_model() {
        let model = params.name();
        let e = run(&s, &params).unwrap_err();
        assert!(matches!(e, SimError::Overflow(_)), "{model}: {e}");
        assert_eq!(
            e.to_string(),
            "simulated time out of range (0 to 2^64 ps, 213 days) at rank 0 a (send to 1 tag 3)",
            "{model}"
        );
    }
}

#[test]
fn a_huge_calc_overflows_in_every_model_naming_the_calc() {
    let s = schedule(&format!(
        "num_ranks 2\nrank 0 {{\nc: calc {}\n}}\nrank 1 {{\n}}\n",
        u64::MAX / 1000 + 1
    ));
    for params in every_model() {
        let model = params.name();
        let e = run(&s, &params).unwrap_err();
        assert_eq!(
            e.to_string(),
            "simulated time out of range (0 to 2^64 ps, 213 days) at rank 0 c (calc)",
            "{model}"
        );
    }
    // The largest calc that fits still runs, to the picosecond.
    let fits = u64::MAX / 1000;
    let s = schedule(&format!(
        "num_ranks 2\nrank 0 {{\nc: calc {fits}\n}}\nrank 1 {{\n}}\n"
    ));
    for params in every_model() {
        let o = run(&s, &params).unwrap();
        assert_eq!(o.makespan, fits * 1000, "{}", params.name());
    }
}

#[test]
fn latencies_that_overflow_are_errors_too() {
    // A calc ends at 2^64 - 1 ps, then a send starts: o + L cannot be added.
    let s = schedule(&format!(
        "num_ranks 2\nrank 0 {{\nc: calc {}\na: send 1b to 1\na requires c\n}}\n\
         rank 1 {{\nb: recv 1b from 0\n}}\n",
        u64::MAX / 1000
    ));
    for params in every_model() {
        let model = params.name();
        let e = run(&s, &params).unwrap_err();
        assert!(matches!(e, SimError::Overflow(_)), "{model}: {e}");
        assert!(
            e.to_string().ends_with("at rank 0 a (send to 1 tag 0)"),
            "{model}: {e}"
        );
    }
}

fn loggops(g_per_byte: f64) -> ModelParams {
    ModelParams::LogGops(LogGopsParams {
        G: g_per_byte,
        S: u64::MAX,
        ..LogGopsParams::default()
    })
}

#[test]
fn loggops_per_byte_costs_keep_their_fraction() {
    // The receiver is busy for (s-1)·G, rounded to the nearest picosecond once.
    let s = pair(GIB, GIB);
    for (g, expected) in [
        (0.4, 429_496_729u64),  // (2^30 - 1) · 0.4 = 429,496,729.2
        (1.4, 1_503_238_552),   // 1,503,238,552.2
        (20.0, 20 * (GIB - 1)), // 400 Gbit/s: exact
        (0.8, 858_993_458),     // 10 Tbit/s: 858,993,458.4
    ] {
        let o = run(&s, &loggops(g)).unwrap();
        assert_eq!(o.finish, vec![0, expected], "G = {g} ps/B");
    }
}

#[test]
fn hockney_per_byte_costs_keep_their_fraction() {
    // T(m) = alpha + beta·m; one message, the receiver finishes at it.
    let s = pair(GIB, GIB);
    for (beta, expected) in [
        (0.4, 429_496_730u64), // 2^30 · 0.4 = 429,496,729.6
        (1.4, 1_503_238_554),  // 1,503,238,553.6
        (20.0, 20 * GIB),
    ] {
        let p = ModelParams::Hockney(HockneyParams {
            alpha: 1_000,
            beta,
            common: Common::default(),
        });
        let o = run(&s, &p).unwrap();
        assert_eq!(
            o.finish,
            vec![expected, 1_000 + expected],
            "beta = {beta} ps/B"
        );
    }
}

#[test]
fn per_byte_costs_beyond_the_range_are_refused() {
    let e = run(&pair(1, 1), &loggops(5e9)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "model loggops: parameter `G` must be below 2^32 ps per byte, got 5000000000"
    );
}

#[test]
fn a_receive_smaller_than_its_message_is_a_truncation_in_every_model() {
    let s = pair(16, 8);
    for params in every_model() {
        let model = params.name();
        let e = run(&s, &params).unwrap_err();
        assert!(matches!(e, SimError::Truncated { .. }), "{model}: {e}");
        assert_eq!(
            e.to_string(),
            "message truncated: rank 0 a (send to 1 tag 3) sends 16 B, \
             but rank 1 b (recv from 0 tag 3) receives 8 B",
            "{model}"
        );
    }
    // A wildcard receive posted first, and a large (rendezvous) message.
    let s = schedule(
        "num_ranks 2\nrank 0 {\nc: calc 100\na: send 100000b to 1 tag 3\na requires c\n}\n\
         rank 1 {\nb: recv 99999b from -1 tag -1\n}\n",
    );
    for params in every_model() {
        let model = params.name();
        let e = run(&s, &params).unwrap_err();
        assert!(
            e.to_string().starts_with(
                "message truncated: rank 0 a (send to 1 tag 3) sends 100000 B, \
                 but rank 1 b (recv from -1 tag -1) receives 99999 B"
            ),
            "{model}: {e}"
        );
    }
}

#[test]
fn a_receive_larger_than_its_message_is_fine() {
    let (small, large) = (pair(8, 8), pair(8, 16));
    for params in every_model() {
        let model = params.name();
        let a = run(&small, &params).unwrap();
        let b = run(&large, &params).unwrap();
        assert_eq!(a.finish, b.finish, "{model}");
    }
}

#[test]
fn loggops_eager_message_into_a_rendezvous_sized_receive() {
    // The receive (100 kB) is above S, the message (0 B) is eager: its send
    // is done once, when it is sent (the receive's size used to release it twice).
    let s = schedule(
        "num_ranks 2\nrank 0 {\na: send 0b to 1\n}\n\
         rank 1 {\nc: calc 10\nb: recv 100000b from 0\nb requires c\n}\n",
    );
    let p = ModelParams::LogGops(LogGopsParams {
        L: 1_000,
        o: 100,
        g: 1_000,
        G: 0.0,
        O: 0.0,
        S: 1000,
        cpu_cores: None,
    });
    let o = run(&s, &p).unwrap();
    // Sender: o. Receiver: the message arrives at o + L = 1,100 ps while the
    // calc holds the CPU until 10 ns; handled then, it takes o more.
    assert_eq!(o.finish, vec![100, 10_100]);
}
