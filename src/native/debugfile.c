/*
 * The unwinder's separate debug files (unwind.c): libdw reads their
 * symbols, never their DWARF to unwind, and loads no debuginfod client
 * unless DEBUGINFOD_URLS names servers. Each rule below says what it cost
 * in a recording before.
 */
#include "debugfile.h"
#include "unwind.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- separate debug files: symbols, never DWARF ---------------------------- */

/* A module's user data while pp__no_debug_dwarf asks libdwfl for its DWARF
 * (afterwards: its symbol index, syms_of). */
static char refusing;

static int has_section(Elf *elf, const char *name)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;

    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;

        if (n && strcmp(n, name) == 0)
            return 1;
    }
    return 0;
}

/* libdw unwinds with a module's .eh_frame; at a pc it does not cover (a
 * process's first instruction, _start; a new thread's, in clone3 after the
 * system call; _init and _fini) it tries the module's DWARF CFI
 * (.debug_frame), then frame pointers. For a file without DWARF of its own
 * that means its separate debug file: libc6-dbg's is opened and all its
 * DWARF read and decompressed (dwarf_begin_elf: libz's inflate under
 * elf_compress), 180-305 ms for libc, 27-34 ms for ld.so here, in the
 * middle of a recording while the ring buffer fills (the first sample of
 * gil_threads.py's new thread at clone3: 91-273 samples lost at 1999 Hz;
 * 2 threads, 16 MiB, 75 ms of records). Debian's debug files hold no
 * .debug_frame (readelf -S: libc6-dbg 2.36 and sid's 2.43), so the load
 * found nothing to unwind with. Here libdwfl is asked for the DWARF of such
 * a module before anything opens the debug file, the lookup refused:
 * find_dw caches the failure in the module (dwfl_module_getdwarf.c,
 * elfutils 0.188 to 0.196), and the fall back goes straight to frame
 * pointers. The symbol table's own lookup still finds the debug file. */
void pp__no_debug_dwarf(Dwfl_Module *mod)
{
    void **userdata;
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);

    if (!elf || has_section(elf, ".debug_info") || has_section(elf, ".debug_frame") ||
        !dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) || *userdata)
        return;
    *userdata = &refusing;
    (void)dwfl_module_getdwarf(mod, &bias);
    *userdata = NULL;
}

/* libdw's search for a module's separate debug file without its last
 * step in elfutils 0.188: when nothing is found on the disk it dlopens a
 * debuginfod client (libcurl, gnutls, krb5 and more: 30 libraries, 7 ms
 * of a 16 ms perfpy dump here) that asks only the servers DEBUGINFOD_URLS
 * names. Where it names some, libdw's search runs whole; else only when a
 * file it would find is there: by build-id first (libdw's own call), then
 * by name in the places of the search path, as libdw tries them (the
 * default one, and a container's: ":.debug:/proc/PID/root/usr/lib/debug",
 * begin). A lookup pp__no_debug_dwarf makes is refused. */
int pp__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                          GElf_Addr base, const char *file_name, const char *debuglink,
                          GElf_Word crc, char **debuginfo_file_name)
{
    const char *urls = getenv("DEBUGINFOD_URLS");
    char made[4096], root[64];
    int fd, pid = 0, made_up = 0;
    const char *name = debuglink;

    if (*userdata == &refusing)
        return -1;
    if (urls && *urls)
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
                                            crc, debuginfo_file_name);
    errno = 0;
    fd = dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name, debuglink, crc,
                                      debuginfo_file_name);
    if (fd >= 0 || errno != 0 || !file_name)
        return fd >= 0 || !file_name ? fd
            : dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
                                           crc, debuginfo_file_name);
    if (!name) {
        const char *b = strrchr(file_name, '/') ? strrchr(file_name, '/') + 1 : file_name;

        snprintf(made, sizeof(made), "%s.debug", b);
        name = made;
        made_up = 1;
    }
    if (sscanf(file_name, "/proc/%d/root/", &pid) == 1)
        snprintf(root, sizeof(root), ":.debug:/proc/%d/root/usr/lib/debug", pid);
    if (pp__debug_file_there(":.debug:/usr/lib/debug", file_name, name, made_up) ||
        (pid > 0 && pp__debug_file_there(root, file_name, name, made_up)))
        return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink,
                                            crc, debuginfo_file_name);
    errno = 0;
    return -1;
}

/* The first module without a debug file found on disk (the vDSO's, in
 * the first sample through clock_gettime: Python's time()) makes
 * dwfl_standard_find_debuginfo load its debuginfod client (dlopen of
 * libdebuginfod and some 25 libraries under it: libcurl, gnutls,
 * kerberos), 16-84 ms here in the middle of a recording, where the ring
 * buffer holds 75 ms of records at 1999 Hz (5-239 samples lost in 3 of
 * 40 runs of test_wall's ring test). It is looked for once here, before
 * there is anything to record: for our own vDSO, whose copy every process's
 * module is. Only where DEBUGINFOD_URLS names servers: else find_debuginfo
 * never loads the client. */
void pp__load_debuginfod_now(const char *vdso_path)
{
    static char *path;
    static const Dwfl_Callbacks cb = {
        .find_elf = dwfl_build_id_find_elf,
        .find_debuginfo = dwfl_standard_find_debuginfo,
        .debuginfo_path = &path,
    };
    Dwfl *d;
    Dwfl_Module *mod;

    if (!vdso_path[0] || !getenv("DEBUGINFOD_URLS") || !*getenv("DEBUGINFOD_URLS") ||
        !(d = dwfl_begin(&cb)))
        return;
    dwfl_report_begin(d);
    mod = dwfl_report_elf(d, "[vdso]", vdso_path, -1, 0, false);
    dwfl_report_end(d, NULL, NULL);
    if (mod)
        (void)dwfl_module_getsymtab(mod);
    dwfl_end(d);
}
