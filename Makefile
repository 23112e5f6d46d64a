# perfpy — GNU Makefile
#
#   make                 the CLI (build/perfpy), sample mode's perfpy-sample (x86_64: needs
#                        libbpf-dev and libdw-dev, or stops naming them; PERFPY_NO_SAMPLE=1
#                        builds the rest) and the module for every CPython 3.8+ found
#   make PYTHONS="/path/to/python3.10 ..."   only for these interpreters
#   make demo            profile the bundled example (examples/example.py)
#   make test            the whole test suite (installs missing test tools first), on
#                        this machine and in a Debian sid root (WORLDS=host to skip it)
#   make install [PREFIX=/usr/local] [DESTDIR=]   CLI, man page, module for every interpreter
#   make install PYTHON=/path/to/python           module + startup hook into one interpreter/venv
#   make wheel           dist/: a manylinux wheel (module for every CPython found) and the
#                        sdist; what pip installs (docs/packaging.md)
#   make asan | ubsan    unit tests, fuzz replays and one interpreter's integration tests
#                        under sanitizers (build-asan/, build-ubsan/)
#   make fuzz            libFuzzer runs of every parser (FUZZ_RUNS executions each)
#   make stress          the reliability suite at full size (100,000 toggles/functions)
#   make mutants         mutation testing: each bug kept in tests/mutants/NAME.diff applied
#                        to a copy of the tree (build/mutants/tree), built, the tests its
#                        header names run, reverted; which were killed, which survived
#                        (scripts/mutants; report in build/mutants/report.md, tests/README.md)
#   make bench           benchmarks -> docs/PERFORMANCE.md
#   make docs-images     docs/flamegraph.png, docs/report-html.png (perfpy record of the example)
#   make gen-bpf         remake src/collect/sample.skel.h, the compiled BPF program (clang, bpftool)
#   make man             docs/perfpy.1 from perfpy's --help texts (scripts/gen-man)

SHELL := /bin/bash
BUILD ?= build
CC ?= gcc
PREFIX ?= /usr/local
DESTDIR ?=
# Goals that only run other makes (after installing what is missing), or
# build nothing, neither ask the machine what it has (scripts/probe) nor
# look for interpreters: a machine without a compiler can still run
# `make deps` or `make test`, which install it first.
SUBMAKE_GOALS := demo test deps docs-images clean wheel uninstall fuzz aarch64 mutants gen-bpf
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out $(SUBMAKE_GOALS),$(MAKECMDGOALS)),)
NO_BUILD := 1
SKIP_PYTHONS := 1
endif
endif
include mk/arch.mk

WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
SAN_FLAGS ?=
BASE_CFLAGS := -std=gnu11 -g -O2 -fPIC -fno-omit-frame-pointer $(ARCH_CFLAGS) \
               -D_GNU_SOURCE -Iinclude $(WARN) $(SAN_FLAGS)
CFLAGS ?=
ALL_CFLAGS := $(BASE_CFLAGS) $(CFLAGS)
LDFLAGS ?=
LDLIBS := -lpthread -lz -lm

ENGINE_SRCS := $(wildcard src/engine/*.c) $(PP_TEMPLATE)
ENGINE_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(ENGINE_SRCS))
# Four layers, each its own library; dependencies point one way:
# cli (commands) -> report (perf.data -> profile) -> output (profile -> bytes)
#   -> profile (the model both fill and read: frames, stacks, threads, samples)
# perfpy-sample (src/sampler, a program of its own: libbpf, libelf) sits
# beside the commands, over the readers of a running program: collect (the
# BPF programs and their loader) -> cpython (its interpreter's memory) ->
# native (/proc, symbols, unwinding, the splice) -> profile
# (tests/integration/test_layers.py checks the includes)
# perfpy writes what perfpy-sample reads: the request and the event names are in both
CLI_SRCS := $(filter-out src/cli/main.c,$(wildcard src/cli/*.c)) src/sampler/request.c \
            src/collect/event.c
CLI_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(CLI_SRCS))
REPORT_SRCS := $(wildcard src/report/*.c)
REPORT_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(REPORT_SRCS))
OUTPUT_SRCS := $(wildcard src/output/*.c)
OUTPUT_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(OUTPUT_SRCS))
PROFILE_SRCS := $(wildcard src/profile/*.c)
PROFILE_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(PROFILE_SRCS))
# perfpy-sample's own parts (its main apart): in a library the unit tests link too
SAMPLER_SRCS := $(filter-out src/sampler/main.c,$(wildcard src/sampler/*.c))
SAMPLER_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(SAMPLER_SRCS))
EXT_SRCS := $(wildcard src/python/*.c)
EXT_HDRS := $(wildcard src/python/*.h) src/cpython/pyoffsets.h
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/%,$(BUILD)/obj/tests/%.o,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(patsubst tests/fuzz/fuzz_%.c,$(BUILD)/fuzz-replay-%,$(FUZZ_SRCS))
HDRS := $(wildcard include/perfpy/*.h src/engine/*.h src/cli/*.h src/report/*.h src/output/*.h \
                   src/profile/*.h src/sampler/*.h src/collect/*.h src/cpython/*.h src/native/*.h)
# Sample mode's readers that need no library: plain C on every machine
# (the /proc parsers, the splice, the readers of a CPython's memory), linked
# by perfpy's own tests and fuzzers too; what reads ELF files (libelf) and
# unwinds (libdw) is the unwinder's library.
SAMPLE_SRCS := src/native/maps.c src/native/kallsyms.c src/native/text.c src/native/splice.c \
               src/native/procs.c src/native/debugpath.c src/collect/offcpu.c src/collect/wall.c src/collect/codename.c \
               src/collect/event.c \
               $(filter-out src/cpython/pysyms.c,$(wildcard src/cpython/*.c))
SAMPLE_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(SAMPLE_SRCS))
SAMPLE_LIB := $(BUILD)/libperfpy_sample.a
# Sample mode itself (perfpy-sample): x86_64. What it is built with is
# asked of scripts/probe, where every question the build asks of the
# machine is answered once (a compile and link, not a look for a file):
#   libelf, libdw  the CPython reader and the native unwinder: perfpy-sample
#                  is built where they are (read mode needs nothing more)
#   libbpf         the BPF collector, sample mode proper
# The BPF program comes compiled from the tree (src/collect/sample.skel.h,
# made by scripts/gen-bpf): clang, bpftool and the kernel's BTF are needed
# only to remake it. A machine that lacks a library stops the build before
# anything is compiled, with the packages to install, unless
# PERFPY_NO_SAMPLE=1 asks for the rest only (then perfpy-sample is built
# without its BPF collector where elfutils is there, so read mode works).
# (SKIP_PYTHONS: a goal that builds nothing, or the aarch64 cross build,
# whose headers come from an unpacked root: no probe.)
PP_NO_SAMPLE := $(filter-out 0,$(PERFPY_NO_SAMPLE))
ifndef SKIP_PYTHONS
LACKS := $(shell CC='$(CC)' CFLAGS='$(CFLAGS)' LDFLAGS='$(LDFLAGS)' scripts/probe cc zlib $(if $(filter x86_64,$(PP_ARCH)),libelf libdw libbpf) \
           | cut -d' ' -f1)
ifneq ($(filter cc zlib,$(LACKS)),)
$(shell CC='$(CC)' scripts/probe --explain $(filter cc zlib,$(LACKS)) >&2)
$(error perfpy cannot be built here: what is missing is named above)
endif
endif
ifeq ($(PP_ARCH)$(SKIP_PYTHONS),x86_64)
SAMPLE_LACKS := $(filter libelf libdw libbpf,$(LACKS))
ifneq ($(SAMPLE_LACKS),)
ifeq ($(PP_NO_SAMPLE),)
$(shell { echo "perfpy: sample mode (the default as root: Python, C and kernel frames in one" \
             "stack, no hook) cannot be built here"; \
           CC='$(CC)' scripts/probe --explain $(SAMPLE_LACKS); \
           echo "Install them and run make again; or build without sample mode:" \
             "PERFPY_NO_SAMPLE=1 make"; } >&2)
$(error sample mode's libraries are missing (above))
endif
endif
PP_UNWIND := $(if $(filter libelf libdw,$(SAMPLE_LACKS)),,1)
PP_BPF := $(if $(PP_UNWIND),$(if $(PP_NO_SAMPLE)$(filter libbpf,$(SAMPLE_LACKS)),,1))
endif
UNWIND_LIB := $(if $(PP_UNWIND),$(BUILD)/libperfpy_unwind.a)
UNWIND_LDLIBS := $(if $(PP_UNWIND),-ldw -lelf)
BPF_LIB := $(if $(PP_UNWIND),$(BUILD)/libperfpy_bpf.a)
BPF_LDLIBS := $(if $(PP_BPF),-lbpf)
# without libbpf (PERFPY_NO_SAMPLE=1): a collector that says why it cannot
COLLECT_SRC := $(addprefix src/collect/,$(if $(PP_BPF),collect.c offers.c sizes.c,collect_none.c))
BPF_SKEL := src/collect/sample.skel.h
BPF_SRCS := $(shell scripts/gen-bpf --inputs)

ENGINE_LIB := $(BUILD)/libperfpy_engine.a
CLI_LIB := $(BUILD)/libperfpy_cli.a
REPORT_LIB := $(BUILD)/libperfpy_report.a
OUTPUT_LIB := $(BUILD)/libperfpy_output.a
PROFILE_LIB := $(BUILD)/libperfpy_profile.a
# what every program of the pipeline links, in link order
PIPELINE_LIBS := $(REPORT_LIB) $(OUTPUT_LIB) $(PROFILE_LIB) $(ENGINE_LIB)
CLI := $(BUILD)/perfpy
LIBDIR := $(BUILD)/lib

.PHONY: all clean demo test unit deps install uninstall wheel asan ubsan fuzz stress mutants bench fuzz-replay docs-images gen-bpf man FORCE
# sample and read modes' recorder (src/sampler/), where elfutils is
SAMPLER := $(if $(PP_UNWIND),$(BUILD)/perfpy-sample)
# its parts; without elfutils only top's view (plain C), for the unit tests
SAMPLER_LIB := $(BUILD)/libperfpy_sampler.a
SAMPLER_LIB_OBJS := $(if $(PP_UNWIND),$(SAMPLER_OBJS),$(BUILD)/obj/sampler/top_view.c.o)
all: $(CLI) modules $(SAMPLER)
	@:

# ---- engine and CLI ------------------------------------------------------
$(BUILD)/obj/%.c.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -Isrc/engine -c $< -o $@

$(BUILD)/obj/%.S.o: src/%.S
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(ENGINE_LIB): $(ENGINE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(CLI_LIB): $(CLI_OBJS)
	rm -f $@ && ar rcs $@ $^

$(REPORT_LIB): $(REPORT_OBJS)
	rm -f $@ && ar rcs $@ $^

$(OUTPUT_LIB): $(OUTPUT_OBJS)
	rm -f $@ && ar rcs $@ $^

$(PROFILE_LIB): $(PROFILE_OBJS)
	rm -f $@ && ar rcs $@ $^

$(SAMPLE_LIB): $(SAMPLE_OBJS)
	rm -f $@ && ar rcs $@ $^

# The BPF program, compiled in the tree: src/collect/sample.skel.h is what
# scripts/gen-bpf made of BPF_SRCS, whose hash it carries. A change to them
# that was not remade stops here with what to run (or is remade, where
# clang, bpftool and the kernel's BTF are).
$(BUILD)/bpf-fresh: $(BPF_SRCS) $(BPF_SKEL) scripts/gen-bpf
	@scripts/gen-bpf --build
	@mkdir -p $(dir $@) && touch $@

$(BUILD)/obj/collect/collect.c.o $(BUILD)/obj/collect/sizes.c.o: \
$(BUILD)/obj/collect/%.c.o: src/collect/%.c $(HDRS) $(BUILD)/bpf-fresh
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -c $< -o $@

$(BUILD)/libperfpy_bpf.a: $(patsubst src/%,$(BUILD)/obj/%.o,$(COLLECT_SRC))
	rm -f $@ && ar rcs $@ $^

gen-bpf:
	@scripts/gen-bpf

# docs/perfpy.1 from the help perfpy prints (commit it with the change)
man: $(CLI)
	@scripts/gen-man --perfpy $(CLI)

$(BUILD)/libperfpy_unwind.a: $(BUILD)/obj/native/unwind.c.o $(BUILD)/obj/native/debugfile.c.o \
                            $(BUILD)/obj/native/modsyms.c.o \
                            $(BUILD)/obj/cpython/pysyms.c.o
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libperfpy_sampler.a: $(SAMPLER_LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

$(CLI): $(BUILD)/obj/cli/main.c.o $(CLI_LIB) $(PIPELINE_LIBS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/perfpy-sample: $(BUILD)/obj/sampler/main.c.o $(SAMPLER_LIB) $(BPF_LIB) $(UNWIND_LIB) \
                        $(SAMPLE_LIB) $(PIPELINE_LIBS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(BPF_LDLIBS) $(UNWIND_LDLIBS)

# ---- the module, once per interpreter ------------------------------------
# build/pythons.mk lists one module per EXT_SUFFIX (scripts/find-pythons).
# Notes about skipped interpreters are shown when the set changes.
$(BUILD)/pythons.txt: FORCE
	@mkdir -p $(BUILD)
	@PYTHONS="$(PYTHONS)" scripts/find-pythons > $@.new 2> $@.notes
	@if cmp -s $@.new $@ 2>/dev/null; then rm -f $@.new; else \
	    cat $@.notes >&2; mv $@.new $@; \
	    if [ ! -s $@ ]; then echo "note: no CPython 3.8+ with headers found; building the CLI only" >&2; fi; fi
	@rm -f $@.notes

$(BUILD)/pythons.mk: $(BUILD)/pythons.txt scripts/pythons-mk
	@scripts/pythons-mk $(BUILD) < $< > $@

ifndef SKIP_PYTHONS
-include $(BUILD)/pythons.mk
endif

modules: $(PY_MODULES) $(LIBDIR)/sitecustomize.py $(LIBDIR)/sample-missing

# What a build without sample mode lacked, kept in the module directory
# (pip installs it with the rest) for perfpy to say when sample mode is
# asked of it, and doctor at once: the reason on its first line, then what
# to install. Empty when sample mode is built.
SAMPLE_WHY := $(if $(filter x86_64,$(PP_ARCH)),$(if $(PP_BPF),,built with PERFPY_NO_SAMPLE=1),\
    sample mode is for x86_64 (this build is for $(PP_ARCH)))
$(LIBDIR)/sample-missing: FORCE
	@mkdir -p $(dir $@)
	@{ [ -z "$(SAMPLE_WHY)" ] || echo "$(SAMPLE_WHY)"; \
	   [ -z "$(SAMPLE_WHY)" ] || [ -z "$(SAMPLE_LACKS)" ] || \
	       CC='$(CC)' scripts/probe --explain $(SAMPLE_LACKS) || :; } > $@.new
	@if ! cmp -s $@.new $@ 2>/dev/null; then mv $@.new $@; \
	    if [ -s $@ ]; then echo "note: sample mode is not in this build: $$(head -n 1 $@)" >&2; \
	        tail -n +2 $@ >&2; fi; else rm -f $@.new; fi

$(LIBDIR)/perfpy.%.so: $(EXT_SRCS) $(EXT_HDRS) $(ENGINE_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fvisibility=hidden -Isrc/python $(PY_INC) -shared -o $@ $(EXT_SRCS) $(ENGINE_LIB) -lpthread

$(LIBDIR)/sitecustomize.py: src/python/sitecustomize.py
	@mkdir -p $(dir $@)
	cp $< $@

# ---- tests ---------------------------------------------------------------
$(BUILD)/obj/tests/%.c.o: tests/%.c $(HDRS) tests/unit/test.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -Isrc/engine -Itests/unit -c $< -o $@

# The unwinder's test target: named functions without frame pointers, so
# only DWARF CFI unwinds them (tests/unit/unwind_target.c).
$(BUILD)/obj/tests/unit/unwind_target.c.o: ALL_CFLAGS += -fomit-frame-pointer \
    -fno-optimize-sibling-calls -fasynchronous-unwind-tables
$(BUILD)/obj/tests/unit/test_unwind.c.o $(BUILD)/obj/tests/unit/test_pyread.c.o \
    $(BUILD)/obj/tests/unit/test_pylayout.c.o $(BUILD)/obj/tests/unit/test_pyobj.c.o \
    $(BUILD)/obj/tests/unit/test_pyasync.c.o $(BUILD)/obj/tests/unit/test_codename.c.o \
    $(BUILD)/obj/tests/unit/test_hold.c.o $(BUILD)/obj/tests/unit/test_read_wall.c.o: \
    ALL_CFLAGS += $(if $(PP_UNWIND),-DPP_UNWIND=1)

$(BUILD)/obj/tests/unit/test_collect.c.o $(BUILD)/obj/tests/unit/test_kallsyms_named.c.o: \
    ALL_CFLAGS += $(if $(PP_BPF),-DPP_BPF=1)

# test_options.c reads every option from `perfpy CMD --help` of the perfpy
# beside it: made with the tests (order-only: it is not linked in).
# every library: the tests reach into each (the sampler's hold and top view too)
$(BUILD)/unit-tests: $(UNIT_OBJS) $(SAMPLER_LIB) $(CLI_LIB) $(BPF_LIB) $(UNWIND_LIB) $(SAMPLE_LIB) \
    $(PIPELINE_LIBS) | $(CLI)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS) $(BPF_LDLIBS) $(UNWIND_LDLIBS)

# the profile model's memory for an hour of samples (docs/PERFORMANCE.md)
$(BUILD)/bench-model-memory: bench/model_memory.c $(PIPELINE_LIBS)
	$(CC) $(ALL_CFLAGS) -Isrc $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fuzz-replay-%: tests/fuzz/fuzz_%.c tests/fuzz/replay_main.c $(CLI_LIB) $(SAMPLE_LIB) $(PIPELINE_LIBS)
	$(CC) $(ALL_CFLAGS) -Isrc -Isrc/engine $(LDFLAGS) -o $@ $^ $(LDLIBS)

unit: $(BUILD)/unit-tests
	$(BUILD)/unit-tests

fuzz-replay: $(FUZZ_REPLAY)

deps:
	@scripts/deps.sh

# deps first, then a fresh make: a parallel make would build before the
# compiler is installed, and the interpreters found change once deps ran.
# WORLDS: host (this machine) and sid (a Debian sid root with today's
# CPython and perf, made once by scripts/sidroot; see tests/run-all).
WORLDS ?= host,sid
test: deps
	@$(MAKE) --no-print-directory all $(BUILD)/unit-tests $(FUZZ_REPLAY)
	@tests/run-all $(BUILD) --worlds $(WORLDS)

demo:
	@scripts/deps.sh --demo
	@$(MAKE) --no-print-directory all
	@scripts/demo $(BUILD)

docs-images: deps
	@$(MAKE) --no-print-directory all
	@scripts/docs-images $(BUILD)

# ---- sanitizers, fuzzing, long runs ---------------------------------------
# asan/ubsan: the unit tests, the fuzz-corpus replays and the integration
# tests of one interpreter (SAN_PYTHON, default: the newest found), all built
# with the sanitizer in build-asan/ or build-ubsan/; the interpreter runs with
# the ASan runtime preloaded and CPython's own leaks at exit suppressed
# (tests/integration/support.py, lsan-cpython.supp).
SAN_PYTHON ?= $(firstword $(shell PYTHONS= scripts/find-pythons 2>/dev/null | awk '{print $$1}' | tail -1))

asan: deps
	@$(MAKE) --no-print-directory BUILD=build-asan PYTHONS="$(SAN_PYTHON)" \
	    SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
	    all build-asan/unit-tests fuzz-replay
	@tests/run-all build-asan --sanitizer address

ubsan: deps
	@$(MAKE) --no-print-directory BUILD=build-ubsan PYTHONS="$(SAN_PYTHON)" \
	    SAN_FLAGS="-fsanitize=undefined -fno-sanitize-recover=all" \
	    all build-ubsan/unit-tests fuzz-replay
	@tests/run-all build-ubsan --sanitizer undefined

# fuzz: libFuzzer with ASan+UBSan, FUZZ_RUNS executions of each target in
# tests/fuzz/ (build-fuzz/; installs clang if missing; FUZZ_JOBS side by side)
FUZZ_RUNS ?= 10000000
fuzz:
	@scripts/fuzz $(FUZZ_RUNS)

# stress: the reliability suite at full size (100,000 toggles and functions,
# 10x the concurrency scenarios, every thread stack size); the measured
# results go to BUILD/reliability-stress.jsonl (tests/integration/rel_table.py
# turns them into docs/RELIABILITY.md's table)
stress: deps
	@$(MAKE) --no-print-directory all
	@rm -f $(BUILD)/reliability-stress.jsonl
	@PERFPY_STRESS=1 PERFPY_REL_RESULTS=$(abspath $(BUILD))/reliability-stress.jsonl \
	    /usr/bin/python3 tests/integration/run.py --build $(BUILD) -k reliability

mutants:
	@scripts/mutants

bench: all
	@scripts/deps.sh --bench
	@bench/run

# ---- install -------------------------------------------------------------
install: all
	@scripts/install "$(DESTDIR)" "$(PREFIX)" "$(PYTHON)" "$(BUILD)"

uninstall:
	@scripts/install --uninstall "$(DESTDIR)" "$(PREFIX)" "$(PYTHON)" "$(BUILD)"

# ---- wheel and sdist (pip install; docs/packaging.md) ----------------------
wheel:
	@PYTHONS="$(PYTHONS)" scripts/wheel $(BUILD)

include mk/aarch64.mk

clean:
	rm -rf build build-asan build-ubsan build-fuzz build-clang dist

FORCE:
