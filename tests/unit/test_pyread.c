/*
 * pyread.c on live interpreters: every interpreter the build made a module
 * for (BUILD/pythons.txt, beside this binary) runs a program that stops in
 * a known chain of calls on two threads; its stacks are read from outside
 * with the offsets its module exports, and must be that chain, innermost
 * first, with the names (a non-ASCII one too), files and def lines. Then
 * pycode.c's cache on the same programs: a code object is named once, an
 * identity that differs from what lives at the address now (an object
 * freed, another made there) is never given that object's name, and what
 * was named stays named after the process has gone.
 */
#include "test.h"

#if PP_UNWIND
#include "native/maps.h"
#include "cpython/pycode.h"
#include "cpython/pyread.h"
#include "cpython/pysyms.h"
#include "named_stacks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The chain, outermost first; the worker thread waits in `waiter`. Lines:
 * naïve's def is line 8 of the program (the file is "<string>"). */
static const char PROGRAM[] =
    "import sys, threading, time\n"                       /* 1 */
    "def foo():\n"                                        /* 2 */
    "    print('ready', flush=True)\n"                    /* 3 */
    "    time.sleep(60)\n"                                /* 4 */
    "def bar():\n"                                        /* 5 */
    "    foo()\n"                                         /* 6 */
    "\n"                                                  /* 7 */
    "def na\xc3\xafve():\n"                               /* 8 */
    "    bar()\n"                                         /* 9 */
    "class K:\n"                                          /* 10 */
    "    def meth(self):\n"                               /* 11 */
    "        na\xc3\xafve()\n"                            /* 12 */
    "def waiter(e):\n"                                    /* 13 */
    "    e.wait()\n"                                      /* 14 */
    "e = threading.Event()\n"                             /* 15 */
    "threading.Thread(target=waiter, args=(e,), daemon=True).start()\n"
    "K().meth()\n";

static pid_t start(const char *python, int *out)
{
    return test_start_python(python, PROGRAM, out);
}

static void wait_ready(int fd, const char *python)
{
    char buf[64];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);

    if (n < 5 || strncmp(buf, "ready", 5) != 0)
        TEST_FAIL_("%s did not start the program", python);
    usleep(100000);    /* foo is in time.sleep by now */
}

static void check_main(const test_python *py, const named_thread *t)
{
    static const char *const want[] = {"foo", "bar", "na\xc3\xafve", "K.meth", "<module>"};
    static const int lines[] = {2, 5, 8, 11, 1};

    if (t->n < 5) {
        for (size_t i = 0; i < t->n; i++)
            fprintf(stderr, "    #%zu %s (%s:%d)\n", i, t->f[i].qualname, t->f[i].file,
                    t->f[i].def_line);
        TEST_FAIL_("%s: %zu frames in the main thread, want 5", py->path, t->n);
    }
    for (size_t i = 0; i < 5; i++) {
        /* co_qualname from 3.11; co_name before it */
        const char *name = py->minor < 11 && i == 3 ? "meth" : want[i];

        if (strcmp(t->f[i].qualname, name) != 0 || strcmp(t->f[i].file, "<string>") != 0 ||
            t->f[i].def_line != lines[i])
            TEST_FAIL_("%s: frame %zu is %s (%s:%d), want %s (<string>:%d)", py->path, i,
                       t->f[i].qualname, t->f[i].file, t->f[i].def_line, name, lines[i]);
    }
}

static void read_one(const test_python *py, const char *dir)
{
    char module[700], holder[512];
    pp_py_offsets o;
    pp_maps maps = {0};
    static named_thread th[4];
    uint64_t runtime;
    int fd, n, found_waiter = 0, found_main = 0, status;
    pid_t pid;
    pp_mem mem;

    snprintf(module, sizeof(module), "%s/lib/perfpy%s", dir, py->ext);
    ASSERT_EQ_INT(pp_pyoffsets_read(module, &o), 0);
    ASSERT_EQ_INT(o.version_hex >> 16, 0x0300 | (unsigned)py->minor);
    pid = start(py->path, &fd);
    mem = pp_mem_of_pid(pid);
    wait_ready(fd, py->path);
    ASSERT_EQ_INT(pp_maps_read(pid, &maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "_PyRuntime", &runtime, holder, sizeof(holder)), 0);
    n = named_stacks(&mem, &o, runtime, th, 4);
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fd);
    pp_maps_free(&maps);
    ASSERT_EQ_INT(n, 2);                               /* main and the worker */
    for (int i = 0; i < n; i++) {
        if (th[i].n >= 5 && strcmp(th[i].f[0].qualname, "foo") == 0) {
            check_main(py, &th[i]);
            found_main = 1;
        }
        for (size_t k = 0; k < th[i].n; k++)
            found_waiter |= strcmp(th[i].f[k].qualname, "waiter") == 0;
        ASSERT_NE_INT(th[i].thread_id, 0);
    }
    if (!found_main)
        check_main(py, &th[n - 1]);                    /* fails, printing it */
    ASSERT_EQ_INT(found_waiter, 1);
    printf("    %s: 2 threads read from outside (_PyRuntime in %s), the main one "
           "foo<-bar<-na\xc3\xafve<-%s<-<module> with def lines\n", py->path, holder,
           py->minor < 11 ? "meth" : "K.meth");
}

TEST(pyread_every_interpreter_from_outside)
{
    test_each_python(read_one, 8);
}

/* foo's code object through the cache (pycode.c), in a process that is
 * then killed. */
static void cache_one(const test_python *py, const char *dir)
{
    char module[700];
    pp_py_offsets o;
    pp_maps maps = {0};
    pp_pyread_types types;
    static named_thread th[4];
    uint64_t runtime;
    pp_pycode *c;
    pp_pycode_id id, other;
    const pp_pycode_entry *e;
    int fd, n, status;
    pid_t pid;
    pp_mem mem;

    snprintf(module, sizeof(module), "%s/lib/perfpy%s", dir, py->ext);
    ASSERT_EQ_INT(pp_pyoffsets_read(module, &o), 0);
    pid = start(py->path, &fd);
    mem = pp_mem_of_pid(pid);
    wait_ready(fd, py->path);
    ASSERT_EQ_INT(pp_maps_read(pid, &maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "_PyRuntime", &runtime, NULL, 0), 0);
    ASSERT_EQ_INT(pp_pysyms_types(&maps, &types), 0);
    pp_maps_free(&maps);
    n = named_stacks(&mem, &o, runtime, th, 4);
    ASSERT_EQ_INT(n, 2);
    if (strcmp(th[1].f[0].qualname, "foo") == 0)
        th[0] = th[1];
    ASSERT_EQ_STR(th[0].f[0].qualname, "foo");
    id.code = th[0].f[0].code;
    ASSERT_EQ_INT(pp_pyread_code_fields(&mem, &o, id.code, &id.fields), 0);
    ASSERT_EQ_INT(id.fields.def_line, 2);
    ASSERT_EQ_INT(pp_pycode_open(&c), 0);

    e = pp_pycode_get(c, &mem, &o, &types, &id);
    ASSERT_EQ_STR(e->qualname, "foo");
    ASSERT_EQ_STR(e->file, "<string>");
    ASSERT_EQ_INT(e->def_line, 2);
    ASSERT_NE_INT(e->table_len, 0);
    /* a frame not started yet (f_lasti -1, or an instruction pointer
     * before the code): the def line */
    ASSERT_EQ_INT(pp_pycode_line(e, &o, pp_pyread_code_start(&mem, &o, id.code, 0),
                                 o.instr_kind == PP_INSTR_POINTER
                                 ? id.code : (uint64_t)(uint32_t)-1), 2);
    /* the same address, another object's fields: not foo */
    other = id;
    other.fields.name = id.fields.file;
    e = pp_pycode_get(c, &mem, &o, &types, &other);
    ASSERT_EQ_STR(e->qualname, "");
    other = id;
    other.fields.def_line = 3;
    ASSERT_EQ_STR(pp_pycode_get(c, &mem, &o, &types, &other)->qualname, "");
    other = id;                  /* a name of other characters in its place */
    other.fields.name_id ^= 1;
    ASSERT_EQ_STR(pp_pycode_get(c, &mem, &o, &types, &other)->qualname, "");
    ASSERT_EQ_INT(pp_pycode_stats_of(c).named, 1);
    ASSERT_EQ_INT(pp_pycode_stats_of(c).freed, 3);

    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    close(fd);
    /* gone: the cache still names it, with no read */
    ASSERT_EQ_STR(pp_pycode_get(c, &mem, &o, &types, &id)->qualname, "foo");
    ASSERT_EQ_INT(pp_pycode_stats_of(c).named, 1);
    pp_pycode_forget(c, pid);
    ASSERT_EQ_STR(pp_pycode_get(c, &mem, &o, &types, &id)->qualname, "");
    ASSERT_EQ_INT(pp_pycode_stats_of(c).freed, 4);
    pp_pycode_close(c);
    printf("    %s: foo named once; a changed identity not named; named after the "
           "process ended\n", py->path);
}

TEST(pycode_names_once_and_never_a_reused_address)
{
    test_each_python(cache_one, 8);
}

/* The negative twin: a table that is not perfpy's is refused, and a
 * process without _PyRuntime has no Python to read. */
TEST(pyread_refuses_what_is_not_a_table_or_a_python)
{
    pp_py_offsets o;
    pp_maps maps = {0};
    uint64_t addr;

    ASSERT_EQ_INT(pp_pyoffsets_read("/proc/self/exe", &o), -ENOENT);
    ASSERT_EQ_INT(pp_pyoffsets_read("/nonexistent/perfpy.so", &o), -ENOENT);
    ASSERT_EQ_INT(pp_maps_read(getpid(), &maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "_PyRuntime", &addr, NULL, 0), -ENOENT);
    pp_maps_free(&maps);
}
/* Writes src's bytes over dst, in place (dst keeps its inode). 0 or -1. */
static int overwrite(const char *src, const char *dst)
{
    size_t len;
    char *buf = test_read_file(src, &len);
    int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int rc = buf && fd >= 0 && write(fd, buf, len) == (ssize_t)len ? 0 : -1;

    if (fd >= 0)
        close(fd);
    free(buf);
    return rc;
}

/* The answers kept per file (symbol_in's cache, by device, inode, mtime
 * and size) are the file's as it is now: a file rewritten in place, same
 * path and inode, is searched again. A copy of this program has main; libc
 * has not. Mutation: the identity without mtime and size -> red (main
 * still "found" in the file once it holds libc). */
TEST(pyread_symbols_kept_per_file_follow_a_rewritten_file)
{
    char path[512], text[700], libc[512] = "", line[700];
    pp_maps maps = {0};
    uint64_t first = 0, again = 0;
    struct stat before, after;
    FILE *f = fopen("/proc/self/maps", "r");

    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "/libc.so") && sscanf(line, "%*s %*s %*s %*s %*s %511s", libc) == 1)
            break;
    if (f)
        fclose(f);
    ASSERT_TRUE(libc[0] == '/');
    snprintf(path, sizeof(path), "%s/elf", test_tmpdir());
    snprintf(text, sizeof(text), "1000-2000 r-xp 00000000 00:00 0 %s\n", path);
    ASSERT_OK(pp_maps_parse(text, strlen(text), &maps));
    ASSERT_OK(overwrite("/proc/self/exe", path));
    ASSERT_EQ_INT(stat(path, &before), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "main", &first, NULL, 0), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "main", &again, NULL, 0), 0);
    ASSERT_EQ_UINT(again, first);                     /* kept: the same answer */
    ASSERT_OK(overwrite(libc, path));
    ASSERT_EQ_INT(stat(path, &after), 0);
    ASSERT_EQ_UINT(after.st_ino, before.st_ino);      /* the same file, new bytes */
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "main", &again, NULL, 0), -ENOENT);
    ASSERT_OK(overwrite("/proc/self/exe", path));
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "main", &again, NULL, 0), 0);
    ASSERT_EQ_UINT(again, first);
    printf("main at 0x%llx in the copy, not found once it held %s\n",
           (unsigned long long)first, libc);
    pp_maps_free(&maps);
}
#endif
