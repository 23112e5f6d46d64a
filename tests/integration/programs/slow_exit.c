/* Preloaded by test_reliability_concurrency's daemon test: a destructor, run
 * by exit() after Py_FinalizeEx has freed the interpreter, that keeps the
 * process alive SLOW_EXIT_US microseconds longer. Daemon threads still
 * waiting for the GIL then reach the end of their timed waits before the
 * process ends, as they do when the machine is loaded: the window in which
 * CPython 3.10 writes into the freed interpreter (src/python/compat.h) is
 * widened from a few in a hundred runs to one in three or four. */
#include <stdlib.h>
#include <unistd.h>

__attribute__((destructor)) static void slow_exit(void)
{
    const char *us = getenv("SLOW_EXIT_US");

    if (us)
        usleep((useconds_t)atoi(us));
}
