"""The bridge's functions on torch tensors: attention (Task 4), decode (Task 5), softmax and gemm (Task 2).

    import attnlab                                  # pip install -e python/ (or make python's wheel); make python IMPL=… first
    o = attnlab.attention(q, k, v, causal=True)     # q [B, H, Sq, D], k, v [B, H, Sk, D], float32 or bf16, CUDA

Every function checks its arguments first (TypeError / ValueError naming the argument), allocates
its output with torch on the inputs' device, and calls the student's (or the reference's) kernel
through libattnlab.so in one C call; an error the C++ side reports (a TODO not written yet, a CUDA
error) is raised as RuntimeError with its message. The kernels run on the legacy default stream,
ordered with torch's current stream by that same call (see _streams.py): results are safe to use on
the current stream at once, without a host synchronisation. attention has a backward (Task 4c, through
the operator attnlab::attention: op.py, backward.py); the others have none and refuse inputs that
require grad.
"""
import ctypes

import torch

from . import _checks, _library
from ._streams import current as current_stream


def attention(q, k, v, causal=False, enable_gqa=False):
    """softmax(q kᵀ / √D) v with Task 4's fused kernel (task4::flash_attention_forward); differentiable.

    q: [B, H, Sq, D]; k, v: [B, H, Sk, D] (Sq ≠ Sk allowed); contiguous, one CUDA device; float32 (Task 4's
    kernel, D ∈ {32, 64, 96, 128}) or bfloat16 (Task 4's bf16 part, 4b; D ∈ {64, 128}), all three alike.
    enable_gqa=True (as SDPA's): k and v may have H_kv heads, H_kv dividing H; query head h attends with K/V head
    h // (H // H_kv) (grouped-query attention; MQA when H_kv = 1). Without a mask, or with one query (a decode step:
    it sees every key), the H // H_kv query heads that share a K/V head are handed to the kernel as one longer query
    of that head — no copy of K or V, and the backward sums the group's dk, dv by itself. A causal call with
    several queries repeats K and V to every query head first (a copy: Task 4's kernels take one head count, and the
    causal mask follows a row's place in its own head).
    causal: key j is visible to query i iff j ≤ i + (Sk − Sq), bottom-right
    aligned as in FlashAttention (the usual lower triangle when Sq == Sk; with Sq > Sk the first
    Sq − Sk rows see no key and are 0). Note torch's scaled_dot_product_attention(is_causal=True)
    aligns top-left when Sq ≠ Sk. Returns o [B, H, Sq, D].

    When an input requires grad (grad mode on) it runs Task 4c instead (4d in bf16): the forward that also keeps
    each row's log-sum-exp, and in the backward FlashAttention-2's backward (dq, dk, dv in q's dtype; a row that
    sees no key gets zero gradients). Under torch.compile it is the operator torch.ops.attnlab.attention.

    Inside torch.autocast(dtype=torch.bfloat16) on CUDA, float32 q, k, v are cast to bf16 first, as autocast does
    for torch's scaled_dot_product_attention (a bias added after autocast's matmul leaves q float32); autocast in
    float16 is refused (there are no float16 kernels).
    """
    q, k, v = _autocast(q, k, v)
    if enable_gqa and _checks.grouped_heads(q, k, v) > 1:
        return _grouped_attention(q, k, v, causal)
    if _is_compiling():  # the operator: opaque in the graph (its fake kernels give the shapes), with its autograd formula
        return torch.ops.attnlab.attention(q, k, v, causal)
    if needs_grad(q, k, v):
        from .op import eager_attention_with_grad  # (op.py imports this module)
        return eager_attention_with_grad(q, k, v, causal)
    return attention_kernel(q, k, v, causal)


def _grouped_attention(q, k, v, causal):
    """attention with H_kv < H K/V heads (checked by _checks.grouped_heads): the group of g = H // H_kv query heads
    of each K/V head folded into one query of g·Sq rows (rows are independent when nothing is masked, and a single
    query sees every key), else K and V repeated to H heads."""
    B, H, Sq, D = q.shape
    H_kv = k.shape[1]
    g = H // H_kv
    if not causal or Sq == 1:
        return attention(q.view(B, H_kv, g * Sq, D), k, v, causal=False).view(B, H, Sq, D)
    return attention(q, k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1), causal=True)


def _autocast(q, k, v):
    """q, k, v as autocast would hand them to SDPA: cast to bf16 inside a CUDA bf16 autocast region."""
    if not all(isinstance(x, torch.Tensor) for x in (q, k, v)) or not _autocast_on():
        return q, k, v
    dtype = _autocast_dtype()
    if dtype != torch.bfloat16:
        raise TypeError(f"attention: torch.autocast is on with dtype {dtype}; attnlab's kernels are float32 and bfloat16 "
                        f"(use torch.autocast('cuda', dtype=torch.bfloat16))")
    return tuple(x.to(torch.bfloat16) if x.dtype == torch.float32 else x for x in (q, k, v))


def _autocast_on():
    try:
        return torch.is_autocast_enabled("cuda")  # torch ≥ 2.4
    except TypeError:
        return torch.is_autocast_enabled()  # older: the CUDA autocast


def _autocast_dtype():
    get = getattr(torch, "get_autocast_dtype", None)
    return get("cuda") if get else torch.get_autocast_gpu_dtype()


_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)  # torch < 2.3: never


def needs_grad(*tensors):
    """Whether autograd would record a call on these: grad mode on and a tensor among them that requires grad (attention
    then runs the forward that keeps the log-sum-exp for the backward, else Task 4's forward alone, with no dispatcher in
    the way of its timings; op.py's operators route and refuse by the same test)."""
    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


def attention_kernel(q, k, v, causal=False):
    """attention's forward alone, Task 4's kernel: no backward (inputs that require grad are refused)."""
    device = _checks.attention(q, k, v, causal)
    B, H, Sq, D = q.shape
    o = torch.empty_like(q)
    if B * H * Sq:
        _library.call(_library.kernel_for("attention", q), device, current_stream(device), q.data_ptr(), k.data_ptr(),
                      v.data_ptr(), o.data_ptr(),
                      B, H, Sq, k.shape[2], D, int(causal))
    return o


def decode(q, k_cache, v_cache, lengths):
    """One decode step of Task 5 (task5::decode_attention): o = softmax(q·Kᵀ/√D)·V over cache positions 0 … len−1.

    q: [B, H, 1, D]; k_cache, v_cache: [B, H, max_seq, D]; float32, contiguous, one CUDA device.
    lengths: how many cache positions are valid, 1 ≤ len ≤ max_seq: one int for the whole batch (as
    Task 5's interface), or one per sequence (list, tuple or 1-D integer tensor; a tensor is read to
    the host) — then the kernel runs once per sequence. Returns o [B, H, 1, D].
    """
    device, lengths = _checks.decode(q, k_cache, v_cache, lengths)
    B, H, _, D = q.shape
    max_seq = k_cache.shape[2]
    o = torch.empty_like(q)
    if B * H == 0:
        return o
    args = (q.data_ptr(), k_cache.data_ptr(), v_cache.data_ptr(), o.data_ptr(), B, H, max_seq)
    if isinstance(lengths, int):
        _library.call("decode", device, current_stream(device), *args, lengths, D)
    else:  # Task 5 takes one length: the library runs it once per sequence, on its own rows, in one call
        _library.call("decode_rows", device, current_stream(device), *args, (ctypes.c_int * B)(*lengths), D)
    return o


def paged_decode(q, k_pages, v_pages, page_table, lengths):
    """Decode over a paged KV cache with grouped-query attention (Task 5's paged part, task5::paged_decode_bf16).

    q: [B, H_q, D] bf16, one query per sequence; k_pages, v_pages: [num_pages, page_size, H_kv, D] bf16, the pool
    (page_size a power of two ≤ 256, D ∈ {64, 128}, H_q a multiple of H_kv); page_table: [B, pages_per_seq] ints,
    the pool page of each sequence's positions p·page_size …; lengths: [B] ints. o[b, h] attends over positions
    0 … lengths[b] − 1 of sequence b with KV head h // (H_q // H_kv), as SDPA with enable_gqa=True does.
    Returns o [B, H_q, D] bf16. The tables are read on the host: tensors on the GPU are copied back first (a
    synchronisation); keep them on the CPU, as a server's allocator does, to avoid it. A length past its table or a
    page outside the pool raises RuntimeError naming the entry (the kernel's own check). No backward. Under
    torch.compile it is the operator torch.ops.attnlab.paged_decode.
    """
    page_table, lengths = (torch.tensor(x, dtype=torch.int32) if isinstance(x, (list, tuple)) else x
                           for x in (page_table, lengths))
    if _is_compiling():
        return torch.ops.attnlab.paged_decode(q, k_pages, v_pages, page_table, lengths)
    return paged_decode_kernel(q, k_pages, v_pages, page_table, lengths)


def paged_decode_kernel(q, k_pages, v_pages, page_table, lengths):
    """paged_decode's kernel call (the operator's implementation)."""
    device, table, lens = _checks.paged_decode(q, k_pages, v_pages, page_table, lengths)
    B, H_q, D = q.shape
    num_pages, page_size, H_kv, _ = k_pages.shape
    o = torch.empty_like(q)
    if B * H_q:
        _library.call("paged_decode_bf16", device, current_stream(device), q.data_ptr(), k_pages.data_ptr(),
                      v_pages.data_ptr(), o.data_ptr(), table.data_ptr(), lens.data_ptr(), B, H_q, H_kv, D, page_size,
                      num_pages, table.shape[1])
    return o


def softmax(x):
    """Softmax over the last dimension with Task 2's kernel (task2::softmax_batched); any rank ≥ 1."""
    device = _checks.softmax(x)
    out = torch.empty_like(x)
    cols = x.shape[-1]
    rows = x.numel() // cols
    if rows:
        _library.call("softmax", device, current_stream(device), x.data_ptr(), out.data_ptr(), rows, cols)
    return out


def gemm(a, b, transpose_b=False):
    """a @ b with Task 2's tiled GEMMs: gemm_nn, or gemm_nt (a @ bᵀ) with transpose_b=True.

    a: [M, K] or [batch, M, K]; b: [K, N] / [batch, K, N] ([N, K] / [batch, N, K] with
    transpose_b); float32, contiguous, one CUDA device. Returns [M, N] or [batch, M, N].
    """
    device, N = _checks.gemm(a, b, transpose_b)
    batched = a.dim() == 3
    batch = a.shape[0] if batched else 1
    M, K = a.shape[-2], a.shape[-1]
    c = torch.empty(((batch,) if batched else ()) + (M, N), dtype=a.dtype, device=a.device)
    if batch * M * N == 0:
        return c
    if K == 0:
        return c.zero_()
    _library.call("gemm_nt" if transpose_b else "gemm_nn", device, current_stream(device), a.data_ptr(), b.data_ptr(),
                  c.data_ptr(), batch, M, N, K)
    return c


def synchronize(device=None):
    """Waits for the bridge's kernels on `device` (default: torch's current one); a fault inside one
    raises RuntimeError with CUDA's message (otherwise it would surface at torch's next synchronising call)."""
    d = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
    _library.synchronize(d.index if d.index is not None else torch.cuda.current_device())
