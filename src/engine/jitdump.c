/* Placeholder until the jitdump backend lands (issue: jitdump mode). */
#include "internal.h"

#include <errno.h>

static size_t slot(size_t code_size) { return (code_size + 15) & ~(size_t)15; }
static int nosys_open(pp_backend **out, const char *dir)
{
    (void)out; (void)dir;
    return -ENOSYS;
}

const pp_backend_ops pp_jitdump_ops = {
    .name = "perf_jit", .slot_size = slot, .open = nosys_open,
};
