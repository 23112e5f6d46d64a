# perfpy — GNU Makefile
#
#   make                 the CLI (build/perfpy) and the module for every CPython 3.8+ found
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
#   make bench           benchmarks -> docs/PERFORMANCE.md
#   make docs-images     docs/flamegraph.png, docs/report-html.png (perfpy record of the example)

SHELL := /bin/bash
BUILD ?= build
CC ?= gcc
PREFIX ?= /usr/local
DESTDIR ?=
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
# (tests/integration/test_layers.py checks the includes)
# perfpy-sample's own (libbpf, libelf): not in the CLI's library
SAMPLER_MAIN := src/cli/sample_main.c src/cli/read_main.c src/cli/sample_host.c \
               src/cli/dump_async.c \
               src/cli/dump_main.c src/cli/sample_wall.c src/cli/sample_hold.c
CLI_SRCS := $(filter-out src/cli/main.c $(SAMPLER_MAIN),$(wildcard src/cli/*.c))
CLI_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(CLI_SRCS))
REPORT_SRCS := $(wildcard src/report/*.c)
REPORT_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(REPORT_SRCS))
OUTPUT_SRCS := $(wildcard src/output/*.c)
OUTPUT_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(OUTPUT_SRCS))
PROFILE_SRCS := $(wildcard src/profile/*.c)
PROFILE_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(PROFILE_SRCS))
EXT_SRCS := $(wildcard src/python/*.c)
EXT_HDRS := $(wildcard src/python/*.h) src/sample/pyoffsets.h
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/%,$(BUILD)/obj/tests/%.o,$(UNIT_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(patsubst tests/fuzz/fuzz_%.c,$(BUILD)/fuzz-replay-%,$(FUZZ_SRCS))
HDRS := $(wildcard include/perfpy/*.h src/engine/*.h src/cli/*.h src/report/*.h src/output/*.h \
                   src/profile/*.h src/sample/*.h)
# Sample mode's native half (issue 15): plain C on every machine (maps and
# kallsyms parsers, the splice) and, apart, the libdw unwinder: built only
# on x86_64 where elfutils' header is found, so the rest builds without it.
SAMPLE_SRCS := src/sample/maps.c src/sample/kallsyms.c src/sample/text.c src/sample/splice.c \
               src/sample/linetable.c src/sample/pytables.c src/sample/pytables_find.c \
               src/sample/procs.c src/sample/wall.c src/sample/tnames.c
SAMPLE_OBJS := $(patsubst src/%,$(BUILD)/obj/%.o,$(SAMPLE_SRCS))
SAMPLE_LIB := $(BUILD)/libperfpy_sample.a
PP_UNWIND := $(if $(filter x86_64,$(PP_ARCH)),$(shell echo '\#include <elfutils/libdwfl.h>' | \
               $(CC) -E -x c - >/dev/null 2>&1 && echo 1))
UNWIND_LIB := $(if $(PP_UNWIND),$(BUILD)/libperfpy_unwind.a)
UNWIND_LDLIBS := $(if $(PP_UNWIND),-ldw -lelf)
# The BPF collector (sample.bpf.c, collect.c): with the unwinder, where
# clang, bpftool, libbpf's headers and the kernel's BTF are found
# (scripts/deps.sh installs the first three). vmlinux.h and the skeleton are
# made in BUILD/bpf from this machine's kernel; CO-RE relocates them at load.
# $(call exe,NAME,ALSO): NAME's executable file on PATH, else ALSO if it is one
exe = $(shell for b in $$(command -v $(1) 2>/dev/null) $(2); do \
        [ -f "$$b" ] && [ -x "$$b" ] && { echo "$$b"; break; }; done)
BPFTOOL := $(call exe,bpftool,/usr/sbin/bpftool)
# What a build without sample mode lacked, said once by the build and kept
# in the module directory (BUILD/lib/sample-missing) for perfpy to say when
# sample mode is asked of it (pip installs it with the rest).
BPF_MISSING := $(strip $(if $(filter x86_64,$(PP_ARCH)),,x86_64) \
    $(if $(call exe,clang),,clang) $(if $(BPFTOOL),,bpftool) \
    $(if $(wildcard /usr/include/bpf/libbpf.h),,libbpf-dev) \
    $(if $(or $(PP_UNWIND),$(filter-out x86_64,$(PP_ARCH))),,libdw-dev) \
    $(if $(shell [ -r /sys/kernel/btf/vmlinux ] && echo 1),,kernel-BTF))
PP_BPF := $(if $(BPF_MISSING),,1)
BPF_LIB := $(if $(PP_BPF),$(BUILD)/libperfpy_bpf.a)
BPF_LDLIBS := $(if $(PP_BPF),-lbpf)

ENGINE_LIB := $(BUILD)/libperfpy_engine.a
CLI_LIB := $(BUILD)/libperfpy_cli.a
REPORT_LIB := $(BUILD)/libperfpy_report.a
OUTPUT_LIB := $(BUILD)/libperfpy_output.a
PROFILE_LIB := $(BUILD)/libperfpy_profile.a
# what every program of the pipeline links, in link order
PIPELINE_LIBS := $(REPORT_LIB) $(OUTPUT_LIB) $(PROFILE_LIB) $(ENGINE_LIB)
CLI := $(BUILD)/perfpy
LIBDIR := $(BUILD)/lib

.PHONY: all clean demo test unit deps install uninstall wheel asan ubsan fuzz stress bench fuzz-replay docs-images FORCE
# sample mode's recorder, where the BPF collector is built (sample_main.c)
SAMPLER := $(if $(PP_BPF),$(BUILD)/perfpy-sample)
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

$(BUILD)/bpf/vmlinux.h:
	@mkdir -p $(dir $@)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.new && mv $@.new $@

$(BUILD)/bpf/sample.bpf.o: src/sample/sample.bpf.c src/sample/async.bpf.c src/sample/wall.bpf.c \
                        src/sample/collect_bpf.h src/sample/codename.bpf.h src/sample/codename_bpf.h \
                        $(BUILD)/bpf/vmlinux.h
	clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -I$(BUILD)/bpf -Isrc/sample -c $< -o $@

$(BUILD)/bpf/sample.skel.h: $(BUILD)/bpf/sample.bpf.o
	$(BPFTOOL) gen skeleton $< name pp_sample_bpf > $@.new && mv $@.new $@

$(BUILD)/obj/sample/collect.c.o: src/sample/collect.c $(HDRS) $(BUILD)/bpf/sample.skel.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Isrc -I$(BUILD)/bpf -c $< -o $@

$(BUILD)/libperfpy_bpf.a: $(BUILD)/obj/sample/collect.c.o $(BUILD)/obj/sample/dump_bpf.c.o
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libperfpy_unwind.a: $(BUILD)/obj/sample/unwind.c.o $(BUILD)/obj/sample/modsyms.c.o \
                            $(BUILD)/obj/sample/pyread.c.o $(BUILD)/obj/sample/pycode.c.o \
                            $(BUILD)/obj/sample/pystack.c.o $(BUILD)/obj/sample/pylayout.c.o \
                            $(BUILD)/obj/sample/pyobj.c.o $(BUILD)/obj/sample/dump.c.o \
                            $(BUILD)/obj/sample/dump_ptrace.c.o \
                            $(BUILD)/obj/sample/pyasync.c.o $(BUILD)/obj/sample/codename.c.o
	rm -f $@ && ar rcs $@ $^

$(CLI): $(BUILD)/obj/cli/main.c.o $(CLI_LIB) $(PIPELINE_LIBS)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/perfpy-sample: $(patsubst src/%,$(BUILD)/obj/%.o,$(SAMPLER_MAIN)) $(CLI_LIB) $(BPF_LIB) $(UNWIND_LIB) \
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

# Goals that only run other makes (after installing what is missing) look
# for interpreters there, not here.
ifneq ($(MAKECMDGOALS),)
ifeq ($(filter-out demo test deps docs-images clean wheel,$(MAKECMDGOALS)),)
SKIP_PYTHONS := 1
endif
endif
ifndef SKIP_PYTHONS
-include $(BUILD)/pythons.mk
endif

modules: $(PY_MODULES) $(LIBDIR)/sitecustomize.py $(LIBDIR)/sample-missing

# sample-missing: empty when sample mode is built, else what it lacked
$(LIBDIR)/sample-missing: FORCE
	@mkdir -p $(dir $@)
	@echo "$(BPF_MISSING)" | tr ' ' '\n' | grep . > $@.new || true
	@if ! cmp -s $@.new $@ 2>/dev/null; then mv $@.new $@; \
	    if [ -s $@ ]; then echo "note: sample mode (perfpy-sample) is not built here: missing" \
	        "$$(paste -sd' ' $@)$$(grep -E '^(clang|bpftool|lib.*-dev)$$' $@ | paste -sd' ' | \
	        sed 's/./ (Debian: apt-get install &/;s/$$/)/')" >&2; fi; else rm -f $@.new; fi

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
    $(BUILD)/obj/tests/unit/test_hold.c.o: \
    ALL_CFLAGS += $(if $(PP_UNWIND),-DPP_UNWIND=1)

$(BUILD)/obj/tests/unit/test_collect.c.o: ALL_CFLAGS += $(if $(PP_BPF),-DPP_BPF=1)

# perfpy-sample's hold of a started program (libelf: with the unwinder)
$(BUILD)/unit-tests: $(UNIT_OBJS) $(CLI_LIB) $(BPF_LIB) $(UNWIND_LIB) $(SAMPLE_LIB) $(PIPELINE_LIBS) \
    $(if $(PP_UNWIND),$(BUILD)/obj/cli/sample_hold.c.o)
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
