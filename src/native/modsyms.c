/*
 * Sorted function symbols of one module (see modsyms.h). Where several
 * symbols start at one address (aliases), one is kept: global before weak
 * before local, then one with a size, then the smallest name, so the
 * choice does not depend on the table's order.
 */
#include "modsyms.h"
#include "text.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct msym {
    uint64_t addr, size;   /* size 0: up to the next symbol, within `end` */
    uint64_t end;          /* the end of its section */
    const char *name;
    int rank;              /* lower is preferred */
} msym;

struct pp__modsyms {
    msym *v;               /* addresses relative to bias */
    size_t n;
    uint64_t bias;         /* the load bias of the module it was built from */
    char *names;           /* the names' own copies */
    size_t names_bytes;
};

/* The end of the code section holding sym (at addr, in the module's
 * addresses), or 0 when its section is not code (a label in data, such as
 * __init_array_start, must not "hold" the data after it). */
static uint64_t code_end(Elf *elf, GElf_Word shndx, const GElf_Sym *sym, GElf_Addr addr)
{
    GElf_Shdr shdr;
    Elf_Scn *scn = elf && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;

    if (!scn || !gelf_getshdr(scn, &shdr) || !(shdr.sh_flags & SHF_EXECINSTR))
        return 0;
    return shdr.sh_addr + shdr.sh_size + (addr - sym->st_value);
}

static int rank_of(const GElf_Sym *s)
{
    int bind = GELF_ST_BIND(s->st_info);
    int r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 2 : 4;

    return r + (s->st_size == 0);
}

static int cmp_sym(const void *a, const void *b)
{
    const msym *x = a, *y = b;

    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return strcmp(x->name, y->name);
}

/* The kept symbols' names copied into one block (the ELF data they point
 * into goes with the Dwfl), addresses made relative to the bias. */
static int own(pp__modsyms *s)
{
    size_t bytes = 0;
    char *at;

    for (size_t i = 0; i < s->n; i++)
        bytes += strlen(s->v[i].name) + 1;
    if (!(s->names = malloc(bytes ? bytes : 1)))
        return -1;
    s->names_bytes = bytes;
    if (s->n && (at = realloc(s->v, s->n * sizeof(*s->v))))
        s->v = (msym *)at;                  /* the aliases dropped: give back */
    at = s->names;
    for (size_t i = 0; i < s->n; i++) {
        size_t len = strlen(s->v[i].name) + 1;
        memcpy(at, s->v[i].name, len);
        s->v[i].name = at;
        at += len;
        s->v[i].addr -= s->bias;
        s->v[i].end -= s->bias;
    }
    return 0;
}

pp__modsyms *pp__modsyms_build(Dwfl_Module *mod)
{
    pp__modsyms *s = calloc(1, sizeof(*s));
    int total = dwfl_module_getsymtab(mod);
    size_t n = 0;
    GElf_Addr bias = 0;

    if (!s)
        return NULL;
    if (total <= 1 || !dwfl_module_getelf(mod, &bias))
        return s;
    s->bias = bias;
    s->v = malloc((size_t)total * sizeof(*s->v));
    if (!s->v) {
        free(s);
        return NULL;
    }
    for (int i = 1; i < total; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        GElf_Word shndx;
        Elf *elf;
        uint64_t end;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, NULL);
        int type = GELF_ST_TYPE(sym.st_info);

        if (!name || !name[0] || shndx == SHN_UNDEF ||
            (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
            !(end = code_end(elf, shndx, &sym, addr)))
            continue;
        s->v[n++] = (msym){addr, sym.st_size, end, name,
                           rank_of(&sym) + (type == STT_NOTYPE) * 8};
    }
    qsort(s->v, n, sizeof(*s->v), cmp_sym);
    s->n = 0;
    for (size_t i = 0; i < n; i++)           /* the preferred alias of each address */
        if (s->n == 0 || s->v[s->n - 1].addr != s->v[i].addr)
            s->v[s->n++] = s->v[i];
    if (own(s) != 0) {
        pp__modsyms_free(s);
        return NULL;
    }
    return s;
}

const char *pp__modsyms_find(const pp__modsyms *s, uint64_t pc, uint64_t *start)
{
    return pp__modsyms_find_at(s, s->bias, pc, start);
}

const char *pp__modsyms_find_at(const pp__modsyms *s, uint64_t bias, uint64_t pc,
                                uint64_t *start)
{
    size_t lo;

    pc -= bias;
    lo = pp__count_le(s->v, s->n, sizeof(*s->v), offsetof(msym, addr), pc);

    /* the nearest symbol at or below pc; a symbol nested in a larger one
     * that ended before pc hides the larger one (not seen in libc, this
     * binary or python: test_unwind compares every 61st byte with libdwfl) */
    if (lo > 0) {
        const msym *m = &s->v[lo - 1];
        if (m->size == 0 ? pc < m->end : pc - m->addr < m->size) {
            if (start)
                *start = m->addr + bias;
            return m->name;
        }
    }
    return NULL;
}

size_t pp__modsyms_bytes(const pp__modsyms *s)
{
    return sizeof(*s) + s->n * sizeof(*s->v) + s->names_bytes;
}

void pp__modsyms_free(pp__modsyms *s)
{
    if (s) {
        free(s->v);
        free(s->names);
        free(s);
    }
}
