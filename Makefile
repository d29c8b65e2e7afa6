# Two commands a newcomer needs:  `make demo` (the main job) and `make test`.
# Both set up .venv first (once; `make clean` to start over). `make test` also
# installs redis-server (the store conformance suite runs against a real Redis)
# and bubblewrap (the per-rollout sandbox, docs/sandbox.md) from the system's
# packages when they are missing, and runs ruff and mypy before the tests.
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

# A real redis-server for the store tests (Debian/Ubuntu package; needs root or sudo).
redis-server:
	@command -v redis-server >/dev/null || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq redis-server >/dev/null; }
	@redis-server --version

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

test: $(VENV)/.installed redis-server sandbox-tools lint
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) runs

.PHONY: install redis-server sandbox-tools demo doctor lint test clean
