/*
 * perfpy doctor [-- PYTHON]
 *
 * Checks, before a recording, everything `perfpy record` needs, and prints
 * each problem with its fix. Exit status 0: recording will work; 1: it will
 * not (a line marked "FAIL" says why); warnings ("warn") do not fail.
 *
 *   perf        on PATH; its version; built with DWARF unwinding; may record
 *               (an actual `perf record` of /bin/true, with the flags jit mode
 *               uses: -k 1, --call-graph dwarf); kernel frames permitted;
 *               hardware counters (information only)
 *   system      kernel.perf_event_paranoid; kernel.kptr_restrict
 *   files       /tmp (perf maps) and the dump directory: writable, and a
 *               file there can be mapped executable (jitdump needs it)
 *   python      the interpreter (default: python3 on PATH): CPython 3.8+,
 *               frame pointers (which mode auto picks), perfpy's module for it
 *   sample mode perfpy-sample built beside perfpy, and its BPF program loads
 *               and attaches here (root or CAP_BPF + CAP_PERFMON, a kernel
 *               with BPF and BTF): asked of perfpy-sample --check. A warning
 *               only: the trampoline modes do not need it
 */
#include "cli.h"
#include "help.h"
#include "interp.h"
#include "mode.h"
#include "options.h"
#include "places.h"
#include "record.h"
#include "report/perf_probe.h"
#include "report/perf_run.h"
#include "report/spawn.h"
#include "output/output.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct doctor {
    int fails, warns;
    /* perf's own problems: FAIL, or warn where perfpy-sample is there
     * (sample and read modes record without perf; the hook modes, -f perf
     * and perf's tools need it) */
    const char *perf_level;
} doctor;

static void say(doctor *d, const char *level, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(doctor *d, const char *level, const char *what, const char *fmt, ...)
{
    va_list ap;

    if (strcmp(level, "FAIL") == 0)
        d->fails++;
    else if (strcmp(level, "warn") == 0)
        d->warns++;
    printf("%-4s  %-22s ", level, what);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static const char *const help[] = {
    "usage: perfpy doctor [--dir DIR] [-- PYTHON]",
    "",
    "Check that `perfpy record` will work here: perf (installed, version,",
    "permitted, DWARF unwinding), kernel settings, /tmp and the dump directory,",
    "the Python interpreter (supported version, frame pointers, perfpy's",
    "module), and whether sample mode can sample here (BPF, privileges). Each",
    "problem is printed with its fix.",
    "",
    "options:",
    "  --dir DIR     the jitdump directory to check (default: $PERFPY_JITDUMP_DIR,",
    "                else /tmp)",
    "  -h, --help    this help",
    "  -- PYTHON     the interpreter to check (default: python3 on PATH)",
    "",
    "environment:",
    "  PERF          the perf executable (default: perf on PATH)",
    "",
    "exit status: 0 if recording will work, 1 if not, 2 usage error",
    NULL,
};

static int read_int_file(const char *path, int *v)
{
    FILE *f = fopen(path, "r");
    int ok;

    if (!f)
        return -1;
    ok = fscanf(f, "%d", v) == 1;
    fclose(f);
    return ok ? 0 : -1;
}

/* argv's output (stdout and stderr) into out; its wait status, or -1 when
 * it could not start. */
static int capture(char *const argv[], char *out, size_t cap)
{
    int st;

    return pp_capture(argv, 1, NULL, out, cap, &st) < 0 ? -1 : st;
}

static void first_line(char *s)
{
    s[strcspn(s, "\n")] = '\0';
}

/* ---- perf ---------------------------------------------------------------- */

static void check_perf(doctor *d, char *perf, size_t cap, int *usable)
{
    char out[8192], tmp[] = "/tmp/perfpy-doctor-XXXXXX", data[64];
    const char *env = getenv("PERF"), *want = env && *env ? env : "perf";
    char *version[] = {(char *)want, "version", NULL};
    int st;

    *usable = 0;
    st = capture(version, out, sizeof(out));
    if (st == -1 || (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !out[0]) ||
        pp_perf_find(NULL, perf, cap, NULL) < 0) {
        if (strcmp(want, "perf") != 0)
            say(d, d->perf_level, "perf", "PERF=%s is not an executable: point PERF at perf, or "
                "unset it to use perf from PATH", want);
        else
            say(d, d->perf_level, "perf", "not found on PATH: install it (Debian: apt-get "
                "install linux-perf; Ubuntu: apt-get install linux-tools-$(uname -r)), "
                "or set PERF=/path/to/perf%s", d->perf_level[0] == 'w' ? " (the hook modes "
                "and -f perf need it; sample and read modes do not)" : "");
        return;
    }
    first_line(out);
    if (st != 0) {
        say(d, d->perf_level, "perf", "%s does not run (%s): reinstall linux-perf", perf, out);
        return;
    }
    say(d, "ok", "perf", "%s (%s)", perf, out);
    switch (pp_perf_unwinder(perf)) {
    case PP_UNWIND_LIBUNWIND:
        say(d, "ok", "perf DWARF unwinding", "libunwind: jit mode gives whole Python stacks "
            "(dumps anywhere); perf-map mode without frame pointers names the innermost "
            "Python function only");
        break;
    case PP_UNWIND_LIBDW:
        say(d, "ok", "perf DWARF unwinding", "libdw: jit mode gives whole Python stacks "
            "(its dumps must be in /tmp, where `perfpy record` puts them); perf-map mode "
            "names Python functions only with frame-pointer call graphs (an interpreter "
            "built with frame pointers)");
        break;
    default:
        say(d, d->perf_level, "perf DWARF unwinding", "this perf was built without "
            "libdw/libunwind: "
            "jit mode cannot unwind; install a distribution perf (apt-get install linux-perf)");
    }
    if (!mkdtemp(tmp)) {
        say(d, d->perf_level, "perf record", "cannot make a temporary directory in /tmp: %s",
            strerror(errno));
        return;
    }
    snprintf(data, sizeof(data), "%s/p.data", tmp);
    {
        /* -B: no build ids collected, so nothing copied into ~/.debug */
        char *rec[] = {perf, "record", "-q", "--no-bpf-event", "-B", "-k", "1", "-e", "cpu-clock",
                       "--call-graph", "dwarf,4096", "-o", data, "--", "true", NULL};
        st = capture(rec, out, sizeof(out));
    }
    unlink(data);
    if (st == 0) {
        say(d, "ok", "perf record", "permitted (cpu-clock, -k 1, --call-graph dwarf)");
        *usable = 1;
    } else if (pp_perf_refused(out)) {
        char advice[1024];
        pp_perf_refused_advice(advice, sizeof(advice));
        say(d, d->perf_level, "perf record", "not permitted: %s", advice);
    } else {
        char *p = out;
        while (*p == '\n' || strncmp(p, "Error:\n", 7) == 0)
            p += *p == '\n' ? 1 : 7;
        first_line(p);
        say(d, d->perf_level, "perf record", "fails: %s", *p ? p : "(no message)");
    }
    if (*usable) {
        char *kern[] = {perf, "record", "-q", "--no-bpf-event", "-B", "-e", "cpu-clock:k", "-o",
                        data, "--", "true", NULL};
        st = capture(kern, out, sizeof(out));
        unlink(data);
        if (st == 0)
            say(d, "ok", "kernel frames", "permitted (kernel functions appear in stacks)");
        else
            say(d, "warn", "kernel frames", "not permitted for this user: profiles show "
                "user space only (recording works); to see the kernel too, run as root or "
                "`sudo sysctl kernel.perf_event_paranoid=1`");
    }
    rmdir(tmp);
    {
        char *hw[] = {perf, "stat", "-x,", "-e", "cycles:u", "true", NULL};
        st = capture(hw, out, sizeof(out));
        if (st == 0 && !strstr(out, "not supported") && !strstr(out, "<not"))
            say(d, "ok", "hardware counters", "available");
        else
            say(d, "info", "hardware counters", "not available (a VM?): perfpy samples "
                "with cpu-clock, which works everywhere");
    }
}

/* ---- system and files ---------------------------------------------------- */

static void check_system(doctor *d)
{
    int v;

    if (read_int_file("/proc/sys/kernel/perf_event_paranoid", &v) == 0)
        say(d, "info", "perf_event_paranoid", "%d: %s%s", v,
            v <= -1 ? "no restriction" :
            v == 0 ? "users may profile kernel and CPU-wide" :
            v == 1 ? "users may profile their processes, kernel included" :
            v == 2 ? "users may profile their processes, user space only" :
                     "users may not use perf at all (only root)",
            geteuid() == 0 ? " (root is not limited by it outside a container)" : "");
    if (read_int_file("/proc/sys/kernel/kptr_restrict", &v) == 0 && v > 0 && geteuid() != 0)
        say(d, "info", "kptr_restrict", "%d: kernel symbols are hidden from this user "
            "(kernel frames show as addresses)", v);
}

/* A directory where the engine must create files; exec: a file there must
 * map PROT_EXEC (the jitdump's mmap is what tells perf about it). */
static void check_dir(doctor *d, const char *what, const char *dir, int exec)
{
    struct stat st;
    int err;

    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        say(d, "FAIL", what, "%s does not exist: create it (mkdir -p %s) or set "
            "PERFPY_JITDUMP_DIR to a directory that does", dir, dir);
        return;
    }
    switch (pp_places_check(dir, exec, &err)) {
    case PP_DIR_NO_CREATE:
        say(d, "FAIL", what, "cannot create files in %s (%s): make it writable, or set "
            "PERFPY_JITDUMP_DIR to a writable directory", dir, strerror(err));
        break;
    case PP_DIR_NO_WRITE:
        say(d, "FAIL", what, "cannot write to %s (%s): is the disk full?", dir, strerror(err));
        break;
    case PP_DIR_NO_EXEC:
        say(d, "FAIL", what, "%s is mounted noexec (mmap PROT_EXEC: %s): jit mode "
            "cannot announce its dump to perf; set PERFPY_JITDUMP_DIR to a directory "
            "on an exec filesystem", dir, strerror(err));
        break;
    default:
        say(d, "ok", what, "%s is writable%s", dir, exec ? " and exec-mappable" : "");
    }
}

/* ---- sample mode --------------------------------------------------------- */

static void check_sample(doctor *d)
{
    char libdir[PATH_MAX], out[PATH_MAX + 1024];
    int rc;

    if (pp_find_libdir_quiet(libdir, sizeof(libdir)) != 0)
        libdir[0] = '\0';
    rc = pp_sampler_check(libdir[0] ? libdir : NULL, out, sizeof(out));
    if (rc == -ENOENT || rc == -ENOTSUP) {
        say(d, "warn", "sample mode", "%s; until then %sthe trampoline modes work", out,
            rc == -ENOTSUP ? "read mode and " : "");
        return;
    }
    if (rc == 0)
        say(d, "ok", "sample mode", "%s", out);
    else
        say(d, "warn", "sample mode", "cannot sample here (%s): --mode sample needs root, "
            "or the capabilities CAP_BPF and CAP_PERFMON, and a kernel with BPF and BTF; "
            "the trampoline modes work without them", out[0] ? out : "perfpy-sample failed");
}

/* ---- the interpreter --------------------------------------------------------- */

/* A stripped interpreter keeps only its exported functions' names: perf
 * shows its internals as unnamed frames of its file ("[python3.11]"), which
 * perfpy drops between Python frames but cannot name below them, unless
 * its detached debug symbols are installed where perf looks (by build id).
 * Debian's python3.X-dbg of the interpreter's own version carries them
 * (seen in the sid world: perf names every interpreter frame there). */
static void check_symbols(doctor *d, const char *exe, const pp_interp *in)
{
    char real[PATH_MAX], id[64], debug[128];
    const char *base;
    int rc;

    if (!realpath(exe, real))
        snprintf(real, sizeof(real), "%s", exe);
    base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    rc = pp_elf_symbols(real, id, sizeof(id));
    if (rc < 0)
        return;
    if (id[0])
        snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
    else
        snprintf(debug, sizeof(debug), "build id to find debug symbols by");
    if (rc == 1)
        say(d, "ok", "symbols", "%s keeps its symbol table: perf names its C functions", real);
    else if (id[0] && access(debug, R_OK) == 0)
        say(d, "ok", "symbols", "%s is stripped, and its debug symbols are installed (%s)",
            real, debug);
    else
        say(d, "warn", "symbols", "%s is stripped (no .symtab, no %s): perf names only its "
            "exported functions, and time in its internals reads as unnamed frames of the "
            "interpreter ('[%s]'). For names: install its debug symbols (Debian: "
            "python%d.%d-dbg of the same version as the interpreter), or profile with an "
            "interpreter that keeps its symbols (pyenv's builds do)", real, debug, base,
            in->major, in->minor);
}

static void check_python(doctor *d, const char *python)
{
    pp_interp in;
    char out[4096], libdir[PATH_MAX], module[PATH_MAX + 80], where[PATH_MAX + 8] = "";
    int rc = pp_interp_probe(python, &in, out, sizeof(out));

    if (rc < 0 && rc != -EPROTO) {
        first_line(out);
        say(d, "FAIL", "python", "cannot run %s (%s): give the interpreter to check, "
            "`perfpy doctor -- /path/to/python`", python, rc != -ECHILD || !out[0] ?
            "not found" : out);
        return;
    }
    if (rc < 0) {
        say(d, "FAIL", "python", "%s did not answer as a Python interpreter", python);
        return;
    }
    if (!pp_interp_supported(&in, out, sizeof(out))) {
        say(d, "FAIL", "python", "%s", out);
        return;
    }
    if (in.executable[0] && strcmp(in.executable, python) != 0)
        snprintf(where, sizeof(where), " (%s)", in.executable);
    say(d, in.minor > 15 ? "warn" : "ok", "python", "%s%s is CPython %s%s", python, where,
        in.version, in.minor > 15 ? " (newer than 3.15: untested)" : "");
    check_symbols(d, in.executable[0] ? in.executable : python, &in);
    say(d, "info", "frame pointers", pp_interp_auto_mode(&in) == PP_MODE_PERF ?
        "kept: the hook modes (perfpy run, record --mode hook) use perf-map mode with "
        "frame-pointer stacks" :
        "omitted: the hook modes (perfpy run, record --mode hook) use jit mode (jitdump + "
        "DWARF unwinding) for whole stacks");
    fflush(stdout);
    if (pp_find_libdir(libdir, sizeof(libdir)) < 0) {
        say(d, "FAIL", "perfpy module", "perfpy's module directory is missing (see above)");
        return;
    }
    if (pp_interp_module(&in, libdir, module, sizeof(module)) == 0)
        say(d, "ok", "perfpy module", "%s", module);
    else
        say(d, "FAIL", "perfpy module", "no build for Python %d.%d (%s is missing): in "
            "perfpy's source tree run `make PYTHONS=%s` (it needs that Python's headers: "
            "Debian package python%d.%d-dev)", in.major, in.minor, module, python, in.major,
            in.minor);
}

/* Which mode each kind of run gets here, and why: record's own choice
 * (mode.c), asked for a program of PYTHON, for a process of this user
 * started without perfpy (this one stands for it), and for a run that
 * needs perf's recording. */
static void check_modes(doctor *d, const char *python)
{
    pp_interp in;
    pp_record_opts o;
    pp_mode_choice c;
    char out[4096], libdir[PATH_MAX], *argv[] = {(char *)python, NULL};
    pp_mode_ask a = {.asked = PP_MODE_AUTO, .argv = argv, .interp = &in};

    if (pp_interp_probe(python, &in, out, sizeof(out)) != 0)
        memset(&in, 0, sizeof(in));
    a.libdir = pp_find_libdir_quiet(libdir, sizeof(libdir)) == 0 ? libdir : NULL;
    pp_mode_resolve(&a, &c);
    say(d, "info", "mode: record -- PYTHON", "%s", c.why);
    a.argv = NULL;
    a.pid = getpid();
    a.engine = PP_ENGINE_UNASKED;
    pp_mode_resolve(&a, &c);
    say(d, "info", "mode: record -p PID", "%s", c.why);
    memset(&o, 0, sizeof(o));
    o.format = pp_format_find("perf");
    a.argv = argv;
    a.pid = 0;
    a.perf_only = pp__record_perf_only(&o);
    pp_mode_resolve(&a, &c);
    say(d, "info", "mode: run, record -f perf", "%s", c.why);
}

static int doctor_option(int c, void *opts, pp_usage *u)
{
    pp_doctor_opts *o = opts;

    (void)u;
    if (c == 'd')
        o->dir = optarg;
    return PP_PARSED_RUN;
}

int pp_doctor_parse(int argc, char **argv, pp_doctor_opts *o, pp_usage *u)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int rc;

    o->dir = NULL;
    o->python = "python3";
    if ((rc = pp_getopt_each(argc, argv, "+:h", opts, doctor_option, o, u)) != PP_PARSED_RUN)
        return rc;
    if (optind < argc)
        o->python = argv[optind];
    return PP_PARSED_RUN;
}

int pp_cmd_doctor(int argc, char **argv)
{
    pp_doctor_opts o;
    pp_usage u;
    const char *dumpdir, *python;
    char perf[PATH_MAX];
    doctor d = {0, 0, "FAIL"};
    char libdir[PATH_MAX], sampler[PATH_MAX + 16], why[512];
    int usable, rc;

    if ((rc = pp_parsed("doctor", pp_doctor_parse(argc, argv, &o, &u), &u, help)) >= 0)
        return rc;
    dumpdir = o.dir ? o.dir : getenv("PERFPY_JITDUMP_DIR");
    python = o.python;
    if (!dumpdir || !*dumpdir)
        dumpdir = "/tmp";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pp_find_libdir_quiet(libdir, sizeof(libdir)) != 0)
        libdir[0] = '\0';
    if (pp_sampler_find(libdir[0] ? libdir : NULL, sampler, sizeof(sampler), why,
                        sizeof(why)) == 0)
        d.perf_level = "warn";
    check_perf(&d, perf, sizeof(perf), &usable);
    check_system(&d);
    check_dir(&d, "perf map directory", "/tmp", 0);
    check_dir(&d, "jitdump directory", dumpdir, 1);
    check_python(&d, python);
    check_sample(&d);
    check_modes(&d, python);
    printf("\n%s: %d problem%s, %d warning%s\n",
           d.fails ? "recording will not work" : "recording will work",
           d.fails, d.fails == 1 ? "" : "s", d.warns, d.warns == 1 ? "" : "s");
    if (pp_close_stdout() != 0)
        return PP_EXIT_FAIL;
    return d.fails ? PP_EXIT_FAIL : PP_EXIT_OK;
}
