/*
 * Folding: one perf sample (native frames, leaf first) into one profile
 * stack (root first) that reads as a Python developer thinks. The rules are
 * documented at the top of fold.c.
 */
#ifndef PERFPY_FOLD_H
#define PERFPY_FOLD_H

#include "perf_data.h"
#include "perf_script.h"
#include "profile/profile.h"

typedef struct pp_fold_opts {
    int no_native;           /* drop every native and kernel frame */
    const char *lines_dir;   /* where perfpy-<pid>.lines sidecars are; NULL: none */
    const pp_perf_data_info *jit;   /* the recording's jitdumps, after perf inject
                                       (frames in jitted-<pid>-<n>.so); NULL: none */
    int processes;           /* PP_PROCESSES_*: a root per process or not */
    int show_perfpy;         /* keep perfpy's own frames (engine, startup hook) */
    int threads;             /* a root per thread, "worker-1 (tid 4612)", under
                                its process's root when there is one */
} pp_fold_opts;

enum {
    PP_PROCESSES_AUTO = 0,   /* a root per process when there are two or more */
    PP_PROCESSES_SPLIT = 1,  /* a root per process, even for one */
    PP_PROCESSES_MERGE = 2,  /* no process roots: all processes in one graph */
};

typedef struct pp_folder pp_folder;

int pp_fold_open(pp_folder **out, pp_profile *p, const pp_fold_opts *opts);
/* Folds one sample into the profile. 0 or -ENOMEM. Has the signature of a
 * pp_script_sample_fn (ctx = the folder). */
int pp_fold_sample(void *folder, const pp_raw_sample *s);
/* Ends the folding: the process and thread roots named or taken away
 * (fold_proc.c), the profile's program name (most common comm) and
 * processes set; frees the folder (NULL is fine). 0, or -ENOMEM (the
 * profile is then whole but may keep its unnamed roots). */
int pp_fold_close(pp_folder *f);

/* pid runs in a container (another root, another PID namespace): its
 * stacks go under a root naming the container ("[container ROOT]", ROOT
 * its root directory as perfpy sees it), its process root says its pid
 * there too ("python3 (pid 4613, 7 in the container)"). Before
 * pp_fold_close. 0 or -ENOMEM. */
int pp_fold_process_container(pp_folder *f, int pid, int ns_pid, const char *root);

/* pid's command line (its root says it instead of its comm: "python3
 * app.py --port 80 (pid 4613)") and its service (the script or module it
 * runs), for the labels of its samples. Before pp_fold_close. 0 or
 * -ENOMEM. */
int pp_fold_process_command(pp_folder *f, int pid, const char *command, const char *service);
/* The service a Python command line runs, for the labels of its samples
 * (record names its default file after it too): "app" for `python
 * app.py` (options before it skipped), "pkg" for `python -m pkg`, else
 * the program's file name ("python3" for `python3 -c ...`). */
void pp_fold_service_of(char *const *argv, char *buf, size_t cap);

/* Something that happened on thread (pid, tid) of the recording, at a time
 * or over one: a process started or ended (sample mode's fork and exit
 * events), or what a thread waited for. The thread is made when it has no
 * sample yet. 0, or -ENOMEM/-EINVAL. */
int pp_fold_marker(pp_folder *f, int32_t pid, int32_t tid, pp_marker_kind kind,
                   uint64_t start_ns, uint64_t end_ns, const char *name);

/* Loads a sidecar for pid from a file (tests; the folder loads
 * <lines_dir>/perfpy-<pid>.lines by itself). Replaces what it had. */
int pp_fold_load_lines(pp_folder *f, int pid, const char *path);

/* The marker frames' names. */
#define PP_MARK_TRUNCATED "[truncated]"
#define PP_MARK_UNKNOWN "[unknown]"
#define PP_MARK_NATIVE "[native]"
#define PP_MARK_PERFPY "[perfpy]"

/* The leaf of a waiting task's stack (wall-clock mode with --async): what
 * its innermost coroutine awaits, PP_TASK_AWAITING and a type's name
 * ("[awaiting Future]"), or PP_TASK_READY when it awaits nothing (its turn
 * on the event loop is next). Such a stack is a task's own time, beside
 * its thread's: the summary keeps the two apart. */
#define PP_TASK_AWAITING "[awaiting "
#define PP_TASK_READY "[ready: its turn on the event loop]"
/* 1 when a marker frame's name is such a leaf. */
int pp_task_wait_marker(const char *name);

/* Why a thread was off the CPU: pp_wait_reason (profile/raw.h). */

/* "[off-CPU: sleep]" ...; NULL for PP_WAIT_NONE. */
const char *pp_wait_marker(int wait);
/* Its short name for summaries: "sleep", "I/O", "lock", "GIL", "child",
 * "CPU wait", "other"; "on-CPU" for PP_WAIT_NONE. */
const char *pp_wait_name(int wait);
/* The reason a marker frame's name stands for; PP_WAIT_NONE for any other. */
int pp_wait_of_marker(const char *name);

#endif
