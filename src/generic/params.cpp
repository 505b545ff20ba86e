#include "generic/params.h"
#include "generic/prefetch_blocks.h"

namespace uarch {
void set_arch_params(const Plan &p) { set_prefetch_stride(p.mem.prefetch_stride); }
}
