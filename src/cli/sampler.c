/*
 * Where sample mode's recorder, perfpy-sample, is; when it is not there,
 * what its build lacked; what it can do here (sample: its BPF program
 * loads; read: this user may read the target's memory); and running it
 * with perfpy's request.
 *
 * Built from a clone (or installed by make install) it sits beside perfpy.
 * pip puts it elsewhere: the wheel carries it inside the perfpy package in
 * site-packages, because that is the one place auditwheel can vendor an
 * executable's libraries for (libbpf, libelf, libdw and theirs go to
 * site-packages/perfpy.libs/, and the recorder gets RPATH
 * $ORIGIN/../perfpy.libs; from <env>/bin or <env>/lib/perfpy no relative
 * path reaches site-packages, whose name has the Python version in it).
 * perfpy itself is <env>/bin/perfpy, so the recorder is looked for in the
 * site-packages beside it that hold this version's dist-info:
 *
 *   <env>/bin/perfpy
 *   <env>/lib/perfpy/                             the module directory
 *   <env>/lib/python3.X/site-packages/perfpy/perfpy-sample
 *   <env>/lib/python3.X/site-packages/perfpy.libs/libbpf-<hash>.so.1 ...
 *   <env>/lib/python3.X/site-packages/perfpy-<version>.dist-info
 *
 * (lib64 where the interpreter's platlibdir says so, dist-packages for
 * Debian's system pip.) A build without sample mode writes why, and what
 * to install, to <module directory>/sample-missing (the Makefile).
 */
#include "cli.h"
#include "perfpy/engine.h"
#include "report/spawn.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int exe_dir(char *buf, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
    char *slash;

    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if ((slash = strrchr(buf, '/')))
        *slash = '\0';
    return 0;
}

/* The recorder in the site-packages beside bindir that hold this version. */
static int in_site_packages(const char *bindir, char *path, size_t cap)
{
    char pattern[PATH_MAX + 128];
    glob_t g;
    int rc = -ENOENT;

    snprintf(pattern, sizeof(pattern), "%s/../lib{,64}/python3*/{site,dist}-packages/"
             "perfpy-" PERFPY_VERSION ".dist-info", bindir);
    if (glob(pattern, GLOB_BRACE | GLOB_NOSORT, NULL, &g) != 0)
        return -ENOENT;
    for (size_t i = 0; i < g.gl_pathc && rc != 0; i++) {
        char *slash = strrchr(g.gl_pathv[i], '/');

        if (snprintf(path, cap, "%.*s/perfpy/perfpy-sample", (int)(slash - g.gl_pathv[i]),
                     g.gl_pathv[i]) < (int)cap && access(path, X_OK) == 0)
            rc = 0;
    }
    globfree(&g);
    return rc;
}

/* The Makefile's sample-missing: the reason, then what to install, a line
 * each; joined by "; ". */
void pp_sampler_lacks(const char *libdir, char *why, size_t cap)
{
    char path[PATH_MAX], line[256];
    size_t n = 0;
    FILE *f;

    why[0] = '\0';
    if (!libdir || snprintf(path, sizeof(path), "%s/sample-missing", libdir) >=
                   (int)sizeof(path) || !(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), f) && n + 1 < cap) {
        line[strcspn(line, "\n")] = '\0';
        const char *text = line + strspn(line, " ");
        if (!text[0])
            continue;
        n += (size_t)snprintf(why + n, cap - n, "%s", n ? "; " : "");
        for (const char *c = text; *c && n + 1 < cap; c++)      /* spaces as one */
            if (*c != ' ' || (c[1] != ' ' && c[1]))
                why[n++] = *c;
        why[n < cap ? n : cap - 1] = '\0';
    }
    fclose(f);
}

int pp_sampler_find(const char *libdir, char *path, size_t cap, char *why, size_t why_cap)
{
    char bindir[PATH_MAX];

    why[0] = '\0';
    if (exe_dir(bindir, sizeof(bindir)) != 0) {
        snprintf(path, cap, "perfpy-sample");
        return -ENOENT;
    }
    if (snprintf(path, cap, "%s/perfpy-sample", bindir) < (int)cap && access(path, X_OK) == 0)
        return 0;
    if (in_site_packages(bindir, path, cap) == 0)
        return 0;
    snprintf(path, cap, "%s/perfpy-sample", bindir);
    pp_sampler_lacks(libdir, why, why_cap);
    return -ENOENT;
}

void pp_sampler_absent(const char *path, const char *why, char *buf, size_t cap)
{
    if (why[0])
        snprintf(buf, cap, "sample mode is not in this perfpy: %s. To have it, %sbuild perfpy "
                 "again from its source%s: pip install . (or make)", why,
                 strstr(why, "missing:") ? "install what is named, then " : "",
                 strstr(why, "PERFPY_NO_SAMPLE") ? ", without PERFPY_NO_SAMPLE" : "");
    else
        snprintf(buf, cap, "sample mode is not in this perfpy (%s is missing): build perfpy "
                 "again from its source (pip install ., or make), which names what to "
                 "install", path);
}

#define PP_KERNEL_BTF "/sys/kernel/btf/vmlinux"

int pp_sampler_check(const char *libdir, char *why, size_t cap)
{
    char helper[PATH_MAX + 16], lacked[512];
    char *argv[] = {helper, "--check", NULL};
    struct stat sb;
    int st = 0, rc;

    why[0] = '\0';
    if (pp_sampler_find(libdir, helper, sizeof(helper), lacked, sizeof(lacked)) != 0) {
        pp_sampler_absent(helper, lacked, why, cap);
        return -ENOENT;
    }
    rc = pp_capture(argv, 1, NULL, why, cap, &st);
    if (rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == PP_EXIT_NOT_BUILT) {
        pp_sampler_lacks(libdir, lacked, sizeof(lacked));
        pp_sampler_absent(helper, lacked, why, cap);
        return -ENOTSUP;
    }
    if (stat(PP_KERNEL_BTF, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size == 0) {
        snprintf(why, cap, "the kernel has no BTF (%s), which sample mode's BPF program "
                 "needs", PP_KERNEL_BTF);
        return -EPERM;
    }
    why[strcspn(why, "\n")] = '\0';
    if (rc < 0 || st != 0) {
        if (!why[0])
            snprintf(why, cap, "perfpy-sample failed");
        return -EPERM;
    }
    return 0;
}

int pp_sampler_can_read(pid_t pid)
{
    char buf[1];
    struct iovec local = {buf, 1}, remote = {NULL, 1};
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    int scope = 0;

    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (scope >= 3)
        return -EPERM;                 /* no process may read another, ever */
    /* address 0: the permission is checked first, then the read faults */
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0 && errno != EFAULT)
        return errno == ENOSYS ? -ENOSYS : -errno;
    return 0;
}

int pp_sampler_exec(const char *path, const pp_request *rq)
{
    char **argv;
    int rc = pp_request_argv(rq, path, &argv);

    if (rc != 0)
        return pp_fail("out of memory");
    fflush(stdout);
    fflush(stderr);
    execv(path, argv);
    rc = errno;
    pp_request_argv_free(argv);
    return pp_fail("cannot run %s: %s", path, strerror(rc));
}
