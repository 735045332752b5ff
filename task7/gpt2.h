// gpt2.h — GPT-2 on the students' kernels (given): a Hugging Face checkpoint loader and an engine.
//
// Checkpoint: a directory with config.json and model.safetensors in Hugging Face's GPT-2 layout
// (keys with or without the "transformer." prefix; Conv1D weights [in, out], transposed here to
// [out, in] for the GEMMs; the LM head tied to wte). Anything missing or misshapen throws naming the
// key and the shape expected.
// Engine: per block LayerNorm → c_attn (+bias) → heads → task6::attention_forward (the student's
// Task-4 kernel on the prompt, Task-5 cache and decode kernel per token) → c_proj (+bias) + residual
// → LayerNorm → c_fc (+bias) → GELU (tanh) → c_proj (+bias) + residual; final LayerNorm, LM head.
// The next token: greedy, or top-k with temperature from a seed (same seed, same text).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "common/llm/history.h"
#include "common/tensor.h"
#include "task6/task6.h"

namespace gpt2 {

struct Config {
    int vocab = 50257, n_positions = 1024, n_embd = 768, n_layer = 12, n_head = 12;
    float eps = 1e-5f;
    int head_dim() const { return n_embd / n_head; }
    std::string describe() const;
};

struct Checkpoint {
    struct Block {
        float *ln1_g, *ln1_b, *attn_w, *attn_b, *proj_w, *proj_b, *ln2_g, *ln2_b, *fc_w, *fc_b, *mlp_proj_w, *mlp_proj_b;
    };
    Config cfg;
    std::string dir;
    attn::DeviceBuffer<float> data;
    std::vector<Block> blocks;
    float *wte = nullptr, *wpe = nullptr, *lnf_g = nullptr, *lnf_b = nullptr;
    // Reads dir/config.json and dir/model.safetensors onto the GPU.
    static std::shared_ptr<Checkpoint> load(const std::string& dir);
};

// Reads dir/config.json and checks that dir/model.safetensors holds every tensor with its shape
// and dtype (host only, no GPU); throws std::runtime_error naming the first missing or misshapen key.
Config inspect_checkpoint(const std::string& dir);

// The default model's directory: $GPT2_DIR if set (a real GPT-2, see README), else models/kjv-gpt2.
std::string default_model_dir();

struct Sampling {
    int top_k = 0;  // 0: greedy
    float temperature = 1.f;
    uint64_t seed = 0;
};

class Engine {
public:
    // batch sequences of at most max_seq tokens (≤ n_positions).
    Engine(std::shared_ptr<const Checkpoint> ckpt, int batch, int max_seq);
    void set_sampling(const Sampling& s) { sampling_ = s; }
    void prefill(const std::vector<int>& prompt, int S);  // [B, S] ids → the next token chosen
    void decode();                                         // the newest token in → the next chosen
    void force_newest(const std::vector<int>& tokens) { history_.force_newest(tokens); }  // follow a reference
    std::vector<int> tokens() const { return history_.tokens(); }                         // [B, length()]
    int length() const { return history_.processed + 1; }
    attn::Tensor logits_host() const;                      // [B, vocab], of the newest step
    const Config& config() const { return ck_->cfg; }

private:
    void forward(int start, int S);
    std::shared_ptr<const Checkpoint> ck_;
    int B_;
    Sampling sampling_;
    attn::CublasGemm gemm_;
    attn::DeviceBuffer<float> cache_, x_, h_, qkv_, q_, k_, v_, o_, merged_, fc_, last_, logits_;
    llm::TokenHistory history_;
    std::vector<task6::LayerCache> caches_;
};

}  // namespace gpt2
