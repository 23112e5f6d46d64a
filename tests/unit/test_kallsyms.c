/*
 * Kernel symbols (src/native/kallsyms.c): synthetic tables, hostile lines,
 * and the running kernel's own /proc/kallsyms against known functions.
 */
#include "native/kallsyms.h"
#include "test.h"

#include <errno.h>

static void parse(const char *text, pp_kallsyms *k)
{
    size_t n = strlen(text);
    char *copy = test_exact_copy(text, n);

    ASSERT_OK(pp_kallsyms_parse(copy, n, k));
    free(copy);
}

TEST(kallsyms_lookup_by_address)
{
    pp_kallsyms k;
    const pp_ksym *s;

    parse("ffffffff81002000 T schedule\n"
          "ffffffff81000000 T _stext\n"
          "ffffffff81001000 t do_one_initcall\n"
          "ffffffff82000000 D jiffies\n"                   /* data: not a frame */
          "ffffffffc0a01000 t e1000_probe\t[e1000e]\n"
          "ffffffffc0a02000 W weak_thing",
          &k);
    ASSERT_EQ_INT(k.n, 5);
    ASSERT_EQ_INT(k.bad_lines, 1);
    ASSERT_TRUE(pp_kallsyms_usable(&k));
    ASSERT_TRUE(pp_kallsyms_find(&k, 0xffffffff80ffffffull) == NULL);
    ASSERT_EQ_STR(pp_kallsyms_find(&k, 0xffffffff81000000ull)->name, "_stext");
    s = pp_kallsyms_find(&k, 0xffffffff81001fffull);
    ASSERT_EQ_STR(s->name, "do_one_initcall");
    ASSERT_EQ_STR(s->dso, "[kernel.kallsyms]");
    ASSERT_EQ_STR(pp_kallsyms_find(&k, 0xffffffff81002010ull)->name, "schedule");
    s = pp_kallsyms_find(&k, 0xffffffffc0a01100ull);
    ASSERT_EQ_STR(s->name, "e1000_probe");
    ASSERT_EQ_STR(s->dso, "[e1000e]");
    ASSERT_EQ_STR(pp_kallsyms_find(&k, 0xffffffffc0a02001ull)->name, "weak_thing");
    pp_kallsyms_free(&k);
}

TEST(kallsyms_hidden_addresses_name_nothing)
{
    pp_kallsyms k;

    /* what an unprivileged reader sees under kptr_restrict */
    parse("0000000000000000 T _stext\n0000000000000000 T schedule\n", &k);
    ASSERT_EQ_INT(k.n, 2);
    ASSERT_TRUE(!pp_kallsyms_usable(&k));
    ASSERT_TRUE(pp_kallsyms_find(&k, 0xffffffff81002010ull) == NULL);
    pp_kallsyms_free(&k);
}

TEST(kallsyms_hostile_lines_are_skipped)
{
    pp_kallsyms k;

    parse("\n x\nffffffff81000000\nffffffff81000000 T\nffffffff81000000 T \n"
          "fffffffff81000000ab T too_long_address_is_cut_at_16\n"
          "ffffffff81000000 Tx glued\nffffffff81000000 T ok\t[unclosed\n",
          &k);
    ASSERT_EQ_INT(k.n, 1);
    ASSERT_EQ_STR(k.v[0].name, "ok");
    ASSERT_EQ_STR(k.v[0].dso, "[kernel.kallsyms]");
    pp_kallsyms_free(&k);
}

/* The address /proc/kallsyms gives name (text symbols), read here by hand. */
static uint64_t address_of(const char *text, const char *name)
{
    char want[128];
    const char *at;

    snprintf(want, sizeof(want), " %s\n", name);
    for (at = strstr(text, want); at; at = strstr(at + 1, want))
        if (at - text >= 18 && strchr("tT", at[-1]) && at[-2] == ' ')
            return strtoull(at - 18, NULL, 16);
    return 0;
}

TEST(kallsyms_of_the_running_kernel)
{
    static const char *const known[] = {"schedule", "do_syscall_64", "vfs_read"};
    pp_kallsyms k;
    char *text = test_read_file("/proc/kallsyms", NULL);
    int rc = pp_kallsyms_load(&k);

    if (rc == -ENOENT || rc == -EACCES || !text)
        TEST_SKIP("/proc/kallsyms cannot be read here (%d)", rc);
    ASSERT_OK(rc);
    if (!pp_kallsyms_usable(&k))
        TEST_SKIP("kernel addresses are hidden from this user (kptr_restrict): needs root");
    ASSERT_GT_INT(k.n, 1000);
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        uint64_t a = address_of(text, known[i]);
        const pp_ksym *s = pp_kallsyms_find(&k, a + 1);
        if (!a)
            TEST_FAIL_("%s is not in /proc/kallsyms", known[i]);
        ASSERT_TRUE(s != NULL);
        ASSERT_EQ_STR(s->name, known[i]);
        ASSERT_EQ_STR(s->dso, "[kernel.kallsyms]");
        ASSERT_EQ_UINT(s->addr, a);
    }
    free(text);
    pp_kallsyms_free(&k);
}
