// Task 3 — FlashAttention-2, Algorithm 1 (forward pass), on the CPU.
//
// Build and run:  make task3            (your skeleton)
//                 make task3 IMPL=reference
// Q is cut into row tiles of Br, K and V into column tiles of Bc. For each Q tile we walk the K/V
// tiles once, keeping per row the running maximum m, the running sum l of exp(s − m), and an
// unnormalised output O; when m grows, what was accumulated is rescaled by exp(m_old − m_new).
// At the end O is divided by l. No S × S matrix ever exists: only one Br × Bc tile of scores.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/todo.h"
#include "task3/task3.h"

namespace task3 {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// One Q tile (rows r0 … r0+rows−1 of one head) and its running state.
struct RowTile {
    int r0, rows;
    std::vector<float> m, l, o;  // [Br], [Br], [Br × D]
    std::vector<float> alpha;    // [Br]: exp(m_old − m_new) of the latest tile, the rescale of O (task3.3 → task3.4)
};

// task3.2  s[r][c] = q_{r0+r} · k_{c0+c} · scale for the rows × cols tile; causal: −inf where the
// key index c0+c is greater than the query index r0+r.
[[maybe_unused]] void tile_scores(const float* q, const float* k, float* s, int r0, int rows, int c0, int cols, int D, float scale,
                 bool causal) {
    // TODO(task3.2): the scores of one tile, S_ij = Q_i K_jᵀ / sqrt(D) (Algorithm 1, line 8),
    // and the causal mask: −inf (kNegInf) where the key's index exceeds the query's.
    (void)q, (void)k, (void)s, (void)r0, (void)rows, (void)c0, (void)cols, (void)D, (void)scale, (void)causal;
    ATTNLAB_TODO("task3.2");
}

// task3.3  the online softmax of one score tile, per row (Algorithm 1, line 9):
// m_new = max(m_old, rowmax(S)), S becomes P = exp(S − m_new) in place,
// l = exp(m_old − m_new)·l + rowsum(P), m = m_new; alpha[r] = exp(m_old − m_new) for task3.4.
[[maybe_unused]] void online_softmax(RowTile& t, float* s, int cols) {
    // TODO(task3.3): per row r, m_new = max(m_old, rowmax(S_ij)); P = exp(S_ij − m_new), written
    //   over the scores; l_new = exp(m_old − m_new)·l_old + rowsum(P) (Algorithm 1, line 9); keep
    //   t.alpha[r] = exp(m_old − m_new) for task3.4 and t.m[r] = m_new.
    // A row whose scores are all −inf so far (causal) must not become NaN: leave its m and l, make
    // its P zeros and its alpha 1.
    (void)t, (void)s, (void)cols;
    ATTNLAB_TODO("task3.3");
}

// task3.4  the running output (Algorithm 1, line 10): O_i = diag(alpha)·O_i + P·V_j, with
// alpha = exp(m_old − m_new) from task3.3.
[[maybe_unused]] void update_output(RowTile& t, const float* p, const float* v, int c0, int cols, int D) {
    // TODO(task3.4): per row r, O_i = diag(exp(m_old − m_new))·O_i + P·V_j (Algorithm 1, line 10):
    //   scale row r of t.o by t.alpha[r], then add P's row times the rows c0 … c0+cols−1 of V.
    //   Mind the erratum: the paper prints diag(·)^−1 here; the rescale multiplies
    //   (flash-attention issue 991).
    (void)t, (void)p, (void)v, (void)c0, (void)cols, (void)D;
    ATTNLAB_TODO("task3.4");
}

// task3.5  O_i = diag(l)^−1 · O_i, written to the output rows of this tile (Algorithm 1, lines 12 and 14).
[[maybe_unused]] void finalize(const RowTile& t, float* o, int D) {
    // TODO(task3.5): divide each row of the running output by its l and store it in o.
    (void)t, (void)o, (void)D;
    ATTNLAB_TODO("task3.5");
}

}  // namespace

void flash_attention_cpu(const float* Q, const float* K, const float* V, float* O, int B, int H, int S, int D, int Br,
                         int Bc, bool causal) {
    if (Br < 1 || Bc < 1) throw std::invalid_argument("tile sizes must be positive, got Br=" + std::to_string(Br) +
                                                      " Bc=" + std::to_string(Bc));
    const float scale = 1.0f / std::sqrt(float(D));
    // TODO(task3.1): the two loops of Algorithm 1 for every (batch, head):
    //   for each Q tile of Br rows (the last one may be shorter than Br):   (lines 3–16)
    //     m = −inf, l = 0, O = 0 for its rows                               (line 5)
    //     for each K/V tile of Bc rows (the last may be shorter; causal: stop after the diagonal):
    //       tile_scores(...)      task3.2
    //       online_softmax(...)   task3.3
    //       update_output(...)    task3.4
    //     finalize(...)           task3.5                                   (lines 12, 14)
    // Allocate one Br × Bc score tile and the RowTile state (m, l, o and alpha), never an S × S matrix.
    (void)Q, (void)K, (void)V, (void)O, (void)B, (void)H, (void)S, (void)D, (void)causal, (void)scale;
    ATTNLAB_TODO("task3.1");
}

}  // namespace task3
