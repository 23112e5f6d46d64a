/*
 * The DWARF unwinding data of one trampoline, as the jitdump carries it:
 * .eh_frame (one CIE, one FDE) followed by a 20-byte .eh_frame_hdr, with
 * every offset computed for the ELF that `perf inject --jit` builds (the
 * eh_frame right after the code, 8-aligned). See ehframe.c for the picture
 * and the recipe that regenerates the bytes.
 */
#ifndef PERFPY_EHFRAME_H
#define PERFPY_EHFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"

#define PP_EH_FRAME_HDR_SIZE 20u

/* DW_EH_PE_* pointer encodings used by the .eh_frame_hdr and the CIE. */
#define PP_DW_EH_PE_udata4  0x03u
#define PP_DW_EH_PE_sdata4  0x0bu
#define PP_DW_EH_PE_pcrel   0x10u
#define PP_DW_EH_PE_datarel 0x30u

/* Every function here takes the row of arch.h it describes: pp__arch for
 * this build's template, pp__arch_x86_64 or pp__arch_aarch64 to check
 * another architecture's bytes (the unit tests check both on any host). */

/* Bytes of .eh_frame (CIE + FDE) for this layout, and the total with the
 * .eh_frame_hdr after it. Neither depends on the code's size. 0 if the
 * layout is inconsistent (offsets out of order, or not whole instructions
 * for the architecture's code alignment). */
size_t pp__ehframe_table_size(const struct pp_arch *arch,
                              const struct pp_template_layout *l);
size_t pp__ehframe_size(const struct pp_arch *arch,
                        const struct pp_template_layout *l);

/* Writes .eh_frame + .eh_frame_hdr describing a trampoline with layout l,
 * for code of code_size bytes (what the code-load record reports; the FDE
 * covers all of it). Returns the bytes written (pp__ehframe_size(l)),
 * -ENOSPC if cap is too small, -EINVAL for a bad layout or a code size the
 * 32-bit offsets cannot express. */
ssize_t pp__ehframe_build(const struct pp_arch *arch, uint8_t *out,
                          size_t cap, const struct pp_template_layout *l,
                          uint64_t code_size);

/* Checks an .eh_frame_hdr found in a jitdump against the code it belongs
 * to, in inject's ELF coordinates: eh_frame_ptr must point at the start of
 * the .eh_frame, each search-table entry at a location inside the code and
 * at a whole FDE inside the .eh_frame. Only the encodings
 * {pcrel|sdata4, udata4, datarel|sdata4} are checked; other encodings
 * (legal, unusual) pass unchecked. data is in the reader's byte order.
 * Returns 0, or -EBADMSG with the reason in why. */
int pp__ehframe_check(const uint8_t *data, uint64_t unwinding_size,
                      uint64_t hdr_size, uint64_t code_size,
                      char *why, size_t cap);

#endif
