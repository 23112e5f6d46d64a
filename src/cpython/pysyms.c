/*
 * A running CPython's symbols, sections and types in the ELF files it maps
 * (see pysyms.h).
 */
#include "pysyms.h"
#include "refuse.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- ELF symbols ---------------------------------------------------------- */

/* Symbol `name` in elf's .dynsym, else .symtab: 0 and *sym, or -ENOENT. */
static int find_symbol(Elf *elf, const char *name, GElf_Sym *sym)
{
    for (int want = SHT_DYNSYM; ; want = SHT_SYMTAB) {
        Elf_Scn *scn = NULL;
        GElf_Shdr sh;

        while ((scn = elf_nextscn(elf, scn)) != NULL) {
            Elf_Data *data;

            if (!gelf_getshdr(scn, &sh) || sh.sh_type != (GElf_Word)want || !sh.sh_entsize ||
                !(data = elf_getdata(scn, NULL)))
                continue;
            for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                const char *s;

                if (gelf_getsym(data, (int)i, sym) && sym->st_shndx != SHN_UNDEF &&
                    (s = elf_strptr(elf, sh.sh_link, sym->st_name)) && strcmp(s, name) == 0)
                    return 0;
            }
        }
        if (want == SHT_SYMTAB)
            return -ENOENT;
    }
}

static Elf *open_elf(const char *path, int *fd)
{
    Elf *elf;

    elf_version(EV_CURRENT);
    if ((*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return NULL;
    if (!(elf = elf_begin(*fd, ELF_C_READ, NULL)) || elf_kind(elf) != ELF_K_ELF) {
        if (elf)
            elf_end(elf);
        close(*fd);
        return NULL;
    }
    return elf;
}

int pp_pyoffsets_read(const char *module_path, pp_py_offsets *out)
{
    int fd, rc = -ENOENT;
    Elf *elf = open_elf(module_path, &fd);
    GElf_Sym sym;
    Elf_Scn *scn;
    GElf_Shdr sh;
    Elf_Data *data;

    if (!elf)
        return -ENOENT;
    if (find_symbol(elf, PP_PY_OFFSETS_SYMBOL, &sym) == 0 &&
        (scn = elf_getscn(elf, sym.st_shndx)) && gelf_getshdr(scn, &sh) &&
        sh.sh_type == SHT_PROGBITS && (data = elf_getdata(scn, NULL)) &&
        sym.st_value >= sh.sh_addr && sym.st_size == sizeof(*out) &&
        sym.st_value - sh.sh_addr + sizeof(*out) <= data->d_size) {
        memcpy(out, (const char *)data->d_buf + (sym.st_value - sh.sh_addr), sizeof(*out));
        rc = out->magic == PP_PY_OFFSETS_MAGIC && out->size == sizeof(*out) ? 0 : -EINVAL;
    }
    elf_end(elf);
    close(fd);
    return rc;
}

/* The address of elf's first loadable segment's page: what its load bias
 * is measured from. UINT64_MAX: none. */
static uint64_t first_vaddr(Elf *elf)
{
    size_t n;
    GElf_Phdr ph;
    uint64_t vaddr = UINT64_MAX;

    if (elf_getphdrnum(elf, &n) != 0)
        return UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < vaddr)
            vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
    return vaddr;
}

/* The load bias of the file mapped at path: where its first loadable
 * segment's page (vaddr) went, minus vaddr. */
static int bias_of(const pp_maps *maps, const char *path, uint64_t vaddr, uint64_t *bias)
{
    for (size_t i = 0; i < maps->n && vaddr != UINT64_MAX; i++)
        if (maps->v[i].pgoff == 0 && strcmp(maps->v[i].path, path) == 0) {
            *bias = maps->v[i].start - vaddr;
            return 0;
        }
    return -ENOENT;
}

static int load_bias(Elf *elf, const pp_maps *maps, const char *path, uint64_t *bias)
{
    return bias_of(maps, path, first_vaddr(elf), bias);
}

/* What each file's symbol tables were found to hold, by the file's
 * identity (device, inode, mtime, size): a process is looked at every 20
 * ms until its _PyRuntime shows, a host starts hundreds of CPythons a
 * minute from the same few files, and each look opened and searched every
 * file it maps (libc's and ld.so's tables too, for a name they never
 * have). A bounded ring: the oldest file goes. */
#define SYM_FILES 64
#define SYM_NAMES 24                 /* names asked of one file (pyobj asks 12) */

typedef struct sym_file {
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    off_t size;
    uint64_t vaddr;                  /* first_vaddr (UINT64_MAX: no loadable segment) */
    size_t n;
    struct {
        char name[32];
        int found;
        uint64_t value;              /* st_value */
    } s[SYM_NAMES];
} sym_file;

static sym_file sym_files[SYM_FILES];
static size_t sym_nfiles, sym_next;

static sym_file *sym_file_of(const struct stat *st)
{
    for (size_t i = 0; i < sym_nfiles; i++) {
        sym_file *f = &sym_files[i];

        if (f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
            f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec)
            return f;
    }
    return NULL;
}

static sym_file *sym_file_new(const struct stat *st, uint64_t vaddr)
{
    sym_file *f = &sym_files[sym_next];

    sym_next = (sym_next + 1) % SYM_FILES;
    if (sym_nfiles < SYM_FILES)
        sym_nfiles++;
    memset(f, 0, sizeof(*f));
    f->dev = st->st_dev;
    f->ino = st->st_ino;
    f->mtime = st->st_mtim;
    f->size = st->st_size;
    f->vaddr = vaddr;
    return f;
}

/* 1 found (*value), 0 not in the file, -1 not asked yet. */
static int sym_kept(const sym_file *f, const char *name, uint64_t *value)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->s[i].name, name) == 0) {
            *value = f->s[i].value;
            return f->s[i].found;
        }
    return -1;
}

static void sym_keep(sym_file *f, const char *name, int found, uint64_t value)
{
    if (f->n < SYM_NAMES && strlen(name) < sizeof(f->s[0].name)) {
        snprintf(f->s[f->n].name, sizeof(f->s[0].name), "%s", name);
        f->s[f->n].found = found;
        f->s[f->n].value = value;
        f->n++;
    }
}

static int symbol_in(const pp_maps *maps, const char *path, const char *name, uint64_t *addr)
{
    char buf[4200];
    const char *open_path = pp_maps_open_path(maps, path, buf, sizeof(buf));
    struct stat st;
    sym_file *f = stat(open_path, &st) == 0 ? sym_file_of(&st) : NULL;
    int fd, found;
    Elf *elf;
    GElf_Sym sym;
    uint64_t bias, value, vaddr;

    if (f && (found = sym_kept(f, name, &value)) >= 0) {
        if (!found || bias_of(maps, path, f->vaddr, &bias) != 0)
            return -ENOENT;
        *addr = bias + value;
        return 0;
    }
    if (!(elf = open_elf(open_path, &fd)))
        return -ENOENT;
    vaddr = first_vaddr(elf);
    if (!f && fstat(fd, &st) == 0)
        f = sym_file_new(&st, vaddr);
    found = find_symbol(elf, name, &sym) == 0;
    if (f)
        sym_keep(f, name, found, found ? sym.st_value : 0);
    elf_end(elf);
    close(fd);
    if (!found || bias_of(maps, path, vaddr, &bias) != 0)
        return -ENOENT;
    *addr = bias + sym.st_value;
    return 0;
}

int pp_py_symbol_address(const pp_maps *maps, const char *name, uint64_t *addr,
                         char *file, size_t len)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < maps->n; i++) {
            const pp_map *m = &maps->v[i];
            const char *base = strrchr(m->path, '/');
            int pythonish = base && strstr(base, "python") != NULL;

            if (m->path[0] != '/' || !(m->prot & PP_MAP_X) || pythonish != (pass == 0))
                continue;
            if (symbol_in(maps, m->path, name, addr) == 0) {
                if (file)
                    snprintf(file, len, "%s", m->path);
                return 0;
            }
        }
    return -ENOENT;
}

/* Section `name` of the file mapped at path: where it is in the process
 * and its size. Sections outlive stripping (CPython puts _Py_DebugOffsets'
 * sisters, such as _asyncio's AsyncioDebug, in sections of their own). */
static int section_in(const pp_maps *maps, const char *path, const char *name, uint64_t *addr,
                      uint64_t *size)
{
    char buf[4200];
    int fd, rc = -ENOENT;
    Elf *elf = open_elf(pp_maps_open_path(maps, path, buf, sizeof(buf)), &fd);
    Elf_Scn *scn = NULL;
    size_t shstrndx;
    GElf_Shdr sh;
    uint64_t bias;

    if (!elf)
        return -ENOENT;
    if (elf_getshdrstrndx(elf, &shstrndx) == 0 && load_bias(elf, maps, path, &bias) == 0)
        while ((scn = elf_nextscn(elf, scn)) != NULL) {
            const char *s;

            if (gelf_getshdr(scn, &sh) && sh.sh_addr &&
                (s = elf_strptr(elf, shstrndx, sh.sh_name)) && strcmp(s, name) == 0) {
                *addr = bias + sh.sh_addr;
                *size = sh.sh_size;
                rc = 0;
                break;
            }
        }
    elf_end(elf);
    close(fd);
    return rc;
}

int pp_py_section_address(const pp_maps *maps, const char *name, uint64_t *addr,
                          uint64_t *size, char *file, size_t len)
{
    for (size_t i = 0; i < maps->n; i++) {
        const pp_map *m = &maps->v[i];

        /* CPython's files: its binary, libpython, its extension modules */
        if (m->path[0] != '/' || !(m->prot & PP_MAP_X) || !strstr(m->path, "python"))
            continue;
        if (section_in(maps, m->path, name, addr, size) == 0) {
            if (file)
                snprintf(file, len, "%s", m->path);
            return 0;
        }
    }
    return -ENOENT;
}


int pp_pysyms_types(const pp_maps *maps, pp_pyread_types *t)
{
    if (pp_py_symbol_address(maps, "PyCode_Type", &t->code, NULL, 0) != 0 ||
        pp_py_symbol_address(maps, "PyUnicode_Type", &t->str, NULL, 0) != 0)
        return -ENOENT;
    return 0;
}

/* ---- where the readers start ---------------------------------------------- */

int pp_pysyms_layout(const pp_mem *m, const pp_maps *maps, uint64_t runtime, const char *file,
                     unsigned flags, pp_pylayout *out, char *why, size_t len)
{
    uint64_t at = 0;

    if (pp_py_symbol_address(maps, "Py_Version", &at, NULL, 0) != 0)
        at = 0;
    return pp_pylayout_read(m, runtime, at, file, flags, out, why, len);
}

int pp_pysyms_objtypes(const pp_maps *maps, pp_pyobj_types *t)
{
    const struct {
        const char *name;
        uint64_t *at;
    } syms[] = {
        {"PyLong_Type", &t->int_type}, {"PyBool_Type", &t->bool_type},
        {"PyFloat_Type", &t->float_type}, {"PyUnicode_Type", &t->str_type},
        {"PyBytes_Type", &t->bytes_type}, {"PyTuple_Type", &t->tuple_type},
        {"PyCell_Type", &t->cell_type}, {"PyDict_Type", &t->dict_type},
        {"PyModule_Type", &t->module_type}, {"_Py_NoneStruct", &t->none},
        {"_Py_TrueStruct", &t->true_obj}, {"_Py_FalseStruct", &t->false_obj},
    };

    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
        if (pp_py_symbol_address(maps, syms[i].name, syms[i].at, NULL, 0) != 0)
            return -ENOENT;
    return 0;
}

int pp_pysyms_async(const pp_mem *m, const pp_maps *maps, pp_pyasync_offsets *out,
                    char *why, size_t len)
{
    unsigned char b[PP_PYASYNC_DEBUG_SIZE];
    uint64_t addr, size;
    char file[4096];
    int rc;

    if (pp_py_section_address(maps, PP_PYASYNC_SECTION, &addr, &size, file, sizeof(file)) != 0)
        return pp__refuse(why, len, -ENOENT, "no file it maps has _asyncio's debug offsets "
                          "(the %s section of CPython 3.14+, there once asyncio is imported)",
                          PP_PYASYNC_SECTION);
    if (size < sizeof(b))
        return pp_pyasync_offsets_from(b, (size_t)size, out, why, len);
    if ((rc = pp_mem_read(m, addr, b, sizeof(b))) != 0)
        return pp__refuse(why, len, rc == -ESRCH ? -ESRCH : -EFAULT, "its AsyncioDebug section "
                          "(in %s) could not be read", file);
    return pp_pyasync_offsets_from(b, sizeof(b), out, why, len);
}

int pp_pysyms_async_types(const pp_maps *maps, pp_pyasync_types *t)
{
    if (pp_py_symbol_address(maps, "PyCoro_Type", &t->coro, NULL, 0) != 0 ||
        pp_py_symbol_address(maps, "PyGen_Type", &t->gen, NULL, 0) != 0)
        return -ENOENT;
    return 0;
}

int pp_pysyms_needs_libpython(int fd, int only_64)
{
    Elf *elf;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    int found = 0;

    elf_version(EV_CURRENT);
    if (!(elf = elf_begin(fd, ELF_C_READ, NULL)))
        return 0;
    if (only_64 && gelf_getclass(elf) != ELFCLASS64)
        found = -1;                     /* stops the walk: no */
    while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
        Elf_Data *data;
        GElf_Dyn dyn;

        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
            !(data = elf_getdata(scn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && !found; i++) {
            const char *need;

            if (gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
                (need = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)))
                found = strncmp(need, "libpython", 9) == 0;
        }
    }
    elf_end(elf);
    return found > 0;
}
