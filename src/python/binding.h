/*
 * Declarations shared by the binding's files (cross-file internals: pp__*).
 *   hook.c    the frame-evaluation hook, the code -> trampoline cache, and
 *             activation (install, chain, take over, fork)
 *   names.c   qualified names on versions without co_qualname
 *   module.c  the Python-facing functions; the only place raising exceptions
 */
#ifndef PERFPY_BINDING_H
#define PERFPY_BINDING_H

#include "compat.h"
#include "perfpy/engine.h"

/* names.c. A code-extra slot holds a trampoline (16-byte aligned) or, on
 * versions without co_qualname, a pending name tagged with the low bit. */
static inline int pp__is_pending_name(void *extra)
{
    return ((uintptr_t)extra & 1u) != 0;
}
const char *pp__pending_name(void *extra);      /* NULL if not a name */
void pp__free_extra(void *extra);               /* the code-extra freefunc */
void pp__name_children(PyObject *code, const char *qualname, Py_ssize_t index);
int pp__name_existing_functions(Py_ssize_t index);   /* -1 with an exception */

/* hook.c: 0 on success, else -1 with *why set to a static or formatted
 * message (module.c turns it into an exception). */
enum pp_why {
    PP_OK = 0,
    PP_ERR_OTHER_INTERPRETER,
    PP_ERR_BACKEND_IN_USE,
    PP_ERR_EXTRA_INDEX,
    PP_ERR_ENGINE_OPEN,
    PP_ERR_PYTHON,          /* a Python exception is set */
};
typedef struct pp_activation_error {
    enum pp_why why;
    int err;                 /* negative errno for PP_ERR_ENGINE_OPEN */
    char message[512];
} pp_activation_error;

int pp__activate(const pp_backend_ops *ops, pp_activation_error *e);
void pp__deactivate(void);
/* sys.deactivate_stack_trampoline while perfpy's engine owns the hook:
 * off, with CPython's trampoline (if perfpy took it over) not handed back,
 * and no more names in CPython's map. */
void pp__deactivate_for_good(void);
/* Whether each new trampoline is also named in CPython's perf map (the
 * jitdump engine serving sys.activate_stack_trampoline("perf")). */
void pp__name_in_cpython_map(int on);
int pp__is_active(void);                 /* in the calling interpreter */
/* Whether the calling thread runs in the main interpreter, the one perfpy
 * serves (subinterpreters are refused). */
int pp__serves_this_interpreter(void);
const char *pp__backend_in_use(void);   /* NULL before the first activation */
/* Whether CPython's own trampoline (3.12+) is the interpreter's evaluator
 * now: 1, 0, or -1 with an exception (sys.is_stack_trampoline_active). */
int pp__cpython_trampoline_on(void);
/* module.c: CPython's own sys function NAME (borrowed; NULL before 3.12),
 * also once perfpy serves sys's (see module.c). */
PyObject *pp__cpython_sys_function(const char *name);
void pp__after_fork_child(void);
/* How many trampolines exist, and the extra index (for tests). */
size_t pp__trampolines(void);
Py_ssize_t pp__extra_index(void);
double pp__bytes_per_trampoline(void);

#endif
