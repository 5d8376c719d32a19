"""Write the otter-grader master notebooks in exercises/masters/ from the specs below.

The masters are the source `otter assign` reads (``pagesim exercises build``); this script is how
they are written, so edit a question here and rerun ``python exercises/make_masters.py``
(tests/test_exercises.py checks the committed masters equal its output). Cell ids are derived from
the assignment and position, so rerunning gives the same notebooks.

Format (otter-grader 7): a raw ``# ASSIGNMENT CONFIG`` cell; each question between raw
``# BEGIN QUESTION`` / ``# END QUESTION`` cells; a solution cell inside a raw ``# BEGIN SOLUTION``
block whose solution lines carry a ``# SOLUTION`` suffix (both are needed, or the answer leaks into
the student version); test cells between ``# BEGIN TESTS`` / ``# END TESTS``: public tests check the
form of an answer (0 points, feedback through ``grader.check``), hidden tests compare it with the
answer pagesim computes for the student's seed (the points).
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
MASTERS = HERE / "masters"


def raw(src):
    return ("raw", src)


def md(src):
    return ("markdown", src)


def code(src):
    return ("code", src)


def config(name):
    return raw(f"""# ASSIGNMENT CONFIG
name: {name}
init_cell: true
check_all_cell: true
export_cell: false
run_tests: true
generate: true
tests:
  files: false
  ok_format: true""")


def setup(key, title, intro):
    return [
        md(f"# {title}\n\n{intro}\n\n"
           "**Your variant.** Put your student id in the next cell and run it: the id picks your machine, "
           "page size, working set and addresses, so your answers are your own. Do not change it after "
           "you start (the grader reads it from your notebook and recomputes your answers with pagesim).\n\n"
           "Answer each question in its cell, replacing the `...`. `grader.check(\"q1\")` checks the *form* of "
           "your answer (a number, in range); the values are graded after you submit. Written answers "
           "are read by your instructor."),
        code('STUDENT_ID = "change-me@example.edu"   # your student id (or an int seed your instructor gave you)'),
        code(f"import pagesim\nfrom pagesim.exercises import Sheet\n\nsheet = Sheet(\"{key}\", STUDENT_ID)\n"
             "print(\"your seed:\", sheet.seed)"),
    ]


def public(test, message):
    return code(f'""" # BEGIN TEST CONFIG\npoints: 0\nfailure_message: {message}\n""" # END TEST CONFIG\n{test}')


def hidden(test, points=1):
    return code(f'""" # BEGIN TEST CONFIG\npoints: {points}\nhidden: true\n""" # END TEST CONFIG\n{test}')


def question(name, prompt, pre, solution, tests, points=None):
    """An autograded question: prompt (markdown), ``pre`` code shown to students, solution, tests."""
    pts = sum(int(t[1].split("points: ")[1].split("\n")[0]) for t in tests)
    cells = [raw(f"# BEGIN QUESTION\nname: {name}\npoints: {points if points is not None else pts}"), md(prompt)]
    cells += [code(p) for p in pre]
    cells += [raw("# BEGIN SOLUTION"), code(solution), raw("# END SOLUTION"), raw("# BEGIN TESTS")]
    cells += tests
    cells += [raw("# END TESTS"), raw("# END QUESTION")]
    return cells


def manual(name, points, prompt, answer, rubric):
    return [raw(f"# BEGIN QUESTION\nname: {name}\nmanual: true\npoints: {points}"), md(prompt),
            raw("# BEGIN SOLUTION"), md(f"**Model answer.** {answer}\n\n**Rubric ({points} points).**\n{rubric}"),
            raw("# END SOLUTION"), raw("# END QUESTION")]


def exact(key, var, points=1):
    return hidden(f'from pagesim.exercises import correct\nassert correct("{key}", STUDENT_ID, "{var}", {var})', points)


def form(var, lo=0, hi=None, integer=True):
    kind = "an int" if integer else "a number"
    rng = f" between {lo} and {hi}" if hi is not None else f" of at least {lo}"
    return public(f"from pagesim.exercises import plausible\nassert plausible({var}, {lo}, {hi}, integer={integer})",
                  f"{var} should be {kind}{rng}")


# ----------------------------------------------------------------------------------------------

A00 = [
    config("00_basics"),
    *setup("00", "Assignment 00 · Pages, TLBs and page walks",
           "Goes with `notebooks/00_basics.ipynb`. Four autograded questions (index bits, TLB reach, walk "
           "references, a first simulation) and one written answer about the notebook's walks-per-access "
           "figure. About 30 minutes."),
    *question("q1", "**Q1 (prediction, by hand).** Read your question, work out both indices on paper (write "
              "the address in binary, or shift and mask), then check them with `translate`.",
              ['sheet.show("q1")\np1 = sheet.params("q1")'],
              "a = p1[\"address\"]  # SOLUTION\n"
              "bits = pagesim.machine(p1[\"machine\"]).walker.level_bits  # SOLUTION\n"
              "shift = pagesim.machine(p1[\"machine\"]).walker.base_shift  # SOLUTION\n"
              "q1_top = (a >> (shift + sum(bits[1:]))) & ((1 << bits[0]) - 1)  # SOLUTION\n"
              "q1_leaf = (a >> shift) & ((1 << bits[-1]) - 1)  # SOLUTION\n"
              "# check: pagesim.explain.translate(p1[\"machine\"], p1[\"address\"])\n"
              "q1_top, q1_leaf",
              [form("q1_top", 0, 4095), form("q1_leaf", 0, 4095), exact("00", "q1_top"), exact("00", "q1_leaf")]),
    *question("q2", "**Q2 (prediction).** The reach of a TLB structure is what its entries cover. Compute both "
              "reaches in bytes, then check with `m.reach(page, structure=...)`.",
              ['sheet.show("q2")\np2 = sheet.params("q2")\n'
               'm2 = pagesim.machine(p2["machine"]).replace_structure(p2["structure"], entries=p2["entries"])'],
              "q2_reach_base = p2[\"entries\"] * m2.base_page  # SOLUTION\n"
              "q2_reach_huge = p2[\"entries\"] * p2[\"huge_page\"]  # SOLUTION\n"
              "q2_reach_base, q2_reach_huge",
              [form("q2_reach_base", 1), form("q2_reach_huge", 1), exact("00", "q2_reach_base"), exact("00", "q2_reach_huge")]),
    *question("q3", "**Q3 (prediction).** Count the levels a walk reads down to the entry that holds the "
              "translation. (A huge page's translation sits higher in the tree.)",
              ['sheet.show("q3")\np3 = sheet.params("q3")'],
              "m3 = pagesim.machine(p3[\"machine\"])  # SOLUTION\n"
              "q3_refs_base = len(m3.walker.level_bits)  # SOLUTION\n"
              "q3_refs_huge = m3.walker.leaf_refs(p3[\"huge_page\"])  # SOLUTION\n"
              "q3_refs_base, q3_refs_huge",
              [form("q3_refs_base", 1, 6), form("q3_refs_huge", 1, 6), exact("00", "q3_refs_base"), exact("00", "q3_refs_huge")]),
    *question("q4", "**Q4 (computation with pagesim).** Run the simulation your question gives and compute walks "
              "per access. Before running: is your working set inside or beyond the largest TLB's reach?",
              ['sheet.show("q4")\np4 = sheet.params("q4")'],
              "ds4 = pagesim.simulate(p4[\"machine\"], \"random\", working_set=p4[\"working_set\"], accesses=p4[\"accesses\"], page_size=p4[\"page_size\"], seed=p4[\"seed\"])  # SOLUTION\n"
              "q4_walks_per_access = float(ds4[\"walks\"].sum()) / p4[\"accesses\"]  # SOLUTION\n"
              "q4_walks_per_access",
              [form("q4_walks_per_access", 0, 1, integer=False), exact("00", "q4_walks_per_access", 2)]),
    *manual("q5", 2, "**Q5 (interpreting a figure).** In `notebooks/00_basics.ipynb`, section 3 plots walks per "
            "access against the working set for 4 KB and 2 MB pages on Skylake. Where does each curve rise, and "
            "why there? What would move the 4 KB knee to the right?",
            "The 4 KB curve rises once the working set passes the STLB's 4 KB reach (1536 x 4 KiB = 6 MiB): "
            "beyond it most random accesses miss every TLB level and walk. The 2 MB curve stays near zero across "
            "the plotted range because the same 1536 entries cover 3 GiB with 2 MB pages (and the L1 holds 32 "
            "2 MB entries, 64 MiB). The knee sits at entries x page size, so it moves right with more STLB "
            "entries or with larger pages (by the page-size ratio, 512x from 4K to 2M).",
            "- 1 point: the knee is placed at the TLB reach (entries x page size), with the 4 KB figure (about 6 MiB) "
            "and the reason (accesses beyond reach miss and walk).\n"
            "- 1 point: 2 MB pages keep walks low because reach grows by the page-size ratio; names a way to move "
            "the knee (more entries, larger pages).\n- No point for 'bigger is faster' without reach."),
]

ASSIGNMENTS = {"00_basics": A00}


def notebook(key, cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    for i, (kind, src) in enumerate(cells):
        maker = {"raw": nbformat.v4.new_raw_cell, "markdown": nbformat.v4.new_markdown_cell,
                 "code": nbformat.v4.new_code_cell}[kind]
        c = maker(src)
        c.id = f"ex{key[:2]}-{i:02d}"
        nb.cells.append(c)
    return nb


def write(out: Path = MASTERS) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, cells in ASSIGNMENTS.items():
        p = out / f"{key}.ipynb"
        nbformat.write(notebook(key, cells), p)
        paths.append(p)
    return paths


if __name__ == "__main__":
    for p in write(Path(sys.argv[1]) if len(sys.argv) > 1 else MASTERS):
        print(p)
