/*
 * The parts of the perf.data format (Linux
 * tools/perf/Documentation/perf.data-file-format.txt) that the scan
 * (perf_data.c) and the exec fix-ups (perf_data_fix.c) both walk:
 *
 *     header "PERFILE2" | attrs | data: { u32 type; u16 misc; u16 size; body }...
 *
 *     header offsets: 0 magic, 8 header size, 16 attr size, 24/32 attrs
 *     {offset, size}, 40/48 data {offset, size}, 72..104 feature bits
 *
 * Private to src/report/perf_data*.c. Every read goes through memcpy: the
 * input is a byte buffer with no alignment promised.
 */
#ifndef PERFPY_PERF_DATA_FORMAT_H
#define PERFPY_PERF_DATA_FORMAT_H

#include <stdint.h>
#include <string.h>

#define PP_PD_MAGIC2 0x32454c4946524550ull   /* "PERFILE2" little-endian */
#define PP_PD_HEADER_MIN 72                  /* magic..data section */
#define PP_PD_FEATURES_AT 72                 /* the header's 256 feature bits */
#define PP_PD_FEATURES_END 104

/* PERF_RECORD_* types read here. */
enum {
    PP_REC_MMAP = 1,
    PP_REC_LOST = 2,
    PP_REC_COMM = 3,
    PP_REC_EXIT = 4,
    PP_REC_FORK = 7,
    PP_REC_SAMPLE = 9,
    PP_REC_MMAP2 = 10,
    PP_REC_LOST_SAMPLES = 13,
    PP_REC_COMPRESSED = 81,
};

static inline uint64_t pp__pd_u64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static inline uint32_t pp__pd_u32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline uint16_t pp__pd_u16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}

#endif
