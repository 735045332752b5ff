#!/bin/bash
# Call 5 (two calls before it stashed FA4's wheel halves in ~/fa4-stash: `mkdir -p ~/fa4-stash && cp .whl/s1/big.aa
# ~/fa4-stash/`, then the same for .whl/s2/big.ab): the kept build (tools/gpu/pack_gpu.sh: the items' order by
# sequence, the clean L2 flush): Tasks 5, 6, 5b and 6b's tests on the reference and the skeletons; bench_task5_paged,
# tools/vs_torch/paged_decode.py with FA4 installed, bench_task6_serve.
name=$(cat .whl/s3/BIG_WHEEL_NAME)
cat ~/fa4-stash/big.aa ~/fa4-stash/big.ab > ~/fa4-stash/"$name"
python3 -m pip install -q --no-deps --no-index ~/fa4-stash/"$name" .whl/s3/*.whl > $OUT/fa4_install.log 2>&1
python3 -c "import importlib.metadata as m; print('flash-attn-4', m.version('flash-attn-4'))" >> $OUT/fa4_install.log 2>&1
ONLY_TASKS="5 6" SKIP_GRADE=1 SKIP_CONTROLS=1 SKIP_EXPLOITS=1 OUT=$OUT/s bash tools/gpu/gpu_session.sh paged serve > $OUT/session.log 2>&1
cp $OUT/s/bench_task5_paged.log $OUT/s/paged_decode_torch.log $OUT/s/bench_task6_serve.log $OUT/ 2>/dev/null
(cd $OUT/s && tar -cJf ../session.tar.xz . ) && rm -rf $OUT/s
