// launch_log_runner.h — the runner's side of launch_log.h (GPU runners; a CPU runner has none of it).
#pragma once

namespace attn::remote::launch_log {

// Maps the page the trusted side passed as fd 5 (nothing happens without one).
void attach_page();
// Before a request: loads CUPTI the first time a request wants the log (a request that does not never loads it).
void prepare(bool wanted);

// While one lives, the process's kernel launches are recorded (the student's call; not the harness's own work).
struct Recording {
    Recording();
    ~Recording();
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;
};

}  // namespace attn::remote::launch_log
