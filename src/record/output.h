// The recorder's files: one profile per process image, written at exit
// and before each exec to $UARCH_PROF_OUT<pid>.uprof, or <pid>-<k>.uprof
// where that name is taken (the image an exec replaced, a pid reused in a
// long run or in another pid namespace), and by _exit and _Exit too; the
// trace beside it. Raw system calls: no heap, no stdio.
#pragma once
#include <stdint.h>

#pragma GCC visibility push(hidden)
namespace uarch::record {

bool write_all(long fd, const void *p, uint64_t n);
// Opens path for this image's write: created new (never an existing name,
// never through a symbolic link: a planted link would have its target
// overwritten), readable by its owner only (a trace holds addresses); or,
// with reopen, the file this image created before, never through a link.
long open_output(const char *path, bool reopen);
// Merges every block and writes this image's files (see output.cpp).
void write_profile();

} // namespace uarch::record
#pragma GCC visibility pop
