/*
 * perfpy's own profile file, `-f perfpy` (NAME.perfpy.gz): everything a
 * profile holds (src/profile/profile.h), so that one recording is written
 * later in any format (`perfpy report FILE -f FORMAT`) with the numbers a
 * direct recording gives, and compared (`perfpy diff`). The other formats
 * each keep a view: collapsed text and pprof the stacks' totals, speedscope
 * and Firefox the timelines; none keeps them all.
 *
 * One definition for the writer (src/output/out_perfpy.c), the reader
 * (src/report/read_perfpy.c), the tests and the fuzzer. The file is a gzip
 * stream (RFC 1952: its CRC and length catch a file cut or spoiled) of:
 *
 *     magic     8 bytes   "\x89PERFPY\n" (a text tool sees binary at once)
 *     version   4 bytes   little-endian, PP_PROFILE_VERSION
 *     records   each      tag (varint), length (varint), payload (length bytes)
 *     ...                 the END record last: nothing after it is read
 *
 * Integers are unsigned LEB128 varints (at most 10 bytes), "zz" ones
 * zigzag-encoded signed; a string is its length (varint) and its bytes.
 * Records come in the order of the table (each needs the ones before: a
 * stack names frames, a sample a stack and a thread); a reader skips a
 * tag it does not know, so a field can be added in a record of its own
 * without a new version. A change to a record's layout is a new version.
 *
 *  tag  record        payload
 *   1   META          value kind, exec_lines, period_ns, time_first_ns,
 *                     time_last_ns, time_base_ns, time_unix_ns, duration_ns,
 *                     labelled, truncated, lost, bad_lines, event (string),
 *                     program (string)
 *   2   MARKER_NAMES  count; each: name
 *   3   FRAMES        count; each: kind, line (zz), name, file
 *   4   STACKS        count; each: depth, frame ids (depth of them), count,
 *                     period (sum of weights), wait (marker name + 1, 0:
 *                     none), wait kind
 *   5   THREADS       count; each: pid (zz), tid (zz), name_set, first_ns,
 *                     last_ns, samples, name
 *   6   PROCESSES     count; each: pid (zz), ns_pid (zz), samples,
 *                     truncated, python, comm, command, service, container
 *                     (the last three: a flag 0/1, then the string if 1)
 *   7   LABELS        count; each: key, value
 *   8   MARKERS       count; each: thread, kind, name (index), start_ns,
 *                     end_ns - start_ns
 *   9   SAMPLES       count; each: stack, thread, time (zz: ns since the
 *                     previous record's, the first's since 0), weight
 *  15   END           marker names, frames, stacks, threads, markers,
 *                     samples logged (what the reader must have read: a
 *                     file whose records were cut or dropped is refused)
 */
#ifndef PERFPY_PROFILE_FORMAT_H
#define PERFPY_PROFILE_FORMAT_H

#define PP_PROFILE_MAGIC "\x89PERFPY\n"
#define PP_PROFILE_MAGIC_LEN 8
#define PP_PROFILE_VERSION 1u
#define PP_PROFILE_HEADER_LEN 12      /* magic + version */

enum pp_profile_tag {
    PP_PF_META = 1,
    PP_PF_MARKER_NAMES = 2,
    PP_PF_FRAMES = 3,
    PP_PF_STACKS = 4,
    PP_PF_THREADS = 5,
    PP_PF_PROCESSES = 6,
    PP_PF_LABELS = 7,
    PP_PF_MARKERS = 8,
    PP_PF_SAMPLES = 9,
    PP_PF_END = 15,
};

#endif
