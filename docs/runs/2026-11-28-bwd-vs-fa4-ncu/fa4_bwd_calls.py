"""FA4's forward and backward at one shape, called 6 times (the first compiles), for ncu to catch a warm backward launch.
/usr/bin/python3 or python3 with torch and flash-attn-4: python3 fa4_bwd_calls.py B H S D causal(0|1)"""
import sys
import torch
from flash_attn.cute.interface import flash_attn_func
B, H, S, D, causal = (int(a) for a in sys.argv[1:6])
g = torch.Generator(device="cuda").manual_seed(0)
q, k, v = (torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16, generator=g).requires_grad_() for _ in range(3))
dout = torch.randn(B, S, H, D, device="cuda", dtype=torch.bfloat16, generator=g)
for _ in range(6):
    out = flash_attn_func(q, k, v, causal=bool(causal))
    out = out[0] if isinstance(out, tuple) else out
    torch.autograd.grad(out, (q, k, v), dout)
torch.cuda.synchronize()
print("fa4 bwd ok", B, H, S, D, causal)
