// libFuzzer target for the UARCH_TUNABLES parser: any bytes, any length.
#include <stddef.h>
#include <stdint.h>
#include "tunables/tunables.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uarch::Tunables t;
	uarch::parse_tunables(reinterpret_cast<const char *>(data), size, &t);
	if (t.nentries > uarch::Tunables::max_entries || t.input_length > size)
		__builtin_trap();
	for (uint32_t i = 0; i < t.nentries; i++)
		if (t.entries[i].offset + t.entries[i].length > t.input_length ||
		    t.entries[i].value_offset + t.entries[i].value_length > t.input_length)
			__builtin_trap();
	return 0;
}
