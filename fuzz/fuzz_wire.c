/*
 * fuzz_wire.c - libFuzzer target for the wire codec (common/wire.c).
 * Built by `make fuzz`, run by scripts/fuzz; seeds in fuzz/corpus/wire.
 *
 * Properties: the decoder never reads out of bounds or crashes; every
 * refusal carries a reason; whatever it accepts re-encodes without error,
 * decodes again, and re-encodes to the same bytes (the encoder's output is
 * canonical), and is never longer than ISO_WIRE_MAX.
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
	long n1, n2;

	if (iso_wire_decode(data, size, &first, why, sizeof(why)) != 0) {
		if (why[0] == '\0')
			abort(); /* every refusal carries a reason */
		return 0;
	}
	if (size > ISO_WIRE_MAX)
		abort(); /* accepted a datagram over the cap */
	n1 = iso_wire_encode(&first, enc1, sizeof(enc1));
	if (n1 <= 0)
		abort();
	if (iso_wire_decode(enc1, (size_t)n1, &second, why, sizeof(why)) != 0)
		abort();
	n2 = iso_wire_encode(&second, enc2, sizeof(enc2));
	if (n2 != n1 || memcmp(enc1, enc2, (size_t)n1) != 0)
		abort();
	return 0;
}
