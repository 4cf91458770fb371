#!/bin/bash
# both passes of the target matrix with c7d88f5, one after the other (run.sh of wire-fit)
cd "$(dirname "$0")" || exit 1
bash ../2026-11-27-wire-fit/run.sh 8 > run-8.log 2>&1
COLLS="allreduce bcast allgather alltoall" bash ../2026-11-27-wire-fit/run.sh 16 > run-16.log 2>&1
