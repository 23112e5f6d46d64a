/*
 * A module's function symbols sorted by address, for unwind.c: libdwfl's
 * dwfl_module_addrinfo scans the whole symbol table on every call
 * (milliseconds a call with a full .symtab), and a profile names thousands of
 * distinct addresses. Built once per module from the same table libdwfl
 * uses (dwfl_module_getsym_info: .symtab, a separate debug file's, or
 * MiniDebugInfo), searched by bisection. Needs libdw: built with unwind.c.
 */
#ifndef PERFPY_NATIVE_MODSYMS_H
#define PERFPY_NATIVE_MODSYMS_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

typedef struct pp__modsyms pp__modsyms;

/* The index of mod's symbols; NULL without memory (callers fall back to
 * dwfl_module_addrinfo). A module without symbols gives an empty index.
 * It keeps its own copy of the names and addresses relative to the
 * module's load bias: it outlives the Dwfl, and serves every process that
 * maps the same file (unwind.c shares it by build-id: a host runs the
 * same libpython in many processes). */
pp__modsyms *pp__modsyms_build(Dwfl_Module *mod);
/* The name of the function whose range holds pc (a symbol without a size
 * holds everything up to the next one), or NULL; *start (when not NULL)
 * gets its address. pc is in the addresses of the module it was built
 * from; _at: of a module of the same file loaded at bias. */
const char *pp__modsyms_find(const pp__modsyms *s, uint64_t pc, uint64_t *start);
const char *pp__modsyms_find_at(const pp__modsyms *s, uint64_t bias, uint64_t pc,
                                uint64_t *start);
/* The memory it holds, in bytes. */
size_t pp__modsyms_bytes(const pp__modsyms *s);
void pp__modsyms_free(pp__modsyms *s);

#endif
