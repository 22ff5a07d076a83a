"""Search spaces: declarative RocksDB parameters with host-scaled ranges and constraints."""

from search_spaces.config import Config, Setting
from search_spaces.constraints import Constraint
from search_spaces.context import Context, GiB, KiB, MiB, host_cores, host_cpu, host_ram_bytes
from search_spaces.errors import SpaceError
from search_spaces.parameters import CategoricalParam, FloatParam, IntParam, Parameter
from search_spaces.space import SearchSpace, load_space, preset_names

__all__ = [
    "CategoricalParam",
    "Config",
    "Constraint",
    "Context",
    "FloatParam",
    "GiB",
    "IntParam",
    "KiB",
    "MiB",
    "Parameter",
    "SearchSpace",
    "Setting",
    "SpaceError",
    "host_cores",
    "host_cpu",
    "host_ram_bytes",
    "load_space",
    "preset_names",
]
