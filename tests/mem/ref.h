#pragma once
#include <stddef.h>
void ref_memmove(void *dst, const void *src, size_t n);
void ref_memset(void *dst, int c, size_t n);
