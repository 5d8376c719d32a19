"""Write the otter-grader master notebooks in exercises/masters/ from the specs below.

The masters are the source `otter assign` reads (``pagesim exercises build``); this script is how
they are written, so edit a question here and rerun ``python exercises/make_masters.py``
(tests/teaching/test_exercises.py checks the committed masters equal its output). Cell ids are derived from
the assignment and position, so rerunning gives the same notebooks.

Format (otter-grader 7): a raw ``# ASSIGNMENT CONFIG`` cell; each question between raw
``# BEGIN QUESTION`` / ``# END QUESTION`` cells; a solution cell inside a raw ``# BEGIN SOLUTION``
block whose solution lines carry a ``# SOLUTION`` suffix (both are needed, or the answer leaks into
the student version); test cells between ``# BEGIN TESTS`` / ``# END TESTS``: public tests check the
form of an answer (0 points, feedback through ``grader.check``, which says "form OK; graded after
submission" and never "passed": ``pagesim.teaching.exercises.FormChecks``), hidden tests compare it with the
answer pagesim computes for the student's seed (the points). The written questions' model answers
and rubrics are also written to ``exercises/rubrics/NAME.md``. The config declares otter's
``requirements`` (pagesim's dependencies) and ``autograder_files`` (the ``pagesim`` package, which
``pagesim exercises build`` puts beside the master, since pagesim is not on PyPI).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
MASTERS = HERE / "masters"
RUBRICS = HERE / "rubrics"  # the written questions' model answers and rubrics, one Markdown file per assignment


def raw(src):
    return ("raw", src)


def md(src):
    return ("markdown", src)


def code(src):
    return ("code", src)


def requirements() -> list[str]:
    """pagesim's own dependencies and its ``notebooks`` extra (pyproject.toml: the notebooks draw
    figures): the autograder's environment installs them, and pagesim itself is shipped in the
    autograder zip (``autograder_files``, put beside the master by ``pagesim exercises build``),
    since it is not on PyPI."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with open(HERE.parent / "pyproject.toml", "rb") as fh:
        project = tomllib.load(fh)["project"]
    return list(project["dependencies"]) + list(project["optional-dependencies"]["notebooks"])


EXPORT_NOTE = (
    "The zip holds your notebook and, for the written answers, a PDF of it (made with LaTeX, or through "
    "HTML in a browser engine when LaTeX is not installed). Submit the zip as your instructor asks."
)


def config(name):
    reqs = "\n".join(f"  - {json.dumps(r)}" for r in requirements())
    return raw(f"""# ASSIGNMENT CONFIG
name: {name}
init_cell: false
check_all_cell: false
export_cell:
  pdf: true
  run_tests: false
  instructions: {json.dumps(EXPORT_NOTE)}
run_tests: true
requirements:
{reqs}
autograder_files:
  - pagesim
generate: true
tests:
  files: false
  ok_format: true""")


def init(name, questions):
    """The notebook's ``grader`` (otter's checks, reported as checks of form: pagesim.teaching.exercises.FormChecks)."""
    return code(
        "# the checks of your answers' form (otter-grader): run this cell first\n"
        "import otter\n"
        "from pagesim.teaching.exercises import FormChecks\n\n"
        f'grader = FormChecks(otter.Notebook("{name}.ipynb"), {json.dumps(questions)})'
    )


def setup(key, title, intro):
    from pagesim.teaching.exercises import ASSIGNMENTS as SPECS

    name, questions = SPECS[key][0], [q for q, _ in SPECS[key][1]]
    return [
        md(
            f"# {title}\n\n{intro}\n\n"
            "**Your variant.** Put your student id in the next cell and run it: the id picks your machine, "
            "page size, working set and addresses, so your answers are your own. Do not change it after "
            "you start (the grader reads it from your notebook and recomputes your answers with pagesim).\n\n"
            'Answer each question in its cell, replacing the `...`. `grader.check("q1")` checks the *form* of '
            'your answer (a number, in range) and says "form OK" or what is wrong: it does not say whether the '
            "value is right. The values are graded after you submit. Written answers are read by your instructor."
        ),
        code('STUDENT_ID = "change-me@example.edu"   # your student id (or an int seed your instructor gave you)'),
        init(name, questions),
        code(f'import pagesim\nfrom pagesim.teaching.exercises import Sheet\n\nsheet = Sheet("{key}", STUDENT_ID)\nprint("your seed:", sheet.seed)'),
    ]


def check_all():
    """The closing check of every answer's form (otter's own check-all cell says it reruns "all of the
    autograder tests", which the student version does not hold)."""
    return [
        md("---\n\nThe cell below checks the form of every answer again (it does not say whether the values are right: they are graded after you submit)."),
        code("grader.check_all()"),
    ]


def public(test, message, success):
    return code(
        f'""" # BEGIN TEST CONFIG\npoints: 0\nsuccess_message: {json.dumps(success)}\nfailure_message: {json.dumps(message)}\n""" # END TEST CONFIG\n{test}'
    )


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
    return [
        raw(f"# BEGIN QUESTION\nname: {name}\nmanual: true\npoints: {points}"),
        md(prompt),
        raw("# BEGIN SOLUTION"),
        md(f"**Model answer.** {answer}\n\n**Rubric ({points} points).**\n{rubric}"),
        raw("# END SOLUTION"),
        raw("# END QUESTION"),
    ]


def exact(key, var, points=1):
    return hidden(f'from pagesim.teaching.exercises import correct\nassert correct("{key}", STUDENT_ID, "{var}", {var})', points)


def form(var, lo=0, hi=None, integer=True):
    kind = "a whole number" if integer else "a number"
    rng = f" between {lo} and {hi}" if hi is not None else f" of at least {lo}"
    return public(
        f"from pagesim.teaching.exercises import plausible\nassert plausible({var}, {lo}, {hi}, integer={integer})",
        f"{var} should be {kind}{rng}",
        f"{var}: {kind}{rng}",
    )


def auto(key, q, prompt, solution, answers, pre_extra=""):
    """An autograded question: ``answers`` maps each answer to (form kwargs, points)."""
    pre = f'sheet.show("{q}")\np{q[1:]} = sheet.params("{q}")' + (f"\n{pre_extra}" if pre_extra else "")
    lines = "\n".join(f"{line}  # SOLUTION" for line in solution) + "\n" + ", ".join(answers)
    tests = [form(v, **kw) for v, (kw, _) in answers.items()] + [exact(key, v, pts) for v, (_, pts) in answers.items()]
    return question(q, prompt, [pre], lines, tests)


INT = dict(lo=0)
NUM = dict(lo=0, integer=False)


# ----------------------------------------------------------------------------------------------

A00 = [
    config("00_basics"),
    *setup(
        "00",
        "Assignment 00 · Pages, TLBs and page walks",
        "Goes with `notebooks/00_basics.ipynb`. Four autograded questions (index bits, TLB reach, walk "
        "references, a first simulation) and one written answer about the notebook's walks-per-access "
        "figure. About 30 minutes.",
    ),
    *question(
        "q1",
        "**Q1 (prediction, by hand).** Read your question, work out both indices on paper (write "
        "the address in binary, or shift and mask), then check them with `translate`.",
        ['sheet.show("q1")\np1 = sheet.params("q1")'],
        'a = p1["address"]  # SOLUTION\n'
        'bits = pagesim.machine(p1["machine"]).walker.level_bits  # SOLUTION\n'
        'shift = pagesim.machine(p1["machine"]).walker.base_shift  # SOLUTION\n'
        "q1_top = (a >> (shift + sum(bits[1:]))) & ((1 << bits[0]) - 1)  # SOLUTION\n"
        "q1_leaf = (a >> shift) & ((1 << bits[-1]) - 1)  # SOLUTION\n"
        '# check: pagesim.teaching.explain.translate(p1["machine"], p1["address"])\n'
        "q1_top, q1_leaf",
        [form("q1_top", 0), form("q1_leaf", 0), exact("00", "q1_top"), exact("00", "q1_leaf")],
    ),
    *question(
        "q2",
        "**Q2 (prediction).** The reach of a TLB structure is what its entries cover. Compute both "
        "reaches in bytes, then check with `m.reach(page, structure=...)`.",
        ['sheet.show("q2")\np2 = sheet.params("q2")\nm2 = pagesim.machine(p2["machine"]).replace_structure(p2["structure"], entries=p2["entries"])'],
        'q2_reach_base = p2["entries"] * m2.base_page  # SOLUTION\nq2_reach_huge = p2["entries"] * p2["huge_page"]  # SOLUTION\nq2_reach_base, q2_reach_huge',
        [form("q2_reach_base", 1), form("q2_reach_huge", 1), exact("00", "q2_reach_base"), exact("00", "q2_reach_huge")],
    ),
    *question(
        "q3",
        "**Q3 (prediction).** Count the levels a walk reads from memory down to the entry that holds the "
        "translation (a huge page's translation sits higher in the tree), less the levels the page-walk caches "
        "supply; then count for all the walks.",
        ['sheet.show("q3")\np3 = sheet.params("q3")'],
        'm3 = pagesim.machine(p3["machine"])  # SOLUTION\n'
        'q3_refs_base = p3["walks"] * (len(m3.walker.level_bits) - p3["pwc_levels"])  # SOLUTION\n'
        'q3_refs_huge = p3["walks"] * (m3.walker.leaf_refs(p3["huge_page"]) - p3["pwc_levels"])  # SOLUTION\n'
        "q3_refs_base, q3_refs_huge",
        [form("q3_refs_base", 1), form("q3_refs_huge", 1), exact("00", "q3_refs_base"), exact("00", "q3_refs_huge")],
    ),
    *question(
        "q4",
        "**Q4 (computation with pagesim).** Run the simulation your question gives and compute walks "
        "per access. Before running: is your working set inside or beyond the largest TLB's reach?",
        ['sheet.show("q4")\np4 = sheet.params("q4")'],
        'ds4 = pagesim.simulate(p4["machine"], "random", working_set=p4["working_set"], accesses=p4["accesses"], page_size=p4["page_size"], seed=p4["seed"])  # SOLUTION\n'
        'q4_walks_per_access = float(ds4["walks"].sum()) / p4["accesses"]  # SOLUTION\n'
        "q4_walks_per_access",
        [form("q4_walks_per_access", 0, 1, integer=False), exact("00", "q4_walks_per_access", 2)],
    ),
    *manual(
        "q5",
        2,
        "**Q5 (interpreting a figure).** In `notebooks/00_basics.ipynb`, section 5 (What a miss costs) plots walks per "
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
        "the knee (more entries, larger pages).\n- No point for 'bigger is faster' without reach.",
    ),
    *check_all(),
]


A01 = [
    config("01_power_64k"),
    *setup(
        "01",
        "Assignment 01 · 64 KB pages on POWER",
        "Goes with `notebooks/01_power_64k.ipynb` (IBM's *A Performance Evaluation of 64KB Pages on Linux for "
        "Power Systems*). Page faults, data-ERAT reach, the cost in page-cache memory, a simulation of ERAT "
        "misses, and the document's ERAT figure. About 40 minutes.",
    ),
    *auto(
        "01",
        "q1",
        "**Q1 (prediction).** Faults come from first touches of pages, not from accesses. Count them by "
        "hand, then check with the simulation the question gives.",
        ['q1_faults_4k = p1["size"] // 4096', 'q1_faults_64k = p1["size"] // 65536'],
        {"q1_faults_4k": (INT, 1), "q1_faults_64k": (INT, 1)},
    ),
    *auto(
        "01",
        "q2",
        "**Q2 (prediction).** Reach = entries x page size. Compute both, then check with "
        '`pagesim.machine("power6").replace_structure("D-ERAT", entries=...).reach(page, structure="D-ERAT")`.',
        ['q2_reach_4k = p2["entries"] * 4096', 'q2_reach_64k = p2["entries"] * 65536'],
        {"q2_reach_4k": (INT, 1), "q2_reach_64k": (INT, 1)},
    ),
    *auto(
        "01",
        "q3",
        "**Q3 (prediction).** Internal fragmentation: a file occupies whole pages. (`pagesim.system.pagecache.internal_fragmentation` checks it.)",
        ['q3_files_4k = p3["cache"] // (-(-p3["file_bytes"] // 4096) * 4096)', 'q3_files_64k = p3["cache"] // (-(-p3["file_bytes"] // 65536) * 65536)'],
        {"q3_files_4k": (INT, 1), "q3_files_64k": (INT, 1)},
    ),
    *auto(
        "01",
        "q4",
        "**Q4 (computation with pagesim).** Run both simulations and compute the reduction.",
        [
            "from pagesim.model.costs import miss_count",
            'ds4k = pagesim.simulate("power6", "random", working_set=p4["working_set"], accesses=p4["accesses"], page_size="4K", seed=p4["seed"])',
            'ds64k = pagesim.simulate("power6", "random", working_set=p4["working_set"], accesses=p4["accesses"], page_size="64K", seed=p4["seed"])',
            'q4_reduction_pct = 100 * (1 - miss_count(ds64k, "D-ERAT") / miss_count(ds4k, "D-ERAT"))',
        ],
        {"q4_reduction_pct": (dict(lo=-100, hi=100, integer=False), 2)},
    ),
    *manual(
        "q5",
        2,
        "**Q5 (interpreting the document's figures).** The document reports data-ERAT misses cut by "
        "96-98% for Linpack but only 35-36% for SPECjbb2005 with 64 KB pages (notebook 01, section 2). Explain the "
        "difference in terms of reach, and say what the SPECjbb figure depends on in the simulation.",
        "The POWER6 data ERAT holds 128 entries: 512 KiB with 4 KB pages, 8 MiB with 64 KB pages. Linpack's blocked "
        "kernel works on data that fits in 8 MiB but not in 512 KiB, so 64 KB pages remove nearly all its misses. "
        "SPECjbb touches a heap far larger than 8 MiB; only its hot part (the live set) comes within reach, so the "
        "reduction is about the share of references to that hot set. In the simulation that share is the "
        "`hot_fraction` of the SPECjbb-like workload, a modelling assumption (so the figure is *calibrated*, not "
        "reproduced): the reduction follows it almost one for one.",
        "- 1 point: reach with both page sizes (512 KiB vs 8 MiB for 128 entries) and Linpack's data within the "
        "64 KB reach.\n- 1 point: SPECjbb's footprint is beyond reach; only the hot share benefits; names the "
        "hot fraction (or the live set) as what sets the figure.",
    ),
    *check_all(),
]

A02 = [
    config("02_opteron_cscs"),
    *setup(
        "02",
        "Assignment 02 · Page size and TLB entries on the Opteron",
        "Goes with `notebooks/02_opteron_cscs.ipynb` (CSCS, Cray XT3, 2006). Split TLBs, set conflicts of a "
        "strided solver, walks with 4 KB and 2 MB pages, strong scaling, and the paper's bar chart. About 40 minutes.",
    ),
    *auto(
        "02",
        "q1",
        "**Q1 (prediction).** Which structures can hold each page size? The largest level that holds "
        'a size gives its reach. Check with `m.reach("4K")` and `m.reach("2M")` on the variant below.',
        ['q1_reach_4k = p1["l2_4k_entries"] * 4096', 'q1_reach_2m = p1["l1_2m_entries"] * 2 * 2**20'],
        {"q1_reach_4k": (INT, 1), "q1_reach_2m": (INT, 1)},
        pre_extra='m1 = pagesim.machine("opteron-k8").replace_structure("L1 DTLB 2M", entries=p1["l1_2m_entries"], ways=p1["l1_2m_entries"]).replace_structure("L2 DTLB 4K", entries=p1["l2_4k_entries"])',
    ),
    *auto(
        "02",
        "q2",
        "**Q2 (prediction).** Page number = address >> 12; set = page number mod the number of sets. "
        "If more planes share a set than it has ways, they evict each other. (`pagesim.teaching.explain.translate` shows each "
        "address's set.)",
        [
            'q2_sets = len({((p2["base"] + i * p2["stride"]) >> 12) % p2["sets"] for i in range(p2["planes"])})',
            'q2_set_plane1 = ((p2["base"] + p2["stride"]) >> 12) % p2["sets"]',
        ],
        {"q2_sets": (dict(lo=1), 1), "q2_set_plane1": (INT, 1)},
    ),
    *auto(
        "02",
        "q3",
        "**Q3 (computation with pagesim).** Run both simulations and compute walks per access.",
        [
            'ds4k = pagesim.simulate("opteron-k8", "random", working_set=p3["working_set"], accesses=p3["accesses"], page_size="4K", seed=p3["seed"])',
            'ds2m = pagesim.simulate("opteron-k8", "random", working_set=p3["working_set"], accesses=p3["accesses"], page_size="2M", seed=p3["seed"])',
            'q3_walks_4k = float(ds4k["walks"].sum()) / p3["accesses"]',
            'q3_walks_2m = float(ds2m["walks"].sum()) / p3["accesses"]',
        ],
        {"q3_walks_4k": (dict(lo=0, hi=1, integer=False), 1), "q3_walks_2m": (dict(lo=0, hi=1, integer=False), 1)},
    ),
    *auto(
        "02", "q4", "**Q4 (prediction).** A ceiling division.", ['q4_processors = -(-p4["total_mib"] // p4["reach_mib"])'], {"q4_processors": (dict(lo=1), 1)}
    ),
    *manual(
        "q5",
        2,
        "**Q5 (interpreting the document's figures).** On the XT3, the molecular-dynamics code NAMD and the "
        "turbulence code PCHAN ran faster with *small* pages (NAMD 33% faster on 4 processors, 17% on 256; notebook 02, sections 2 and 4), "
        "while the usual advice is that large pages are faster. Using the Opteron's TLBs, explain why, and what "
        "the paper's counterfactual (L2 entries for 2 MB pages) would change.",
        "The Opteron K8 has only 8 L1 data TLB entries for 2 MB pages (16 MiB reach) and no L2 entries for them, "
        "while 4 KB pages have 32 L1 plus 512 L2 entries (2 MiB reach, but an L2 hit is cheap). A code that "
        "touches many scattered places (neighbour lists, many arrays or planes) needs more than 8 translations at "
        "once: with 2 MB pages it misses the tiny L1 and walks, with 4 KB pages it mostly hits in the L2. So "
        "small pages win where the number of distinct regions in use exceeds 8, large pages where one large "
        "region is streamed. The gain shrinks with the processor count (33% on 4, 17% on 256); one reading is that "
        "each processor's share of the problem shrinks under strong scaling (pagesim's model does not reproduce this scaling: "
        "notebook 02, section 4, has 2 MB pages winning at its assumed sizes). With 512 L2 entries for 2 MB pages (section 5), 2 MB pages "
        "no longer lose: 'this discussion would become unnecessary'.",
        "- 1 point: 8 L1 entries for 2 MB pages and no L2 entries, against 32 + 512 for 4 KB pages.\n"
        "- 1 point: MD touches more distinct regions than 8 entries cover, so 2 MB pages walk more; with L2 "
        "entries for 2 MB pages the loss disappears.",
    ),
    *check_all(),
]

A03 = [
    config("03_solaris_mpss"),
    *setup(
        "03",
        "Assignment 03 · Multiple page sizes on Solaris (UltraSPARC)",
        "Goes with `notebooks/03_solaris_mpss.ipynb` (the Solaris MPSS wiki page). The TSB, the programmable TLB "
        "of UltraSPARC III Cu, trap counts with 8 KB and 4 MB heap pages, trapstat's %tim, and the document's "
        "trapstat output. About 35 minutes.",
    ),
    *auto(
        "03",
        "q1",
        "**Q1 (prediction, by hand).** Shift the address by log2(page size), keep the low 15 bits. "
        'Check with `pagesim.teaching.explain.translate("ultrasparc-iii", address, page)`.',
        ['q1_slot_8k = (p1["address"] >> 13) % p1["tsb_entries"]', 'q1_slot_big = (p1["address"] >> (p1["big_page"].bit_length() - 1)) % p1["tsb_entries"]'],
        {"q1_slot_8k": (INT, 1), "q1_slot_big": (INT, 1)},
    ),
    *auto(
        "03",
        "q2",
        "**Q2 (prediction).** Reach = entries x the page size the structure holds. Check with "
        '`pagesim.machine("ultrasparc-iii-cu").replace_structure("dTLB T512_1", entries=...).reach(page, structure="dTLB T512_1", programmed=True)`.',
        ['q2_reach_8k = p2["entries"] * 8192', 'q2_reach_big = p2["entries"] * p2["big_page"]'],
        {"q2_reach_8k": (INT, 1), "q2_reach_big": (INT, 1)},
    ),
    *auto(
        "03",
        "q3",
        '**Q3 (computation with pagesim).** Run both simulations; the traps are the walks (`ds["walks"].sum()`). Why is the 4 MB figure what it is?',
        [
            'ds8k = pagesim.simulate("ultrasparc-iii-cu", "random", working_set=p3["working_set"], accesses=p3["accesses"], page_size="8K", seed=p3["seed"])',
            'ds4m = pagesim.simulate("ultrasparc-iii-cu", "random", working_set=p3["working_set"], accesses=p3["accesses"], page_size="4M", seed=p3["seed"])',
            'q3_traps_8k = int(ds8k["walks"].sum())',
            'q3_traps_4m = int(ds4m["walks"].sum())',
        ],
        {"q3_traps_8k": (INT, 1), "q3_traps_4m": (INT, 1)},
    ),
    *auto(
        "03",
        "q4",
        "**Q4 (prediction).** Time in traps over all time.",
        ['q4_tim_pct = 100 * p4["traps"] * p4["cycles_per_trap"] / (p4["traps"] * p4["cycles_per_trap"] + p4["other_cycles"])'],
        {"q4_tim_pct": (dict(lo=0, hi=100, integer=False), 1)},
    ),
    *manual(
        "q5",
        2,
        "**Q5 (interpreting the document's output).** The document's `trapstat -T` shows the test "
        "program spending 46.2% of its time in TLB-miss traps with 8 KB heap pages and 0.2% after the heap is "
        "given 4 MB pages (notebook 03, section 1). Explain the drop with the TLB reach, and why this does not "
        "happen on every UltraSPARC (section 3).",
        "With 8 KB pages the 512-entry T512 covers 4 MiB, far less than the heap, so random heap accesses miss and "
        "trap into the TSB handler; with 4 MB pages on III Cu, T512_1 is programmed to 4 MB and covers 2 GiB, so "
        "the heap fits and only first touches trap. On the UltraSPARC III (not Cu) large pages live only in the "
        "16-entry T16 (64 MiB with 4 MB pages), so a heap beyond that still misses; the UltraSPARC II has 64 "
        "fully associative entries for all sizes (256 MiB with 4 MB pages).",
        "- 1 point: reach with 8 KB (4 MiB) vs the programmed 4 MB T512_1 (2 GiB) against the heap size; traps "
        "mostly disappear.\n- 1 point: another design's large-page reach (T16's 16 entries, or II's 64) limits "
        "the gain.",
    ),
    *check_all(),
]

A04 = [
    config("04_power8_mmap"),
    *setup(
        "04",
        "Assignment 04 · Linux memory mapping on POWER8",
        "Goes with `notebooks/04_power8_mmap.ipynb` (the POWER8 mmap study). Faults with 64 KB and 16 MB pages, "
        "random touches, the hashed page table's groups, and the study's fault figure. About 30 minutes.",
    ),
    *auto(
        "04",
        "q1",
        "**Q1 (prediction).** One fault per page first touched. Check with "
        '`pagesim.simulate("power8", "touch", size=..., pattern="memset", page_size=...)` (use `policy="hugetlb"` for 16M).',
        ['q1_faults_64k = p1["size"] // 65536', 'q1_faults_16m = p1["size"] // (16 * 2**20)'],
        {"q1_faults_64k": (INT, 1), "q1_faults_16m": (INT, 1)},
    ),
    *auto(
        "04",
        "q2",
        "**Q2 (computation with pagesim).** Predict the bound first (how many 64 KB pages does 16 MiB have? how many touches?), then run the simulation.",
        [
            'ds2 = pagesim.simulate("power8", "touch", size=p2["size"], pattern="random", accesses=p2["touches"], page_size="64K", seed=p2["seed"])',
            'q2_faults = int(ds2["faults"].sum())',
        ],
        {"q2_faults": (dict(lo=1), 2)},
    ),
    *auto(
        "04",
        "q3",
        "**Q3 (prediction, by hand).** Follow the recipe in your question step by step (Python "
        'as a calculator is fine), then check with `pagesim.teaching.explain.translate("power8", address, page)`.',
        [
            'esid3 = p3["address"] >> 28',
            'vsid3 = (esid3 * p3["vsid_mult"]) & 0xFFFFFFFFF',
            'pidx3 = (p3["address"] % 2**28) >> (p3["page_size"].bit_length() - 1)',
            'q3_primary = (vsid3 ^ pidx3) % p3["ptegs"]',
            'q3_secondary = (~q3_primary) % p3["ptegs"]',
        ],
        {"q3_primary": (INT, 1), "q3_secondary": (INT, 1)},
    ),
    *manual(
        "q4",
        2,
        "**Q4 (interpreting the study's figure).** The study touches 16 MiB: 256 page faults with normal "
        "(64 KB) pages, 1 with hugetlb and 1 with THP, whether memory is under pressure or not (notebook 04, "
        "section 1). Explain both halves: the counts, and why pressure changes nothing for THP here.",
        "16 MiB / 64 KiB = 256 pages, each first-touched once: 256 faults; a 16 MiB huge page maps the whole "
        "region at its first touch: 1 fault (hugetlb from a reserved pool, THP from the allocator). Under "
        "pressure THP still gets its 16 MiB page because the kernel compacts (migrates movable pages to free a "
        "contiguous block); only when compaction cannot free a block (memory held unmovable, or compaction off) "
        "does THP fall back to 64 KB pages and 256 faults (section 2).",
        "- 1 point: 256 = 16 MiB / 64 KiB, one fault per page; one huge page, one fault.\n"
        "- 1 point: compaction makes a contiguous 16 MiB block, so pressure does not change THP; names when "
        "it would (unmovable memory / no compaction -> fallback).",
    ),
    *check_all(),
]

A05 = [
    config("05_shared_page_tables"),
    *setup(
        "05",
        "Assignment 05 · Shared page tables for a database",
        "Goes with `notebooks/05_shared_page_tables.ipynb` (the 2006 linux-mm message). Leaf page tables of a "
        "buffer pool, private versus shared tables for many processes, the memory freed, and the message's "
        "1.65 GB -> 51 MB figure. About 30 minutes.",
    ),
    *auto(
        "05",
        "q1",
        "**Q1 (prediction).** One 8-byte entry per page at the leaf level (for 2 MB pages the PMD is the leaf).",
        ['q1_leaf_4k = p1["pool"] // 4096 * 8', 'q1_leaf_2m = p1["pool"] // (2 * 2**20) * 8'],
        {"q1_leaf_4k": (INT, 1), "q1_leaf_2m": (INT, 1)},
    ),
    *auto(
        "05",
        "q2",
        "**Q2 (computation with pagesim).** Use `shared_page_table_table` with your parameters; rows are (pool pages, page tables).",
        [
            "from pagesim.system.pagetables import shared_page_table_table",
            't2 = shared_page_table_table(**p2).set_index(["pool_pages", "page_tables"])["bytes"]',
            'q2_private = int(t2[("4K", "private")])',
            'q2_shared = int(t2[("4K", "shared")])',
        ],
        {"q2_private": (INT, 1), "q2_shared": (INT, 1)},
    ),
    *auto(
        "05",
        "q3",
        "**Q3 (computation).** Freed bytes (private minus shared) over RAM.",
        [
            "from pagesim.system.pagetables import shared_page_table_table",
            't3 = shared_page_table_table(**{k: v for k, v in p3.items() if k != "ram"}).set_index(["pool_pages", "page_tables"])["bytes"]',
            'q3_freed_pct = 100 * (t3[("4K", "private")] - t3[("4K", "shared")]) / p3["ram"]',
        ],
        {"q3_freed_pct": (dict(lo=0, integer=False), 2)},
    ),
    *manual(
        "q4",
        2,
        "**Q4 (interpreting the message's figure).** The message reports page-table memory falling from "
        "1.65 GB to 51 MB with shared page tables (pool in small pages), and from 53 MB to 37 MB with the pool in "
        "huge pages (notebook 05, section 1). Explain why the first drop is ~30x and the second small.",
        "Without sharing every process has its own PTE tables for the whole shared buffer pool: pool/512 bytes "
        "per process (about 10 MiB for a 5 GiB pool) times ~160 processes, about 1.6 GiB. Sharing keeps one copy "
        "of those leaf tables; what remains is each process's private tables and upper levels (~51 MB). With "
        "2 MB pages the pool's leaf tables are PMD tables, 512 times smaller (pool/262144 per process), so "
        "there is little to share: 53 -> 37 MB, the rest being private memory's tables.",
        "- 1 point: per-process leaf tables for the shared pool, multiplied by the process count; sharing keeps "
        "one copy.\n- 1 point: huge pages shrink the pool's tables by 512x, so sharing saves little there.",
    ),
    *check_all(),
]

ASSIGNMENTS = {"00_basics": A00, "01_power_64k": A01, "02_opteron_cscs": A02, "03_solaris_mpss": A03, "04_power8_mmap": A04, "05_shared_page_tables": A05}


def notebook(key, cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}, "language_info": {"name": "python"}}
    for i, (kind, src) in enumerate(cells):
        maker = {"raw": nbformat.v4.new_raw_cell, "markdown": nbformat.v4.new_markdown_cell, "code": nbformat.v4.new_code_cell}[kind]
        c = maker(src)
        c.id = f"ex{key[:2]}-{i:02d}"
        nb.cells.append(c)
    return nb


def rubric(key, cells) -> str:
    """The written (manual) questions of one assignment for the instructor: prompt, model answer
    and rubric, as Markdown (exercises/rubrics/NAME.md; the student version holds none of it)."""
    out = [f"# Rubric · {key}", "", "The written questions, graded by hand (the autograder scores the others).", ""]
    for i, (kind, src) in enumerate(cells):
        if kind == "raw" and src.startswith("# BEGIN QUESTION") and "manual: true" in src:
            fields = dict(line.split(": ", 1) for line in src.splitlines()[1:])
            prompt, solution = cells[i + 1][1], cells[i + 3][1]
            out += [f"## {fields['name']} ({fields['points']} points)", "", prompt, "", solution, ""]
    return "\n".join(out)


def write(out: Path = MASTERS, rubrics: Path = RUBRICS) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    rubrics.mkdir(parents=True, exist_ok=True)
    paths = []
    for key, cells in ASSIGNMENTS.items():
        p = out / f"{key}.ipynb"
        nbformat.write(notebook(key, cells), p)
        (rubrics / f"{key}.md").write_text(rubric(key, cells))
        paths.append(p)
    return paths


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    for p in write(target or MASTERS, (target / "rubrics") if target else RUBRICS):
        print(p)
