/*
 * /proc/PID/maps, parsed: what the native unwinder needs to know about a
 * process's address space (which file lies where, at which file offset,
 * and which ranges are writable or are the thread's stack).
 *
 *   55d0c0a00000-55d0c0a2c000 r--p 00000000 08:01 1311 /usr/bin/python3.11
 *   55d0c0a2c000-55d0c0d1f000 r-xp 0002c000 08:01 1311 /usr/bin/python3.11
 *   7ffd5a1e4000-7ffd5a205000 rw-p 00000000 00:00 0    [stack]
 *   (start-end perms offset dev inode, then the path: may hold spaces and
 *   end in " (deleted)"; absent for anonymous memory)
 *
 * The text is hostile input (a fuzz target replays it): a line not
 * understood is skipped and counted, never fatal, and nothing is read
 * outside the buffer. Plain C, no libdw: built on every machine.
 */
#ifndef PERFPY_NATIVE_MAPS_H
#define PERFPY_NATIVE_MAPS_H

#include <stddef.h>
#include <stdint.h>

enum { PP_MAP_R = 1, PP_MAP_W = 2, PP_MAP_X = 4 };

typedef struct pp_map {
    uint64_t start, end;   /* [start, end) */
    uint64_t pgoff;        /* file offset of start */
    unsigned prot;         /* PP_MAP_R | PP_MAP_W | PP_MAP_X */
    const char *path;      /* "" for anonymous memory; "[stack]", "[vdso]"... as
                              printed (a deleted file keeps its " (deleted)") */
} pp_map;

typedef struct pp_maps {
    pp_map *v;             /* sorted by start, non-overlapping */
    size_t n;
    size_t bad_lines;      /* lines not understood (skipped) */
    char *strings;         /* the paths (owned) */
    int pid;               /* whose (pp_maps_read), 0: parsed text */
    int other_root;        /* 1: its root is not ours (a container, a chroot):
                              the paths are the process's own (the kernel
                              prints them from our root: the part up to its
                              root, /proc/PID/root's target, is taken off),
                              opened through /proc/PID/root */
} pp_maps;

/* Parses len bytes of maps text into *out (which the caller frees with
 * pp_maps_free, also after an error). 0 or -ENOMEM. */
int pp_maps_parse(const char *text, size_t len, pp_maps *out);
/* 1 when pid's root directory is not ours (a container, a chroot). */
int pp_maps_other_root(int pid);
/* Reads and parses /proc/PID/maps. 0, or -errno of the open or read
 * (-ENOENT: the process is gone). */
int pp_maps_read(int pid, pp_maps *out);
/* Where to open the file the process maps at path (as the process sees
 * it): through /proc/PID/root when its root is not ours, else path itself
 * (in buf, size len). */
const char *pp_maps_open_path(const pp_maps *m, const char *path, char *buf, size_t len);
/* The mapping holding addr, or NULL. */
const pp_map *pp_maps_find(const pp_maps *m, uint64_t addr);
void pp_maps_free(pp_maps *m);

#endif
