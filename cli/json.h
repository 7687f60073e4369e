/*
 * json.h - JSON output shared by isospawn (--status-json) and isospawnctl
 * (list --json).
 */
#ifndef ISO_CLI_JSON_H
#define ISO_CLI_JSON_H

#include <stdio.h>

/* s as a JSON string, valid UTF-8 whatever s holds: quotes, backslashes
 * and control characters (C0, DEL, C1) escaped, well-formed UTF-8 passed
 * through, any other byte as U+FFFD. */
void json_string(FILE *f, const char *s);

#endif /* ISO_CLI_JSON_H */
