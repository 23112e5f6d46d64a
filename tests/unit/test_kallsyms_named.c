/*
 * A table of kernel addresses the kernel named itself (kallsyms.c's
 * pp_kallsyms_named, perfpy dump's in sample mode: its BPF program prints
 * each address with %ps instead of the dump reading /proc/kallsyms): the
 * frames it makes are those a /proc/kallsyms table makes of the same
 * addresses, a module's symbol in "[module]", an address no symbol holds
 * "[unknown]"; and the names the running kernel gives its own functions,
 * where BPF can be loaded.
 */
#include "collect/collect.h"
#include "native/kallsyms.h"
#include "test.h"

#include <errno.h>
#include <string.h>

TEST(kallsyms_named_makes_the_frames_kallsyms_makes)
{
    /* as /proc/kallsyms says them, and as %ps prints the same addresses */
    static const char text[] = "ffffffff81000000 T _stext\n"
                               "ffffffff81001000 t do_nanosleep\n"
                               "ffffffffc0a01000 t e1000_probe\t[e1000e]\n";
    static const uint64_t ips[] = {0xffffffff81001010ull, 0xffffffffc0a01020ull,
                                   0xffffffff81000004ull, 0xffffffff80000000ull};
    static const char *const said[] = {"do_nanosleep", "e1000_probe [e1000e]", "_stext",
                                       "0xffffffff80000000"};
    pp_native_frame a[4], b[4];
    pp_kallsyms whole, named;
    char *copy = test_exact_copy(text, strlen(text));
    size_t na, nb;

    ASSERT_OK(pp_kallsyms_parse(copy, strlen(text), &whole));
    free(copy);
    ASSERT_OK(pp_kallsyms_named(&named, ips, said, 4));
    ASSERT_TRUE(pp_kallsyms_usable(&named));
    na = pp_kallsyms_frames(&whole, ips, 4, a, 4);
    nb = pp_kallsyms_frames(&named, ips, 4, b, 4);
    ASSERT_EQ_UINT(na, 4);
    ASSERT_EQ_UINT(nb, 4);
    for (size_t i = 0; i < 4; i++) {
        ASSERT_EQ_STR(b[i].sym, a[i].sym);
        ASSERT_EQ_STR(b[i].dso, a[i].dso);
    }
    ASSERT_EQ_STR(b[1].dso, "[e1000e]");
    ASSERT_EQ_STR(b[3].sym, "[unknown]");
    pp_kallsyms_free(&whole);
    pp_kallsyms_free(&named);
}

TEST(kallsyms_named_by_the_running_kernel)
{
#if !PP_BPF
    TEST_SKIP("sample mode is not built here (no libbpf: the collector names nothing)");
#else
    pp_collector *c = NULL;
    char why[256], (*names)[PP_BPF_KSYM_LEN];
    pp_kallsyms k;
    const pp_ksym *s;
    uint64_t addr[2];
    int rc;

    /* two functions every kernel has, found in /proc/kallsyms */
    ASSERT_OK(pp_kallsyms_load(&k));
    if (!pp_kallsyms_usable(&k)) {
        pp_kallsyms_free(&k);
        TEST_SKIP("/proc/kallsyms shows no addresses here (not root)");
    }
    addr[0] = addr[1] = 0;
    for (size_t i = 0; i < k.n; i++) {
        if (!strcmp(k.v[i].name, "schedule"))
            addr[0] = k.v[i].addr + 4;
        if (!strcmp(k.v[i].name, "do_nanosleep"))
            addr[1] = k.v[i].addr + 4;
    }
    ASSERT_TRUE(addr[0] && addr[1]);
    if ((rc = pp_collect_open(&c, 99, PP_COLLECT_SNAPSHOT, why, sizeof(why))) != 0) {
        pp_kallsyms_free(&k);
        TEST_SKIP("sample mode cannot load here: %s", why);
    }
    names = calloc(2, sizeof(*names));
    ASSERT_OK(pp_collect_kernel_names(c, addr, 2, names));
    ASSERT_EQ_STR(names[0], "schedule");
    ASSERT_EQ_STR(names[1], "do_nanosleep");
    s = pp_kallsyms_find(&k, addr[1]);
    ASSERT_EQ_STR(s->name, names[1]);
    free(names);
    pp_collect_close(c);
    pp_kallsyms_free(&k);
#endif
}
