"""Results to files and back: ``save(ds, path)`` writes a simulation's Dataset as netCDF (``.nc``,
through h5netcdf) or zarr (``.zarr``, a directory), ``load(path)`` reads it back identical
(``xarray.testing.assert_identical``: values, dimensions, coordinates, every attribute).

Both formats need the ``export`` extra (``pip install "pagesim[export]"``: h5netcdf and zarr). A
file is written whole or not at all: to a temporary name beside it, renamed into place at the end.
An existing file or directory is replaced only with ``overwrite=True``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.check import check_bool, check_result
from ..core.files import probe_folder

if TYPE_CHECKING:
    import xarray as xr

FORMATS = {".nc": "netCDF (h5netcdf)", ".zarr": "zarr"}
ENGINES = {".nc": "h5netcdf", ".zarr": "zarr"}  # the module each format needs


class FolderNotWritable(OSError):
    """:func:`destination`'s folder takes no new file; ``reason`` says why, without the path."""

    def __init__(self, errno_, message, reason):
        super().__init__(errno_, message)
        self.reason = reason


def _kind(path) -> tuple[Path, str]:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path={path!r}: give a file name ending in {' or '.join(FORMATS)}")
    p = Path(path)
    if p.suffix not in FORMATS:
        raise ValueError(f"path={str(path)!r}: the name must end in .nc (netCDF, through h5netcdf) or .zarr (a zarr store)")
    return p, p.suffix


def _need(suffix: str) -> None:
    module = ENGINES[suffix]
    if importlib.util.find_spec(module) is None:
        raise ModuleNotFoundError(f"{FORMATS[suffix]} needs {module}: pip install 'pagesim[export]'")


def destination(path, overwrite: bool = False) -> tuple[Path, str]:
    """The file :func:`save` would write and its kind, checked as it checks them: the name, the
    library the format needs, an existing file (FileExistsError without ``overwrite``) and the
    folder. A caller that runs something long first checks here before it starts."""
    p, suffix = _kind(path)
    check_bool("overwrite", overwrite)
    _need(suffix)
    try:
        exists = p.exists()
    except OSError as e:  # a folder without search permission
        raise FolderNotWritable(e.errno, f"path={str(path)!r}: cannot reach {p}: {e.strerror or e}", reason=f"cannot reach {p}: {e.strerror or e}") from None
    if exists and not overwrite:
        raise FileExistsError(f"{p} exists: pass overwrite=True to replace it")
    if not p.parent.is_dir():
        where = f"{p.parent} is not a folder" if p.parent.exists() else f"the folder {p.parent} does not exist"
        raise FileNotFoundError(f"path={str(path)!r}: {where}")
    # a folder that takes no new file (no permission, a read-only file system, /proc): found by
    # making one there, as save() will
    try:
        probe_folder(p.parent)
    except OSError as e:
        raise FolderNotWritable(
            e.errno, f"path={str(path)!r}: cannot write a file in {p.parent}: {e.strerror or e}", reason=f"cannot write a file in {p.parent}: {e.strerror or e}"
        ) from None
    return p, suffix


def save(ds: "xr.Dataset", path, overwrite: bool = False) -> Path:
    """Write ``ds`` to ``path`` (``.nc``: netCDF through h5netcdf; ``.zarr``: a zarr store);
    returns the path. ``load(path)`` gives back an identical Dataset."""
    check_result("save", ds)
    p, suffix = destination(path, overwrite)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    try:
        if suffix == ".nc":
            ds.to_netcdf(tmp, engine="h5netcdf", invalid_netcdf=True)
        else:
            ds.to_zarr(tmp, mode="w", consolidated=True, zarr_format=2)  # version 2: its spec has fixed-length strings
        if p.is_dir():
            shutil.rmtree(p)
        os.replace(tmp, p)
    except OSError as e:  # a full disk: h5py's and zarr's own words name neither the file nor plainly the cause
        why = os.strerror(e.errno) if e.errno else str(e)
        raise OSError(e.errno, f"cannot write {p}: {why}") from e
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()
    return p


def load(path) -> "xr.Dataset":
    """The Dataset :func:`save` wrote to ``path``, read whole into memory."""
    import xarray as xr  # deferred: xarray is slow to import; only results need it

    p, suffix = _kind(path)
    _need(suffix)
    if not p.exists():
        raise FileNotFoundError(f"path={str(path)!r}: there is no such {FORMATS[suffix]} file")
    if suffix == ".nc":
        with xr.open_dataset(p, engine="h5netcdf") as ds:
            return ds.load()
    with xr.open_zarr(p, consolidated=True) as ds:
        return ds.load()
