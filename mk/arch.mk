# The machine $(CC) builds for, and what differs with it: which trampoline
# template is assembled (src/engine/trampoline_$(PP_ARCH).S) and the flags
# that turn on the machine's control-flow protection, which the templates
# honour (endbr64 under -fcf-protection; bti c and paciasp/autiasp under
# -mbranch-protection). Included by the Makefile before its flags.
PP_ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine 2>/dev/null)))
ifeq ($(PP_ARCH)$(NO_BUILD),)
$(shell CC='$(CC)' scripts/probe --explain cc >&2)
$(error perfpy cannot be built here: no C compiler ('$(CC) -dumpmachine' failed))
endif
ifeq ($(PP_ARCH),arm64)
PP_ARCH := aarch64
endif
ARCH_CFLAGS_x86_64 := -fcf-protection
ARCH_CFLAGS_aarch64 := -mbranch-protection=standard
ARCH_CFLAGS ?= $(ARCH_CFLAGS_$(PP_ARCH))
PP_TEMPLATE := src/engine/trampoline_$(PP_ARCH).S
ifeq ($(wildcard $(PP_TEMPLATE))$(NO_BUILD),)
$(error perfpy has no trampoline template for '$(PP_ARCH)' ($(CC) -dumpmachine); x86_64 and aarch64 are supported)
endif
