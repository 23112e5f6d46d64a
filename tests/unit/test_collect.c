/*
 * collect.c + sample.bpf.c on live interpreters (root, BPF): each
 * interpreter of the build (BUILD/pythons.txt) runs baz -> bar -> foo with
 * foo looping; the BPF program samples it at 499 Hz with nothing installed
 * in it. Each sample's Python frames, named from user space, must be the
 * chain (foo innermost, <module> outermost) in at least 95% of the samples
 * that have Python frames, and libdw's unwind of the copied stack, spliced,
 * must be whole (Python frames at their evaluations, down to _start).
 */
#include "test.h"

#if PP_BPF
#include "collect/collect.h"
#include "native/maps.h"
#include "cpython/pyread.h"
#include "cpython/pysyms.h"
#include "native/splice.h"
#include "native/unwind.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char PROGRAM[] =
    "import time\n"
    "def foo():\n"
    "    print('ready', flush=True)\n"
    "    end = time.process_time() + 1.5\n"
    "    n = 0\n"
    "    while time.process_time() < end:\n"
    "        n += 1\n"
    "def bar():\n"
    "    foo()\n"
    "def baz():\n"
    "    bar()\n"
    "baz()\n";

typedef struct live {
    pid_t pid;
    pp_mem mem;
    pp_py_offsets o;
    pp_pyread_types types;
    pp_unwinder *u;
    pp_splicer *sp;
    size_t samples, with_py, chain_ok, whole, spliced_ok;
    char first_bad[512];
} live;

static int chain_is_right(live *l, const struct pp_bpf_sample *s)
{
    static const char *const want[] = {"foo", "bar", "baz", "<module>"};
    pp_pyread_frame f;

    if (s->npy != 4)
        return 0;
    for (unsigned i = 0; i < 4; i++) {
        pp_pyread_code(&l->mem, &l->o, &l->types, s->py[i].code, &f);
        if (strcmp(f.qualname, want[i]) != 0)
            return 0;
    }
    return 1;
}

static void on_sample(const struct pp_bpf_sample *s, void *ctx)
{
    live *l = ctx;
    pp_sample ps;
    pp_pyframe py[PP_BPF_MAX_PY];
    pp_pyread_frame names[PP_BPF_MAX_PY];
    pp_native_frame nat[256];
    pp_raw_sample out;
    size_t nn = 0;
    unsigned flags = 0;

    if ((pid_t)s->pid != l->pid || !(s->flags & PP_BPF_USER))
        return;
    l->samples++;
    if (!(s->flags & PP_BPF_PY_THREAD) || !s->npy)
        return;
    l->with_py++;
    if (chain_is_right(l, s))
        l->chain_ok++;
    else if (!l->first_bad[0])
        snprintf(l->first_bad, sizeof(l->first_bad), "npy %u", s->npy);
    memset(&ps, 0, sizeof(ps));
    ps.pid = (int32_t)s->pid;
    ps.tid = (int32_t)s->tid;
    ps.period = 1;
    memcpy(ps.comm, s->comm, sizeof(ps.comm));
    ps.have_user = 1;
    memcpy(ps.regs, s->regs, sizeof(ps.regs));
    ps.stack = s->stack + s->stack_skip;
    ps.stack_len = s->stack_len > s->stack_skip ? s->stack_len - s->stack_skip : 0;
    for (unsigned i = 0; i < s->npy; i++) {
        pp_pyread_code(&l->mem, &l->o, &l->types, s->py[i].code, &names[i]);
        py[i] = (pp_pyframe){names[i].qualname, names[i].file, names[i].def_line,
                             names[i].def_line, (int)s->py[i].entry, 0};
    }
    ps.py = py;
    ps.npy = s->npy;
    if (pp_unwind(l->u, &ps, nat, 256, &nn, &flags) != 0)
        return;
    if (flags & PP_UNWIND_WHOLE)
        l->whole++;
    if (pp_splice(l->sp, &ps, NULL, 0, nat, nn, &out) == 0 && out.nframes > 4 &&
        (flags & PP_UNWIND_WHOLE)) {
        /* root side: native frames down to _start; Python frames inside */
        size_t py_seen = 0;

        for (size_t i = 0; i < out.nframes; i++)
            py_seen += out.frames[i].kind == PP_RAW_PYTHON;
        l->spliced_ok += py_seen == 4;
    }
}

static pid_t start(const char *python, int *fd)
{
    return test_start_python(python, PROGRAM, fd);
}

static void sample_one(const char *python, const char *module, int minor)
{
    pp_collector *c;
    live l;
    pp_maps maps = {0};
    uint64_t runtime;
    char why[256], buf[16];
    int fd, status;

    memset(&l, 0, sizeof(l));
    ASSERT_EQ_INT(pp_pyoffsets_read(module, &l.o), 0);
    if (pp_collect_open(&c, 499, 0, why, sizeof(why)) != 0)
        TEST_FAIL_("%s", why);
    ASSERT_EQ_INT(pp_unwind_open(&l.u), 0);
    ASSERT_EQ_INT(pp_splice_open(&l.sp, NULL), 0);
    l.pid = start(python, &fd);
    l.mem = pp_mem_of_pid(l.pid);
    if (read(fd, buf, sizeof(buf)) < 5)
        TEST_FAIL_("%s did not start", python);
    ASSERT_EQ_INT(pp_maps_read(l.pid, &maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&maps, "_PyRuntime", &runtime, NULL, 0), 0);
    ASSERT_EQ_INT(pp_pysyms_types(&maps, &l.types), 0);
    pp_maps_free(&maps);
    ASSERT_EQ_INT(pp_collect_add(c, l.pid, &l.o, runtime), 0);
    while (waitpid(l.pid, &status, WNOHANG) == 0)
        pp_collect_poll(c, 50, on_sample, NULL, &l);
    pp_collect_poll(c, 0, on_sample, NULL, &l);
    printf("    %s: %zu samples, %zu with Python frames, %zu of them foo<-bar<-baz<-<module>,"
           " %zu unwound whole, %zu spliced whole with the 4 Python frames; %llu lost\n",
           python, l.samples, l.with_py, l.chain_ok, l.whole, l.spliced_ok,
           (unsigned long long)pp_collect_lost(c));
    pp_collect_close(c);
    pp_splice_close(l.sp);
    pp_unwind_close(l.u);
    close(fd);
    (void)minor;
    ASSERT_GT_INT(l.samples, 300);
    ASSERT_GE_INT(l.with_py * 100, l.samples * 95);
    ASSERT_GE_INT(l.chain_ok * 100, l.with_py * 99);
    ASSERT_GE_INT(l.spliced_ok * 100, l.with_py * 95);
}

TEST(collect_live_interpreters_with_bpf)
{
    char dir[512], file[600], line[2048];
    ssize_t n;
    FILE *f;
    int count = 0;

    if (geteuid() != 0)
        TEST_SKIP("loading BPF needs root (or CAP_BPF and CAP_PERFMON)");
    n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
    ASSERT_GT_INT(n, 0);
    dir[n] = '\0';
    *strrchr(dir, '/') = '\0';
    snprintf(file, sizeof(file), "%s/pythons.txt", dir);
    if (!(f = fopen(file, "r")))
        TEST_SKIP("no pythons.txt beside the unit tests");
    while (fgets(line, sizeof(line), f)) {
        char path[512], ver[32], ext[64], module[700];
        int major, minor, status;
        pid_t child;

        if (sscanf(line, "%511s %31s %63s", path, ver, ext) != 3 ||
            sscanf(ver, "%d.%d", &major, &minor) != 2)
            continue;
        snprintf(module, sizeof(module), "%s/lib/perfpy%s", dir, ext);
        fflush(stdout);
        if ((child = fork()) == 0) {
            /* _exit: exit() would set the shared offset of f (stdio
             * syncs a read stream's position on exit) and the parent
             * would read the list again */
            sample_one(path, module, minor);
            fflush(stdout);
            _exit(0);
        }
        waitpid(child, &status, 0);
        ASSERT_EQ_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
        count++;
    }
    fclose(f);
    ASSERT_GT_INT(count, 0);
}
#else
TEST(collect_live_interpreters_with_bpf)
{
    TEST_SKIP("built without the BPF collector (it needs clang, bpftool, libbpf's headers "
              "and the kernel's BTF at /sys/kernel/btf/vmlinux: scripts/deps.sh installs "
              "the first three)");
}
#endif
