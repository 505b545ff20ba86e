// The byte-loop references every variant is checked against. Built with
// -fno-builtin (and, on GCC, -fno-tree-loop-distribute-patterns) so the
// compiler cannot turn them back into calls to the C library.
#include "ref.h"

void ref_memmove(void *dst, const void *src, size_t n)
{
	auto *d = static_cast<unsigned char *>(dst);
	auto *s = static_cast<const unsigned char *>(src);
	if (d < s)
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	else
		for (size_t i = n; i-- > 0;)
			d[i] = s[i];
}

void ref_memset(void *dst, int c, size_t n)
{
	auto *d = static_cast<unsigned char *>(dst);
	for (size_t i = 0; i < n; i++)
		d[i] = static_cast<unsigned char>(c);
}
