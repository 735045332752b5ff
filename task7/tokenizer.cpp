// tokenizer.cpp — see tokenizer.h. Build: linked into Task 7's binaries with -lpcre2-8.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "task7/tokenizer.h"

#include <pcre2.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "common/golden.h"
#include "common/llm/utf8.h"

namespace gpt2 {
namespace {

// GPT-2's pre-tokenisation: contractions, letters, digits, other symbols (each with one optional
// leading space), then whitespace — runs of it give their last space to the next word.
const char* kPattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

std::string base64_decode(const std::string& in, const std::string& where) {
    static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    unsigned bits = 0;
    int n = 0;
    for (char c : in) {
        if (c == '=') break;
        const size_t v = alphabet.find(c);
        if (v == std::string::npos) throw std::runtime_error(where + ": '" + in + "' is not base64");
        bits = (bits << 6) | unsigned(v), n += 6;
        if (n >= 8) n -= 8, out.push_back(char((bits >> n) & 0xFF));
    }
    return out;
}

pcre2_code* as_code(void* p) { return static_cast<pcre2_code*>(p); }


}  // namespace

std::string Tokenizer::default_path() { return attn::repo_path("ATTNLAB_TIKTOKEN", ".deps/gpt2.tiktoken"); }

Tokenizer::Tokenizer(const std::string& path) {
    std::ifstream f(path);
    if (!f) throw std::runtime_error(path + ": cannot open the GPT-2 rank file (run \"make deps\" to fetch it)");
    std::string line;
    for (int lineno = 1; std::getline(f, line); ++lineno) {
        if (line.empty()) continue;
        const std::string where = path + ":" + std::to_string(lineno);
        const size_t sp = line.find(' ');
        if (sp == std::string::npos) throw std::runtime_error(where + ": expected \"<base64> <rank>\"");
        const int rank = std::atoi(line.c_str() + sp + 1);
        if (rank != int(bytes_.size())) throw std::runtime_error(where + ": rank " + line.substr(sp + 1) + " out of order");
        std::string token = base64_decode(line.substr(0, sp), where);
        ranks_.emplace(token, rank);
        bytes_.push_back(std::move(token));
    }
    if (bytes_.size() != size_t(kEndOfText))
        throw std::runtime_error(path + ": " + std::to_string(bytes_.size()) + " ranks, GPT-2 has 50256 (is this gpt2.tiktoken?)");
    bytes_.push_back("<|endoftext|>");
    int err = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED, PCRE2_UTF | PCRE2_UCP,
                                   &err, &offset, nullptr);
    if (!re) throw std::runtime_error("tokenizer: GPT-2's regex does not compile (PCRE2 error " + std::to_string(err) + ")");
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);  // faster where JIT exists; the interpreter otherwise
    regex_ = re;
}

Tokenizer::~Tokenizer() { pcre2_code_free(as_code(regex_)); }

const std::string& Tokenizer::token_bytes(int id) const {
    if (id < 0 || id >= int(bytes_.size()))
        throw std::out_of_range("token id " + std::to_string(id) + " is outside GPT-2's vocabulary of " + std::to_string(bytes_.size()));
    return bytes_[size_t(id)];
}

// tiktoken's byte_pair_merge: start from single bytes, merge the adjacent pair of lowest rank
// until no pair is a token.
void Tokenizer::bpe(const std::string& piece, std::vector<int>& out) const {
    if (auto it = ranks_.find(piece); it != ranks_.end()) {
        out.push_back(it->second);
        return;
    }
    std::vector<size_t> starts(piece.size() + 1);
    for (size_t i = 0; i <= piece.size(); ++i) starts[i] = i;
    auto rank_of = [&](size_t i) {  // rank of parts i and i+1 merged, INT_MAX if not a token
        if (i + 2 >= starts.size()) return INT_MAX;
        auto it = ranks_.find(piece.substr(starts[i], starts[i + 2] - starts[i]));
        return it == ranks_.end() ? INT_MAX : it->second;
    };
    std::vector<int> pair_rank(starts.size());
    for (size_t i = 0; i < starts.size(); ++i) pair_rank[i] = rank_of(i);
    while (starts.size() > 2) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < starts.size(); ++i)
            if (pair_rank[i] < pair_rank[best]) best = i;
        if (pair_rank[best] == INT_MAX) break;
        starts.erase(starts.begin() + long(best) + 1);
        pair_rank.erase(pair_rank.begin() + long(best) + 1);
        pair_rank[best] = rank_of(best);
        if (best > 0) pair_rank[best - 1] = rank_of(best - 1);
    }
    for (size_t i = 0; i + 1 < starts.size(); ++i) out.push_back(ranks_.at(piece.substr(starts[i], starts[i + 1] - starts[i])));
}

std::vector<int> Tokenizer::encode(const std::string& text) const {
    if (const size_t bad = llm::first_invalid_utf8(text); bad != std::string::npos)
        throw std::invalid_argument("tokenizer: the text is not valid UTF-8 (at byte " + std::to_string(bad) + ")");
    std::vector<int> ids;
    pcre2_code* re = as_code(regex_);
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re, nullptr);
    const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    PCRE2_SIZE at = 0;
    while (at < text.size()) {
        const int rc = pcre2_match(re, subject, text.size(), at, 0, md, nullptr);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) {  // overlong forms, surrogates: what the scan above lets through, PCRE2 refuses
            pcre2_match_data_free(md);
            throw std::invalid_argument("tokenizer: PCRE2 error " + std::to_string(rc) + " matching from byte " +
                                        std::to_string(at) + " (is the text valid UTF-8?)");
        }
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        if (ov[1] == ov[0]) {  // cannot happen with this pattern; never loop forever
            ++at;
            continue;
        }
        bpe(text.substr(ov[0], ov[1] - ov[0]), ids);
        at = ov[1];
    }
    pcre2_match_data_free(md);
    return ids;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
    std::string out;
    for (int id : ids) out += token_bytes(id);
    return out;
}

}  // namespace gpt2
