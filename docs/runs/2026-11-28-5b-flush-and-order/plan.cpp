// plan.cpp — the reference's split plan (task5_paged/reference/paged_decode.cu, launch) for bench_task5_paged's ragged batch on an
// H200 (264 block slots, 8 KV heads), printed on the host: the chunk, the items in both orders.  g++ -O2 -std=c++17 plan.cpp
#include <cstdio>
#include <random>
#include <vector>
#include <algorithm>
#include <cmath>
struct Item { int b, key0, key1, first, s, n, table0; };
int main(){
  std::vector<int> L(32); std::mt19937_64 g(11);
  for (int& l : L) l = int(std::exp2(std::uniform_real_distribution<double>(0, 15)(g)));
  L.front()=1; L.back()=32768;
  const int kKeys=64, units=8; long long slots=264;
  std::vector<int> tiles(32); for(int b=0;b<32;++b) tiles[b]=(L[b]+63)/64;
  std::vector<std::pair<int,int>> counts; { auto s=tiles; std::sort(s.begin(),s.end()); for(int t:s) if(!counts.empty()&&counts.back().first==t) ++counts.back().second; else counts.push_back({t,1}); }
  int most=counts.back().first, chunk=most; double best=1e300;
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256}) {
    const int c=(most+n-1)/n; long long pieces=0; for(auto [t,k]:counts) pieces+=(long long)k*((t+c-1)/c);
    double est=double((pieces*units+slots-1)/slots)*(c+1); if(est<best) best=est, chunk=c; if(c==1) break; }
  printf("chunk %d est %.0f\n", chunk, best);
  long total=0; for(int t:tiles) total+=t; printf("total tiles %ld (x8 units = %ld block-tiles; per slot %.1f)\n", total, total*8, total*8.0/264);
  std::vector<Item> items; int parts=0;
  for(int b=0;b<32;++b){ int t=tiles[b], n0=(t+chunk-1)/chunk, per=(t+n0-1)/n0, n=(t+per-1)/per;
    for(int s=0;s<n;++s) items.push_back({b,s*per*kKeys,std::min(L[b],(s+1)*per*kKeys),n>1?parts:0,s,n,0}); if(n>1) parts+=n*8; }
  auto A=items, B=items;
  std::stable_sort(A.begin(),A.end(),[](const Item&x,const Item&y){return x.key1-x.key0>y.key1-y.key0;});
  std::stable_sort(B.begin(),B.end(),[&](const Item&x,const Item&y){return L[x.b]>L[y.b];});
  printf("items %zu blocks %zu\n", items.size(), items.size()*8);
  for (auto* V : {&A,&B}) { printf("order:"); for (auto& it: *V) printf(" %d:%d/%d(%d)", it.b, it.s, it.n, (it.key1-it.key0+63)/64); printf("\n"); }
  for(int b=0;b<32;++b) printf("%d:%d ", b, L[b]); printf("\n");
}
