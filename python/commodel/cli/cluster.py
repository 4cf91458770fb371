"""``commodel cluster``: the emulated TCP cluster (network namespaces, needs root)."""

from __future__ import annotations

import argparse
import json
import sys

HELP = "build, inspect and use an emulated TCP cluster on this machine (needs root)"

DESCRIPTION = """\
An emulated Ethernet cluster built from Linux network namespaces: one namespace per host,
bridges as switches, veth pairs as cables, shaped ports with small buffers (tc tbf, or with
`shaping: serialize` in the spec every frame at line rate through the commodel-serialize
daemon), and an unshaped management network for the MPI launcher. Addresses are in
198.18.0.0/15 and exist only inside the namespaces it creates (named cm-<name>-*).
See docs/cluster.md."""

EPILOG = """\
examples:
  commodel cluster up --spec examples/clusters/two-rack-8.yaml
  commodel cluster status
  commodel cluster exec h0 -- ping -c 3 198.18.0.11
  commodel cluster mpirun -- hostname
  commodel cluster mpirun --ranks-per-host 2 --mca btl_tcp_links 2 -- python3 prog.py
  commodel cluster down --all
  commodel cluster sandbox --spec examples/clusters/two-rack-8.yaml --congestion-control reno \\
      -- commodel cluster mpirun -- python3 prog.py      # also without root
"""

MPIRUN_USAGE = "commodel cluster mpirun [options] [mpirun args] -- CMD [ARG...]"
EXEC_USAGE = "commodel cluster exec [--name NAME] HOST -- CMD [ARG...]"
SANDBOX_USAGE = (
    "commodel cluster sandbox --spec FILE [--name NAME] [--congestion-control NAME] -- CMD [ARG...]"
)


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "cluster",
        help=HELP,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(title="actions", dest="action", metavar="ACTION")

    p_up = sub.add_parser(
        "up",
        help="build a cluster from a spec file",
        description=(
            "Build the cluster described by a spec file (see examples/clusters/). Prints where "
            "its state file is."
        ),
    )
    p_up.add_argument("--spec", "-s", required=True, metavar="FILE", help="cluster spec (YAML)")
    p_up.add_argument(
        "--name",
        metavar="NAME",
        help="cluster name: 1-16 lower-case letters and digits (default: from the spec name)",
    )
    p_up.add_argument(
        "--congestion-control", metavar="NAME", help="override the spec's tcp.congestion_control"
    )
    p_up.add_argument("--json", action="store_true", help="print the state record as JSON")
    p_up.set_defaults(func=run_up)

    p_down = sub.add_parser(
        "down",
        help="remove a cluster and restore the settings changed",
        description="Remove a cluster (its processes, namespaces, links "
        "and state file) and restore the system settings it changed. "
        "Also finds leftovers of a crashed run by name prefix.",
    )
    which = p_down.add_mutually_exclusive_group()
    which.add_argument("--name", metavar="NAME", help="the cluster (default: the only one up)")
    which.add_argument("--all", action="store_true", help="every cluster of ours (cm-*)")
    p_down.set_defaults(func=run_down)

    p_status = sub.add_parser(
        "status",
        help="hosts, links, drop and RTO counters",
        description="Show hosts, addresses, shaped links and their "
        "drop counters (tc -s qdisc), and per-host TCP retransmission "
        "timeouts (nstat TcpExtTCPTimeouts).",
    )
    p_status.add_argument("--name", metavar="NAME", help="the cluster (default: the only one up)")
    p_status.add_argument("--json", action="store_true", help="print JSON")
    p_status.set_defaults(func=run_status)

    p_exec = sub.add_parser(
        "exec",
        help="run a command inside one emulated host",
        usage=EXEC_USAGE,
        prefix_chars="+",
        add_help=False,
    )
    p_exec.add_argument("argv", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p_exec.set_defaults(func=run_exec)

    p_sandbox = sub.add_parser(
        "sandbox", help="up, run a command, down (also without root, in a user namespace)",
        usage=SANDBOX_USAGE, prefix_chars="+", add_help=False,
    )  # fmt: skip
    p_sandbox.add_argument("argv", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p_sandbox.set_defaults(func=run_sandbox)

    p_mpirun = sub.add_parser(
        "mpirun",
        help="launch an Open MPI job over the emulated hosts",
        usage=MPIRUN_USAGE,
        prefix_chars="+",
        add_help=False,
    )
    p_mpirun.add_argument("argv", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p_mpirun.set_defaults(func=run_mpirun)

    parser.set_defaults(func=lambda args: _no_action(parser))
    return parser


def _no_action(parser: argparse.ArgumentParser) -> int:
    parser.print_usage(sys.stderr)
    print(
        "commodel cluster: error: an action is required (up, down, status, exec, mpirun)",
        file=sys.stderr,
    )
    return 2


def run_up(args: argparse.Namespace) -> int:
    from ..cluster import control, state

    record = control.up(args.spec, args.name, args.congestion_control)
    if args.json:
        print(json.dumps(record, indent=1))
    else:
        print(
            f"cluster {record['id']} is up: {len(record['hosts'])} hosts "
            f"({record['hosts'][0]['name']}..{record['hosts'][-1]['name']}) in "
            f"{record['build_seconds']:.2f} s; state {state.state_path(record['id'])}"
        )
        print(
            f"  run `commodel cluster status --name {record['id']}`; remove it with "
            f"`commodel cluster down --name {record['id']}`"
        )
    return 0


def run_down(args: argparse.Namespace) -> int:
    from ..cluster import control

    result = control.down(args.name, args.all)
    if not result["removed"]:
        print("no emulated cluster of ours was up")
    for item in result["removed"]:
        print(
            f"removed cluster {item['cluster']}: {len(item['namespaces'])} namespaces, "
            f"{item['processes']} processes stopped"
        )
    for setting in result["restored"]:
        print(f"restored {setting}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    from ..cluster import control

    record = control.status(args.name)
    if args.json:
        print(json.dumps(record, indent=1))
    else:
        sys.stdout.write(control.format_status(record))
    return 0


def _exec_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="commodel cluster exec",
        usage=EXEC_USAGE,
        allow_abbrev=False,
        description="Run CMD inside the namespace of emulated host HOST, with the host name "
        "set to HOST; exits with CMD's exit code.",
    )
    parser.add_argument("--name", metavar="NAME", help="the cluster (default: the only one up)")
    parser.add_argument("host", metavar="HOST", help="an emulated host, e.g. h0")
    return parser


def _split_command(argv: list[str]) -> tuple[list[str], list[str]]:
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def _options_and_command(
    parser: argparse.ArgumentParser, argv: list[str], usage: str, keep_extra: bool = False
) -> tuple[argparse.Namespace, list[str]] | None:
    """``[options] -- CMD [ARG...]`` of exec, mpirun and sandbox: our options (with
    ``keep_extra``, the ones we do not know are kept in order in ``ns.extra``, for mpirun)
    and the command; None when help was asked for (and printed)."""
    from ..cluster.util import ClusterError

    before, command = _split_command(argv)
    if any(a in ("-h", "--help") for a in before):
        parser.print_help()
        return None
    ns, extra = parser.parse_known_args(before)
    if extra and not keep_extra:
        raise ClusterError(f"unexpected arguments {' '.join(extra)!r}; usage: {usage}")
    ns.extra = extra
    if not command:
        raise ClusterError(f"no command given (write it after `--`); usage: {usage}")
    return ns, command


def run_exec(args: argparse.Namespace) -> int:
    from ..cluster import control

    parsed = _options_and_command(_exec_parser(), args.argv, EXEC_USAGE)
    if parsed is None:
        return 0
    ns, command = parsed
    return control.exec_in_host(ns.name, ns.host, command)


def _mpirun_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="commodel cluster mpirun",
        usage=MPIRUN_USAGE,
        allow_abbrev=False,
        description="Launch CMD with Open MPI over the emulated hosts: mpirun runs in the "
        "controller namespace, daemons and ranks in the host namespaces (via a launcher "
        "agent standing in for ssh), out-of-band traffic on the management network and MPI "
        "messages over TCP on the shaped data network. Ranks are placed in blocks: rank r "
        "runs on host r // k. Arguments not listed here go to mpirun unchanged (e.g. "
        "-np 4, --mca btl_tcp_links 2); an --mca key you give replaces ours.",
    )
    parser.add_argument("--name", metavar="NAME", help="the cluster (default: the only one up)")
    parser.add_argument(
        "--ranks-per-host",
        "-k",
        type=int,
        default=1,
        metavar="K",
        help="ranks on each host, sharing its NIC (default 1)",
    )
    parser.add_argument(
        "--hosts", type=int, metavar="N", help="use only the first N hosts (default all)"
    )
    parser.add_argument(
        "--no-rt",
        action="store_true",
        help="do not run ranks under SCHED_RR nor raise ksoftirqd (noisier timings)",
    )
    parser.add_argument(
        "--mpirun",
        metavar="PATH",
        help="the mpirun to use (default: $COMMODEL_MPIRUN or mpirun on PATH)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the mpirun command only")
    return parser


def run_mpirun(args: argparse.Namespace) -> int:
    from ..cluster import control

    parsed = _options_and_command(_mpirun_parser(), args.argv, MPIRUN_USAGE, keep_extra=True)
    if parsed is None:
        return 0
    ns, command = parsed
    return control.mpirun(
        ns.name,
        command,
        user_args=ns.extra,
        ranks_per_host=ns.ranks_per_host,
        hosts=ns.hosts,
        realtime=not ns.no_rt,
        mpirun_path=ns.mpirun,
        dry_run=ns.dry_run,
    )


def _sandbox_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="commodel cluster sandbox", usage=SANDBOX_USAGE, allow_abbrev=False,
        description="Bring a cluster up, run CMD (with COMMODEL_CLUSTER set to its name; use "
        "`commodel cluster exec/mpirun/status` inside it), then bring the cluster down, "
        "whatever happens; exits with CMD's exit code. Without root, all of it runs in a "
        "private user, network and mount namespace: only the congestion controls the "
        "machine allows (often reno and bbr) are available, and ranks run without SCHED_RR.",
    )  # fmt: skip
    parser.add_argument("--spec", "-s", required=True, metavar="FILE", help="cluster spec (YAML)")
    parser.add_argument("--name", metavar="NAME", help="cluster name (default: from the spec)")
    parser.add_argument(
        "--congestion-control", metavar="NAME", help="override the spec's tcp.congestion_control"
    )
    return parser


def run_sandbox(args: argparse.Namespace) -> int:
    from ..cluster import control

    parsed = _options_and_command(_sandbox_parser(), args.argv, SANDBOX_USAGE)
    if parsed is None:
        return 0
    ns, command = parsed
    return control.sandbox(ns.spec, command, ns.name, ns.congestion_control)
