"""pagesim: exact, fast simulation of TLBs, page walks and page faults."""

from .core.version import __version__ as __version__  # pagesim.__version__


def _starting_the_command() -> bool:
    """Whether this import is the ``pagesim`` command starting: ``python -m pagesim`` (its package
    imported while ``sys.argv[0]`` is still '-m') or the console script named pagesim."""
    import os
    import sys

    orig = getattr(sys, "orig_argv", [])
    if sys.argv[:1] == ["-m"] and ("-mpagesim" in orig or any(a == "-m" and b == "pagesim" for a, b in zip(orig, orig[1:]))):
        return True
    script = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    return os.path.basename(script).removesuffix(".exe") in ("pagesim", "pagesim-script.py")


try:  # numba, numpy and xarray take a second or more to import
    from .core.units import format_size, parse_size
    from .engine.export import load, save
    from .engine.simulate import simulate
    from .engine.sweep import sweep
    from .model.costs import summary
    from .model.layout import Layout, Region, pmap
    from .model.machines import Costs, Machine, PageWalkCache, Structure, Walker, machine, machines, reach_table
    from .sources.workloads import workload
    from .system.memory import OutOfMemory, PhysicalMemory
    from .system.pressure import Ram
except KeyboardInterrupt:
    if not _starting_the_command():
        raise
    import sys

    print("pagesim: interrupted", file=sys.stderr)
    raise SystemExit(130) from None

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
    "load",
    "machine",
    "machines",
    "parse_size",
    "pmap",
    "reach_table",
    "save",
    "simulate",
    "summary",
    "sweep",
    "workload",
]
