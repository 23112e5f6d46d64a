/*
 * Fuzz target: the ELF reader of perfpy doctor's symbols check
 * (pp_elf_symbols, src/cli/interp.c): section headers and the build-id
 * note of a file perfpy did not make. The input is written to a memfd and
 * read through /proc/self/fd, as doctor reads an interpreter. Checked: the
 * answer is 1, 0 or a negative errno; the build id is "" or lowercase hex
 * of even length; a repeated call gives the same answer. Built with
 * libFuzzer by `make fuzz`, replayed over tests/fuzz/corpus/elf/ by
 * `make test`.
 */
#include "cli/interp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int ask(const char *path, char *id, size_t cap)
{
    int rc = pp_elf_symbols(path, id, cap);
    size_t n = strlen(id);

    if (rc != 0 && rc != 1 && rc >= 0)
        abort();
    if (n % 2 || strspn(id, "0123456789abcdef") != n)
        abort();
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], id[64], again[64];
    int fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
    int rc;

    if (fd < 0)
        return 0;
    if (size && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    rc = ask(path, id, sizeof(id));
    if (ask(path, again, sizeof(again)) != rc || strcmp(id, again) != 0)
        abort();
    ask(path, id, 8);          /* a short buffer: no id rather than a cut one */
    close(fd);
    return 0;
}
