/*
 * A live process's memory (mem.h): process_vm_readv, one call per read.
 */
#include "mem.h"

#include <errno.h>
#include <sys/uio.h>

static int read_pid(const pp_mem *m, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t n;

    if (!addr)
        return -EFAULT;
    n = process_vm_readv(m->pid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)len)
        return 0;
    return n < 0 ? -errno : -EFAULT;
}

pp_mem pp_mem_of_pid(pid_t pid)
{
    return (pp_mem){pid, read_pid, NULL};
}
