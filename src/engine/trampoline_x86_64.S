/*
 * The trampoline template for x86-64. The arena copies these bytes once per
 * Python code object; each copy gets its own name in perf.
 *
 * The binding calls a copy as  tramp(a, b, c, target)  with the System V
 * ABI: a, b, c in %rdi, %rsi, %rdx are the evaluator's own arguments and pass
 * through untouched; target (%rcx) is the evaluator to run. The copy keeps a
 * proper frame, so frame-pointer unwinders walk through it and the DWARF CFI
 * built by ehframe.c describes it exactly:
 *
 *   offset  bytes         instruction          CFA after it
 *    0      f3 0f 1e fa   endbr64              rsp+8   (only with -fcf-protection)
 *    0/4    55            push %rbp            rsp+16, rbp at CFA-16
 *    1/5    48 89 e5      mov  %rsp,%rbp       rbp+16
 *    4/8    ff d1         call *%rcx           rbp+16
 *    6/10   5d            pop  %rbp            rsp+8
 *    7/11   c3            ret
 *
 * pp_template_layout records the offsets the CFI needs, so the C side never
 * hard-codes them (tests/unit/test_arena.c checks the bytes above).
 */
#if defined(__CET__)
#include <cet.h>          /* _CET_ENDBR and the .note.gnu.property (IBT, SHSTK) */
#else
#define _CET_ENDBR
#endif

        .text
        .globl  pp_template_start
        .hidden pp_template_start
        .type   pp_template_start, @function
        .balign 16
pp_template_start:
        _CET_ENDBR
1:      push    %rbp
2:      mov     %rsp, %rbp
3:      call    *%rcx
4:      pop     %rbp
5:      ret
        .globl  pp_template_end
        .hidden pp_template_end
pp_template_end:
        .size   pp_template_start, pp_template_end - pp_template_start

        .section .rodata
        .globl  pp_template_layout
        .hidden pp_template_layout
        .type   pp_template_layout, @object
        .balign 4
/* struct pp_template_layout in arch.h: offsets from the start, in bytes */
pp_template_layout:
        .long   1b - pp_template_start     /* push_at */
        .long   2b - pp_template_start     /* after_push */
        .long   3b - pp_template_start     /* after_mov */
        .long   4b - pp_template_start     /* after_call (the return address) */
        .long   5b - pp_template_start     /* after_pop */
        .long   pp_template_end - pp_template_start   /* size */
        .long   0                          /* after_sign: no return-address */
        .long   0                          /* after_auth:   signing on x86-64 */
        .size   pp_template_layout, 32

        .section .note.GNU-stack,"",@progbits
