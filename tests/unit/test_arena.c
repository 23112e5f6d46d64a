/*
 * Arena and template: slots are distinct, executable, never writable, and a
 * copy of the template calls its target with the caller's arguments.
 */
#include "test.h"
#include "perfpy/engine.h"
#include "arch.h"

#include <stdio.h>
#include <errno.h>
#include <string.h>

/* The smallest slot: the template, rounded up to 16 (16 on x86-64, 32 on
 * aarch64 with branch protection). */
#define SLOT ((pp_template_size() + 15) & ~(size_t)15)

/* Which protection /proc/self/maps shows for addr ("r-xp", ...). */
static void prot_of(const void *addr, char out[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    uintptr_t a = (uintptr_t)addr;

    strcpy(out, "????");
    while (f && fgets(line, sizeof(line), f)) {
        uintptr_t lo, hi;
        char perms[5];
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %4s", &lo, &hi, perms) == 3 &&
            a >= lo && a < hi) {
            memcpy(out, perms, 5);
            break;
        }
    }
    if (f)
        fclose(f);
}

static void *seen_a, *seen_b, *seen_c;
static void *target(void *a, void *b, void *c)
{
    seen_a = a;
    seen_b = b;
    seen_c = c;
    return (void *)0x5eed;
}

#if defined(__x86_64__)
TEST(template_bytes_match_the_documented_layout)
{
    static const uint8_t body[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3};
    static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
    size_t n = pp_template_size();
    const uint8_t *code = pp_template_code();
    size_t skip = n - sizeof(body);

    ASSERT_TRUE(n == sizeof(body) || n == sizeof(body) + sizeof(endbr));
    if (skip)
        ASSERT_EQ_MEM(code, endbr, sizeof(endbr));
    ASSERT_EQ_MEM(code + skip, body, sizeof(body));
    ASSERT_EQ_UINT(pp_template_layout.size, n);
    ASSERT_EQ_UINT(pp_template_layout.push_at, skip);
    ASSERT_EQ_UINT(pp_template_layout.after_push, skip + 1);
    ASSERT_EQ_UINT(pp_template_layout.after_mov, skip + 4);
    ASSERT_EQ_UINT(pp_template_layout.after_call, skip + 6);
    ASSERT_EQ_UINT(pp_template_layout.after_pop, skip + 7);
    ASSERT_EQ_UINT(pp_template_layout.after_sign, 0);
    ASSERT_EQ_UINT(pp_template_layout.after_auth, 0);
}
#elif defined(__aarch64__)
/* The words of trampoline_aarch64.S's table, in the order it runs them. */
static uint32_t word_at(const uint8_t *code, size_t off)
{
    uint32_t w;

    memcpy(&w, code + off, 4);
    return w;
}

TEST(template_bytes_match_the_documented_layout)
{
    const struct pp_template_layout *l = &pp_template_layout;
    const uint8_t *code = pp_template_code();
    size_t n = pp_template_size(), at = 0;
    int pac = l->after_sign != 0;

    ASSERT_EQ_UINT(n, 20 + 4u * PP_TEMPLATE_BTI + 8u * (unsigned)pac);
    ASSERT_EQ_UINT(l->size, n);
    if (PP_TEMPLATE_BTI)
        ASSERT_EQ_UINT(word_at(code, (at += 4) - 4), 0xd503245f);   /* bti c */
    if (pac) {
        ASSERT_EQ_UINT(word_at(code, at), 0xd503233f);              /* paciasp */
        at += 4;
        ASSERT_EQ_UINT(l->after_sign, at);
    }
    ASSERT_EQ_UINT(l->push_at, at);
    ASSERT_EQ_UINT(word_at(code, at), 0xa9bf7bfd);   /* stp x29, x30, [sp,#-16]! */
    ASSERT_EQ_UINT(l->after_push, at + 4);
    ASSERT_EQ_UINT(word_at(code, at + 4), 0x910003fd);   /* mov x29, sp */
    ASSERT_EQ_UINT(l->after_mov, at + 8);
    ASSERT_EQ_UINT(word_at(code, at + 8), 0xd63f0060);   /* blr x3 */
    ASSERT_EQ_UINT(l->after_call, at + 12);
    ASSERT_EQ_UINT(word_at(code, at + 12), 0xa8c17bfd);  /* ldp x29, x30, [sp], #16 */
    ASSERT_EQ_UINT(l->after_pop, at + 16);
    at += 16;
    if (pac) {
        ASSERT_EQ_UINT(word_at(code, at), 0xd50323bf);   /* autiasp */
        at += 4;
        ASSERT_EQ_UINT(l->after_auth, at);
    } else {
        ASSERT_EQ_UINT(l->after_auth, 0);
    }
    ASSERT_EQ_UINT(word_at(code, at), 0xd65f03c0);       /* ret */
}
#endif

TEST(arena_rejects_bad_slot_sizes)
{
    pp_arena a;

    ASSERT_EQ_INT(pp_arena_init(&a, 0), -EINVAL);
    ASSERT_EQ_INT(pp_arena_init(&a, 24), -EINVAL);   /* not a multiple of 16 */
    ASSERT_EQ_INT(pp_arena_init(&a, SLOT), 0);
}

TEST(trampoline_calls_target_with_callers_arguments)
{
    pp_arena a;
    pp_trampoline_fn fn;
    void *r;

    ASSERT_OK(pp_arena_init(&a, SLOT));
    ASSERT_OK(pp_arena_take(&a, &fn));
    r = fn((void *)1, (void *)2, (void *)3, (void *)(uintptr_t)target);
    ASSERT_EQ_PTR(r, (void *)0x5eed);
    ASSERT_EQ_PTR(seen_a, (void *)1);
    ASSERT_EQ_PTR(seen_b, (void *)2);
    ASSERT_EQ_PTR(seen_c, (void *)3);
    pp_arena_release(&a);
}

TEST(slots_are_executable_never_writable_and_never_reused)
{
    pp_arena a;
    pp_trampoline_fn prev = NULL;
    char prot[5];
    size_t n = 0;

    ASSERT_OK(pp_arena_init(&a, SLOT));
    /* More than one chunk's worth, so the arena must grow. */
    for (n = 0; n < 10000; n++) {
        pp_trampoline_fn fn;
        ASSERT_OK(pp_arena_take(&a, &fn));
        ASSERT_TRUE(fn != prev);
        if (n % 997 == 0) {
            prot_of((const void *)(uintptr_t)fn, prot);
            ASSERT_EQ_STR(prot, "r-xp");
            ASSERT_EQ_PTR(fn((void *)n, 0, 0, (void *)(uintptr_t)target), (void *)0x5eed);
            ASSERT_EQ_PTR(seen_a, (void *)n);
        }
        prev = fn;
    }
    ASSERT_EQ_UINT(a.slots_used, 10000);
    ASSERT_GE_INT(a.bytes_mapped, 10000 * SLOT);
    /* Whole chunks are mapped: at most one chunk beyond what slots use. */
    ASSERT_LE_INT(a.bytes_mapped, 10000 * SLOT + a.chunk_size);
    pp_arena_release(&a);
}

/* A forked child's next slot lies in a chunk it maps itself: perf names
 * inherited chunks from the parent's map, where the parent goes on using
 * the same free slots for its own functions. */
TEST(after_fork_the_next_slot_is_in_a_new_chunk)
{
    pp_arena a;
    pp_trampoline_fn first, inherited, child;
    uintptr_t lo, hi;

    ASSERT_OK(pp_arena_init(&a, SLOT));
    ASSERT_OK(pp_arena_take(&a, &first));
    ASSERT_OK(pp_arena_take(&a, &inherited));
    lo = (uintptr_t)first;
    hi = lo + a.chunk_size;
    pp_arena_fork_child(&a);
    ASSERT_OK(pp_arena_take(&a, &child));
    ASSERT_TRUE((uintptr_t)child < lo || (uintptr_t)child >= hi);
    ASSERT_EQ_UINT(a.bytes_mapped, 2 * a.chunk_size);
    ASSERT_EQ_PTR(child((void *)7, 0, 0, (void *)(uintptr_t)target), (void *)0x5eed);
    pp_arena_release(&a);
}

TEST(wide_slots_for_jitdump_keep_trap_bytes_after_the_code)
{
    pp_arena a;
    pp_trampoline_fn f1, f2;
    const uint8_t *p;

    ASSERT_OK(pp_arena_init(&a, 128));
    ASSERT_OK(pp_arena_take(&a, &f1));
    ASSERT_OK(pp_arena_take(&a, &f2));
    ASSERT_EQ_INT((uintptr_t)f2 - (uintptr_t)f1, 128);
    p = (const uint8_t *)(uintptr_t)f1;
    ASSERT_EQ_MEM(p, pp_template_code(), pp_template_size());
    for (size_t i = pp_template_size(); i < 128; i++)
        ASSERT_EQ_UINT(p[i], PP_TRAP_BYTE);
    pp_arena_release(&a);
}

#if defined(__aarch64__) && PP_TEMPLATE_BTI
#include <signal.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef HWCAP2_BTI
#define HWCAP2_BTI (1 << 17)
#endif

static void *bti_entry;

static void on_sigill(int sig, siginfo_t *si, void *uc)
{
    _exit(si->si_addr == bti_entry ? 42 : 43);
}

/* The arena's pages are PROT_BTI: a call that lands past the trampoline's
 * bti c (here on its stp) traps at that very instruction, as it would in
 * the program's own guarded code; a call to the start works (above). */
TEST(aarch64_a_call_past_the_landing_pad_traps)
{
    pp_arena a;
    pp_trampoline_fn fn;
    pid_t pid;
    int status;

    if (!(getauxval(AT_HWCAP2) & HWCAP2_BTI)) {
        printf("      (this CPU has no BTI: nothing to check)\n");
        return;
    }
    ASSERT_OK(pp_arena_init(&a, SLOT));
    ASSERT_OK(pp_arena_take(&a, &fn));
    bti_entry = (uint8_t *)(uintptr_t)fn + pp_template_layout.push_at;
    pid = fork();
    if (pid == 0) {
        struct sigaction sa;
        pp_trampoline_fn past = (pp_trampoline_fn)(uintptr_t)bti_entry;

        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_sigill;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGILL, &sa, NULL);
        past(0, 0, 0, (void *)(uintptr_t)target);
        _exit(0);
    }
    ASSERT_EQ_INT(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ_INT(WEXITSTATUS(status), 42);   /* 0: no trap; 43: elsewhere */
}
#endif
