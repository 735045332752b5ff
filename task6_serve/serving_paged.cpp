// serving_paged.cpp — ServingModel's paged steps (serving_model.h): the prefill and the decode step over the student's
// pages and attention (task6_serve.h). Linked where student code is: the runner and the benchmark.
#include <stdexcept>
#include <vector>

#include "common/cuda/cuda_check.h"
#include "task6_serve/serving_model.h"

namespace task6 {

LayerPages ServingModel::layer(int l) const {
    const size_t per = size_t(num_pages_) * page_size_ * cfg_.kv_head_count() * cfg_.head_dim();
    return {bf16(pools_) + 2 * per * size_t(l), bf16(pools_) + 2 * per * size_t(l) + per};
}

std::vector<float> ServingModel::prefill(const std::vector<int>& prompt, const PagePool& pool, const PagedSequence& seq) {
    if (mode_ != Mode::paged) throw std::logic_error("ServingModel::prefill runs on a paged model");
    const int S = int(prompt.size());
    std::vector<int> positions(prompt.size());
    for (int i = 0; i < S; ++i) positions[size_t(i)] = i;
    const PrefillScratch scratch{bf16(scratch_), scratch_.size()};
    forward(prompt, positions,
            [&](int l) {
                prefill_paged(bf16(q_), bf16(k_), bf16(v_), bf16(o_), layer(l), pool, seq, S, cfg_.heads,
                              cfg_.kv_head_count(), cfg_.head_dim(), scratch);
            },
            /*logit_rows=*/1);
    std::vector<float> out(size_t(cfg_.vocab));
    CUDA_CHECK(cudaMemcpy(out.data(), logits_.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
}

std::vector<float> ServingModel::decode(const std::vector<int>& tokens, const PagePool& pool,
                                        const std::vector<const PagedSequence*>& seqs) {
    if (mode_ != Mode::paged) throw std::logic_error("ServingModel::decode runs on a paged model");
    if (tokens.size() != seqs.size()) throw std::invalid_argument("ServingModel::decode: one token per sequence");
    std::vector<int> positions(seqs.size());
    for (size_t b = 0; b < seqs.size(); ++b) positions[b] = seqs[b]->length - 1;
    forward(tokens, positions,
            [&](int l) {
                decode_paged(bf16(q_), bf16(k_), bf16(v_), bf16(o_), layer(l), pool, seqs, cfg_.heads, cfg_.kv_head_count(),
                             cfg_.head_dim());
            },
            int(tokens.size()));
    std::vector<float> out(tokens.size() * size_t(cfg_.vocab));
    CUDA_CHECK(cudaMemcpy(out.data(), logits_.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
}

}  // namespace task6
