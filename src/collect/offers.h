#ifndef PERFPY_COLLECT_OFFERS_H
#define PERFPY_COLLECT_OFFERS_H
/*
 * What the running kernel offers the BPF program (offers.c).
 */
/* What the kernel offers wall.bpf.c, from its BTF: the tracepoint at the
 * end of the scheduler's switch, in the thread that runs again (resume:
 * sched_exit_tp, kernels from 2025 on; every stack is then captured there, and no
 * program runs at every system call's end); else which task-work kfunc
 * (task_work: 1 Linux 6.18's bpf_task_work_schedule_resume_impl, 2 its
 * later name without _impl, 0 none: before 6.18 stacks outside system
 * calls are captured as their threads stop); and whether the scheduler's
 * sched_info and run queues can be read (sched_info: else a sched_wakeup
 * program times the wake-ups); and whether a run queue's clock and task
 * clock can be (uncharged: the time a thread on a CPU was charged none,
 * the hypervisor's); and whether the scheduler can keep a sleeping thread
 * queued (delayed: sched_entity.sched_delayed, Linux 6.12+), whose moves
 * while asleep sched_info then counts wrong (wall.bpf.c's pp_on_migrate).
 * PERFPY_SAMPLE_WAKEUPS=1 and PERFPY_SAMPLE_SYS_EXIT=1 ask for the older
 * ways, for the tests that check them and the benchmarks that compare. */
struct pp_kernel_offers {
    int resume, task_work, sched_info, uncharged, delayed;
};

struct pp_kernel_offers pp__kernel_offers(void);
/* Whether the environment variable name is "1". */
int pp__env_is_1(const char *name);

#endif
