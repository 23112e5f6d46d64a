/*
 * The CFI builder (src/engine/ehframe.c): its bytes are the ones GNU as
 * writes for the recipe in ehframe.c's opening comment, resolved for the
 * ELF `perf inject --jit` builds; the .eh_frame_hdr points where inject
 * will put things; and the checker used by the reader accepts exactly
 * what is consistent. Both architectures' bytes are checked on every host
 * (arch.h has both rows); the template this build assembled is checked
 * against its own architecture's recipe.
 */
#include "test.h"
#include "ehframe.h"
#include "perfpy/engine.h"
#include "perfpy/jitdump_format.h"

#include <errno.h>

/* With endbr64 (-fcf-protection): offsets 4, 5, 8, 10, 11; size 12. */
static const struct pp_template_layout with_endbr = {4, 5, 8, 10, 11, 12, 0, 0};
/* Without it: 0, 1, 4, 6, 7; size 8. */
static const struct pp_template_layout without_endbr = {0, 1, 4, 6, 7, 8, 0, 0};

/* `gcc -c tramp.s && objcopy -O binary -j .eh_frame` (see ehframe.c), with
 * the FDE's pc_begin resolved for code of 20 bytes (A = 24):
 * -(24 + 0x20) = -56; then the 20-byte .eh_frame_hdr (H = A + 56 = 80):
 * eh_frame_ptr = A - (H + 4) = -60, initial_loc = -H = -80,
 * fde_addr = A + 24 - H = -32. */
static const uint8_t expected_endbr_20[76] = {
    /* CIE */
    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x7a, 0x52, 0x00, 0x01, 0x78, 0x10, 0x01,
    0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0x00, 0x00,
    /* FDE */
    0x1c, 0x00, 0x00, 0x00, 0x1c, 0x00, 0x00, 0x00,
    0xc8, 0xff, 0xff, 0xff, 0x14, 0x00, 0x00, 0x00,
    0x00, 0x45, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d,
    0x06, 0x43, 0x0c, 0x07, 0x08, 0xc6, 0x00, 0x00,
    /* .eh_frame_hdr */
    0x01, 0x1b, 0x03, 0x3b,
    0xc4, 0xff, 0xff, 0xff,     /* eh_frame_ptr -60 */
    0x01, 0x00, 0x00, 0x00,     /* fde_count 1 */
    0xb0, 0xff, 0xff, 0xff,     /* initial_loc -80 */
    0xe0, 0xff, 0xff, 0xff,     /* fde_addr -32 */
};

TEST(ehframe_bytes_match_the_gas_recipe)
{
    uint8_t out[128];

    ASSERT_EQ_UINT(pp__ehframe_table_size(&pp__arch_x86_64, &with_endbr), 56);
    ASSERT_EQ_UINT(pp__ehframe_size(&pp__arch_x86_64, &with_endbr), 76);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &with_endbr, 20), 76);
    ASSERT_EQ_MEM(out, expected_endbr_20, sizeof(expected_endbr_20));
}

TEST(ehframe_without_endbr_advances_from_zero)
{
    uint8_t out[128];

    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &without_endbr, 16), 76);
    /* Same CIE, FDE rows at 1, 4 and 7; pc_begin -(16 + 0x20). */
    ASSERT_EQ_MEM(out, expected_endbr_20, 24);
    ASSERT_EQ_UINT(out[0x20], 0xd0);
    ASSERT_EQ_UINT(out[0x24], 16);          /* pc_range */
    ASSERT_EQ_UINT(out[0x29], 0x41);
    ASSERT_EQ_UINT(out[0x2e], 0x43);
    ASSERT_EQ_UINT(out[0x31], 0x43);
    ASSERT_EQ_UINT(out[0x32], 0x0c);
    ASSERT_OK(pp__ehframe_check(out, 76, 20, 16, (char[64]){0}, 64));
}

TEST(ehframe_long_advances_use_advance_loc1_and_2)
{
    /* A made-up template with a long body: deltas 70 and 300. */
    static const struct pp_template_layout wide = {0, 1, 71, 300, 371, 400, 0, 0};
    uint8_t out[128];
    ssize_t n = pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &wide, 408);

    ASSERT_GT_INT(n, 0);
    ASSERT_EQ_UINT(out[0x29], 0x41);                 /* advance 1 */
    ASSERT_EQ_UINT(out[0x2e], 0x02);                 /* advance_loc1 */
    ASSERT_EQ_UINT(out[0x2f], 70);
    ASSERT_EQ_UINT(out[0x32], 0x03);                 /* advance_loc2 */
    ASSERT_EQ_UINT(out[0x33] | out[0x34] << 8, 300);
    ASSERT_EQ_UINT((size_t)n, pp__ehframe_size(&pp__arch_x86_64, &wide));
    ASSERT_OK(pp__ehframe_check(out, (uint64_t)n, 20, 408, (char[64]){0}, 64));
}

TEST(ehframe_refuses_bad_layouts_and_small_buffers)
{
    static const struct pp_template_layout backwards = {4, 3, 8, 10, 11, 12, 0, 0};
    static const struct pp_template_layout past_end = {4, 5, 8, 10, 13, 12, 0, 0};
    uint8_t out[128];

    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &backwards, 20), -EINVAL);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &past_end, 20), -EINVAL);
    ASSERT_EQ_UINT(pp__ehframe_size(&pp__arch_x86_64, &backwards), 0);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &with_endbr, 11), -EINVAL);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, 75, &with_endbr, 20), -ENOSPC);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &with_endbr,
                                    (uint64_t)1 << 40), -EINVAL);
}

TEST(ehframe_hdr_offsets_follow_the_code_size)
{
    /* Whatever the code size, the hdr points back at the code start and
     * at the FDE, with the .eh_frame at align8(code_size). */
    for (uint64_t size = 12; size < 64; size++) {
        uint8_t out[128];
        int32_t ptr, loc, fde;
        int64_t a = (int64_t)((size + 7) & ~7ull), h = a + 56;
        char why[200];

        ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, out, sizeof(out), &with_endbr, size), 76);
        memcpy(&ptr, out + 56 + 4, 4);
        memcpy(&loc, out + 56 + 12, 4);
        memcpy(&fde, out + 56 + 16, 4);
        ASSERT_EQ_INT(h + 4 + ptr, a);
        ASSERT_EQ_INT(h + loc, 0);
        ASSERT_EQ_INT(h + fde, a + 24);
        memcpy(&ptr, out + 0x20, 4);                   /* FDE pc_begin */
        ASSERT_EQ_INT(a + 0x20 + ptr, 0);
        ASSERT_OK(pp__ehframe_check(out, 76, 20, size, why, sizeof(why)));
    }
}

TEST(ehframe_check_names_what_is_inconsistent)
{
    uint8_t good[128], bad[128];
    char why[200];

    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_x86_64, good, sizeof(good), &with_endbr, 20), 76);

    memcpy(bad, good, 76);
    bad[56] = 2;                                       /* version */
    ASSERT_EQ_INT(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "version is 2");

    memcpy(bad, good, 76);
    bad[60] += 8;                                      /* eh_frame_ptr */
    ASSERT_EQ_INT(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "eh_frame_ptr points 8 bytes");

    /* The same data for code of 8 bytes: the table points before it
     * (every hdr offset is relative to the hdr, which moves with the
     * code; only the code start can be out of place). */
    ASSERT_EQ_INT(pp__ehframe_check(good, 76, 20, 8, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "code offset -16, outside the code's 8 bytes");

    memcpy(bad, good, 76);
    bad[68] = 0x00;                                    /* initial_loc -> +176 */
    bad[69] = 0x01;
    bad[70] = 0x00;
    bad[71] = 0x00;
    ASSERT_EQ_INT(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "outside the code");

    memcpy(bad, good, 76);
    memset(bad + 72, 0, 4);                            /* fde_addr -> the hdr */
    ASSERT_EQ_INT(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "outside the .eh_frame");

    memcpy(bad, good, 76);
    bad[24] = 0x40;                                    /* FDE length 64 */
    ASSERT_EQ_INT(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "the FDE the .eh_frame_hdr points at claims 64");

    memcpy(bad, good, 76);
    bad[64] = 3;                                       /* fde_count 3 */
    ASSERT_EQ_INT(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_CONTAINS(why, "fde_count is 3");

    memcpy(bad, good, 76);
    bad[57] = 0x1c;                                    /* unusual: unchecked */
    bad[60] = 0;
    ASSERT_OK(pp__ehframe_check(bad, 76, 20, 20, why, sizeof(why)));

    ASSERT_EQ_INT(pp__ehframe_check(good, 76, 2, 20, why, sizeof(why)), -EBADMSG);
    ASSERT_EQ_INT(pp__ehframe_check(good, 76, 77, 20, why, sizeof(why)), -EBADMSG);
}

/* ---- aarch64 -------------------------------------------------------------- */

/* trampoline_aarch64.S with -mbranch-protection=standard: bti c, paciasp at
 * 4, stp at 8, mov at 12, blr at 16, ldp at 20, autiasp at 24, ret at 28. */
static const struct pp_template_layout a64_bti_pac = {8, 12, 16, 20, 24, 32, 8, 28};
/* Without branch protection: stp at 0 ... ret at 12. */
static const struct pp_template_layout a64_bare = {0, 4, 8, 12, 16, 20, 0, 0};

/* `aarch64-linux-gnu-gcc -march=armv8.5-a -c tramp.s && objcopy -O binary
 * -j .eh_frame` (the aarch64 recipe in ehframe.c), pc_begin resolved for
 * code of 40 bytes (the template and the salt; A = 40): -(40 + 0x1c) = -68;
 * then the .eh_frame_hdr at H = A + 64 = 104: eh_frame_ptr = A - (H + 4) =
 * -68, initial_loc = -104, fde_addr = A + 20 - H = -44. */
static const uint8_t expected_a64_bti_pac_40[84] = {
    /* CIE (20 bytes: GNU as pads a CIE to 4 only) */
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x7a, 0x52, 0x00, 0x04, 0x78, 0x1e, 0x01,
    0x1b, 0x0c, 0x1f, 0x00,
    /* FDE (to the next 8-byte offset) */
    0x28, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
    0xbc, 0xff, 0xff, 0xff, 0x28, 0x00, 0x00, 0x00,
    0x00, 0x42, 0x2d, 0x41, 0x0e, 0x10, 0x9d, 0x02,
    0x9e, 0x01, 0x41, 0x0d, 0x1d, 0x42, 0x0c, 0x1f,
    0x00, 0xdd, 0xde, 0x41, 0x2d, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00,
    /* .eh_frame_hdr */
    0x01, 0x1b, 0x03, 0x3b,
    0xbc, 0xff, 0xff, 0xff,     /* eh_frame_ptr -68 */
    0x01, 0x00, 0x00, 0x00,     /* fde_count 1 */
    0x98, 0xff, 0xff, 0xff,     /* initial_loc -104 */
    0xd4, 0xff, 0xff, 0xff,     /* fde_addr -44 */
};

/* The same recipe without bti c, paciasp, autiasp and the two
 * .cfi_negate_ra_state (tramp-bare.s), for code of 28 bytes (A = 32). */
static const uint8_t expected_a64_bare_eh_frame[56] = {
    0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x7a, 0x52, 0x00, 0x04, 0x78, 0x1e, 0x01,
    0x1b, 0x0c, 0x1f, 0x00,
    0x20, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00,
    0xc4, 0xff, 0xff, 0xff, 0x1c, 0x00, 0x00, 0x00,
    0x00, 0x41, 0x0e, 0x10, 0x9d, 0x02, 0x9e, 0x01,
    0x41, 0x0d, 0x1d, 0x42, 0x0c, 0x1f, 0x00, 0xdd,
    0xde, 0x00, 0x00, 0x00,
};

TEST(ehframe_aarch64_bytes_match_the_gas_recipe)
{
    uint8_t out[128];
    char why[200];

    ASSERT_EQ_UINT(pp__arch_aarch64.elf_machine, 183);   /* EM_AARCH64 */
    ASSERT_EQ_UINT(pp__arch_x86_64.elf_machine, 62);     /* EM_X86_64 */
    ASSERT_EQ_UINT(pp__ehframe_table_size(&pp__arch_aarch64, &a64_bti_pac), 64);
    ASSERT_EQ_UINT(pp__ehframe_size(&pp__arch_aarch64, &a64_bti_pac), 84);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_aarch64, out, sizeof(out),
                                    &a64_bti_pac, 40), 84);
    ASSERT_EQ_MEM(out, expected_a64_bti_pac_40, sizeof(expected_a64_bti_pac_40));
    ASSERT_OK(pp__ehframe_check(out, 84, 20, 40, why, sizeof(why)));

    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_aarch64, out, sizeof(out),
                                    &a64_bare, 28), 76);
    ASSERT_EQ_MEM(out, expected_a64_bare_eh_frame, 56);
    ASSERT_OK(pp__ehframe_check(out, 76, 20, 28, why, sizeof(why)));
}

TEST(ehframe_aarch64_refuses_layouts_that_are_not_whole_instructions)
{
    static const struct pp_template_layout odd = {8, 12, 16, 20, 24, 30, 8, 28};
    static const struct pp_template_layout half_pac = {8, 12, 16, 20, 24, 32, 8, 0};
    uint8_t out[128];

    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_aarch64, out, sizeof(out), &odd, 40),
                  -EINVAL);
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_aarch64, out, sizeof(out), &half_pac, 40),
                  -EINVAL);
    /* x86-64's byte offsets are not aarch64 instructions */
    ASSERT_EQ_INT(pp__ehframe_build(&pp__arch_aarch64, out, sizeof(out), &with_endbr, 20),
                  -EINVAL);
}

/* The template this build assembled gives its own architecture's recipe. */
TEST(ehframe_of_the_built_template_is_the_recipe)
{
    const struct pp_template_layout *l = &pp_template_layout;
    uint8_t out[128];
    ssize_t n;

    n = pp__ehframe_build(&pp__arch, out, sizeof(out), l, pp_template_size() + 8);
#if defined(__x86_64__)
    if (l->push_at == 4) {   /* -fcf-protection gives endbr64 */
        ASSERT_EQ_INT(n, 76);
        ASSERT_EQ_MEM(out, expected_endbr_20, 76);
    } else {
        ASSERT_EQ_UINT(l->push_at, 0);
        ASSERT_EQ_INT(n, 76);
        ASSERT_EQ_UINT(out[0x29], 0x41);   /* advance 1: push done */
    }
#else
    if (l->after_sign) {     /* -mbranch-protection=standard: bti c, pac */
        ASSERT_EQ_MEM(l, &a64_bti_pac, sizeof(*l));
        ASSERT_EQ_INT(n, 84);
        ASSERT_EQ_MEM(out, expected_a64_bti_pac_40, 84);
    } else {
        ASSERT_EQ_UINT(l->push_at, PP_TEMPLATE_BTI ? 4 : 0);
        ASSERT_EQ_INT(n, 76);
        ASSERT_EQ_MEM(out, expected_a64_bare_eh_frame, 20);   /* the CIE */
    }
#endif
}
