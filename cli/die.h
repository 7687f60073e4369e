/*
 * die.h - the one line both commands print before they exit on an error:
 * "NAME: what went wrong".
 */
#ifndef ISO_CLI_DIE_H
#define ISO_CLI_DIE_H

#include <stdnoreturn.h>

/* The command's name, as its messages begin; each command defines it. */
extern const char cli_name[];

noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* ISO_CLI_DIE_H */
