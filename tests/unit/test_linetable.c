/*
 * linetable.c on tables built by hand from CPython's documented formats
 * (co_lnotab, 3.10's co_linetable, 3.11+'s location table), each offset's
 * line known; sample mode's integration tests check it on real code.
 */
#include "cpython/linetable.h"
#include "cpython/pyoffsets.h"
#include "test.h"

#define LINE(t, fmt, off) pp_linetable_line((t), sizeof(t), (fmt), (off), 10)

TEST(linetable_lnotab)
{
    /* +2 bytes: line +1; +4 bytes: line +1 (3.8, 3.9: the line changes where
     * the address passes) */
    static const unsigned char t[] = {2, 1, 4, 1};

    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, 0), 10);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, 1), 10);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, 2), 11);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, 5), 11);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, 6), 12);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, 600), 12);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LNOTAB, -1), 10);          /* not started */
}

TEST(linetable_310)
{
    /* [0,2): +0, [2,6): +1, [6,8): no line, [8,10): -1 from 11 */
    static const unsigned char t[] = {2, 0, 4, 1, 2, 0x80, 2, 0xff};

    ASSERT_EQ_INT(LINE(t, PP_LINES_310, 0), 10);
    ASSERT_EQ_INT(LINE(t, PP_LINES_310, 3), 11);
    ASSERT_EQ_INT(LINE(t, PP_LINES_310, 6), 10);               /* none: the def line */
    ASSERT_EQ_INT(LINE(t, PP_LINES_310, 8), 10);
    ASSERT_EQ_INT(LINE(t, PP_LINES_310, 100), 10);             /* past the end */
}

TEST(linetable_locations)
{
    static const unsigned char t[] = {
        0x80 | 13 << 3 | 1, 0x02,             /* no column, 2 units, line +1 -> 11 */
        0x80 | 11 << 3 | 2, 0, 4,             /* one line form, 3 units, +1 -> 12 */
        0x80 | 15 << 3 | 0,                   /* no location, 1 unit */
        0x80 | 14 << 3 | 1, 0x05, 0, 1, 2,    /* long form, 2 units, -2 -> 10 */
        0x80 | 3 << 3 | 0, 7,                 /* short form, 1 unit, +0 -> 10 */
        0x80 | 14 << 3 | 0, 0x40 | 8, 0x01, 0, 1, 2, /* long, a two-byte varint:
                                                 (8 | 1 << 6) = 72 -> +36 -> 46 */
    };

    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 0), 11);         /* byte offsets: */
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 2), 11);         /* 2 bytes a unit */
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 4), 12);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 8), 12);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 10), 10);        /* no location */
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 12), 10);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 16), 10);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 18), 46);
    ASSERT_EQ_INT(LINE(t, PP_LINES_LOCATIONS, 20), 10);        /* past the end */
}

TEST(linetable_garbage_gives_the_def_line)
{
    static const unsigned char no_entry[] = {0x01, 0x02, 0x03};
    static const unsigned char cut[] = {0x80 | 14 << 3 | 3, 0x41};

    ASSERT_EQ_INT(LINE(no_entry, PP_LINES_LOCATIONS, 0), 10);
    ASSERT_EQ_INT(LINE(cut, PP_LINES_LOCATIONS, 2), 10);
    ASSERT_EQ_INT(pp_linetable_line(NULL, 0, PP_LINES_LNOTAB, 5, 7), 7);
    ASSERT_EQ_INT(pp_linetable_line(no_entry, sizeof(no_entry), 99, 0, 7), 7);
}
