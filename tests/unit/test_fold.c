/*
 * The folding rules of fold.c, one test per rule, on perf script text
 * shaped like what perf prints (leaf first), plus the real captures.
 */
#include "report_helpers.h"
#include "test.h"

#define HDR "python3 100/100 1.0: 1001 cpu-clock:\n"
#define LIBPY "(/usr/lib/libpython3.12.so.1.0)"
#define MAP "(/tmp/perf-100.map)"

/* A whole jitdump-mode stack: <module> -> baz -> bar -> foo -> PyLong_FromLong */
static const char whole[] =
    HDR
    "\t  1cfe03 pymalloc_alloc (inlined)\n"
    "\t  1cfe03 _PyObject_Malloc " LIBPY "\n"
    "\t  1cfe03 _PyObject_Malloc " LIBPY "\n"      /* perf's repeated leaf */
    "\t  1a7211 PyLong_FromLong " LIBPY "\n"
    "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
    "\t  7f0000001009 py::foo:/app/x.py+0x9 " MAP "\n"
    "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
    "\t  2000 _PyFunction_Vectorcall " LIBPY "\n"
    "\t  3000 perfpy_eval (/lib/perfpy.cpython-312-x86_64-linux-gnu.so)\n"
    "\t  7f0000001019 py::bar:/app/x.py " MAP "\n"
    "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
    "\t  7f0000001029 py::baz:/app/x.py " MAP "\n"
    "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
    "\t  7f0000001039 py::<module>:/app/x.py " MAP "\n"
    "\t  281cd6 PyEval_EvalCode " LIBPY "\n"
    "\t  4000 run_mod " LIBPY "\n"
    "\t  302610 pymain_main (inlined)\n"
    "\t  302610 Py_BytesMain " LIBPY "\n"
    "\t  27249 __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\t  1080 _start (/usr/bin/python3.12)\n\n";

TEST(fold_whole_stack_reads_as_python)
{
    char *out = fold_to_collapsed(whole, NULL);
    ASSERT_EQ_STR(out, "<module> (/app/x.py);baz (/app/x.py);bar (/app/x.py);foo (/app/x.py);"
                       "PyLong_FromLong;_PyObject_Malloc;pymalloc_alloc 1\n");
    free(out);
}

TEST(fold_lines_sidecar_gives_def_lines)
{
    char dir[512], path[600];
    pp_fold_opts o = {.no_native = 0};
    FILE *f;
    char *out;

    snprintf(dir, sizeof(dir), "%s", test_tmpdir());
    snprintf(path, sizeof(path), "%s/perfpy-100.lines", dir);
    f = fopen(path, "w");
    /* foo at ...1000 (size c), bar ...1010, baz ...1020, <module> ...1030;
     * plus junk lines that must be skipped */
    fputs("7f0000001000 c 1\n7f0000001010 c 7\nnot a line\n7f0000001020 c 10\n"
          "7f0000001030 10 1\nzz 1 2\n7f0000009000 0 5\n", f);
    fclose(f);
    o.lines_dir = dir;
    out = fold_to_collapsed(whole, &o);
    ASSERT_EQ_STR(out, "<module> (/app/x.py:1);baz (/app/x.py:10);bar (/app/x.py:7);"
                       "foo (/app/x.py:1);PyLong_FromLong;_PyObject_Malloc;pymalloc_alloc 1\n");
    free(out);
}

TEST(fold_truncated_stack_is_marked)
{
    /* perf-map mode without frame pointers: the unwind stops at the trampoline */
    char *out = fold_to_collapsed(HDR
                                  "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n\n"
                                  HDR "\n", NULL);
    ASSERT_EQ_STR(out, "[truncated];[unknown] 1\n[truncated];foo (/app/x.py) 1\n");
    free(out);
}

/* numpy on Debian's stripped 3.11 (default mode): 16 of 166 stacks were
 * "[truncated];[unknown];<module> ...": a frame in no mapping at the root of
 * a cut stack is junk of the cut and goes; one in a known file (the
 * library embedding Python, "[libembed.so]") is a real caller and stays. */
TEST(fold_cut_stack_drops_its_unmapped_outermost_frames)
{
    char *out = fold_to_collapsed(HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  7f0000001039 py::<module>:/app/x.py " MAP "\n"
                                  "\t  9 [unknown] ([unknown])\n"
                                  "\t  7f00dead0000 [unknown] ([unknown])\n\n"
                                  HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  7f0000001039 py::<module>:/app/x.py " MAP "\n"
                                  "\t  7f0000005000 [unknown] (/usr/lib/libembed.so)\n\n",
                                  NULL);
    ASSERT_EQ_STR(out, "[truncated];<module> (/app/x.py);foo (/app/x.py) 1\n"
                       "[truncated];[libembed.so];<module> (/app/x.py);foo (/app/x.py) 1\n");
    free(out);
}

/* Debian's 3.15 keeps frame pointers, its libc does not: the walk reaches
 * the interpreter's entry and ends in a few addresses perf cannot name. */
TEST(fold_frame_pointer_walk_past_the_entry_is_whole)
{
    char *out = fold_to_collapsed(HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  7f0000001039 py::<module>:/app/x.py " MAP "\n"
                                  "\t  302610 Py_BytesMain " LIBPY "\n"
                                  "\t  27249 __libc_start_call_main (/usr/lib/libc.so.6)\n"
                                  "\t  5 [unknown] ([unknown])\n"
                                  "\t  7f00dead0000 [unknown] (/usr/lib/libc.so.6)\n\n"
                                  /* a thread: its wrapper, then junk */
                                  HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  4000 pythread_wrapper " LIBPY "\n"
                                  "\t  6 [unknown] ([unknown])\n\n"
                                  /* named frames past the entry: not junk, truncated */
                                  HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  302610 Py_BytesMain " LIBPY "\n"
                                  "\t  7 something_else (/usr/lib/libc.so.6)\n\n"
                                  /* junk with no entry before it: truncated */
                                  HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  8 [unknown] ([unknown])\n\n", NULL);
    /* the last one's junk is dropped: the cut made it */
    ASSERT_EQ_STR(out, "<module> (/app/x.py);foo (/app/x.py) 1\n"
                       "[truncated];foo (/app/x.py) 2\n"
                       "foo (/app/x.py) 1\n");
    free(out);
}

TEST(fold_thread_rooted_in_glibc_internal_clone3)
{
    /* Debian sid's libc names a thread's first frame by its internal alias */
    char *out = fold_to_collapsed(HDR
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  6e1987 pythread_wrapper " LIBPY "\n"
                                  "\t  7f2ba6a63db7 start_thread (/usr/lib/libc.so.6)\n"
                                  "\t  7f2ba6ae1f97 __GI___clone3 (/usr/lib/libc.so.6)\n\n",
                                  NULL);
    ASSERT_EQ_STR(out, "foo (/app/x.py) 1\n");
    free(out);
}

TEST(fold_native_below_and_between_python)
{
    char *out = fold_to_collapsed(
        HDR
        "\tffffffff81000c82 asm_exc_page_fault ([kernel.kallsyms])\n"
        "\t  5000 compress_block (/usr/lib/python3/dist-packages/zlib.cpython-312.so)\n"
        "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
        "\t  7f0000001009 py::cb:/app/x.py " MAP "\n"
        "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
        "\t  6000 ext_call_python (/site/ext.cpython-312.so)\n"
        "\t  6100 cfunction_call " LIBPY "\n"
        "\t  6200 list_sort_impl " LIBPY "\n"
        "\t  7f0000001019 py::main:/app/x.py " MAP "\n"
        "\t  1080 _start (/usr/bin/python3.12)\n\n", NULL);
    /* the C extension between two Python frames stays; list_sort_impl (a
     * libpython frame between them) goes; native code below stays */
    ASSERT_EQ_STR(out, "main (/app/x.py);ext_call_python;cb (/app/x.py);compress_block;"
                       "asm_exc_page_fault 1\n");
    free(out);
}

TEST(fold_no_native_keeps_python_only)
{
    pp_fold_opts o = {.no_native = 1};
    char *out = fold_to_collapsed(whole, &o);
    ASSERT_EQ_STR(out, "<module> (/app/x.py);baz (/app/x.py);bar (/app/x.py);foo (/app/x.py) 1\n");
    free(out);
    out = fold_to_collapsed(HDR "\t  1080 _start (/usr/bin/python3.12)\n\n", &o);
    ASSERT_EQ_STR(out, "[native] 1\n");
    free(out);
}

TEST(fold_stacks_without_python_stay_whole)
{
    char *out = fold_to_collapsed(
        HDR
        "\t  2d085c siphash13 " LIBPY "\n"
        "\t  302610 Py_BytesMain " LIBPY "\n"
        "\t  27249 __libc_start_call_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "\t  1080 _start (/usr/bin/python3.12)\n\n", NULL);
    ASSERT_EQ_STR(out, "_start;__libc_start_call_main;Py_BytesMain;siphash13 1\n");
    free(out);
}

TEST(fold_threads_start_at_their_python_target)
{
    char *out = fold_to_collapsed(
        HDR
        "\t  7f0000001009 py::work:/app/x.py " MAP "\n"
        "\t  1159a8 _PyEval_EvalFrameDefault " LIBPY "\n"
        "\t  7f0000001019 py::Thread.run:/usr/lib/python3.12/threading.py " MAP "\n"
        "\t  7000 thread_run " LIBPY "\n"
        "\t  7100 pythread_wrapper " LIBPY "\n"
        "\t  7200 start_thread (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
        "\t  7300 clone3 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\n", NULL);
    ASSERT_EQ_STR(out, "Thread.run (/usr/lib/python3.12/threading.py);work (/app/x.py) 1\n");
    free(out);
}

TEST(fold_counts_samples_and_truncation)
{
    pp_profile p;
    fold_text(&p, HDR "\t  7f0000001009 py::foo:/app/x.py " MAP "\n\n"
                  "python3 100/101 2.5: 2002 cpu-clock:\n\t 7f0000001009 py::foo:/app/x.py " MAP "\n\n",
              NULL, NULL);
    ASSERT_EQ_UINT(p.samples, 2);
    ASSERT_EQ_UINT(p.truncated, 2);
    ASSERT_EQ_UINT(p.period, 3003);
    ASSERT_EQ_UINT(p.nstacks, 1);
    ASSERT_EQ_UINT(p.time_first_ns, 1000000000ull);
    ASSERT_EQ_UINT(p.time_last_ns, 2500000000ull);
    ASSERT_EQ_STR(p.program, "python3");
    ASSERT_EQ_STR(p.event, "cpu-clock");
    pp_profile_free(&p);
}

/* The real captures fold to Python-named stacks with def lines. */
TEST(fold_real_captures_name_foo_with_its_line)
{
    static const char *names[] = {"py38", "py310", "py311-debian", "py312", "py313"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[256], lines[256], dir[512];
        size_t len;
        char *text, *out, *lt, *pidp;
        pp_fold_opts o = {.no_native = 0};
        FILE *f;
        int pid;

        snprintf(path, sizeof(path), PS_DATA("%s.txt"), names[i]);
        snprintf(lines, sizeof(lines), PS_DATA("%s.lines"), names[i]);
        text = test_read_file(path, &len);
        lt = test_read_file(lines, NULL);
        ASSERT_TRUE(text && lt);
        /* the sidecar is named after the recorded pid: copy it so */
        pidp = strstr(text, "perf-");
        ASSERT_TRUE(pidp != NULL);
        pid = atoi(pidp + 5);
        snprintf(dir, sizeof(dir), "%s/perfpy-%d.lines", test_tmpdir(), pid);
        f = fopen(dir, "w");
        fputs(lt, f);
        fclose(f);
        o.lines_dir = test_tmpdir();
        out = fold_to_collapsed(text, &o);
        ASSERT_CONTAINS(out, "[truncated];foo (");
        ASSERT_CONTAINS(out, "examples/example.py:1) ");
        ASSERT_TRUE(strstr(out, "_PyEval_EvalFrameDefault") == NULL ||
                    strstr(out, "example.py:1);_PyEval_EvalFrameDefault") == NULL);
        free(out);
        free(text);
        free(lt);
    }
}

/* A jitdump with one trampoline: debug record (line 7), code load (index 3). */
static size_t tiny_jitdump(uint8_t *buf)
{
    static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd1, 0x5d, 0xc3};
    const char *dname = "/app/x.py", *lname = "py::bar:/app/x.py";
    uint32_t u32[2];
    uint64_t u64[4];
    size_t at = 0, dn = strlen(dname) + 1, ln = strlen(lname) + 1;
    uint32_t hdr[6] = {0x4A695444, 1, 40, 62, 0, 4242};

    memset(buf, 0, 512);
    memcpy(buf, hdr, sizeof(hdr));
    at = 40;
    /* debug: prefix, code_addr, nr_entry, 2 x {addr, lineno, discrim, name} */
    u32[0] = 2;
    u32[1] = (uint32_t)(16 + 16 + 2 * (16 + dn));
    memcpy(buf + at, u32, 8);
    u64[0] = 0x7f0000001000;
    u64[1] = 2;
    memcpy(buf + at + 16, u64, 16);
    for (int i = 0; i < 2; i++) {
        size_t e = at + 32 + (size_t)i * (16 + dn);
        uint64_t addr = 0x7f0000001000 + (uint64_t)i * 8;
        int32_t line = 7;
        memcpy(buf + e, &addr, 8);
        memcpy(buf + e + 8, &line, 4);
        memcpy(buf + e + 16, dname, dn);
    }
    at += u32[1];
    /* load: prefix, pid, tid, vma, code_addr, code_size, code_index, name, code */
    u32[0] = 0;
    u32[1] = (uint32_t)(16 + 40 + ln + sizeof(code));
    memcpy(buf + at, u32, 8);
    u32[0] = u32[1] = 4242;
    memcpy(buf + at + 16, u32, 8);
    u64[0] = u64[1] = 0x7f0000001000;
    u64[2] = sizeof(code);
    u64[3] = 3;
    memcpy(buf + at + 24, u64, 32);
    memcpy(buf + at + 56, lname, ln);
    memcpy(buf + at + 56 + ln, code, sizeof(code));
    return at + 56 + ln + sizeof(code);
}

TEST(fold_jitdump_codes_read)
{
    uint8_t buf[512];
    size_t len = tiny_jitdump(buf), n;
    pp_jit_code *codes;

    ASSERT_OK(pp_jitdump_codes_buffer(buf, len, &codes, &n));
    ASSERT_EQ_INT(n, 1);
    ASSERT_EQ_UINT(codes[0].index, 3);
    ASSERT_EQ_UINT(codes[0].addr, 0x7f0000001000ull);
    ASSERT_EQ_INT(codes[0].line, 7);
    free(codes);
    /* every truncation: no crash, no over-read */
    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, buf, cut);
        ASSERT_OK(pp_jitdump_codes_buffer(copy, cut, &codes, &n));
        free(codes);
        free(copy);
    }
}

/* Fills the stack below the caller with a nonzero pattern, so that a local
 * the folder forgets to set reads as garbage, not as a lucky 0, whatever
 * else the compiler keeps in its stack slot. */
static __attribute__((noinline)) void dirty_stack(void)
{
    volatile unsigned char junk[64 * 1024];

    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = 0x5a;
}

/* Folds perf script text of pid 4242 after perf inject, with tiny_jitdump()
 * as the recording's jit-4242.dump and no lines sidecar (lines_dir NULL). */
static char *fold_injected(const char *text)
{
    uint8_t buf[512];
    size_t len = tiny_jitdump(buf);
    pp_perf_data_info *info = calloc(1, sizeof(*info));
    pp_fold_opts o = {.jit = info};
    FILE *f;
    char *out;

    info->jitdumps = calloc(1, sizeof(char *));
    info->jitdumps[0] = malloc(PATH_MAX);
    snprintf(info->jitdumps[0], PATH_MAX, "%s/jit-4242.dump", test_tmpdir());
    info->njitdumps = info->jitdumps_cap = 1;
    f = fopen(info->jitdumps[0], "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    dirty_stack();
    out = fold_to_collapsed(text, &o);
    pp_perf_data_info_free(info);
    free(info);
    return out;
}

TEST(fold_injected_frames_find_their_line_through_the_dump)
{
    /* perf script prints the address relative to the jitted ELF ("89") */
    char *out = fold_injected("python3 4242/4242 1.0: 1 cpu-clock:\n"
                              "\t 89 py::bar:/app/x.py (/tmp/x/jitted-4242-3.so)\n"
                              "\t 99 py::baz:/app/x.py (/tmp/x/jitted-4242-9.so)\n"
                              "\t 1080 _start (/usr/bin/python3.12)\n\n");
    ASSERT_EQ_STR(out, "baz (/app/x.py);bar (/app/x.py:7) 1\n");
    free(out);
}

TEST(fold_first_injected_frame_takes_its_line_from_the_dump)
{
    /* The sample's first Python frame is in the dump, so no frame before it
     * has set the line. Unset, it read "/jit" (1953065519) from the dump's
     * path, with gcc 12 and gcc 16 alike; in the test above, baz (not in the
     * dump) set it to 0 first, so that one only failed with gcc 16. */
    char *out = fold_injected("python3 4242/4242 1.0: 1 cpu-clock:\n"
                              "\t 89 py::bar:/app/x.py (/tmp/x/jitted-4242-3.so)\n"
                              "\t 1080 _start (/usr/bin/python3.12)\n\n");
    ASSERT_EQ_STR(out, "bar (/app/x.py:7) 1\n");
    free(out);
}

/* ---- issue 13: unnamed frames, processes, perfpy's own frames, paths ---- */

TEST(fold_unnamed_frames_show_their_library)
{
    /* a stripped interpreter and libz: perf names neither function; an
     * address in no mapping at all stays "[unknown]" */
    char *out = fold_to_collapsed(HDR
                                  "\t  5 [unknown] ([unknown])\n"
                                  "\t  7f0000000010 [unknown] (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13)\n"
                                  "\t  7f0000000020 deflate (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13)\n"
                                  "\t  145962 [unknown] (/usr/bin/python3.11)\n"
                                  "\t  7f0000001009 py::foo:/app/x.py " MAP "\n"
                                  "\t  145963 [unknown] (/usr/bin/python3.11)\n"
                                  "\t  7f0000002000 [unknown] (/tmp/x/jitted-100-4.so)\n"
                                  "\t  7f0000001039 py::<module>:/app/x.py " MAP "\n"
                                  "\t  1080 _start (/usr/bin/python3.11)\n\n", NULL);
    /* between the two Python frames the interpreter's unnamed frames go,
     * named or not; below the innermost they stay, with their library */
    ASSERT_EQ_STR(out, "<module> (/app/x.py);foo (/app/x.py);[python3.11];deflate;"
                       "[libz.so.1.2.13];[unknown] 1\n");
    free(out);
}

TEST(fold_stripped_program_start_is_whole)
{
    /* gzip is stripped: its _start reads [gzip], rootward of libc's start */
    char *out = fold_to_collapsed("gzip 7/7 1.0: 1 cpu-clock:\n"
                                  "\t  4000 [unknown] (/usr/bin/gzip)\n"
                                  "\t  27249 __libc_start_call_main (/usr/lib/libc.so.6)\n"
                                  "\t  27300 __libc_start_main@@GLIBC_2.34 (/usr/lib/libc.so.6)\n"
                                  "\t  1080 [unknown] (/usr/bin/gzip)\n\n"
                                  /* a named frame rootward of libc's start: truncated */
                                  "gzip 7/7 1.0: 1 cpu-clock:\n"
                                  "\t  4000 [unknown] (/usr/bin/gzip)\n"
                                  "\t  27300 __libc_start_main@@GLIBC_2.34 (/usr/lib/libc.so.6)\n"
                                  "\t  1090 not_a_root (/usr/bin/gzip)\n\n", NULL);
    ASSERT_EQ_STR(out, "[truncated];not_a_root;__libc_start_main@@GLIBC_2.34;[gzip] 1\n"
                       "__libc_start_main@@GLIBC_2.34;__libc_start_call_main;[gzip] 1\n");
    free(out);
}

#define PROC(comm, pid, tid) comm " " #pid "/" #tid " 1.0: 1 cpu-clock:\n"
#define PYSTACK(fn) "\t  7f0000001009 py::" fn ":/app/x.py " MAP "\n\t  1080 _start (/usr/bin/python3)\n\n"

static const char three_procs[] =
    PROC("perfpy", 100, 100) "\t  500 pp_cmd_exec (/work/build/perfpy)\n"
                             "\t  400 main (/work/build/perfpy)\n"
                             "\t  1080 _start (/work/build/perfpy)\n\n"
    PROC("python3", 100, 100) PYSTACK("parent")
    PROC("python3", 4194404, 4194404) PYSTACK("before_exec")  /* pid 100's earlier image */
    PROC("python3", 101, 101) PYSTACK("worker")
    PROC("worker-thread", 101, 102) PYSTACK("worker")
    PROC("gzip", 102, 102) "\t  4000 [unknown] (/usr/bin/gzip)\n\n";

TEST(fold_each_process_under_its_own_root)
{
    pp_fold_opts o = {0};
    pp_profile p;
    char *out = fold_to_collapsed(three_procs, NULL);

    ASSERT_EQ_STR(out, "gzip (pid 102);[truncated];[gzip] 1\n"
                       "python3 (pid 100);[perfpy] 1\n"
                       "python3 (pid 100);before_exec (/app/x.py) 1\n"
                       "python3 (pid 100);parent (/app/x.py) 1\n"
                       "python3 (pid 101);worker (/app/x.py) 2\n");
    free(out);
    o.processes = PP_PROCESSES_MERGE;
    out = fold_to_collapsed(three_procs, &o);
    ASSERT_EQ_STR(out, "[perfpy] 1\n[truncated];[gzip] 1\nbefore_exec (/app/x.py) 1\n"
                       "parent (/app/x.py) 1\nworker (/app/x.py) 2\n");
    free(out);
    /* the counts per process, for the summary, either way */
    fold_text(&p, three_procs, &o, NULL);
    ASSERT_EQ_INT(p.nprocs, 3);
    ASSERT_EQ_INT(p.procs[0].pid, 100);
    ASSERT_EQ_INT(p.procs[0].samples, 3);
    ASSERT_EQ_INT(p.procs[0].python, 2);
    ASSERT_EQ_INT(p.procs[2].pid, 102);
    ASSERT_EQ_INT(p.procs[2].truncated, 1);
    ASSERT_EQ_INT(p.procs[2].python, 0);
    ASSERT_EQ_INT(p.samples, 6);
    ASSERT_EQ_INT(p.truncated, 1);
    pp_profile_free(&p);
}

TEST(fold_one_process_has_no_root_unless_split)
{
    pp_fold_opts o = {0};
    char *out = fold_to_collapsed(whole, NULL);

    ASSERT_EQ_STR(out, "<module> (/app/x.py);baz (/app/x.py);bar (/app/x.py);foo (/app/x.py);"
                       "PyLong_FromLong;_PyObject_Malloc;pymalloc_alloc 1\n");
    free(out);
    o.processes = PP_PROCESSES_SPLIT;
    out = fold_to_collapsed(whole, &o);
    ASSERT_EQ_STR(out, "python3 (pid 100);<module> (/app/x.py);baz (/app/x.py);bar (/app/x.py);"
                       "foo (/app/x.py);PyLong_FromLong;_PyObject_Malloc;pymalloc_alloc 1\n");
    free(out);
}

/* perfpy's startup hook and its engine under a user's function */
static const char own_frames[] =
    HDR
    "\t  ffffffff81000c82 ksys_write ([kernel.kallsyms])\n"
    "\t  3100 jit_write (/lib/perfpy.cpython-312-x86_64-linux-gnu.so)\n"
    "\t  3000 pp_engine_register (/lib/perfpy.cpython-312-x86_64-linux-gnu.so)\n"
    "\t  3200 perfpy_eval (/lib/perfpy.cpython-312-x86_64-linux-gnu.so)\n"
    "\t  7f0000001009 py::user:/app/x.py " MAP "\n"
    "\t  7f0000001019 py::_chain:/opt/perfpy/lib/sitecustomize.py " MAP "\n"
    "\t  7f0000001029 py::execsitecustomize:/usr/lib/python3.12/site.py " MAP "\n"
    "\t  1080 _start (/usr/bin/python3.12)\n\n"
    HDR
    "\t  7f0000001049 py::_find_and_load:<frozen importlib._bootstrap> " MAP "\n"
    "\t  7f0000001039 py::_perfpy_start:/opt/perfpy/lib/./sitecustomize.py " MAP "\n"
    "\t  7f0000001029 py::execsitecustomize:/usr/lib/python3.12/site.py " MAP "\n"
    "\t  1080 _start (/usr/bin/python3.12)\n\n";

TEST(fold_perfpys_own_frames_hidden_unless_asked)
{
    pp_fold_opts o = {0};
    char *out = fold_to_collapsed(own_frames, NULL);

    ASSERT_EQ_STR(out, "execsitecustomize (/usr/lib/python3.12/site.py) 1\n"
                       "execsitecustomize (/usr/lib/python3.12/site.py);user (/app/x.py) 1\n");
    free(out);
    o.show_perfpy = 1;
    out = fold_to_collapsed(own_frames, &o);
    ASSERT_EQ_STR(out, "execsitecustomize (/usr/lib/python3.12/site.py);_chain "
                       "(/opt/perfpy/lib/sitecustomize.py);user (/app/x.py);perfpy_eval;pp_engine_register;"
                       "jit_write;ksys_write 1\n"
                       "execsitecustomize (/usr/lib/python3.12/site.py);_perfpy_start "
                       "(/opt/perfpy/lib/sitecustomize.py);_find_and_load "
                       "(<frozen importlib._bootstrap>) 1\n");
    free(out);
}

TEST(fold_python_paths_normalised)
{
    char *out = fold_to_collapsed(HDR
                                  "\t  7f0000001009 py::f:/wl/./lib//m.py " MAP "\n"
                                  "\t  7f0000001019 py::g:./rel/../x.py " MAP "\n"
                                  "\t  7f0000001029 py::<module>:<string> " MAP "\n"
                                  "\t  1080 _start (/usr/bin/python3.12)\n\n", NULL);
    ASSERT_EQ_STR(out, "<module> (<string>);g (rel/../x.py);f (/wl/lib/m.py) 1\n");
    free(out);
}
