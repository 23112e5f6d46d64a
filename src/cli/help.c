/*
 * The printer of the commands' --help lines (help.h).
 */
#include "help.h"

#include <stdlib.h>

static void fold_options(FILE *out, int width)
{
    static const char *const lines[][4] = {
        {"--processes WHEN", "a root per process, 'python3 (pid 4609)', above its",
         "stacks: auto (default) when two or more processes", "were sampled, split always, "
         "merge never (one graph)"},
        {"--show-perfpy", "keep perfpy's own frames: its startup hook, the",
         "engine making trampolines (default: hidden, their", "time counted as their caller's)"},
        {"--threads [HOW]", "a root per thread under its process's; HOW: merge",
         "(default) gives threads named alike one root ('worker-3',",
         "'worker-7' -> 'worker-*'), split one each (default: off)"},
    };

    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        fprintf(out, "      %-*s%s\n%*s%s\n%*s%s\n", width, lines[i][0], lines[i][1], width + 6,
                "", lines[i][2], width + 6, "", lines[i][3]);
}

void pp_help_print(FILE *out, const char *const *lines)
{
    for (size_t i = 0; lines[i]; i++) {
        if (lines[i][0] == '\001')
            fold_options(out, atoi(lines[i] + 1));
        else
            fprintf(out, "%s\n", lines[i]);
    }
}
