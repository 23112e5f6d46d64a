/*
 * Another tool's frame-evaluation hook (a stand-in for a debugger or a
 * tracer written in C), for the chaining tests: it counts frames and calls
 * whatever evaluator was installed before it. Built by the tests for each
 * interpreter; uses perfpy's compat.h only to spell the per-version hook.
 */
#include "compat.h"

static pp_evaluator prev;
static long frames;
static PyInterpreterState *interp;

static PyObject *other_eval(PP_EVAL_PARAMS)
{
    frames++;
    return PP_EVAL_CALL(prev);
}

static PyObject *install(PyObject *self, PyObject *unused)
{
    interp = PyThreadState_Get()->interp;
    prev = pp_get_evaluator(interp);
    pp_set_evaluator(interp, other_eval);
    Py_RETURN_NONE;
}

static PyObject *uninstall(PyObject *self, PyObject *unused)
{
    pp_set_evaluator(interp, prev);
    Py_RETURN_NONE;
}

static PyObject *count(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(frames);
}

static PyObject *is_current(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(pp_get_evaluator(PyThreadState_Get()->interp) == other_eval);
}

static PyMethodDef methods[] = {
    {"install", install, METH_NOARGS, NULL},
    {"uninstall", uninstall, METH_NOARGS, NULL},
    {"count", count, METH_NOARGS, NULL},
    {"is_current", is_current, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "otherhook", NULL, -1, methods,
                                 NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_otherhook(void);
PyMODINIT_FUNC PyInit_otherhook(void)
{
    return PyModule_Create(&def);
}
