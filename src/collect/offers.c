/*
 * What the running kernel offers wall.bpf.c (offers.h), read from its BTF
 * once per recording.
 */
#include "offers.h"

#include <bpf/btf.h>
#include <stdlib.h>
#include <string.h>

int pp__env_is_1(const char *name)
{
    const char *v = getenv(name);

    return v && strcmp(v, "1") == 0;
}

static int has_member(const struct btf *vm, const char *type, const char *member)
{
    int id = btf__find_by_name_kind(vm, type, BTF_KIND_STRUCT);
    const struct btf_type *t = id > 0 ? btf__type_by_id(vm, (__u32)id) : NULL;
    const struct btf_member *m = t ? btf_members(t) : NULL;

    for (int i = 0; t && i < btf_vlen(t); i++)
        if (strcmp(btf__name_by_offset(vm, m[i].name_off), member) == 0)
            return 1;
    return 0;
}

struct pp_kernel_offers pp__kernel_offers(void)
{
    struct btf *vm = btf__load_vmlinux_btf();
    struct pp_kernel_offers k = {0, 0, 0, 0, 0};

    if (!vm)
        return k;
    k.resume = !pp__env_is_1("PERFPY_SAMPLE_SYS_EXIT") &&
               btf__find_by_name_kind(vm, "btf_trace_sched_exit_tp", BTF_KIND_TYPEDEF) > 0;
    if (btf__find_by_name_kind(vm, "bpf_task_work_schedule_resume_impl", BTF_KIND_FUNC) > 0)
        k.task_work = 1;
    else if (btf__find_by_name_kind(vm, "bpf_task_work_schedule_resume", BTF_KIND_FUNC) > 0)
        k.task_work = 2;
    k.sched_info = !pp__env_is_1("PERFPY_SAMPLE_WAKEUPS") &&
                   has_member(vm, "task_struct", "sched_info") &&
                   has_member(vm, "sched_entity", "cfs_rq") && has_member(vm, "cfs_rq", "rq") &&
                   has_member(vm, "sched_info", "last_queued") &&
                   has_member(vm, "sched_info", "run_delay") && has_member(vm, "rq", "clock");
    k.uncharged = has_member(vm, "sched_entity", "cfs_rq") && has_member(vm, "cfs_rq", "rq") &&
                  has_member(vm, "rq", "clock") && has_member(vm, "rq", "clock_task");
    k.delayed = has_member(vm, "sched_entity", "sched_delayed");
    btf__free(vm);
    return k;
}
