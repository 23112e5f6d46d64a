/*
 * A jitdump reader that trusts nothing it reads.
 *
 * Used by `perfpy jitdump` (check and summarise a dump), by the report
 * (src/report/jitdump_codes.c: code loads and def lines), by the jitdump
 * backend when a forked child re-emits its parent's records, by the tests
 * and by the fuzzer (tests/fuzz/fuzz_jitdump.c). It walks a dump held in
 * memory (a copy of the file: pp_jd_read_file says why), record by
 * record, and checks what perf relies on:
 *
 *   header   magic (or its byte-swapped form: the reader then swaps every
 *            field), version 1, total_size >= 40 and inside the input, no
 *            reserved flag bit
 *   record   total_size >= 16 and <= what remains; per type the minimum
 *            size, a NUL-terminated name inside the record, code_size and
 *            debug entries and unwinding data inside the record, a code
 *            load not padded (perf takes the code from the record's end)
 *   order    an unwinding or debug record belongs to the NEXT code load:
 *            two of a kind before one load, one left at the end of the
 *            file, or a debug record whose addresses lie outside its code
 *            are errors; code_index is unique; mapped_size is not 0; the
 *            .eh_frame_hdr points inside its code and .eh_frame
 *
 * Unknown record types are skipped. Errors are values: a negative errno
 * (-EBADMSG for bad data, -ENOMEM) with the byte offset and a sentence
 * saying what is wrong, kept in the reader (sticky). Nothing here asserts
 * on input or reads outside the buffer it was given.
 *
 *   pp_jd_reader r;
 *   pp_jd_record rec;
 *   int rc = pp_jd_open(&r, data, size);
 *   while (rc == 0 && (rc = pp_jd_next(&r, &rec)) > 0)
 *       ... rec.id, rec.u.load.name ...
 *   if (rc < 0) puts(r.error.message);   (r.error.offset: where)
 *   pp_jd_close(&r);
 */
#ifndef PERFPY_JITDUMP_READ_H
#define PERFPY_JITDUMP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "perfpy/jitdump_format.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pp_jd_error {
    int err;                  /* 0, or a negative errno */
    uint64_t offset;          /* byte offset in the input of the problem */
    char message[320];        /* what is wrong, one line */
    int cut;                  /* 1: the only problem is that the input ends
                                 inside the record at offset, as a dump does
                                 whose writer was killed while writing it
                                 (Linux checks for a fatal signal between the
                                 pages of a write); every record before it is
                                 whole, and perf inject reads those */
} pp_jd_error;

typedef struct pp_jd_header {
    uint32_t magic;           /* as found (JITHEADER_MAGIC or _SW) */
    uint32_t version;
    uint32_t total_size;
    uint32_t elf_mach;
    uint32_t pid;
    uint64_t timestamp;
    uint64_t flags;
    int swapped;              /* the writer had the other byte order */
} pp_jd_header;

typedef struct pp_jd_debug_entry {
    uint64_t addr;
    int32_t lineno;
    int32_t discrim;
    const char *name;         /* NUL-terminated, inside the input */
} pp_jd_debug_entry;

/* One record; pointers point into the reader's input. */
typedef struct pp_jd_record {
    uint32_t id;              /* enum jit_record_type, or unknown */
    uint32_t total_size;
    uint64_t timestamp;
    uint64_t offset;          /* of the record's first byte */
    const uint8_t *bytes;     /* the whole record, total_size bytes */
    union {
        struct {
            uint32_t pid, tid;
            uint64_t vma, code_addr, code_size, code_index;
            const char *name;        /* NUL-terminated */
            size_t name_len;
            const uint8_t *code;     /* code_size bytes */
            int64_t unwinding_at;    /* offset of its unwinding record, -1 */
            int64_t debug_at;        /* offset of its debug record, -1 */
        } load;
        struct {
            uint32_t pid, tid;
            uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
        } move;
        struct {
            uint64_t code_addr, nr_entry;
            const uint8_t *entries;  /* nr_entry checked entries */
            size_t entries_size;
        } debug;
        struct {
            uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
            const uint8_t *data;     /* unwinding_size bytes */
        } unwinding;
    } u;
} pp_jd_record;

typedef struct pp_jd_reader {
    const uint8_t *data;
    size_t size;
    size_t pos;               /* next record's offset */
    pp_jd_header header;
    pp_jd_error error;        /* sticky */
    int started;              /* pp_jd_open succeeded */
    /* The unwinding and debug records waiting for their code load. */
    int has_unwinding, has_debug;
    pp_jd_record unwinding, debug;
    /* code_index values seen (open addressing). */
    uint64_t *index_keys;
    uint8_t *index_used;
    size_t index_cap, index_count;
} pp_jd_reader;

/* Checks the header of the dump in data[0..size) (the reader keeps the
 * pointer; the caller keeps the bytes alive). 0 or a negative errno. */
int pp_jd_open(pp_jd_reader *r, const void *data, size_t size);
/* The next record: 1 with *rec filled, 0 at a clean end, or a negative
 * errno (the same one again on every later call). */
int pp_jd_next(pp_jd_reader *r, pp_jd_record *rec);
/* Frees what the reader allocated. Safe after a failed open. */
void pp_jd_close(pp_jd_reader *r);

/* Entry i (< nr_entry, in order) of a debug record returned by
 * pp_jd_next; *pos is the byte position inside the entries, 0 for the
 * first call. Returns 1 with *out filled, 0 after the last entry. */
int pp_jd_debug_next(const pp_jd_reader *r, const pp_jd_record *rec,
                     size_t *pos, pp_jd_debug_entry *out);

/* The dump at path copied whole into memory (*data malloc'ed, *size
 * bytes; free it after pp_jd_close): the one way perfpy reads a dump from
 * disk, for `perfpy jitdump` and the report alike. A copy, never a
 * mapping: the dump may belong to a process still writing it, or be
 * truncated under the reader (a new process with the same pid opens
 * jit-<pid>.dump with O_TRUNC), and a page of a mapping past a file's new
 * end faults (SIGBUS) where read() just returns fewer bytes. Whatever was
 * appended while reading is read too; a cut last record is the reader's
 * error.cut. 0, -EINVAL (not a regular file), -ENOMEM or the errno of
 * open/read. */
int pp_jd_read_file(const char *path, uint8_t **data, size_t *size);

/* "JIT_CODE_LOAD", ..., "unknown" */
const char *pp_jd_record_name(uint32_t id);

#ifdef __cplusplus
}
#endif
#endif /* PERFPY_JITDUMP_READ_H */
