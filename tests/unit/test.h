/*
 * A small unit-test harness in libuv's manner: every TEST runs in its own
 * child process (a crash fails one test, not the run), an assertion prints
 * both sides with file and line, TEST_SKIP("why") ends a test that cannot
 * run here, and the runner ends with "N passed, N failed, N skipped".
 *
 *   TEST(arena_slots_are_distinct) {
 *       ASSERT_EQ_INT(pp_arena_init(&a, 16), 0);
 *   }
 *
 * Helpers for tests: test_tmpdir() gives a private directory (removed with
 * everything in it when the test ends).
 */
#ifndef PERFPY_TEST_H
#define PERFPY_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
void test_register(const char *name, const char *file, test_fn fn);
/* A directory private to the running test; removed after it. */
const char *test_tmpdir(void);
/* Reads a whole file (NUL-terminated); *len gets its size. NULL if absent. */
char *test_read_file(const char *path, size_t *len);
/* Runs `python -S -c program` in a child that dies with the test, its
 * stdout a pipe whose read end goes to *stdout_fd; its pid. */
int test_start_python(const char *python, const char *program, int *stdout_fd);
/* An interpreter the build made a module for (BUILD/pythons.txt beside
 * this binary: "path version ext include" per line). */
typedef struct test_python {
    char path[512], ext[64];   /* ext: its module's suffix (".cpython-312-...so") */
    int minor;                 /* 3.minor */
} test_python;
/* Up to max of them into v; dir (size dlen) gets the build directory.
 * How many. */
size_t test_pythons(test_python *v, size_t max, char *dir, size_t dlen);
/* fn(py, dir) for each of 3.min_minor or newer, each in a child process (a
 * failure names its interpreter); skipped when there is none. */
void test_each_python(void (*fn)(const test_python *py, const char *dir), int min_minor);
/* A heap block of exactly n bytes holding buf's first n (for parsers of
 * hostile input: an over-read leaves the block and ASan sees it). */
void *test_exact_copy(const void *buf, size_t n);

/* The first line (from 1) where two texts differ, and that line of each
 * (*g, *w, their lengths *gn, *wn; "(none)" past an end); 0 when equal. */
int test_first_diff(const char *got, const char *want, const char **g, int *gn, const char **w,
                    int *wn);

#define TEST(name)                                                        \
    static void test_##name(void);                                        \
    __attribute__((constructor)) static void test_reg_##name(void)        \
    {                                                                     \
        test_register(#name, __FILE__, test_##name);                      \
    }                                                                     \
    static void test_##name(void)

#define TEST_FAIL_(...)                                                   \
    do {                                                                  \
        fprintf(stderr, "    %s:%d: ", __FILE__, __LINE__);               \
        fprintf(stderr, __VA_ARGS__);                                     \
        fputc('\n', stderr);                                              \
        exit(1);                                                          \
    } while (0)

/* Ends the test as skipped, with its reason (counted and printed by the
 * runner): only for what truly cannot run here, never a silent return. */
#define TEST_SKIP_EXIT 77
#define TEST_SKIP(...)                                                    \
    do {                                                                  \
        printf("    skipped: ");                                          \
        printf(__VA_ARGS__);                                              \
        putchar('\n');                                                    \
        fflush(stdout);                                                   \
        exit(TEST_SKIP_EXIT);                                             \
    } while (0)

#define ASSERT_TRUE(x)                                                    \
    do {                                                                  \
        if (!(x))                                                         \
            TEST_FAIL_("ASSERT_TRUE(%s) is false", #x);                   \
    } while (0)

#define ASSERT_CMP_INT_(a, op, b)                                         \
    do {                                                                  \
        long long a_ = (long long)(a), b_ = (long long)(b);              \
        if (!(a_ op b_))                                                  \
            TEST_FAIL_("%s %s %s: %lld vs %lld", #a, #op, #b, a_, b_);    \
    } while (0)
#define ASSERT_EQ_INT(a, b) ASSERT_CMP_INT_(a, ==, b)
#define ASSERT_NE_INT(a, b) ASSERT_CMP_INT_(a, !=, b)
#define ASSERT_LT_INT(a, b) ASSERT_CMP_INT_(a, <, b)
#define ASSERT_LE_INT(a, b) ASSERT_CMP_INT_(a, <=, b)
#define ASSERT_GT_INT(a, b) ASSERT_CMP_INT_(a, >, b)
#define ASSERT_GE_INT(a, b) ASSERT_CMP_INT_(a, >=, b)

#define ASSERT_EQ_UINT(a, b)                                              \
    do {                                                                  \
        unsigned long long a_ = (unsigned long long)(a);                  \
        unsigned long long b_ = (unsigned long long)(b);                  \
        if (a_ != b_)                                                     \
            TEST_FAIL_("%s == %s: %llu (0x%llx) vs %llu (0x%llx)", #a,    \
                       #b, a_, a_, b_, b_);                               \
    } while (0)

#define ASSERT_EQ_PTR(a, b)                                               \
    do {                                                                  \
        const void *a_ = (const void *)(a), *b_ = (const void *)(b);      \
        if (a_ != b_)                                                     \
            TEST_FAIL_("%s == %s: %p vs %p", #a, #b, a_, b_);             \
    } while (0)

#define ASSERT_EQ_STR(a, b)                                               \
    do {                                                                  \
        const char *a_ = (a), *b_ = (b);                                  \
        if (!a_ || !b_ || strcmp(a_, b_) != 0)                            \
            TEST_FAIL_("%s == %s:\n      \"%s\"\n   vs \"%s\"", #a, #b,   \
                       a_ ? a_ : "(null)", b_ ? b_ : "(null)");           \
    } while (0)

#define ASSERT_CONTAINS(hay, needle)                                      \
    do {                                                                  \
        const char *h_ = (hay), *n_ = (needle);                           \
        if (!h_ || !strstr(h_, n_))                                       \
            TEST_FAIL_("%s contains %s:\n      \"%s\"\n   lacks \"%s\"",  \
                       #hay, #needle, h_ ? h_ : "(null)", n_);            \
    } while (0)

#define ASSERT_EQ_MEM(a, b, n)                                            \
    do {                                                                  \
        const unsigned char *a_ = (const void *)(a);                      \
        const unsigned char *b_ = (const void *)(b);                      \
        size_t n_ = (n);                                                  \
        for (size_t i_ = 0; i_ < n_; i_++)                                \
            if (a_[i_] != b_[i_])                                         \
                TEST_FAIL_("%s == %s: byte %zu is 0x%02x vs 0x%02x", #a,  \
                           #b, i_, a_[i_], b_[i_]);                       \
    } while (0)

/* A text (lines) against the one it should be: the first line that
 * differs, then both whole. */
#define ASSERT_SAME_TEXT(what, got, want)                                 \
    do {                                                                  \
        const char *g_ = (got), *w_ = (want), *gl_, *wl_;                 \
        int gn_, wn_, l_ = test_first_diff(g_, w_, &gl_, &gn_, &wl_, &wn_); \
        if (l_)                                                           \
            TEST_FAIL_("%s: line %d is \"%.*s\", want \"%.*s\"\n--- got\n%s--- want\n%s", \
                       (what), l_, gn_, gl_, wn_, wl_, g_, w_);           \
    } while (0)

/* rc is 0 or a negative errno. */
#define ASSERT_OK(rc)                                                     \
    do {                                                                  \
        long long r_ = (long long)(rc);                                   \
        if (r_ != 0)                                                      \
            TEST_FAIL_("%s: %lld (%s)", #rc, r_,                          \
                       r_ < 0 ? strerror((int)-r_) : "not an errno");     \
    } while (0)

#endif
