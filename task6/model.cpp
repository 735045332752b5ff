// model.cpp — see model.h. The model code is given; the student's part is attention_forward.
#include "task6/model.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "common/cuda/attention_oracle.h"
#include "common/llm/kernels.h"
#include "common/llm/skinny_gemm.h"
#include "task4/task4.h"

namespace task6 {
namespace {

constexpr float kEps = 1e-5f;
enum Kind { ln1_g, ln1_b, w_qkv, w_o, ln2_g, ln2_b, w_gu, w_down };  // per layer
enum Global { emb, lnf_g, lnf_b, lm_head };                           // layer == layers

float bound(int fan_in, double scale = 1.0) { return float(scale / std::sqrt(double(fan_in))); }

}  // namespace

double ModelConfig::params() const {
    const double h = hidden, per_layer = 4 * h + h * qkv_width() + h * h + 3 * double(ffn) * h;
    return layers * per_layer + 2 * double(vocab) * h + 2 * h;
}

size_t ModelConfig::run_bytes(Attention mode) const {
    const size_t T = size_t(batch) * max_seq;
    const size_t acts = T * (10 * size_t(hidden) + 3 * size_t(ffn)) + size_t(batch) * (hidden + vocab);
    const size_t scores = mode == Attention::oracle ? size_t(batch) * heads * max_seq * max_seq : 0;
    return (mode == Attention::kv_cache ? kv_cache_bytes() : 0) + (acts + scores) * sizeof(float);
}

std::string ModelConfig::describe() const {
    const std::string kv = kv_head_count() == heads ? "" : fmt::format(" over {} KV heads", kv_head_count());
    return fmt::format("vocab {} hidden {} heads {}×{}{} layers {} ffn {} batch {} max_seq {} ({:.2f} B params)", vocab, hidden,
                       heads, head_dim(), kv, layers, ffn, batch, max_seq, params() / 1e9);
}

void ModelConfig::validate() const {
    auto fail = [&](const std::string& what) { throw std::invalid_argument("model config: " + what + " (" + describe() + ")"); };
    if (vocab < 2 || hidden < 1 || heads < 1 || layers < 1 || ffn < 1 || batch < 1 || max_seq < 1) fail("every size must be positive");
    if (hidden % heads) fail(fmt::format("hidden {} is not a multiple of heads {}", hidden, heads));
    if (kv_heads < 0 || kv_heads > heads || heads % kv_head_count())
        fail(fmt::format("heads {} is not a multiple of kv_heads {}", heads, kv_heads));
    const int D = head_dim();
    if (D != 32 && D != 64 && D != 96 && D != 128) fail(fmt::format("head_dim {} is not 32, 64, 96 or 128", D));
}

ModelConfig ModelConfig::course() {
    ModelConfig c;
    c.vocab = 8192, c.hidden = 4096, c.heads = 32, c.layers = 24, c.ffn = 4 * 4096, c.batch = 4, c.max_seq = 1024 + 100;
    return c;
}

void rope_tables(int max_pos, int D, std::vector<float>& cosines, std::vector<float>& sines) {
    cosines.assign(size_t(max_pos) * D / 2, 0.f), sines.assign(cosines.size(), 0.f);
    for (int pos = 0; pos < max_pos; ++pos)
        for (int i = 0; i < D / 2; ++i) {
            const double angle = pos * std::pow(10000.0, -2.0 * i / D);
            cosines[size_t(pos) * D / 2 + i] = float(std::cos(angle)), sines[size_t(pos) * D / 2 + i] = float(std::sin(angle));
        }
}

uint64_t tensor_seed(uint64_t seed, int layer, int kind) { return seed * 1000003ull + uint64_t(layer) * 16 + uint64_t(kind); }

const char* attention_name(Attention a) {
    return a == Attention::kv_cache ? "KV cache (attention_forward)" : a == Attention::recompute ? "no cache (Task-4 kernel)" : "no cache (oracle)";
}

Weights::Weights(const ModelConfig& c) : cfg(c) {
    cfg.validate();
    const int H = cfg.hidden, F = cfg.ffn, V = cfg.vocab;
    data = attn::DeviceBuffer<float>(size_t(cfg.params()));
    float* p = data.get();
    auto take = [&](size_t n, uint64_t seed, float lo, float hi) {
        float* t = p;
        attn::fill_uniform(t, n, seed, lo, hi);
        p += n;
        return t;
    };
    const uint64_t s = cfg.seed;
    for (int l = 0; l < cfg.layers; ++l) {
        Layer L{};
        L.ln1_g = take(H, tensor_seed(s, l, ln1_g), 0.8f, 1.2f);
        L.ln1_b = take(H, tensor_seed(s, l, ln1_b), -0.1f, 0.1f);
        L.w_qkv = take(size_t(cfg.qkv_width()) * H, tensor_seed(s, l, w_qkv), -bound(H), bound(H));
        L.w_o = take(size_t(H) * H, tensor_seed(s, l, w_o), -bound(H), bound(H));
        L.ln2_g = take(H, tensor_seed(s, l, ln2_g), 0.8f, 1.2f);
        L.ln2_b = take(H, tensor_seed(s, l, ln2_b), -0.1f, 0.1f);
        L.w_gu = take(size_t(2) * F * H, tensor_seed(s, l, w_gu), -bound(H), bound(H));
        L.w_down = take(size_t(H) * F, tensor_seed(s, l, w_down), -bound(F), bound(F));
        layers.push_back(L);
    }
    emb = take(size_t(V) * H, tensor_seed(s, cfg.layers, Global::emb), -1.f, 1.f);
    lnf_g = take(H, tensor_seed(s, cfg.layers, Global::lnf_g), 0.8f, 1.2f);
    lnf_b = take(H, tensor_seed(s, cfg.layers, Global::lnf_b), -0.1f, 0.1f);
    lm_head = take(size_t(V) * H, tensor_seed(s, cfg.layers, Global::lm_head), -bound(H, 4.0), bound(H, 4.0));
}

DecoderModel::DecoderModel(std::shared_ptr<const Weights> weights, Attention mode)
    : w_(std::move(weights)), cfg_(w_->cfg), mode_(mode), history_(cfg_.batch, cfg_.max_seq, cfg_.vocab) {
    if (cfg_.kv_head_count() != cfg_.heads)
        throw std::invalid_argument("DecoderModel runs one K/V head per query head; " + cfg_.describe() +
                                    " is served by task6_serve's ServingModel");
    const int H = cfg_.hidden, F = cfg_.ffn, V = cfg_.vocab, D = cfg_.head_dim();
    const size_t T = size_t(cfg_.batch) * cfg_.max_seq;
    if (mode_ == Attention::kv_cache) {  // one allocation; each layer's K then V
        const size_t per = size_t(cfg_.batch) * cfg_.max_seq * H;
        cache_ = attn::DeviceBuffer<float>(2 * per * cfg_.layers);
        cache_.poison();  // NaN: a read of a position never written shows in the logits
        for (int l = 0; l < cfg_.layers; ++l)
            caches_.push_back({cache_.get() + 2 * per * l, cache_.get() + 2 * per * l + per, cfg_.max_seq});
    }
    std::vector<float> cosines, sines;
    rope_tables(cfg_.max_seq, D, cosines, sines);
    rope_cos_ = attn::DeviceBuffer<float>(cosines), rope_sin_ = attn::DeviceBuffer<float>(sines);
    for (auto* b : {&x_, &h_, &merged_, &q_, &k_, &v_, &o_}) *b = attn::DeviceBuffer<float>(T * H);
    qkv_ = attn::DeviceBuffer<float>(T * 3 * H);
    gu_ = attn::DeviceBuffer<float>(T * 2 * F), act_ = attn::DeviceBuffer<float>(T * F);
    last_ = attn::DeviceBuffer<float>(size_t(cfg_.batch) * H), logits_ = attn::DeviceBuffer<float>(size_t(cfg_.batch) * V);
    if (mode_ == Attention::oracle) scores_ = attn::DeviceBuffer<float>(size_t(cfg_.batch) * cfg_.heads * cfg_.max_seq * cfg_.max_seq);
}

DecoderModel::~DecoderModel() = default;

void DecoderModel::prefill(const std::vector<int>& prompt, int S) {
    history_.set_prompt(prompt, S);
    forward(0, S);
    history_.processed = S;
}

void DecoderModel::decode() {
    history_.check_step();
    const int n = history_.processed;
    if (mode_ == Attention::kv_cache)
        forward(n, 1);
    else
        forward(0, n + 1);  // no cache: the whole sequence again
    ++history_.processed;
}

attn::Tensor DecoderModel::logits_host() const {
    attn::Tensor t({cfg_.batch, cfg_.vocab});
    CUDA_CHECK(cudaMemcpy(t.ptr(), logits_.get(), logits_.bytes(), cudaMemcpyDeviceToHost));
    return t;
}

void DecoderModel::attention(const LayerCache& cache, int start, int S) {
    const int B = cfg_.batch, H = cfg_.heads, D = cfg_.head_dim();
    switch (mode_) {
    case Attention::kv_cache:
        attention_forward(q_.get(), k_.get(), v_.get(), o_.get(), cache, B, H, S, D, start);
        break;
    case Attention::recompute:
        task4::flash_attention_forward(q_.get(), k_.get(), v_.get(), o_.get(), B, H, S, S, D, true);
        break;
    case Attention::oracle:
        attn::attention_oracle(gemm_, q_.get(), k_.get(), v_.get(), o_.get(), B * H, S, S, D, true, scores_.get());
        break;
    }
}

void DecoderModel::forward(int start, int S) {
    using llm::phase;
    const int B = cfg_.batch, H = cfg_.hidden, F = cfg_.ffn, T = B * S;
    phase(timer_, "other");
    llm::embed(history_.ids(), history_.stride(), B, start, S, w_->emb, nullptr, cfg_.vocab, H, x_.get());
    for (int l = 0; l < cfg_.layers; ++l) {
        const Weights::Layer& L = w_->layers[size_t(l)];
        phase(timer_, "other");
        llm::layernorm(x_.get(), L.ln1_g, L.ln1_b, h_.get(), T, H, kEps);
        phase(timer_, "gemm");
        llm::linear_nt(gemm_, h_.get(), L.w_qkv, qkv_.get(), T, 3 * H, H);
        phase(timer_, "other");
        llm::split_heads(qkv_.get(), nullptr, rope_cos_.get(), rope_sin_.get(), B, S, cfg_.heads, cfg_.head_dim(), start,
                         q_.get(), k_.get(), v_.get());
        phase(timer_, "attention");
        attention(mode_ == Attention::kv_cache ? caches_[size_t(l)] : LayerCache{}, start, S);
        const float* attn_out = o_.get();  // with one token per sequence, [B, H, 1, D] is already [B, H·D]
        if (S > 1) {
            phase(timer_, "other");
            llm::merge_heads(o_.get(), B, cfg_.heads, S, cfg_.head_dim(), merged_.get());
            attn_out = merged_.get();
        }
        phase(timer_, "gemm");
        llm::linear_nt(gemm_, attn_out, L.w_o, x_.get(), T, H, H, 1.f);  // x += attention · w_oᵀ
        phase(timer_, "other");
        llm::layernorm(x_.get(), L.ln2_g, L.ln2_b, h_.get(), T, H, kEps);
        phase(timer_, "gemm");
        llm::linear_nt(gemm_, h_.get(), L.w_gu, gu_.get(), T, 2 * F, H);
        phase(timer_, "other");
        llm::swiglu(gu_.get(), act_.get(), T, F);
        phase(timer_, "gemm");
        llm::linear_nt(gemm_, act_.get(), L.w_down, x_.get(), T, H, F, 1.f);  // x += MLP
    }
    phase(timer_, "other");
    llm::layernorm(x_.get(), w_->lnf_g, w_->lnf_b, last_.get(), B, H, kEps, S, S - 1);  // each sequence's last position
    phase(timer_, "gemm");
    llm::linear_nt(gemm_, last_.get(), w_->lm_head, logits_.get(), B, cfg_.vocab, H);
    phase(timer_, "other");
    llm::argmax_to(logits_.get(), B, cfg_.vocab, history_.ids(), history_.stride(), start + S);
    if (timer_) timer_->end();
}

}  // namespace task6
