"""Platform files: load, validate and convert to engine parameters.

A module per concern, each importing only those above it:

* :mod:`~commodel.platform.fields` -- :class:`At` (file and field path) and the field checks
  (seconds, rates, sizes, lists) that every value goes through;
* :mod:`~commodel.platform.network` -- the ``network`` section, every topology
  (:data:`TOPOLOGIES`) validated by one function;
* :mod:`~commodel.platform.sections` -- the other sections' dataclasses and validators,
  :data:`SECTIONS` and :func:`register_section`;
* :mod:`~commodel.platform.engine_params` -- the model registry (:func:`register_model`,
  :func:`model_spec`) and each model's conversion to the engine's parameters;
* :mod:`~commodel.platform.loading` -- :class:`Platform`, :func:`platform_from_dict`,
  :func:`load_platform` (YAML files and the built-in platforms).
"""

from __future__ import annotations

from .engine_params import (
    EAGER_ALWAYS,
    MODELS,
    ModelSpec,
    default_model,
    incast_model,
    incast_params,
    model_names,
    model_spec,
    placement_params,
    register_model,
    topology_params,
)
from .fields import (
    At,
    integer,
    mapping,
    number_list,
    rate,
    same_length,
    seconds,
    seconds_per_byte,
    size,
)
from .loading import (
    BUILTIN_DIR,
    FORMAT_VERSION,
    Platform,
    builtin_path,
    builtin_platforms,
    load_platform,
    platform_from_dict,
)
from .network import TOPOLOGIES, BinaryTree, Network, TreeLevels, TreeNetwork, validate_network
from .sections import (
    LMO,
    SECTIONS,
    TCP,
    Escalation,
    Hockney,
    LogGOPS,
    PLogP,
    PLogPTables,
    SectionValidator,
    TcpEfficiency,
    register_section,
)

__all__ = [
    "BUILTIN_DIR",
    "EAGER_ALWAYS",
    "FORMAT_VERSION",
    "LMO",
    "MODELS",
    "SECTIONS",
    "TCP",
    "TcpEfficiency",
    "TOPOLOGIES",
    "At",
    "BinaryTree",
    "Hockney",
    "LogGOPS",
    "ModelSpec",
    "Network",
    "PLogP",
    "Escalation",
    "PLogPTables",
    "Platform",
    "SectionValidator",
    "TreeLevels",
    "TreeNetwork",
    "builtin_path",
    "builtin_platforms",
    "integer",
    "load_platform",
    "mapping",
    "default_model",
    "incast_model",
    "incast_params",
    "model_names",
    "model_spec",
    "number_list",
    "placement_params",
    "platform_from_dict",
    "rate",
    "register_model",
    "register_section",
    "same_length",
    "seconds",
    "seconds_per_byte",
    "size",
    "topology_params",
    "validate_network",
]
