# Two commands a newcomer needs:  `make demo` (the main job) and `make test`.
# Both set up .venv first (once; `make clean` to start over). `make test` also
# installs what the tests run against from the system's packages when it is
# missing: redis-server (the store conformance suite runs against a real Redis),
# the PostgreSQL server (the rollout-database tests initdb a throwaway cluster as
# an unprivileged user) and bubblewrap (the per-rollout sandbox, docs/sandbox.md);
# then it runs ruff and mypy before the tests.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU build of torch first, so the `train` extra does not pull the multi-GB CUDA build.
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

install: $(VENV)/.installed

# The ecosystems' own clients for tests/surfaces (OpenEnv, verifiers): they cannot share .venv with the dev
# extras (openenv pins mcp<2, verifiers 0.1.14 pins datasets<4.7), so they get their own venv (docs/surfaces.md).
ECO := .venv-eco
$(ECO)/.installed: pyproject.toml
	$(PYTHON) -m venv $(ECO)
	$(ECO)/bin/python -m pip install -q --upgrade pip
	$(ECO)/bin/python -m pip install -q -e ".[openenv,verifiers]"
	touch $@

eco: $(ECO)/.installed

# A real redis-server for the store tests (Debian/Ubuntu package; needs root or sudo).
redis-server:
	@command -v redis-server >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq redis-server >/dev/null; }
	@redis-server --version

# PostgreSQL server binaries (initdb, pg_ctl) for tests/db (Debian/Ubuntu package; needs root or sudo).
# The tests start their own cluster in a temp dir (as the `postgres` user when run as root).
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql >/dev/null; }
	@ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null || command -v initdb

# bubblewrap (bwrap) contains the code rollouts run (docs/sandbox.md); setpriv (util-linux) drops root in it.
sandbox-tools:
	@command -v bwrap >/dev/null && command -v setpriv >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq bubblewrap util-linux >/dev/null; }
	@bwrap --version

demo: $(VENV)/.installed
	$(PY) -m examples.retail.main_job

# The pre-flight report (rft doctor) on the retail example: four principles, reward-hack probes.
doctor: $(VENV)/.installed
	$(PY) -m examples.retail.doctor_job

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: $(VENV)/.installed $(ECO)/.installed redis-server postgresql sandbox-tools lint
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) $(ECO) runs

.PHONY: install eco redis-server postgresql sandbox-tools demo doctor lint test clean
