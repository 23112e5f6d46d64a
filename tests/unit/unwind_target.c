/*
 * The stack the unwinder's test walks (see unwind_target.h). Every function
 * is noipa (never inlined, cloned or merged) and does work after its call,
 * hidden from the optimiser by an empty asm, so no call becomes a jump.
 */
#include "unwind_target.h"

#include <string.h>

int ut_leaf(ut_snapshot *s);
int ut_recurse(int n, ut_snapshot *s);
int ut_depth_c(ut_snapshot *s);
int ut_depth_b(ut_snapshot *s);
int ut_depth_a(ut_snapshot *s);

#if defined(__x86_64__)
/* Stores the registers as they are when it returns to its caller: the pc is
 * the return address, sp the caller's (past the return address), and the
 * callee-saved registers unchanged; the rest (scratch registers) as found. */
void ut_capture(uint64_t *regs);
__asm__(".text\n"
        ".globl ut_capture\n"
        ".type ut_capture, @function\n"
        "ut_capture:\n"
        ".cfi_startproc\n"
        "  movq %rax, 0(%rdi)\n"
        "  movq %rdx, 8(%rdi)\n"
        "  movq %rcx, 16(%rdi)\n"
        "  movq %rbx, 24(%rdi)\n"
        "  movq %rsi, 32(%rdi)\n"
        "  movq %rdi, 40(%rdi)\n"
        "  movq %rbp, 48(%rdi)\n"
        "  leaq 8(%rsp), %rax\n"
        "  movq %rax, 56(%rdi)\n"
        "  movq %r8, 64(%rdi)\n"
        "  movq %r9, 72(%rdi)\n"
        "  movq %r10, 80(%rdi)\n"
        "  movq %r11, 88(%rdi)\n"
        "  movq %r12, 96(%rdi)\n"
        "  movq %r13, 104(%rdi)\n"
        "  movq %r14, 112(%rdi)\n"
        "  movq %r15, 120(%rdi)\n"
        "  movq (%rsp), %rax\n"
        "  movq %rax, 128(%rdi)\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size ut_capture, .-ut_capture\n");

/* The stack holds AddressSanitizer's poisoned red zones: copied by hand,
 * unchecked, since the interceptor of memcpy would stop at them. */
__attribute__((noipa, no_sanitize_address)) static void copy_stack(void *dst,
                                                                  const void *src,
                                                                  size_t len)
{
    const volatile unsigned char *from = src;
    unsigned char *to = dst;

    for (size_t i = 0; i < len; i++)
        to[i] = from[i];
}

__attribute__((noipa)) int ut_leaf(ut_snapshot *s)
{
    size_t len;

    ut_capture(s->regs);
    /* from here on only this frame's scratch slots change: the saved
     * registers and return addresses the CFI points at stay as captured */
    len = (size_t)(s->stack_top - s->regs[7]);
    if (len > s->cap)
        len = s->cap;
    copy_stack(s->stack, (const void *)(uintptr_t)s->regs[7], len);
    s->len = len;
    return 1;
}

__attribute__((noipa)) int ut_recurse(int n, ut_snapshot *s)
{
    int r = n == 0 ? ut_leaf(s) : ut_recurse(n - 1, s);

    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noipa)) int ut_depth_c(ut_snapshot *s)
{
    int r = ut_recurse(3, s);

    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noipa)) int ut_depth_b(ut_snapshot *s)
{
    int r = ut_depth_c(s);

    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noipa)) int ut_depth_a(ut_snapshot *s)
{
    int r = ut_depth_b(s);

    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

__attribute__((noipa)) int ut_unwind_target(ut_snapshot *s)
{
    int r = ut_depth_a(s);

    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

const void *ut_recurse_code(void)
{
    return (const void *)ut_recurse;
}
#else
int ut_unwind_target(ut_snapshot *s)
{
    (void)s;
    return -1;
}

const void *ut_recurse_code(void)
{
    return NULL;
}
#endif
