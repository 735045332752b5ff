// serving_model.h — Task 6b's model (given): Task 6's decoder (task6/model.h: the same layers, seeded weights and
// kernels) with grouped-query attention (ModelConfig::kv_heads < heads) and its attention in bf16, the way servers
// run it. Rows are tokens: a prefill's S prompt tokens of one request, or a decode step's one token of each running
// sequence, each at its own position (token-major activations, per-row positions for RoPE).
//
// Two ways to attend:
//   paged   the student's prefill_paged / decode_paged over a paged KV cache (num_pages pages per layer, NaN until
//           written: a read of a slot no position holds shows in the logits)
//   oracle  the trusted side's check: one sequence, no cache, every position's logits in one pass, attention by the
//           harness's attention_oracle (cuBLAS, exact softmax) on the same bf16 q, k, v, its output rounded to bf16
//           as a bf16 kernel's is — no student kernel inside.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/cuda/cublas_gemm.h"
#include "common/compare.h"
#include "common/cuda/device.h"
#include "common/tensor.h"
#include "task6/model.h"
#include "task6_serve/task6_serve.h"

namespace task6 {

// A served token's logits against the oracle's (absolute and relative): bf16 attention inside a float32 model, against
// the oracle's float attention on the same bf16 inputs — the kernels round probabilities to bf16 for the tensor cores
// (docs/perf.md, "Serving": the reference's worst case at 55 % of it). Greedy tokens may differ only where the oracle's
// two logits are within it (a tie).
constexpr attn::Tolerance kServingTolerance{2e-2, 2e-2};

class ServingModel {
public:
    // paged: activations for up to max_rows rows, pools of num_pages pages of page_size positions per layer.
    ServingModel(std::shared_ptr<const Weights> weights, int max_rows, int page_size, int num_pages);
    // oracle: activations for one sequence of up to max_rows tokens.
    ServingModel(std::shared_ptr<const Weights> weights, int max_rows);

    // One request's prompt (seq's pages reserved for its S positions) → the last position's logits [vocab].
    std::vector<float> prefill(const std::vector<int>& prompt, const PagePool& pool, const PagedSequence& seq);
    // One decode step: tokens[b] is seqs[b]'s newest token, at position seqs[b]->length − 1 (its page reserved)
    // → logits [B, vocab], row b for seqs[b].
    std::vector<float> decode(const std::vector<int>& tokens, const PagePool& pool,
                              const std::vector<const PagedSequence*>& seqs);
    // oracle: the logits at every position of one sequence [n, vocab].
    attn::Tensor all_logits(const std::vector<int>& tokens);

    // paged: every layer's K and V of pages from[i] copied to pages to[i]; the old pages NaN again (the engine's
    // compaction between steps).
    void move_pages(const std::vector<int>& from, const std::vector<int>& to);
    // paged: after each layer's attention, check that every row's K and V sit in its sequence's page (the tests; slow).
    void verify_pages(bool on) { verify_pages_ = on; }
    const ModelConfig& config() const { return cfg_; }
    int max_rows() const { return max_rows_; }
    // bf16 K and V of one position in every layer: what a token costs the cache.
    static size_t kv_bytes_per_token(const ModelConfig& c);

private:
    enum class Mode { paged, oracle };
    ServingModel(std::shared_ptr<const Weights> weights, int max_rows, int page_size, int num_pages, Mode mode);
    // ids[t] at positions[t] through every layer (attend(l): layer l's attention, q, k, v → o); the logits of the last
    // logit_rows rows (a prompt's last token, or every row).
    void forward(const std::vector<int>& ids, const std::vector<int>& positions, const std::function<void(int)>& attend,
                 int logit_rows);
    void oracle_attention(int T);
    LayerPages layer(int l) const;
    void attend_checked(const char* call, int l, const PagePool& pool, const std::vector<const PagedSequence*>& owners,
                        const std::vector<int>& positions, const std::function<void()>& student);
    static __nv_bfloat16* bf16(const attn::DeviceBuffer<uint16_t>& b) { return reinterpret_cast<__nv_bfloat16*>(b.get()); }

    std::shared_ptr<const Weights> w_;
    const ModelConfig& cfg_;
    Mode mode_;
    int max_rows_, page_size_, num_pages_;
    bool verify_pages_ = false;
    attn::CublasGemm gemm_;
    attn::DeviceBuffer<uint16_t> pools_;  // bf16 bits: per layer K pool then V pool
    attn::DeviceBuffer<uint16_t> q_, k_, v_, o_, scratch_;
    attn::DeviceBuffer<float> rope_cos_, rope_sin_, x_, h_, qkv_, o32_, gu_, act_, last_, logits_;
    attn::DeviceBuffer<float> heads32_, scores_;  // oracle: q, k, v, o heads-first in float; the scores
    attn::DeviceBuffer<int> ids_, positions_;
};

}  // namespace task6
