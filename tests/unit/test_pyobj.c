/*
 * pyobj.c on live interpreters: every interpreter the build made a module
 * for runs a program that stops in a function with locals of every kind
 * pyobj.h writes (ints small, large and too large, a str with a quote and
 * a non-ASCII letter, bytes, floats, True, None, a closure's cell) and of
 * kinds it names only by type (a list, an instance, a function), while two
 * named threads wait. From outside, with the layout pylayout.c finds:
 * each local as Python's repr writes it, and threading's names of the
 * three threads, from the Thread objects' own attributes (a dict on
 * 3.8-3.10, values kept apart from one on 3.11+).
 */
#include "test.h"

#if PP_UNWIND
#include "native/maps.h"
#include "cpython/pylayout.h"
#include "cpython/pyobj.h"
#include "cpython/pysyms.h"
#include "cpython/pyread.h"
#include "cpython/pystack.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static const char PROGRAM[] =
    "import threading, time\n"
    "class Thing:\n"
    "    pass\n"
    "def worker(e):\n"
    "    e.wait()\n"
    "def target():\n"
    "    cl = 5\n"
    "    def closure():\n"
    "        return cl\n"
    "    i = 42\n"
    "    neg = -7\n"
    "    zero = 0\n"
    "    big = 2 ** 100\n"
    "    nbig = -2 ** 64\n"
    "    huge = 10 ** 700\n"
    "    s = 'h\xc3\xa9llo \"w\"'\n"
    "    q = \"it's\\n\"\n"
    "    long_s = 'x' * 500\n"
    "    lst = [1, 2]\n"
    "    f = 2.5\n"
    "    tiny = 1e-05\n"
    "    large = 1e16\n"
    "    third = 1 / 3\n"
    "    bs = b'\\x00a\\n'\n"
    "    flag = True\n"
    "    nothing = None\n"
    "    obj = Thing()\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(60)\n"
    "e = threading.Event()\n"
    "for name in ('worker-1', 'na\xc3\xafve thread'):\n"
    "    threading.Thread(target=worker, args=(e,), name=name, daemon=True).start()\n"
    "target()\n";

static const struct {
    const char *name, *value;
    int is_value;
} WANT[] = {
    {"cl", "5", 1}, {"i", "42", 1}, {"neg", "-7", 1}, {"zero", "0", 1},
    {"big", "1267650600228229401496703205376", 1}, {"nbig", "-18446744073709551616", 1},
    {"huge", "int (more than 1920 bits)", 0},
    {"s", "'h\xc3\xa9llo \"w\"'", 1}, {"q", "\"it's\\n\"", 1},
    {"lst", "list", 0}, {"f", "2.5", 1}, {"tiny", "1e-05", 1}, {"large", "1e+16", 1},
    {"third", "0.3333333333333333", 1}, {"bs", "b'\\x00a\\n'", 1}, {"flag", "True", 1},
    {"nothing", "None", 1}, {"obj", "Thing", 0}, {"closure", "function", 0},
};

static void check_locals(const char *python, const pp_pylocal *l, long n)
{
    for (size_t w = 0; w < sizeof(WANT) / sizeof(WANT[0]); w++) {
        long k = 0;

        while (k < n && strcmp(l[k].name, WANT[w].name) != 0)
            k++;
        if (k == n)
            TEST_FAIL_("%s: no local %s among %ld", python, WANT[w].name, n);
        if (strcmp(l[k].value, WANT[w].value) != 0 || l[k].is_value != WANT[w].is_value)
            TEST_FAIL_("%s: %s = %s (value %d), want %s (value %d)", python, l[k].name,
                       l[k].value, l[k].is_value, WANT[w].value, WANT[w].is_value);
    }
    for (long k = 0; k < n; k++)     /* a long str: its start, cut */
        if (strcmp(l[k].name, "long_s") == 0 &&
            (strncmp(l[k].value, "'xxxxxxxx", 9) != 0 || !strstr(l[k].value, "'...")))
            TEST_FAIL_("%s: long_s = %s, want 'xxx...'...", python, l[k].value);
}

static void one(const test_python *py, const char *dir)
{
    const char *python = py->path;
    pp_maps maps = {0};
    pp_pylayout lay;
    pp_pyobj r;
    char file[512], why[256], buf[16], names[4][64];
    static pp_pystack_thread th[4];
    static pp_pylocal locals[64];
    uint64_t runtime, interp, idents[4];
    long n = -1;
    int fd, nt, status, want_names = 0;
    pid_t pid = test_start_python(python, PROGRAM, &fd);
    pp_mem mem = pp_mem_of_pid(pid);

    if (read(fd, buf, sizeof(buf)) < 5)
        TEST_FAIL_("%s did not start the program", python);
    usleep(100000);
    ASSERT_EQ_INT(pp_maps_read(pid, &maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "_PyRuntime", &runtime, file, sizeof(file)), 0);
    if (pp_pysyms_layout(&mem, &maps, runtime, file, 0, &lay, why, sizeof(why)) != 0)
        TEST_FAIL_("%s: %s", python, why);
    r = (pp_pyobj){&mem, &lay.off, {0}};
    ASSERT_EQ_INT(pp_pysyms_objtypes(&maps, &r.t), 0);
    nt = pp_pystack_read(&mem, &lay.off, runtime, -1, th, 4);
    ASSERT_EQ_INT(nt, 3);
    for (int i = 0; i < nt; i++)
        for (size_t k = 0; k < th[i].n; k++) {
            char name[128];
            pp_pyread_frame f;

            pp_pyread_code(&mem, &lay.off, NULL, th[i].f[k].id.code, &f);
            snprintf(name, sizeof(name), "%s", f.qualname);
            if (strcmp(name, "target") == 0)
                n = pp_pyobj_locals(&r, th[i].f[k].frame, th[i].f[k].id.code, locals, 64);
        }
    ASSERT_GE_INT(n, 0);
    check_locals(python, locals, n);
    /* threading's names, by each thread's ident */
    for (int i = 0; i < 3; i++)
        idents[i] = th[i].thread_id;
    ASSERT_EQ_INT(pp_mem_read(&mem, runtime + (uint64_t)lay.off.runtime_interpreters_head,
                              &interp, sizeof(interp)), 0);
    ASSERT_EQ_INT(pp_pyobj_thread_names(&r, interp, idents, names, 3), 3);
    for (int i = 0; i < 3; i++)
        want_names |= (strcmp(names[i], "MainThread") == 0) << 0 |
                      (strcmp(names[i], "worker-1") == 0) << 1 |
                      (strcmp(names[i], "na\xc3\xafve thread") == 0) << 2;
    if (want_names != 7)
        TEST_FAIL_("%s: threads named '%s', '%s', '%s'", python, names[0], names[1], names[2]);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fd);
    pp_maps_free(&maps);
    printf("    %s: %ld locals as repr writes them; threads MainThread, worker-1, "
           "na\xc3\xafve thread\n", python, n);
}

TEST(pyobj_locals_and_thread_names_on_every_interpreter)
{
    test_each_python(one, 8);
}
#endif
