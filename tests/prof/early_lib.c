/* A library whose constructor copies before the recorder's own constructor
 * runs (a program's libraries are initialised before a preloaded one):
 * the thread's later calls must still be traced. */
#include <string.h>

static char early_src[64] = "copied by a constructor", early_dst[64];

__attribute__((constructor)) static void early_copy(void)
{
	memcpy(early_dst, early_src, sizeof early_src);
}

const char *early_text(void) { return early_dst; }
