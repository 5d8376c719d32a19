# pagesim: the two commands of the README, plus benchmarks. Each creates .venv if needed and
# installs what it needs; Python 3.10 or newer is the only prerequisite.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run demo test bench clean lint lock

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "pagesim needs Python 3.10 or newer, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# setuptools announces every editable install of a package whose data sit outside it (datasets/);
# the filter keeps that notice out of the log and lets every other warning through
$(STAMP): $(PY) pyproject.toml
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e ".[test,bench,dask,exercises]"
	@touch $(STAMP)

## Compile the kernels into the cache once (pagesim warm): the generic kernel of each walker, the
## specialised copy of every chain shape of the presets, and the kernels the notebooks list in
## pagesim/data/kernels.json; later runs load them.
WARM := $(VENV)/.warm
$(WARM): $(STAMP) $(wildcard pagesim/_kernels/*.py)
	$(VENV)/bin/pagesim warm
	@touch $(WARM)

## The main job: execute every notebook with papermill, write build/report.md and HTML copies,
## then build the site from what ran (build/site/_build/html/index.html; not executed again). The
## notebooks' exit status (an error, or a verdict worse than the baseline) is kept, once the site is built.
run: $(WARM)
	$(VENV)/bin/pagesim notebooks --out build; rc=$$?; $(PY) -m pagesim.validation.site --out build && exit $$rc

## A one-page demonstration of the documents' exact counts.
demo: $(STAMP)
	@mkdir -p build
	$(VENV)/bin/pagesim demo | tee build/demo.txt

## The tests: reference models, hand-checked cases, errors, API, CLI, every notebook in quick mode.
## In one worker per core (pytest-xdist), each test file in one worker: on 2 cores with an empty
## kernel cache, 17.5 minutes where one worker took 33 (docs/speed.md).
test: $(STAMP)
	$(VENV)/bin/pagesim warm
	$(PY) -m pytest -n auto --dist loadfile

## The pinned environments, compiled from pyproject.toml with uv: binder/requirements.txt (what
## Binder installs, Python 3.11 on x86-64 Linux) and .ci/lock.txt (what CI installs, every extra,
## any Python from 3.10). Rerun after changing a dependency; the newest releases are tested weekly
## unpinned (.github/workflows/newest.yml).
lock: $(STAMP)
	$(PY) -m pip install --quiet uv
	$(VENV)/bin/uv pip compile pyproject.toml binder/build.in --extra notebooks --extra exercises --extra dask --python-version 3.11 --python-platform x86_64-manylinux_2_28 -o binder/requirements.txt -q
	$(VENV)/bin/uv pip compile pyproject.toml --extra test --extra bench --extra dask --extra exercises --extra browser --universal --python-version 3.10 -o .ci/lock.txt -q

## Lint and formatting (ruff, configured in pyproject.toml); .ci/run runs it.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

## Speed and memory benchmarks (printed figures and ratios; not part of the tests).
bench: $(STAMP)
	$(PY) benchmarks/bench_pycachesim.py
	$(PY) benchmarks/bench_floor.py
	$(PY) benchmarks/bench_memory.py
	$(PY) benchmarks/bench_os.py
	$(PY) benchmarks/bench_os_stage.py
	$(PY) benchmarks/bench_generators.py
	$(PY) benchmarks/bench_sweep.py
	$(PY) benchmarks/bench_percall.py
	$(PY) benchmarks/bench_cpu_name.py
	$(PY) benchmarks/bench_xrdata.py
	$(PY) benchmarks/bench_generic_key.py
	$(PY) benchmarks/bench_nested.py

clean:
	rm -rf build .pytest_cache .hypothesis
