# The two commands a newcomer needs: `make demo` and `make test`. Both set up .venv first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
OUT    ?= out

.PHONY: demo serve-demo test lint typecheck unit bench card-bank clean

$(STAMP): pyproject.toml scripts/system-deps.sh
	bash scripts/system-deps.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)  ## run the example study end to end: trace -> indicators table -> Markdown report
	$(BIN)/vcost demo --out $(OUT)

serve-demo: $(STAMP)  ## make demo, then serve the web harness on a demo study (links printed)
	$(BIN)/vcost demo --out $(OUT) --serve

test: lint typecheck unit  ## everything CI runs

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy src

unit: $(STAMP)
	$(BIN)/pytest -n 2 -q

bench: $(STAMP)  ## every benchmark in bench/, each against its named baseline
	$(BIN)/python bench/bench_indicators.py
	$(BIN)/python bench/bench_grading.py
	$(BIN)/python bench/bench_import.py
	$(BIN)/python bench/bench_grade_cli.py
	$(BIN)/python bench/bench_plant.py
	$(BIN)/python bench/bench_judge.py
	$(BIN)/python bench/bench_audit.py
	$(BIN)/python bench/bench_harness.py
	$(BIN)/python bench/bench_insert.py
	$(BIN)/python bench/bench_analysis.py
	$(BIN)/python bench/bench_executor.py

humaneval-bench: $(STAMP)  ## import all 164 HumanEval problems with the mutation pass; scores and variants caught (tens of minutes)
	$(BIN)/python bench/bench_humaneval_import.py

card-bank: $(STAMP)  ## grader card for the hidden tests on the whole bundled bank (minutes)
	$(BIN)/python bench/bench_card.py

clean:
	rm -rf $(VENV) $(OUT) .mypy_cache .pytest_cache .ruff_cache
