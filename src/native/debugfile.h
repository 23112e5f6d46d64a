#ifndef PERFPY_NATIVE_DEBUGFILE_H
#define PERFPY_NATIVE_DEBUGFILE_H
/*
 * Separate debug files for the unwinder (debugfile.c): what libdwfl may
 * open, and when (pp__debug_file_there, plain C, is in unwind.h for its
 * test).
 */
#include <elfutils/libdwfl.h>

/* libdwfl's find_debuginfo callback: a lookup pp__no_debug_dwarf makes is
 * refused; without DEBUGINFOD_URLS, libdw's search runs only when a file
 * it would find is on the disk (no debuginfod client loaded). */
int pp__find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                       GElf_Addr base, const char *file_name, const char *debuglink,
                       GElf_Word crc, char **debuginfo_file_name);

/* A module without DWARF of its own: its DWARF asked for with the debug
 * file's lookup refused, so that libdw never reads a debug file's DWARF to
 * unwind (the failure is cached in the module); its symbols still come
 * from the debug file. */
void pp__no_debug_dwarf(Dwfl_Module *mod);

/* Where DEBUGINFOD_URLS names servers: the debuginfod client loaded now,
 * through a lookup for our own vDSO's copy (vdso_path, "" none), before
 * anything is recorded. */
void pp__load_debuginfod_now(const char *vdso_path);

#endif
