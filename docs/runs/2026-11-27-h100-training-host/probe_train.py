"""Where bf16 training's step goes: attention kernels at the training shape, host cost per call, and a profile of steps."""
import os, sys, time, statistics
ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "tools", "vs_torch")); sys.path.insert(0, os.path.join(ROOT, "python"))
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from event_timing import time_ms
import attnlab
print(torch.cuda.get_device_name(), torch.__version__, attnlab.library_path())
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
BK = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}

def fwd(name, q, k, v):
    if name == "attnlab":
        return attnlab.attention(q, k, v, causal=True)
    with sdpa_kernel(BK[name]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

for shape in [(2, 6, 4096, 64), (4, 16, 4096, 128)]:
    B, H, S, D = shape
    fl = 4 * B * H * S * S * D * 0.5
    g = torch.Generator(device="cuda").manual_seed(1)
    q, k, v, do = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g) for _ in range(4))
    for name in ("attnlab", "flash", "cudnn"):
        qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
        tf = time_ms(lambda: fwd(name, qr, kr, vr), flush, 3, 20)
        o = fwd(name, qr, kr, vr)
        tb = time_ms(lambda: torch.autograd.grad(o, (qr, kr, vr), do, retain_graph=True), flush, 3, 20)
        print(f"{shape} causal {name:8s} fwd(with grad) {tf*1e3:8.1f} us {fl/tf/1e9:6.1f} TF/s  bwd {tb*1e3:8.1f} us {2.5*fl/tb/1e9:6.1f} TF/s")

# host time per fwd+bwd at a tiny shape
def per_call_us(fn, calls=300, warm=30):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(calls):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(ts)
q, k, v = (torch.randn(1, 1, 64, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
dd = torch.randn(1, 1, 64, 64, device="cuda", dtype=torch.bfloat16)
for name in ("attnlab", "flash", "cudnn"):
    f_us = per_call_us(lambda: fwd(name, q, k, v))
    o = fwd(name, q, k, v)
    fb_us = per_call_us(lambda: fwd(name, q, k, v).backward(dd))
    print(f"host: {name:8s} forward with grad {f_us:7.1f} us, forward+backward {fb_us:7.1f} us")

# profile steps of the bf16 training
import train_attnlab as ta
from torch.profiler import profile, ProfilerActivity
cfg = dict(ta.GPU_BF16)
tokens = ta.load_tokens(os.environ.get("TOKENS", "carry/bwd-python/kjv-tokens.pt"))
train, val = ta.split(tokens, cfg["val_every"])
for name in ("attnlab", "sdpa-cudnn", "sdpa-flash"):
    attend, context = ta.attention_for(name, "cuda", True)
    torch.manual_seed(0)
    model = ta.CourseGPT(50257, cfg["seq"], cfg["width"], cfg["layers"], cfg["width"] // 64, cfg["dropout"], attend=attend).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
    gen = torch.Generator().manual_seed(0)
    def step():
        starts = torch.randint(0, len(train) - cfg["seq"] - 1, (cfg["batch"],), generator=gen)
        x = torch.stack([train[s:s + cfg["seq"]] for s in starts]).cuda()
        y = torch.stack([train[s + 1:s + cfg["seq"] + 1] for s in starts]).cuda()
        loss = F.cross_entropy(model(x).float().flatten(0, 1), y.flatten())
        opt.zero_grad(); loss.backward(); torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0); opt.step()
    with context():
        for _ in range(15): step()
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(30): step()
        torch.cuda.synchronize(); wall = (time.perf_counter() - t0) / 30
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(5): step()
            torch.cuda.synchronize()
    ka = prof.key_averages()
    kern = sorted([e for e in ka if e.device_type.name == "CUDA" or getattr(e, "self_device_time_total", 0) > 0], key=lambda e: -getattr(e, "self_device_time_total", 0))
    total = sum(getattr(e, "self_device_time_total", 0) for e in ka) / 5
    print(f"\n== {name}: wall {wall*1e3:.2f} ms/step ({cfg['batch']*cfg['seq']/wall:,.0f} tok/s); device self time {total/1e3:.2f} ms/step")
    for e in kern[:14]:
        print(f"   {getattr(e,'self_device_time_total',0)/5/1e3:7.3f} ms/step  x{e.count//5:4d}  {e.key[:110]}")
    del model, opt
    torch.cuda.empty_cache()
