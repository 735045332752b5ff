// history.h — the token ids of a generation run, on the device (Tasks 6 and 7): [B, max_seq + 1],
// row b holding sequence b's prompt, then each generated token. The model's kernels read a step's
// input token from it and write the next one into it, so a step needs no host round trip; the
// extra column holds the token predicted at the last position. `processed` counts the positions
// whose K/V are in the cache; the newest token sits at column `processed`.
#pragma once
#include <vector>

#include "common/cuda/device.h"

namespace llm {

class TokenHistory {
public:
    TokenHistory(int batch, int max_seq, int vocab);
    // The prompt [B, S] (row-major) into columns 0 … S−1; ids checked against the vocabulary.
    void set_prompt(const std::vector<int>& prompt, int S);
    // Before a decode step: throws unless a prompt is in and position `processed` fits.
    void check_step() const;
    // One token per sequence into column `processed` (teacher forcing).
    void force_newest(const std::vector<int>& tokens);
    // Columns 0 … processed (the newest included): [B, processed + 1].
    std::vector<int> tokens() const;
    int* ids() const { return ids_.get(); }
    int stride() const { return max_seq_ + 1; }
    int processed = 0;

private:
    void check_ids(const std::vector<int>& ids, const char* who) const;
    int B_, max_seq_, vocab_;
    attn::DeviceBuffer<int> ids_;
};

}  // namespace llm
