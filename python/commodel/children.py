"""Child processes that end with the commodel process that started them.

A long run (``calibrate``, ``advise --verify``, ``cluster mpirun``) starts mpirun, which
starts the ranks. Killed with SIGKILL, the parent cannot pass anything on, and mpirun and
its ranks would run on (on the emulated cluster, inside its namespaces). Started with
:func:`die_with_parent` as its ``preexec_fn``, the child gets SIGTERM from the kernel when
its parent dies, however it dies (Linux's ``PR_SET_PDEATHSIG``); mpirun then ends its job.
"""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """``preexec_fn`` of a child: SIGTERM when the parent dies (Linux; elsewhere nothing)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        return
    if os.getppid() == 1:  # the parent died before prctl: end now, as it would have
        os.kill(os.getpid(), signal.SIGTERM)
