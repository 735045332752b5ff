set -e
cd /work/main
links() { make -n -B IMPL=reference V=1 build/reference/bin/$1 2>/dev/null | grep -- "-o build/reference/bin/$1\b" | head -1; }
V=/tmp/d/s4h
/usr/local/cuda/bin/nvcc -O3 -lineinfo -std=c++17 -gencode arch=compute_90,code=sm_90 -I. -Xcompiler -fPIC,-Wall,-Wextra -DSOLUTION=1 -c $V/paged_decode.cu -o $V/pd.o
for b in bench_task5_paged; do
  cmd=$(links $b | sed "s|build/reference/task5_paged/reference/paged_decode.o|$V/pd.o|; s|-o build/reference/bin/$b|-o $V/$b|")
  eval "$cmd"
done
