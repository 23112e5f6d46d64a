/*
 * Where libdw's search for a separate debug file by name would look
 * (unwind.h's pp__debug_file_there): plain C, so that its test runs on
 * every machine, where the unwinder (libdw, x86_64) is built or not.
 */
#include "unwind.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Whether a file libdw's search by name (its find_debuginfo_in_path,
 * elfutils 0.188) would try is there: name (the debuglink, or
 * file_name's basename with ".debug"), and file_name's basename too when
 * the name was made up, in each place of path: "" file_name's directory,
 * a relative entry under it, an absolute one with that directory's
 * trailing parts below it (all of them, then none). */
int pp__debug_file_there(const char *path, const char *file_name, const char *name,
                         int made_up)
{
    const char *base = strrchr(file_name, '/') ? strrchr(file_name, '/') + 1 : file_name;
    char dir[4096], try[8192], entries[512], *e, *save = NULL;
    const char *names[2] = {name, made_up ? base : NULL};

    if (base == file_name || (size_t)(base - 1 - file_name) >= sizeof(dir))
        return 1;                               /* not a path it splits: let libdw look */
    memcpy(dir, file_name, (size_t)(base - 1 - file_name));
    dir[base - 1 - file_name] = '\0';
    snprintf(entries, sizeof(entries), "%s", path[0] == '-' || path[0] == '+' ? path + 1 : path);
    for (e = strtok_r(entries, ":", &save); ; e = strtok_r(NULL, ":", &save)) {
        const char *entry = e ? e : "";
        const char *sub;

        if (e && (*entry == '-' || *entry == '+'))
            entry++;
        for (int k = 0; k < 2; k++) {
            if (!names[k] || (k && !*entry))
                continue;
            if (!*entry)
                snprintf(try, sizeof(try), "%s/%s", dir, names[k]);
            else if (*entry != '/')
                snprintf(try, sizeof(try), "%s/%s/%s", dir, entry, names[k]);
            if (*entry != '/') {
                if (access(try, F_OK) == 0)
                    return 1;
                continue;
            }
            for (sub = dir; sub; sub = strchr(sub + 1, '/')) {
                snprintf(try, sizeof(try), "%s%s/%s", entry, sub, names[k]);
                if (access(try, F_OK) == 0)
                    return 1;
            }
            snprintf(try, sizeof(try), "%s/%s", entry, names[k]);
            if (access(try, F_OK) == 0)
                return 1;
            /* (an alternate debug file is looked for by its base name) */
            snprintf(try, sizeof(try), "%s/%s", entry,
                     strrchr(names[k], '/') ? strrchr(names[k], '/') + 1 : names[k]);
            if (access(try, F_OK) == 0)
                return 1;
        }
        if (!e)
            break;
    }
    return 0;
}
