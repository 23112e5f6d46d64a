/*
 * perf_probe.c: which unwinder a perf uses, from the build options of the
 * two perfs of the test worlds (Debian 12's 6.1, Debian sid's 7.2), cut to
 * their relevant lines, and from text that is no answer at all.
 */
#include "report/perf_probe.h"
#include "test.h"

/* perf 6.1 (Debian 12): both built in; libunwind is the one used */
static const char perf61[] =
    "perf version 6.1.187\n"
    "                 dwarf: [ on  ]  # HAVE_DWARF_SUPPORT\n"
    "             libunwind: [ on  ]  # HAVE_LIBUNWIND_SUPPORT\n"
    "    libdw-dwarf-unwind: [ on  ]  # HAVE_DWARF_SUPPORT\n";

/* perf 7.2 (Debian sid): libunwind off */
static const char perf72[] =
    "perf version 7.2.13\n"
    "                 dwarf: [ on  ]  # HAVE_LIBDW_SUPPORT\n"
    "          dwarf-unwind: [ on  ]  # HAVE_DWARF_UNWIND_SUPPORT\n"
    "    libdw-dwarf-unwind: [ on  ]  # HAVE_LIBDW_SUPPORT\n"
    "             libunwind: [ OFF ]  # HAVE_LIBUNWIND_SUPPORT ( tip: Deprecated )\n";

TEST(perf_probe_libunwind_wins_when_both_are_built_in)
{
    ASSERT_EQ_INT(pp_perf_unwinder_parse(perf61), PP_UNWIND_LIBUNWIND);
}

TEST(perf_probe_libdw_when_libunwind_is_off)
{
    ASSERT_EQ_INT(pp_perf_unwinder_parse(perf72), PP_UNWIND_LIBDW);
}

TEST(perf_probe_no_unwinder)
{
    ASSERT_EQ_INT(pp_perf_unwinder_parse("perf version 7.0\n  libunwind: [ OFF ]\n"
                                         "  dwarf-unwind: [ OFF ]\n"), PP_UNWIND_NONE);
    ASSERT_EQ_INT(pp_perf_unwinder_parse(""), PP_UNWIND_NONE);
    /* a feature name inside another word is not that feature */
    ASSERT_EQ_INT(pp_perf_unwinder_parse("  xlibunwind: [ on  ]\n"), PP_UNWIND_NONE);
}

TEST(perf_probe_names)
{
    ASSERT_EQ_STR(pp_unwinder_name(PP_UNWIND_LIBDW), "libdw");
    ASSERT_EQ_STR(pp_unwinder_name(PP_UNWIND_LIBUNWIND), "libunwind");
    ASSERT_EQ_STR(pp_unwinder_name(PP_UNWIND_NONE), "none");
}
