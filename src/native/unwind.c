/*
 * Native unwinding with libdwfl (see unwind.h for the picture). One Dwfl
 * per process, kept between samples: reporting modules costs an open and
 * an ELF header read per file, and the CFI libdw parses stays cached in
 * the module. The thread state is attached once per Dwfl; each sample sets
 * `cur` and calls dwfl_getthread_frames, whose callbacks below read from
 * that sample.
 *
 * Symbol indexes (modsyms.c) are shared by build-id between processes:
 * a whole host runs the same libc and libpython in tens of processes, and
 * an index per process (with the separate debug file libdwfl opens for
 * the symbols) cost about 1 MB each, 700 MB in a 3-minute recording of 20
 * busy and 200 short-lived CPython processes a minute. Those no module
 * uses any more are kept up to SHARED_BYTES, the least recently used
 * freed first: a host that runs for days keeps meeting new files (each
 * rebuilt extension module, each interpreter's lib-dynload), and keeping
 * every one made a whole-host recording's memory grow by the hour.
 *
 * perf's util/unwind-libdw.c makes a new Dwfl per sample and reports the
 * modules of each frame's map as the walk reaches it; the same calls are
 * used here (dwfl_report_elf), once per process instead, each file at the
 * start of its mapping of offset 0 (report_file).
 */
#include "unwind.h"
#include "debugfile.h"
#include "maps.h"
#include "modsyms.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__)
#error "unwind.c reads x86_64 registers (sample.h); the Makefile builds it only there"
#endif

#define MAX_PROCS 256              /* processes kept; the least recently used goes */
#define MAX_SHARED 256             /* files whose symbol index is shared; past it
                                      a module's own is made (and freed with it) */
#define SHARED_BYTES (16u << 20)   /* indexes no module uses are kept up to this */
#define REFRESH_NS 100000000ull    /* maps read again at most this often */

typedef struct proc {
    struct pp_unwinder *u;
    int pid;
    Dwfl *dwfl;
    pp_maps maps;
    Dwfl_Callbacks callbacks;      /* its own: a container's debug files are
                                      under its root */
    char *debuginfo_path;          /* NULL: libdw's default */
    char debuginfo_buf[96];
    int mem_fd;                    /* /proc/PID/mem; -1 when not (yet) open */
    int mem_tried;
    uint64_t refreshed_ns, used;   /* last maps read (CLOCK_MONOTONIC, as sample
                                      times are); last use (LRU) */
    /* the sample being unwound */
    const pp_sample *cur;
    uint64_t stack_hi;             /* end of the mapping sp is in */
    int ran_out;
    pp_native_frame *out;
    size_t cap, n;
} proc;

/* One file's symbol index, for every process that maps it. */
typedef struct shared_syms {
    unsigned char id[64];          /* its build-id */
    int idlen;
    pp__modsyms *s;
    size_t bytes;                  /* pp__modsyms_bytes */
    unsigned refs;                 /* modules that use it */
    uint64_t used;                 /* last handed out (the unwinder's clock) */
} shared_syms;

struct pp_unwinder {
    proc *procs[MAX_PROCS];
    size_t nprocs, max_procs;
    shared_syms shared[MAX_SHARED];
    size_t nshared, shared_bytes, shared_max;
    uint64_t clock;
    char vdso_path[64];            /* our own vDSO image (the kernel's, the same
                                      in every process), in a memfd; "" when none */
    int vdso_fd;
};

/* A Dwfl for p: the debug files of a process in a container (another
 * root) are looked up in its root's /usr/lib/debug, by build-id. */
static Dwfl *begin(proc *p)
{
    if (pp_maps_other_root(p->pid)) {
        snprintf(p->debuginfo_buf, sizeof(p->debuginfo_buf),
                 ":.debug:/proc/%d/root/usr/lib/debug", p->pid);
        p->debuginfo_path = p->debuginfo_buf;
    }
    p->callbacks = (Dwfl_Callbacks){
        .find_debuginfo = pp__find_debuginfo,
        .debuginfo_path = &p->debuginfo_path,
        .section_address = dwfl_offline_section_address,
    };
    return dwfl_begin(&p->callbacks);
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- memory -------------------------------------------------------------- */

static int read_file_at(const char *path, uint64_t off, void *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got;

    if (fd < 0)
        return -1;
    got = pread(fd, buf, len, (off_t)off);
    close(fd);
    return got == (ssize_t)len ? 0 : -1;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
    proc *p = arg;
    const pp_sample *s = p->cur;
    uint64_t sp = s->regs[7], v;
    const pp_map *m;
    char file[4200];

    (void)dwfl;
    if (addr >= sp && addr - sp <= s->stack_len && s->stack_len - (addr - sp) >= 8) {
        memcpy(&v, (const char *)s->stack + (addr - sp), 8);
        *result = v;
        return true;
    }
    if (addr >= sp && addr < p->stack_hi) {
        p->ran_out = 1;          /* the stack as it is now is not the sample's */
        return false;
    }
    m = pp_maps_find(&p->maps, addr);
    if (m && m->end - addr >= 8 && !(m->prot & PP_MAP_W) && m->path[0] == '/' &&
        read_file_at(pp_maps_open_path(&p->maps, m->path, file, sizeof(file)),
                     m->pgoff + (addr - m->start), &v, 8) == 0) {
        *result = v;
        return true;
    }
    if (!p->mem_tried) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/mem", p->pid);
        p->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
        p->mem_tried = 1;
    }
    if (p->mem_fd >= 0 && pread(p->mem_fd, &v, 8, (off_t)addr) == 8) {
        *result = v;
        return true;
    }
    return false;
}

/* ---- the thread ------------------------------------------------------------ */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
    proc *p = arg;

    (void)dwfl;
    if (*thread_argp)
        return 0;
    *thread_argp = p;
    return p->cur->tid > 0 ? p->cur->tid : p->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
    (void)dwfl;
    (void)tid;
    *thread_argp = arg;
    return true;
}

/* pp_sample's registers are x86_64 DWARF 0..16, 16 being the return
 * address column (the pc), as libdw's x86_64 backend numbers them. */
static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
    proc *p = thread_arg;
    Dwarf_Word regs[PP_SAMPLE_NREGS];

    for (int i = 0; i < PP_SAMPLE_NREGS; i++)
        regs[i] = p->cur->regs[i];
    if (!dwfl_thread_state_registers(thread, 0, PP_SAMPLE_NREGS, regs))
        return false;
    dwfl_thread_state_register_pc(thread, regs[16]);
    return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

/* ---- modules ---------------------------------------------------------------- */

/* s's entry among the shared indexes, or NULL (a module's own). */
static shared_syms *shared_of(pp_unwinder *u, const pp__modsyms *s)
{
    for (size_t i = 0; i < u->nshared; i++)
        if (u->shared[i].s == s)
            return &u->shared[i];
    return NULL;
}

static int free_syms(Dwfl_Module *mod, void **syms, const char *name, Dwarf_Addr start,
                     void *arg)
{
    shared_syms *x = *syms ? shared_of(arg, *syms) : NULL;

    (void)mod;
    (void)name;
    (void)start;
    if (x)
        x->refs--;
    else if (*syms)
        pp__modsyms_free(*syms);
    *syms = NULL;
    return DWARF_CB_OK;
}

/* dwfl_end, and the symbol indexes of its own hung on its modules. */
static void end_dwfl(pp_unwinder *u, Dwfl *d)
{
    if (d) {
        dwfl_getmodules(d, free_syms, u, 0);
        dwfl_end(d);
    }
}

/* Room for one more shared index of `bytes`: those no module uses freed,
 * the least recently used first, while the kept ones exceed shared_max
 * or every slot is taken. 1 when there is room. */
static int make_room(pp_unwinder *u, size_t bytes)
{
    while (u->nshared == MAX_SHARED || u->shared_bytes + bytes > u->shared_max) {
        size_t old = SIZE_MAX;

        for (size_t i = 0; i < u->nshared; i++)
            if (!u->shared[i].refs &&
                (old == SIZE_MAX || u->shared[i].used < u->shared[old].used))
                old = i;
        if (old == SIZE_MAX)
            return u->nshared < MAX_SHARED;   /* all in use: over the bound while they are */
        u->shared_bytes -= u->shared[old].bytes;
        pp__modsyms_free(u->shared[old].s);
        u->shared[old] = u->shared[--u->nshared];
    }
    return 1;
}

/* mod's symbol index: the one of its file (by build-id), made from the
 * first module of it seen, else its own. NULL without memory. */
static pp__modsyms *syms_of(pp_unwinder *u, Dwfl_Module *mod)
{
    const unsigned char *id;
    GElf_Addr at;
    int n = dwfl_module_build_id(mod, &id, &at);
    pp__modsyms *s;

    if (n > 0 && n <= (int)sizeof(u->shared[0].id))
        for (size_t i = 0; i < u->nshared; i++)
            if (u->shared[i].idlen == n && memcmp(u->shared[i].id, id, (size_t)n) == 0) {
                u->shared[i].refs++;
                u->shared[i].used = ++u->clock;
                return u->shared[i].s;
            }
    if (!(s = pp__modsyms_build(mod)))
        return NULL;
    if (n > 0 && n <= (int)sizeof(u->shared[0].id) && make_room(u, pp__modsyms_bytes(s))) {
        shared_syms *x = &u->shared[u->nshared++];
        memcpy(x->id, id, (size_t)n);
        x->idlen = n;
        x->s = s;
        x->bytes = pp__modsyms_bytes(s);
        x->refs = 1;
        x->used = ++u->clock;
        u->shared_bytes += x->bytes;
    }
    return s;
}

static int is_regular(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void report(proc *p, const char *name, const char *path, uint64_t start)
{
    Dwfl_Module *mod = dwfl_report_elf(p->dwfl, name, path, -1, start, false);

    if (mod)
        pp__no_debug_dwarf(mod);
}

/* Reports the file of maps entry i (and the rest of its run of mappings of
 * the same file) unless a module is there already; returns the index past
 * the run. Only files with an executable mapping: code is all a pc can
 * be in. The module's base is where the run maps the file's offset 0 (its
 * ELF header: ld.so and the kernel map an image from its first segment,
 * at offset 0, on). A run without offset 0 is not an image loaded there
 * and is not reported: libffi maps a page of its own text again on its
 * own (its closures' trampolines; ctypes, which numpy imports), and that
 * page taken for an image (base = its start - its offset) made a module
 * over the addresses below it; in about 1 process in 200 it covered the
 * start of numpy's _multiarray_umath, which was then never reported (a
 * module was there), and every frame of numpy's C code was [unknown]. */
static size_t report_file(proc *p, size_t i)
{
    const pp_map *v = p->maps.v, *first = NULL;
    size_t j = i;
    int exec = 0;
    char file[4200];
    const char *path = v[i].path;
    size_t plen = strlen(path);

    while (j < p->maps.n && strcmp(v[j].path, path) == 0) {
        exec |= (v[j].prot & PP_MAP_X) != 0;
        if (!first && v[j].pgoff == 0)
            first = &v[j];
        j++;
    }
    if (!exec || !first || dwfl_addrmodule(p->dwfl, first->start))
        return j;
    if (strcmp(path, "[vdso]") == 0) {
        if (p->u->vdso_path[0])
            report(p, "[vdso]", p->u->vdso_path, first->start);
        return j;
    }
    if (path[0] != '/')
        return j;
    if (plen > 10 && strcmp(path + plen - 10, " (deleted)") == 0) {
        /* gone from the file system; root can still open the mapping */
        snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", p->pid,
                 (unsigned long long)first->start, (unsigned long long)first->end);
        path = file;
    } else if (!is_regular(path = pp_maps_open_path(&p->maps, path, file, sizeof(file)))) {
        return j;                       /* never open a device (/dev/dri/...) */
    }
    report(p, first->path, path, first->start);
    return j;
}

static void report_maps(proc *p)
{
    dwfl_report_begin_add(p->dwfl);
    for (size_t i = 0; i < p->maps.n;)
        i = report_file(p, i);
    dwfl_report_end(p->dwfl, NULL, NULL);
}

/* Reads the maps again; with `fresh`, a new Dwfl (an exec replaced
 * everything), else new modules are added to the current one (allowed in
 * the middle of a walk). Samples are unwound after they were taken (up to
 * a poll's 20 ms later): maps read after the sample already hold every
 * mapping it could have used, so they are not read again for it; older
 * ones are, however recent. While a process starts (ld.so, then each
 * import of a C extension) its mappings change within milliseconds: a
 * fixed 100 ms between reads left the frames of the first samples in
 * libraries mapped since unnamed and their stacks cut there. A pc in no
 * mapping at all (a broken unwind's junk) so costs at most one read per
 * poll. A sample without a time (tests) keeps the 100 ms between reads. */
static void refresh(proc *p, int fresh)
{
    uint64_t t = now_ns(), at = p->cur ? p->cur->time_ns : 0;
    pp_maps m;

    if (p->refreshed_ns && (at ? p->refreshed_ns >= at : t - p->refreshed_ns < REFRESH_NS))
        return;
    p->refreshed_ns = t;
    if (pp_maps_read(p->pid, &m) < 0) {
        pp_maps_free(&m);
        return;                          /* gone: keep what we had */
    }
    pp_maps_free(&p->maps);
    p->maps = m;
    if (fresh) {
        Dwfl *d = begin(p);
        if (!d)
            return;
        end_dwfl(p->u, p->dwfl);
        p->dwfl = d;
        report_maps(p);
        dwfl_attach_state(p->dwfl, NULL, p->pid, &thread_callbacks, p);
    } else {
        report_maps(p);
    }
}

static void proc_free(proc *p)
{
    if (!p)
        return;
    end_dwfl(p->u, p->dwfl);
    pp_maps_free(&p->maps);
    if (p->mem_fd >= 0)
        close(p->mem_fd);
    free(p);
}

static proc *proc_get(pp_unwinder *u, int pid)
{
    size_t oldest = 0;
    proc *p;

    for (size_t i = 0; i < u->nprocs; i++) {
        if (u->procs[i]->pid == pid) {
            u->procs[i]->used = ++u->clock;
            return u->procs[i];
        }
        if (u->procs[i]->used < u->procs[oldest]->used)
            oldest = i;
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->u = u;
    p->pid = pid;
    p->mem_fd = -1;
    p->used = ++u->clock;
    p->dwfl = begin(p);
    if (!p->dwfl) {
        free(p);
        return NULL;
    }
    if (pp_maps_read(pid, &p->maps) == 0)
        p->refreshed_ns = now_ns();
    report_maps(p);
    /* the architecture comes from a reported module; with none (the process
     * is gone), there is nothing to unwind with: kept anyway, so a later
     * sample does not retry every time */
    dwfl_attach_state(p->dwfl, NULL, pid, &thread_callbacks, p);
    if (u->nprocs == u->max_procs) {
        proc_free(u->procs[oldest]);
        u->procs[oldest] = p;
    } else {
        u->procs[u->nprocs++] = p;
    }
    return p;
}

void pp_unwind_prime(pp_unwinder *u, int pid)
{
    proc_get(u, pid);
}

/* ---- the walk ---------------------------------------------------------------- */

/* Whether the maps held put pc in executable memory. A pc elsewhere (in no
 * mapping, or in data: memory the program freed and a library mapped since
 * over the same addresses) means maps older than the pc's code. */
static int in_code(const proc *p, uint64_t pc)
{
    const pp_map *m = pp_maps_find(&p->maps, pc);

    return m && (m->prot & PP_MAP_X);
}

/* The symbol and DSO naming pc. Symbols come from the module's table
 * sorted once (modsyms.c): dwfl_module_addrinfo searches it linearly, 3-4
 * ms per Python stack with sid's libdw and python3.15 (test_unwind's live
 * tests; a per-pc cache of its answers was no faster than the index). */
static void name_pc(proc *p, uint64_t pc, pp_native_frame *f)
{
    Dwfl_Module *mod = dwfl_addrmodule(p->dwfl, pc);

    if (!mod && !in_code(p, pc)) {
        refresh(p, 0);                   /* a dlopen since? */
        mod = dwfl_addrmodule(p->dwfl, pc);
    }
    f->sym = "[unknown]";
    f->dso = "[unknown]";
    if (mod) {
        void **syms;
        const char *dso = dwfl_module_info(mod, &syms, NULL, NULL, NULL, NULL, NULL, NULL);
        const char *name;
        GElf_Addr bias = 0;
        if (!*syms)
            *syms = syms_of(p->u, mod);
        if (*syms && dwfl_module_getelf(mod, &bias)) {
            name = pp__modsyms_find_at(*syms, bias, pc, NULL);
        } else {                         /* no memory for the index: the slow way */
            GElf_Off off;
            GElf_Sym sym;
            name = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
        }
        if (name && name[0])
            f->sym = name;
        if (dso)
            f->dso = dso;
    }
}

static int on_frame(Dwfl_Frame *state, void *arg)
{
    proc *p = arg;
    Dwarf_Addr pc;
    bool activation;
    pp_native_frame *f;

    if (!dwfl_frame_pc(state, &pc, &activation))
        return DWARF_CB_ABORT;
    if (!activation)
        pc--;                            /* inside the call, not after it */
    f = &p->out[p->n++];
    f->pc = pc;
    name_pc(p, pc, f);
    return p->n < p->cap ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int pp_unwind(pp_unwinder *u, const pp_sample *s, pp_native_frame *out, size_t cap,
              size_t *n, unsigned *flags)
{
    proc *p;
    const pp_map *m;
    int rc;

    *n = 0;
    *flags = 0;
    if (!s->have_user || cap == 0)
        return 0;
    p = proc_get(u, s->pid);
    if (!p)
        return -ENOMEM;
    p->cur = s;
    if (!dwfl_addrmodule(p->dwfl, s->regs[16]) && !in_code(p, s->regs[16]))
        refresh(p, 1);                /* an exec since: everything anew */
    p->out = out;
    p->cap = cap;
    p->n = 0;
    p->ran_out = 0;
    m = pp_maps_find(&p->maps, s->regs[7]);
    p->stack_hi = m ? m->end : s->regs[7] + s->stack_len;
    rc = dwfl_getthread_frames(p->dwfl, s->tid > 0 ? s->tid : s->pid, on_frame, p);
    if (p->n == 0) {                     /* libdw could not even start: the pc alone */
        out[0] = (pp_native_frame){s->regs[16], "[unknown]", "[unknown]"};
        p->n = 1;
    }
    *n = p->n;
    if (rc == 0 && !p->ran_out)       /* libdw ends "normally" at a failed read too */
        *flags |= PP_UNWIND_WHOLE;
    if (p->ran_out)
        *flags |= PP_UNWIND_RAN_OUT;
    if (p->n == cap && rc != 0 && !p->ran_out)
        *flags |= PP_UNWIND_FULL;
    p->cur = NULL;
    return 0;
}

/* ---- the unwinder ------------------------------------------------------------- */

/* A copy of our own vDSO in a memfd: libdw needs an ELF file for the CFI
 * of the vDSO's functions (clock_gettime, gettimeofday: Python's time()),
 * and the kernel maps the same image into every process. */
static void vdso_copy(pp_unwinder *u)
{
    pp_maps m;
    const pp_map *v = NULL;
    unsigned long base = getauxval(AT_SYSINFO_EHDR);

    u->vdso_fd = -1;
    if (!base || pp_maps_read(getpid(), &m) < 0)
        return;
    v = pp_maps_find(&m, base);
    if (v && strcmp(v->path, "[vdso]") == 0) {
        int fd = memfd_create("perfpy-vdso", MFD_CLOEXEC);
        size_t len = (size_t)(v->end - v->start);
        if (fd >= 0 && write(fd, (const void *)base, len) == (ssize_t)len) {
            u->vdso_fd = fd;
            snprintf(u->vdso_path, sizeof(u->vdso_path), "/proc/%d/fd/%d", getpid(), fd);
        } else if (fd >= 0) {
            close(fd);
        }
    }
    pp_maps_free(&m);
}

int pp_unwind_open(pp_unwinder **out)
{
    pp_unwinder *u = calloc(1, sizeof(*u));

    if (!u)
        return -ENOMEM;
    vdso_copy(u);
    pp__load_debuginfod_now(u->vdso_path);
    u->max_procs = MAX_PROCS;
    u->shared_max = SHARED_BYTES;
    *out = u;
    return 0;
}

void pp_unwind_limit(pp_unwinder *u, size_t procs)
{
    while (u->nprocs > procs)
        proc_free(u->procs[--u->nprocs]);
    u->max_procs = procs < 1 ? 1 : procs > MAX_PROCS ? MAX_PROCS : procs;
}

void pp_unwind_shared_limit(pp_unwinder *u, size_t bytes)
{
    u->shared_max = bytes;
    make_room(u, 0);
}

size_t pp_unwind_shared(const pp_unwinder *u, size_t *bytes)
{
    if (bytes)
        *bytes = u->shared_bytes;
    return u->nshared;
}

void pp_unwind_forget(pp_unwinder *u, int pid)
{
    for (size_t i = 0; i < u->nprocs; i++)
        if (u->procs[i]->pid == pid) {
            proc_free(u->procs[i]);
            u->procs[i] = u->procs[--u->nprocs];
            return;
        }
}

void pp_unwind_close(pp_unwinder *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->nprocs; i++)
        proc_free(u->procs[i]);
    for (size_t i = 0; i < u->nshared; i++)
        pp__modsyms_free(u->shared[i].s);
    if (u->vdso_fd >= 0)
        close(u->vdso_fd);
    free(u);
}
