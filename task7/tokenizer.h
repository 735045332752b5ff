// tokenizer.h — GPT-2's byte-level BPE tokenizer (given), equal to tiktoken's "gpt2" encoding.
//
// Ranks come from a tiktoken file (`base64(token bytes) rank` per line; .deps/gpt2.tiktoken, made by
// tools/setup/fetch_assets.sh); <|endoftext|> = 50256 is added here. Text is cut into pieces by GPT-2's
// regex (PCRE2, Unicode properties), and each piece is merged pair by pair, lowest rank first, as
// tiktoken does. encode() treats "<|endoftext|>" in the text as ordinary text (tiktoken's
// encode_ordinary); decode() returns the raw bytes (a token may end inside a UTF-8 character).
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

namespace gpt2 {

class Tokenizer {
public:
    static constexpr int kEndOfText = 50256;
    // Throws std::runtime_error naming the file and line of anything malformed.
    explicit Tokenizer(const std::string& tiktoken_path = default_path());
    ~Tokenizer();
    Tokenizer(const Tokenizer&) = delete;
    Tokenizer& operator=(const Tokenizer&) = delete;

    // UTF-8 text → token ids; invalid UTF-8 throws std::invalid_argument naming the byte offset.
    std::vector<int> encode(const std::string& text) const;
    std::string decode(const std::vector<int>& ids) const;  // an unknown id throws std::out_of_range
    const std::string& token_bytes(int id) const;
    int vocab_size() const { return int(bytes_.size()); }

    // $ATTNLAB_TIKTOKEN, else .deps/gpt2.tiktoken in the repository.
    static std::string default_path();

private:
    void bpe(const std::string& piece, std::vector<int>& out) const;
    std::unordered_map<std::string, int> ranks_;
    std::vector<std::string> bytes_;  // id → bytes
    void* regex_ = nullptr;           // pcre2_code_8*
};

}  // namespace gpt2
