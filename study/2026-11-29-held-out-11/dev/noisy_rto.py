"""In how many of the noisy runs ``predict`` takes its median from (seeds 1..20, the
platform's tcp.spread) tcpflow predicts a timeout, per schedule:

    python noisy_rto.py PLATFORM.yaml SCHEDULE.goal [...]
    # e.g. a study draw's platform.yaml and schedules/alltoall-b-*.goal
"""

import os
import sys

from commodel.platform import load_platform
from commodel.prediction import predict
from commodel.schedules import read_goal
from commodel.spread import sigma_of


def main(platform_path: str, paths: list[str]) -> None:
    platform = load_platform(platform_path)
    sigma = sigma_of(platform)
    for path in paths:
        sched = read_goal(path)
        plain = predict(sched, platform, "tcpflow", record_messages=False, noise=0)
        runs = [
            predict(
                sched,
                platform,
                "tcpflow",
                record_messages=False,
                jitter={"sigma": sigma, "seed": k},
            )
            for k in range(1, 21)
        ]
        late = sum(1 for r in runs if r.rto_events)
        print(
            f"{os.path.basename(path)}: without noise {plain.makespan_s:.3f} s, "
            f"{len(plain.rto_events)} rto; with noise (sigma {sigma}) a timeout in {late}/20 runs"
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
