/*
 * Where the unwinder lets libdw look for a separate debug file by name
 * (debugpath.c's pp__debug_file_there, the gate before libdw's search, whose
 * last step loads a debuginfod client): each place elfutils 0.188's
 * find_debuginfo_in_path tries, made in a temporary tree, is seen; a tree
 * without the file is not.
 */
#include "native/unwind.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void make_file(const char *root, const char *rel)
{
    char path[4096], *s;
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", root, rel);
    for (s = path + strlen(root) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        mkdir(path, 0700);
        *s = '/';
    }
    ASSERT_TRUE((f = fopen(path, "w")) != NULL);
    fclose(f);
}

static void remove_tree(const char *root)
{
    char cmd[4200];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    ASSERT_EQ_INT(system(cmd), 0);
}

TEST(debug_file_seen_in_each_place_libdw_tries)
{
    char root[] = "/tmp/perfpy-test-debug-XXXXXX", file[4200], path[4200], places[7][4200];

    ASSERT_TRUE(mkdtemp(root) != NULL);
    snprintf(file, sizeof(file), "%s/usr/lib/x86_64-linux-gnu/libfoo.so.1", root);
    snprintf(path, sizeof(path), ":.debug:%s/debug", root);
    /* the file's directory, .debug under it, then the absolute entry
     * joined with the file's whole directory and each of its trailing
     * parts, and with none of them */
    snprintf(places[0], 4200, "usr/lib/x86_64-linux-gnu/libfoo.so.1.debug");
    snprintf(places[1], 4200, "usr/lib/x86_64-linux-gnu/.debug/libfoo.so.1.debug");
    snprintf(places[2], 4200, "debug%s/usr/lib/x86_64-linux-gnu/libfoo.so.1.debug", root);
    snprintf(places[3], 4200, "debug/usr/lib/x86_64-linux-gnu/libfoo.so.1.debug");
    snprintf(places[4], 4200, "debug/lib/x86_64-linux-gnu/libfoo.so.1.debug");
    snprintf(places[5], 4200, "debug/x86_64-linux-gnu/libfoo.so.1.debug");
    snprintf(places[6], 4200, "debug/libfoo.so.1.debug");
    for (size_t i = 0; i < 7; i++) {
        make_file(root, "usr/lib/x86_64-linux-gnu/libfoo.so.1");
        ASSERT_EQ_INT(pp__debug_file_there(path, file, "libfoo.so.1.debug", 0), 0);
        make_file(root, places[i]);
        if (!pp__debug_file_there(path, file, "libfoo.so.1.debug", 0))
            TEST_FAIL_("%s: not seen", places[i]);
        remove_tree(root);
        ASSERT_TRUE(mkdir(root, 0700) == 0);
    }
    /* a made-up name (no debuglink): the file's own name in .debug too */
    make_file(root, "usr/lib/x86_64-linux-gnu/.debug/libfoo.so.1");
    ASSERT_EQ_INT(pp__debug_file_there(path, file, "libfoo.so.1.debug", 0), 0);
    ASSERT_EQ_INT(pp__debug_file_there(path, file, "libfoo.so.1.debug", 1), 1);
    remove_tree(root);
}
