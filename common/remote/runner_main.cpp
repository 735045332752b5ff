// runner_main.cpp — main() of every runner_taskN: serve the trusted side's requests on fds 3/4.
// The program holds the student's code; it decides nothing (see common/remote/runner.h).
#include "common/remote/serve.h"

int main() { return attn::remote::serve(attn::remote::task_handlers()); }
