/*
 * codename.c: the BPF program's copies of code objects (codename_bpf.h),
 * as user space decodes and keeps them. A copy's characters in each of a
 * str's kinds (1, 2, 4 bytes) become UTF-8; what was cut is said, so that
 * the object is read whole where it still lives; a copy names the object
 * it was made of, never another object made at the same address; a copy
 * that is not one (short, no compact str, lengths past what it holds) is
 * refused or read only within itself (each in an exact-size heap block).
 * The copies made by the BPF program itself, on live interpreters:
 * tests/integration/test_record.py's code-churn tests.
 */
#include "test.h"

#if PP_UNWIND
#include "collect/codename.h"
#include "cpython/pytables.h"

#include <errno.h>

#define NO_PID 0x3ffffff0       /* a pid no process has: nothing is read */

/* The memory of NO_PID: every read fails. */
static const pp_mem *no_process(void)
{
    static pp_mem m;

    m = pp_mem_of_pid(NO_PID);
    return &m;
}

static pp_py_offsets layout(void)
{
    const pp_py_table *t = pp_py_table_find(0x030c01f0, 0);     /* 3.12.1 */

    if (!t) {
        fprintf(stderr, "    no 3.12 table\n");
        exit(1);
    }
    return t->off;
}

static uint32_t state_of(const pp_py_offsets *o, unsigned kind, int ascii)
{
    return (uint32_t)kind << __builtin_ctz((unsigned)o->str_kind_mask) |
           (uint32_t)o->str_compact_mask | (ascii ? (uint32_t)o->str_ascii_mask : 0);
}

static void set_str(const pp_py_offsets *o, struct pp_bpf_code_str *s, unsigned char *dst,
                    const void *chars, unsigned kind, int ascii, size_t length)
{
    s->state = state_of(o, kind, ascii);
    s->length = length;
    s->bytes = (uint32_t)(length * kind);
    memcpy(dst, chars, length * kind);
}

TEST(codename_decodes_each_kind_of_str)
{
    pp_py_offsets o = layout();
    struct pp_bpf_code_str s;
    unsigned char raw[64];
    char out[64];
    const uint16_t two[] = {'c', 0x109};
    const uint32_t four[] = {0x1f600, 'x', 0xd800};
    int cut = 0;

    set_str(&o, &s, raw, "abc", 1, 1, 3);
    ASSERT_EQ_INT(pp_codename_str(&s, raw, sizeof(raw), &o, out, sizeof(out), &cut), 1);
    ASSERT_EQ_STR(out, "abc");
    set_str(&o, &s, raw, "na\xefve", 1, 0, 5);            /* latin-1 */
    ASSERT_EQ_INT(pp_codename_str(&s, raw, sizeof(raw), &o, out, sizeof(out), &cut), 1);
    ASSERT_EQ_STR(out, "na\xc3\xafve");
    set_str(&o, &s, raw, two, 2, 0, 2);
    ASSERT_EQ_INT(pp_codename_str(&s, raw, sizeof(raw), &o, out, sizeof(out), &cut), 1);
    ASSERT_EQ_STR(out, "c\xc4\x89");
    set_str(&o, &s, raw, four, 4, 0, 3);                  /* a lone surrogate: U+FFFD */
    ASSERT_EQ_INT(pp_codename_str(&s, raw, sizeof(raw), &o, out, sizeof(out), &cut), 1);
    ASSERT_EQ_STR(out, "\xf0\x9f\x98\x80x\xef\xbf\xbd");
    ASSERT_EQ_INT(cut, 0);
    printf("    kinds 1 (ASCII, latin-1), 2, 4 to UTF-8; nothing cut\n");
}

TEST(codename_says_what_was_cut)
{
    pp_py_offsets o = layout();
    struct pp_bpf_code_str s;
    unsigned char raw[PP_BPF_CODE_NAME_BYTES];
    char out[PP_BPF_CODE_NAME_BYTES * 4 + 1];
    int cut = 0;

    memset(raw, 'q', sizeof(raw));
    s.state = state_of(&o, 1, 1);
    s.length = 300;                                       /* 256 of 300 copied */
    s.bytes = sizeof(raw);
    ASSERT_EQ_INT(pp_codename_str(&s, raw, sizeof(raw), &o, out, sizeof(out), &cut), 1);
    ASSERT_EQ_INT((long)strlen(out), PP_BPF_CODE_NAME_BYTES);
    ASSERT_EQ_INT(cut, 1);
    cut = 0;
    s.length = 7;                                         /* more copied than it holds */
    ASSERT_EQ_INT(pp_codename_str(&s, raw, sizeof(raw), &o, out, sizeof(out), &cut), 1);
    ASSERT_EQ_STR(out, "qqqqqqq");
    ASSERT_EQ_INT(cut, 0);
    printf("    300 characters, 256 copied: cut said; a length below the copy: the length\n");
}

static struct pp_bpf_code *record(const pp_py_offsets *o, const char *name, uint64_t name_id)
{
    static struct pp_bpf_code r;
    static const unsigned char table[] = {0x80, 0x00, 0xd8, 0x02};

    memset(&r, 0, sizeof(r));
    r.key = (struct pp_bpf_code_key){NO_PID, 17, 0x7f0000001000, 0x7f0000002000,
                                     0x7f0000003000, 0x7f0000004000, name_id};
    set_str(o, &r.name, r.name_chars, name, 1, 1, strlen(name));
    set_str(o, &r.file, r.file_chars, "/srv/app/gen.py", 1, 1, 15);
    memcpy(r.table, table, sizeof(table));
    r.table_len = r.table_bytes = sizeof(table);
    return &r;
}

static pp_pycode_id id_of(const struct pp_bpf_code *r)
{
    const struct pp_bpf_code_key *k = &r->key;

    return (pp_pycode_id){k->code, {k->name, k->file, k->table, k->name_id, 0,
                                    (int32_t)k->firstlineno}};
}

TEST(codename_names_the_object_copied_and_only_it)
{
    pp_py_offsets o = layout();
    struct pp_bpf_code *r = record(&o, "gen_1000", 1000);
    pp_pycode_id id = id_of(r), other = id;
    void *exact = test_exact_copy(r, sizeof(*r));
    const pp_pycode_entry *e;
    pp_pycode *c;

    ASSERT_EQ_INT(pp_pycode_open(&c), 0);
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), exact, sizeof(*r), &o, NULL), 0);
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), exact, sizeof(*r), &o, NULL), 0);     /* a second copy */
    e = pp_pycode_get(c, no_process(), &o, NULL, &id);          /* no process: from the copy */
    ASSERT_EQ_STR(e->qualname, "gen_1000");
    ASSERT_EQ_STR(e->file, "/srv/app/gen.py");
    ASSERT_EQ_INT(e->def_line, 17);
    ASSERT_EQ_INT((long)e->table_len, 4);
    ASSERT_EQ_MEM(e->table, r->table, 4);
    other.fields.name_id = 1001;                          /* another name at that address */
    ASSERT_EQ_STR(pp_pycode_get(c, no_process(), &o, NULL, &other)->qualname, "");
    ASSERT_EQ_INT(pp_pycode_stats_of(c).named, 1);
    ASSERT_EQ_INT(pp_pycode_stats_of(c).copied, 1);
    ASSERT_EQ_INT(pp_pycode_stats_of(c).freed, 1);
    free(exact);
    pp_pycode_close(c);
    printf("    named from its copy once (2 copies); another object there not named by it\n");
}

TEST(codename_keeps_a_cut_copy_when_the_object_is_gone)
{
    pp_py_offsets o = layout();
    struct pp_bpf_code *r = record(&o, "gen_1001", 1001);
    pp_pycode_id id = id_of(r);
    pp_pycode *c;

    r->table_len = 5000;                                  /* 4 of 5000 bytes copied */
    ASSERT_EQ_INT(pp_pycode_open(&c), 0);
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), r, sizeof(*r), &o, NULL), 0);
    ASSERT_EQ_STR(pp_pycode_get(c, no_process(), &o, NULL, &id)->qualname, "gen_1001");
    ASSERT_EQ_INT((long)pp_pycode_get(c, no_process(), &o, NULL, &id)->table_len, 4);
    ASSERT_EQ_INT(pp_pycode_stats_of(c).copied, 1);
    pp_pycode_close(c);
    printf("    a cut table, its process gone: the copy's 4 bytes kept\n");
}

/* The negative twin: what is no copy names nothing, and lengths past what
 * a copy holds are read only within it. */
TEST(codename_refuses_what_is_no_copy)
{
    pp_py_offsets o = layout();
    struct pp_bpf_code *r = record(&o, "gen_1002", 1002);
    pp_pycode_id id = id_of(r);
    pp_pycode *c;
    void *exact;

    ASSERT_EQ_INT(pp_pycode_open(&c), 0);
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), r, sizeof(*r) - 1, &o, NULL), -EINVAL);
    r->name.state &= ~(uint32_t)o.str_compact_mask;
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), r, sizeof(*r), &o, NULL), -EINVAL);
    r->name.state |= (uint32_t)o.str_compact_mask;
    r->name.length = 0;
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), r, sizeof(*r), &o, NULL), -EINVAL);
    ASSERT_EQ_INT(pp_pycode_stats_of(c).named, 0);
    memset(r->name_chars + 8, 'z', sizeof(r->name_chars) - 8);
    r->name.length = 1u << 30;                            /* lengths past the copy */
    r->name.bytes = r->file.bytes = r->table_bytes = 0xffffffffu;
    exact = test_exact_copy(r, sizeof(*r));
    ASSERT_EQ_INT(pp_codename_take(c, no_process(), exact, sizeof(*r), &o, NULL), 0);
    ASSERT_EQ_INT((long)strlen(pp_pycode_get(c, no_process(), &o, NULL, &id)->qualname),
                  PP_BPF_CODE_NAME_BYTES);
    ASSERT_EQ_INT((long)pp_pycode_get(c, no_process(), &o, NULL, &id)->table_len,
                  PP_BPF_CODE_TABLE_BYTES);
    free(exact);
    pp_pycode_close(c);
    printf("    short, not compact, empty: refused; lengths past the copy: within it\n");
}
#endif
