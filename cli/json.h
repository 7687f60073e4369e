/*
 * json.h - JSON output shared by isospawn (--status-json) and isospawnctl
 * (list --json).
 */
#ifndef ISO_CLI_JSON_H
#define ISO_CLI_JSON_H

#include <stdio.h>

/* s as a JSON string, valid UTF-8 whatever s holds: quotes, backslashes,
 * control characters (C0, DEL, C1) and bidirectional controls (U+061C,
 * U+200E, U+200F, U+202A-U+202E, U+2066-U+2069) escaped, well-formed
 * UTF-8 passed through, any other byte as U+FFFD. */
void json_string(FILE *f, const char *s);

#endif /* ISO_CLI_JSON_H */
