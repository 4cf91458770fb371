#!/bin/bash
# The platform of this run: the one calibrated on two-rack-16-serial on 2026-11-23
# (../2026-11-23-advise-two-rack-16-serial-cpu/platform.yaml), with the cluster spec's port
# buffers per tree height (what `calibrate --buffer` writes: network.buffer, tcp.rto_rule
# buffer) so that tcpflow predicts tail drops at full ports.
set -eu
python3 - <<'PY'
import yaml
from commodel.validate.calibration import tree_buffers
doc = yaml.safe_load(open("../2026-11-23-advise-two-rack-16-serial-cpu/platform.yaml"))
doc["network"]["buffer"] = tree_buffers("../../examples/clusters/two-rack-16-serial.yaml")
doc["tcp"]["rto_rule"] = "buffer"
doc["description"] += "; network.buffer and tcp.rto_rule buffer added (platform.sh)"
yaml.safe_dump(doc, open("platform.yaml", "w"), sort_keys=False)
PY
