/*
 * The perf-map backend and the engine around it: exact line format, names
 * that cannot break a line, whole lines under concurrent writers, refusal
 * of planted symlinks and foreign files, sticky errors, fork children.
 */
#include "test.h"
#include "perfpy/engine.h"
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *map_path(pid_t pid)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
    return path;
}

/* Each test runs in its own child, so its pid's map is its own. */
static void remove_own_map(void)
{
    unlink(map_path(getpid()));
}

static pp_symbol sym_named(const char *q, const char *f, int line)
{
    pp_symbol s;
    memset(&s, 0, sizeof(s));
    s.qualname = q;
    s.filename = f;
    s.firstlineno = line;
    return s;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

TEST(symbol_name_is_cpython_format_and_one_line)
{
    char buf[128];
    pp_symbol s = sym_named("Shape.area.<locals>.inner", "/src/a b.py", 3);

    ASSERT_EQ_UINT(pp_symbol_name(buf, sizeof(buf), &s),
                   strlen("py::Shape.area.<locals>.inner:/src/a b.py"));
    ASSERT_EQ_STR(buf, "py::Shape.area.<locals>.inner:/src/a b.py");
    s = sym_named("evil\nname\r\t", "/x\n.py", 1);
    pp_symbol_name(buf, sizeof(buf), &s);
    ASSERT_EQ_STR(buf, "py::evil?name??:/x?.py");
}

TEST(symbol_name_truncates_safely_and_reports_needed_length)
{
    char buf[8];
    pp_symbol s = sym_named("abcdefghij", "f.py", 1);
    size_t need = pp_symbol_name(buf, sizeof(buf), &s);

    ASSERT_EQ_UINT(need, strlen("py::abcdefghij:f.py"));
    ASSERT_EQ_STR(buf, "py::abc");
    ASSERT_EQ_UINT(pp_symbol_name(NULL, 0, &s), need);
}

TEST(engine_writes_one_exact_line_per_trampoline_before_returning)
{
    pp_engine *e;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    pp_symbol s1 = sym_named("foo", "/src/example.py", 1);
    pp_symbol s2 = sym_named("Shape.area", "/src/shapes.py", 14);
    pp_trampoline_fn f1, f2;
    char expect[256];
    char *text;
    size_t len;

    remove_own_map();
    ASSERT_OK(pp_engine_open(&e, &cfg));
    ASSERT_EQ_STR(pp_engine_backend_name(e), "perf");
    ASSERT_OK(pp_engine_register(e, &s1, &f1));
    /* Already in the file, whole, before the trampoline can run. */
    text = test_read_file(map_path(getpid()), &len);
    snprintf(expect, sizeof(expect), "%lx %zx py::foo:/src/example.py\n",
             (unsigned long)(uintptr_t)f1, pp_template_size());
    ASSERT_EQ_STR(text, expect);
    free(text);
    ASSERT_OK(pp_engine_register(e, &s2, &f2));
    ASSERT_TRUE(f1 != f2);
    ASSERT_EQ_UINT(pp_engine_trampolines(e), 2);
    ASSERT_LE_INT(pp_engine_bytes_per_trampoline(e), 64);
    ASSERT_OK(pp_engine_close(e));
    text = test_read_file(map_path(getpid()), &len);
    ASSERT_EQ_INT(count_lines(text), 2);
    ASSERT_CONTAINS(text, " py::Shape.area:/src/shapes.py\n");
    free(text);
    remove_own_map();
}

TEST(map_file_is_private_to_the_user)
{
    pp_engine *e;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    struct stat st;

    remove_own_map();
    ASSERT_OK(pp_engine_open(&e, &cfg));
    ASSERT_EQ_INT(stat(map_path(getpid()), &st), 0);
    ASSERT_EQ_UINT(st.st_mode & 0777, 0600);
    ASSERT_OK(pp_engine_close(e));
    remove_own_map();
}

TEST(symlink_planted_at_the_map_path_is_refused_and_target_untouched)
{
    char target[512];
    pp_engine *e = NULL;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    char *text;

    snprintf(target, sizeof(target), "%s/victim", test_tmpdir());
    FILE *f = fopen(target, "w");
    ASSERT_TRUE(f != NULL);
    fputs("precious\n", f);
    fclose(f);
    remove_own_map();
    ASSERT_EQ_INT(symlink(target, map_path(getpid())), 0);
    ASSERT_EQ_INT(pp_engine_open(&e, &cfg), -ELOOP);
    text = test_read_file(target, NULL);
    ASSERT_EQ_STR(text, "precious\n");
    free(text);
    remove_own_map();
}

TEST(dangling_symlink_at_the_map_path_creates_nothing)
{
    char target[512];
    pp_engine *e = NULL;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};

    snprintf(target, sizeof(target), "%s/not-there", test_tmpdir());
    remove_own_map();
    ASSERT_EQ_INT(symlink(target, map_path(getpid())), 0);
    ASSERT_EQ_INT(pp_engine_open(&e, &cfg), -ELOOP);
    ASSERT_TRUE(access(target, F_OK) != 0);
    remove_own_map();
}

TEST(fifo_planted_at_the_map_path_is_refused_without_blocking)
{
    pp_engine *e = NULL;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    int reader;

    remove_own_map();
    ASSERT_EQ_INT(mkfifo(map_path(getpid()), 0600), 0);
    /* With a reader the write-open would succeed: the type check refuses. */
    reader = open(map_path(getpid()), O_RDONLY | O_NONBLOCK);
    ASSERT_TRUE(reader >= 0);
    ASSERT_EQ_INT(pp_engine_open(&e, &cfg), -EPERM);
    close(reader);
    remove_own_map();
}

TEST(file_of_another_user_is_refused)
{
    pp_engine *e = NULL;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    int fd;

    if (geteuid() != 0)
        TEST_SKIP("needs root: only root can give a file to another user");
    remove_own_map();
    fd = open(map_path(getpid()), O_CREAT | O_WRONLY, 0666);
    ASSERT_TRUE(fd >= 0);
    ASSERT_EQ_INT(fchown(fd, 65534, 65534), 0);
    close(fd);
    ASSERT_EQ_INT(pp_engine_open(&e, &cfg), -EPERM);
    ASSERT_EQ_INT(access(map_path(getpid()), F_OK), 0);
    struct stat st;
    ASSERT_EQ_INT(stat(map_path(getpid()), &st), 0);
    ASSERT_EQ_INT(st.st_size, 0);
    remove_own_map();
}

struct writer_arg {
    pp_engine *e;
    int id;
    int n;
};

static void *writer(void *p)
{
    struct writer_arg *w = p;
    char name[64];

    for (int i = 0; i < w->n; i++) {
        /* Long names make torn writes likely if writes were not whole. */
        char file[600];
        memset(file, 'a' + w->id, sizeof(file) - 1);
        file[sizeof(file) - 1] = '\0';
        snprintf(name, sizeof(name), "t%d_f%d", w->id, i);
        pp_symbol s = sym_named(name, file, i);
        pp_trampoline_fn fn;
        if (pp_engine_register(w->e, &s, &fn) != 0)
            return (void *)1;
    }
    return NULL;
}

/* Checks that every line of text is a whole, well-formed map line. */
static int all_lines_whole(const char *text, int *count)
{
    regex_t re;
    char *copy = strdup(text), *save = NULL;
    int ok = 1;

    regcomp(&re, "^[0-9a-f]+ [0-9a-f]+ py::t[0-9]+_f[0-9]+:[a-z]+$", REG_EXTENDED | REG_NOSUB);
    *count = 0;
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        (*count)++;
        if (regexec(&re, l, 0, NULL, 0) != 0) {
            printf("    bad line: %.80s...\n", l);
            ok = 0;
        }
    }
    regfree(&re);
    free(copy);
    return ok;
}

TEST(concurrent_threads_write_whole_lines)
{
    pp_engine *e;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    pthread_t t[8];
    struct writer_arg w[8];
    char *text;
    int lines;

    remove_own_map();
    ASSERT_OK(pp_engine_open(&e, &cfg));
    for (int i = 0; i < 8; i++) {
        w[i] = (struct writer_arg){e, i, 500};
        pthread_create(&t[i], NULL, writer, &w[i]);
    }
    for (int i = 0; i < 8; i++) {
        void *r;
        pthread_join(t[i], &r);
        ASSERT_EQ_PTR(r, NULL);
    }
    ASSERT_EQ_UINT(pp_engine_trampolines(e), 4000);
    ASSERT_OK(pp_engine_close(e));
    text = test_read_file(map_path(getpid()), NULL);
    ASSERT_TRUE(all_lines_whole(text, &lines));
    ASSERT_EQ_INT(lines, 4000);
    free(text);
    remove_own_map();
}

TEST(concurrent_processes_appending_to_one_map_never_tear_lines)
{
    /* Two engines in two processes writing the same path (as two JITs in
     * one process would): O_APPEND + one write per line keeps lines whole. */
    pid_t kids[4];
    char *text;
    int lines;
    pid_t me = getpid();
    char path[64];

    snprintf(path, sizeof(path), "%s", map_path(me));
    unlink(path);
    for (int k = 0; k < 4; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            /* Write into the parent's path: open it directly with the
             * same flags the backend uses. */
            int fd = pp__open_private(path, O_APPEND);
            if (fd < 0)
                _exit(2);
            for (int i = 0; i < 500; i++) {
                char line[700], file[600];
                memset(file, 'a' + k, sizeof(file) - 1);
                file[sizeof(file) - 1] = '\0';
                int n = snprintf(line, sizeof(line), "%x 10 py::t%d_f%d:%s\n",
                                 0x1000 + i * 16, k, i, file);
                if (pp__write_all(fd, line, (size_t)n) != 0)
                    _exit(3);
            }
            _exit(0);
        }
    }
    for (int k = 0; k < 4; k++) {
        int st;
        waitpid(kids[k], &st, 0);
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    text = test_read_file(path, NULL);
    ASSERT_TRUE(all_lines_whole(text, &lines));
    ASSERT_EQ_INT(lines, 2000);
    free(text);
    unlink(path);
}

TEST(fork_child_gets_its_own_map_with_inherited_entries)
{
    pp_engine *e;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    pp_symbol a = sym_named("inherited", "/p.py", 1);
    pp_trampoline_fn fa;
    pid_t child;
    int st;
    char *parent_text, *child_text;

    remove_own_map();
    ASSERT_OK(pp_engine_open(&e, &cfg));
    ASSERT_OK(pp_engine_register(e, &a, &fa));
    child = fork();
    if (child == 0) {
        pp_symbol b = sym_named("child_only", "/c.py", 2);
        pp_trampoline_fn fb;
        if (pp_engine_fork_child(e) != 0 || pp_engine_fork_child(e) != 0)
            _exit(2);
        if (pp_engine_register(e, &b, &fb) != 0)
            _exit(3);
        _exit(pp_engine_close(e) == 0 ? 0 : 4);
    }
    ASSERT_EQ_INT(waitpid(child, &st, 0), child);
    ASSERT_TRUE(WIFEXITED(st));
    ASSERT_EQ_INT(WEXITSTATUS(st), 0);
    {
        pp_symbol c = sym_named("parent_after_fork", "/p.py", 3);
        pp_trampoline_fn fc;
        ASSERT_OK(pp_engine_register(e, &c, &fc));
    }
    ASSERT_OK(pp_engine_close(e));
    parent_text = test_read_file(map_path(getpid()), NULL);
    child_text = test_read_file(map_path(child), NULL);
    ASSERT_TRUE(child_text != NULL);
    ASSERT_CONTAINS(child_text, " py::inherited:/p.py\n");
    ASSERT_CONTAINS(child_text, " py::child_only:/c.py\n");
    ASSERT_TRUE(strstr(child_text, "parent_after_fork") == NULL);
    ASSERT_EQ_INT(count_lines(child_text), 2);
    ASSERT_TRUE(strstr(parent_text, "child_only") == NULL);
    ASSERT_EQ_INT(count_lines(parent_text), 2);
    free(parent_text);
    free(child_text);
    unlink(map_path(child));
    remove_own_map();
}

/* A fresh map engine holding one trampoline named q (from /p.py). */
static int engine_with_one(pp_engine **e, const char *q)
{
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    pp_symbol a = sym_named(q, "/p.py", 1);
    pp_trampoline_fn fa;
    int rc;

    remove_own_map();
    rc = pp_engine_open(e, &cfg);
    return rc < 0 ? rc : pp_engine_register(*e, &a, &fa);
}

/* CPython's rule, once perfpy took CPython's own trampoline over: the
 * child's map holds what the child writes, and what another writer of the
 * child put there first (CPython's persist-after-fork copy: a line written
 * through a descriptor the child keeps open), not the parent's entries.
 * Twin: fork_child_gets_its_own_map_with_inherited_entries. */
TEST(fork_child_without_inheriting_keeps_only_the_childs_and_cpythons)
{
    pp_engine *e;
    pid_t child;
    int st;
    char *child_text;

    ASSERT_OK(engine_with_one(&e, "inherited"));
    pp_engine_set_fork_inherit_map(e, 0);
    child = fork();
    if (child == 0) {
        pp_symbol b = sym_named("child_only", "/c.py", 2);
        pp_trampoline_fn fb;
        const char *copy = "1000 10 py::cpythons_copy:/p.py\n";
        int fd = open(map_path(getpid()), O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0600);
        if (fd < 0 || write(fd, copy, strlen(copy)) != (ssize_t)strlen(copy))
            _exit(5);
        if (pp_engine_fork_child(e) != 0)
            _exit(2);
        if (pp_engine_register(e, &b, &fb) != 0)
            _exit(3);
        close(fd);
        _exit(pp_engine_close(e) == 0 ? 0 : 4);
    }
    ASSERT_TRUE(waitpid(child, &st, 0) == child && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT_OK(pp_engine_close(e));
    child_text = test_read_file(map_path(child), NULL);
    ASSERT_TRUE(child_text != NULL && strstr(child_text, "inherited") == NULL);
    ASSERT_EQ_INT(count_lines(child_text), 2);
    ASSERT_CONTAINS(child_text, " py::cpythons_copy:/p.py\n");
    ASSERT_CONTAINS(child_text, " py::child_only:/c.py\n");
    free(child_text);
    unlink(map_path(child));
    remove_own_map();
}

TEST(registration_notices_a_fork_by_itself)
{
    pp_engine *e;
    pid_t child;
    int st;
    char *child_text;

    ASSERT_OK(engine_with_one(&e, "before"));
    child = fork();
    if (child == 0) {
        pp_symbol b = sym_named("after", "/c.py", 2);
        pp_trampoline_fn fb;
        _exit(pp_engine_register(e, &b, &fb) == 0 ? 0 : 3);
    }
    waitpid(child, &st, 0);
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    child_text = test_read_file(map_path(child), NULL);
    ASSERT_CONTAINS(child_text, "py::before:/p.py\n");
    ASSERT_CONTAINS(child_text, "py::after:/c.py\n");
    free(child_text);
    unlink(map_path(child));
    ASSERT_OK(pp_engine_close(e));
    remove_own_map();
}

TEST(write_errors_are_sticky_and_reported_by_close)
{
    pp_engine *e;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops};
    pp_symbol a = sym_named("f", "/p.py", 1);
    pp_trampoline_fn fn = NULL;
    int devfull, mapfd;
    char fdpath[64];

    remove_own_map();
    ASSERT_OK(pp_engine_open(&e, &cfg));
    /* Swap the engine's map descriptor for /dev/full: every write fails
     * with ENOSPC, as on a full disk. */
    devfull = open("/dev/full", O_WRONLY);
    ASSERT_TRUE(devfull >= 0);
    snprintf(fdpath, sizeof(fdpath), "%s", map_path(getpid()));
    for (mapfd = 3; mapfd < 64; mapfd++) {
        char link[64], dest[256];
        ssize_t n;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", mapfd);
        n = readlink(link, dest, sizeof(dest) - 1);
        if (n > 0) {
            dest[n] = '\0';
            if (strcmp(dest, fdpath) == 0)
                break;
        }
    }
    ASSERT_LT_INT(mapfd, 64);
    ASSERT_EQ_INT(dup2(devfull, mapfd), mapfd);
    ASSERT_EQ_INT(pp_engine_register(e, &a, &fn), -ENOSPC);
    ASSERT_EQ_PTR(fn, NULL);
    ASSERT_EQ_INT(pp_engine_register(e, &a, &fn), -ENOSPC);
    ASSERT_EQ_INT(pp_engine_close(e), -ENOSPC);
    close(devfull);
    remove_own_map();
}

TEST(lines_sidecar_gives_each_trampoline_its_first_line)
{
    pp_engine *e;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops, .lines_dir = test_tmpdir()};
    pp_symbol a = sym_named("foo", "/src/example.py", 42);
    pp_trampoline_fn fn;
    char path[512], expect[128];
    char *text;

    remove_own_map();
    ASSERT_OK(pp_engine_open(&e, &cfg));
    ASSERT_OK(pp_engine_register(e, &a, &fn));
    ASSERT_OK(pp_engine_close(e));
    snprintf(path, sizeof(path), "%s/perfpy-%d.lines", test_tmpdir(), (int)getpid());
    text = test_read_file(path, NULL);
    snprintf(expect, sizeof(expect), "%lx %zx 42\n", (unsigned long)(uintptr_t)fn,
             pp_template_size());
    ASSERT_EQ_STR(text, expect);
    free(text);
    remove_own_map();
}

TEST(missing_lines_directory_fails_open_and_leaves_no_map_behind_open)
{
    pp_engine *e = NULL;
    pp_engine_config cfg = {.backend = &pp_perfmap_ops,
                            .lines_dir = "/nonexistent/perfpy-test-dir"};

    remove_own_map();
    ASSERT_EQ_INT(pp_engine_open(&e, &cfg), -ENOENT);
    ASSERT_EQ_PTR(e, NULL);
    remove_own_map();
}

/* A writer that stopped (CPython's jitdump writer after its deactivation)
 * keeps a valid descriptor, but no longer on the file: the path is free for
 * the engine and a late write of the old writer lands nowhere. */
TEST(detach_writers_frees_the_path)
{
    char path[64], buf[8];
    int fd, other;
    struct stat a, b;

    snprintf(path, sizeof(path), "/tmp/perfpy-ut-detach-%d", (int)getpid());
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    ASSERT_TRUE(fd >= 0);
    other = open("/dev/null", O_RDONLY);    /* an unrelated descriptor */
    ASSERT_TRUE(other >= 0);
    ASSERT_EQ_INT(pp__open_in_this_process(path), 1);
    ASSERT_OK(pp_file_detach_writers(path));
    ASSERT_EQ_INT(pp__open_in_this_process(path), 0);
    ASSERT_EQ_INT(write(fd, "late", 4), 4);     /* still a valid descriptor */
    ASSERT_EQ_INT(stat(path, &a), 0);
    ASSERT_EQ_INT(a.st_size, 0);                /* nothing reached the file */
    ASSERT_EQ_INT(fstat(other, &b), 0);         /* the other one untouched */
    ASSERT_EQ_INT(read(other, buf, sizeof(buf)), 0);
    ASSERT_OK(pp_file_detach_writers(path));   /* none left: still 0 */
    unlink(path);
}
