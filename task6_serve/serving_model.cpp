// serving_model.cpp — see serving_model.h: the model and its oracle (linked on the trusted side too). The layer is
// task6/model.cpp's, row for row; what differs is the attention's shape (GQA, bf16, token-major). The paged steps,
// which call the student's code, are serving_paged.cpp (the runner's and the benchmark's only).
#include "task6_serve/serving_model.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/bf16_convert.h"
#include "common/llm/gqa_kernels.h"
#include "common/llm/kernels.h"
#include "common/llm/skinny_gemm.h"

namespace task6 {
namespace {
constexpr float kEps = 1e-5f;
}  // namespace

size_t ServingModel::kv_bytes_per_token(const ModelConfig& c) {
    return size_t(2) * c.layers * c.kv_head_count() * c.head_dim() * sizeof(__nv_bfloat16);
}

ServingModel::ServingModel(std::shared_ptr<const Weights> weights, int max_rows, int page_size, int num_pages)
    : ServingModel(std::move(weights), max_rows, page_size, num_pages, Mode::paged) {}

ServingModel::ServingModel(std::shared_ptr<const Weights> weights, int max_rows)
    : ServingModel(std::move(weights), max_rows, 0, 0, Mode::oracle) {}

ServingModel::ServingModel(std::shared_ptr<const Weights> weights, int max_rows, int page_size, int num_pages, Mode mode)
    : w_(std::move(weights)), cfg_(w_->cfg), mode_(mode), max_rows_(max_rows), page_size_(page_size), num_pages_(num_pages) {
    const int D = cfg_.head_dim(), Hq = cfg_.heads, Hkv = cfg_.kv_head_count();
    if (D != 64 && D != 128) throw std::invalid_argument(fmt::format("the serving model's head_dim is 64 or 128, not {}", D));
    if (max_rows < 1 || max_rows > cfg_.max_seq * 1024)
        throw std::invalid_argument(fmt::format("the serving model's max_rows {} is out of range", max_rows));
    const size_t R = size_t(max_rows), H = size_t(cfg_.hidden);
    if (mode_ == Mode::paged) {
        if (page_size < 1 || num_pages < 1) throw std::invalid_argument("a paged model needs pages");
        pools_ = attn::DeviceBuffer<uint16_t>(size_t(2) * cfg_.layers * num_pages * page_size * Hkv * D);
        pools_.poison();  // 0xFFFF: a bf16 NaN in every slot until written
    }
    std::vector<float> cosines, sines;
    rope_tables(cfg_.max_seq, D, cosines, sines);
    rope_cos_ = attn::DeviceBuffer<float>(cosines), rope_sin_ = attn::DeviceBuffer<float>(sines);
    for (auto* b : {&x_, &h_, &o32_, &last_}) *b = attn::DeviceBuffer<float>(R * H);
    qkv_ = attn::DeviceBuffer<float>(R * size_t(cfg_.qkv_width()));
    gu_ = attn::DeviceBuffer<float>(R * 2 * size_t(cfg_.ffn)), act_ = attn::DeviceBuffer<float>(R * size_t(cfg_.ffn));
    logits_ = attn::DeviceBuffer<float>(R * size_t(cfg_.vocab));
    q_ = attn::DeviceBuffer<uint16_t>(R * H), o_ = attn::DeviceBuffer<uint16_t>(R * H);
    k_ = attn::DeviceBuffer<uint16_t>(R * Hkv * D), v_ = attn::DeviceBuffer<uint16_t>(R * Hkv * D);
    scratch_ = attn::DeviceBuffer<uint16_t>(4 * R * H);
    ids_ = attn::DeviceBuffer<int>(R), positions_ = attn::DeviceBuffer<int>(R);
    if (mode_ == Mode::oracle) {
        heads32_ = attn::DeviceBuffer<float>(4 * R * H);
        scores_ = attn::DeviceBuffer<float>(size_t(Hq) * R * R);
    }
}

attn::Tensor ServingModel::all_logits(const std::vector<int>& tokens) {
    if (mode_ != Mode::oracle) throw std::logic_error("ServingModel::all_logits runs on an oracle model");
    const int T = int(tokens.size());
    std::vector<int> positions(tokens.size());
    for (int i = 0; i < T; ++i) positions[size_t(i)] = i;
    forward(tokens, positions, [&](int) { oracle_attention(T); }, T);
    attn::Tensor t({T, cfg_.vocab});
    CUDA_CHECK(cudaMemcpy(t.ptr(), logits_.get(), t.data.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return t;
}

// Causal attention of one sequence by the harness: heads-first, K and V repeated for their groups, in float from the
// bf16 values the kernels see; the output rounded to bf16 as theirs is.
void ServingModel::oracle_attention(int T) {
    const int Hq = cfg_.heads, Hkv = cfg_.kv_head_count(), D = cfg_.head_dim();
    const size_t n = size_t(T) * Hq * D;
    __nv_bfloat16* heads = bf16(scratch_);
    float* f = heads32_.get();
    llm::tokens_to_heads_bf16(bf16(q_), heads, T, Hq, Hq, D);
    llm::tokens_to_heads_bf16(bf16(k_), heads + n, T, Hkv, Hq, D);
    llm::tokens_to_heads_bf16(bf16(v_), heads + 2 * n, T, Hkv, Hq, D);
    task4::bf16_convert::from_bf16(heads, f, 3 * n);
    attn::attention_oracle(gemm_, f, f + n, f + 2 * n, f + 3 * n, Hq, T, T, D, /*causal=*/true, scores_.get());
    task4::bf16_convert::to_bf16(f + 3 * n, heads + 3 * n, nullptr, n);
    llm::heads_to_tokens_bf16(heads + 3 * n, bf16(o_), T, Hq, D);
}

void ServingModel::forward(const std::vector<int>& ids, const std::vector<int>& positions, const std::function<void(int)>& attend,
                           int logit_rows) {
    const int T = int(ids.size()), H = cfg_.hidden, F = cfg_.ffn, V = cfg_.vocab;
    if (T < 1 || T > max_rows_) throw std::invalid_argument(fmt::format("{} rows for a model of at most {}", T, max_rows_));
    for (size_t t = 0; t < ids.size(); ++t) {
        if (ids[t] < 0 || ids[t] >= V) throw std::invalid_argument(fmt::format("token id {} outside the vocabulary of {}", ids[t], V));
        if (positions[t] < 0 || positions[t] >= cfg_.max_seq)
            throw std::invalid_argument(fmt::format("position {} past the model's max_seq {}", positions[t], cfg_.max_seq));
    }
    ids_.upload_prefix(ids), positions_.upload_prefix(positions);
    llm::embed(ids_.get(), 1, T, 0, 1, w_->emb, nullptr, V, H, x_.get());
    for (int l = 0; l < cfg_.layers; ++l) {
        const Weights::Layer& L = w_->layers[size_t(l)];
        llm::layernorm(x_.get(), L.ln1_g, L.ln1_b, h_.get(), T, H, kEps);
        llm::linear_nt(gemm_, h_.get(), L.w_qkv, qkv_.get(), T, cfg_.qkv_width(), H);
        llm::split_rope_bf16(qkv_.get(), positions_.get(), rope_cos_.get(), rope_sin_.get(), T, cfg_.heads,
                             cfg_.kv_head_count(), cfg_.head_dim(), bf16(q_), bf16(k_), bf16(v_));
        attend(l);
        task4::bf16_convert::from_bf16(bf16(o_), o32_.get(), size_t(T) * H);
        llm::linear_nt(gemm_, o32_.get(), L.w_o, x_.get(), T, H, H, 1.f);  // x += attention · w_oᵀ
        llm::layernorm(x_.get(), L.ln2_g, L.ln2_b, h_.get(), T, H, kEps);
        llm::linear_nt(gemm_, h_.get(), L.w_gu, gu_.get(), T, 2 * F, H);
        llm::swiglu(gu_.get(), act_.get(), T, F);
        llm::linear_nt(gemm_, act_.get(), L.w_down, x_.get(), T, H, F, 1.f);  // x += MLP
    }
    llm::layernorm(x_.get(), w_->lnf_g, w_->lnf_b, last_.get(), logit_rows, H, kEps, 1, T - logit_rows);
    llm::linear_nt(gemm_, last_.get(), w_->lm_head, logits_.get(), logit_rows, V, H);
}

}  // namespace task6
