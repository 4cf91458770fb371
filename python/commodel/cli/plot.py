"""``commodel plot --db FILE -o DIR``: plots of the measured campaigns."""

from __future__ import annotations

import argparse
import os

from .common import positive_int

HELP = "plot measurements: o_s, o_r, g against m; b(h), d(h); many-to-one escalations"


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser("plot", help=HELP, description=HELP + ".")
    p.add_argument("--db", required=True, metavar="FILE", help="results database")
    p.add_argument(
        "--campaign", type=positive_int, action="append", metavar="ID", help="campaign(s) to plot"
    )
    p.add_argument("-o", "--output", default=".", metavar="DIR", help="directory for the images")
    p.add_argument("--format", choices=("png", "svg", "pdf"), default="png")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..db import ResultsDB
    from ..fit.assemble import select_campaigns
    from ..report import measure_plots

    os.makedirs(args.output, exist_ok=True)
    written = []
    with ResultsDB(args.db, read_only=True) as db:
        for camp in select_campaigns(db, args.campaign):
            path = os.path.join(args.output, f"campaign{camp.id}-{camp.benchmark}.{args.format}")
            if camp.benchmark == "plogp":
                from ..fit.plogp import fit_plogp

                fit = fit_plogp(db.samples(camp.id), camp.options, ranks=camp.ranks)
                measure_plots.plot_plogp(fit, path, f"PLogP, campaign {camp.id} ({camp.hosts[0]})")
            elif camp.benchmark == "tree":
                from ..fit.tree import fit_tree

                measure_plots.plot_tree(fit_tree(db.samples(camp.id), camp.options), path)
            elif camp.benchmark == "many-to-one":
                from ..fit.manytoone import fit_many_to_one, plot_points, with_rto_excess

                options = with_rto_excess(db, dict(camp.options))
                model = fit_many_to_one(db.samples(camp.id), options)
                measure_plots.plot_many_to_one(plot_points(db.samples(camp.id), model), model, path)
            else:
                continue
            written.append(path)
    for path in written:
        print(path)
    return 0
