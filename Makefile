# judgepanel: two commands on a fresh machine with Python 3.11 and make.
#   make report   synthetic data, simulated judges, scoring, every notebook, HTML in outputs/
#   make test     the test suite, then a quick report in a fresh copy checked against the
#                 committed quick manifest (make verify-quick)
#   make verify-full  the full report in a fresh copy, checked against the full manifest
#   make lab      JupyterLab at the project root, on the demo's data and store (made if missing)
#   make calibrate  the calibration study on planted-effect worlds (notebook 08, ~9 min)
SHELL := /bin/bash
# Bytecode is written even where the environment asks not to: every notebook kernel imports
# the project anew, and without cached bytecode each compiles its modules again (the
# notebook tests took 0.90 of the CPU with it; bench/README.md).
unexport PYTHONDONTWRITEBYTECODE
PYTHON ?= python3.11
VENV ?= .venv
BIN := $(VENV)/bin
JP := $(BIN)/judgepanel
STAMP := $(VENV)/.installed
SEED ?= 20261130
PROFILE ?= demo
# QUICK=1: small worlds (N_IMAGES 60, few VAB tasks and VisionQ papers), fewer
# repetitions and a small bootstrap; every page says it is a quick run. Changing N_IMAGES
# or QUICK rewrites the worlds it changes; FORCE=1 rewrites every world.
QUICK ?=
ifeq ($(QUICK),1)
N_IMAGES ?= 60
QUICK_FLAG := --quick
else
N_IMAGES ?= 500
QUICK_FLAG :=
endif
FORCE ?=
# JOBS=N: notebooks (and call explorers) `report` executes at once, each scoring process
# counted as one; by default the cores this machine lets it use.
JOBS ?=
# The cores data generation may use (worlds are written side by side).
CORES ?= $(shell nproc 2>/dev/null || echo 1)
# The worlds `data` writes and the datasets it imports comparator scores for (the benchmark
# of the report sets them to time each step; empty means none).
WORLDS ?= eva,para,ava,vab,visionq,posters
COMPARATORS ?= eva para
# RUNS_FILE=F: the runs file `report` reads (default: papermill_runs.yaml); the benchmark
# of the report gives it one commit's runs to time another commit on the same runs.
RUNS_FILE ?=

.PHONY: setup report test bench lint data calibrate interop clean distclean verify-quick \
	verify-full lab

setup: $(STAMP)

# Reinstall only when the pins change.
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; judgepanel needs Python 3.11 (set PYTHON=...)" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# the project's kernel, in the environment: JupyterLab opens the notebooks with it
	$(BIN)/python -m ipykernel install --sys-prefix --name judgepanel \
	  --display-name "judgepanel (Python 3.11)" >/dev/null
	touch $(STAMP)

data: setup
	$(if $(WORLDS),$(JP) data synth --out data/synth --n-images $(N_IMAGES) --seed $(SEED) \
		$(QUICK_FLAG) --only $(WORLDS) --replace-changed $(if $(FORCE),--force) --jobs $(CORES))
	@# stand-in comparator scores from image statistics (data/README.md: real IAA models),
	@# checked as `judgepanel import scores` checks a file; one process per dataset, side by
	@# side; any failure fails the target
	pids=(); for w in $(COMPARATORS); do \
	  $(BIN)/python -m judgepanel_sim.world.comparators --dataset $$w:data/synth/synth-$$w \
	    --out data/synth/comparators/$$w.raw.csv --imported data/synth/comparators/$$w.csv & \
	  pids+=($$!); \
	done; for p in "$${pids[@]}"; do wait $$p || exit 1; done

# The demo's second study (its own rubric, no overall rating) is a report of its own in
# outputs/posters/, with its own manifest; it is made first, so the demo's index links it.
STUDIES ?= posters
report: data
	$(if $(filter demo,$(PROFILE)),for s in $(STUDIES); do \
	  $(JP) report --profile $$s --start-sim --score $(QUICK_FLAG) --outputs outputs/$$s \
	    $(if $(JOBS),--jobs $(JOBS)) $(if $(RUNS_FILE),--runs-file $(RUNS_FILE)) || exit 1; \
	done)
	$(JP) report --profile $(PROFILE) --start-sim --score $(QUICK_FLAG) $(if $(JOBS),--jobs $(JOBS)) \
	  $(if $(RUNS_FILE),--runs-file $(RUNS_FILE))

# JupyterLab on the demo: the data and the scored store are made first when missing (the
# store by `make report`, once). It prints the URL; Ctrl-C stops it, with no question asked.
LAB_PORT ?= 8888
DEMO_STORE := data/stores/demo.sqlite
lab: data
	test -f $(DEMO_STORE) || $(MAKE) report
	$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(LAB_PORT) -y \
	  --ServerApp.root_dir="$(CURDIR)" $(if $(filter 0,$(shell id -u)),--allow-root)

# The calibration study (notebook 08): a scored pool of planted-effect worlds, then the
# replicate studies. Not part of `report`, which stays fast.
CAL_POOL ?= data/calibration/pool
CAL_IMAGES ?= 3000
calibrate: setup
	$(BIN)/python -m judgepanel_sim pool --out $(CAL_POOL) --n-images $(CAL_IMAGES) --jobs 2
	$(JP) report --profile calibration

# The tests: what they share is built once first (tests/prebuild.py; kept in .test-cache/
# per state of the sources), then every test but the wall-clock ones on TEST_WORKERS
# workers (pytest-xdist; the 20 slowest are listed), then those alone, then a quick report
# in a fresh copy. (Building that report beside the tests instead saved no time: the tests
# keep both cores busy, and the CPU time grew with the contention.)
TEST_WORKERS ?= $(CORES)
# The key of the sources is taken once, so every step of one run reads the same builds.
test: setup
	export JUDGEPANEL_TEST_BUILD_KEY=$$($(BIN)/python tests/shared_build.py) && \
	$(BIN)/python tests/prebuild.py && \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -m "not serial" \
	  --durations=20 && \
	$(BIN)/python -m pytest -q -m serial
	$(MAKE) verify-quick

# A report built in a fresh copy of the checkout (its tracked and new files: no data, no
# store, no outputs), as a reviewer's clone would build it, then `judgepanel verify`
# against the committed manifest of its kind. The copy shares this environment.
VERIFY_DIR ?= .verify
define fresh_report
	rm -rf $(VERIFY_DIR)/$(1) && mkdir -p $(VERIFY_DIR)/$(1)
	git ls-files -z --cached --others --exclude-standard \
	  | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C $(VERIFY_DIR)/$(1)
	cd $(VERIFY_DIR)/$(1) && JUDGEPANEL_ROOT="$$PWD" PYTHONPATH="$$PWD/lib" \
	  $(MAKE) -o $(abspath $(STAMP)) report $(2) VENV=$(abspath $(VENV)) \
	  STAMP=$(abspath $(STAMP)) $(if $(JOBS),JOBS=$(JOBS))
	$(JP) verify $(VERIFY_DIR)/$(1)/outputs --reference tests/reference/demo-$(1)
	for s in $(STUDIES); do $(JP) verify $(VERIFY_DIR)/$(1)/outputs/$$s \
	  --reference tests/reference/$$s-$(1) || exit 1; done
endef

verify-quick: setup
	$(call fresh_report,quick,QUICK=1)

verify-full: setup
	$(call fresh_report,full,)

# BENCH_FLAGS=--quick leaves out the ten-minute benchmark at AVA's scale.
BENCH_FLAGS ?=
bench: setup
	$(BIN)/python bench/run_all.py $(BENCH_FLAGS)

# Optional, not in CI: the official harnesses (copies placed in INTEROP_DIR) against the
# simulator and the synthetic world; INTEROP_PYTHON must have their requirements.
INTEROP_PYTHON ?= $(BIN)/python
interop: data
	@test -n "$(INTEROP_DIR)" || { echo "error: set INTEROP_DIR to the folder holding the harnesses" >&2; exit 1; }
	$(BIN)/python -m judgepanel_sim.interop --dir "$(INTEROP_DIR)" --python "$(INTEROP_PYTHON)"

lint: setup
	$(BIN)/ruff check lib tests bench notebooks
	$(BIN)/ruff format --check lib tests bench

clean:
	rm -rf outputs/*/ outputs/index.html outputs/_timings.json outputs/MANIFEST.sha256 \
	  .pytest_cache $(VERIFY_DIR)

distclean: clean
	rm -rf $(VENV) data/synth data/stores .test-cache
