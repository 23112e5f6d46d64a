/*
 * The interpreter probe's parser (src/cli/interp.c): the one place that
 * reads what the probe printed, for record and doctor alike.
 */
#include "cli/interp.h"
#include "test.h"

#include <errno.h>

TEST(interp_parse_finds_its_line_among_others)
{
    pp_interp in;

    ASSERT_OK(pp_interp_parse("Warning: something\nperfpy-probe cpython 3.13.5 3 13 "
                              ".cpython-313-x86_64-linux-gnu.so 1 /usr/bin/python3.13\n", &in));
    ASSERT_EQ_INT(in.known, 1);
    ASSERT_EQ_INT(in.cpython, 1);
    ASSERT_EQ_INT(in.major, 3);
    ASSERT_EQ_INT(in.minor, 13);
    ASSERT_EQ_STR(in.version, "3.13.5");
    ASSERT_EQ_STR(in.ext_suffix, ".cpython-313-x86_64-linux-gnu.so");
    ASSERT_EQ_STR(in.executable, "/usr/bin/python3.13");
    ASSERT_EQ_INT(pp_interp_auto_mode(&in), PP_MODE_PERF);
    in.frame_pointers = 0;
    ASSERT_EQ_INT(pp_interp_auto_mode(&in), PP_MODE_JIT);
}

TEST(interp_parse_refuses_what_is_not_the_probe)
{
    pp_interp in;

    ASSERT_EQ_INT(pp_interp_parse("cpython 3.13.5 3 13 x 1\n", &in), -EPROTO);
    ASSERT_EQ_INT(pp_interp_parse("perfpy-probe pypy 3.10\n", &in), -EPROTO);
    ASSERT_EQ_INT(in.known, 0);
    ASSERT_EQ_INT(pp_interp_auto_mode(&in), PP_MODE_JIT);
}
