// model.h — Task 6's model (given): a decoder-only transformer shaped like the course's dummy LLM,
// with seeded random weights made on the GPU. Per layer: pre-LayerNorm → fused Q/K/V projection →
// RoPE (base 10000, rotate-half) on Q and K → attention → output projection + residual →
// pre-LayerNorm → SwiGLU MLP w_down(SiLU(w_gate·x) ⊙ w_up·x) + residual. Final LayerNorm, LM head,
// greedy next token. GEMMs: cuBLAS fp32 (TF32 off), and for a decode step's few rows the
// bandwidth-bound kernel of common/llm/skinny_gemm; everything else: common/llm/kernels.
//
// Attention runs one of three ways: kv_cache (the student's task6::attention_forward, prefill then
// one token per step), recompute (no cache: the student's Task-4 kernel over the whole sequence
// every step — the course's baseline) or oracle (no cache: the harness's cuBLAS attention with an
// exact softmax — the correctness oracle, independent of every student kernel).
// Weight values: tensor `kind` of layer `l` is uniform(lo, hi) from fill_uniform with seed
// tensor_seed(seed, l, kind); tools/goldens/make_goldens.py makes the same weights for the torch golden.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/llm/history.h"
#include "common/llm/phase_timer.h"
#include "common/tensor.h"
#include "task6/task6.h"

namespace task6 {

enum class Attention { kv_cache, recompute, oracle };

struct ModelConfig {
    int vocab = 512, hidden = 256, heads = 4, layers = 2, ffn = 1024;  // ffn: the MLP's width (4 × hidden)
    int batch = 2, max_seq = 64;  // the cache holds max_seq positions
    uint64_t seed = 6001;
    int kv_heads = 0;  // 0: one K/V head per query head (MHA); fewer: grouped-query attention (Task 6's part 6b)
    int head_dim() const { return hidden / heads; }
    int kv_head_count() const { return kv_heads ? kv_heads : heads; }
    int qkv_width() const { return hidden + 2 * kv_head_count() * head_dim(); }  // the fused projection's outputs
    double params() const;
    size_t weight_bytes() const { return size_t(params()) * sizeof(float); }
    size_t kv_cache_bytes() const { return size_t(2) * layers * batch * max_seq * hidden * sizeof(float); }
    // Device memory of one DecoderModel beyond the weights (activations, cache, oracle scores).
    size_t run_bytes(Attention mode) const;
    std::string describe() const;
    void validate() const;  // std::invalid_argument naming the bad field (a DecoderModel also needs kv_heads == heads)
    // The course's size: batch 4, prompt 1024 + 100 new tokens, hidden 4096, 32 heads, 24 layers,
    // vocab 8192 (6.51 B parameters, 26.04 GB fp32).
    static ModelConfig course();
};

// RoPE's tables [max_pos, D/2]: cos and sin of position · 10000^(−2i/D), the angles in double.
void rope_tables(int max_pos, int D, std::vector<float>& cosines, std::vector<float>& sines);

// Per-tensor seeds (the same formula in tools/goldens/make_goldens.py); layer == layers for the globals.
uint64_t tensor_seed(uint64_t seed, int layer, int kind);

// The weights, made once on the GPU and shared by the models that run them (26 GB at the course's size).
struct Weights {
    explicit Weights(const ModelConfig& cfg);
    struct Layer {
        float *ln1_g, *ln1_b, *w_qkv, *w_o, *ln2_g, *ln2_b, *w_gu, *w_down;
    };
    ModelConfig cfg;
    attn::DeviceBuffer<float> data;
    std::vector<Layer> layers;
    float *emb = nullptr, *lnf_g = nullptr, *lnf_b = nullptr, *lm_head = nullptr;
};

const char* attention_name(Attention a);

// One inference run over shared weights: its own activations, token history and (kv_cache) cache.
class DecoderModel {
public:
    DecoderModel(std::shared_ptr<const Weights> weights, Attention mode);
    ~DecoderModel();
    DecoderModel(const DecoderModel&) = delete;
    DecoderModel& operator=(const DecoderModel&) = delete;

    // The prompt [B, S] (row-major token ids) → the last position's logits, and the greedy next
    // token appended to the history.
    void prefill(const std::vector<int>& prompt, int S);
    // One generation step: the newest token in, its logits out, the greedy next token appended.
    void decode();
    // Replaces the newest token of every sequence (teacher forcing: follow a reference's tokens).
    void force_newest(const std::vector<int>& tokens) { history_.force_newest(tokens); }
    // Tokens so far (prompt + generated, the newest included): [B, length()].
    std::vector<int> tokens() const { return history_.tokens(); }
    int length() const { return history_.processed + 1; }
    const float* logits() const { return logits_.get(); }  // [B, vocab] on the device
    attn::Tensor logits_host() const;
    const ModelConfig& config() const { return cfg_; }
    void set_phase_timer(llm::PhaseTimer* t) { timer_ = t; }

private:
    void forward(int start, int S);  // tokens history[:, start … start+S) at those positions
    void attention(const LayerCache& cache, int start, int S);

    std::shared_ptr<const Weights> w_;
    const ModelConfig& cfg_;
    Attention mode_;
    attn::CublasGemm gemm_;
    attn::DeviceBuffer<float> cache_, rope_cos_, rope_sin_;
    attn::DeviceBuffer<float> x_, h_, qkv_, q_, k_, v_, o_, merged_, gu_, act_, last_, logits_, scores_;
    llm::TokenHistory history_;
    std::vector<LayerCache> caches_;
    llm::PhaseTimer* timer_ = nullptr;
};

}  // namespace task6
