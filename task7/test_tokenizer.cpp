// test_tokenizer.cpp — the C++ GPT-2 tokenizer against tiktoken (CPU; CI runs it).
//   make build/reference/bin/task7_cpu_tests && ./build/reference/bin/task7_cpu_tests
// goldens/task7/tokenizer.json holds tiktoken's ids for varied texts (written by `make goldens`
// with tiktoken from PyPI): unicode, digits, whitespace runs, contractions, code, a long real text.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/golden.h"
#include "task7/tokenizer.h"

using gpt2::Tokenizer;

namespace {
const Tokenizer& tok() {
    static const Tokenizer t;
    return t;
}
}  // namespace

TEST_CASE("tokenizer: GPT-2's ids for \"Hello world\"", "[tokenizer]") {
    CHECK(tok().encode("Hello world") == std::vector<int>{15496, 995});
    CHECK(tok().vocab_size() == 50257);
    CHECK(tok().token_bytes(Tokenizer::kEndOfText) == "<|endoftext|>");
}

TEST_CASE("tokenizer: equal to tiktoken on every golden text, both ways", "[tokenizer]") {
    const std::string path = attn::goldens_dir() + "/task7/tokenizer.json";
    std::ifstream f(path);
    INFO(path << ": missing — run \"make goldens\"");
    REQUIRE(f);
    const nlohmann::json j = nlohmann::json::parse(f);
    REQUIRE(j.at("cases").size() >= 6);
    for (const auto& c : j.at("cases")) {
        const std::string text = c.at("text");
        const std::vector<int> want = c.at("ids");
        INFO("text: " << text.substr(0, 80));
        const std::vector<int> got = tok().encode(text);
        CHECK(got == want);
        CHECK(tok().decode(want) == text);
    }
}

TEST_CASE("tokenizer: errors name the problem", "[tokenizer]") {
    CHECK_THROWS_WITH(tok().encode("ok \xff\xfe bad"), Catch::Contains("not valid UTF-8") && Catch::Contains("byte 3"));
    CHECK_THROWS_WITH(tok().decode({50257}), Catch::Contains("50257") && Catch::Contains("vocabulary"));
    CHECK_THROWS_WITH(Tokenizer("/nonexistent/gpt2.tiktoken"), Catch::Contains("/nonexistent/gpt2.tiktoken") &&
                                                                   Catch::Contains("make deps"));
    CHECK(tok().encode("").empty());
}
