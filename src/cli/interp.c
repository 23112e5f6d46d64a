/*
 * The interpreter probe (see interp.h): one Python snippet, one parser, one
 * decision of the mode.
 */
#include "interp.h"
#include "report/spawn.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MARK "perfpy-probe "

static const char probe_code[] =
    "import sys, sysconfig\n"
    "v = sys.version_info\n"
    "flags = ' '.join(str(sysconfig.get_config_var(k) or '') for k in "
    "('CFLAGS', 'PY_CFLAGS', 'PY_CFLAGS_NODIST', 'CONFIGURE_CFLAGS'))\n"
    "print('" MARK "' + sys.implementation.name, '%d.%d.%d' % v[:3], v[0], v[1],"
    " sysconfig.get_config_var('EXT_SUFFIX'), int('-fno-omit-frame-pointer' in flags),"
    " sys.executable)\n";

int pp_interp_parse(const char *text, pp_interp *info)
{
    const char *line = text;
    int used = 0;

    while (line && strncmp(line, MARK, strlen(MARK)) != 0) {
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    info->known = 0;
    if (!line || sscanf(line + strlen(MARK), "%31s %31s %d %d %63s %d %n", info->impl,
                        info->version, &info->major, &info->minor, info->ext_suffix,
                        &info->frame_pointers, &used) < 6)
        return -EPROTO;
    info->executable[0] = '\0';
    if (used)
        sscanf(line + strlen(MARK) + used, "%4095[^\n]", info->executable);
    info->cpython = strcmp(info->impl, "cpython") == 0;
    info->known = 1;
    return 0;
}

int pp_interp_probe(const char *exe, pp_interp *info, char *said, size_t cap)
{
    static const char *const unset[] = {"PYTHONPATH", "PYTHONSTARTUP", NULL};
    char *argv[] = {(char *)exe, "-S", "-c", (char *)probe_code, NULL};
    int status, rc;

    memset(info, 0, sizeof(*info));
    rc = pp_capture(argv, 1, unset, said, cap, &status);
    if (rc < 0)
        return rc;
    if (status != 0)
        return -ECHILD;
    rc = pp_interp_parse(said, info);
    if (rc == 0)
        snprintf(info->path, sizeof(info->path), "%s", exe);
    return rc;
}

/* For a script with a "#!" line, the Python it names (env resolved), or "". */
static void shebang_interpreter(const char *path, char *buf, size_t cap)
{
    char line[PATH_MAX], *p, *word;
    FILE *f = fopen(path, "r");

    buf[0] = '\0';
    if (!f)
        return;
    if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2) != 0) {
        fclose(f);
        return;
    }
    fclose(f);
    p = line + 2;
    p[strcspn(p, "\r\n")] = '\0';
    word = strtok(p, " \t");
    if (word && strcmp(word, "/usr/bin/env") == 0) {
        word = strtok(NULL, " \t");
        while (word && word[0] == '-')
            word = strtok(NULL, " \t");
        if (!word || pp_which(word, buf, cap) != 0)
            buf[0] = '\0';
    } else if (word) {
        snprintf(buf, cap, "%s", word);
    }
    /* Only a Python is asked the probe's questions: `sh -S -c <code>` and
     * the like would run the probe as a shell command. */
    p = strrchr(buf, '/');
    if (!strstr(p ? p + 1 : buf, "python"))
        buf[0] = '\0';
}

int pp_interp_of_program(const char *argv0, pp_interp *info)
{
    char exe[PATH_MAX], interp[PATH_MAX], said[4096];

    memset(info, 0, sizeof(*info));
    if (pp_which(argv0, exe, sizeof(exe)) != 0)
        return -ENOENT;
    if (pp_interp_probe(exe, info, said, sizeof(said)) == 0)
        return 0;
    shebang_interpreter(exe, interp, sizeof(interp));
    if (interp[0])
        pp_interp_probe(interp, info, said, sizeof(said));
    return 0;
}

const char *pp_interp_auto_mode(const pp_interp *info)
{
    return info->known && info->frame_pointers ? "perf" : "jit";
}

int pp_interp_module(const pp_interp *info, const char *libdir, char *buf, size_t cap)
{
    if ((size_t)snprintf(buf, cap, "%s/perfpy%s", libdir, info->ext_suffix) >= cap)
        return -ENAMETOOLONG;
    return access(buf, R_OK) == 0 ? 0 : -errno;
}
