# The README's two set-up commands are `make demo` and `make test`. Each builds .venv with plain
# venv + pip, so pip takes the local CPU torch wheel (uv and poetry would fetch a CUDA build).
# `make demo` installs only what the demo needs; `make test` installs everything.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
DEMO_EXTRAS := ml,lexicon
EXTRAS := ml,hub,lexicon,anthropic,collect,dev,inspect,lm-eval,docs
DEMO_OUT ?= demo-out
SITE ?= site

.PHONY: install install-demo install-llm llama-server browser demo demo-llm test lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip

# Reinstall only when the project's dependencies change.
$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -e '.[$(DEMO_EXTRAS)]'
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.installed-demo
	$(BIN)/pip install -e '.[$(EXTRAS)]'
	touch $@

install-demo: $(VENV)/.installed-demo
install: $(VENV)/.installed

# llama-cpp-python builds from source (about 5 minutes on 2 cores); only the LLM tests need it.
# Built for AVX2 rather than -march=native: ggml's AMX kernels crash (ldtilecfg) in VMs that
# report AMX but do not enable it. --no-cache-dir keeps pip from reusing a native wheel.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
$(VENV)/.installed-llm: $(VENV)/.installed
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --no-cache-dir -e '.[$(EXTRAS),llm]'
	touch $@

install-llm: $(VENV)/.installed-llm

# llama.cpp's own C++ server, from the llama.cpp sources that llama-cpp-python vendors (the same
# version): it computes next-token probabilities for the last position only, where the Python
# server computes the whole vocabulary's logits for every prompt token (choice mode is several
# times faster). Static, so the binary stands alone in .venv/bin. About 10 minutes on 2 cores.
# No web UI: its build would try to download prebuilt assets (the server runs with --no-webui).
LLAMA_SRC := $(VENV)/llama.cpp
$(BIN)/llama-server: $(VENV)/.installed-llm
	@command -v cmake >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1 \
	  || (apt-get update -q && apt-get install -y -q cmake g++)
	rm -rf $(LLAMA_SRC) && mkdir -p $(LLAMA_SRC)
	$(BIN)/pip download --no-deps --no-binary :all: --dest $(LLAMA_SRC) \
	  "llama-cpp-python==$$($(BIN)/python -c 'import importlib.metadata as m; print(m.version("llama-cpp-python"))')"
	tar xzf $(LLAMA_SRC)/llama_cpp_python-*.tar.gz -C $(LLAMA_SRC)
	cmake -S $$(ls -d $(LLAMA_SRC)/llama_cpp_python-*/vendor/llama.cpp) -B $(LLAMA_SRC)/build \
	  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF $(LLAMA_CMAKE_ARGS) -DLLAMA_CURL=OFF \
	  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_USE_PREBUILT_UI=OFF
	cmake --build $(LLAMA_SRC)/build --target llama-server -j $$(nproc)
	cp $(LLAMA_SRC)/build/bin/llama-server $@

llama-server: $(BIN)/llama-server

# Debian's chromium for the browser tests (Playwright cannot download a browser here).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -q && apt-get install -y -q chromium)

demo: install-demo
	$(BIN)/attunebench demo --out $(DEMO_OUT)
	@echo "attunebench is installed in $(BIN): run $(BIN)/attunebench, or 'source $(BIN)/activate' to put it on your PATH"

# A real LLM end to end: Gemma 3 270M behind llama.cpp's server, through the openai/ provider.
demo-llm: install-llm llama-server
	$(BIN)/python -m attunebench.engine.demo_llm --out $(DEMO_OUT)/llm

test: install-llm llama-server browser
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir $(SITE)

docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve

clean:
	rm -rf $(VENV) $(DEMO_OUT) $(SITE) .pytest_cache .mypy_cache .ruff_cache
