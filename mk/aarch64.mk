# The aarch64 cross build, tested under qemu-user (tests/aarch64/run).
#
#   make aarch64        $(A64_BUILD)/: the CLI, the unit tests, the module for
#                       Debian's arm64 CPython 3.11, and the unwinding probe
#                       of tests/aarch64, built with Debian's
#                       gcc-aarch64-linux-gnu (scripts/aarch64-setup installs
#                       it and unpacks the arm64 interpreter into
#                       $(A64_ROOT))
#
# The same Makefile, run again with the cross compiler: mk/arch.mk picks
# the aarch64 template and -mbranch-protection=standard from $(CC). The
# module's headers come from the unpacked root, not from scripts/find-pythons
# (which would have to run the interpreter).
A64_BUILD ?= $(BUILD)/aarch64
A64_ROOT := $(A64_BUILD)/root
A64_CC ?= aarch64-linux-gnu-gcc
A64_MODULE := $(A64_BUILD)/lib/perfpy.cpython-311-aarch64-linux-gnu.so
A64_MAKE = $(MAKE) --no-print-directory BUILD=$(A64_BUILD) CC=$(A64_CC) \
           SKIP_PYTHONS=1 SAN_FLAGS= \
           PY_INC="-isystem $(A64_ROOT)/usr/include/python3.11 -isystem $(A64_ROOT)/usr/include" \
           LDFLAGS="-L$(A64_ROOT)/usr/lib/aarch64-linux-gnu -L$(A64_ROOT)/lib/aarch64-linux-gnu"

.PHONY: aarch64 aarch64-targets
aarch64:
	@scripts/aarch64-setup $(A64_ROOT)
	@$(A64_MAKE) aarch64-targets

aarch64-targets: $(CLI) $(BUILD)/unit-tests $(LIBDIR)/perfpy.cpython-311-aarch64-linux-gnu.so \
                 $(LIBDIR)/sitecustomize.py $(BUILD)/unwind_probe.so

# A C function to call from Python code (ctypes) that unwinds with libgcc
# through the trampolines it registers the engine's CFI for.
$(BUILD)/unwind_probe.so: tests/aarch64/unwind_probe.c $(ENGINE_LIB) $(HDRS)
	$(CC) $(ALL_CFLAGS) -Isrc/engine -shared -o $@ $< $(ENGINE_LIB) -ldl
