// gpt2.cpp — see gpt2.h.
#include "task7/gpt2.h"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/llm/kernels.h"
#include "common/llm/skinny_gemm.h"
#include "common/golden.h"
#include "common/safetensors.h"

namespace gpt2 {
namespace {

int config_int(const nlohmann::json& j, const std::string& path, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (j.contains(n) && j[n].is_number_integer()) return j[n].get<int>();
    throw std::runtime_error(fmt::format("{}: no integer \"{}\"", path, *names.begin()));
}

Config read_config(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(path + ": cannot open (a GPT-2 checkpoint directory holds config.json and model.safetensors; "
                                            "run \"make model\", or set GPT2_DIR)");
    nlohmann::json j;
    try {
        f >> j;
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
    }
    Config c;
    c.vocab = config_int(j, path, {"vocab_size"});
    c.n_positions = config_int(j, path, {"n_positions", "n_ctx"});
    c.n_embd = config_int(j, path, {"n_embd"});
    c.n_layer = config_int(j, path, {"n_layer"});
    c.n_head = config_int(j, path, {"n_head"});
    c.eps = j.value("layer_norm_epsilon", 1e-5f);
    const std::string act = j.value("activation_function", "gelu_new");
    if (act != "gelu_new" && act != "gelu_pytorch_tanh")
        throw std::runtime_error(path + ": activation_function \"" + act + "\" is not GPT-2's tanh GELU (gelu_new)");
    if (!j.value("tie_word_embeddings", true)) throw std::runtime_error(path + ": the LM head must be tied to wte");
    const int D = c.head_dim();
    if (c.n_embd % c.n_head || (D != 32 && D != 64 && D != 96 && D != 128))
        throw std::runtime_error(fmt::format("{}: head_dim {} / {} is not 32, 64, 96 or 128", path, c.n_embd, c.n_head));
    return c;
}

// Every tensor the engine reads, in the order it is laid out on the device: key (without the
// "transformer." prefix), shape as stored, and whether it is a Conv1D weight ([in, out]).
struct TensorSpec {
    std::string key;
    attn::Shape shape;
    bool conv1d = false;
};

std::vector<TensorSpec> tensor_specs(const Config& c) {
    const int64_t C = c.n_embd;
    std::vector<TensorSpec> specs = {{"wte.weight", {c.vocab, C}}, {"wpe.weight", {c.n_positions, C}}};
    for (int i = 0; i < c.n_layer; ++i) {
        const std::string h = fmt::format("h.{}.", i);
        for (TensorSpec t : std::vector<TensorSpec>{{"ln_1.weight", {C}}, {"ln_1.bias", {C}}, {"attn.c_attn.weight", {C, 3 * C}, true},
                                                    {"attn.c_attn.bias", {3 * C}}, {"attn.c_proj.weight", {C, C}, true},
                                                    {"attn.c_proj.bias", {C}}, {"ln_2.weight", {C}}, {"ln_2.bias", {C}},
                                                    {"mlp.c_fc.weight", {C, 4 * C}, true}, {"mlp.c_fc.bias", {4 * C}},
                                                    {"mlp.c_proj.weight", {4 * C, C}, true}, {"mlp.c_proj.bias", {C}}}) {
            t.key = h + t.key;
            specs.push_back(t);
        }
    }
    specs.push_back({"ln_f.weight", {C}});
    specs.push_back({"ln_f.bias", {C}});
    return specs;
}

std::string stored_name(const attn::SafetensorsFile& f, const std::string& key) {
    return f.has("transformer." + key) ? "transformer." + key : key;
}

attn::SafetensorsFile weights_file(const std::string& dir) {
    return attn::SafetensorsFile(dir + "/model.safetensors", "a GPT-2 checkpoint in Hugging Face's layout");
}

// Every tensor `c` needs is in model.safetensors with its shape and dtype.
void check_tensors(const std::string& dir, const Config& c, const attn::SafetensorsFile& file) {
    for (const TensorSpec& t : tensor_specs(c)) {
        const std::string name = stored_name(file, t.key);
        if (!file.has(name))
            throw std::runtime_error(fmt::format("{}/model.safetensors: missing tensor \"{}\" (expected {} float32)", dir, t.key,
                                                 attn::shape_str(t.shape)));
        if (file.shape(name) != t.shape || file.dtype(name) != "F32")
            throw std::runtime_error(fmt::format("{}/model.safetensors: tensor \"{}\" is {} {}, expected {} F32 (for {})", dir, name,
                                                 attn::shape_str(file.shape(name)), file.dtype(name), attn::shape_str(t.shape),
                                                 c.describe()));
    }
}

}  // namespace

Config inspect_checkpoint(const std::string& dir) {
    const Config c = read_config(dir + "/config.json");
    check_tensors(dir, c, weights_file(dir));
    return c;
}

std::string Config::describe() const {
    return fmt::format("GPT-2 {} layers × {} wide, {} heads of {}, vocab {}, context {}", n_layer, n_embd, n_head, head_dim(),
                       vocab, n_positions);
}

std::string default_model_dir() { return attn::repo_path("GPT2_DIR", "models/kjv-gpt2"); }

std::shared_ptr<Checkpoint> Checkpoint::load(const std::string& dir) {
    auto ck = std::make_shared<Checkpoint>();
    ck->dir = dir;
    ck->cfg = read_config(dir + "/config.json");
    const Config& c = ck->cfg;
    const attn::SafetensorsFile file = weights_file(dir);
    check_tensors(dir, c, file);  // every problem named before any device memory is touched
    const std::vector<TensorSpec> specs = tensor_specs(c);
    size_t total = 0;
    for (const TensorSpec& t : specs) total += (size_t(attn::numel(t.shape)) + 3) / 4 * 4;  // each 16-byte aligned
    ck->data = attn::DeviceBuffer<float>(total);
    float* p = ck->data.get();
    std::vector<float*> where;
    for (const TensorSpec& t : specs) {  // onto the device; Conv1D [in, out] weights transposed to [out, in]
        attn::Tensor host = file.load_f32(stored_name(file, t.key), t.shape);
        if (t.conv1d) {
            attn::Tensor tt({t.shape[1], t.shape[0]});
            for (int64_t i = 0; i < t.shape[0]; ++i)
                for (int64_t j = 0; j < t.shape[1]; ++j) tt.ptr()[j * t.shape[0] + i] = host.ptr()[i * t.shape[1] + j];
            host = std::move(tt);
        }
        CUDA_CHECK(cudaMemcpy(p, host.ptr(), host.data.size() * sizeof(float), cudaMemcpyHostToDevice));
        where.push_back(p);
        p += (host.data.size() + 3) / 4 * 4;
    }
    size_t i = 0;
    ck->wte = where[i++], ck->wpe = where[i++];
    for (int l = 0; l < c.n_layer; ++l) {
        Block b{};
        for (float** field : {&b.ln1_g, &b.ln1_b, &b.attn_w, &b.attn_b, &b.proj_w, &b.proj_b, &b.ln2_g, &b.ln2_b, &b.fc_w, &b.fc_b,
                              &b.mlp_proj_w, &b.mlp_proj_b})
            *field = where[i++];  // the order of tensor_specs
        ck->blocks.push_back(b);
    }
    ck->lnf_g = where[i++], ck->lnf_b = where[i++];
    return ck;
}

Engine::Engine(std::shared_ptr<const Checkpoint> ckpt, int batch, int max_seq)
    : ck_(std::move(ckpt)), B_(batch), history_(batch, max_seq, ck_->cfg.vocab) {
    const Config& c = ck_->cfg;
    if (batch < 1) throw std::invalid_argument("gpt2::Engine: batch must be ≥ 1");
    if (max_seq < 1 || max_seq > c.n_positions)
        throw std::invalid_argument(fmt::format("gpt2::Engine: max_seq {} must be in 1 … {} (the model's context)", max_seq, c.n_positions));
    const size_t T = size_t(batch) * max_seq, C = size_t(c.n_embd), per = size_t(batch) * max_seq * C;
    cache_ = attn::DeviceBuffer<float>(2 * per * c.n_layer);
    cache_.poison();
    for (int l = 0; l < c.n_layer; ++l) caches_.push_back({cache_.get() + 2 * per * l, cache_.get() + 2 * per * l + per, max_seq});
    for (auto* b : {&x_, &h_, &q_, &k_, &v_, &o_, &merged_}) *b = attn::DeviceBuffer<float>(T * C);
    qkv_ = attn::DeviceBuffer<float>(T * 3 * C), fc_ = attn::DeviceBuffer<float>(T * 4 * C);
    last_ = attn::DeviceBuffer<float>(size_t(batch) * C), logits_ = attn::DeviceBuffer<float>(size_t(batch) * c.vocab);
}

void Engine::prefill(const std::vector<int>& prompt, int S) {
    history_.set_prompt(prompt, S);
    forward(0, S);
    history_.processed = S;
}

void Engine::decode() {
    history_.check_step();
    forward(history_.processed, 1);
    ++history_.processed;
}

attn::Tensor Engine::logits_host() const {
    attn::Tensor t({B_, ck_->cfg.vocab});
    CUDA_CHECK(cudaMemcpy(t.ptr(), logits_.get(), logits_.bytes(), cudaMemcpyDeviceToHost));
    return t;
}

void Engine::forward(int start, int S) {
    const Config& c = ck_->cfg;
    const int C = c.n_embd, T = B_ * S, H = c.n_head, D = c.head_dim();
    llm::embed(history_.ids(), history_.stride(), B_, start, S, ck_->wte, ck_->wpe, c.vocab, C, x_.get());
    for (int l = 0; l < c.n_layer; ++l) {
        const Checkpoint::Block& b = ck_->blocks[size_t(l)];
        llm::layernorm(x_.get(), b.ln1_g, b.ln1_b, h_.get(), T, C, c.eps);
        llm::linear_nt(gemm_, h_.get(), b.attn_w, qkv_.get(), T, 3 * C, C);
        llm::split_heads(qkv_.get(), b.attn_b, nullptr, nullptr, B_, S, H, D, start, q_.get(), k_.get(), v_.get());
        task6::attention_forward(q_.get(), k_.get(), v_.get(), o_.get(), caches_[size_t(l)], B_, H, S, D, start);
        const float* attn_out = o_.get();  // [B, H, 1, D] is already [B, C] when S == 1
        if (S > 1) {
            llm::merge_heads(o_.get(), B_, H, S, D, merged_.get());
            attn_out = merged_.get();
        }
        llm::linear_nt(gemm_, attn_out, b.proj_w, x_.get(), T, C, C, 1.f);  // x += attention · c_proj
        llm::add_bias(x_.get(), b.proj_b, T, C);
        llm::layernorm(x_.get(), b.ln2_g, b.ln2_b, h_.get(), T, C, c.eps);
        llm::linear_nt(gemm_, h_.get(), b.fc_w, fc_.get(), T, 4 * C, C);
        llm::bias_gelu(fc_.get(), b.fc_b, T, 4 * C);
        llm::linear_nt(gemm_, fc_.get(), b.mlp_proj_w, x_.get(), T, C, 4 * C, 1.f);  // x += MLP
        llm::add_bias(x_.get(), b.mlp_proj_b, T, C);
    }
    llm::layernorm(x_.get(), ck_->lnf_g, ck_->lnf_b, last_.get(), B_, C, c.eps, S, S - 1);
    llm::linear_nt(gemm_, last_.get(), ck_->wte, logits_.get(), B_, c.vocab, C);  // the LM head is wte
    if (sampling_.top_k > 0)
        llm::sample_top_k_to(logits_.get(), B_, c.vocab, sampling_.top_k, sampling_.temperature, sampling_.seed, history_.ids(),
                             history_.stride(), start + S);
    else
        llm::argmax_to(logits_.get(), B_, c.vocab, history_.ids(), history_.stride(), start + S);
}

}  // namespace gpt2
