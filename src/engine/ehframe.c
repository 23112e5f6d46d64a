/*
 * DWARF call-frame information for the trampoline: how perf unwinds
 * through a trampoline when libpython has no frame pointers.
 *
 * Why: with `--call-graph dwarf`, perf copies the stack at each sample and
 * unwinds it later with the .eh_frame of whatever ELF covers each return
 * address. A trampoline lives in anonymous memory, so by default there is
 * no .eh_frame and the unwind stops at the first Python function. In
 * jitdump mode, `perf inject --jit` writes one small ELF per trampoline
 * (jitted-<pid>-<code_index>.so) and maps it over the trampoline's
 * address range; the bytes built here become that ELF's .eh_frame and
 * .eh_frame_hdr, so the unwind continues into the interpreter and on to
 * main.
 *
 * The ELF that inject writes (tools/perf/util/genelf.c), and the offsets
 * this file computes (A = align8(code_size), E = .eh_frame size):
 *
 *   ELF address  0x80 + ...
 *   +0           .text           code_size bytes: the template, then the
 *                                8 salt bytes of the dump (jitdump.c)
 *   +A           .eh_frame       CIE (24 bytes), FDE (32 bytes)
 *   +A+E         .eh_frame_hdr   20 bytes: version 1,
 *                                eh_frame_ptr  pcrel  -> +A
 *                                fde_count     1
 *                                table[0]      datarel (from the hdr):
 *                                              initial_loc -> +0 (the code)
 *                                              fde_addr    -> +A+24
 *   +A+E+20      end: mapped_size in the unwinding record covers +A to
 *                here (rounded to 8), and the arena slot is at least
 *                +A+mapped_size wide, so perf's map of one trampoline
 *                never overlaps the next one.
 *
 * The CFI rows, driven by pp_template_layout (x86-64 shown; offsets with
 * endbr64, as the Makefile's -fcf-protection builds it):
 *
 *   offset  instruction      CFA      rbp        return address
 *    0      endbr64          rsp+8    same       cfa-8
 *    4      push %rbp        rsp+8    same       cfa-8
 *    5      mov %rsp,%rbp    rsp+16   cfa-16     cfa-8
 *    8      call *%rcx       rbp+16   cfa-16     cfa-8
 *   10      pop %rbp         rbp+16   cfa-16     cfa-8
 *   11      ret              rsp+8    same       cfa-8
 *   12..19  salt (int3 in the live slot; never executed)
 *
 * Recipe (the bytes below are what GNU as 2.40 writes for the same CFI;
 * tests/unit/test_ehframe.c holds them and checks the builder against
 * them, and tests/integration/test_jitdump.py reads the .eh_frame of a
 * real jitted-*.so with readelf):
 *
 *   $ cat tramp.s
 *           .text
 *           .globl  tramp
 *           .type   tramp, @function
 *   tramp:
 *           .cfi_startproc
 *           endbr64
 *           push    %rbp
 *           .cfi_def_cfa_offset 16
 *           .cfi_offset %rbp, -16
 *           mov     %rsp, %rbp
 *           .cfi_def_cfa_register %rbp
 *           call    *%rcx
 *           pop     %rbp
 *           .cfi_def_cfa %rsp, 8
 *           .cfi_restore %rbp
 *           ret
 *           .fill   8, 1, 0xcc
 *           .cfi_endproc
 *   $ gcc -c tramp.s -o tramp.o && readelf --debug-dump=frames tramp.o
 *   00000000 0000000000000014 00000000 CIE
 *     Version:               1
 *     Augmentation:          "zR"
 *     Code alignment factor: 1
 *     Data alignment factor: -8
 *     Return address column: 16
 *     Augmentation data:     1b
 *     DW_CFA_def_cfa: r7 (rsp) ofs 8
 *     DW_CFA_offset: r16 (rip) at cfa-8
 *     DW_CFA_nop
 *     DW_CFA_nop
 *   00000018 000000000000001c 0000001c FDE cie=00000000 pc=0..14
 *     DW_CFA_advance_loc: 5 to 0000000000000005
 *     DW_CFA_def_cfa_offset: 16
 *     DW_CFA_offset: r6 (rbp) at cfa-16
 *     DW_CFA_advance_loc: 3 to 0000000000000008
 *     DW_CFA_def_cfa_register: r6 (rbp)
 *     DW_CFA_advance_loc: 3 to 000000000000000b
 *     DW_CFA_def_cfa: r7 (rsp) ofs 8
 *     DW_CFA_restore: r6 (rbp)
 *     DW_CFA_nop
 *     DW_CFA_nop
 *   $ objcopy -O binary -j .eh_frame tramp.o eh.bin && xxd eh.bin
 *   00000000: 1400 0000 0000 0000 017a 5200 0178 1001  .........zR..x..
 *   00000010: 1b0c 0708 9001 0000 1c00 0000 1c00 0000  ................
 *   00000020: 0000 0000 1400 0000 0045 0e10 8602 430d  .........E....C.
 *   00000030: 0643 0c07 08c6 0000                      .C......
 *
 * The FDE's pc_begin (offset 0x20) is a relocation in tramp.o
 * (R_X86_64_PC32 .text+0); here it is resolved for inject's layout:
 * code start - field address = -(A + 0x20), e.g. c8 ff ff ff for A = 24.
 *
 * aarch64 (arch.h's second row; trampoline_aarch64.S as the Makefile builds
 * it, with -mbranch-protection=standard). The return address arrives in
 * x30, so the CIE says only CFA = sp + 0; the stp saves x29 and x30 at
 * CFA-16 and CFA-8; paciasp/autiasp flip the return address's signed state
 * (DW_CFA_AARCH64_negate_ra_state, 0x2d), which unwinders need to strip
 * the signature before using the saved x30:
 *
 *   offset  instruction                CFA     x29     x30
 *    0      bti c                      sp+0    same    same
 *    4      paciasp                    sp+0    same    same (signed from 8)
 *    8      stp x29, x30, [sp,#-16]!   sp+0    same    same
 *   12      mov x29, sp                sp+16   cfa-16  cfa-8
 *   16      blr x3                     x29+16  cfa-16  cfa-8
 *   20      ldp x29, x30, [sp], #16    x29+16  cfa-16  cfa-8
 *   24      autiasp                    sp+0    same    same (still signed)
 *   28      ret                        sp+0    same    same (unsigned)
 *   32..39  salt (udf #0 in the live slot; never executed)
 *
 * Recipe (GNU as 2.40, Debian's binutils-aarch64-linux-gnu; without branch
 * protection drop bti c, paciasp, autiasp and both negate_ra_state lines,
 * and the bytes are tests/unit/test_ehframe.c's expected_a64_bare_eh_frame):
 *
 *   $ cat tramp.s
 *           .text
 *           .globl  tramp
 *           .type   tramp, %function
 *   tramp:
 *           .cfi_startproc
 *           bti     c
 *           paciasp
 *           .cfi_negate_ra_state
 *           stp     x29, x30, [sp, #-16]!
 *           .cfi_def_cfa_offset 16
 *           .cfi_offset 29, -16
 *           .cfi_offset 30, -8
 *           mov     x29, sp
 *           .cfi_def_cfa_register 29
 *           blr     x3
 *           ldp     x29, x30, [sp], #16
 *           .cfi_def_cfa sp, 0
 *           .cfi_restore 29
 *           .cfi_restore 30
 *           autiasp
 *           .cfi_negate_ra_state
 *           ret
 *           .fill   8, 1, 0
 *           .cfi_endproc
 *   $ aarch64-linux-gnu-gcc -march=armv8.5-a -c tramp.s -o tramp.o
 *   $ aarch64-linux-gnu-readelf --debug-dump=frames tramp.o
 *   00000000 0000000000000010 00000000 CIE
 *     Version:               1
 *     Augmentation:          "zR"
 *     Code alignment factor: 4
 *     Data alignment factor: -8
 *     Return address column: 30
 *     Augmentation data:     1b
 *     DW_CFA_def_cfa: r31 (sp) ofs 0
 *   00000014 0000000000000028 00000018 FDE cie=00000000 pc=0..28
 *     DW_CFA_advance_loc: 8 to 0000000000000008
 *     DW_CFA_AARCH64_negate_ra_state
 *     DW_CFA_advance_loc: 4 to 000000000000000c
 *     DW_CFA_def_cfa_offset: 16
 *     DW_CFA_offset: r29 (x29) at cfa-16
 *     DW_CFA_offset: r30 (x30) at cfa-8
 *     DW_CFA_advance_loc: 4 to 0000000000000010
 *     DW_CFA_def_cfa_register: r29 (x29)
 *     DW_CFA_advance_loc: 8 to 0000000000000018
 *     DW_CFA_def_cfa: r31 (sp) ofs 0
 *     DW_CFA_restore: r29 (x29)
 *     DW_CFA_restore: r30 (x30)
 *     DW_CFA_advance_loc: 4 to 000000000000001c
 *     DW_CFA_AARCH64_negate_ra_state
 *     DW_CFA_nop (7 times)
 *   $ aarch64-linux-gnu-objcopy -O binary -j .eh_frame tramp.o eh.bin
 *   $ xxd eh.bin
 *   00000000: 1000 0000 0000 0000 017a 5200 0478 1e01  .........zR..x..
 *   00000010: 1b0c 1f00 2800 0000 1800 0000 0000 0000  ....(...........
 *   00000020: 2800 0000 0042 2d41 0e10 9d02 9e01 410d  (....B-A......A.
 *   00000030: 1d42 0c1f 00dd de41 2d00 0000 0000 0000  .B.....A-.......
 *
 * Note the padding: GNU as pads the CIE to 4 bytes (20 here, 24 on x86-64
 * where 22 needed 2 nops) and an FDE up to the next 8-byte offset of the
 * section; pad_entry does the same. pc_begin (offset 0x1c) is
 * R_AARCH64_PREL32 .text+0 in tramp.o, resolved as above: -(A + 0x1c).
 */
#include "ehframe.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* DWARF call-frame instructions (DWARF 4, section 7.23). */
enum {
    CFA_nop = 0x00,
    CFA_advance_loc1 = 0x02,
    CFA_advance_loc2 = 0x03,
    CFA_advance_loc4 = 0x04,
    CFA_offset_extended = 0x05,
    CFA_restore_extended = 0x06,
    CFA_def_cfa = 0x0c,
    CFA_def_cfa_register = 0x0d,
    CFA_def_cfa_offset = 0x0e,
    CFA_AARCH64_negate_ra_state = 0x2d,   /* the return address is (un)signed */
    CFA_advance_loc = 0x40,   /* | delta (< 64) */
    CFA_offset = 0x80,        /* | register (< 64), uleb128 factored offset */
    CFA_restore = 0xc0,       /* | register (< 64) */
};

#define EH_PTR_ENC   (PP_DW_EH_PE_pcrel | PP_DW_EH_PE_sdata4)     /* 0x1b */
#define EH_COUNT_ENC PP_DW_EH_PE_udata4                           /* 0x03 */
#define EH_TABLE_ENC (PP_DW_EH_PE_datarel | PP_DW_EH_PE_sdata4)   /* 0x3b */

/* A byte sink that counts what it cannot store, so one pass both sizes
 * and writes. */
struct sink {
    uint8_t *p;
    size_t cap;
    size_t n;
};

static void put8(struct sink *s, uint8_t b)
{
    if (s->n < s->cap)
        s->p[s->n] = b;
    s->n++;
}

static void put32(struct sink *s, uint32_t v)
{
    uint8_t b[4];

    memcpy(b, &v, 4);   /* the writer's byte order, like the whole dump */
    for (int i = 0; i < 4; i++)
        put8(s, b[i]);
}

static void patch32(struct sink *s, size_t at, uint32_t v)
{
    if (at + 4 <= s->cap)
        memcpy(s->p + at, &v, 4);
}

static void uleb(struct sink *s, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        put8(s, b | (v ? 0x80 : 0));
    } while (v);
}

static void sleb(struct sink *s, int64_t v)
{
    for (;;) {
        uint8_t b = v & 0x7f;
        v >>= 7;   /* arithmetic shift: gcc and clang keep the sign */
        if ((v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40))) {
            put8(s, b);
            return;
        }
        put8(s, b | 0x80);
    }
}

/* "the next row starts delta bytes further", in code-alignment units */
static void advance(struct sink *s, const struct pp_arch *arch, uint32_t delta)
{
    delta /= arch->code_align;
    if (delta == 0)
        return;
    if (delta < 64) {
        put8(s, CFA_advance_loc | (uint8_t)delta);
    } else if (delta <= 0xff) {
        put8(s, CFA_advance_loc1);
        put8(s, (uint8_t)delta);
    } else if (delta <= 0xffff) {
        uint16_t v = (uint16_t)delta;
        uint8_t b[2];
        memcpy(b, &v, 2);
        put8(s, CFA_advance_loc2);
        put8(s, b[0]);
        put8(s, b[1]);
    } else {
        put8(s, CFA_advance_loc4);
        put32(s, delta);
    }
}

/* "register reg is saved at CFA - bytes" */
static void saved_at(struct sink *s, const struct pp_arch *arch, unsigned reg,
                     int bytes)
{
    uint64_t factored = (uint64_t)(bytes / -arch->data_align);

    if (reg < 64) {
        put8(s, CFA_offset | (uint8_t)reg);
    } else {
        put8(s, CFA_offset_extended);
        uleb(s, reg);
    }
    uleb(s, factored);
}

static void restored(struct sink *s, unsigned reg)
{
    if (reg < 64) {
        put8(s, CFA_restore | (uint8_t)reg);
    } else {
        put8(s, CFA_restore_extended);
        uleb(s, reg);
    }
}

/* Entries are padded with DW_CFA_nop as GNU as pads them: a CIE to 4
 * bytes, an FDE up to the next 8-byte offset in the section (the sink
 * starts at the .eh_frame's start). */
static void pad_entry(struct sink *s, size_t start, size_t align)
{
    while (s->n % align != 0)
        put8(s, CFA_nop);
    patch32(s, start, (uint32_t)(s->n - start - 4));
}

static int layout_ok(const struct pp_arch *arch,
                     const struct pp_template_layout *l)
{
    uint32_t last = l->after_auth ? l->after_auth : l->after_pop;
    uint32_t all = l->push_at | l->after_push | l->after_mov | l->after_pop |
                   l->size | l->after_sign | l->after_auth;

    return l->push_at < l->after_push && l->after_push < l->after_mov &&
           l->after_mov <= l->after_call && l->after_call <= l->after_pop &&
           l->after_sign <= l->push_at && last >= l->after_pop &&
           last <= l->size && (l->after_sign == 0) == (l->after_auth == 0) &&
           all % arch->code_align == 0;
}

static void emit_cie(struct sink *s, const struct pp_arch *arch)
{
    size_t start = s->n;

    put32(s, 0);                    /* length, patched by pad_entry */
    put32(s, 0);                    /* CIE id: 0 in .eh_frame */
    put8(s, 1);                     /* version */
    put8(s, 'z');                   /* augmentation "zR": the FDE pointer */
    put8(s, 'R');                   /*   encoding is in the augmentation */
    put8(s, 0);
    uleb(s, arch->code_align);
    sleb(s, arch->data_align);
    uleb(s, arch->dwarf_ra);
    uleb(s, 1);                     /* augmentation data: 1 byte */
    put8(s, EH_PTR_ENC);            /* FDE addresses: pcrel sdata4 */
    /* At a call's target: CFA = sp + what the call pushed; the return
     * address at CFA-8 (x86-64) or still in the link register (aarch64). */
    put8(s, CFA_def_cfa);
    uleb(s, arch->dwarf_sp);
    uleb(s, arch->cfa_at_entry);
    if (!arch->link_register)
        saved_at(s, arch, arch->dwarf_ra, PP_WORD);
    pad_entry(s, start, 4);
}

/* A = offset of .eh_frame from the code start in inject's ELF. */
static void emit_fde(struct sink *s, const struct pp_arch *arch,
                     const struct pp_template_layout *l,
                     uint32_t code_size, int64_t a)
{
    size_t start = s->n;
    uint32_t at = 0;

    put32(s, 0);                                /* length */
    put32(s, (uint32_t)(s->n));                 /* back to the CIE at 0 */
    put32(s, (uint32_t)(int32_t)(0 - (a + (int64_t)s->n)));  /* pc_begin */
    put32(s, code_size);                        /* pc_range */
    uleb(s, 0);                                 /* no augmentation data */
    if (l->after_sign) {                        /* paciasp done */
        advance(s, arch, l->after_sign);
        put8(s, CFA_AARCH64_negate_ra_state);
        at = l->after_sign;
    }
    advance(s, arch, l->after_push - at);       /* push done */
    put8(s, CFA_def_cfa_offset);
    uleb(s, 2 * PP_WORD);
    saved_at(s, arch, arch->dwarf_fp, 2 * PP_WORD);
    if (arch->link_register)
        saved_at(s, arch, arch->dwarf_ra, PP_WORD);
    advance(s, arch, l->after_mov - l->after_push);   /* fp = sp done */
    put8(s, CFA_def_cfa_register);
    uleb(s, arch->dwarf_fp);
    advance(s, arch, l->after_pop - l->after_mov);    /* pop done */
    put8(s, CFA_def_cfa);
    uleb(s, arch->dwarf_sp);
    uleb(s, arch->cfa_at_entry);
    restored(s, arch->dwarf_fp);
    if (arch->link_register)
        restored(s, arch->dwarf_ra);
    if (l->after_auth) {                        /* autiasp done */
        advance(s, arch, l->after_auth - l->after_pop);
        put8(s, CFA_AARCH64_negate_ra_state);
    }
    pad_entry(s, start, PP_WORD);
}

static uint64_t align8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

static void emit_all(struct sink *s, const struct pp_arch *arch,
                     const struct pp_template_layout *l,
                     uint32_t code_size, size_t *table_size)
{
    int64_t a = (int64_t)align8(code_size);
    int64_t h, fde;

    emit_cie(s, arch);
    fde = (int64_t)s->n;
    emit_fde(s, arch, l, code_size, a);
    *table_size = s->n;
    h = a + (int64_t)s->n;          /* the hdr, from the code start */
    put8(s, 1);                     /* version */
    put8(s, EH_PTR_ENC);
    put8(s, EH_COUNT_ENC);
    put8(s, EH_TABLE_ENC);
    put32(s, (uint32_t)(int32_t)(a - (h + 4)));   /* -> .eh_frame */
    put32(s, 1);                                  /* one FDE */
    put32(s, (uint32_t)(int32_t)(0 - h));         /* -> the code */
    put32(s, (uint32_t)(int32_t)(a + fde - h));   /* -> the FDE */
}

const struct pp_arch pp__arch_x86_64 = PP_ARCH_X86_64;
const struct pp_arch pp__arch_aarch64 = PP_ARCH_AARCH64;
const struct pp_arch pp__arch = PP_ARCH_ROW;

/* A dry run of emit_all: the whole size, and the table's in *table. */
static size_t measure(const struct pp_arch *arch, const struct pp_template_layout *l,
                      size_t *table)
{
    struct sink s = {NULL, 0, 0};

    *table = 0;
    if (!layout_ok(arch, l))
        return 0;
    emit_all(&s, arch, l, l->size, table);
    return s.n;
}

size_t pp__ehframe_table_size(const struct pp_arch *arch,
                              const struct pp_template_layout *l)
{
    size_t table;

    measure(arch, l, &table);
    return table;
}

size_t pp__ehframe_size(const struct pp_arch *arch,
                        const struct pp_template_layout *l)
{
    size_t table;

    return measure(arch, l, &table);
}

ssize_t pp__ehframe_build(const struct pp_arch *arch, uint8_t *out,
                          size_t cap, const struct pp_template_layout *l,
                          uint64_t code_size)
{
    struct sink s = {out, cap, 0};
    size_t table;

    if (!layout_ok(arch, l) || code_size < l->size || code_size > INT32_MAX / 2)
        return -EINVAL;
    emit_all(&s, arch, l, (uint32_t)code_size, &table);
    if (s.n > cap)
        return -ENOSPC;
    return (ssize_t)s.n;
}

/* ---- checking a dump's .eh_frame_hdr (jitdump_read.c) --------------------- */

static int32_t get_s32(const uint8_t *p)
{
    int32_t v;

    memcpy(&v, p, 4);
    return v;
}

static int bad(char *why, size_t cap, const char *fmt, long long a,
               long long b)
{
    snprintf(why, cap, fmt, a, b);
    return -EBADMSG;
}

int pp__ehframe_check(const uint8_t *data, uint64_t unwinding_size,
                      uint64_t hdr_size, uint64_t code_size,
                      char *why, size_t cap)
{
    const uint8_t *hdr;
    int64_t a, e, h, target;
    uint32_t count;

    if (unwinding_size > UINT32_MAX || code_size > UINT32_MAX ||
        hdr_size > unwinding_size)
        return bad(why, cap, "unwinding data of %lld bytes for code of %lld "
                   "bytes is out of range", (long long)unwinding_size,
                   (long long)code_size);
    if (hdr_size < 4)
        return bad(why, cap, ".eh_frame_hdr is %lld bytes; it needs at "
                   "least %lld", (long long)hdr_size, 4);
    e = (int64_t)(unwinding_size - hdr_size);
    a = (int64_t)align8(code_size);
    h = a + e;
    hdr = data + e;
    if (hdr[0] != 1)
        return bad(why, cap, ".eh_frame_hdr version is %lld, not %lld",
                   hdr[0], 1);
    if (hdr[1] != EH_PTR_ENC || hdr[2] != EH_COUNT_ENC ||
        hdr[3] != EH_TABLE_ENC || hdr_size < 12)
        return 0;   /* legal but unusual encodings: not checked */
    target = h + 4 + get_s32(hdr + 4);
    if (target != a)
        return bad(why, cap, ".eh_frame_hdr eh_frame_ptr points %lld bytes "
                   "from the .eh_frame's start (inject puts it right after "
                   "the 8-aligned code, at +%lld)", (long long)(target - a),
                   (long long)a);
    memcpy(&count, hdr + 8, 4);
    if (count == 0 || count > (hdr_size - 12) / 8)
        return bad(why, cap, ".eh_frame_hdr fde_count is %lld; its %lld "
                   "bytes hold a table of at most that many entries",
                   count, (long long)hdr_size);
    for (uint32_t i = 0; i < count; i++) {
        int64_t loc = h + get_s32(hdr + 12 + 8 * i);
        int64_t fde = h + get_s32(hdr + 16 + 8 * i);
        uint32_t len;

        if (loc < 0 || loc >= (int64_t)code_size)
            return bad(why, cap, ".eh_frame_hdr table entry points at code "
                       "offset %lld, outside the code's %lld bytes",
                       (long long)loc, (long long)code_size);
        if (fde < a || fde + 8 > a + e)
            return bad(why, cap, ".eh_frame_hdr table entry points at offset "
                       "%lld from the code, outside the .eh_frame (%lld bytes)",
                       (long long)fde, (long long)e);
        memcpy(&len, data + (fde - a), 4);
        if (len == 0 || len == UINT32_MAX || (int64_t)len > a + e - fde - 4)
            return bad(why, cap, "the FDE the .eh_frame_hdr points at claims "
                       "%lld bytes; the .eh_frame has %lld after it",
                       (long long)len, (long long)(a + e - fde - 4));
    }
    return 0;
}
