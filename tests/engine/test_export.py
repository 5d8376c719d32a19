"""Results to netCDF and zarr files and back, identical; a file written whole or not at all."""

import subprocess
import sys

import pytest
import xarray as xr

import pagesim
from pagesim.engine import export as E

pytest.importorskip("h5netcdf", reason="the export extra is not installed")
pytest.importorskip("zarr", reason="the export extra is not installed")


def _results():
    yield pagesim.simulate("skylake", "random", working_set="4M", accesses=2000)
    yield pagesim.simulate(pagesim.machine("zen4").virtualised("4K"), "random", working_set="64M", accesses=2000)
    yield pagesim.sweep({"page_size": ["4K", "2M"], "working_set": ["1M", "8M"]}, False, machine="skylake", workload="random", accesses=500)


@pytest.mark.parametrize("suffix", [".nc", ".zarr"])
def test_round_trips_identical(tmp_path, suffix):
    for i, ds in enumerate(_results()):
        p = pagesim.save(ds, tmp_path / f"r{i}{suffix}")
        xr.testing.assert_identical(pagesim.load(p), ds)
    assert sorted(x.name for x in tmp_path.iterdir()) == [f"r{i}{suffix}" for i in range(3)]  # no temporary left


def test_errors_name_the_parameter(tmp_path):
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    with pytest.raises(ValueError, match=r"path='.*r.csv': the name must end in .nc"):
        pagesim.save(ds, tmp_path / "r.csv")
    with pytest.raises(TypeError, match="save: ds must be the Dataset a simulation returned"):
        pagesim.save({"a": 1}, tmp_path / "r.nc")
    pagesim.save(ds, tmp_path / "r.nc")
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        pagesim.save(ds, tmp_path / "r.nc")
    pagesim.save(ds, tmp_path / "r.nc", overwrite=True)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        pagesim.save(ds, tmp_path / "no" / "r.nc")
    with pytest.raises(FileNotFoundError, match="no such zarr file"):
        pagesim.load(tmp_path / "none.zarr")


def test_a_failed_write_leaves_nothing(tmp_path, monkeypatch):
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    pagesim.save(ds, tmp_path / "r.nc")
    before = (tmp_path / "r.nc").read_bytes()

    def half_written(self, path, **kw):
        open(path, "wb").write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", half_written)
    with pytest.raises(OSError, match="No space left"):
        pagesim.save(ds, tmp_path / "r.nc", overwrite=True)
    assert [x.name for x in tmp_path.iterdir()] == ["r.nc"] and (tmp_path / "r.nc").read_bytes() == before


def test_a_missing_engine_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(E.importlib.util, "find_spec", lambda name: None)
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    with pytest.raises(ModuleNotFoundError, match=r"zarr needs zarr: pip install 'pagesim\[export\]'"):
        pagesim.save(ds, tmp_path / "r.zarr")


def test_the_command_line_saves_with_out(tmp_path):
    out = tmp_path / "r.nc"
    cmd = [sys.executable, "-m", "pagesim", "simulate", "--machine", "skylake", "--workload", "random", "--working-set", "4M", "--accesses", "1000", "--quiet"]
    r = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip().endswith(f"saved: {out}") and int(pagesim.load(out)["walks"].sum()) > 0
    r = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.strip() == f"pagesim: error: --out {out} exists: add --force to replace it"
    gone = tmp_path / "no-such-folder" / "r.nc"
    r = subprocess.run([*cmd, "--out", str(gone)], capture_output=True, text=True)
    # refused before the simulation runs: nothing printed of a result
    assert r.returncode == 2 and r.stderr.strip() == f"pagesim: error: --out {gone}: the folder {gone.parent} does not exist" and not r.stdout
    # a folder that takes no new file (here /proc/self, which takes none for anyone): refused
    # before the simulation runs too, where it once failed only when the result was written
    r = subprocess.run([*cmd, "--out", "/proc/self/r.nc"], capture_output=True, text=True)
    assert r.returncode == 2 and not r.stdout
    assert r.stderr.strip() == "pagesim: error: --out /proc/self/r.nc: cannot write a file in /proc/self: No such file or directory"


def test_save_refuses_a_folder_that_takes_no_file_and_leaves_nothing(tmp_path):
    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)
    with pytest.raises(E.FolderNotWritable, match=r"path='/proc/self/r.nc': cannot write a file in /proc/self"):
        pagesim.save(ds, "/proc/self/r.nc")
    pagesim.save(ds, tmp_path / "r.nc")
    assert [p.name for p in tmp_path.iterdir()] == ["r.nc"]  # the probe is gone


def test_a_full_disk_is_said_plainly_and_leaves_nothing(tmp_path, monkeypatch):
    """h5py reports a full disk as 'Unable to synchronously create file (file write failed: time =
    ..., buf = 0x...)', naming neither the file nor plainly the cause."""
    import errno

    import xarray as xr

    ds = pagesim.simulate("skylake", "random", working_set="1M", accesses=100)

    def full(self, path, **kw):
        open(path, "wb").close()  # a part written before the disk filled
        raise OSError(errno.ENOSPC, "Unable to synchronously create file (file write failed: time = Mon, buf = 0x55)")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", full)
    with pytest.raises(OSError, match=rf"cannot write {tmp_path / 'r.nc'}: No space left on device") as got:
        pagesim.save(ds, tmp_path / "r.nc")
    assert got.value.errno == errno.ENOSPC and list(tmp_path.iterdir()) == []
