"""Host time of 4d's backward through the bridge, layer by layer."""
import os, sys, time, statistics
sys.path.insert(0, os.path.join(os.getcwd(), "python"))
import torch, torch.nn.functional as F
import attnlab
from attnlab import backward as bw, _checks, _library
from attnlab._streams import current
print(os.environ["ATTNLAB_LIB"])
def us(fn, calls=300, warm=30):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(calls):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return 1e6 * statistics.median(ts)
for shape in [(1, 1, 64, 64), (2, 6, 4096, 64)]:
    q, k, v, do = (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) for _ in range(4))
    o, lse = bw.attention_with_lse(q, k, v, True)
    B, H, S, D = shape
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    args = (q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), do.data_ptr(), lse.data_ptr(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), B, H, S, S, D, 1)
    name = _library.kernel_for("attention_backward", q)
    rows = [("C call alone (backward)", lambda: _library.call(name, 0, 0, *args)),
            ("C call alone (forward with lse)", lambda: _library.call(_library.kernel_for("attention_lse", q), 0, 0, q.data_ptr(), k.data_ptr(), v.data_ptr(), o.data_ptr(), lse.data_ptr(), B, H, S, S, D, 1)),
            ("checks alone", lambda: _checks.attention_backward(q, k, v, o, do, lse, True)),
            ("current stream", lambda: current(0)),
            ("backward.attention_backward", lambda: bw.attention_backward(q, k, v, o, do, lse, True)),
            ("torch.ops.attnlab.attention_backward", lambda: torch.ops.attnlab.attention_backward(q, k, v, o, do, lse, True)),
            ("torch.ops.attnlab.attention_with_lse", lambda: torch.ops.attnlab.attention_with_lse(q, k, v, True))]
    qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
    rows.append(("autograd fwd+bwd", lambda: attnlab.attention(qr, kr, vr, causal=True).backward(do)))
    for what, fn in rows:
        print(f"{shape} {what:40s} {us(fn):8.1f} us")
