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
	$(ECO)/bin/python -m pip install -q -e ".[openenv,verifiers]" "verifiers>=0.1.14,<0.2"
	touch $@

eco: $(ECO)/.installed

# NeMo Gym's and Eval Protocol's own clients (docs/nemo_gym.md, docs/eval_protocol.md): nemo-gym 0.7 needs
# Python 3.13 and pins mcp<2 / openai==2.44; eval-protocol pins litellm 1.105 (openai<3), which cannot share
# .venv-eco with verifiers (openai>=3): a third venv, on the newest python3.13 found. nemo-gym declares
# Requires-Python >=3.13.14 while the newest CPython 3.13 here is 3.13.0: installed with --ignore-requires-python
# (its tests pass on 3.13.0). Without any python3.13, the venv is built on $(PYTHON) with eval-protocol only
# (the extra's marker leaves nemo-gym out) and the NeMo Gym tests are skipped, saying why.
ECO2 := .venv-eco2
PYTHON313 ?= $(or $(lastword $(sort $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13 /root/.pyenv/versions/3.13*/bin/python3.13))),$(shell python3.13 -c 'import sys; print(sys.executable)' 2>/dev/null),$(PYTHON))
$(ECO2)/.installed: pyproject.toml
	$(PYTHON313) -m venv $(ECO2)
	$(ECO2)/bin/python -m pip install -q --upgrade pip
	$(ECO2)/bin/python -m pip install -q --ignore-requires-python -e ".[nemo-gym,eval-protocol]"
	touch $@

eco2: $(ECO2)/.installed

# verifiers 0.4 (verifiers.v1: tasksets, harnesses, vf-eval; docs/verifiers.md): it pins mcp==2.0.0 and openai<3,
# so it has its own venv. `uv` too: verifiers' chat harness runs its program as a uv script (else it downloads uv).
VF4 := .venv-vf4
$(VF4)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VF4)
	$(VF4)/bin/python -m pip install -q --upgrade pip
	$(VF4)/bin/python -m pip install -q -e ".[verifiers]" "verifiers>=0.4,<0.5" uv
	touch $@

vf4: $(VF4)/.installed

# verl's own tool classes without its training stack (docs/verl.md): verl --no-deps plus what
# verl.experimental.agent_loop and verl.tools import (torch CPU, Ray, Hydra, tensordict, transformers, datasets);
# no vLLM/SGLang, no GPU. The full `pip install verl` pulls vLLM-sized stacks that a 2-core CI cannot afford.
VERL := .venv-verl
$(VERL)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VERL)
	$(VERL)/bin/python -m pip install -q --upgrade pip
	$(VERL)/bin/python -m pip install -q "torch==2.13.0"
	$(VERL)/bin/python -m pip install -q --no-deps "verl==0.9.1"
	$(VERL)/bin/python -m pip install -q -e ".[verl]" "ray>=2.41" hydra-core "tensordict>=0.8,<=0.10.0,!=0.9.0" \
	  "transformers>=5.5.3,<5.11,!=5.6.0" pillow numpy codetiming dill pandas datasets cachetools fastapi
	touch $@

# verl's reward loop (NaiveRewardManager, which the agent-loop test calls) imports aiohttp; a step of its own so
# that a .venv-verl built before it needed aiohttp gets it without the 10-minute rebuild
$(VERL)/.reward-loop: $(VERL)/.installed
	$(VERL)/bin/python -m pip install -q "aiohttp>=3.9"
	touch $@

verl: $(VERL)/.installed $(VERL)/.reward-loop

# OpenPipe ART's own types (docs/art.md): openpipe-art from the index with its dependencies (litellm, weave).
ART := .venv-art
$(ART)/.installed: pyproject.toml
	$(PYTHON) -m venv $(ART)
	$(ART)/bin/python -m pip install -q --upgrade pip
	$(ART)/bin/python -m pip install -q -e ".[art]"
	touch $@

art: $(ART)/.installed

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

# The documentation site from docs/ (mkdocs.yml): guides and the API reference from the docstrings.
# --strict: a broken link, a page missing from the nav or a reference that does not resolve fails the build.
docs: $(VENV)/.installed
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

test: $(VENV)/.installed $(ECO)/.installed $(ECO2)/.installed $(VF4)/.installed $(VERL)/.installed $(VERL)/.reward-loop $(ART)/.installed redis-server postgresql sandbox-tools lint docs
	# three workers on the 2-core CI machine (a fifth of the suite's time is waiting: sandboxes, TTL sweeps, killed
	# replicas, subprocess starts; -n 2 kept the cores 81 % busy and took 642 s, -n 3 95 % and 567 s, quiet machine),
	# each test file on one worker: its module-scoped servers are shared;
	# the long files first (tests/conftest.py), so the run does not end on one worker.
	# Bytecode is cached even where the environment says PYTHONDONTWRITEBYTECODE=1 (as this sandbox does): else
	# every worker re-rewrites each test module's asserts and every `rft` subprocess recompiles the package
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -n 3 --dist loadfile --no-loadscope-reorder --durations=25

# A wheel of this checkout in dist/ (until rft-sdk is on the package index), built by PyPA's `build` in a
# small venv of its own (no need for .venv). Install it anywhere with
#   pip install "dist/rft_sdk-<version>-py3-none-any.whl[emulate]"
BUILDENV := .venv-build
wheel:
	$(PYTHON) -m venv $(BUILDENV)
	$(BUILDENV)/bin/python -m pip install -q --upgrade pip build
	rm -f dist/rft_sdk-*.whl
	$(BUILDENV)/bin/python -m build --wheel --outdir dist .
	@ls dist/rft_sdk-*.whl

clean:
	rm -rf $(VENV) $(ECO) $(ECO2) $(VF4) $(VERL) $(ART) $(BUILDENV) runs site build

.PHONY: install eco eco2 vf4 verl art redis-server postgresql sandbox-tools demo doctor docs lint test wheel clean
