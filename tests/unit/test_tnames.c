/*
 * threading's names of a process's threads kept after the read that lost
 * them (tnames.c): a stack takes a name a read made while its thread lived
 * saw, never one of an earlier or later owner of its ident when such a read
 * exists.
 */
#include "cpython/tnames.h"
#include "test.h"

#include <stdint.h>
#include <stddef.h>

TEST(tnames_a_thread_gone_keeps_its_name_for_its_own_stacks)
{
    pp_tnames_gone g = {0};
    pp_tname before[2] = {{0x10, 0, "alpha"}, {0x20, 0, "beta"}};
    pp_tname now[1] = {{0x20, 0, "beta"}};
    pp_tname gamma[1];

    /* read at 100 saw both; the read after it only beta */
    ASSERT_EQ_INT(pp_tnames_keep_gone(&g, before, 2, now, 1, 100), 0);
    ASSERT_EQ_INT((int)g.n, 1);
    /* alpha, started at 50, its wait from 60: named by the read at 100 */
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 50, 60), "alpha");
    /* its stack's time after that read, the thread older than it: still alpha */
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 50, 150), "alpha");
    /* a thread with alpha's ident started after that read is another thread */
    ASSERT_EQ_PTR(pp_tnames_gone_name(&g, 0x10, 120, 150), NULL);
    ASSERT_EQ_PTR(pp_tnames_gone_name(&g, 0x30, 0, 60), NULL);
    /* its ident taken by gamma, seen at 200: alpha's stack at 150 stays alpha's
     * (the read at 100, between its start and its stack, saw alpha itself) */
    gamma[0] = (pp_tname){0x10, 0, "gamma"};
    ASSERT_EQ_INT(pp_tnames_keep_gone(&g, gamma, 1, NULL, 0, 200), 0);
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 50, 150), "alpha");
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 160, 170), "gamma");
    pp_tnames_gone_free(&g);
}

TEST(tnames_the_last_read_before_the_stack_names_it)
{
    pp_tnames_gone g = {0};
    pp_tname a[1] = {{0x10, 0, "first"}}, b[1] = {{0x10, 0, "second"}};

    /* one thread renamed: "first" seen last at 100, "second" at 200 */
    ASSERT_EQ_INT(pp_tnames_keep_gone(&g, a, 1, b, 1, 100), 0);
    ASSERT_EQ_INT(pp_tnames_keep_gone(&g, b, 1, NULL, 0, 200), 0);
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 10, 90), "first");      /* none before: after */
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 10, 150), "first");     /* the last before */
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x10, 10, 250), "second");
    /* a name read again unchanged is not gone */
    ASSERT_EQ_INT(pp_tnames_keep_gone(&g, b, 1, b, 1, 300), 0);
    ASSERT_EQ_INT((int)g.n, 2);
    pp_tnames_gone_free(&g);
}

TEST(tnames_the_ring_keeps_the_last)
{
    pp_tnames_gone g = {0};
    pp_tname t = {0, 0, "t"};

    for (uint64_t i = 0; i < PP_TNAMES_GONE + 5; i++) {
        t.ident = 0x1000 + i;
        ASSERT_EQ_INT(pp_tnames_keep_gone(&g, &t, 1, NULL, 0, i), 0);
    }
    ASSERT_EQ_INT((int)g.n, PP_TNAMES_GONE);
    ASSERT_EQ_PTR(pp_tnames_gone_name(&g, 0x1000, 0, 0), NULL);          /* dropped */
    ASSERT_EQ_STR(pp_tnames_gone_name(&g, 0x1000 + PP_TNAMES_GONE + 4, 0, 0), "t");
    pp_tnames_gone_free(&g);
}
