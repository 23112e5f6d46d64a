/*
 * perfpy top's screen (src/sampler/top_view.c) on a real terminal: a pseudo-
 * terminal is the test's stdin and stdout, an interval's profile is shown,
 * and each key of the screen is typed in turn (o, t, n, h, p and space, q
 * and Q, and one that means nothing). After each, the whole screen is read
 * back and judged against the profile: which column ranks the rows and is
 * in capitals, every row's shares and counts, the threads view's rows, the
 * pause (a new interval not drawn until it ends), quitting.
 */
#include "sampler/top_view.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

/* Ten samples of two threads:
 *   tid 11 "main":   main <- work <- memcpy  x5,  main <- work  x3
 *   tid 12 "worker": main                     x2
 * own (innermost Python frame): work 8, main 2, memcpy 0
 * self (the leaf):              memcpy 5, work 3, main 2
 * total:                        main 10, work 8, memcpy 5 */
static void ten_samples(pp_profile *p, int worker_samples)
{
    int64_t main_f, work_f, memcpy_f;
    uint32_t deep[3], mid[2], top[1];

    ASSERT_OK(pp_profile_init(p));
    main_f = pp_profile_frame(p, PP_FRAME_PYTHON, "main", 4, "/app.py", 7, 1);
    work_f = pp_profile_frame(p, PP_FRAME_PYTHON, "work", 4, "/app.py", 7, 5);
    memcpy_f = pp_profile_frame(p, PP_FRAME_NATIVE, "memcpy", 6, "/usr/lib/libc.so.6", 18, 0);
    ASSERT_TRUE(main_f >= 0 && work_f >= 0 && memcpy_f >= 0);
    deep[0] = mid[0] = top[0] = (uint32_t)main_f;
    deep[1] = mid[1] = (uint32_t)work_f;
    deep[2] = (uint32_t)memcpy_f;
    ASSERT_EQ_INT(pp_profile_thread(p, 10, 11, "main", 4), 0);
    ASSERT_EQ_INT(pp_profile_thread(p, 10, 12, "worker", 6), 1);
    for (int i = 0; i < 5; i++)
        ASSERT_TRUE(pp_profile_sample(p, deep, 3, 0, 1000000 * (uint64_t)(i + 1), 1000) >= 0);
    for (int i = 0; i < 3; i++)
        ASSERT_TRUE(pp_profile_sample(p, mid, 2, 0, 1000000 * (uint64_t)(i + 6), 1000) >= 0);
    for (int i = 0; i < worker_samples; i++)
        ASSERT_TRUE(pp_profile_sample(p, top, 1, 1, 1000000 * (uint64_t)(i + 9), 1000) >= 0);
}

/* Everything the terminal got since the last call; the last screen drawn
 * (after its last "home") into scr, escape sequences and CRs taken out.
 * The number of bytes read. */
static size_t read_screen(int master, char *scr, size_t cap)
{
    static char all[1 << 16];
    size_t n = 0;
    ssize_t r;
    const char *home;
    size_t k = 0;

    while (n + 1 < sizeof(all) && (r = read(master, all + n, sizeof(all) - 1 - n)) > 0)
        n += (size_t)r;
    all[n] = '\0';
    if (!n)
        return 0;
    home = all;
    for (const char *h = all; (h = strstr(h, "\x1b[H")); h++)
        home = h + 3;
    for (const char *c = home; *c && k + 1 < cap; c++) {
        if (*c == '\x1b') {            /* CSI ... final byte */
            c++;
            if (*c == '[')
                while (c[1] && !((c[1] >= '@' && c[1] <= '~') && c[1] != '['))
                    c++;
            c++;
            continue;
        }
        if (*c != '\r')
            scr[k++] = *c;
    }
    scr[k] = '\0';
    return n;
}

static void has_line(const char *scr, const char *line, const char *after)
{
    const char *at = strstr(scr, line);

    if (!at || (at[strlen(line)] != '\n' && at[strlen(line)]) || (at != scr && at[-1] != '\n'))
        TEST_FAIL_("after %s, the screen has no line \"%s\":\n%s", after, line, scr);
}

/* The rows' labels in the order drawn must be a, b, c. */
static void rows_in_order(const char *scr, const char *a, const char *b, const char *c,
                          const char *after)
{
    const char *x = strstr(scr, a), *y = strstr(scr, b), *z = strstr(scr, c);

    if (!x || !y || !z || !(x < y && y < z))
        TEST_FAIL_("after %s, rows not in the order %s, %s, %s:\n%s", after, a, b, c, scr);
}

static int key(pp_top *t, int master, const char *k)
{
    ASSERT_EQ_INT(write(master, k, strlen(k)), (int)strlen(k));
    usleep(20000);                      /* the line discipline hands it over */
    return pp_top_keys(t);
}

TEST(top_every_key_of_the_screen)
{
    int master, slave, out_fd = dup(STDOUT_FILENO), in_fd = dup(STDIN_FILENO);
    struct winsize ws = {.ws_row = 40, .ws_col = 120};
    pp_top_counts c = {1.0, 0, 1, 2};
    pp_profile p, q;
    pp_top *t;
    static char scr[1 << 16];
    const char *checked[16];
    int n = 0;

    master = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT_TRUE(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
    ASSERT_TRUE((slave = open(ptsname(master), O_RDWR | O_NOCTTY)) >= 0);
    ASSERT_EQ_INT(ioctl(slave, TIOCSWINSZ, &ws), 0);
    ASSERT_EQ_INT(fcntl(master, F_SETFL, O_NONBLOCK), 0);
    ten_samples(&p, 2);
    fflush(stdout);
    dup2(slave, STDIN_FILENO);
    dup2(slave, STDOUT_FILENO);
    ASSERT_OK(pp_top_open(&t, "process 10: python3 app.py", "sample mode (test)", 0));
    ASSERT_TRUE(pp_top_tty(t));
    pp_top_show(t, &p, &c);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "perfpy top: process 10: python3 app.py", "the first interval");
    has_line(scr, "1.0 s: 10 samples (10/s), 0 lost; 1 process, 2 threads (2 sampled)",
             "the first interval");
    /* by own share: its column in capitals */
    has_line(scr, "   OWN%  total%      own    total  function", "the first interval");
    has_line(scr, "  80.0%   80.0%        8        8  work (/app.py)", "the first interval");
    has_line(scr, "  20.0%  100.0%        2       10  main (/app.py)", "the first interval");
    has_line(scr, "   0.0%   50.0%        0        5  memcpy (libc.so.6)", "the first interval");
    rows_in_order(scr, "  work (", "  main (", "  memcpy (", "the first interval");
    checked[n++] = "(start)";

    /* t: by total share */
    ASSERT_EQ_INT(key(t, master, "t"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "   own%  TOTAL%      own    total  function", "t");
    rows_in_order(scr, "  main (", "  work (", "  memcpy (", "t");
    has_line(scr, "  20.0%  100.0%        2       10  main (/app.py)", "t");
    checked[n++] = "t";

    /* o: by own share again */
    ASSERT_EQ_INT(key(t, master, "o"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "   OWN%  total%      own    total  function", "o");
    rows_in_order(scr, "  work (", "  main (", "  memcpy (", "o");
    checked[n++] = "o";

    /* n: own by the leaf frame (C functions rank too); n again: back */
    ASSERT_EQ_INT(key(t, master, "n"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "   OWN%  total%     leaf    total  function", "n");
    has_line(scr, "  50.0%   50.0%        5        5  memcpy (libc.so.6)", "n");
    has_line(scr, "  30.0%   80.0%        3        8  work (/app.py)", "n");
    has_line(scr, "  20.0%  100.0%        2       10  main (/app.py)", "n");
    rows_in_order(scr, "  memcpy (", "  work (", "  main (", "n");
    ASSERT_CONTAINS(scr, "n own by Python function");
    ASSERT_EQ_INT(key(t, master, "n"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "   OWN%  total%      own    total  function", "n twice");
    checked[n++] = "n";

    /* h: the threads, by their samples, each with its busiest function */
    ASSERT_EQ_INT(key(t, master, "h"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "     tid   share  samples  thread               most in", "h");
    has_line(scr, "      11   80.0%        8  main                 work (/app.py)", "h");
    has_line(scr, "      12   20.0%        2  worker               main (/app.py)", "h");
    ASSERT_TRUE(strstr(scr, "  function") == NULL);
    ASSERT_EQ_INT(key(t, master, "h"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "   OWN%  total%      own    total  function", "h twice");
    checked[n++] = "h";

    /* p: paused; the next interval is not drawn; space: on again, and the
     * next interval is */
    ASSERT_EQ_INT(key(t, master, "p"), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    ASSERT_CONTAINS(scr, "p go on, q quit   [paused]");
    ten_samples(&q, 12);                /* the worker busier: 20 samples, main first */
    pp_top_show(t, &q, &c);
    ASSERT_EQ_UINT(read_screen(master, scr, sizeof(scr)), 0);
    ASSERT_EQ_INT(key(t, master, " "), PP_TOP_GO);
    read_screen(master, scr, sizeof(scr));
    ASSERT_TRUE(strstr(scr, "[paused]") == NULL);
    pp_top_show(t, &q, &c);
    read_screen(master, scr, sizeof(scr));
    has_line(scr, "  60.0%  100.0%       12       20  main (/app.py)", "p, space");
    rows_in_order(scr, "  main (", "  work (", "  memcpy (", "p, space");
    checked[n++] = "p";
    checked[n++] = "space";

    /* a key that means nothing: nothing redrawn */
    ASSERT_EQ_INT(key(t, master, "x"), PP_TOP_GO);
    ASSERT_EQ_UINT(read_screen(master, scr, sizeof(scr)), 0);
    checked[n++] = "x (nothing)";

    /* q and Q quit */
    ASSERT_EQ_INT(key(t, master, "q"), PP_TOP_QUIT);
    ASSERT_EQ_INT(key(t, master, "Q"), PP_TOP_QUIT);
    checked[n++] = "q";
    checked[n++] = "Q";
    pp_top_close(t);
    {   /* the terminal back: the normal screen and the cursor */
        static char rest[256];
        ssize_t r = read(master, rest, sizeof(rest) - 1);

        ASSERT_TRUE(r > 0);
        rest[r] = '\0';
        ASSERT_CONTAINS(rest, "\x1b[?1049l");
    }
    dup2(out_fd, STDOUT_FILENO);
    dup2(in_fd, STDIN_FILENO);
    printf("    keys judged:");
    for (int i = 0; i < n; i++)
        printf(" %s", checked[i]);
    putchar('\n');
    pp_profile_free(&p);
    pp_profile_free(&q);
}
