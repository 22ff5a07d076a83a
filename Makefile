# Two commands do all set-up on a fresh Debian machine:
#   make tune   installs what is missing, then runs the default tuning study (45 min of runs at a rate, then
#               the answer's and the defaults' capacity at the SLO in paired rounds, ~30 min outside that budget)
#   make test   installs what is missing, then runs ruff, mypy and the test suite
# Both are idempotent: a second run installs nothing and resumes/re-reports the default study.

PYTHON   ?= python3
VENV     ?= .venv
# gp (PyTorch for --sampler gp, with its CUDA wheels) is opt-in: make EXTRAS=gp,test
EXTRAS   ?= test
# The default study: the most writes per second RocksDB holds at a P99.9 of 10 ms, open loop (each
# request timed from when it was due), on a preloaded 2 GiB DB within 1 GiB of memory, on the newest
# release db_bench's RocksDB and its library defaults; 45 minutes of capacity searches, then the
# answer's and the defaults' capacity in 4 paired rounds. Resumable by name: re-running `make tune`
# continues or re-reports it. Its flags are in the study file studies/default.toml; flags given with it
# override the file's (make tune TUNE_ARGS="--from studies/default.toml --no-mlflow"), or give your own:
# make tune TUNE_ARGS="--from studies/throughput.toml" runs the throughput study that was the default.
TUNE_ARGS ?= --from studies/default.toml
PYTEST_ARGS ?=
# 1: `make tune` and `make test` build a release db_bench once (cached in ~/.cache/rocksdb-tuner) and
# the tuner prefers it; 0: use the distribution's assertion build as is.
RELEASE_DB_BENCH ?= 1
# The RocksDB version `make db_bench` builds: from Debian's source packages (7.8 bookworm, 9.10 trixie,
# 9.11 sid; apt-get source), else from the Rust crate registry's package librocksdb-sys (fetched by
# cargo), which ships RocksDB's source (7.4, 7.9, 8.1, 8.5, 8.6, 8.8, 8.9, 8.10, 9.9, 10.4, 11.8).
# Several versions live side by side; the newest measures unless `--rocksdb-version V` picks another.
# ROCKSDB_SRC=PATH builds your own checkout.
ROCKSDB_VERSION ?= 11.8

comma := ,
SUDO  := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed-$(subst $(comma),-,$(EXTRAS))

.PHONY: tune test lint test-deps setup system-deps db_bench doctor ui record clean

tune: setup $(if $(filter 1,$(RELEASE_DB_BENCH)),db_bench)
	$(BIN)/rocksdb-tuner doctor
	$(BIN)/rocksdb-tuner tune $(TUNE_ARGS)

test: setup test-deps lint $(if $(filter 1,$(RELEASE_DB_BENCH)),db_bench)
	PYTHONDONTWRITEBYTECODE=1 $(BIN)/python -m pytest --durations=25 $(if $(filter 1,$(RELEASE_DB_BENCH)),,-m "not release_build") $(PYTEST_ARGS)

# ruff (its rules in pyproject.toml) and mypy (its settings in setup.cfg), before the tests: a finding fails
# `make test`. `$(BIN)/ruff check --fix .` sorts imports; nothing reformats the code.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

# A release (DEBUG_LEVEL=0, stripped) db_bench from Debian's rocksdb source package of ROCKSDB_VERSION,
# or from ROCKSDB_SRC=PATH; nothing to do when that version is built already.
db_bench: system-deps
	@ROCKSDB_VERSION=$(ROCKSDB_VERSION) bash objectives/build/build_db_bench.sh

doctor: setup
	$(BIN)/rocksdb-tuner doctor

# The documents' generated blocks (<!-- record: NAME -->) made again from their records: experiments/record.py
record: setup
	$(BIN)/python -m experiments.record

# The MLflow UI on ./mlruns (where `make tune` tracks the default study): http://127.0.0.1:5000
ui: setup
	$(BIN)/rocksdb-tuner ui

setup: system-deps $(STAMP)

# Debian packages, installed only when what they provide is missing.
system-deps:
	@missing=""; \
	command -v db_bench >/dev/null 2>&1 || [ -n "$$ROCKSDB_TUNER_DB_BENCH" ] || missing="$$missing rocksdb-tools"; \
	command -v $(PYTHON) >/dev/null 2>&1 || missing="$$missing python3"; \
	$(PYTHON) -c 'import venv, ensurepip' >/dev/null 2>&1 || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 is needed, found " + sys.version.split()[0])'

# What only the tests need: headless Chromium loads the MLflow UI in tests/test_tracking.py;
# iproute2's `ip netns` puts a Ray worker node in its own network namespace in tests/test_parallel.py,
# where Debian's assertion-build db_bench (rocksdb-tools) is the worker's "other" build.
test-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	[ -x /usr/bin/db_bench ] || missing="$$missing rocksdb-tools"; \
	command -v ip >/dev/null 2>&1 || missing="$$missing iproute2"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# (Re)install the package when its metadata changes. The gp extra (PyTorch, ~5 GB with its CUDA
# wheels from PyPI) backs `--sampler gp`; add it with EXTRAS=gp,test.
$(STAMP): $(BIN)/python setup.cfg pyproject.toml
	$(BIN)/python -m pip install -q -e ".[$(EXTRAS)]"
	rm -f $(VENV)/.installed-*
	touch $@

clean:
	rm -rf $(VENV) build *.egg-info
