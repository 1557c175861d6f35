# svmstruct: `make demo` sets everything up and runs the example; `make test` runs the test suite.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SVM    := $(BIN)/svmstruct
OUT    ?= out
SHARED ?= ../shared
DEMO   := data/mq2008-small

.PHONY: install install-test warmup demo test test-fast lint clean

# Create the virtual environment and install svmstruct (re-run when pyproject changes). numba compiles a kernel the
# first time a command runs it and keeps it in the installation's cache; `make warmup` compiles them all at once.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# ... and the test and development extras (pytest and its workers, scikit-learn, trec_eval's measures, Dask, linters)
$(VENV)/.test-installed: $(VENV)/.installed
	$(BIN)/python -m pip install --quiet -e '.[test,distributed]'
	touch $@

# The package's bytecode written once here (a no-op when current): where PYTHONDONTWRITEBYTECODE is set, every
# command would otherwise compile svmstruct's modules from source (~45 ms a run).
install: $(VENV)/.installed
	@$(BIN)/python -m compileall -q svmstruct

install-test: install $(VENV)/.test-installed

# Compile every numba kernel into the cache at once (a few minutes), e.g. before many parallel first runs
warmup: install
	$(BIN)/python -m svmstruct.worker.warmup

# Learn on the shipped MQ2008 sample: NDCG@10 directly (DORM), MAP (SVM-map) and svm_rank's pairs, each
# with C chosen on the validation part, and the error rate (two at a time: their first runs compile their
# kernels); score the test part and compare the runs query by query.
DEMO_RUNS := ndcg map pairs errorrate
demo: install
	@mkdir -p $(OUT)/demo
	@$(MAKE) --no-print-directory -j2 $(DEMO_RUNS:%=$(OUT)/demo/%.pred)
	@echo "== the ndcg@10 (DORM) model on $(DEMO)/test.txt"; $(SVM) eval -m ndcg@10 -m map -m mrr $(DEMO)/test.txt $(OUT)/demo/ndcg.pred
	@echo "== ndcg@10 vs map vs pairs vs errorrate (means, wins/losses per query against the first, Wilcoxon)"
	@$(SVM) eval -m ndcg@10 -m map -m P_10 $(DEMO)/test.txt $(DEMO_RUNS:%=$(OUT)/demo/%.pred)

$(OUT)/demo/ndcg.model: $(DEMO)/train.txt $(DEMO)/vali.txt $(VENV)/.installed
	$(SVM) learn -l ndcg@10 -c 1,10,100 --validate $(DEMO)/vali.txt -v 0 $(DEMO)/train.txt $@
$(OUT)/demo/map.model: $(DEMO)/train.txt $(DEMO)/vali.txt $(VENV)/.installed
	$(SVM) learn -l map -c 0.1,1,10,100 --validate $(DEMO)/vali.txt -v 0 $(DEMO)/train.txt $@
$(OUT)/demo/pairs.model: $(DEMO)/train.txt $(DEMO)/vali.txt $(VENV)/.installed
	$(SVM) learn -l pairs -c 0.1,1,10,100 --validate $(DEMO)/vali.txt --select ndcg@10 -v 0 $(DEMO)/train.txt $@
$(OUT)/demo/errorrate.model: $(DEMO)/train.txt $(VENV)/.installed
	$(SVM) learn -l errorrate -c 1 -v 0 $(DEMO)/train.txt $@
$(OUT)/demo/%.pred: $(OUT)/demo/%.model $(DEMO)/test.txt
	$(SVM) classify $(DEMO)/test.txt $< $@
.PRECIOUS: $(OUT)/demo/%.model

# The linters, then the whole suite on two workers (pytest-xdist), including the parity tests against
# ../shared/reference (skipped if it is absent). pytest's exit code 5 (no test collected) is a failure here.
test: install-test lint
	@$(BIN)/python -m pytest -q -p no:cacheprovider -n 2; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: no tests were collected" >&2; exit 1; fi; exit $$rc

# ruff (pyflakes, pycodestyle, isort, bugbear) over everything, mypy over the package
lint: install-test
	$(BIN)/ruff check svmstruct tests scripts
	$(BIN)/mypy

# The suite without the tests marked slow (6 min on 2 cores from a clean clone, install included, 2026-11-29): for
# quick iterations; make test runs all.
test-fast: install-test
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2 -m "not slow"

clean:
	rm -rf $(OUT) .pytest_cache

# ---- benchmarks and reports against the original programs (need ../shared)
.PHONY: bench-perf bench-f1-oracle bench-synth bench-dorm-oracle bench-assignment bench-hashed bench-engine bench-problems bench-dask \
	bench-startup bench-big bench-threads bench-batch bench-kernel bench-eval parity-report suite-profile
bench-perf: install-test
	$(BIN)/python scripts/bench_perf.py --shared $(SHARED)

parity-report: install-test
	$(BIN)/python scripts/parity_report.py --shared $(SHARED)

bench-f1-oracle: install-test
	$(BIN)/python scripts/bench_f1_oracle.py 1e4 1e5

# ---- experiments (need ../shared/data); results in exp/
.PHONY: exp-mq2008 exp-dorm exp-div exp-longlists exp-noisy exp-kernel exp-defaults exp-real

# learn without -c: each loss family at its default C beside a grid of C on its shared data, tested held out
# (the table of docs/learn.md)
exp-defaults: install-test
	$(BIN)/python scripts/defaults.py --shared $(SHARED)

exp-mq2008: install-test
	$(BIN)/python scripts/exp_mq2008.py --shared $(SHARED) --out exp/mq2008

exp-dorm: install-test
	$(BIN)/python scripts/exp_dorm.py --shared $(SHARED) --out exp/dorm

# the listwise losses on 120-document queries (the synthetic generator of ../shared/tools), C chosen on
# validation by each loss's own measure; test and held-out NDCG@10, MRR, P@10 against pairs and map
exp-longlists: install-test
	$(BIN)/python scripts/exp_longlists.py --shared $(SHARED) --out exp/longlists

# the ranking losses on noisy lists with many relevant documents (150 a query, 30 % relevant, noise 4 and 6),
# C chosen on validation by each loss's own measure; test NDCG@10, MRR, P@10 in exp/noisy/results.md
exp-noisy: install-test
	$(BIN)/python scripts/exp_noisy.py --shared $(SHARED) --out exp/noisy

# every ranking loss, feature map and --pairwise on three real collections (MQ2008's 5 folds; the MSLR-WEB10K and
# Yahoo samples, 5 folds of their queries), C chosen on validation, tested with Wilcoxon against pairs; about an hour
# of one core (two jobs at a time); results kept in exp/real/jobs (delete it after changing a loss)
exp-real: install-test
	$(BIN)/python scripts/exp_real.py --shared $(SHARED) --out exp/real

# linear against RBF kernel models (learn -t 2), C, gamma and K chosen on validation: MQ2008 map (5 folds),
# a nonlinear synthetic ranking task (ring) and Reuters corn (f1); results in exp/kernel/results.md
exp-kernel: install-test
	$(BIN)/python scripts/exp_kernel.py --shared $(SHARED) --out exp/kernel

# SVM-div on the paper's synthetic data (generated into exp/div), subtopics of varied vocabulary size and,
# in exp/div-uniform, all of 200 words; the plot needs matplotlib (pip install '.[plot]')
exp-div: install-test
	$(BIN)/python scripts/exp_div.py --out exp/div
	$(BIN)/python scripts/exp_div.py --out exp/div-uniform --support 200,200

# docs/experiments.md from the results of exp-dorm, exp-mq2008, exp-div and bench-engine
.PHONY: experiments-doc
experiments-doc: install-test
	$(BIN)/python scripts/experiments_doc.py

# svm_rank's scale case (generates the 424 MB synthetic file into exp/synth once)
bench-synth: install-test
	$(BIN)/python scripts/bench_synth_rank.py --shared $(SHARED) --file exp/synth/synth.txt

# the README's Makefile experiment pattern (45 runs on MQ2008) with make -j1, -j2 and beside CPU hogs; with
# ANCHOR_BIN=dir holding svm_rank_learn, svm_rank_classify and trec_eval, the pairs runs against them
bench-batch: install-test
	$(BIN)/python scripts/bench_batch.py --shared $(SHARED) --out exp/batch

# the thread policy (svmstruct/compute/threads.py): parallel regions' start, kernels' cost per unit, learn beside CPU hogs
bench-threads: install-test
	$(BIN)/python scripts/bench_threads.py --shared $(SHARED)

bench-dorm-oracle: install-test
	$(BIN)/python scripts/bench_dorm_oracle.py 50 100 200 500 1000

bench-assignment: install-test
	$(BIN)/python scripts/bench_assignment.py

# hashed feature ids up to 2^31 - 1: peak memory of learn and classify (needs /usr/bin/time)
bench-hashed: install-test
	$(BIN)/python scripts/bench_hashed_ids.py --out exp/hashed

# start-up of short commands: classify and eval on 10 lines, whole process (no shared data needed)
bench-startup: install-test
	ANCHOR_BIN=$(ANCHOR_BIN) $(BIN)/python scripts/bench_startup.py --shared $(SHARED)

# training on Dask: the 1.2M-document synthetic set in 8 shards on local clusters of 1 and 2 workers
bench-dask: install-test
	$(BIN)/python scripts/bench_dask.py --shared $(SHARED) --file exp/big/synth.txt --out exp/dask

# the large case: the reader's MB/s (kernels, whole file on 1 and 2 threads) and learn -l pairs on
# 1.2M documents (exp/big/synth.txt, 1.7 GB, generated from ../shared/tools once)
bench-big: install-test
	$(BIN)/python scripts/bench_big.py --shared $(SHARED) --file exp/big/synth.txt

# learn -t: the svm_perf reference kernel cases whole process against svm_perf's logged times, and the time
# and peak memory of the Nystroem map in K (100, 500, 2000) on the 300k-document file of bench-synth
bench-kernel: install-test
	$(BIN)/python scripts/bench_kernel.py --shared $(SHARED) --file exp/synth/synth.txt

# eval -m map -m ndcg_cut_10 -m P_10 on bench-big's 1.2M-document file against trec_eval on the same qrels
# and run (ANCHOR_BIN=dir holding trec_eval; else ours alone): wall time, peak memory, equal values
bench-eval: install-test
	ANCHOR_BIN=$(ANCHOR_BIN) $(BIN)/python scripts/bench_eval.py --shared $(SHARED)

# bad inputs as users meet them (99 cases as root), through the resident worker and in their own processes: tracebacks,
# silent wrong outputs, lost files, messages of more than one line, and differences between the two ways
.PHONY: audit
audit: install-test
	$(BIN)/python scripts/audit_catalogue.py

# where make test's time goes: the suite on two workers, each test's wall and CPU time (its own and its commands'),
# the files and tests that cost the most CPU (PYTEST_ARGS: more arguments for pytest, e.g. -m "not slow")
suite-profile: install-test
	$(BIN)/python scripts/suite_profile.py -- $(PYTEST_ARGS)

# SVM-multiclass and SVM-hmm beside svm_multiclass and svm_hmm (ANCHOR_BIN=dir holding their four programs):
# objectives, test accuracy, time and memory on digits, 20-class text, the OCR letters and long sequences
bench-problems: install-test
	ANCHOR_BIN=$(ANCHOR_BIN) $(BIN)/python scripts/bench_problems.py --shared $(SHARED) --cases '$(CASES)'

# iterations, oracle calls and time of the plain cutting-plane loop against OCAS's line search
bench-engine: install-test
	$(BIN)/python scripts/bench_engine.py --shared $(SHARED) --out exp/engine
