/*
 * The tests' view of a process's Python stacks: the one reader's walk
 * (src/cpython/pystack.c) over the memory m, each frame named by its code
 * object (pyread.c: qualname, file, def line), as test_pyread.c,
 * test_pyobj.c and test_pylayout.c check them.
 */
#ifndef PERFPY_TEST_NAMED_STACKS_H
#define PERFPY_TEST_NAMED_STACKS_H

#include "cpython/pyread.h"
#include "cpython/pystack.h"

typedef struct named_thread {
    uint64_t thread_id;          /* its pthread_self() */
    size_t n;                    /* frames, innermost first */
    int truncated;
    pp_pyread_frame f[PP_PYSTACK_DEPTH];
} named_thread;

/* Up to max threads of m's main interpreter (_PyRuntime at runtime) into
 * out: how many, or -errno as pp_pystack_read. */
static inline int named_stacks(const pp_mem *m, const pp_py_offsets *o, uint64_t runtime,
                               named_thread *out, size_t max)
{
    static pp_pystack_thread th[PP_PYSTACK_THREADS];
    int n = pp_pystack_read(m, o, runtime, -1, th, max < PP_PYSTACK_THREADS ? max
                                                                             : PP_PYSTACK_THREADS);

    for (int i = 0; i < n; i++) {
        out[i].thread_id = th[i].thread_id;
        out[i].n = th[i].n;
        out[i].truncated = th[i].truncated;
        for (size_t k = 0; k < th[i].n; k++)
            pp_pyread_code(m, o, NULL, th[i].f[k].id.code, &out[i].f[k]);
    }
    return n;
}

#endif
