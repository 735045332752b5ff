"""Decode with GQA and a paged KV cache as a torch user gets it, at the shapes of make bench-task5-paged (Task 5's
paged part), for the side-by-side table of docs/perf.md: SDPA's cuDNN and FlashAttention-2 backends with
`enable_gqa` on a contiguous cache, FlashAttention-4's dense and paged decode (64-token pages in shuffled order, its
`page_table`) where `flash-attn-4` is installed (tools/vs_torch/fa4.py), and the two fallbacks a model without a
GQA or paged kernel takes: K and V repeated to every query head then SDPA, and the pages gathered into a contiguous
cache then SDPA. And attnlab's own (Task 5's part 5b: yours, or the reference's with ATTNLAB_IMPL=reference) where its
bridge library is built (`make python`, or $ATTNLAB_LIB): through `attnlab.paged_decode` with the tables on the host,
and as one C call (the bridge's argument checks left out), so that every kernel is timed by the same function. bf16; bytes = the K and V positions
the batch holds, read once; each beside a device copy of the same bytes (read + written) timed the same way: CUDA
events, L2 flushed before each call, warm-up, median (event_timing.py: GPU time only, the call's host work queued
behind a GPU wait).
Run on the GPU in the same session as the benchmark:  python3 tools/vs_torch/paged_decode.py [--quick]"""
import math
import os
import random
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import fa4
from event_timing import time_ms, timing_words

PAGE = 64
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def attnlab_bridge():
    """(attnlab, its _library module, a status line): the bridge with its library (the bridge's own choice: $ATTNLAB_LIB,
    else build/$ATTNLAB_IMPL/python/, skeleton by default), or (None, None, why)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    try:
        import attnlab
        from attnlab import _library
        return attnlab, _library, f"attnlab: {_library.library_path()[0]} ({_library.impl()})"
    except Exception as e:  # noqa: BLE001 — not built here: said, the rest runs
        return None, None, f"attnlab: not loaded ({str(e).splitlines()[0][:160] if str(e) else type(e).__name__})"


def attnlab_runs(attnlab, library, q, kp, vp, table, lens):
    """attnlab's paged decode two ways: the bridge's op, and the library's C function alone (host tables)."""
    B, Hq, _, D = q.shape
    q3, table_h, lens_h = q.view(B, Hq, D), table.cpu().contiguous(), lens.cpu().contiguous()
    o = torch.empty_like(q3)
    stream = torch.cuda.current_stream().cuda_stream

    def c_call():
        library.call("paged_decode_bf16", q.device.index, stream, q3.data_ptr(), kp.data_ptr(), vp.data_ptr(), o.data_ptr(),
                     table_h.data_ptr(), lens_h.data_ptr(), B, Hq, kp.shape[2], D, kp.shape[1], kp.shape[0], table_h.shape[1])
        return o
    return [("attnlab 5b (paged_decode op)", lambda: attnlab.paged_decode(q3, kp, vp, table_h, lens_h)),
            ("attnlab 5b (one C call)", c_call)]


def shapes():
    rng = random.Random(11)  # the benchmark's ragged batch is drawn the same way: lengths 1 … 32768, log-uniform
    ragged = [int(2 ** rng.uniform(0, 15)) for _ in range(32)]
    ragged[0], ragged[-1] = 1, 32768
    return [("B=64 H_q=32 H_kv=8 L=4096", 32, 8, [4096] * 64), ("B=8 H_q=32 H_kv=8 L=32768", 32, 8, [32768] * 8),
            ("B=256 H_q=32 H_kv=8 L=1024", 32, 8, [1024] * 256), ("B=1 H_q=32 H_kv=8 L=131072", 32, 8, [131072]),
            ("B=64 H_q=32 H_kv=1 L=4096 (MQA)", 32, 1, [4096] * 64), ("B=64 H_q=32 H_kv=32 L=4096 (MHA)", 32, 32, [4096] * 64),
            ("B=32 H_q=32 H_kv=8 L=1…32768 (ragged)", 32, 8, ragged)]


def main():
    quick = "--quick" in sys.argv
    dev = torch.cuda.get_device_properties(0)
    print(f"GPU: {dev.name}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
    _, status = fa4.load()
    print(status)
    attnlab, library, status = attnlab_bridge()
    print(status)
    print(f"timing: {timing_words()}")
    try:
        from flash_attn.cute.interface import flash_attn_varlen_func
    except Exception:  # noqa: BLE001 — not installed: said above
        flash_attn_varlen_func = None
    flush = torch.empty(2 * 64 << 20, dtype=torch.uint8, device="cuda")
    D = 128
    for name, Hq, Hkv, lengths in shapes()[: 2 if quick else None]:
        B, L = len(lengths), max(lengths)
        uniform = min(lengths) == L
        torch.manual_seed(0)
        # A contiguous cache [B, H_kv, L, D] (positions past a sequence's length are never attended: a ragged batch
        # is given to SDPA as one attention mask), and the same positions in shuffled pages [n, PAGE, H_kv, D].
        q = torch.randn(B, Hq, 1, D, device="cuda").bfloat16()
        k = torch.randn(B, Hkv, L, D, device="cuda").bfloat16()
        v = torch.randn(B, Hkv, L, D, device="cuda").bfloat16()
        kv_bytes = 2 * sum(lengths) * Hkv * D * 2
        pages_per_seq = math.ceil(L / PAGE)
        perm = torch.randperm(B * pages_per_seq, device="cuda")
        table = perm.view(B, pages_per_seq).to(torch.int32)
        kp = torch.empty(B * pages_per_seq, PAGE, Hkv, D, device="cuda", dtype=torch.bfloat16)
        vp = torch.empty_like(kp)
        pad = pages_per_seq * PAGE - L
        kp[perm] = F.pad(k, (0, 0, 0, pad)).view(B, Hkv, pages_per_seq, PAGE, D).permute(0, 2, 3, 1, 4).reshape(-1, PAGE, Hkv, D)
        vp[perm] = F.pad(v, (0, 0, 0, pad)).view(B, Hkv, pages_per_seq, PAGE, D).permute(0, 2, 3, 1, 4).reshape(-1, PAGE, Hkv, D)
        lens = torch.tensor(lengths, device="cuda", dtype=torch.int32)
        mask = None if uniform else (torch.arange(L, device="cuda")[None, :] < lens[:, None]).view(B, 1, 1, L)
        want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask, enable_gqa=Hq != Hkv)
        src = torch.empty(kv_bytes, dtype=torch.uint8, device="cuda")
        dst = torch.empty_like(src)
        copy = 2 * kv_bytes / time_ms(lambda: dst.copy_(src), flush) / 1e6
        del src, dst
        print(f"\n{name}   K and V: {kv_bytes / 1e9:.2f} GB; a copy of the same bytes {copy:.0f} GB/s")

        def sdpa(be):
            def f():
                with sdpa_kernel(be):
                    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=Hq != Hkv)
            return f

        def gathered():
            kk = kp[table].permute(0, 3, 1, 2, 4).reshape(B, Hkv, pages_per_seq * PAGE, D)[:, :, :L]
            vv = vp[table].permute(0, 3, 1, 2, 4).reshape(B, Hkv, pages_per_seq * PAGE, D)[:, :, :L]
            return F.scaled_dot_product_attention(q, kk, vv, attn_mask=mask, enable_gqa=Hq != Hkv)

        runs = [("cuDNN (SDPA, enable_gqa)", sdpa(SDPBackend.CUDNN_ATTENTION)),
                ("FA2 (SDPA, enable_gqa)", sdpa(SDPBackend.FLASH_ATTENTION))]
        if flash_attn_varlen_func is not None:
            qs, ks, vs = q.transpose(1, 2).contiguous(), k.transpose(1, 2).contiguous(), v.transpose(1, 2).contiguous()
            runs.append(("FA4 dense", lambda: flash_attn_varlen_func(
                qs.view(B, Hq, D), ks.view(B * L, Hkv, D), vs.view(B * L, Hkv, D),
                cu_seqlens_q=torch.arange(B + 1, device="cuda", dtype=torch.int32),
                cu_seqlens_k=torch.arange(B + 1, device="cuda", dtype=torch.int32) * L, seqused_k=lens,
                max_seqlen_q=1, max_seqlen_k=L)))
            runs.append(("FA4 paged (64-token pages)", lambda: flash_attn_varlen_func(
                qs.view(B, Hq, D), kp, vp, cu_seqlens_q=torch.arange(B + 1, device="cuda", dtype=torch.int32),
                max_seqlen_q=1, page_table=table, seqused_k=lens)))
        if attnlab is not None:
            runs += attnlab_runs(attnlab, library, q, kp, vp, table, lens)
        if Hq != Hkv:
            runs.append(("repeat K, V + SDPA", lambda: F.scaled_dot_product_attention(
                q, k.repeat_interleave(Hq // Hkv, 1), v.repeat_interleave(Hq // Hkv, 1), attn_mask=mask)))
        runs.append(("gather pages + SDPA", gathered))
        for label, fn in runs:
            try:
                out = fn()
                out = (out[0] if isinstance(out, tuple) else out).reshape(B, Hq, D).float()
                err = (out - want.view(B, Hq, D)).abs().max().item()
                ms = time_ms(fn, flush)
                gbs = kv_bytes / ms / 1e6
                print(f"  {label:<28} {ms:8.3f} ms  {gbs:7.1f} GB/s = {100 * gbs / copy:5.1f}% of the copy   max |err| {err:.1e}")
            except Exception as e:  # noqa: BLE001 — a shape a library refuses is said, not fatal
                first = str(e).splitlines()[0][:120] if str(e) else type(e).__name__
                print(f"  {label:<28} failed: {first}")
        del q, k, v, kp, vp, want
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
