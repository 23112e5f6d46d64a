/*
 * One hex digit's value, for every parser of text perf or the kernel print
 * (perf script's addresses, /proc/PID/maps, /proc/kallsyms).
 */
#ifndef PERFPY_HEX_H
#define PERFPY_HEX_H

/* 0..15, or -1 when c is not a hex digit. */
static inline int pp__hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
