"""Trace readers: lackey, din and hex round-trip, stream in chunks, and reject malformed lines
with the file and line number; the real lackey sample runs through simulate."""
import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pagesim
from pagesim.traces import TraceFormatError, detect_format, read_trace

SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "traces" / "ls-lackey.txt.gz"


def write(path, fmt, addrs, kinds):
    lines = ["==1== Lackey, an example Valgrind tool"] if fmt == "lackey" else ["# a trace"] if fmt == "hex" else []
    for a, k in zip(addrs, kinds):
        if fmt == "lackey":
            lines.append(f"I  {a:08x},4" if k else f" {'LSM'[a % 3]} {a:08x},8")
        elif fmt == "din":
            lines.append(f"{2 if k else a % 2} {a:x}")
        else:
            lines.append(f"0x{a:x}")
    path.write_text("\n".join(lines) + "\n")


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["lackey", "din", "hex"]), st.lists(st.tuples(st.integers(0, 2**48), st.booleans()), min_size=1, max_size=60),
       st.sampled_from([1, 3, 1 << 20]), st.booleans())
def test_round_trip(tmp_path_factory, fmt, items, chunk, compress):
    d = tmp_path_factory.mktemp("t")
    addrs = [a for a, _ in items]
    kinds = [int(k) if fmt != "hex" else 0 for _, k in items]
    p = d / "t.txt"
    write(p, fmt, addrs, kinds)
    if compress:
        gz = d / "t.txt.gz"
        gz.write_bytes(gzip.compress(p.read_bytes()))
        p = gz
    assert detect_format(p) == fmt
    tr = read_trace(p)
    got_a, got_k = [], []
    for a, k in tr.chunks(chunk=chunk):
        assert a.size <= chunk
        got_a += a.tolist()
        got_k += [0] * a.size if k is None else k.tolist()
    assert got_a == addrs and got_k == kinds
    assert tr.n_accesses == len(addrs) and tr.instr_accesses == sum(kinds)
    data = read_trace(p, instructions=False) if sum(kinds) < len(kinds) else None
    if data is not None:
        assert [x for c, _ in data.chunks(chunk=chunk) for x in c.tolist()] == [a for a, k in zip(addrs, kinds) if not k]


@pytest.mark.parametrize("fmt,bad,expect", [
    ("lackey", " X 0400,8", "line 3: expected 'I  addr,size'"),
    ("din", "7 1234", "line 3: expected 'label address'"),
    ("hex", "0xZZ", "line 3: expected one hex address"),
    ("hex", "ffffffffffffffff", "line 3: address 0xffffffffffffffff is beyond 2\\*\\*63-1"),
])
def test_malformed_line_names_file_and_line(tmp_path, fmt, bad, expect):
    p = tmp_path / "bad.txt"
    write(p, fmt, [4096], [0])
    lines = p.read_text().splitlines()
    if fmt == "din":
        lines = ["0 1000", "1 2000"]
    elif fmt == "lackey":
        lines = lines[:2]
    else:
        lines = lines[:2]
    p.write_text("\n".join(lines + [bad]) + "\n")
    with pytest.raises(TraceFormatError, match=f"bad.txt, {expect}"):
        read_trace(p, format=fmt)


def test_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="is not a file"):
        read_trace(tmp_path / "none.txt")
    p = tmp_path / "x.txt"
    p.write_text("0x1000\n")
    with pytest.raises(ValueError, match="format='vcd' is not allowed"):
        read_trace(p, format="vcd")
    p.write_text("\n# only a comment\n")
    with pytest.raises(TraceFormatError, match="holds no accesses"):
        read_trace(p)


def test_trace_equals_the_same_addresses_in_memory(tmp_path):
    rng = np.random.default_rng(3)
    addrs = (0x7F0000000000 + rng.integers(0, 64 << 20, 5000)).tolist()
    kinds = rng.integers(0, 2, 5000).tolist()
    p = tmp_path / "t.txt"
    write(p, "din", addrs, kinds)
    tr = read_trace(p)
    lay = tr.covering_layout("4K")
    a = pagesim.simulate("skylake", tr, page_size="4K", chunk_size=777)
    b = pagesim.simulate("skylake", addresses=np.array(addrs, dtype=np.uint64), kinds=np.array(kinds), layout=lay)
    for v in ("walks", "hits", "misses", "faults", "walk_refs"):
        assert (a[v].values == b[v].values).all(), v


@pytest.mark.skipif(not SAMPLE.is_file(), reason="the sample trace is not in this checkout")
def test_real_sample_runs_for_two_page_sizes():
    tr = read_trace(SAMPLE)
    assert tr.format == "lackey" and tr.n_accesses == 773_752 and tr.instr_accesses == 570_056
    small = pagesim.simulate("skylake", tr, page_size="4K")
    huge = pagesim.simulate("skylake", tr, page_size="2M")
    assert int(small["accesses"].sum()) == int(huge["accesses"].sum()) == 773_752
    assert int(huge["faults"].sum()) < int(small["faults"].sum())
    assert int(small["accesses"].sel(side="instr").sum()) == 570_056
