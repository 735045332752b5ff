// serving_paged.cpp — ServingModel's paged steps (serving_model.h): the prefill and the decode step over the student's
// pages and attention (task6_serve.h). Linked where student code is: the runner and the benchmark.
#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>
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
                if (verify_pages_) check_rows_in_pages("prefill_paged", l, pool, std::vector<const PagedSequence*>(prompt.size(), &seq), positions);
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
                if (verify_pages_) check_rows_in_pages("decode_paged", l, pool, seqs, positions);
            },
            int(tokens.size()));
    std::vector<float> out(tokens.size() * size_t(cfg_.vocab));
    CUDA_CHECK(cudaMemcpy(out.data(), logits_.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
}

// Row t's K and V (position positions[t] of *owners[t]) must now be in that sequence's page, bit for bit: attention
// that keeps K and V anywhere else (a contiguous copy of its own) is not paged attention.
void ServingModel::check_rows_in_pages(const char* call, int l, const PagePool& pool,
                                       const std::vector<const PagedSequence*>& owners, const std::vector<int>& positions) const {
    const size_t row = size_t(cfg_.kv_head_count()) * cfg_.head_dim(), per = size_t(num_pages_) * page_size_ * row;
    const LayerPages pages = layer(l);
    for (const auto& [name, rows, pool_of] : {std::tuple{"K", &k_, pages.k}, std::tuple{"V", &v_, pages.v}}) {
        std::vector<uint16_t> written(owners.size() * row), held(per);
        CUDA_CHECK(cudaMemcpy(written.data(), rows->get(), written.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(held.data(), pool_of, held.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
        for (size_t t = 0; t < owners.size(); ++t) {
            const int pos = positions[t], page = owners[t]->pages.at(size_t(pos / pool.page_size)), slot = pos % pool.page_size;
            const uint16_t* at = held.data() + (size_t(page) * page_size_ + size_t(slot)) * row;
            if (!std::equal(at, at + row, written.data() + t * row))
                throw std::logic_error(fmt::format("after {} in layer {}: position {}'s {} is not in its page (page {}, slot {}): "
                                                   "K and V belong in the sequence's pages, where the next steps read them",
                                                   call, l, pos, name, page, slot));
        }
    }
}

}  // namespace task6
