/*
 * die.c - the one line both commands print before they exit on an error.
 */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "die.h"

void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}
