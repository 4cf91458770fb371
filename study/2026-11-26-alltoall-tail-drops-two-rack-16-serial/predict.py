"""tcpflow's predictions of Open MPI's linear and pairwise alltoall on 16 ranks with the
backbone ports at 64, 128 and 256 KiB (platform.yaml, its network.buffer changed): the
makespan and the messages a tail drop delays. Usage: python3 predict.py"""

import yaml

import commodel
from commodel.platform import platform_from_dict

doc = yaml.safe_load(open("platform.yaml"))
print("| backbone port | size | algorithm | predicted | messages delayed |")
print("|---:|---:|---|---:|---:|")
for bb in (64, 128, 256):
    doc["network"]["buffer"] = [32768, 32768, 32768, bb * 1024]
    plat = platform_from_dict(doc)
    for kib in (2, 4, 8, 16):
        for name in ("alltoall-basic-linear", "alltoall-pairwise"):
            sched = commodel.collective(name, 16, kib * 1024)
            p = commodel.predict(sched, plat, model="tcpflow")
            print(f"| {bb} KiB | {kib} KiB | {name} | {p.makespan_s * 1e3:.1f} ms | {len(p.rto_events)} |")
