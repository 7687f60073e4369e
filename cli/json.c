/*
 * json.c - what the command-line tools write as JSON, written one way.
 */
#include "config.h"

#include <stdio.h>

#include "json.h"

/* A JSON string: quotes, backslashes and control bytes escaped, valid
 * UTF-8 passed through, any other byte as U+FFFD. */
void json_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p != '\0') {
		unsigned char c = *p;
		int extra = c >= 0xf0 && c <= 0xf4 ? 3 :
			    c >= 0xe0 && c <= 0xef ? 2 :
			    c >= 0xc2 && c <= 0xdf ? 1 :
						     0;
		int ok = 1;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else if (c < 0x80) {
			fputc(c, f);
		} else {
			/* Continuation bytes only; overlongs and surrogates
			 * are rare enough in notes to leave to the reader. */
			for (int i = 1; ok && i <= extra; i++)
				ok = (p[i] & 0xc0) == 0x80;
			if (extra == 0 || !ok) {
				fputs("\\ufffd", f);
			} else {
				fwrite(p, 1, (size_t)extra + 1, f);
				p += extra;
			}
		}
		p++;
	}
	fputc('"', f);
}
