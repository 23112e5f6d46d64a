/*
 * The interpreter probe (see interp.h): one Python snippet, one parser, one
 * decision of the mode.
 */
#include "interp.h"
#include "report/spawn.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MARK "perfpy-probe "

/* Python 2 answers too (no sys.implementation, print a statement), so that
 * an interpreter too old is named by its version, not taken for a program
 * that is no Python. */
static const char probe_code[] =
    "import sys, sysconfig, platform\n"
    "v = sys.version_info\n"
    "impl = getattr(sys, 'implementation', None)\n"
    "impl = impl.name if impl else platform.python_implementation().lower()\n"
    "flags = ' '.join(str(sysconfig.get_config_var(k) or '') for k in "
    "('CFLAGS', 'PY_CFLAGS', 'PY_CFLAGS_NODIST', 'CONFIGURE_CFLAGS'))\n"
    "sys.stdout.write(' '.join(str(x) for x in ('" MARK "' + impl, '%d.%d.%d' % v[:3],"
    " v[0], v[1], sysconfig.get_config_var('EXT_SUFFIX'),"
    " int('-fno-omit-frame-pointer' in flags), sys.executable)) + '\\n')\n";

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

/* Whether a file name says "Python": python, python3, python3.12,
 * python3.12d, pythonw... (pyenv's shims and venv launchers are named so). */
static int named_python(const char *path)
{
    const char *base = strrchr(path, '/');

    return strncmp(base ? base + 1 : path, "python", 6) == 0;
}

/* Whether an ELF executable is a Python interpreter without running it:
 * named python*, or carrying CPython's entry point Py_BytesMain among its
 * (dynamic) symbol names, as every CPython 3.8+ executable or embedding
 * launcher linked against libpython does. */
static int elf_is_python(const char *path)
{
    static const char want[] = "Py_BytesMain";
    char buf[65536 + sizeof(want)];
    size_t keep = 0, n;
    FILE *f = fopen(path, "rb");
    int found = 0;

    if (!f)
        return 0;
    if (named_python(path)) {
        fclose(f);
        return 1;
    }
    while (!found && (n = fread(buf + keep, 1, sizeof(buf) - keep, f)) > 0) {
        n += keep;
        found = memmem(buf, n, want, sizeof(want) - 1) != NULL;
        keep = n < sizeof(want) ? n : sizeof(want) - 1;
        memmove(buf, buf + n - keep, keep);
    }
    fclose(f);
    return found;
}

/* The GNU build id from one SHT_NOTE section's bytes, as hex, into hex
 * (2 * 20 + 1 bytes at least); 1 found, 0 not. */
static int build_id_note(const unsigned char *b, size_t n, char *hex, size_t cap)
{
    size_t at = 0;

    while (at + sizeof(Elf64_Nhdr) <= n) {
        Elf64_Nhdr nh;
        size_t name, desc;

        memcpy(&nh, b + at, sizeof(nh));
        at += sizeof(nh);
        name = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
        desc = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
        if (name > n - at || desc > n - at - name)
            return 0;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp(b + at, "GNU", 4) == 0 && nh.n_descsz * 2 + 1 <= cap && nh.n_descsz) {
            for (size_t i = 0; i < nh.n_descsz; i++)
                snprintf(hex + 2 * i, 3, "%02x", b[at + name + i]);
            return 1;
        }
        at += name + desc;
    }
    return 0;
}

int pp_elf_symbols(const char *path, char *build_id, size_t cap)
{
    Elf64_Ehdr eh;
    Elf64_Shdr sh;
    unsigned char note[1024];
    FILE *f = fopen(path, "rb");
    int found = 0;

    if (build_id && cap)
        build_id[0] = '\0';
    if (!f)
        return -errno;
    if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(sh)) {
        fclose(f);
        return -ENOEXEC;
    }
    for (unsigned i = 0; i < eh.e_shnum; i++) {
        if (fseek(f, (long)(eh.e_shoff + (uint64_t)i * sizeof(sh)), SEEK_SET) != 0 ||
            fread(&sh, sizeof(sh), 1, f) != 1)
            break;
        if (sh.sh_type == SHT_SYMTAB && sh.sh_size > 0)
            found = 1;
        if (sh.sh_type == SHT_NOTE && build_id && cap && !build_id[0] &&
            sh.sh_size <= sizeof(note) && fseek(f, (long)sh.sh_offset, SEEK_SET) == 0 &&
            fread(note, 1, sh.sh_size, f) == sh.sh_size)
            build_id_note(note, sh.sh_size, build_id, cap);
    }
    fclose(f);
    return found;
}

enum kind { K_OTHER, K_ELF, K_SCRIPT };

static enum kind kind_of(const char *path, char *line, size_t cap)
{
    FILE *f = fopen(path, "rb");
    enum kind k = K_OTHER;

    line[0] = '\0';
    if (!f)
        return K_OTHER;
    if (fgets(line, (int)cap, f)) {
        if (strncmp(line, "\177ELF", 4) == 0)
            k = K_ELF;
        else if (strncmp(line, "#!", 2) == 0)
            k = K_SCRIPT;
    }
    fclose(f);
    return k;
}

/* For a "#!" line, the interpreter it names (env and env -S resolved on
 * PATH) into buf, or "". */
static void shebang_interpreter(char *line, char *buf, size_t cap)
{
    char *word, *save = NULL;

    buf[0] = '\0';
    line += 2;
    line[strcspn(line, "\r\n")] = '\0';
    word = strtok_r(line, " \t", &save);
    if (word && strcmp(strrchr(word, '/') ? strrchr(word, '/') + 1 : word, "env") == 0) {
        word = strtok_r(NULL, " \t", &save);
        while (word && (word[0] == '-' || strchr(word, '=')))  /* -S, -i, VAR=value */
            word = strtok_r(NULL, " \t", &save);
        if (!word || pp_which(word, buf, cap) != 0)
            buf[0] = '\0';
    } else if (word) {
        snprintf(buf, cap, "%s", word);
    }
}

/* The interpreter the program runs in, found without running the program:
 * a Python executable itself (ELF, by name or entry point), a launcher
 * named python* (pyenv's shims, venv scripts: they run Python, not user
 * code), or the Python a "#!" line names. Anything else (a shell script,
 * make, a C program) is not asked anything: it runs once, under perf, and
 * every CPython it starts has the engine. "" when none. */
static void python_of(const char *exe, char *buf, size_t cap)
{
    char line[PATH_MAX], interp[PATH_MAX];
    enum kind k = kind_of(exe, line, sizeof(line));

    buf[0] = '\0';
    if ((k == K_ELF && elf_is_python(exe)) || (k == K_SCRIPT && named_python(exe))) {
        snprintf(buf, cap, "%s", exe);
        return;
    }
    if (k != K_SCRIPT)
        return;
    shebang_interpreter(line, interp, sizeof(interp));
    if (interp[0] && named_python(interp))
        snprintf(buf, cap, "%s", interp);
}

int pp_interp_of_program(const char *argv0, pp_interp *info)
{
    char exe[PATH_MAX], python[PATH_MAX], said[4096];

    memset(info, 0, sizeof(*info));
    if (pp_which(argv0, exe, sizeof(exe)) != 0)
        return -ENOENT;
    python_of(exe, python, sizeof(python));
    if (python[0])
        pp_interp_probe(python, info, said, sizeof(said));
    info->by_shebang = python[0] && strcmp(python, exe) != 0;
    return 0;
}

int pp_interp_supported(const pp_interp *info, char *why, size_t cap)
{
    if (!info->cpython)
        snprintf(why, cap, "%s is %s %s, not CPython: perfpy needs CPython 3.8 or newer",
                 info->path, info->impl, info->version);
    else if (info->major < 3 || (info->major == 3 && info->minor < 8))
        snprintf(why, cap, "CPython %d.%d is not supported: perfpy needs CPython 3.8 or "
                 "newer (%s is %s)", info->major, info->minor, info->path, info->version);
    else
        return 1;
    return 0;
}

pp_mode pp_interp_auto_mode(const pp_interp *info)
{
    return info->known && info->frame_pointers ? PP_MODE_PERF : PP_MODE_JIT;
}

int pp_interp_module(const pp_interp *info, const char *libdir, char *buf, size_t cap)
{
    if ((size_t)snprintf(buf, cap, "%s/perfpy%s", libdir, info->ext_suffix) >= cap)
        return -ENAMETOOLONG;
    return access(buf, R_OK) == 0 ? 0 : -errno;
}
