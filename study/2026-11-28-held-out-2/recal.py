"""Calibrate again the draws of a study directory (the cluster of each spec.yaml), keeping
their workload measurements: DIR/<draw>/cal.duckdb and platform.yaml anew."""
import os, sys, time, shutil, subprocess
import yaml
from commodel.study.runner import cluster_id, _commodel, PY
from commodel.validate.calibration import cluster_up

def log(msg):
    print(time.strftime("%H:%M:%S"), msg, flush=True)

for workdir in sys.argv[1:]:
    spec = yaml.safe_load(open(os.path.join(workdir, "spec.yaml")))
    name = cluster_id(spec["name"])
    for f in ("cal.duckdb", "cal.duckdb.wal", "platform.yaml"):
        p = os.path.join(workdir, f)
        if os.path.exists(p):
            os.remove(p)
    subprocess.run([PY, "-m", "commodel", "cluster", "down", "--name", name], capture_output=True)
    with cluster_up(os.path.join(workdir, "spec.yaml"), name, log=log):
        start = time.monotonic()
        _commodel(["cluster", "mpirun", "--name", name, "--", PY, "-m", "commodel", "calibrate",
                   "--db", os.path.join(workdir, "cal.duckdb"), "--quiet",
                   "-o", os.path.join(workdir, "platform.yaml")],
                  os.path.join(workdir, "calibrate.log"), log)
        log(f"{workdir}: calibrated in {time.monotonic() - start:.0f} s")
