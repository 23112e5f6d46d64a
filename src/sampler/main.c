/*
 * perfpy-sample's main: perfpy's request read (request.h) and handed to
 * the part that does it (sampler.h). perfpy-sample is a program of its own
 * so that only it links libbpf and elfutils (perfpy and the module build
 * and run without them). Besides requests it answers two questions:
 *
 *   perfpy-sample --check    can sample mode sample here (perfpy doctor,
 *                            record's --mode auto)? exit 0, 1, or
 *                            PP_EXIT_NOT_BUILT without the BPF collector
 *   perfpy-sample --tables   the compiled structure offsets, as JSON lines
 *                            (the tests hold them against the headers)
 */
#include "record.h"
#include "sampler.h"
#include "cpython/pytables.h"
#include "collect/collect.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perfpy doctor's question: can sample mode sample here? The BPF program
 * loaded and attached as a recording would (a perf event on a thread,
 * its tracepoints), then closed. */
static int check(void)
{
    pp_collector *c;
    char why[512];

    int rc = pp_collect_open(&c, 99, 0, why, sizeof(why));

    if (rc != 0) {
        printf("%s\n", why);
        return rc == -ENOTSUP ? PP_EXIT_NOT_BUILT : PP_EXIT_FAIL;
    }
    pp_collect_close(c);
    printf("the BPF program loads and attaches (privileges, BPF, BTF)\n");
    return 0;
}

/* The compiled tables as JSON lines, one per version and flavour, in the
 * form scripts/gen-pytables --print gives the headers' (the tests compare
 * them field by field). */
static int print_tables(void)
{
    for (size_t i = 0; i < pp_py_ntables; i++) {
        const pp_py_table *t = &pp_py_tables[i];

#define JSON(name, headers, debug) \
        printf(", \"%s\": [%d, %d, %d]", #name, t->off.name, t->debug_at.name, t->debug_zero.name);
        printf("{\"table\": {\"version_hex\": %u, \"free_threaded\": %u, \"debug_size\": %u}",
               t->version_hex, t->free_threaded, t->debug_size);
        PP_PY_FIELDS(JSON)
        printf("}\n");
#undef JSON
    }
    return 0;
}

int main(int argc, char **argv)
{
    pp_request rq;
    char why[512];
    int rc;

    /* Blocks of 128 KiB and more are mapped on their own, at a fixed
     * threshold. glibc's own threshold rises to the largest mapped block
     * freed (megabytes, at the start), after which the profile's growing
     * arrays and the sample log's chunks came from the heap, each realloc
     * or shrink leaving a hole the heap kept: 2 minutes of a 50-thread
     * server in wall-clock mode left 9.7 MB free inside a 21 MB heap
     * (mallinfo2), with the threshold fixed 0.1 MB. */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    if (argc == 2 && strcmp(argv[1], "--check") == 0)
        return check();
    if (argc == 2 && strcmp(argv[1], "--tables") == 0)
        return print_tables();
    if ((rc = pp_request_read(argc, argv, &rq, why, sizeof(why))) != 0) {
        fprintf(stderr, "perfpy-sample: %s\n", why);
        return rc;
    }
    if (rq.what == PP_REQUEST_DUMP)
        return pp__dump_main(&rq);
    return rq.mode == PP_MODE_READ ? pp__read_main(&rq) : pp__record_main(&rq);
}
