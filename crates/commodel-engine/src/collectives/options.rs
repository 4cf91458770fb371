//! The options of the collective generators, declared once: [`CollectiveOptions`] holds
//! them, [`OPTIONS`] describes each (name, kind, range, default, help) for the bindings,
//! the Python API's checks and the `commodel schedule` command line, which are all derived
//! from it.

/// Default segment of `bcast-pipeline`, in bytes.
pub const DEFAULT_PIPELINE_SEGMENT: u64 = 8 * 1024;
/// Default chain fanout of `bcast-chain` and radix of `bcast-knomial`
/// (Open MPI 4.1.4's `coll_tuned_bcast_algorithm_chain_fanout` and
/// `coll_tuned_bcast_algorithm_knomial_radix`).
pub const DEFAULT_FANOUT: u32 = 4;
/// Default first segment of `gather-linear-sync`, in bytes.
pub const DEFAULT_GATHER_SYNC_FIRST_SEGMENT: u64 = 1024;

/// Options of [`generate`](super::generate); each generator reads the fields it needs.
/// [`OPTIONS`] has a row for every field.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveOptions {
    /// Root rank of rooted collectives (gather, scatter, bcast). Default 0.
    pub root: u32,
    /// Seed of `random-pairs`. Default 0.
    pub seed: u64,
    /// Segment size in bytes: `bcast-pipeline` (default 8 KiB), the other
    /// tree bcasts and `allreduce-segmented-ring` (default unsegmented, Open
    /// MPI's forced default), first segment of `gather-linear-sync` (default
    /// 1 KiB). Must be > 0 when given.
    pub segment: Option<u64>,
    /// Number of chains of `bcast-chain`, radix of `bcast-knomial`; default
    /// [`DEFAULT_FANOUT`]. Must be >= 1 (>= 2 for the radix) when given.
    pub fanout: Option<u32>,
    /// Passes d of `random-pairs`. Default 1.
    pub degree: u32,
    /// Number k of sub-gathers of `gather-split`. Default 2.
    pub splits: u32,
    /// Outstanding requests of `alltoall-linear-sync`; 0 = no limit (Open MPI's default).
    /// For `scatter-linear-nb`: every send to a rank that is a multiple of it
    /// is blocking when > 1 (0, Open MPI's default: all nonblocking).
    pub max_requests: u32,
    /// Local reduction cost of allreduce in ns per byte received. Default 0.0 (no calc ops).
    pub reduce_ns_per_byte: f64,
}

impl Default for CollectiveOptions {
    fn default() -> Self {
        let mut opts = CollectiveOptions {
            root: 0,
            seed: 0,
            segment: None,
            fanout: None,
            degree: 0,
            splits: 0,
            max_requests: 0,
            reduce_ns_per_byte: 0.0,
        };
        for spec in OPTIONS {
            (spec.set)(&mut opts, spec.default);
        }
        opts
    }
}

/// The kind of value an option takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// A whole number that fits in 32 bits.
    Whole32,
    /// A whole number that fits in 64 bits.
    Whole64,
    /// A size in bytes (64 bits; the Python API and the command line take units).
    Bytes,
    /// A finite number >= 0.
    Rate,
}

impl OptionKind {
    /// The kind's name as the bindings hand it to Python.
    pub fn name(self) -> &'static str {
        match self {
            OptionKind::Whole32 => "u32",
            OptionKind::Whole64 => "u64",
            OptionKind::Bytes => "bytes",
            OptionKind::Rate => "f64",
        }
    }

    /// The largest value of a whole kind.
    pub fn max(self) -> u64 {
        match self {
            OptionKind::Whole32 => u32::MAX as u64,
            _ => u64::MAX,
        }
    }
}

/// An option's value: not given (the generator's own default), whole, or a rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OptionValue {
    Unset,
    Whole(u64),
    Rate(f64),
}

/// One option: its name (a keyword argument, `--name-with-dashes` on the command line),
/// kind, smallest value, default (`Unset`: the generator decides), command-line metavar and
/// help, and how it is read from and written to [`CollectiveOptions`].
#[derive(Clone, Copy)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub min: u64,
    pub default: OptionValue,
    pub metavar: &'static str,
    pub help: &'static str,
    pub get: fn(&CollectiveOptions) -> OptionValue,
    set: fn(&mut CollectiveOptions, OptionValue),
}

impl std::fmt::Debug for OptionSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptionSpec")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("min", &self.min)
            .field("default", &self.default)
            .finish()
    }
}

fn whole(v: OptionValue) -> u64 {
    match v {
        OptionValue::Whole(x) => x,
        _ => 0,
    }
}

fn whole32(v: OptionValue) -> u32 {
    whole(v) as u32
}

fn some(v: OptionValue) -> Option<u64> {
    match v {
        OptionValue::Whole(x) => Some(x),
        _ => None,
    }
}

fn of(x: Option<u64>) -> OptionValue {
    x.map_or(OptionValue::Unset, OptionValue::Whole)
}

use OptionKind::{Bytes, Rate, Whole32, Whole64};
use OptionValue::{Unset, Whole};

/// Every option, in the order `commodel schedule --help` shows them.
pub static OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        name: "root",
        kind: Whole32,
        min: 0,
        default: Whole(0),
        metavar: "ROOT",
        help: "root rank (default 0)",
        get: |o| Whole(o.root as u64),
        set: |o, v| o.root = whole32(v),
    },
    OptionSpec {
        name: "seed",
        kind: Whole64,
        min: 0,
        default: Whole(0),
        metavar: "SEED",
        help: "random seed, 0 .. 2**64 - 1 (random-pairs; default 0)",
        get: |o| Whole(o.seed),
        set: |o, v| o.seed = whole(v),
    },
    OptionSpec {
        name: "segment",
        kind: Bytes,
        min: 1,
        default: Unset,
        metavar: "BYTES",
        help: "segment size of pipelined algorithms",
        get: |o| of(o.segment),
        set: |o, v| o.segment = some(v),
    },
    OptionSpec {
        name: "degree",
        kind: Whole32,
        min: 1,
        default: Whole(1),
        metavar: "DEGREE",
        help: "passes of random-pairs (default 1)",
        get: |o| Whole(o.degree as u64),
        set: |o, v| o.degree = whole32(v),
    },
    OptionSpec {
        name: "splits",
        kind: Whole32,
        min: 1,
        default: Whole(2),
        metavar: "SPLITS",
        help: "sub-gathers of gather-split (default 2)",
        get: |o| Whole(o.splits as u64),
        set: |o, v| o.splits = whole32(v),
    },
    OptionSpec {
        name: "max_requests",
        kind: Whole32,
        min: 0,
        default: Whole(0),
        metavar: "N",
        help: "outstanding requests of alltoall-linear-sync (default 0: unlimited); \
               scatter-linear-nb: every send to a multiple of N is blocking",
        get: |o| Whole(o.max_requests as u64),
        set: |o, v| o.max_requests = whole32(v),
    },
    OptionSpec {
        name: "fanout",
        kind: Whole32,
        min: 1,
        default: Unset,
        metavar: "K",
        help: "chains of bcast-chain, radix of bcast-knomial (default 4, as Open MPI)",
        get: |o| of(o.fanout.map(u64::from)),
        set: |o, v| o.fanout = some(v).map(|x| x as u32),
    },
    OptionSpec {
        name: "reduce_ns_per_byte",
        kind: Rate,
        min: 0,
        default: OptionValue::Rate(0.0),
        metavar: "NS",
        help: "cost of the reduction in allreduce algorithms (default 0: none)",
        get: |o| OptionValue::Rate(o.reduce_ns_per_byte),
        set: |o, v| {
            o.reduce_ns_per_byte = match v {
                OptionValue::Rate(x) => x,
                OptionValue::Whole(x) => x as f64,
                Unset => 0.0,
            }
        },
    },
];

/// Why an option could not be set.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum OptionError {
    #[error("unknown option '{name}'; options: {valid}")]
    Unknown { name: String, valid: String },
    #[error("{name} must be {expected}, got {got}")]
    Invalid {
        name: &'static str,
        expected: String,
        got: String,
    },
}

impl CollectiveOptions {
    /// Set option `name` to `value`, checked against its row of [`OPTIONS`] (kind and
    /// range; `Unset` only where the default is). The generators check what depends on
    /// the collective.
    pub fn set(&mut self, name: &str, value: OptionValue) -> Result<(), OptionError> {
        let Some(spec) = OPTIONS.iter().find(|s| s.name == name) else {
            return Err(OptionError::Unknown {
                name: name.to_string(),
                valid: OPTIONS
                    .iter()
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        let invalid = |expected: String, got: String| OptionError::Invalid {
            name: spec.name,
            expected,
            got,
        };
        match (spec.kind, value) {
            (_, Unset) if spec.default == Unset => {}
            (Rate, OptionValue::Rate(x)) if x.is_finite() && x >= 0.0 => {}
            (Rate, OptionValue::Whole(_)) => {}
            (Rate, v) => return Err(invalid("finite and >= 0".into(), format!("{v:?}"))),
            (kind, Whole(x)) if kind != Rate && (spec.min..=kind.max()).contains(&x) => {}
            (kind, v) => {
                let expected = format!("a whole number from {} to {}", spec.min, kind.max());
                let got = match v {
                    Whole(x) => x.to_string(),
                    other => format!("{other:?}"),
                };
                return Err(invalid(expected, got));
            }
        }
        (spec.set)(self, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_has_one_row_that_reads_what_it_writes() {
        let mut names: Vec<_> = OPTIONS.iter().map(|s| s.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), OPTIONS.len());
        let d = CollectiveOptions::default();
        assert_eq!(
            (d.degree, d.splits, d.segment, d.fanout),
            (1, 2, None, None)
        );
        for spec in OPTIONS {
            assert_eq!((spec.get)(&d), spec.default, "{}", spec.name);
            let mut o = d.clone();
            let v = match spec.kind {
                Rate => OptionValue::Rate(0.5),
                _ => Whole(spec.min + 3),
            };
            o.set(spec.name, v).unwrap();
            assert_eq!((spec.get)(&o), v, "{}", spec.name);
            assert_ne!(o, d, "{}", spec.name);
        }
    }

    #[test]
    fn out_of_range_is_named() {
        let mut o = CollectiveOptions::default();
        let e = o.set("fanout", Whole(0)).unwrap_err().to_string();
        assert_eq!(
            e,
            "fanout must be a whole number from 1 to 4294967295, got 0"
        );
        let e = o.set("root", Whole(1 << 32)).unwrap_err().to_string();
        assert_eq!(
            e,
            "root must be a whole number from 0 to 4294967295, got 4294967296"
        );
        let e = o.set("degree", Unset).unwrap_err().to_string();
        assert!(e.starts_with("degree must be a whole number from 1"), "{e}");
        let e = o.set("reduce_ns_per_byte", OptionValue::Rate(f64::NAN));
        assert!(e.unwrap_err().to_string().contains("finite and >= 0"));
        let e = o.set("fan_out", Whole(2)).unwrap_err().to_string();
        assert!(
            e.starts_with("unknown option 'fan_out'; options: root, seed,"),
            "{e}"
        );
        assert_eq!(o, CollectiveOptions::default());
    }
}
