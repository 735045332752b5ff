// test_checkpoint.cpp — the GPT-2 checkpoint reader's checks, on the host (CPU; CI runs them):
// small checkpoints from `make goldens` — one valid in the prefix-less layout, and one per problem.
#include <catch2/catch.hpp>

#include "common/golden.h"
#include "task7/gpt2.h"

namespace {
std::string dir(const std::string& name) { return attn::goldens_dir() + "/task7/checkpoints/" + name; }
}  // namespace

TEST_CASE("checkpoint: Hugging Face layout without the transformer. prefix", "[checkpoint]") {
    const gpt2::Config c = gpt2::inspect_checkpoint(dir("no_prefix"));
    CHECK(c.vocab == 64);
    CHECK(c.n_layer == 1);
    CHECK(c.head_dim() == 64);
}

TEST_CASE("checkpoint: the tiny test model and a trained layout pass", "[checkpoint]") {
    CHECK(gpt2::inspect_checkpoint(attn::goldens_dir() + "/task7/tiny").n_layer == 2);
}

TEST_CASE("checkpoint: every problem is named", "[checkpoint]") {
    CHECK_THROWS_WITH(gpt2::inspect_checkpoint(dir("missing_tensor")),
                      Catch::Contains("missing tensor \"h.0.mlp.c_fc.bias\"") && Catch::Contains("[256]"));
    CHECK_THROWS_WITH(gpt2::inspect_checkpoint(dir("wrong_shape")),
                      Catch::Contains("transformer.h.0.attn.c_attn.weight") && Catch::Contains("[192, 64]") &&
                          Catch::Contains("expected [64, 192]"));
    CHECK_THROWS_WITH(gpt2::inspect_checkpoint(dir("wrong_activation")), Catch::Contains("activation_function \"relu\""));
    CHECK_THROWS_WITH(gpt2::inspect_checkpoint(dir("does_not_exist")),
                      Catch::Contains("config.json: cannot open") && Catch::Contains("make model"));
}
