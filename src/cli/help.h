/*
 * A command's --help is data: its lines as they print, one string each, in
 * a NULL-terminated array beside the command's parser (the numbers it
 * names come from the parser's own defaults, PP_STR). One printer for
 * all; the folding options record and report share (--processes,
 * --show-perfpy, --threads) are one list here, their names padded to the
 * column of each command's list (PP_HELP_FOLD).
 */
#ifndef PERFPY_CLI_HELP_H
#define PERFPY_CLI_HELP_H

#include <stdio.h>

#define PP_STR_(x) #x
#define PP_STR(x) PP_STR_(x)
/* A line that stands for the folding options, names padded to width. */
#define PP_HELP_FOLD(width) "\001" #width

/* The lines, each followed by a newline. */
void pp_help_print(FILE *out, const char *const *lines);

#endif
