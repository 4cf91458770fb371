# commodel — `make` or `make help` lists the targets.
#
# `make demo` and `make test` set everything up themselves: the Python package (built with
# maturin through pip, editable) and its Python dependencies; as root, also the system
# packages (Open MPI, iproute2, ...) that some tests need. Not root and MPI missing: those
# tests are skipped with a reason; `sudo make deps` installs the packages.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
CARGO ?= cargo
PYTEST_ARGS ?=

# Debian packages the measurement suite and the emulated cluster need.
APT_PACKAGES := openmpi-bin libopenmpi-dev iproute2 ethtool procps
# A command from each of them; all present means nothing to install.
APT_COMMANDS := mpirun mpicc ip ethtool ps

# The package is rebuilt when the Rust sources or the build configuration change.
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml 2>/dev/null)
INSTALL_STAMP := build/.installed

# Open MPI refuses to start as root without these (CI and containers run as root).
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: help deps install demo test test-rust test-python lint format bench clean

help:
	@echo "commodel: predict MPI communication time on commodity clusters"
	@echo
	@echo "  make demo     set up (if needed) and predict Alltoall A and B on the PlogPT cluster"
	@echo "  make test     set up (if needed) and run every test (cargo test, pytest)"
	@echo "  make lint     cargo fmt --check, cargo clippy -D warnings, ruff check, ruff format --check"
	@echo "  make format   apply cargo fmt and ruff format"
	@echo "  make install  pip install -e '.[dev]' (plus mpi4py when Open MPI is installed)"
	@echo "  make deps     install the Debian packages (Open MPI, iproute2, ...); needs root"
	@echo "  make bench    run the benchmarks (benches/run.py; slow, not part of the tests)"
	@echo "  make clean    remove build outputs"
	@echo "  make experiment  the validation study on the emulated clusters (root; EXPERIMENT_ARGS=...)"
	@echo "  make demo-cluster  as root: measure Alltoall A and B on an emulated 8-host cluster"
	@echo
	@echo "Variables: PYTHON=$(PYTHON)  PYTEST_ARGS='$(PYTEST_ARGS)'"

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

# pip install -e; with Open MPI present (mpicc) the `measure` extra adds mpi4py.
$(INSTALL_STAMP): pyproject.toml Cargo.toml Cargo.lock $(RUST_SOURCES)
	@extras=dev; if command -v mpicc >/dev/null; then extras=dev,measure; fi; \
	echo "install: $(PYTHON) -m pip install -e '.[$$extras]'"; \
	$(PYTHON) -m pip install --quiet --disable-pip-version-check -e ".[$$extras]"
	@mkdir -p $(dir $@) && touch $@

install:
	@rm -f $(INSTALL_STAMP)
	@$(MAKE) --no-print-directory $(INSTALL_STAMP)

demo: $(INSTALL_STAMP)
	@$(PYTHON) -m commodel demo

test: deps
	@# a new make, so that the install sees what `deps` has just installed
	@$(MAKE) --no-print-directory test-rust test-python

test-rust:
	$(CARGO) test --workspace

test-python: $(INSTALL_STAMP)
	$(PYTHON) -m pytest $(PYTEST_ARGS)

lint:
	@$(PYTHON) -m ruff --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet ruff
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(PYTHON) -m ruff check python tests
	$(PYTHON) -m ruff format --check python tests

format:
	$(CARGO) fmt --all
	$(PYTHON) -m ruff format python tests

bench: $(INSTALL_STAMP)
	@if [ -f benches/run.py ]; then $(PYTHON) benches/run.py; \
	else echo "bench: benches/run.py does not exist yet"; fi

clean:
	$(CARGO) clean
	rm -rf build dist .pytest_cache .ruff_cache .hypothesis bench-out
	rm -f python/commodel/_engine*.so python/commodel/_engine*.pyd
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +

# The validation study (scripts/experiment.py --help; results in docs/results/). Root.
.PHONY: experiment demo-cluster
experiment: $(INSTALL_STAMP)
	$(PYTHON) scripts/experiment.py $(EXPERIMENT_ARGS)

demo-cluster: $(INSTALL_STAMP)
	@$(PYTHON) -m commodel demo --cluster
