/*
 * Sample mode's collector in user space: loads sample.bpf.c,
 * attaches it to a cpu-clock perf event (or the event of perfpy record -e,
 * event.h) on each thread of each process
 * added (inherited by the threads and processes it starts) at the rate asked,
 * and hands each ring-buffer record (collect_bpf.h) of the processes added
 * as targets to a callback. Needs root, or CAP_BPF and CAP_PERFMON.
 */
#ifndef PERFPY_COLLECT_COLLECT_H
#define PERFPY_COLLECT_COLLECT_H

#include "collect_bpf.h"
#include "cpython/pyasync.h"
#include "cpython/pyoffsets.h"
#include "event.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct pp_collector pp_collector;

/* Loads the BPF program and attaches its tracepoints; each process added
 * is then sampled at freq Hz per thread. With PP_COLLECT_WALL, also the
 * time its threads spend off the CPU (wall-clock mode, sample.bpf.c):
 * records of kind PP_BPF_OFF_* and PP_BPF_EV_WALL_END events. 0, or
 * -errno with a message in why (size len): what is missing (privileges,
 * BPF, BTF) and what to do. */
enum { PP_COLLECT_WALL = 1, PP_COLLECT_SNAPSHOT = 2 };
int pp_collect_open(pp_collector **out, int freq, int flags, char *why, size_t len);
/* The same, sampling event (perfpy record -e; it must outlive the
 * collector) every every events of each thread instead of cpu-clock: its
 * samples weigh a period of that event, not of time. */
int pp_collect_open_event(pp_collector **out, int freq, const pp_event *event, uint64_t every,
                          int flags, char *why, size_t len);
/* Samples pid's threads from now on, reading its Python frames with o and
 * the _PyRuntime address runtime (0 and o NULL: not yet; set it once known).
 * 0 or -errno (-ENOENT: no such process; -EPERM: not permitted). */
int pp_collect_add(pp_collector *c, pid_t pid, const pp_py_offsets *o, uint64_t runtime);
/* What the BPF program knows of pid, a process added or a child of one
 * (its events inherited): its _PyRuntime found (after its start, or an
 * exec). 0 or -errno. */
int pp_collect_set(pp_collector *c, pid_t pid, const pp_py_offsets *o, uint64_t runtime);
/* --async: the tasks of pid's samples read too (a, ty: where its CPython
 * keeps them, pyasync.h; NULL: not, as after pp_collect_set), and with
 * waiting (wall-clock mode) some of the tasks waiting at each sample. Set
 * after pp_collect_set, whose layout o is. 0 or -errno (-ENOENT: no such
 * target). */
int pp_collect_set_async(pp_collector *c, pid_t pid, const pp_py_offsets *o,
                         const pp_pyasync_offsets *a, const pp_pyasync_types *ty,
                         int waiting);
void pp_collect_remove(pp_collector *c, pid_t pid);
/* The whole host (perfpy record -a): a cpu-clock event on each CPU at the
 * rate asked (samples of whatever runs there, the targets' kept), and
 * flags (PP_BPF_HOST_*: every exec told and made a target until removed;
 * processes that are not targets sampled too). 0 or -errno. */
int pp_collect_host(pp_collector *c, unsigned flags);
/* Waits up to timeout_ms for records, calls fn on each sample and event_fn
 * (may be NULL) on each event, in the order they happened: a target's
 * children are targets too (PP_BPF_EV_FORK), one that execs is sampled
 * without its Python frames until added again (PP_BPF_EV_EXEC), one that
 * ends is removed (PP_BPF_EV_EXIT). The number handled, or -errno. */
typedef void (*pp_collect_fn)(const struct pp_bpf_sample *s, void *ctx);
typedef void (*pp_collect_event_fn)(const struct pp_bpf_event *e, void *ctx);
int pp_collect_poll(pp_collector *c, int timeout_ms, pp_collect_fn fn,
                    pp_collect_event_fn event_fn, void *ctx);
/* fn gets each copy the BPF program makes of a code object it samples
 * first (codename_bpf.h; len: the record's bytes), before the samples
 * that need it. */
typedef void (*pp_collect_code_fn)(const struct pp_bpf_code *r, size_t len, void *ctx);
void pp_collect_on_code(pp_collector *c, pp_collect_code_fn fn, void *ctx);
/* Copies that did not fit in their ring (their objects read from the
 * process instead). */
uint64_t pp_collect_code_lost(const pp_collector *c);
/* Samples the kernel could not hand over (the ring buffer was full). */
uint64_t pp_collect_lost(const pp_collector *c);
/* One of the BPF program's counters (PP_BPF_N_*), summed over the CPUs. */
uint64_t pp_collect_count(const pp_collector *c, int which);
/* Wall-clock mode: the time off the CPU of the switches the scheduler's
 * tracepoint did not report whose stacks could not be had (ns). */
uint64_t pp_collect_missed_ns(const pp_collector *c);
/* Wall-clock mode: the task iterator over pid's threads. end 0 (at
 * attach): each thread blocked now is captured, its time off the CPU
 * counted from now; end 1 (before the last poll): each stretch still
 * open ends now and is handed over. 0 or -errno. */
int pp_collect_threads(pp_collector *c, pid_t pid, int end);
/* Wall-clock mode: the stretches the end's iterator closes end at mono_ns
 * (CLOCK_MONOTONIC) if that is earlier than the iterator's run: a
 * recording for a duration that ended late. 0: as the iterator runs. */
void pp_collect_end_at(pp_collector *c, uint64_t mono_ns);
/* perfpy dump (opened with PP_COLLECT_SNAPSHOT: the task iterator without
 * wall-clock mode): each of pid's threads off the CPU not captured by an
 * earlier call is captured now, from outside (a record of kind
 * PP_BPF_OFF_OPEN, no end record follows); those on a CPU come in their
 * cpu-clock samples. 0 or -errno. */
int pp_collect_snapshot(pp_collector *c, pid_t pid);
/* perfpy dump (PP_COLLECT_SNAPSHOT): the kernel's names of n kernel
 * addresses, as its stack traces print them ("name", or "name [module]";
 * a number when no symbol holds it), each at most PP_BPF_KSYM_LEN bytes
 * with its NUL. 0 or -errno. */
int pp_collect_kernel_names(pp_collector *c, const uint64_t *addr, size_t n,
                            char (*names)[PP_BPF_KSYM_LEN]);
void pp_collect_close(pp_collector *c);

#endif
