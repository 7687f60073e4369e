/*
 * json.c - what the command-line tools write as JSON, written one way.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>

#include "json.h"

/* Unicode's bidirectional controls (the marks LRM, RLM and ALM, the
 * embeddings, overrides and isolates): raw, they reorder the text around
 * them in a terminal or a review tool, so that a path reads as another
 * (Trojan Source, CVE-2021-42574). */
static int is_bidi_control(uint32_t cp)
{
	return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* A JSON string, valid UTF-8 whatever s holds, that shows no control
 * character raw (a caller names its program, and root's 'isospawnctl list
 * --json' shows it): quotes and backslashes escaped; C0, DEL and C1
 * controls (U+0080-U+009F: U+009B is a control sequence's start to some
 * terminals) and bidirectional controls as \uXXXX; a byte that starts no
 * well-formed sequence (overlong, surrogate, beyond U+10FFFF, cut short)
 * as U+FFFD, which strict parsers would otherwise refuse along with the
 * whole list. */
void json_string(FILE *f, const char *s)
{
	static const uint32_t shortest[] = { 0, 0x80, 0x800, 0x10000 };
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p != '\0') {
		unsigned char c = *p;
		int extra = c >= 0xf0 && c <= 0xf4   ? 3
			    : c >= 0xe0 && c <= 0xef ? 2
			    : c >= 0xc2 && c <= 0xdf ? 1
						     : 0;
		uint32_t cp = c & (0x3fu >> extra);
		int ok = extra > 0;

		/* Stops at the first byte that is no continuation, the
		 * terminating NUL included. */
		for (int i = 1; ok && i <= extra; i++) {
			ok = (p[i] & 0xc0) == 0x80;
			cp = cp << 6 | (p[i] & 0x3fu);
		}
		ok = ok && cp >= shortest[extra] && (cp < 0xd800 || cp > 0xdfff) && cp <= 0x10ffff;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if (!ok)
			fputs("\\ufffd", f);
		else if (cp < 0xa0 || is_bidi_control(cp))
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(p, 1, (size_t)extra + 1, f);
		if (ok)
			p += extra;
		p++;
	}
	fputc('"', f);
}
