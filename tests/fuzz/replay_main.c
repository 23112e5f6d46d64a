/*
 * Replays fuzz corpora without libFuzzer, so the ordinary test run (and the
 * sanitizer builds) feed every committed input to every parser:
 *
 *   build/fuzz-replay-<name> tests/fuzz/corpus/<name>/...
 *
 * Each argument is a file or a directory of files. Prints
 * "N passed, 0 failed"; a crash or sanitizer report ends the process.
 */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;

    if (!f) {
        perror(path);
        return -1;
    }
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            buf = realloc(buf, cap);
            if (!buf)
                abort();
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    /* An exact-size copy, so ASan sees reads past the input's end. */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact)
        abort();
    memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;

    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        if (run_file(path) < 0)
            return -1;
        (*count)++;
        return 0;
    }
    DIR *d = opendir(path);
    struct dirent *e;
    if (!d) {
        perror(path);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        char child[PATH_MAX];
        if (e->d_name[0] == '.')
            continue;
        snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
        if (run_path(child, count) < 0) {
            closedir(d);
            return -1;
        }
    }
    closedir(d);
    return 0;
}

int main(int argc, char **argv)
{
    int count = 0;

    for (int i = 1; i < argc; i++)
        if (run_path(argv[i], &count) < 0) {
            printf("0 passed, 1 failed\n");
            return 1;
        }
    printf("%d passed, 0 failed\n", count);
    return 0;
}
