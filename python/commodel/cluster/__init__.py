"""The emulated TCP cluster: Linux network namespaces, bridges, veth pairs and tc shapers.

Entry points: :func:`control.up`, :func:`control.down`, :func:`control.status`,
:func:`control.mpirun`, :func:`control.exec_in_host` (the ``commodel cluster`` command),
and :func:`spec.load_spec`. Everything needs root except loading a spec. See docs/cluster.md.
"""

from __future__ import annotations

from .spec import ClusterSpec, load_spec
from .util import ClusterError, NotRootError

__all__ = ["ClusterError", "ClusterSpec", "NotRootError", "load_spec"]
