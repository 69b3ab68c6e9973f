# The course's commands. `make lab` to learn, `make test` to check everything.
# TORCH_VERSION pins the torch that `make` installs (any torch >= 2.2 works):
#   make lab TORCH_VERSION=2.5.1
PYTHON ?= python3
TORCH_VERSION ?= 2.13.0
UV_VERSION := 0.13.9
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(TORCH_VERSION)
COURSE := quizzes/course
PORT ?= 8888
# Two workers, each taking whole test files (their class-wide fixtures run once):
# many tests wait on kernels, browsers and timeouts rather than on the CPU.
# --durations=25: the run ends with its 25 slowest tests, where the time goes.
PYTEST_ARGS ?= -n 2 --dist loadfile --durations=25
# Jupyter refuses to run as root unless told to (containers, CI machines).
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)

.PHONY: install lab test check bench system-tools site catalogues quizzes grade lint clean git-filter

# Two environments in one .venv, each installed once (a stamp per torch version):
# - the student's (`make lab`): torch, the lessons' package, JupyterLab and the frameworks
#   lesson 7 trains with; nothing of the instructor's, the tests or the site;
# - everything (`make install`, `make test` and the rest): the same, plus the test tools (dev),
#   the site's Sphinx (site) and the instructor's package (quizzes/: nbgrader, the grader).
# pip installs uv into the venv, and uv installs everything else: it fetches and unpacks the
# packages side by side, so the student's install takes about 80 s here instead of 3 minutes.
# Pinned, like what it installs. It compiles them as pip does (--compile-bytecode: a lesson's
# kernel starts without compiling torch). uv does not read pip's settings: the folders of
# wheels pip is told to look in (PIP_FIND_LINKS; this machine keeps torch's CPU build in one)
# are passed on. torch is named in each install, so that resolving "torch>=2.2" keeps the pin.
LAB_STAMP := $(VENV)/.lab-$(TORCH_VERSION)
UV_INSTALL = $(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode \
	$(foreach folder,$(PIP_FIND_LINKS),--find-links $(folder))
$(LAB_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	test -x $(BIN)/uv || $(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)"
	$(UV_INSTALL) "torch==$(TORCH_VERSION)" -e ".[lab,frameworks]"
	rm -f $(VENV)/.lab-* $(VENV)/.installed-*
	touch $@

$(STAMP): $(LAB_STAMP) pyproject.toml quizzes/pyproject.toml
	$(UV_INSTALL) "torch==$(TORCH_VERSION)" -e ".[lab,dev,frameworks,site]" -e "./quizzes[test]"
	rm -f $(VENV)/.installed-*
	touch $@

## install: create .venv and install everything: the course, its tests and the instructor's tools
install: $(STAMP)

## lab: install the student's course (first time only) and open JupyterLab on the lessons
##   (`make lab LANG=yo`: the lessons in Yorùbá, notebooks/yo/, generated from the catalogues)
# After `make install` or `make test` the venv also holds nbgrader: tools/lab_config/ keeps
# its menus and server extensions out of the student's lab. LANG=yo chooses the folder only:
# JupyterLab itself runs under C.UTF-8, since "yo" is no locale the system knows.
LAB_FOLDER := notebooks$(if $(filter yo,$(LANG)),/yo)
lab: $(LAB_STAMP)
	@echo "Starting JupyterLab on $(LAB_FOLDER)/ -- open the http://127.0.0.1:$(PORT)/lab?token=... URL printed below."
	cd $(LAB_FOLDER) && $(if $(filter yo,$(LANG)),LANG=C.UTF-8) PATH="$(CURDIR)/$(BIN):$$PATH" JUPYTER_CONFIG_PATH="$(CURDIR)/tools/lab_config" $(CURDIR)/$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 --port=$(PORT) $(ROOT_FLAG) 01_accumulation_is_a_full_batch.ipynb

## test: check the system programs, install (or update) the course, lint it and run every test
# (but the benchmarks: no test here depends on how fast the machine is); prints its time
test: system-tools $(STAMP) git-filter
	@start=$$(date +%s); status=0; set -x; \
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && \
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest $(PYTEST_ARGS) || status=$$?; \
	set +x; echo "make test: lint and tests took $$(( $$(date +%s) - start )) s"; exit $$status

## check: lint, unit tests and doctests (no notebook, browser or process): the edit-test loop
# -p no:logging: no test here reads logs (caplog), and pytest's log capture walks every logger
# that torch, transformers and jupyter made (hundreds) six times a test: seconds in all.
check: $(STAMP) git-filter
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n 2 -p no:logging -q \
		-m "not slow and not browser and not distributed and not benchmark" \
		tests gradacc_lessons tools quizzes/gradacc_grader

## bench: the timings (lessons, the accumulation's cost, the notebook helper) as ratios of one run,
## written with the machine and the date to build/bench-report.md
bench: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -p no:xdist -q -s -m benchmark
	@echo "report: build/bench-report.md"

## system-tools: make sure bwrap and chromium are there (installed as root, else say what to do)
system-tools:
	@$(PYTHON) -m tools.system_tools

## browser: only the real-browser tests (JupyterLab in Chromium); screenshots in test-artifacts/
.PHONY: browser
browser: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -m browser

## site: execute every lesson headless and build the course site into site/ (open site/index.html),
##   and its Yorùbá edition, from the catalogues of locales/yo, into site/yo/
site: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m tools.site

## catalogues: bring locales/yo's gettext catalogues up to date with the English (sphinx-intl),
##   then regenerate the Yorùbá notebooks (notebooks/yo/) from the English and the catalogues
catalogues: $(STAMP)
	$(BIN)/python -m tools.catalogues
	$(BIN)/python -m tools.yoruba_notebooks

## quizzes: build every graded assignment from the bank and the instructor's secret into
## quizzes/course/ (QUIZ_LANG=yo: the final in Yoruba); see quizzes/README.md
QUIZ_LANG ?= en
quizzes: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/gradacc-build --course $(COURSE) --lang $(QUIZ_LANG)

## grade: autograde every submission of quizzes/course/ in the bubblewrap sandbox (quizzes/GRADING.md)
ASSIGNMENT ?= gradacc_faq
grade: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/gradacc-grade --course $(COURSE) $(ASSIGNMENT)

## lint: fix what ruff can fix and format the code
lint: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## git-filter: strip outputs from notebooks as git reads them (nbstripout, .gitattributes), so a
## lesson you ran shows no change in `git status` and its outputs never reach a commit
# --keep-id: the cells keep the ids JupyterLab gave them. The kernel's Python version is the one
# part of the metadata that differs between machines. Not `required`: a clone without the
# venv (or a worktree sharing this config) still works, git warns that the filter is missing.
NBSTRIPOUT := $(BIN)/nbstripout --keep-id --extra-keys metadata.language_info.version
git-filter:
	@if git rev-parse --git-dir > /dev/null 2>&1; then \
		git config filter.nbstripout.clean '$(NBSTRIPOUT)' && \
		git config filter.nbstripout.smudge cat; fi

clean:
	rm -rf site build .pytest_cache .ruff_cache test-artifacts
