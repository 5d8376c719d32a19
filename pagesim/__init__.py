"""pagesim: exact, fast simulation of TLBs, page walks and page faults."""

__version__ = "0.1.0"

from .costs import summary  # noqa: E402
from .layout import Layout, Region, pmap  # noqa: E402
from .machines import Costs, Machine, PageWalkCache, Structure, Walker, machine, machines, reach_table  # noqa: E402
from .memory import OutOfMemory, PhysicalMemory  # noqa: E402
from .pressure import Ram  # noqa: E402
from .simulate import simulate  # noqa: E402
from .sweep import sweep  # noqa: E402
from .units import format_size, parse_size  # noqa: E402
from .workloads import workload  # noqa: E402

__all__ = [
    "Costs",
    "Layout",
    "Machine",
    "OutOfMemory",
    "PageWalkCache",
    "PhysicalMemory",
    "Ram",
    "Region",
    "Structure",
    "Walker",
    "format_size",
    "machine",
    "machines",
    "parse_size",
    "pmap",
    "reach_table",
    "simulate",
    "summary",
    "sweep",
    "workload",
]
