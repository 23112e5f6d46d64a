/*
 * A running CPython's Python stacks, read from outside (see pyread.h).
 *
 * Everything read is the program's memory, which changes under the reader:
 * a pointer may be stale, a string half-written. So every read is bounded
 * (frames, threads, string lengths), a failed read ends that thread's walk
 * (the frames read so far are kept), and nothing read is trusted as a size.
 */
#include "pyread.h"
#include "collect_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <libelf.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define STR_MAX 255          /* characters read of a name or a file */

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

/* ---- the process's memory --------------------------------------------------- */

static int peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t n;

    if (!addr)
        return -EFAULT;
    n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)len)
        return 0;
    return n < 0 ? -errno : -EFAULT;
}

int pp_pyread_peek(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    return peek(pid, addr, buf, len);
}

static int peek_ptr(pid_t pid, uint64_t addr, int32_t off, uint64_t *v)
{
    if (off < 0)
        return -EINVAL;
    return peek(pid, addr + (uint64_t)off, v, sizeof(*v));
}

/* One code point as UTF-8 into out (room for 4); its length. */
static size_t utf8(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xc0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xe0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3f));
        out[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (c >> 18 & 0x07));
    out[1] = (char)(0x80 | (c >> 12 & 0x3f));
    out[2] = (char)(0x80 | (c >> 6 & 0x3f));
    out[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* The str's characters as UTF-8 from raw (kind 1, 2 or 4 bytes each, n of them). */
static void utf8_of(const unsigned char *raw, size_t kind, size_t n, char *out, size_t size)
{
    size_t w = 0;

    for (size_t i = 0; i < n && w + 5 <= size; i++) {
        uint32_t c = kind == 1 ? raw[i] : kind == 2 ? ((const uint16_t *)(const void *)raw)[i]
                                                    : ((const uint32_t *)(const void *)raw)[i];

        if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
            c = 0xfffd;              /* never write what is not UTF-8 */
        w += utf8(c, out + w);
    }
    out[w] = '\0';
}

size_t pp_pyread_chars(const void *chars, size_t n, size_t kind, char *out, size_t size)
{
    if (!size)
        return 0;
    utf8_of(chars, kind, n, out, size);
    return strlen(out);
}

int pp_pyread_is(pid_t pid, const pp_py_offsets *o, uint64_t obj, uint64_t type)
{
    uint64_t t = 0;

    return !type || (peek_ptr(pid, obj, o->object_type, &t) == 0 && t == type);
}

/* A str object (compact, as every name and file name is) as UTF-8; "" when
 * it cannot be read, or is no str (str_type: PyUnicode_Type, 0: unchecked). */
int pp_pyread_str(pid_t pid, const pp_py_offsets *o, uint64_t addr, uint64_t str_type,
                  char *out, size_t size)
{
    uint32_t state;
    int64_t length;
    unsigned char raw[STR_MAX * 4];
    size_t kind, n;

    out[0] = '\0';
    if (!pp_pyread_is(pid, o, addr, str_type) ||
        peek(pid, addr + (uint64_t)o->str_state, &state, sizeof(state)) != 0 ||
        peek(pid, addr + (uint64_t)o->str_length, &length, sizeof(length)) != 0 ||
        !(state & o->str_compact_mask) || length < 0)
        return 0;
    kind = (state & o->str_kind_mask) >> __builtin_ctz(o->str_kind_mask);
    if (kind != 1 && kind != 2 && kind != 4)
        return 0;
    n = (size_t)length < STR_MAX ? (size_t)length : STR_MAX;
    if (peek(pid, addr + (uint64_t)(state & o->str_ascii_mask ? o->str_ascii_data
                                                              : o->str_compact_data),
             raw, n * kind) != 0)
        return 0;
    utf8_of(raw, kind, n, out, size);
    return 1;
}

int pp_pyread_str_copy(const pp_py_offsets *o, const void *copy, size_t n, char *out,
                       size_t size)
{
    const unsigned char *b = copy;
    uint32_t state;
    int64_t length;
    size_t kind, data, have;

    out[0] = '\0';
    if (o->str_state < 0 || o->str_length < 0 || (size_t)o->str_state + 4 > n ||
        (size_t)o->str_length + 8 > n)
        return 0;
    memcpy(&state, b + o->str_state, sizeof(state));
    memcpy(&length, b + o->str_length, sizeof(length));
    kind = (state & o->str_kind_mask) >> __builtin_ctz(o->str_kind_mask);
    data = (size_t)(state & o->str_ascii_mask ? o->str_ascii_data : o->str_compact_data);
    if (!(state & o->str_compact_mask) || length < 0 || (kind != 1 && kind != 2 && kind != 4) ||
        data > n)
        return 0;
    have = (n - data) / kind;
    utf8_of(b + data, kind, (size_t)length < have ? (size_t)length : have, out, size);
    return (size_t)length <= have ? 1 : 2;
}

int pp_pyread_code(pid_t pid, const pp_py_offsets *o, const pp_pyread_types *types,
                   uint64_t code, pp_pyread_frame *f)
{
    uint64_t name = 0, file = 0;
    int32_t line = 0;

    f->code = code;
    f->qualname[0] = f->file[0] = '\0';
    f->def_line = 0;
    if (!pp_pyread_is(pid, o, code, types ? types->code : 0))
        return 0;
    peek_ptr(pid, code, o->code_qualname >= 0 ? o->code_qualname : o->code_name, &name);
    peek_ptr(pid, code, o->code_filename, &file);
    peek(pid, code + (uint64_t)o->code_firstlineno, &line, sizeof(line));
    pp_pyread_str(pid, o, name, types ? types->str : 0, f->qualname, sizeof(f->qualname));
    pp_pyread_str(pid, o, file, types ? types->str : 0, f->file, sizeof(f->file));
    f->def_line = line;
    return f->qualname[0] != '\0';
}

int pp_pyread_types_find(const pp_maps *maps, pp_pyread_types *t)
{
    if (pp_py_symbol_address(maps, "PyCode_Type", &t->code, NULL, 0) != 0 ||
        pp_py_symbol_address(maps, "PyUnicode_Type", &t->str, NULL, 0) != 0)
        return -ENOENT;
    return 0;
}

/* ---- a code object's identity, its line table, a frame's offset ------------- */

int pp_pyread_code_fields(pid_t pid, const pp_py_offsets *o, uint64_t code,
                          pp_pyread_fields *id)
{
    uint64_t len = 0;
    __u64 chars[4] = {0, 0, 0, 0};
    int64_t hash = -1;
    size_t n;
    int rc;

    memset(id, 0, sizeof(*id));
    if ((rc = peek_ptr(pid, code, o->code_qualname >= 0 ? o->code_qualname : o->code_name,
                       &id->name)) != 0 ||
        (rc = peek_ptr(pid, code, o->code_filename, &id->file)) != 0 ||
        (rc = peek_ptr(pid, code, o->code_linetable, &id->table)) != 0 ||
        (rc = peek_ptr(pid, id->name, o->str_hash, (uint64_t *)&hash)) != 0 ||
        (rc = peek_ptr(pid, id->name, o->str_length, &len)) != 0)
        return rc;
    n = len > PP_BPF_NAME_BYTES ? PP_BPF_NAME_BYTES : (size_t)len;
    if (n && peek(pid, id->name + (uint64_t)o->str_ascii_data, chars, n) != 0)
        memset(chars, 0, sizeof(chars));       /* as bpf_probe_read_user leaves it */
    id->name_id = pp_bpf_name_id(hash, len, chars);
    id->name_chars = pp_bpf_name_id(-1, len, chars);
    return peek(pid, code + (uint64_t)o->code_firstlineno, &id->def_line, sizeof(id->def_line));
}

long pp_pyread_bytes(pid_t pid, const pp_py_offsets *o, uint64_t table, unsigned char *out,
                     size_t cap)
{
    int64_t size = 0;
    int rc;

    if (o->code_linetable < 0)
        return -ENOENT;
    if ((rc = peek(pid, table + (uint64_t)o->bytes_size, &size, sizeof(size))) != 0)
        return rc;
    if (size < 0)
        return -EINVAL;
    if ((uint64_t)size > cap)
        return -E2BIG;
    if ((rc = peek(pid, table + (uint64_t)o->bytes_data, out, (size_t)size)) != 0)
        return rc;
    return (long)size;
}

uint64_t pp_pyread_code_start(pid_t pid, const pp_py_offsets *o, uint64_t code, int32_t tlbc)
{
    uint64_t array = 0, start = 0;
    int64_t size = 0;

    if (o->code_adaptive < 0)
        return 0;
    if (tlbc <= 0 || o->code_tlbc < 0)
        return code + (uint64_t)o->code_adaptive;
    /* _PyCodeArray: its size, then one pointer per thread's copy */
    if (peek_ptr(pid, code, o->code_tlbc, &array) != 0 ||
        peek(pid, array, &size, sizeof(size)) != 0 || tlbc >= size ||
        peek(pid, array + 8 + 8 * (uint64_t)tlbc, &start, sizeof(start)) != 0)
        return 0;
    return start;
}

int64_t pp_pyread_offset(const pp_py_offsets *o, uint64_t start, uint64_t instr)
{
    if (o->instr_kind == PP_INSTR_POINTER) {
        if (!start || instr < start || instr - start > INT32_MAX)
            return -1;
        return (int64_t)(instr - start);
    }
    return (int64_t)(int32_t)instr * (o->instr_kind == PP_INSTR_LASTI_UNITS ? 2 : 1);
}

/* ---- the walk --------------------------------------------------------------- */

static uint64_t first_frame(pid_t pid, const pp_py_offsets *o, uint64_t tstate)
{
    uint64_t frame = 0, cframe = 0;

    if (o->tstate_cframe >= 0) {
        if (peek_ptr(pid, tstate, o->tstate_cframe, &cframe) != 0 ||
            peek_ptr(pid, cframe, o->cframe_current_frame, &frame) != 0)
            return 0;
    } else if (peek_ptr(pid, tstate, o->tstate_frame, &frame) != 0) {
        return 0;
    }
    return frame;
}

static void walk(pid_t pid, const pp_py_offsets *o, uint64_t frame, pp_pyread_thread *t)
{
    for (size_t hops = 0; frame && hops < 4 * PP_PYREAD_DEPTH; hops++) {
        uint64_t code = 0, prev = 0;
        unsigned char owner = 0;

        if (peek_ptr(pid, frame, o->frame_previous, &prev) != 0 ||
            peek_ptr(pid, frame, o->frame_code, &code) != 0)
            return;
        if (o->frame_owner >= 0 &&
            peek(pid, frame + (uint64_t)o->frame_owner, &owner, 1) != 0)
            return;
        code &= ~(uint64_t)o->frame_code_tag_mask;
        if (!(o->frame_owner_shim_min >= 0 && owner >= o->frame_owner_shim_min) && code) {
            if (t->n == PP_PYREAD_DEPTH) {
                t->truncated = 1;
                return;
            }
            pp_pyread_code(pid, o, NULL, code, &t->f[t->n++]);
        }
        frame = prev;
    }
}

int pp_pyread_stacks(pid_t pid, const pp_py_offsets *o, uint64_t runtime,
                     pp_pyread_thread *out, size_t max)
{
    uint64_t interp = 0, tstate = 0;
    size_t n = 0;
    int rc;

    if ((rc = peek_ptr(pid, runtime, o->runtime_interpreters_head, &interp)) != 0)
        return rc;
    if ((rc = peek_ptr(pid, interp, o->interp_threads_head, &tstate)) != 0)
        return rc == -ESRCH ? rc : -EFAULT;
    while (tstate && n < max && n < PP_PYREAD_THREADS) {
        pp_pyread_thread *t = &out[n++];

        memset(t, 0, sizeof(*t));
        peek_ptr(pid, tstate, o->tstate_thread_id, &t->thread_id);
        walk(pid, o, first_frame(pid, o, tstate), t);
        if (peek_ptr(pid, tstate, o->tstate_next, &tstate) != 0)
            break;
    }
    return (int)n;
}
