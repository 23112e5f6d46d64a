/*
 * Qualified names for code objects, the same on every version.
 *
 * From 3.11 a code object carries co_qualname ("Shape.area.<locals>.inner").
 * Before that it has only co_name ("inner"), and the qualname lives on the
 * function object, which a frame does not point to. So names.c rebuilds it
 * the way the compiler computes it, from the nesting of code objects:
 *
 *   <module>                       qualname of a child = its name
 *     Shape        (class body)    child = "Shape." + name
 *       area       (function)      child = "Shape.area.<locals>." + name
 *         inner                    -> "Shape.area.<locals>.inner"
 *
 * plus the compiler's one exception: a def declared `global` in its parent
 * is named as if at module level. When a code object first runs, its
 * children (in co_consts) are given their qualnames before any of them can
 * run. The name waits in the child's code-extra slot, tagged with the low
 * bit so it is never mistaken for a trampoline (those are 16-byte aligned),
 * and is freed when the trampoline replaces it or the code object dies.
 *
 * Functions that already existed when perfpy was first activated (their
 * parent ran before the hook) are found once through gc.get_objects() and
 * named from the function's __qualname__ when it agrees with co_name.
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

static char *untag(void *extra)
{
    return (char *)((uintptr_t)extra & ~(uintptr_t)1);
}

const char *pp__pending_name(void *extra)
{
    return pp__is_pending_name(extra) ? untag(extra) : NULL;
}

void pp__free_extra(void *extra)
{
    if (pp__is_pending_name(extra))
        free(untag(extra));
}

/* Gives code a pending name unless its slot is already taken. */
static void set_pending(PyObject *code, Py_ssize_t index, const char *qualname)
{
    size_t n = strlen(qualname);
    char *copy;

    if (pp_code_extra(code, index) != NULL)
        return;
    copy = malloc(n + 1);
    if (!copy)
        return;   /* the child is then named by co_name alone */
    memcpy(copy, qualname, n + 1);
    if (pp_code_set_extra(code, index, (void *)((uintptr_t)copy | 1u)) < 0) {
        PyErr_Clear();
        free(copy);
    }
}

static void name_child(PyObject *parent, const char *parent_qualname,
                       PyObject *child, Py_ssize_t index)
{
    PyObject *name = pp_code_name(child);
    const char *cname = PyUnicode_AsUTF8(name);
    const char *sep;
    char *buf;
    size_t need;

    if (!cname) {
        PyErr_Clear();
        return;
    }
    if (pp_code_is_function_scope(parent))
        sep = ".<locals>.";
    else if (PyUnicode_CompareWithASCIIString(pp_code_name(parent), "<module>") == 0)
        sep = NULL;   /* module level */
    else
        sep = ".";    /* class body */
    if (sep && pp_code_stores_global(parent, name))
        sep = NULL;
    if (!sep) {
        set_pending(child, index, cname);
        return;
    }
    need = strlen(parent_qualname) + strlen(sep) + strlen(cname) + 1;
    buf = malloc(need);
    if (!buf)
        return;
    snprintf(buf, need, "%s%s%s", parent_qualname, sep, cname);
    set_pending(child, index, buf);
    free(buf);
}

void pp__name_children(PyObject *code, const char *qualname, Py_ssize_t index)
{
    PyObject *consts = pp_code_consts(code);

    if (pp_have_co_qualname() || !consts || !PyTuple_Check(consts))
        return;   /* this CPython keeps co_qualname itself */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); i++) {
        PyObject *c = PyTuple_GET_ITEM(consts, i);
        if (PyCode_Check(c))
            name_child(code, qualname, c, index);
    }
}

/* The last dotted part of a qualname equals co_name: the function was not
 * renamed (functools.wraps copies another function's __qualname__). */
static int qualname_fits(const char *qualname, PyObject *co_name)
{
    const char *dot = strrchr(qualname, '.');
    const char *last = dot ? dot + 1 : qualname;

    return PyUnicode_CompareWithASCIIString(co_name, last) == 0;
}

static void name_function(PyObject *fn, Py_ssize_t index)
{
    PyObject *code = PyFunction_GET_CODE(fn);
    PyObject *qn = ((PyFunctionObject *)fn)->func_qualname;
    const char *s;

    if (!code || !PyCode_Check(code) || !qn || !PyUnicode_Check(qn))
        return;
    s = PyUnicode_AsUTF8(qn);
    if (!s) {
        PyErr_Clear();
        return;
    }
    if (qualname_fits(s, pp_code_name(code)))
        set_pending(code, index, s);
}

int pp__name_existing_functions(Py_ssize_t index)
{
    PyObject *gc, *objs;

    if (pp_have_co_qualname())
        return 0;   /* nothing to rebuild on this version */
    gc = PyImport_ImportModule("gc");
    if (!gc)
        return -1;
    objs = PyObject_CallMethod(gc, "get_objects", NULL);
    Py_DECREF(gc);
    if (!objs)
        return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(objs); i++) {
        PyObject *o = PyList_GET_ITEM(objs, i);
        if (PyFunction_Check(o))
            name_function(o, index);
    }
    Py_DECREF(objs);
    return 0;
}
