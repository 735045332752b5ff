// timing.h — timing an inference run with CUDA events (given; used by Task 6's course case and
// bench_task6): TTFT is the prompt's prefill up to the first token, TBT each later token. Events
// only, no host synchronisation between steps, so the host's launch work overlaps the GPU as it
// would in a server.
#pragma once
#include <string>
#include <vector>

#include "task6/model.h"

namespace task6 {

struct GenerationTiming {
    double ttft_ms = 0;
    std::vector<double> tbt_ms;  // one per decode step
    double tbt_median() const;
    double tbt_p90() const;
    double tbt_total() const;
};

// prefill(prompt) then `steps` decode steps, each timed with events.
GenerationTiming time_generation(DecoderModel& m, const std::vector<int>& prompt, int S, int steps);
// The median time of `steps` more decode steps, each alone (synchronised around it).
double median_step_ms(DecoderModel& m, int steps);

// The largest layer count ≤ cfg.layers whose weights and `runs` fit `free_bytes` (runs: what each
// DecoderModel run needs, for the full layer count; it scales with the layers). `note` says what
// was cut, or stays empty.
ModelConfig fit_layers(ModelConfig cfg, size_t runs_bytes, size_t free_bytes, std::string& note);

double percentile(std::vector<double> v, double p);

}  // namespace task6
