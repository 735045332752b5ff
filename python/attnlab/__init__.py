"""attnlab — the course's kernels from PyTorch: the student's (or the reference's) Task 2, 4 and 5
functions on torch tensors, through libattnlab.so (python/bridge.cpp, ctypes: no torch headers).

    make python IMPL=reference            # or skeleton (the default): build/<impl>/python/libattnlab.so and a wheel
    pip install -e python/                # once, in your environment (or pip install build/<impl>/python/dist/*.whl)
    >>> import torch, attnlab
    >>> q, k, v = (torch.randn(2, 8, 256, 64, device="cuda") for _ in range(3))
    >>> o = attnlab.attention(q, k, v, causal=True)          # Task 4's fused kernel
    >>> o = torch.ops.attnlab.attention(q, k, v, True)       # the same as a torch operator (torch.compile)
    >>> q.requires_grad_(); attnlab.attention(q, k, v, causal=True).sum().backward()   # Task 4c's backward
    >>> o = attnlab.paged_decode(q1, k_pages, v_pages, page_table, lengths)  # Task 5's paged part (bf16, GQA)

Which library: $ATTNLAB_LIB; else the one inside the package (a wheel of `make python`); else the checkout's
build/$ATTNLAB_IMPL/python/libattnlab.so (ATTNLAB_IMPL defaults to skeleton). It is loaded on the first kernel
call; argument checks need neither it nor a GPU.
attnlab.hf registers the attention with Hugging Face transformers (imported only when asked for).
"""
from ._library import device_count, impl, library_path, load
from .ops import attention, decode, gemm, paged_decode, softmax, synchronize
from .backward import attention_backward, attention_with_lse
from .op import REGISTERED_WITH, attention_op

__all__ = ["attention", "attention_op", "attention_with_lse", "attention_backward", "decode", "paged_decode", "softmax", "gemm",
           "synchronize", "load", "impl", "library_path", "device_count", "REGISTERED_WITH"]
