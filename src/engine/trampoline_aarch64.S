/*
 * The trampoline template for aarch64. The arena copies these bytes once per
 * Python code object; each copy gets its own name in perf.
 *
 * The binding calls a copy as  tramp(a, b, c, target)  with the AAPCS64:
 * a, b, c in x0, x1, x2 are the evaluator's own arguments and pass through
 * untouched; target (x3) is the evaluator to run. The copy builds a frame
 * record (x29, x30) as every AAPCS64 function with a frame does, so
 * frame-pointer unwinders walk through it, and the DWARF CFI built by
 * ehframe.c describes it exactly. With branch protection on
 * (-mbranch-protection=standard, what the Makefile asks for), it starts
 * with a BTI landing pad and signs the return address it saves:
 *
 *   offset  word      instruction               CFA     x29     x30 (RA)
 *    0      d503245f  bti c         (BTI)       sp+0    same    same
 *    4      d503233f  paciasp       (PAC)       sp+0    same    same, signed
 *    8      a9bf7bfd  stp x29, x30, [sp,#-16]!  sp+16   cfa-16  cfa-8
 *   12      910003fd  mov x29, sp               x29+16  cfa-16  cfa-8
 *   16      d63f0060  blr x3                    x29+16  cfa-16  cfa-8
 *   20      a8c17bfd  ldp x29, x30, [sp], #16   sp+0    same    same, signed
 *   24      d50323bf  autiasp       (PAC)       sp+0    same    same
 *   28      d65f03c0  ret
 *
 * Without BTI the bti c goes, without PAC the paciasp/autiasp: the offsets
 * shift and pp_template_layout says where things are (the C side never
 * hard-codes them; tests/unit/test_arena.c checks the words above). The
 * hints are written as `hint #n` so any ARMv8.0 assembler takes them; on a
 * CPU without BTI or PAC they are no-ops.
 */
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define PP_BTI_C        hint    #34     /* bti c: landing pad for blr */
#define PP_FEATURE_BTI  1
#else
#define PP_BTI_C
#define PP_FEATURE_BTI  0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT)
#define PP_SIGN_RA      hint    #25     /* paciasp: sign x30 with sp, key A */
#define PP_AUTH_RA      hint    #29     /* autiasp */
#define PP_FEATURE_PAC  2
#else
#define PP_SIGN_RA
#define PP_AUTH_RA
#define PP_FEATURE_PAC  0
#endif

        .text
        .globl  pp_template_start
        .hidden pp_template_start
        .type   pp_template_start, %function
        .balign 16
pp_template_start:
        PP_BTI_C
        PP_SIGN_RA
6:      stp     x29, x30, [sp, #-16]!
2:      mov     x29, sp
3:      blr     x3
4:      ldp     x29, x30, [sp], #16
5:      PP_AUTH_RA
7:      ret
        .globl  pp_template_end
        .hidden pp_template_end
pp_template_end:
        .size   pp_template_start, pp_template_end - pp_template_start

        .section .rodata
        .globl  pp_template_layout
        .hidden pp_template_layout
        .type   pp_template_layout, %object
        .balign 4
/* struct pp_template_layout in arch.h: offsets from the start, in bytes */
pp_template_layout:
        .long   6b - pp_template_start     /* push_at */
        .long   2b - pp_template_start     /* after_push */
        .long   3b - pp_template_start     /* after_mov */
        .long   4b - pp_template_start     /* after_call (the return address) */
        .long   5b - pp_template_start     /* after_pop */
        .long   pp_template_end - pp_template_start   /* size */
#if PP_FEATURE_PAC
        .long   6b - pp_template_start     /* after_sign */
        .long   7b - pp_template_start     /* after_auth */
#else
        .long   0, 0                       /* the return address is not signed */
#endif
        .size   pp_template_layout, 32

/*
 * The ELF property that keeps the linked program's BTI/PAC marking (the
 * linker drops it when one object lacks it). Recipe:
 *   $ echo 'int f(void){return 0;}' > e.c
 *   $ aarch64-linux-gnu-gcc -mbranch-protection=standard -c e.c
 *   $ aarch64-linux-gnu-readelf -n e.o     ... AArch64 feature: BTI, PAC
 *   $ aarch64-linux-gnu-objcopy -O binary -j .note.gnu.property e.o n.bin
 *   $ xxd n.bin
 *   00000000: 0400 0000 1000 0000 0500 0000 474e 5500  ............GNU.
 *   00000010: 0000 00c0 0400 0000 0300 0000 0000 0000  ................
 * (the words below; 3 = BTI | PAC; tests/aarch64/run.py reads it back).
 */
#if PP_FEATURE_BTI || PP_FEATURE_PAC
        .pushsection .note.gnu.property, "a"
        .balign 8
        .long   4                       /* n_namesz */
        .long   16                      /* n_descsz */
        .long   5                       /* NT_GNU_PROPERTY_TYPE_0 */
        .asciz  "GNU"
        .long   0xc0000000              /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
        .long   4                       /* pr_datasz */
        .long   PP_FEATURE_BTI | PP_FEATURE_PAC
        .long   0                       /* pad to 8 */
        .popsection
#endif

        .section .note.GNU-stack,"",%progbits
