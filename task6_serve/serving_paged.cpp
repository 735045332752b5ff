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
                attend_checked("prefill_paged", l, pool, std::vector<const PagedSequence*>(prompt.size(), &seq), positions, [&] {
                    prefill_paged(bf16(q_), bf16(k_), bf16(v_), bf16(o_), layer(l), pool, seq, S, cfg_.heads,
                                  cfg_.kv_head_count(), cfg_.head_dim(), scratch);
                });
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
                attend_checked("decode_paged", l, pool, seqs, positions, [&] {
                    decode_paged(bf16(q_), bf16(k_), bf16(v_), bf16(o_), layer(l), pool, seqs, cfg_.heads, cfg_.kv_head_count(),
                                 cfg_.head_dim());
                });
            },
            int(tokens.size()));
    std::vector<float> out(tokens.size() * size_t(cfg_.vocab));
    CUDA_CHECK(cudaMemcpy(out.data(), logits_.get(), out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return out;
}

void ServingModel::move_pages(const std::vector<int>& from, const std::vector<int>& to) {
    const size_t page = size_t(page_size_) * cfg_.kv_head_count() * cfg_.head_dim();  // elements
    for (int l = 0; l < cfg_.layers; ++l)
        for (__nv_bfloat16* pool : {layer(l).k, layer(l).v})
            for (size_t i = 0; i < from.size(); ++i) {
                CUDA_CHECK(cudaMemcpy(pool + size_t(to[i]) * page, pool + size_t(from[i]) * page, page * sizeof(uint16_t),
                                      cudaMemcpyDeviceToDevice));
                CUDA_CHECK(cudaMemset(pool + size_t(from[i]) * page, 0xFF, page * sizeof(uint16_t)));  // NaN again
            }
}

namespace {
std::vector<uint16_t> host_copy(const attn::DeviceBuffer<uint16_t>& b, size_t n) {
    std::vector<uint16_t> h(n);
    CUDA_CHECK(cudaMemcpy(h.data(), b.get(), n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
    return h;
}
}  // namespace

// The student's call for layer l; with verify_pages_ (the tests) the harness checks around it, from copies it took
// before the call: q, k and v unchanged (they are inputs), and each row's K and V (position positions[t] of
// *owners[t]) in that sequence's page afterwards, bit for bit. Attention that keeps K and V anywhere else is not
// paged attention.
void ServingModel::attend_checked(const char* call, int l, const PagePool& pool, const std::vector<const PagedSequence*>& owners,
                                  const std::vector<int>& positions, const std::function<void()>& student) {
    if (!verify_pages_) return student();
    const size_t row = size_t(cfg_.kv_head_count()) * cfg_.head_dim(), T = owners.size();
    const std::vector<uint16_t> q0 = host_copy(q_, T * size_t(cfg_.hidden)), k0 = host_copy(k_, T * row), v0 = host_copy(v_, T * row);
    student();
    CUDA_CHECK(cudaDeviceSynchronize());
    for (const auto& [name, buffer, before] : {std::tuple{"q", &q_, &q0}, std::tuple{"k", &k_, &k0}, std::tuple{"v", &v_, &v0}})
        if (host_copy(*buffer, before->size()) != *before)
            throw std::logic_error(fmt::format("{} in layer {} changed its input {} (q, k and v are read-only)", call, l, name));
    const LayerPages pages = layer(l);
    const size_t per = size_t(num_pages_) * page_size_ * row;
    for (const auto& [name, written, pool_of] : {std::tuple{"K", &k0, pages.k}, std::tuple{"V", &v0, pages.v}}) {
        std::vector<uint16_t> held(per);
        CUDA_CHECK(cudaMemcpy(held.data(), pool_of, held.size() * sizeof(uint16_t), cudaMemcpyDeviceToHost));
        for (size_t t = 0; t < T; ++t) {
            const int pos = positions[t], page = owners[t]->pages.at(size_t(pos / pool.page_size)), slot = pos % pool.page_size;
            const uint16_t* at = held.data() + (size_t(page) * page_size_ + size_t(slot)) * row;
            if (!std::equal(at, at + row, written->data() + t * row))
                throw std::logic_error(fmt::format("after {} in layer {}: position {}'s {} is not in its page (page {}, slot {}): "
                                                   "K and V belong in the sequence's pages, where the next steps read them",
                                                   call, l, pos, name, page, slot));
        }
    }
}

}  // namespace task6
