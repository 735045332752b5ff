// serve_cpu.cpp — a CPU task's runner stages nothing on a device.
#include "common/remote/serve.h"

namespace attn::remote {
Staging* staging() { return nullptr; }
}  // namespace attn::remote
