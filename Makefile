# Two commands a newcomer needs:  `make demo` (the main job) and `make test`.
# Both install the project first (once; delete .installed to redo it).
PYTHON ?= python3

.installed: pyproject.toml
	# CPU build of torch first, so pip does not pull the multi-GB CUDA build.
	$(PYTHON) -m pip install "torch==2.13.0"
	$(PYTHON) -m pip install -e ".[dev]"
	touch .installed

install: .installed

demo: .installed
	$(PYTHON) -m examples.retail.main_job

test: .installed
	$(PYTHON) -m pytest -q

.PHONY: install demo test
