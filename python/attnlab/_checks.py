"""Argument checks of the bridge's functions: each failure raises TypeError or ValueError naming the
argument and the problem, before anything reaches a kernel. Pure torch: they run on the CPU, with
neither the library nor a GPU (tests/test_bridge.py tests each one).

The order is the same everywhere: a tensor at all, dtype, rank and shape, contiguity, then the
device last, so that every check but the device one can be seen with CPU tensors.
"""
import operator

import torch

HEAD_DIMS = (32, 64, 96, 128)  # what Tasks 4 and 5 compile (task4/task4.h, task5/task5.h)
BF16_HEAD_DIMS = (64, 128)  # what the bf16 forwards take (task4_bf16/task4_bf16.h, task4_bf16_backward/task4_bf16_backward.h)
ATTENTION_DTYPES = (torch.float32, torch.bfloat16)  # Task 4 and 4c in float32; 4b and 4d in bf16
INT_MAX = 2**31 - 1  # the C interface passes sizes as int


def tensor(name, x, rank=None, layout="", dtypes=(torch.float32,)):
    """x must be a tensor of one of `dtypes`, of `rank` dimensions (`layout` words them), contiguous. A bare kernel has
    no backward: x may not require grad while grad mode is on (attnlab.attention routes such calls to its op first)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if x.dtype not in dtypes:
        convert = " or ".join({torch.float32: ".float()", torch.bfloat16: ".bfloat16()"}[d] for d in dtypes)
        raise TypeError(f"{name}: dtype is {x.dtype}; this kernel takes {' or '.join(map(str, dtypes))} (convert with {convert})")
    dims = x.dim()
    if rank is not None and dims != rank:
        raise ValueError(f"{name}: has {dims} dimensions {tuple(x.shape)}; expected {rank}{' ' + layout if layout else ''}")
    if dims == 0:
        raise ValueError(f"{name}: is a 0-dimensional tensor; expected at least one dimension")
    if max(x.shape) > INT_MAX:
        raise ValueError(f"{name}: a dimension of {tuple(x.shape)} exceeds 2^31 - 1, the kernels' int sizes")
    if not x.is_contiguous():
        raise ValueError(f"{name}: is not contiguous (shape {tuple(x.shape)}, strides {x.stride()}); pass {name}.contiguous()")
    if x.requires_grad and torch.is_grad_enabled():
        raise ValueError(f"{name}: requires grad, but this kernel has no backward (attnlab.attention has one); "
                         f"call under torch.no_grad() or pass {name}.detach()")


def same_device(names, tensors):
    """All on one CUDA device; returns its index."""
    first = tensors[0]
    index = first.get_device()
    for name, x in zip(names, tensors):
        if not x.is_cuda:
            raise ValueError(f"{name}: is on {x.device}; attnlab's kernels need a CUDA tensor (move it with .cuda())")
        if x.get_device() != index:
            raise ValueError(f"{name}: is on {x.device} but {names[0]} is on {first.device}; put them on one device")
    return index


def aligned_16(*named):
    """bf16 tensors start on 16 bytes: the bf16 kernels read rows 8 elements at a time (a tensor of its own always
    does; a view into another from an odd element does not)."""
    for name, x in named:
        if x.dtype == torch.bfloat16 and x.data_ptr() % 16:
            raise ValueError(f"{name}: its data does not start on a 16-byte boundary (storage offset {x.storage_offset()}); "
                             f"the bf16 kernels read 16 bytes at a time: pass {name}.clone()")


def head_dim(name, D, dims=HEAD_DIMS, kernels="the kernels"):
    if D not in dims:
        raise ValueError(f"{name}: head_dim (last dimension) is {D}; {kernels} support {', '.join(map(str, dims))}")


def attention(q, k, v, causal):
    """q [B, H, Sq, D], k and v [B, H, Sk, D], all on one CUDA device; returns its index."""
    attention_shapes(q, k, v, causal)
    device = same_device(("q", "k", "v"), (q, k, v))
    aligned_16(("q", q), ("k", k), ("v", v))
    return device


def attention_shapes(q, k, v, causal):
    """Everything attention() checks but the device (the custom ops' fake kernels run this on meta tensors)."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        tensor(name, x, 4, "[batch, heads, seq, head_dim]", ATTENTION_DTYPES)
    same_dtype(q, ("k", k), ("v", v))
    if not isinstance(causal, bool):
        raise TypeError(f"causal: expected a bool, got {type(causal).__name__}")
    keys_fit_queries(q, ("k", k), ("v", v), "[batch, heads, Sk, head_dim]", gqa_hint=True)
    if q.dtype == torch.bfloat16:
        head_dim("q", q.shape[3], BF16_HEAD_DIMS, "the bf16 kernels")
    else:
        head_dim("q", q.shape[3])
    if k.shape[2] == 0:
        raise ValueError("k: has 0 keys (Sk = 0): nothing to attend to")


def attention_backward(q, k, v, o, dout, lse, causal):
    """Task 4c's backward: q, k, v as attention(); o and dout shaped as q; lse [B, H, Sq]; one CUDA device."""
    attention_backward_shapes(q, k, v, o, dout, lse, causal)
    device = same_device(("q", "k", "v", "o", "dout", "lse"), (q, k, v, o, dout, lse))
    aligned_16(("q", q), ("k", k), ("v", v), ("o", o), ("dout", dout), ("lse", lse))
    return device


def attention_backward_shapes(q, k, v, o, dout, lse, causal):
    attention_shapes(q, k, v, causal)
    for name, x, what in (("o", o, "the forward's output"), ("dout", dout, "the output's gradient")):
        tensor(name, x, 4, "[batch, heads, Sq, head_dim]", ATTENTION_DTYPES)
        same_dtype(q, (name, x))
        if x.shape != q.shape:
            raise ValueError(f"{name}: shape {tuple(x.shape)} differs from q's {tuple(q.shape)}; {name} is {what}, "
                             f"[batch, heads, Sq, head_dim]")
    tensor("lse", lse, 3, "[batch, heads, Sq]")
    if lse.shape != q.shape[:3]:
        raise ValueError(f"lse: shape {tuple(lse.shape)} does not fit q's {tuple(q.shape)}; lse is the forward's "
                         f"log-sum-exp, one per row: [batch, heads, Sq] = {tuple(q.shape[:3])}")


def same_dtype(q, *named):
    """Every named tensor has q's dtype (the kernels take one dtype for all)."""
    for name, x in named:
        if x.dtype != q.dtype:
            raise TypeError(f"{name}: dtype is {x.dtype} but q is {q.dtype}; pass them all in one dtype")


def grouped_heads(q, k, v):
    """attention(enable_gqa=True): q [B, H, Sq, D], k and v [B, H_kv, Sk, D] with H_kv dividing H. Returns the group
    size H // H_kv. The rest (dtype, device, head_dim, …) is checked by the call the heads are folded into."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 4:
            raise ValueError(f"{name}: has {x.dim()} dimensions {tuple(x.shape)}; expected 4 [batch, heads, seq, head_dim]")
    if k.shape != v.shape:
        raise ValueError(f"k and v: shapes differ, {tuple(k.shape)} and {tuple(v.shape)}; both are [batch, kv heads, Sk, head_dim]")
    if (k.shape[0], k.shape[3]) != (q.shape[0], q.shape[3]):
        raise ValueError(f"k: shape {tuple(k.shape)} does not fit q's {tuple(q.shape)}: batch and head_dim must match")
    H, H_kv = q.shape[1], k.shape[1]
    if H_kv < 1 or H % H_kv:
        raise ValueError(f"k: {H_kv} heads do not divide q's {H} (with enable_gqa each K/V head serves H / H_kv query heads)")
    if not q.is_contiguous():
        raise ValueError(f"q: is not contiguous (shape {tuple(q.shape)}, strides {q.stride()}); pass q.contiguous()")
    return H // H_kv


def keys_fit_queries(q, named_k, named_v, layout, gqa_hint=False):
    """K and V (named) have one shape, `layout`, whose batch, heads and head_dim are q's; only their length differs.
    gqa_hint: where fewer K/V heads than q's would do with enable_gqa=True, the error says so."""
    (kn, k), (vn, v) = named_k, named_v
    if k.shape != v.shape:
        raise ValueError(f"{kn} and {vn}: shapes differ, {tuple(k.shape)} and {tuple(v.shape)}; both are {layout}")
    if (k.shape[0], k.shape[1], k.shape[3]) != (q.shape[0], q.shape[1], q.shape[3]):
        gqa = (k.shape[0], k.shape[3]) == (q.shape[0], q.shape[3]) and k.shape[1] and q.shape[1] % k.shape[1] == 0
        raise ValueError(f"{kn}: shape {tuple(k.shape)} does not fit q's {tuple(q.shape)}: batch, heads and head_dim must "
                         f"match (only the sequence length may differ)" +
                         (f"; for {k.shape[1]} K/V heads shared by {q.shape[1]} query heads (GQA) pass enable_gqa=True"
                          if gqa and gqa_hint else ""))


def decode(q, k_cache, v_cache, lengths):
    """q [B, H, 1, D], caches [B, H, max_seq, D]; returns (device, lengths: one int for every row, or a list of B)."""
    tensor("q", q, 4, "[batch, heads, 1, head_dim]")
    for name, x in (("k_cache", k_cache), ("v_cache", v_cache)):
        tensor(name, x, 4, "[batch, heads, max_seq, head_dim]")
    B, _, one, D = q.shape
    if one != 1:
        raise ValueError(f"q: shape {tuple(q.shape)} has {one} queries; decode takes one per sequence, [batch, heads, 1, head_dim]")
    keys_fit_queries(q, ("k_cache", k_cache), ("v_cache", v_cache), "[batch, heads, max_seq, head_dim]")
    head_dim("q", D)
    lengths = lengths_of(lengths, B, k_cache.shape[2])
    return same_device(("q", "k_cache", "v_cache"), (q, k_cache, v_cache)), lengths


def length(x, max_seq, b=None):
    """One valid length, 1 … max_seq, as an int (`b`: the sequence it is for, in the message)."""
    if isinstance(x, bool) or not hasattr(x, "__index__"):
        raise TypeError(f"lengths: {x!r} is a {type(x).__name__}; expected ints")
    n = operator.index(x)
    if n < 1 or n > max_seq:
        where = f" (sequence {b})" if b is not None else ""
        raise ValueError(f"lengths: {n}{where} is outside 1 … max_seq ({max_seq}), the cache's third dimension")
    return n


def lengths_of(lengths, B, max_seq):
    """`lengths`: one int for every sequence, or B of them (a list, tuple or 1-D integer tensor). Returns one int
    when every sequence has the same length (one kernel call), else the list."""
    if isinstance(lengths, torch.Tensor):
        if lengths.dtype.is_floating_point or lengths.dtype == torch.bool or lengths.dtype.is_complex:
            raise TypeError(f"lengths: dtype is {lengths.dtype}; expected integers")
        if lengths.dim() > 1:
            raise ValueError(f"lengths: has {lengths.dim()} dimensions; expected an int or one per sequence, [batch]")
        values = lengths.reshape(-1).tolist()
        if lengths.dim() == 0:
            values = values * B
    elif isinstance(lengths, (list, tuple)):
        values = list(lengths)
    else:
        return length(lengths, max_seq, 0 if B else None)
    for x in values:
        if isinstance(x, bool) or not hasattr(x, "__index__"):
            raise TypeError(f"lengths: {x!r} is a {type(x).__name__}; expected ints")
    if len(values) != B:
        raise ValueError(f"lengths: {len(values)} given for a batch of {B}; give one int or one per sequence")
    values = [length(x, max_seq, b) for b, x in enumerate(values)]
    return values[0] if values and values.count(values[0]) == B else values


def softmax(x):
    tensor("x", x)
    if x.shape[-1] == 0:
        raise ValueError(f"x: last dimension is 0 (shape {tuple(x.shape)}); softmax needs at least one column")
    return same_device(("x",), (x,))


def gemm(a, b, transpose_b):
    """a [M, K] or [batch, M, K]; b [K, N] or [batch, K, N] ([N, K] / [batch, N, K] with transpose_b)."""
    tensor("a", a)
    tensor("b", b)
    if not isinstance(transpose_b, bool):
        raise TypeError(f"transpose_b: expected a bool, got {type(transpose_b).__name__}")
    if a.dim() not in (2, 3):
        raise ValueError(f"a: has {a.dim()} dimensions {tuple(a.shape)}; expected [M, K] or [batch, M, K]")
    if b.dim() != a.dim():
        raise ValueError(f"b: has {b.dim()} dimensions {tuple(b.shape)} but a has {a.dim()}; both batched or neither")
    if a.dim() == 3 and a.shape[0] != b.shape[0]:
        raise ValueError(f"b: batch {b.shape[0]} differs from a's {a.shape[0]}")
    K = a.shape[-1]
    Kb, N = (b.shape[-1], b.shape[-2]) if transpose_b else (b.shape[-2], b.shape[-1])
    if Kb != K:
        want = "[N, K]" if transpose_b else "[K, N]"
        raise ValueError(f"b: shape {tuple(b.shape)} does not fit a's {tuple(a.shape)}: b is {want} with K = {K} "
                         f"(a's last dimension)")
    return same_device(("a", "b"), (a, b)), N


PAGED_HEAD_DIMS = (64, 128)  # what Task 5's paged part compiles (task5_paged/task5_paged.h)


def paged_decode_shapes(q, k_pages, v_pages, page_table, lengths):
    """The checks that need no tensor's values (the operator's fake runs them on fake tensors)."""
    bf16 = (torch.bfloat16,)
    tensor("q", q, 3, "[batch, query heads, head_dim]", bf16)
    for name, x in (("k_pages", k_pages), ("v_pages", v_pages)):
        tensor(name, x, 4, "[num_pages, page_size, kv heads, head_dim]", bf16)
    if k_pages.shape != v_pages.shape:
        raise ValueError(f"v_pages: shape {tuple(v_pages.shape)} differs from k_pages {tuple(k_pages.shape)}")
    B, H_q, D = q.shape
    num_pages, page_size, H_kv, D_kv = k_pages.shape
    if D_kv != D:
        raise ValueError(f"k_pages: head_dim {D_kv} differs from q's {D}")
    if D not in PAGED_HEAD_DIMS:
        raise ValueError(f"q: head_dim {D} is not supported by the paged decode (head_dim ∈ {PAGED_HEAD_DIMS})")
    if H_kv < 1 or H_q % H_kv:
        raise ValueError(f"q: {H_q} query heads are not a multiple of k_pages' {H_kv} KV heads "
                         f"(each KV head serves H_q / H_kv query heads)")
    if page_size < 1 or page_size > 256 or page_size & (page_size - 1):
        raise ValueError(f"k_pages: page_size {page_size} (dimension 1) is not a power of two from 1 to 256")
    for name, x, rank, layout in (("page_table", page_table, 2, "[batch, pages_per_seq]"), ("lengths", lengths, 1, "[batch]")):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"{name}: expected an integer tensor, got {type(x).__name__}")
        if x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool:
            raise TypeError(f"{name}: dtype is {x.dtype}; expected integers")
        if x.dim() != rank:
            raise ValueError(f"{name}: has {x.dim()} dimensions {tuple(x.shape)}; expected {rank} {layout}")
        if x.shape[0] != B:
            raise ValueError(f"{name}: has {x.shape[0]} rows {tuple(x.shape)}; q has a batch of {B}")


def paged_decode(q, k_pages, v_pages, page_table, lengths):
    """q [B, H_q, D], pools [num_pages, page_size, H_kv, D] (bf16), page_table [B, pages_per_seq] and lengths [B]
    (integer tensors; any device). Returns (device, page_table, lengths) with the tables as host int32 tensors (the
    kernel takes them on the host; one on the GPU is read back, a synchronisation). The tables' values (lengths within
    the table, pages within the pool) are checked by the C++ side, which names the entry."""
    paged_decode_shapes(q, k_pages, v_pages, page_table, lengths)
    for name, x in (("page_table", page_table), ("lengths", lengths)):
        if x.numel() and (int(x.min()) < -2**31 or int(x.max()) > INT_MAX):
            raise ValueError(f"{name}: a value is outside int32")
    aligned_16(("q", q), ("k_pages", k_pages), ("v_pages", v_pages))
    device = same_device(("q", "k_pages", "v_pages"), (q, k_pages, v_pages))
    return device, *(x.to(device="cpu", dtype=torch.int32).contiguous() for x in (page_table, lengths))
