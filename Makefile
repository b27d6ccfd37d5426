# Two commands on a fresh machine:
#   make demo   ingest the bundled sample knowledge base and answer its questions
#   make test   run the test suite (what CI runs)
VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: demo test install clean

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/ragsift demo

test: $(VENV)/.installed
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) ragsift-demo-kb .pytest_cache
