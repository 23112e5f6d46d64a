/*
 * Source paths as the views show them (src/profile/paths.c): each file
 * relative to its sys.path entry, told from the path (site-packages,
 * dist-packages, the standard library of any interpreter's layout) or from
 * the profile (the directory of the script run as __main__, the common
 * directory of the program's other files); labels with the short path,
 * the full one kept in the frame.
 */
#include "profile/profile.h"
#include "test.h"

static uint32_t frame(pp_profile *p, pp_frame_kind k, const char *name, const char *file,
                      int line)
{
    int64_t id = pp_profile_frame(p, k, name, strlen(name), file, strlen(file), line);

    ASSERT_TRUE(id >= 0);
    return (uint32_t)id;
}

TEST(paths_kind_and_entry_of_every_layout)
{
    static const struct {
        const char *path;
        pp_path_kind kind;
        const char *rel;
    } cases[] = {
        {"/home/a/shop/.venv/lib/python3.11/site-packages/flask/app.py", PP_PATH_LIBRARY,
         "flask/app.py"},
        {"/usr/lib/python3/dist-packages/requests/api.py", PP_PATH_LIBRARY, "requests/api.py"},
        {"/usr/local/lib/python3.12/dist-packages/x.py", PP_PATH_LIBRARY, "x.py"},
        /* a venv inside a package's tree: the innermost entry */
        {"/opt/site-packages/app/.venv/lib/python3.13/site-packages/np/core.py",
         PP_PATH_LIBRARY, "np/core.py"},
        {"/usr/lib/python3.11/threading.py", PP_PATH_STDLIB, "threading.py"},
        {"/root/.pyenv/versions/3.8.18/lib/python3.8/concurrent/futures/thread.py",
         PP_PATH_STDLIB, "concurrent/futures/thread.py"},
        {"/usr/lib64/python3.12/json/decoder.py", PP_PATH_STDLIB, "json/decoder.py"},
        {"/opt/py/lib/python3.13t/queue.py", PP_PATH_STDLIB, "queue.py"},
        {"/opt/pypy/lib/pypy3.10/os.py", PP_PATH_STDLIB, "os.py"},
        {"<frozen importlib._bootstrap>", PP_PATH_SPECIAL, "<frozen importlib._bootstrap>"},
        {"<string>", PP_PATH_SPECIAL, "<string>"},
        {"", PP_PATH_SPECIAL, ""},
        /* not an interpreter's directory: the program's */
        {"/srv/lib/python/x.py", PP_PATH_PROGRAM, "/srv/lib/python/x.py"},
        {"/srv/lib/pythonic/x.py", PP_PATH_PROGRAM, "/srv/lib/pythonic/x.py"},
        {"/srv/site-packages", PP_PATH_PROGRAM, "/srv/site-packages"},
        {"app.py", PP_PATH_PROGRAM, "app.py"},
    };

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t cut = 99;
        pp_path_kind k = pp_path_kind_of(cases[i].path, &cut);
        if (k != cases[i].kind)
            TEST_FAIL_("%s: kind %d, want %d", cases[i].path, k, cases[i].kind);
        ASSERT_EQ_STR(pp_path_rel(NULL, cases[i].path), cases[i].rel);
        ASSERT_EQ_STR(cases[i].path + cut, cases[i].rel);
    }
}

/* Two checkouts of one program: the same relative paths. */
TEST(paths_relative_to_the_scripts_directory)
{
    pp_profile p;
    pp_path_roots r;
    uint32_t ids[4];

    ASSERT_OK(pp_profile_init(&p));
    ids[0] = frame(&p, PP_FRAME_PYTHON, "<module>", "/home/a/shop/server.py", 1);
    ids[1] = frame(&p, PP_FRAME_PYTHON, "handle", "/home/a/shop/shop/views.py", 12);
    ids[2] = frame(&p, PP_FRAME_PYTHON, "wait", "/usr/lib/python3.11/threading.py", 300);
    ids[3] = frame(&p, PP_FRAME_NATIVE, "read", "/usr/lib/libc.so.6", 0);
    ASSERT_TRUE(pp_profile_add(&p, ids, 4, 1, 1) >= 0);
    /* a thread's stack: threading's run() first, then the program's code
     * outside the script's directory's tree: under the common directory */
    {
        uint32_t t[3] = {ids[2], frame(&p, PP_FRAME_PYTHON, "work", "/home/a/tools/w/job.py", 3),
                         frame(&p, PP_FRAME_PYTHON, "step", "/home/a/tools/x/step.py", 9)};
        ASSERT_TRUE(pp_profile_add(&p, t, 3, 1, 1) >= 0);
    }
    ASSERT_OK(pp_path_roots_find(&p, &r));
    ASSERT_EQ_UINT(r.n, 2);
    ASSERT_EQ_STR(r.dirs[0], "/home/a/shop/");
    ASSERT_EQ_STR(r.dirs[1], "/home/a/tools/");
    ASSERT_EQ_STR(pp_path_rel(&r, "/home/a/shop/server.py"), "server.py");
    ASSERT_EQ_STR(pp_path_rel(&r, "/home/a/shop/shop/views.py"), "shop/views.py");
    ASSERT_EQ_STR(pp_path_rel(&r, "/home/a/tools/w/job.py"), "w/job.py");
    ASSERT_EQ_STR(pp_path_rel(&r, "/usr/lib/python3.11/threading.py"), "threading.py");
    ASSERT_EQ_STR(pp_path_rel(&r, "/elsewhere/x.py"), "/elsewhere/x.py");
    ASSERT_EQ_STR(pp_path_rel(&r, "/home/a/shop/"), "/home/a/shop/");   /* never empty */
    pp_path_roots_free(&r);
    {   /* the labels: short in the views, the frame keeps the full path */
        pp_labels l;
        ASSERT_OK(pp_labels_make(&p, &l));
        ASSERT_EQ_STR(l.label[ids[1]], "handle (shop/views.py:12)");
        ASSERT_EQ_STR(l.label[ids[2]], "wait (threading.py:300)");
        ASSERT_EQ_STR(l.label[ids[3]], "read");
        ASSERT_EQ_STR(l.rel[ids[1]], "shop/views.py");
        ASSERT_EQ_STR(p.frames[ids[1]].label, "handle (/home/a/shop/shop/views.py:12)");
        pp_labels_free(&l);
    }
    pp_profile_free(&p);
}

/* A common directory one level deep ("/home/") says nothing: full paths. */
TEST(paths_no_common_directory_above_two_levels)
{
    pp_profile p;
    pp_path_roots r;
    uint32_t a, b;

    ASSERT_OK(pp_profile_init(&p));
    a = frame(&p, PP_FRAME_PYTHON, "f", "/home/a/x.py", 1);
    b = frame(&p, PP_FRAME_PYTHON, "g", "/home/b/y.py", 1);
    ASSERT_TRUE(pp_profile_add(&p, (uint32_t[]){a, b}, 2, 1, 1) >= 0);
    ASSERT_OK(pp_path_roots_find(&p, &r));
    ASSERT_EQ_UINT(r.n, 0);
    ASSERT_EQ_STR(pp_path_rel(&r, "/home/a/x.py"), "/home/a/x.py");
    pp_path_roots_free(&r);
    pp_profile_free(&p);
}
