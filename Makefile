# Three commands: `make demo`, `make serve` (the example gateway, until Ctrl-C) and `make test`. Each sets up .venv when it is missing.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo serve test lint docs unit bench soak install clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)
	bash scripts/install_npm_tools.sh
	bash scripts/install_conformance.sh
	bash scripts/install_services.sh

demo: install
	$(BIN)/python examples/demo.py

serve: install
	$(BIN)/python -m toolmesh serve --config examples/toolmesh.json

lint: install
	$(BIN)/ruff check
	$(BIN)/ruff format --check
	$(BIN)/mypy --strict src

unit: install
	$(BIN)/python -m pytest -q

docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir .site

test: lint docs unit

bench: install
	$(BIN)/python bench/native_dispatch.py
	$(BIN)/python bench/mcp_call.py
	$(BIN)/python bench/bridges_langchain.py
	$(BIN)/python bench/provider_export.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/gateway.py
	$(BIN)/python bench/bridges_openai_agents.py

# The gateway under mixed load for 60 s, its upstreams killed and restarted: calls lost, memory slope.
soak: install
	$(BIN)/python bench/soak.py

clean:
	rm -rf $(VENV) .npm-tools .conformance .site
