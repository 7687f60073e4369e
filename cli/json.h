/*
 * json.h - JSON output shared by isospawn (--status-json) and isospawnctl
 * (list --json).
 */
#ifndef ISO_CLI_JSON_H
#define ISO_CLI_JSON_H

#include <stdio.h>

/* s as a JSON string: quotes, backslashes and control bytes escaped, valid
 * UTF-8 passed through, any other byte as U+FFFD. */
void json_string(FILE *f, const char *s);

#endif /* ISO_CLI_JSON_H */
