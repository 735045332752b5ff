import os, sys, time, statistics
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import torch, torch.nn.functional as F
import attnlab
from attnlab import backward as bw
from torch.nn.attention import SDPBackend, sdpa_kernel
def us(fn, calls=300, warm=30):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(calls):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return 1e6 * statistics.median(ts)
class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v):
        o, lse = bw.attention_with_lse(q, k, v, True)
        ctx.save_for_backward(q, k, v, o, lse)
        return o
    @staticmethod
    def backward(ctx, do):
        q, k, v, o, lse = ctx.saved_tensors
        return bw.attention_backward(q, k, v, o, do.contiguous(), lse, True)
T = {}
def fmt(d): return " ".join(f"{k}={v*1e6:.0f}" for k, v in d.items())
class FnT(torch.autograd.Function):  # timed inside
    @staticmethod
    def forward(ctx, q, k, v):
        o, lse = bw.attention_with_lse(q, k, v, True)
        ctx.save_for_backward(q, k, v, o, lse)
        return o
    @staticmethod
    def backward(ctx, do):
        t0 = time.perf_counter()
        q, k, v, o, lse = ctx.saved_tensors
        r = bw.attention_backward(q, k, v, o, do.contiguous(), lse, True)
        T.setdefault("inside", []).append(time.perf_counter() - t0)
        return r
shape = (2, 6, 4096, 64)
q, k, v, do = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(4))
do = do.detach()
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    print("flash fwd+bwd", us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(do)))
print("custom op fwd+bwd", us(lambda: attnlab.attention(q, k, v, causal=True).backward(do)))
print("Function fwd+bwd", us(lambda: Fn.apply(q, k, v).backward(do)))
print("Function fwd only", us(lambda: Fn.apply(q, k, v)))
print("timed Function fwd+bwd", us(lambda: FnT.apply(q, k, v).backward(do)), "inside backward median", 1e6*statistics.median(T["inside"]))
# a torch op in autograd backward: for scale
print("x*2 fwd+bwd", us(lambda: (q * 2).backward(do)))
from torch.profiler import profile, ProfilerActivity
for name, fn in (("custom", lambda: attnlab.attention(q, k, v, causal=True).backward(do)), ("Function", lambda: Fn.apply(q, k, v).backward(do))):
    for _ in range(20): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(20): fn()
        torch.cuda.synchronize()
    print("=====", name)
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=22, max_name_column_width=70))
