/*
 * Runs every registered TEST in a child process, with a time limit, and
 * prints one line per test and a final "N passed, N failed, N skipped"
 * (a test that calls TEST_SKIP counts as skipped, its reason printed).
 *
 *   build/unit-tests [substring]     run the tests whose name contains it
 */
#include "test.h"

#include <sys/prctl.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 1024
#define TIME_LIMIT_S 120

static struct {
    const char *name, *file;
    test_fn fn;
} tests[MAX_TESTS];
static int ntests;
static char tmpdir[256];

void test_register(const char *name, const char *file, test_fn fn)
{
    if (ntests < MAX_TESTS) {
        tests[ntests].name = name;
        tests[ntests].file = file;
        tests[ntests].fn = fn;
        ntests++;
    }
}

/* Made by the parent before each test and removed after it, whatever the
 * test's fate. */
const char *test_tmpdir(void)
{
    return tmpdir;
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;

    if (!f)
        return NULL;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = (cap + 4096) * 2;
            buf = realloc(buf, cap);
            if (!buf)
                exit(1);
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void *test_exact_copy(const void *buf, size_t n)
{
    void *copy = malloc(n ? n : 1);

    if (!copy)
        exit(1);
    return memcpy(copy, buf, n);
}

int test_first_diff(const char *got, const char *want, const char **g, int *gn, const char **w,
                    int *wn)
{
    int line = 1;

    if (!strcmp(got, want))
        return 0;
    for (;;) {
        size_t a = strcspn(got, "\n"), b = strcspn(want, "\n");

        if (!*got || !*want || a != b || strncmp(got, want, a) != 0) {
            *g = *got ? got : "(none)";
            *gn = *got ? (int)a : 6;
            *w = *want ? want : "(none)";
            *wn = *want ? (int)b : 6;
            return line;
        }
        got += a + (got[a] != '\0');
        want += b + (want[b] != '\0');
        line++;
    }
}

static int rm_entry(const char *path, const struct stat *st, int flag,
                    struct FTW *ftw)
{
    (void)st; (void)flag; (void)ftw;
    return remove(path);
}

enum outcome { FAILED, PASSED, SKIPPED };

static enum outcome run_one(int i)
{
    pid_t pid;
    int status;

    fflush(stdout);
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/perfpy-unit-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return FAILED;
    }
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return FAILED;
    }
    if (pid == 0) {
        dup2(1, 2);   /* diagnostics next to the test's own line */
        alarm(TIME_LIMIT_S);
        tests[i].fn();
        fflush(NULL);
        _exit(0);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        printf("ok    %s\n", tests[i].name);
        return PASSED;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_EXIT) {
        printf("skip  %s\n", tests[i].name);
        return SKIPPED;
    }
    if (WIFSIGNALED(status))
        printf("FAIL  %s (%s) killed by signal %d (%s)%s\n", tests[i].name,
               tests[i].file, WTERMSIG(status), strsignal(WTERMSIG(status)),
               WTERMSIG(status) == SIGALRM ? ": time limit" : "");
    else
        printf("FAIL  %s (%s) exit %d\n", tests[i].name, tests[i].file,
               WEXITSTATUS(status));
    return FAILED;
}

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    int count[3] = {0, 0, 0};

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < ntests; i++) {
        if (filter && !strstr(tests[i].name, filter))
            continue;
        count[run_one(i)]++;
    }
    printf("%d passed, %d failed, %d skipped\n", count[PASSED], count[FAILED],
           count[SKIPPED]);
    return count[FAILED] ? 1 : 0;
}

int test_start_python(const char *python, const char *program, int *stdout_fd)
{
    int p[2];
    pid_t pid;

    if (pipe(p) != 0)
        TEST_FAIL_("pipe: %s", strerror(errno));
    if ((pid = fork()) == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);   /* a failed test leaves nothing running */
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl(python, python, "-S", "-c", program, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    *stdout_fd = p[0];
    return pid;
}

size_t test_pythons(test_python *v, size_t max, char *dir, size_t dlen)
{
    char file[600], line[2048], ver[32];
    ssize_t n = readlink("/proc/self/exe", dir, dlen - 1);
    FILE *f;
    size_t k = 0;
    int major;

    if (n <= 0)
        return 0;
    dir[n] = '\0';
    *strrchr(dir, '/') = '\0';
    snprintf(file, sizeof(file), "%s/pythons.txt", dir);
    if (!(f = fopen(file, "r")))
        return 0;
    while (k < max && fgets(line, sizeof(line), f))
        if (sscanf(line, "%511s %31s %63s", v[k].path, ver, v[k].ext) == 3 &&
            sscanf(ver, "%d.%d", &major, &v[k].minor) == 2)
            k++;
    fclose(f);
    return k;
}

void test_each_python(void (*fn)(const test_python *py, const char *dir), int min_minor)
{
    static test_python v[16];
    char dir[512];
    size_t n = test_pythons(v, 16, dir, sizeof(dir)), done = 0;

    for (size_t i = 0; i < n; i++) {
        pid_t child;
        int status;

        if (v[i].minor < min_minor)
            continue;
        fflush(stdout);
        if ((child = fork()) == 0) {
            fn(&v[i], dir);
            fflush(stdout);
            _exit(0);
        }
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            TEST_FAIL_("%s failed (status %#x)", v[i].path, status);
        done++;
    }
    if (!done)
        TEST_SKIP("no interpreter of 3.%d or newer in the build's pythons.txt", min_minor);
}
