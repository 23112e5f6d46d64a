/*
 * The libdw unwinder on a real stack: unwind_target.c (no frame pointers)
 * captures its registers and a copy of its stack nine calls deep; the
 * unwinder must name those calls in order, then reach _start. The twin
 * with a stack copy cut short must stop early and say so.
 */
#include "sample/maps.h"
#include "sample/unwind.h"
#include "test.h"
#include "unwind_target.h"

#include <sys/syscall.h>
#include <unistd.h>

#if PP_UNWIND
static const char *const chain[] = {
    "ut_leaf", "ut_recurse", "ut_recurse", "ut_recurse", "ut_recurse",
    "ut_depth_c", "ut_depth_b", "ut_depth_a", "ut_unwind_target",
};
#define NCHAIN (sizeof(chain) / sizeof(chain[0]))

static ut_snapshot snap;

/* Captures the stack, with a copy of at most cap bytes. */
static void capture(size_t cap)
{
    pp_maps m;
    const pp_map *stack;
    int here;

    ASSERT_OK(pp_maps_read(getpid(), &m));
    stack = pp_maps_find(&m, (uint64_t)(uintptr_t)&here);
    ASSERT_TRUE(stack != NULL);
    snap.stack_top = stack->end;
    pp_maps_free(&m);
    snap.cap = cap;
    snap.stack = malloc(cap);
    ASSERT_TRUE(snap.stack != NULL);
    ASSERT_EQ_INT(ut_unwind_target(&snap), 9);
}

static pp_sample sample_of(size_t stack_len)
{
    pp_sample s;

    memset(&s, 0, sizeof(s));
    s.pid = getpid();
    s.tid = (int32_t)syscall(SYS_gettid);
    s.have_user = 1;
    memcpy(s.regs, snap.regs, sizeof(s.regs));
    s.stack = snap.stack;
    s.stack_len = stack_len;
    return s;
}

static char *self_exe(void)
{
    static char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

    ASSERT_GT_INT(n, 0);
    path[n] = '\0';
    return path;
}

/* Shown with the test's output: what a failure is about. */
static void print_frames(const pp_native_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        printf("    #%zu %#llx %s (%s)\n", i, (unsigned long long)f[i].pc, f[i].sym, f[i].dso);
}

TEST(unwind_target_keeps_no_frame_pointer)
{
    /* else a frame-pointer walk would do and the test would not show CFI at
     * work: no "push %rbp; mov %rsp,%rbp" (55 48 89 e5) in the prologue */
    const unsigned char *code = ut_recurse_code();
    for (int i = 0; i + 4 <= 16; i++)
        if (code[i] == 0x55 && code[i + 1] == 0x48 && code[i + 2] == 0x89 && code[i + 3] == 0xe5)
            TEST_FAIL_("ut_recurse sets up a frame pointer at byte %d", i);
}

TEST(unwind_names_a_real_stack_to_its_root)
{
    pp_unwinder *u;
    pp_native_frame f[256];
    size_t n;
    unsigned flags;
    pp_sample s;

    capture(256 * 1024);
    s = sample_of(snap.len);
    ASSERT_OK(pp_unwind_open(&u));
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));
    print_frames(f, n);
    ASSERT_GE_INT(n, NCHAIN + 2);
    for (size_t i = 0; i < NCHAIN; i++) {
        ASSERT_EQ_STR(f[i].sym, chain[i]);
        ASSERT_EQ_STR(f[i].dso, self_exe());
    }
    ASSERT_EQ_STR(f[n - 1].sym, "_start");
    ASSERT_EQ_UINT(flags, PP_UNWIND_WHOLE);
    /* a second sample of the same process: the cached modules serve it */
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));
    ASSERT_EQ_STR(f[NCHAIN - 1].sym, "ut_unwind_target");
    ASSERT_EQ_UINT(flags, PP_UNWIND_WHOLE);
    pp_unwind_close(u);
}

TEST(unwind_stops_where_the_stack_copy_ends)
{
    pp_unwinder *u;
    pp_native_frame f[256];
    size_t n, whole;
    unsigned flags;
    pp_sample s;

    capture(256 * 1024);
    s = sample_of(snap.len);
    ASSERT_OK(pp_unwind_open(&u));
    ASSERT_OK(pp_unwind(u, &s, f, 256, &whole, &flags));
    /* a copy that ends inside ut_depth_b's frame: the live stack above it
     * is the same memory, but it is not the sample's, so it is not read */
    s = sample_of(64);
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));
    print_frames(f, n);
    ASSERT_GE_INT(n, 1);
    ASSERT_LT_INT(n, NCHAIN);
    ASSERT_LT_INT(n, whole);
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ_STR(f[i].sym, chain[i]);
    ASSERT_EQ_UINT(flags, PP_UNWIND_RAN_OUT);
    /* at most cap frames: the rest not walked, and said so */
    s = sample_of(snap.len);
    ASSERT_OK(pp_unwind(u, &s, f, 3, &n, &flags));
    ASSERT_EQ_INT(n, 3);
    ASSERT_EQ_STR(f[2].sym, "ut_recurse");
    ASSERT_EQ_UINT(flags, PP_UNWIND_FULL);
    pp_unwind_close(u);
}

TEST(unwind_gives_nothing_without_user_context)
{
    pp_unwinder *u;
    pp_native_frame f[4];
    size_t n = 99;
    unsigned flags = 99;
    pp_sample s;

    memset(&s, 0, sizeof(s));
    s.pid = getpid();
    ASSERT_OK(pp_unwind_open(&u));
    ASSERT_OK(pp_unwind(u, &s, f, 4, &n, &flags));
    ASSERT_EQ_INT(n, 0);
    ASSERT_EQ_UINT(flags, 0);
    pp_unwind_close(u);
}
#else
TEST(unwind_names_a_real_stack_to_its_root)
{
    TEST_SKIP("built without the libdw unwinder (not x86_64, or elfutils' libdw-dev missing)");
}
#endif
