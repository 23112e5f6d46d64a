/*
 * Where sample mode's recorder, perfpy-sample, is; and when it is not
 * there, what its build lacked.
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
 * Debian's system pip.) A build without sample mode writes what it lacked
 * to <module directory>/sample-missing (the Makefile), one word a line.
 */
#include "cli.h"
#include "perfpy/engine.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
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

/* What the build lacked, as "clang, bpftool (Debian: apt-get install clang
 * bpftool)"; "" when it did not say. */
static void missing(const char *libdir, char *why, size_t cap)
{
    char path[PATH_MAX], line[64], words[256] = "", apt[256] = "";
    FILE *f;

    why[0] = '\0';
    if (!libdir || snprintf(path, sizeof(path), "%s/sample-missing", libdir) >=
                   (int)sizeof(path) || !(f = fopen(path, "r")))
        return;
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0])
            continue;
        snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s",
                 words[0] ? ", " : "", strcmp(line, "kernel-BTF") == 0 ?
                 "a kernel with BTF (/sys/kernel/btf/vmlinux)" : line);
        if (strcmp(line, "clang") == 0 || strcmp(line, "bpftool") == 0 ||
            strncmp(line, "lib", 3) == 0)
            snprintf(apt + strlen(apt), sizeof(apt) - strlen(apt), " %s", line);
    }
    fclose(f);
    if (words[0])
        snprintf(why, cap, "%s%s%s%s", words, apt[0] ? " (Debian: apt-get install" : "", apt,
                 apt[0] ? ")" : "");
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
    missing(libdir, why, why_cap);
    return -ENOENT;
}

void pp_sampler_absent(const char *path, const char *why, char *buf, size_t cap)
{
    if (why[0])
        snprintf(buf, cap, "sample mode is not in this perfpy: its build lacked %s; install "
                 "that, then build perfpy again (make, or pip install from the source)", why);
    else
        snprintf(buf, cap, "sample mode is not in this perfpy (%s is missing): building it "
                 "needs clang, bpftool, libbpf-dev and libdw-dev (scripts/deps.sh installs "
                 "them, then make)", path);
}
