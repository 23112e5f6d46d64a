/*
 * The one table of per-architecture facts: what the ELF header, the DWARF
 * CFI and the jitdump header must say about the trampoline template.
 * Each architecture has a trampoline_<arch>.S and a row here; nothing else
 * in the engine names an architecture.
 *
 * Both CFI rows exist on every host (they are only numbers), so the unit
 * tests check the .eh_frame bytes of both architectures wherever they run;
 * pp__arch is the row of the machine this build runs on.
 */
#ifndef PERFPY_ARCH_H
#define PERFPY_ARCH_H

#include <stdint.h>

/* Offsets into the template, in bytes, from trampoline_<arch>.S. */
struct pp_template_layout {
    uint32_t push_at;      /* the instruction that saves the frame pointer */
    uint32_t after_push;   /* CFA moves by one frame record here */
    uint32_t after_mov;    /* the frame pointer is the CFA base from here */
    uint32_t after_call;   /* return address of the call to the evaluator */
    uint32_t after_pop;    /* frame pointer restored; CFA back to the SP */
    uint32_t size;         /* whole template */
    uint32_t after_sign;   /* return address signed (aarch64 paciasp); 0: never */
    uint32_t after_auth;   /* return address authenticated (autiasp); 0: never */
};

extern const struct pp_template_layout pp_template_layout;
extern const uint8_t pp_template_start[];
extern const uint8_t pp_template_end[];

/* How an architecture calls, as far as the CFI of the template cares. */
struct pp_arch {
    const char *name;
    uint16_t elf_machine;      /* e_machine, and the jitdump's elf_mach */
    uint8_t dwarf_sp;          /* DWARF register numbers */
    uint8_t dwarf_fp;
    uint8_t dwarf_ra;          /* the return-address column */
    uint8_t code_align;        /* CIE code alignment factor */
    int8_t data_align;         /* CIE data alignment factor */
    uint8_t cfa_at_entry;      /* at a call's target, CFA = SP + this */
    uint8_t link_register;     /* 1: the call leaves the return address in
                                * register dwarf_ra and the template's push
                                * saves it at CFA-8 with the frame pointer;
                                * 0: the call pushed it, at CFA-8 */
};

/*                          name      elf  sp  fp  ra  caf daf cfa lr */
#define PP_ARCH_X86_64     {"x86-64",  62,  7,  6, 16, 1, -8,  8, 0}
#define PP_ARCH_AARCH64    {"aarch64", 183, 31, 29, 30, 4, -8,  0, 1}
/* x86-64: EM_X86_64, %rsp, %rbp, the rip column (System V psABI 3.6.2);
 * aarch64: EM_AARCH64, sp, x29, x30 (DWARF for the Arm 64-bit
 * Architecture, 4.1); the factors are what GNU as writes (ehframe.c). */

extern const struct pp_arch pp__arch_x86_64, pp__arch_aarch64;
extern const struct pp_arch pp__arch;   /* this build's row */

#define PP_WORD 8   /* both are 64-bit: pointers, stack slots, CFI padding */

#if defined(__x86_64__)
#define PP_ARCH_ROW          PP_ARCH_X86_64
#define PP_TRAP_BYTE         0xccu  /* int3: fills slot bytes after the code */
#define PP_TEMPLATE_BTI      0
#elif defined(__aarch64__)
#define PP_ARCH_ROW          PP_ARCH_AARCH64
#define PP_TRAP_BYTE         0x00u  /* 00000000 is udf #0: traps */
/* The template starts with a landing pad (bti c) when the compiler
 * protects branches (-mbranch-protection=bti|standard); the arena then
 * maps its pages PROT_BTI where the kernel can. */
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define PP_TEMPLATE_BTI      1
#else
#define PP_TEMPLATE_BTI      0
#endif
#else
#error "perfpy has trampoline templates for x86-64 and aarch64 only"
#endif

#endif /* PERFPY_ARCH_H */
