/*
 * The libdw unwinder on a real stack: unwind_target.c (no frame pointers)
 * captures its registers and a copy of its stack nine calls deep; the
 * unwinder must name those calls in order, then reach _start. The twin
 * with a stack copy cut short must stop early and say so.
 */
#include "report/fold.h"
#include "profile/profile.h"
#include "native/kallsyms.h"
#include "native/maps.h"
#include "native/modsyms.h"
#include "native/splice.h"
#include "native/unwind.h"
#include "test.h"
#include "unwind_target.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <dirent.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
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

/* The symbol indexes a process's unwinding made stay for the next process
 * of the same files once it is forgotten, and go when the bound says so;
 * the twin: those still in use stay whatever the bound (freeing them would
 * leave its modules' names dangling). Mutations: free_syms not giving its
 * reference back -> the first red (1 kept after the bound 0); make_room
 * ignoring refs -> the twin red (0 kept while in use). */
static int unwind_again(pp_unwinder *u, const pp_sample *s, pp_native_frame *f)
{
    size_t n = 0;
    unsigned flags;

    return pp_unwind(u, s, f, 256, &n, &flags) == 0 && n > 0 ? 0 : -1;
}

TEST(unwind_shared_symbol_indexes_bounded_unless_in_use)
{
    pp_unwinder *u = NULL;
    pp_native_frame f[256];
    size_t kept, bytes;
    pp_sample s;

    capture(256 * 1024);
    s = sample_of(snap.len);
    ASSERT_OK(pp_unwind_open(&u));
    ASSERT_OK(unwind_again(u, &s, f));
    ASSERT_EQ_STR(f[0].sym, chain[0]);
    kept = pp_unwind_shared(u, &bytes);
    printf("indexes after one unwind: %zu (%zu bytes)\n", kept, bytes);
    ASSERT_GE_INT(kept, 1);
    pp_unwind_shared_limit(u, 0);            /* in use: all stay */
    printf("in use, bound 0: %zu kept\n", pp_unwind_shared(u, NULL));
    ASSERT_EQ_UINT(pp_unwind_shared(u, NULL), kept);
    pp_unwind_forget(u, s.pid);
    pp_unwind_shared_limit(u, 16u << 20);    /* unused, within the bound: kept */
    printf("unused, bound 16 MB: %zu kept\n", pp_unwind_shared(u, NULL));
    ASSERT_EQ_UINT(pp_unwind_shared(u, NULL), kept);
    pp_unwind_shared_limit(u, 0);            /* unused, over it: freed */
    printf("unused, bound 0: %zu kept\n", pp_unwind_shared(u, &bytes));
    ASSERT_EQ_UINT(pp_unwind_shared(u, NULL), 0);
    ASSERT_EQ_UINT(bytes, 0);
    /* and made again for the next sample, named as before */
    ASSERT_OK(unwind_again(u, &s, f));
    ASSERT_EQ_STR(f[0].sym, chain[0]);
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

/* ---- a pc no .eh_frame covers: no separate debug file's DWARF ------------
 * At such a pc (a new thread's first instruction, in clone3 after the
 * system call; _start; _init, _fini) libdw falls back to the module's DWARF
 * CFI, and for libc that was libc6-dbg's debug file read whole and
 * decompressed (180-305 ms, in the middle of a recording: the ring buffer
 * overflowed). Mutation: no_debug_dwarf returning at once -> red. */
typedef struct no_cfi {
    uint64_t near, pc;             /* a function of libc; the pc found (0: none) */
    int has_debug;                 /* libc's DWARF is in a separate debug file */
} no_cfi;

static int find_no_cfi(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr lo, void *arg)
{
    no_cfi *c = arg;
    Dwarf_Addr bias;
    Dwarf_CFI *cfi;
    Dwarf_Frame *fr;
    const char *debug = NULL;

    (void)ud;
    if (!strstr(name, "libc.so") || c->near < lo)
        return DWARF_CB_OK;
    dwfl_module_getsymtab(mod);         /* opens the debug file, if any */
    dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
    c->has_debug = debug != NULL && dwfl_module_getdwarf(mod, &bias) != NULL;
    if (!(cfi = dwfl_module_eh_cfi(mod, &bias)))
        return DWARF_CB_ABORT;
    for (uint64_t pc = c->near; pc < c->near + 4096; pc++) {
        if (dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
            c->pc = pc;
            break;
        }
        free(fr);
    }
    return DWARF_CB_ABORT;
}

TEST(unwind_a_pc_without_cfi_reads_no_debug_dwarf)
{
    static char *debuginfo;
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .debuginfo_path = &debuginfo,
    };
    no_cfi c = {(uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "clone"), 0, 0};
    Dwfl *d = dwfl_begin(&cb);
    pp_unwinder *u;
    pp_native_frame f[256];
    size_t n, before, grew;
    unsigned flags;
    pp_sample s;
    struct timespec t0, t1;

    ASSERT_TRUE(d != NULL && c.near != 0);
    ASSERT_OK(dwfl_linux_proc_report(d, getpid()));
    ASSERT_OK(dwfl_report_end(d, NULL, NULL));
    dwfl_getmodules(d, find_no_cfi, &c, 0);
    dwfl_end(d);
    if (!c.has_debug)
        TEST_SKIP("libc's DWARF is not in a separate debug file here (libc6-dbg)");
    ASSERT_TRUE(c.pc != 0);
    capture(256 * 1024);
    ASSERT_OK(pp_unwind_open(&u));
    s = sample_of(snap.len);            /* libc's symbols read: its debug file open */
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));
    ASSERT_EQ_UINT(flags, PP_UNWIND_WHOLE);
    s.regs[16] = c.pc;
    before = mallinfo2().uordblks;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    grew = mallinfo2().uordblks - before;
    print_frames(f, n);
    printf("    pc %#llx (no CFI, near clone): heap +%zu KiB, %.1f ms\n", (unsigned long long)c.pc,
           grew / 1024, (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
    ASSERT_GE_INT(n, 1);
    ASSERT_CONTAINS(f[0].dso, "libc.so");
    ASSERT_LT_INT(grew, 1 << 20);       /* libc6-dbg's DWARF: tens of MiB */
    pp_unwind_close(u);
}

/* ---- no library loaded in the middle of a recording -----------------------
 * The first module without a debug file on disk (the vDSO: Python's time()
 * goes through clock_gettime there) made libdwfl load its debuginfod
 * client, some 25 libraries, 16-84 ms in the middle of a recording (the
 * ring buffer lost samples). find_debuginfo loads it only where
 * DEBUGINFOD_URLS names servers, and then pp_unwind_open loads it first:
 * the first sample through the vDSO maps no new file. Mutation:
 * find_debuginfo's gate gone -> red (libdebuginfod, libcurl... mapped by
 * the unwind). */
static size_t mapped_files(void)
{
    pp_maps m;
    size_t n = 0;

    ASSERT_OK(pp_maps_read(getpid(), &m));
    for (size_t i = 0; i < m.n; i++)
        n += m.v[i].path[0] == '/' && (i == 0 || strcmp(m.v[i].path, m.v[i - 1].path) != 0);
    pp_maps_free(&m);
    return n;
}

/* The start of the vDSO's code in this process, 0 when there is none. */
static uint64_t vdso_text(void)
{
    unsigned long base = getauxval(AT_SYSINFO_EHDR);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
    const Elf64_Shdr *sh;
    const char *names;

    if (!base)
        return 0;
    sh = (const Elf64_Shdr *)(base + eh->e_shoff);
    names = (const char *)(base + sh[eh->e_shstrndx].sh_offset);
    for (int i = 0; i < eh->e_shnum; i++)
        if (strcmp(names + sh[i].sh_name, ".text") == 0)
            return base + sh[i].sh_addr;
    return 0;
}

TEST(unwind_a_first_pc_in_the_vdso_maps_no_library)
{
    pp_unwinder *u;
    pp_native_frame f[256];
    size_t n, before, after;
    unsigned flags;
    uint64_t pc = vdso_text();
    pp_sample s;

    if (!pc)
        TEST_SKIP("no vDSO in this process");
    capture(256 * 1024);
    ASSERT_OK(pp_unwind_open(&u));
    s = sample_of(snap.len);
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));   /* every other module named */
    s.regs[16] = pc;
    before = mapped_files();
    ASSERT_OK(pp_unwind(u, &s, f, 256, &n, &flags));
    after = mapped_files();
    print_frames(f, n);
    printf("    files mapped: %zu before, %zu after\n", before, after);
    ASSERT_GE_INT(n, 1);
    ASSERT_EQ_STR(f[0].dso, "[vdso]");
    ASSERT_EQ_INT(after, before);
    pp_unwind_close(u);
}

/* Hostile samples: registers and stack bytes at random (the pc inside a
 * known function, or anywhere). The walk reads only the copy, the files
 * and this process's memory, never more than cap frames. */
TEST(unwind_survives_garbage_stacks)
{
    static uint64_t stack[512];
    pp_unwinder *u;
    pp_native_frame f[64];
    size_t n, total = 0;
    unsigned flags;
    pp_sample s;
    uint64_t seed = 0x9e3779b97f4a7c15ull;

    ASSERT_OK(pp_unwind_open(&u));
    for (int round = 0; round < 300; round++) {
        for (size_t i = 0; i < 512; i++) {
            seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
            /* half the words point back into the copy, as saved frames do */
            stack[i] = i % 2 ? (uint64_t)(uintptr_t)&stack[seed % 512] : seed;
        }
        memset(&s, 0, sizeof(s));
        s.pid = getpid();
        s.tid = (int32_t)syscall(SYS_gettid);
        s.have_user = 1;
        for (int r = 0; r < PP_SAMPLE_NREGS; r++)
            s.regs[r] = stack[(size_t)(r * 7 + round) % 512];
        s.regs[7] = (uint64_t)(uintptr_t)stack;
        s.regs[16] = round % 3 ? (uint64_t)(uintptr_t)ut_recurse_code() + (uint64_t)(round % 40)
                               : stack[round % 512];
        s.stack = stack;
        s.stack_len = sizeof(stack) - (size_t)round % 64;
        ASSERT_OK(pp_unwind(u, &s, f, 64, &n, &flags));
        ASSERT_GE_INT(n, 1);
        ASSERT_LE_INT(n, 64);
        for (size_t i = 0; i < n; i++)
            ASSERT_TRUE(f[i].sym && f[i].dso);
        if (round % 3)
            ASSERT_EQ_STR(f[0].sym, "ut_recurse");
        total += n;
    }
    printf("    300 garbage samples: %zu frames in all\n", total);
    pp_unwind_close(u);
}

/* Maps the image at path as ld.so does, its PT_LOAD segments from base on
 * (at most 8, within len bytes of base), executable where the file says;
 * returns the file's size. */
static size_t map_image(const char *path, uint64_t base, size_t len)
{
    Elf64_Ehdr eh;
    Elf64_Phdr ph[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    off_t size;

    ASSERT_GE_INT(fd, 0);
    ASSERT_EQ_INT(pread(fd, &eh, sizeof(eh), 0), (long)sizeof(eh));
    ASSERT_LE_INT(eh.e_phnum, 64);
    for (int i = 0, k = 0; i < eh.e_phnum && k < 8; i++) {
        Elf64_Phdr *p = &ph[k];
        uint64_t at, off;

        ASSERT_EQ_INT(pread(fd, p, sizeof(*p), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)),
                      (long)sizeof(*p));
        if (p->p_type != PT_LOAD || p->p_filesz == 0)
            continue;
        at = p->p_vaddr & ~4095ull;
        off = p->p_offset & ~4095ull;
        ASSERT_LE_INT((long)(at + (p->p_offset - off) + p->p_filesz), (long)len);
        ASSERT_TRUE(mmap((void *)(uintptr_t)(base + at), p->p_filesz + (p->p_offset - off),
                         PROT_READ | (p->p_flags & PF_X ? PROT_EXEC : 0),
                         MAP_PRIVATE | MAP_FIXED, fd, (off_t)off) != MAP_FAILED);
        k++;
    }
    size = lseek(fd, 0, SEEK_END);
    close(fd);
    return (size_t)size;
}

/* pc in this process named sym in dso by a new unwinder (the maps read now). */
static void assert_named(uint64_t pc, const char *sym, const char *dso)
{
    static uint64_t stack[64];
    pp_unwinder *u;
    pp_native_frame f[4];
    size_t n;
    unsigned flags;
    pp_sample s;

    memset(&s, 0, sizeof(s));
    s.pid = getpid();
    s.tid = (int32_t)syscall(SYS_gettid);
    s.have_user = 1;
    s.regs[7] = (uint64_t)(uintptr_t)stack;
    s.regs[16] = pc;
    s.stack = stack;
    s.stack_len = sizeof(stack);
    ASSERT_OK(pp_unwind_open(&u));
    ASSERT_OK(pp_unwind(u, &s, f, 4, &n, &flags));
    ASSERT_GE_INT(n, 1);
    printf("    %#llx: %s (%s)\n", (unsigned long long)pc, f[0].sym, f[0].dso);
    ASSERT_EQ_STR(f[0].sym, sym);
    ASSERT_EQ_STR(f[0].dso, dso);
    pp_unwind_close(u);
}

/* A file's page mapped on its own, executable, at an offset other than 0
 * (libffi does it with its trampolines' page: ctypes, which numpy
 * imports) is no image loaded there, and must not hide the library
 * mapped just above it: taken for one (base = its start - its offset),
 * it made a module over that library's first page, which was then never
 * reported and its code [unknown] (numpy's, in 1 process in 200). Here a
 * copy of libelf mapped as ld.so maps it, then a page of libc at offset
 * 0x1000 put just below it; the twin (before the page) shows the copy is
 * named at all. Mutation: the run's first mapping taken as the base
 * whatever its offset -> red: the copy's elf_version named "[unknown]
 * (libc.so.6)", inside the page's module. */
TEST(unwind_a_lone_page_of_a_file_hides_no_library_above_it)
{
    Dl_info lib, libc;
    void *fn = dlsym(RTLD_DEFAULT, "elf_version"), *cfn = dlsym(RTLD_DEFAULT, "malloc");
    size_t len = 64u << 20, size;
    uint64_t region, base, pc;
    int fd;

    char *path;

    ASSERT_TRUE(fn && cfn && dladdr(fn, &lib) && dladdr(cfn, &libc));
    path = realpath(lib.dli_fname, NULL);           /* as the maps name it */
    ASSERT_TRUE(path != NULL);
    region = (uint64_t)(uintptr_t)mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_TRUE(region != (uint64_t)(uintptr_t)MAP_FAILED);
    base = region + (1u << 20);
    size = map_image(path, base, len - (2u << 20));
    ASSERT_GT_INT((long)size, 0);
    pc = base + ((uint64_t)(uintptr_t)fn - (uint64_t)(uintptr_t)lib.dli_fbase);
    assert_named(pc, "elf_version", path);     /* the twin: no page yet */
    fd = open(libc.dli_fname, O_RDONLY | O_CLOEXEC);
    ASSERT_GE_INT(fd, 0);
    ASSERT_TRUE(mmap((void *)(uintptr_t)(base - 4096), 4096, PROT_READ | PROT_EXEC,
                     MAP_PRIVATE | MAP_FIXED, fd, 4096) != MAP_FAILED);
    close(fd);
    assert_named(pc, "elf_version", path);
    munmap((void *)(uintptr_t)region, len);
    free(path);
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

/* ---- a live interpreter, sampled by the kernel --------------------------
 * What the BPF collector will hand over, taken here from perf_event_open:
 * the user registers and a copy of the user stack of a running python3
 * (a distribution's libpython: no frame pointers), unwound while it runs.
 * PERFPY_TEST_PYTHON=/path/to/python3 samples another interpreter.
 */
#define PAGES 1024                       /* ring buffer: 4 MiB of data */
#define STACK_COPY 65528                 /* perf's most: 30 calls deep on 3.8-3.10
                                          need more than 16 KiB */

/* perf's x86 register numbers, in the order a sample lists them (bits of
 * the mask, low first) -> pp_sample's DWARF numbers */
static const int perf_to_dwarf[] = {0 /* ax */, 3 /* bx */, 2 /* cx */, 1 /* dx */,
                                    4 /* si */, 5 /* di */, 6 /* bp */, 7 /* sp */,
                                    16 /* ip */, 8, 9, 10, 11, 12, 13, 14, 15 /* r8-r15 */};
#define REGS_MASK 0xff01ffull             /* ax..ip (0-8), r8..r15 (16-23) */

typedef struct live {
    pid_t child;
    int fd[8];                           /* one event and ring per thread */
    unsigned char *ring[8];
    size_t nt;
    pp_unwinder *u;
    pp_kallsyms k;
    pp_splicer *sp;
    pp_profile p;
    pp_folder *f;
    size_t samples, whole, with_eval, at_start;
    size_t in_thread, thread_whole, at_clone;   /* samples of threads other than the main one */
    size_t in_vdso, vdso_named;          /* leaf in the vDSO; named there */
    uint64_t vdso_lo, vdso_hi;           /* the child's [vdso], from its maps */
    size_t in_kernel, kernel_named, via_syscall;
    uint64_t unwind_ns;
} live;

/* /usr/bin/python3, or $PERFPY_TEST_PYTHON (to try another interpreter). */
static const char *python(void)
{
    const char *p = getenv("PERFPY_TEST_PYTHON");

    return p && *p ? p : "/usr/bin/python3";
}

static pid_t start_python(const char *program)
{
    pid_t pid = fork();

    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);   /* a failed test leaves nothing running */
        execl(python(), "python3", "-c", program, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec t;

    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The kernel frames of a sample: counted, and how many are named. */
static size_t kernel_frames(live *l, const uint64_t *ips, size_t nr, pp_native_frame *kf)
{
    size_t nk = pp_kallsyms_frames(&l->k, ips, nr, kf, 128);
    int named = nk > 0, syscall_ = 0;

    for (size_t i = 0; i < nk; i++) {
        named &= strcmp(kf[i].sym, "[unknown]") != 0;
        syscall_ |= strcmp(kf[i].sym, "do_syscall_64") == 0;
    }
    l->in_kernel += nk > 0;
    l->kernel_named += nk > 0 && named;
    l->via_syscall += syscall_;
    return nk;
}

/* One PERF_RECORD_SAMPLE: tid, time, kernel callchain, regs, stack. */
static void one_sample(live *l, const unsigned char *r, size_t len)
{
    const unsigned char *p = r + sizeof(struct perf_event_header), *end = r + len;
    uint32_t pt[2];
    uint64_t nr, abi, size, dyn, t0;
    const unsigned char *ips;
    pp_sample s;
    pp_native_frame f[256], kf[128];
    pp_raw_sample out;
    size_t n, nk;
    unsigned flags;
    int eval = 0;

    memset(&s, 0, sizeof(s));
    memcpy(pt, p, 8);
    s.pid = (int32_t)pt[0];
    s.tid = (int32_t)pt[1];
    p += 8;
    memcpy(&s.time_ns, p, 8);
    p += 8;
    memcpy(&nr, p, 8);                   /* the kernel's callchain */
    ips = p + 8;
    p += 8 + nr * 8;
    memcpy(&abi, p, 8);
    p += 8;
    if (abi == PERF_SAMPLE_REGS_ABI_NONE)
        return;                          /* a kernel thread */
    for (size_t i = 0; i < sizeof(perf_to_dwarf) / sizeof(perf_to_dwarf[0]); i++, p += 8)
        memcpy(&s.regs[perf_to_dwarf[i]], p, 8);
    memcpy(&size, p, 8);
    p += 8;
    if (p + size + 8 > end)
        TEST_FAIL_("sample of %zu bytes cut", len);
    memcpy(&dyn, p + size, 8);
    s.stack = p;
    s.stack_len = dyn;
    s.have_user = 1;
    t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);   /* CPU time: the machine is shared */
    ASSERT_OK(pp_unwind(l->u, &s, f, 256, &n, &flags));
    if (l->samples >= 20)                /* past the first: files opened, CFI read */
        l->unwind_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    {
        uint64_t kips[128];
        size_t m = nr < 128 ? (size_t)nr : 128;
        memcpy(kips, ips, m * 8);
        nk = kernel_frames(l, kips, m, kf);
    }
    ASSERT_OK(pp_splice(l->sp, &s, kf, nk, f, n, &out));
    ASSERT_OK(pp_fold_sample(l->f, &out));
    for (size_t i = 0; i < n; i++)      /* or a split part: ".cold" on 3.14 (sid) */
        eval |= strncmp(f[i].sym, "_PyEval_EvalFrameDefault", 24) == 0 &&
                (f[i].sym[24] == '\0' || f[i].sym[24] == '.');
    if (l->samples < 3 || (l->samples % 50 == 0 && !(flags & PP_UNWIND_WHOLE))) {
        printf("    sample %zu, flags %u:\n", l->samples, flags);
        print_frames(f, n);
    }
    l->samples++;
    l->whole += (flags & PP_UNWIND_WHOLE) != 0;
    l->with_eval += eval;
    l->at_start += strcmp(f[n - 1].sym, "_start") == 0;
    if (s.regs[16] >= l->vdso_lo && s.regs[16] < l->vdso_hi) {   /* by address, not name */
        l->in_vdso++;
        l->vdso_named += strcmp(f[0].dso, "[vdso]") == 0 && strcmp(f[0].sym, "[unknown]") != 0 &&
                         (flags & PP_UNWIND_WHOLE);
    }
    if (s.tid != s.pid) {
        l->in_thread++;
        l->thread_whole += (flags & PP_UNWIND_WHOLE) != 0;
        l->at_clone += strstr(f[n - 1].sym, "clone") != NULL;   /* __GI___clone3 */
    }
}

/* Reads what the ring holds, a record at a time (a record may wrap). */
static void drain(live *l, unsigned char *ring)
{
    struct perf_event_mmap_page *meta = (void *)ring;
    unsigned char *data = ring + meta->data_offset, *rec = malloc(65536);
    uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = meta->data_tail, mask = meta->data_size - 1;

    ASSERT_TRUE(rec != NULL);
    while (tail < head) {
        struct perf_event_header h;
        for (size_t i = 0; i < sizeof(h); i++)
            ((unsigned char *)&h)[i] = data[(tail + i) & mask];
        if (h.size < sizeof(h))
            TEST_FAIL_("bad record size %u", h.size);
        for (size_t i = 0; i < h.size; i++)
            rec[i] = data[(tail + i) & mask];
        if (h.type == PERF_RECORD_SAMPLE)
            one_sample(l, rec, h.size);
        tail += h.size;
    }
    __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
    free(rec);
}

/* One event and ring per thread of the child, as `perf record -p` does
 * (the kernel maps no ring of an inherited per-task event). */
static void open_threads(live *l, struct perf_event_attr *a)
{
    char path[64];
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "/proc/%d/task", l->child);
    d = opendir(path);
    ASSERT_TRUE(d != NULL);
    while ((e = readdir(d)) && l->nt < 8) {
        int tid = atoi(e->d_name), fd;
        if (tid <= 0)
            continue;
        fd = (int)syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0) {
            int err = errno;
            closedir(d);
            kill(l->child, SIGKILL);
            TEST_SKIP("perf_event_open: %s (needs root or perf_event_paranoid <= 1)",
                      strerror(err));
        }
        l->fd[l->nt] = fd;
        l->ring[l->nt] = mmap(NULL, (PAGES + 1) * 4096ul, PROT_READ | PROT_WRITE, MAP_SHARED,
                              fd, 0);
        ASSERT_TRUE(l->ring[l->nt] != MAP_FAILED);
        l->nt++;
    }
    closedir(d);
    ASSERT_GT_INT(l->nt, 0);
}

/* Samples `program` (python3 -c) until 200 samples or 10 s, each unwound,
 * its kernel ips named, spliced and folded into l->p. */
static void run_live(live *l, const char *program)
{
    struct perf_event_attr a;
    uint64_t t0;
    int status;

    if (access(python(), X_OK) != 0)
        TEST_SKIP("no %s to sample", python());
    memset(l, 0, sizeof(*l));
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1000000;           /* 1 ms of CPU */
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
                    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = REGS_MASK;
    a.sample_stack_user = STACK_COPY;
    a.exclude_callchain_user = 1;
    l->child = start_python(program);
    ASSERT_GT_INT(l->child, 0);
    ASSERT_OK(pp_unwind_open(&l->u));
    ASSERT_OK(pp_kallsyms_load(&l->k));
    ASSERT_OK(pp_splice_open(&l->sp, NULL));
    ASSERT_OK(pp_profile_init(&l->p));
    ASSERT_OK(pp_fold_open(&l->f, &l->p, NULL));
    usleep(300000);                      /* past start-up: its threads are running */
    {
        pp_maps m;
        ASSERT_OK(pp_maps_read(l->child, &m));
        for (size_t i = 0; i < m.n; i++)
            if (strcmp(m.v[i].path, "[vdso]") == 0)
                l->vdso_lo = m.v[i].start, l->vdso_hi = m.v[i].end;
        pp_maps_free(&m);
    }
    open_threads(l, &a);
    t0 = clock_ns(CLOCK_MONOTONIC);
    do {
        struct pollfd pfd[8];
        for (size_t i = 0; i < l->nt; i++)
            pfd[i] = (struct pollfd){l->fd[i], POLLIN, 0};
        poll(pfd, l->nt, 20);
        for (size_t i = 0; i < l->nt; i++)
            drain(l, l->ring[i]);
    } while (l->samples < 200 &&        /* 0.2 s of its CPU time, or 10 s: a busy machine */
             clock_ns(CLOCK_MONOTONIC) - t0 < 10000000000ull);
    kill(l->child, SIGKILL);
    waitpid(l->child, &status, 0);
    pp_fold_close(l->f);
    printf("    %zu samples: %zu whole, %zu with _PyEval_EvalFrameDefault, %zu ending at "
           "_start; %zu in the kernel, %zu of them all named, %zu via do_syscall_64; "
           "%llu folded as [truncated]; %.1f us of CPU per unwind past the first 20; "
           "%zu in other threads, %zu of them whole, %zu ending at clone\n",
           l->samples, l->whole, l->with_eval, l->at_start, l->in_kernel, l->kernel_named,
           l->via_syscall, (unsigned long long)l->p.truncated,
           l->samples > 20 ? l->unwind_ns / 1000.0 / (double)(l->samples - 20) : 0.0,
           l->in_thread, l->thread_whole, l->at_clone);
    ASSERT_GE_INT(l->samples, 100);
}

static void end_live(live *l)
{
    pp_unwind_close(l->u);
    pp_splice_close(l->sp);
    pp_kallsyms_free(&l->k);
    pp_profile_free(&l->p);
    for (size_t i = 0; i < l->nt; i++) {
        munmap(l->ring[i], (PAGES + 1) * 4096ul);
        close(l->fd[i]);
    }
}

TEST(unwind_a_live_python_sampled_by_the_kernel)
{
    live l;

    run_live(&l, "def f(n):\n"
                 "    return f(n - 1) if n else sorted(range(2000, 0, -1))\n"
                 "while True:\n"
                 "    f(30)\n");
    /* every sample runs Python code started by _start: the walk must get
     * through the eval loop to there, and the folder sees it whole */
    ASSERT_GE_INT(l.with_eval * 100, l.samples * 95);
    ASSERT_GE_INT(l.whole * 100, l.samples * 95);
    ASSERT_GE_INT(l.at_start * 100, l.samples * 95);
    ASSERT_LE_INT(l.p.truncated * 100, l.samples * 5);
    end_live(&l);
}

TEST(unwind_a_live_python_in_threads)
{
    live l;

    run_live(&l, "import threading, time\n"
                 "time.sleep(0.1)\n"
                 "def work():\n"
                 "    while True:\n"
                 "        sorted(range(2000, 0, -1))\n"
                 "for _ in range(2):\n"
                 "    threading.Thread(target=work, daemon=True).start()\n"
                 "time.sleep(1000)\n");
    /* each thread's stack is its own mapping: walked to the thread's root
     * (clone3, __GI___clone3 as libc names it), not past it nor cut */
    ASSERT_GE_INT(l.in_thread * 100, l.samples * 90);
    ASSERT_GE_INT(l.thread_whole * 100, l.in_thread * 95);
    ASSERT_GE_INT(l.at_clone * 100, l.in_thread * 95);
    ASSERT_GE_INT(l.with_eval * 100, l.samples * 95);
    ASSERT_LE_INT(l.p.truncated * 100, l.samples * 5);
    end_live(&l);
}

TEST(unwind_a_live_python_through_the_vdso)
{
    live l;

    run_live(&l, "import time\n"
                 "while True:\n"
                 "    time.time(); time.time(); time.time(); time.time()\n");
    printf("    %zu samples with the leaf in the vDSO, %zu of them named and whole\n",
           l.in_vdso, l.vdso_named);
    if (l.in_vdso == 0)
        TEST_SKIP("time.time() never sampled in the vDSO (a clock source without it?)");
    /* its CFI comes from our own copy of the vDSO (a memfd) */
    ASSERT_GE_INT(l.vdso_named * 100, l.in_vdso * 95);
    ASSERT_GE_INT(l.whole * 100, l.samples * 95);
    end_live(&l);
}

TEST(unwind_live_python_in_the_kernel_with_kallsyms)
{
    live l;

    run_live(&l, "import os\n"
                 "while True:\n"
                 "    os.stat('/')\n");
    if (!pp_kallsyms_usable(&l.k))
        TEST_SKIP("kernel addresses are hidden from this user (kptr_restrict): needs root");
    /* a loop of system calls: many samples in the kernel, every kernel
     * frame named, most under do_syscall_64; user side as above */
    ASSERT_GE_INT(l.in_kernel * 100, l.samples * 20);
    ASSERT_EQ_INT(l.kernel_named, l.in_kernel);
    ASSERT_GE_INT(l.via_syscall * 100, l.in_kernel * 90);
    ASSERT_GE_INT(l.whole * 100, l.samples * 95);
    ASSERT_LE_INT(l.p.truncated * 100, l.samples * 5);
    end_live(&l);
}
/* ---- the symbol index against libdwfl's own lookup ----------------------
 * modsyms.c replaces dwfl_module_addrinfo (too slow): over every 61st byte
 * of the code of this binary and of libc, both must name the function
 * starting at the same address. */
typedef struct agree {
    size_t probes, both, same, only_dwfl, only_ours;
    char first_diff[512], only_diff[512];
} agree;

static void compare_pc(agree *a, Dwfl_Module *mod, const pp__modsyms *s, uint64_t pc,
                       const char *module)
{
    GElf_Off off;
    GElf_Sym sym;
    uint64_t start = 0;
    const char *theirs = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
    const char *ours = pp__modsyms_find(s, pc, &start);

    if (theirs && (GELF_ST_TYPE(sym.st_info) == STT_OBJECT ||
                   GELF_ST_TYPE(sym.st_info) == STT_TLS))
        theirs = NULL;                       /* data: not a pc's */
    a->probes++;
    if (theirs && ours) {
        a->both++;
        if (pc - off == start)
            a->same++;
        else if (!a->first_diff[0])
            snprintf(a->first_diff, sizeof(a->first_diff), "%#llx: libdwfl %s at %#llx, ours %s at %#llx",
                     (unsigned long long)pc, theirs, (unsigned long long)(pc - off), ours,
                     (unsigned long long)start);
    } else if (theirs) {
        if (!a->only_diff[0])
            snprintf(a->only_diff, sizeof(a->only_diff), "%#llx: only libdwfl: %s (%s, type %d, size %llu)",
                     (unsigned long long)pc, theirs, module, GELF_ST_TYPE(sym.st_info),
                     (unsigned long long)sym.st_size);
        a->only_dwfl++;
    } else if (ours) {
        a->only_ours++;
    }
}

/* Every 61st byte of the module's code sections. */
static int compare_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr lo,
                          void *arg)
{
    agree *a = arg;
    GElf_Addr bias;
    Elf *elf;
    Elf_Scn *scn = NULL;
    pp__modsyms *s;

    (void)ud;
    (void)lo;
    if (!strstr(name, "unit-tests") && !strstr(name, "libc.so"))
        return DWARF_CB_OK;
    elf = dwfl_module_getelf(mod, &bias);
    s = pp__modsyms_build(mod);
    ASSERT_TRUE(elf != NULL && s != NULL);
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_EXECINSTR))
            continue;
        for (uint64_t pc = sh.sh_addr + bias; pc < sh.sh_addr + bias + sh.sh_size; pc += 61)
            compare_pc(a, mod, s, pc, name);
    }
    pp__modsyms_free(s);
    return DWARF_CB_OK;
}

TEST(unwind_symbol_index_agrees_with_libdwfl)
{
    static char *debuginfo;
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_linux_proc_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .debuginfo_path = &debuginfo,
    };
    Dwfl *d = dwfl_begin(&cb);
    agree a;

    memset(&a, 0, sizeof(a));
    ASSERT_TRUE(d != NULL);
    ASSERT_EQ_INT(dwfl_linux_proc_report(d, getpid()), 0);
    ASSERT_EQ_INT(dwfl_report_end(d, NULL, NULL), 0);
    dwfl_getmodules(d, compare_module, &a, 0);
    printf("    %zu probes: both named %zu (same function %zu), only libdwfl %zu, only ours %zu\n"
           "    %s\n    %s\n", a.probes, a.both, a.same, a.only_dwfl, a.only_ours, a.first_diff,
           a.only_diff);
    ASSERT_GT_INT(a.both, 1000);
    ASSERT_EQ_INT(a.same, a.both);
    ASSERT_EQ_INT(a.only_dwfl, 0);
    ASSERT_EQ_INT(a.only_ours, 0);
    dwfl_end(d);
}
#else
TEST(unwind_names_a_real_stack_to_its_root)
{
    TEST_SKIP("built without the libdw unwinder (not x86_64, or elfutils' libdw-dev missing)");
}
#endif
