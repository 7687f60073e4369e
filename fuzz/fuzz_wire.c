/*
 * fuzz_wire.c - libFuzzer target for the wire codec. Not built by make.
 *
 * Build and run from the top of the source tree (clang with libFuzzer):
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Iinclude -Icommon tests/fuzz_wire.c common/wire.c -o /tmp/fuzz_wire && mkdir -p /tmp/fuzz_wire_corpus && /tmp/fuzz_wire -max_len=131073 -max_total_time=120 /tmp/fuzz_wire_corpus
 *
 * Property: the decoder never reads out of bounds or crashes, and whatever
 * it accepts re-encodes without error, decodes again, and re-encodes to the
 * same bytes (the encoder's output is canonical).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct iso_wire_msg first, second;
	static uint8_t enc1[ISO_WIRE_MAX], enc2[ISO_WIRE_MAX];
	char why[256] = "";

	if (iso_wire_decode(data, size, &first, why, sizeof(why)) != 0) {
		if (why[0] == '\0')
			abort(); /* every refusal carries a reason */
		return 0;
	}
	long n1 = iso_wire_encode(&first, enc1, sizeof(enc1));
	if (n1 <= 0)
		abort();
	if (iso_wire_decode(enc1, (size_t)n1, &second, why, sizeof(why)) != 0)
		abort();
	long n2 = iso_wire_encode(&second, enc2, sizeof(enc2));
	if (n2 != n1 || memcmp(enc1, enc2, (size_t)n1) != 0)
		abort();
	return 0;
}
