/*
 * What wall-clock mode says a full ring buffer cost the figures
 * (src/collect/wall.c's pp_wall_notes): the time off the CPU the stacks and
 * ends it lost stood for, and their share of what the profile would hold
 * with them; nothing when it lost none (a loss of a thread or of an end
 * that never came has no time to say).
 */
#include "test.h"

#include "collect/wall.h"

#include <stdio.h>
#include <string.h>

static void notes_of(const pp_wall_counts *c, char *buf, size_t len)
{
    FILE *out;

    memset(buf, 0, len);
    out = fmemopen(buf, len - 1, "w");
    pp_wall_notes(out, c, 1);
    fclose(out);
}

TEST(wall_lost_stacks_say_their_time_and_share)
{
    /* 3 stacks and 1 end, 30 ms of a profile of 2.97 s: 1.00% of 3.00 s */
    pp_wall_counts c = {.switches = 10, .captured = 5, .lost_captures = 3, .lost_ends = 1,
                        .lost_ns = 30000000, .recorded_ns = 2970000000ull};
    char buf[2048];

    notes_of(&c, buf, sizeof(buf));
    ASSERT_CONTAINS(buf, "perfpy: wall clock: the stacks and ends the ring buffer lost stood "
                         "for 30.0 ms off the CPU, 1.00% of the 3.00 s the profile would hold "
                         "with them: its time off the CPU is short by that much\n");
    /* an end alone says it too */
    c.lost_captures = 0;
    notes_of(&c, buf, sizeof(buf));
    ASSERT_CONTAINS(buf, "stood for 30.0 ms off the CPU, 1.00% of the 3.00 s");
}

TEST(wall_no_ring_loss_no_time_said)
{
    /* lost threads and ends that never came: counted, no time to say */
    pp_wall_counts c = {.switches = 10, .captured = 5, .unended = 2, .lost_threads = 1,
                        .recorded_ns = 1000000000ull};
    char buf[2048];

    notes_of(&c, buf, sizeof(buf));
    ASSERT_CONTAINS(buf, "2 stacks whose end never came");
    ASSERT_TRUE(strstr(buf, "stood for") == NULL);
}
