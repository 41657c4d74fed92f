# Two entry points: `make demo` (main job) and `make test` (lint + tests). Both create .venv.
VENV ?= .venv
PY := $(VENV)/bin/python
export SDL_VIDEODRIVER := dummy
export SDL_AUDIODRIVER := dummy
export RAY_AUTH_MODE := disabled
export MPLBACKEND := Agg

.PHONY: install demo test lint format bench clean

# torch is pinned here (a CPU wheel); the package itself only asks for torch>=2.4.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[dev,ray]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(VENV)/bin/maxminq reproduce --scale quick --out results/quick --published docs/runs

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy src/maxminq

test: lint
	$(PY) -m pytest -n 2 --dist worksteal -q

format: install
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

bench: install
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache results
