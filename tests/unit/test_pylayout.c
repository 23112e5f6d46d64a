/*
 * pylayout.c: each running interpreter of the build gets, with no perfpy
 * module read, the layout its own headers give (the module perfpy built
 * with those headers exports it: the oracle), from the compiled tables on
 * 3.8-3.12 and from its _Py_DebugOffsets on 3.13+. Then copies of a live
 * 3.13+ _PyRuntime, corrupted one way each (cookie, version, flavour flag,
 * a field), are refused with a sentence naming the version, and a crafted
 * free-threaded layout is read as the free-threaded headers say.
 */
#include "test.h"

#if PP_UNWIND
#include "native/maps.h"
#include "cpython/pylayout.h"
#include "cpython/pyread.h"
#include "cpython/pysyms.h"
#include "cpython/pytables.h"
#include "named_stacks.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char PROGRAM[] =
    "import time\n"
    "print('ready', flush=True)\n"
    "time.sleep(60)\n";

/* A live interpreter: its pid, _PyRuntime and where it is. */
typedef struct live {
    pid_t pid;
    pp_mem mem;
    int fd;
    pp_maps maps;
    uint64_t runtime;
    char file[512];
} live;

static void start_live(const char *python, live *l)
{
    char buf[16];

    memset(l, 0, sizeof(*l));
    l->pid = test_start_python(python, PROGRAM, &l->fd);
    l->mem = pp_mem_of_pid(l->pid);
    if (read(l->fd, buf, sizeof(buf)) < 5)
        TEST_FAIL_("%s did not start", python);
    ASSERT_EQ_INT(pp_maps_read(l->pid, &l->maps), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&l->maps, "_PyRuntime", &l->runtime, l->file,
                                       sizeof(l->file)), 0);
}

static void stop_live(live *l)
{
    int status;

    kill(l->pid, SIGKILL);
    waitpid(l->pid, &status, 0);
    close(l->fd);
    pp_maps_free(&l->maps);
}

/* Every field of a and b alike; the first that differs is named. */
static void same_fields(const char *what, const pp_py_offsets *a, const pp_py_offsets *b)
{
#define SAME(name, headers, debug)                                                   \
    if (a->name != b->name)                                                          \
        TEST_FAIL_("%s: %s is %d, the headers say %d", what, #name, a->name, b->name);
    PP_PY_FIELDS(SAME)
#undef SAME
}

static void layout_one(const test_python *py, const char *dir)
{
    char module[700], why[512];
    pp_py_offsets want;
    pp_pylayout got;
    live l;
    int rc;

    snprintf(module, sizeof(module), "%s/lib/perfpy%s", dir, py->ext);
    ASSERT_EQ_INT(pp_pyoffsets_read(module, &want), 0);
    start_live(py->path, &l);
    rc = pp_pysyms_layout(&l.mem, &l.maps, l.runtime, l.file, 0, &got, why, sizeof(why));
    stop_live(&l);
    if (rc != 0)
        TEST_FAIL_("%s: refused: %s", py->path, why);
    same_fields(py->path, &got.off, &want);
    ASSERT_EQ_INT(got.version_hex >> 16, want.version_hex >> 16);
    ASSERT_EQ_INT(got.from_debug, (want.version_hex >> 16) >= 0x030d);
    printf("    %s: the layout from its %s is its headers' (the module's table)\n", py->path,
           got.from_debug ? "_Py_DebugOffsets and the tables" : "version's compiled table");
}

TEST(pylayout_every_interpreter_without_its_module)
{
    test_each_python(layout_one, 8);
}

/* ---- copies of a live _PyRuntime, corrupted ------------------------------- */

static unsigned char image[PP_PYLAYOUT_READ];

static int from(const unsigned char *copy, uint32_t py_version, unsigned flags, pp_pylayout *l,
                char *why, size_t len)
{
    return pp_pylayout_from(copy, sizeof(image), py_version, flags, l, why, len);
}

static void expect_refusal(const char *what, const unsigned char *copy, uint32_t py_version,
                           unsigned flags, const char *says)
{
    char why[512];
    pp_pylayout l;
    int rc = from(copy, py_version, flags, &l, why, sizeof(why));

    if (rc != -ENOTSUP || !strstr(why, says))
        TEST_FAIL_("%s: %d \"%s\", want -ENOTSUP saying \"%s\"", what, rc, why, says);
    printf("      %s: refused: %s\n", what, why);
}

static void corrupt_one(const test_python *py, const char *dir)
{
    unsigned char copy[sizeof(image)];
    const pp_py_table *ft;
    uint64_t at, py_version = 0, v;
    char why[512], text[32], want[64];
    pp_pylayout l;
    live lv;

    (void)dir;
    start_live(py->path, &lv);
    ASSERT_EQ_INT(pp_mem_read(&lv.mem, lv.runtime, image, sizeof(image)), 0);
    ASSERT_EQ_INT(pp_py_symbol_address(&lv.maps, "Py_Version", &at, NULL, 0), 0);
    ASSERT_EQ_INT(pp_mem_read(&lv.mem, at, &py_version, sizeof(py_version)), 0);
    stop_live(&lv);
    pp_py_version_text((uint32_t)py_version, text, sizeof(text));
    printf("    %s (CPython %s):\n", py->path, text);

    /* the positive twin: the copy as it is */
    ASSERT_EQ_INT(from(image, (uint32_t)py_version, 0, &l, why, sizeof(why)), 0);
    ASSERT_EQ_INT(l.from_debug, 1);
    ASSERT_EQ_INT(l.version_hex, (uint32_t)py_version);

    memcpy(copy, image, sizeof(copy));
    copy[7] = 'z';                                       /* "xdebugpz" */
    snprintf(want, sizeof(want), "CPython %s", text);
    expect_refusal("cookie", copy, (uint32_t)py_version, 0, want);

    memcpy(copy, image, sizeof(copy));
    v = 0x036300f0;                                      /* 3.99.0 */
    memcpy(copy + 8, &v, 8);
    expect_refusal("version 3.99 (Py_Version unknown)", copy, 0, 0, "CPython 3.99.0 is newer");
    expect_refusal("version 3.99", copy, (uint32_t)py_version, 0, "3.99.0");
    v = py_version + 0x00010000;                         /* the next minor: a known table */
    memcpy(copy + 8, &v, 8);
    expect_refusal("version of the next minor", copy, (uint32_t)py_version, 0,
                   "does not match its version");

    memcpy(copy, image, sizeof(copy));
    v = 1;                                               /* free-threaded, it says */
    memcpy(copy + 16, &v, 8);
    expect_refusal("free_threaded = 1", copy, (uint32_t)py_version, 0, "free-threaded build");
    /* refused, it is still known to have no GIL (wall-clock mode says so) */
    memset(&l, 0, sizeof(l));
    ASSERT_EQ_INT(from(copy, (uint32_t)py_version, 0, &l, why, sizeof(why)) != 0, 1);
    ASSERT_EQ_INT(l.free_threaded, 1);
    /* read anyway: the object header is not that flavour's; never garbage */
    expect_refusal("free_threaded = 1, accepted", copy, (uint32_t)py_version,
                   PP_PYLAYOUT_FREE_THREADED, "a layout perfpy does not know");
    v = 2;
    memcpy(copy + 16, &v, 8);
    expect_refusal("free_threaded = 2", copy, (uint32_t)py_version, 0, "free_threaded = 2");

    /* a crafted free-threaded layout: its table's values where its debug
     * offsets publish them, in the copy; read, it is that table's layout */
    ft = pp_py_table_find((uint32_t)py_version, 1);
    ASSERT_NE_INT(ft != NULL, 0);
    memcpy(copy, image, sizeof(copy));
    v = 1;
    memcpy(copy + 16, &v, 8);
#define PUT(name, headers, debug)                                           \
    if (ft->debug_at.name >= 0) {                                           \
        v = ft->off.name < 0 ? 0 : (uint64_t)ft->off.name;                  \
        memcpy(copy + ft->debug_at.name, &v, 8);                            \
    }
    PP_PY_FIELDS(PUT)
#undef PUT
    ASSERT_EQ_INT(from(copy, (uint32_t)py_version, PP_PYLAYOUT_FREE_THREADED, &l, why,
                       sizeof(why)), 0);
    ASSERT_EQ_INT(l.free_threaded, 1);
    l.off.version_hex = ft->off.version_hex;
    same_fields("crafted free-threaded", &l.off, &ft->off);
    printf("      a crafted free-threaded layout: read as its headers say (%d-byte object "
           "header to ob_type, tag mask %d, per-thread bytecode at %d)\n", l.off.object_type,
           l.off.frame_code_tag_mask, l.off.code_tlbc);

    /* a published field past any structure */
    memcpy(copy, image, sizeof(copy));
    v = 1ull << 40;
    memcpy(copy + pp_py_table_find((uint32_t)py_version, 0)->debug_at.frame_previous, &v, 8);
    expect_refusal("an offset of 2^40", copy, (uint32_t)py_version, 0, "frame_previous");
}

TEST(pylayout_refuses_debug_offsets_that_do_not_match)
{
    test_each_python(corrupt_one, 13);
}

/* ---- each check of the reader, on images crafted from the tables ------------ */

/* A _PyRuntime of version t as its debug offsets would publish it: the
 * cookie, the version, the flavour flag, then each published field at its
 * place with the table's value. Made from the tables, so that every check
 * is judged on every machine, whatever interpreters it has. */
static void craft(unsigned char *img, size_t cap, const pp_py_table *t)
{
    uint64_t v;

    memset(img, 0, cap);
    memcpy(img, PP_PYLAYOUT_COOKIE, 8);
    v = t->off.version_hex;
    memcpy(img + 8, &v, 8);
    v = (uint64_t)t->free_threaded;
    memcpy(img + 16, &v, 8);
#define PUT(name, headers, debug)                                           \
    if (t->debug_at.name >= 0) {                                            \
        v = t->off.name < 0 ? 0 : (uint64_t)t->off.name;                    \
        memcpy(img + t->debug_at.name, &v, 8);                              \
    }
    PP_PY_FIELDS(PUT)
#undef PUT
}

static void refused(const char *what, const unsigned char *img, size_t n, uint32_t py_version,
                    unsigned flags, int want_rc, const char *says)
{
    char why[512];
    pp_pylayout l;
    int rc = pp_pylayout_from(img, n, py_version, flags, &l, why, sizeof(why));

    if (rc != want_rc || !strstr(why, says))
        TEST_FAIL_("%s: %d \"%s\", want %d saying \"%s\"", what, rc, why, want_rc, says);
}

static void accepted(const char *what, const unsigned char *img, size_t n, uint32_t py_version,
                     unsigned flags, const pp_py_table *t)
{
    char why[512];
    pp_pylayout l;
    int rc = pp_pylayout_from(img, n, py_version, flags, &l, why, sizeof(why));

    if (rc != 0)
        TEST_FAIL_("%s: refused: %d \"%s\"", what, rc, why);
    ASSERT_EQ_INT(l.from_debug, 1);
    ASSERT_EQ_UINT(l.version_hex, t->off.version_hex);
    ASSERT_EQ_INT(l.free_threaded, t->free_threaded);
    l.off.version_hex = t->off.version_hex;
    same_fields(what, &l.off, &t->off);
}

TEST(pylayout_each_check_spoiled_alone)
{
    static unsigned char img[PP_PYLAYOUT_READ], bad[PP_PYLAYOUT_READ];
    char what[96];
    uint64_t v;

    for (uint32_t minor = 13; minor <= 15; minor++) {
        const pp_py_table *t = pp_py_table_find(0x03000000 | minor << 16, 0);
        const pp_py_table *ft = pp_py_table_find(0x03000000 | minor << 16, 1);
        uint32_t pyv;

        ASSERT_TRUE(t && ft && t->debug_size > 24 && t->debug_size <= sizeof(img));
        /* the two fields that tell the flavours apart, each spoiled below */
        ASSERT_TRUE(t->debug_at.object_type >= 0 && t->debug_at.str_ascii_data >= 0);
        pyv = t->off.version_hex;
        craft(img, sizeof(img), t);
        snprintf(what, sizeof(what), "3.%u as crafted", minor);
        accepted(what, img, sizeof(img), pyv, 0, t);
        accepted(what, img, sizeof(img), 0, 0, t);         /* no Py_Version: its own word */

        /* the cookie: each byte alone */
        for (int i = 0; i < 8; i++) {
            memcpy(bad, img, sizeof(bad));
            bad[i] ^= 0x20;
            snprintf(what, sizeof(what), "3.%u, cookie byte %d", minor, i);
            refused(what, bad, sizeof(bad), pyv, 0, -ENOTSUP, "cookie");
            refused(what, bad, sizeof(bad), 0, 0, -ENOENT, "cannot be told");
        }
        /* the version: another major, a minor without debug offsets, bits
         * above 32, the next minor (a known table) or an unknown one
         * against Py_Version */
        static const uint64_t versions[] = {0x020d00f0, 0x040d00f0, 0x030c00f0, 0x1030d00f0ull};
        for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
            memcpy(bad, img, sizeof(bad));
            memcpy(bad + 8, &versions[i], 8);
            snprintf(what, sizeof(what), "3.%u, version %#llx", minor,
                     (unsigned long long)versions[i]);
            /* alone (no Py_Version to tell it from), and against Py_Version */
            refused(what, bad, sizeof(bad), 0, 0, -ENOTSUP, "which no CPython with debug");
            refused(what, bad, sizeof(bad), pyv, 0, -ENOTSUP, "which no CPython with debug");
        }
        memcpy(bad, img, sizeof(bad));
        v = (uint64_t)pyv + (minor < 15 ? 0x10000 : -0x10000);
        memcpy(bad + 8, &v, 8);
        refused("the next minor's version", bad, sizeof(bad), pyv, 0, -ENOTSUP,
                "does not match its version");
        v = 0x036300f0;
        memcpy(bad + 8, &v, 8);
        refused("3.99", bad, sizeof(bad), 0, 0, -ENOTSUP, "newer than the versions");
        /* the flavour: a flag neither 0 nor 1; free-threaded, not accepted;
         * accepted on a default build's layout; and each of the two fields
         * that tell the flavours apart, alone */
        memcpy(bad, img, sizeof(bad));
        v = 2;
        memcpy(bad + 16, &v, 8);
        refused("free_threaded = 2", bad, sizeof(bad), pyv, 0, -ENOTSUP, "(0 or 1 expected)");
        v = 1;
        memcpy(bad + 16, &v, 8);
        refused("free_threaded = 1", bad, sizeof(bad), pyv, 0, -ENOTSUP, "free-threaded build");
        refused("free_threaded = 1 on a default layout", bad, sizeof(bad), pyv,
                PP_PYLAYOUT_FREE_THREADED, -ENOTSUP, "a layout perfpy does not know");
        craft(bad, sizeof(bad), ft);
        accepted("the free-threaded table, crafted", bad, sizeof(bad), pyv,
                 PP_PYLAYOUT_FREE_THREADED, ft);
        memcpy(bad, img, sizeof(bad));
        v = (uint64_t)t->off.object_type + 16;
        memcpy(bad + t->debug_at.object_type, &v, 8);
        refused("ob_type 16 bytes on", bad, sizeof(bad), pyv, 0, -ENOTSUP,
                "a layout perfpy does not know");
        memcpy(bad, img, sizeof(bad));
        v = (uint64_t)t->off.str_ascii_data + 16;
        memcpy(bad + t->debug_at.str_ascii_data, &v, 8);
        refused("a str header 16 bytes larger", bad, sizeof(bad), pyv, 0, -ENOTSUP,
                "a layout perfpy does not know");
        /* the size: the whole debug offsets, or a refusal */
        accepted("read to the debug offsets' end", img, t->debug_size, pyv, 0, t);
        refused("a byte short", img, t->debug_size - 1, pyv, 0, -ENOTSUP, "read whole");
        refused("the header alone", img, 24, pyv, 0, -ENOTSUP, "read whole");
        printf("    3.%u (%u bytes of debug offsets): accepted as crafted; refused with each "
               "cookie byte, 6 versions, 5 flavours and 2 sizes spoiled alone\n", minor,
               t->debug_size);
    }
}

/* pp_pylayout_read reads _PyRuntime from the process; a read that ends in
 * unmapped memory is retried shorter, and what a short read gives is
 * judged: enough for the debug offsets, not enough, nothing. The image
 * sits in this process at `left` bytes before the end of a mapping. */
TEST(pylayout_reads_that_come_back_short)
{
    const pp_py_table *t = pp_py_table_find(0x030f0000, 0);
    long page = sysconf(_SC_PAGESIZE);
    unsigned char *map = mmap(NULL, (size_t)page * 2, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    static const struct { size_t left; int rc; const char *says; } cases[] = {
        {1024, 0, ""},                      /* 4096 and 2048 fail, 1024 holds 888 */
        {512, -ENOTSUP, "read whole"},      /* 512 < 888 bytes */
        {32, -EFAULT, "could not be read"}, /* not even 64 bytes */
    };
    pp_mem self = pp_mem_of_pid(getpid());

    ASSERT_TRUE(t != NULL && map != MAP_FAILED);
    ASSERT_EQ_INT(munmap(map + page, (size_t)page), 0);     /* a hole after it */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned char *at = map + page - cases[i].left;
        static unsigned char img[PP_PYLAYOUT_READ];
        char why[512] = "";
        pp_pylayout l;
        int rc;

        craft(img, sizeof(img), t);
        memcpy(at, img, cases[i].left);
        rc = pp_pylayout_read(&self, (uint64_t)(uintptr_t)at, 0,
                              "/usr/lib/x86_64-linux-gnu/libpython3.15.so.1.0", 0, &l, why,
                              sizeof(why));
        if (rc != cases[i].rc || !strstr(why, cases[i].says))
            TEST_FAIL_("%zu bytes before the hole: %d \"%s\", want %d saying \"%s\"",
                       cases[i].left, rc, why, cases[i].rc, cases[i].says);
        if (rc == 0) {
            l.off.version_hex = t->off.version_hex;
            same_fields("a read retried shorter", &l.off, &t->off);
        }
    }
    munmap(map, (size_t)page);
}

TEST(pylayout_versions_from_names_and_the_tables)
{
    char why[512];
    pp_pylayout l;
    unsigned char none[64] = {0};

    ASSERT_EQ_INT(pp_pylayout_version_of_name("/usr/bin/python3.11"), 0x030b0000);
    ASSERT_EQ_INT(pp_pylayout_version_of_name("/x/lib/libpython3.8.so.1.0"), 0x03080000);
    ASSERT_EQ_INT(pp_pylayout_version_of_name("/opt/bin/python3.13t"), 0x030d0000);
    ASSERT_EQ_INT(pp_pylayout_version_of_name("/usr/bin/perl"), 0);
    ASSERT_EQ_INT(pp_pylayout_version_of_name("/usr/lib/libpython2.7.so.1.0"), 0x02070000);
    ASSERT_EQ_INT(pp_pylayout_version_of_name("/opt/python-build/python3.10"), 0x030a0000);
    /* no cookie: the version's table, or a refusal */
    ASSERT_EQ_INT(pp_pylayout_from(none, sizeof(none), 0x030a0000, 0, &l, why, sizeof(why)), 0);
    ASSERT_EQ_INT(l.off.frame_is_object, 1);
    ASSERT_EQ_INT(pp_pylayout_from(none, sizeof(none), 0, 0, &l, why, sizeof(why)), -ENOENT);
    ASSERT_EQ_INT(pp_pylayout_from(none, sizeof(none), 0x03070000, 0, &l, why, sizeof(why)),
                  -ENOTSUP);
    ASSERT_NE_INT(strstr(why, "CPython 3.7.0") != NULL, 0);
    ASSERT_EQ_INT(pp_pylayout_from(none, sizeof(none), 0x030e0000, 0, &l, why, sizeof(why)),
                  -ENOTSUP);
    ASSERT_NE_INT(strstr(why, "cookie") != NULL, 0);
    /* every version 3.8-3.15 has a table; 3.13+ both flavours */
    for (uint32_t minor = 8; minor <= 15; minor++) {
        ASSERT_NE_INT(pp_py_table_find(0x03000000 | minor << 16, 0) != NULL, 0);
        ASSERT_EQ_INT(pp_py_table_find(0x03000000 | minor << 16, 1) != NULL, minor >= 13);
    }
    ASSERT_EQ_INT(pp_py_table_find(0x03100000, 0) != NULL, 0);
}

/* ---- a crafted free-threaded process image, read --------------------------- */

/* Objects laid out by the free-threaded table of 3.14 in this process's own
 * memory (pyread reads it with process_vm_readv like any other process):
 * a thread whose two frames point to their code objects through tagged
 * references, names in str objects with the free-threaded header and state
 * bits, and the first frame's code run from its thread's own copy of the
 * bytecode (co_tlbc[1]). No free-threaded interpreter can be had here, so
 * this is the walk's only test on that layout. */
static uint64_t words[65536];
static size_t used;

static unsigned char *alloc(size_t n)
{
    unsigned char *p = (unsigned char *)&words[used];

    used += (n + 7) / 8 + 2;                  /* 16-byte aligned, as objects are */
    used += used & 1;
    return p;
}

static void put64(unsigned char *base, int32_t off, uint64_t v)
{
    memcpy(base + off, &v, 8);
}

static unsigned char *ascii_str(const pp_py_offsets *o, const char *s)
{
    unsigned char *p = alloc((size_t)o->str_ascii_data + strlen(s) + 1);
    uint32_t state = (1u << __builtin_ctz((unsigned)o->str_kind_mask)) |
                     (uint32_t)o->str_compact_mask | (uint32_t)o->str_ascii_mask;

    put64(p, o->str_length, strlen(s));
    put64(p, o->str_hash, (uint64_t)-1);
    memcpy(p + o->str_state, &state, sizeof(state));
    memcpy(p + o->str_ascii_data, s, strlen(s) + 1);
    return p;
}

static unsigned char *code_object(const pp_py_offsets *o, const char *name, const char *file,
                                  int line)
{
    unsigned char *c = alloc(1024);

    put64(c, o->code_qualname, (uint64_t)(uintptr_t)ascii_str(o, name));
    put64(c, o->code_filename, (uint64_t)(uintptr_t)ascii_str(o, file));
    memcpy(c + o->code_firstlineno, &line, sizeof(line));
    return c;
}

TEST(pyread_walks_a_crafted_free_threaded_image)
{
    const pp_py_table *t = pp_py_table_find(0x030e0000, 1);
    const pp_py_offsets *o;
    unsigned char *runtime, *istate, *ts, *f1, *f2, *foo, *mod, *tlbc, *copy;
    static named_thread th[2];
    pp_pyread_frame names;
    pp_mem self = pp_mem_of_pid(getpid());

    ASSERT_NE_INT(t != NULL, 0);
    o = &t->off;
    ASSERT_EQ_INT(o->free_threaded, 1);
    ASSERT_NE_INT(o->frame_code_tag_mask, 0);       /* references are tagged */
    ASSERT_EQ_INT(o->object_type, 24);              /* the larger object header */
    ASSERT_NE_INT(o->code_tlbc, -1);                /* per-thread bytecode */
    runtime = alloc(4096);
    istate = alloc(65536);
    ts = alloc(4096);
    f1 = alloc(256);
    f2 = alloc(256);
    foo = code_object(o, "K.foo", "/srv/app.py", 7);
    mod = code_object(o, "<module>", "/srv/app.py", 1);
    copy = alloc(64);
    tlbc = alloc(32);
    put64(tlbc, 0, 2);                                          /* two copies */
    put64(tlbc, 8, (uint64_t)(uintptr_t)(foo + o->code_adaptive));
    put64(tlbc, 16, (uint64_t)(uintptr_t)copy);
    put64(foo, o->code_tlbc, (uint64_t)(uintptr_t)tlbc);
    put64(runtime, o->runtime_interpreters_head, (uint64_t)(uintptr_t)istate);
    put64(istate, o->interp_threads_head, (uint64_t)(uintptr_t)ts);
    put64(ts, o->tstate_thread_id, 0x1234);
    put64(ts, o->tstate_frame, (uint64_t)(uintptr_t)f1);
    put64(f1, o->frame_previous, (uint64_t)(uintptr_t)f2);
    put64(f1, o->frame_code, (uint64_t)(uintptr_t)foo | 1);     /* tagged */
    put64(f2, o->frame_code, (uint64_t)(uintptr_t)mod | 1);
    ASSERT_NE_INT(used < sizeof(words) / sizeof(words[0]), 0);

    ASSERT_EQ_INT(named_stacks(&self, o, (uint64_t)(uintptr_t)runtime, th, 2), 1);
    ASSERT_EQ_INT(th[0].thread_id, 0x1234);
    ASSERT_EQ_INT(th[0].n, 2);
    ASSERT_EQ_STR(th[0].f[0].qualname, "K.foo");
    ASSERT_EQ_STR(th[0].f[0].file, "/srv/app.py");
    ASSERT_EQ_INT(th[0].f[0].def_line, 7);
    ASSERT_EQ_STR(th[0].f[1].qualname, "<module>");
    ASSERT_EQ_INT(pp_pyread_code(&self, o, NULL, (uint64_t)(uintptr_t)foo, &names), 1);
    /* the thread's copy: an instruction 6 bytes into it is offset 6 */
    ASSERT_EQ_INT(pp_pyread_code_start(&self, o, (uint64_t)(uintptr_t)foo, 1),
                  (uint64_t)(uintptr_t)copy);
    ASSERT_EQ_INT(pp_pyread_offset(o, pp_pyread_code_start(&self, o, (uint64_t)(uintptr_t)foo,
                                                           1), (uint64_t)(uintptr_t)copy + 6), 6);
    ASSERT_EQ_INT(pp_pyread_code_start(&self, o, (uint64_t)(uintptr_t)foo, 0),
                  (uint64_t)(uintptr_t)(foo + o->code_adaptive));
    ASSERT_EQ_INT(pp_pyread_code_start(&self, o, (uint64_t)(uintptr_t)foo, 2), 0);
    printf("    3.14 free-threaded layout: K.foo <- <module> read through tagged references, "
           "names in %d-byte str headers, foo's line from its thread's bytecode copy\n",
           o->str_ascii_data);
}
#endif
