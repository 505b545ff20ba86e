#include "arch/params.h"

namespace uarch {
void set_arch_params(const Plan &) {}
}
