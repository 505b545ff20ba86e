// The build's profile path, in a file of its own so that test builds of
// the libraries can be linked with another one (meson option profile_path).
#include "tunables/profile.h"

#ifndef UARCH_PROFILE_PATH
#error "UARCH_PROFILE_PATH must name the system profile"
#endif

namespace uarch {
const char profile_path[] = UARCH_PROFILE_PATH;
}
