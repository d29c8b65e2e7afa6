# Two commands a newcomer needs:  `make demo` (the main job) and `make test`.
# Both set up .venv first (once; `make clean` to start over).
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

demo: $(VENV)/.installed
	$(PY) -m examples.retail.main_job

test: $(VENV)/.installed
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) runs

.PHONY: install demo test clean
