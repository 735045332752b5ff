#!/usr/bin/env python3
# Stall samples by opcode and reason from ncu source pages (ncu -i R --page source --csv --print-source sass; .xz or plain):
# stalls_by_opcode.py PAGE.csv[.xz] ...
import csv, io, lzma, collections, sys
def load(path):
    op = lzma.open if path.endswith('.xz') else open
    rows=list(csv.reader(io.StringIO(op(path,'rt').read())))
    h=rows[1]; data=[r for r in rows[2:] if r and r[0].startswith('0x')]
    return h,data
for path in sys.argv[1:]:
    h,data=load(path)
    isrc=h.index('Source'); st=[i for i,n in enumerate(h) if n.startswith('stall_') and 'Not Issued' not in n]
    tot=collections.Counter(); byop=collections.defaultdict(collections.Counter)
    for r in data:
        w=r[isrc].split(); op=(w[1] if w[0].startswith('@') else w[0]).split('.')[0]
        for i in st:
            v=int(r[i] or 0); tot[h[i]]+=v; byop[op][h[i]]+=v
    T=sum(tot.values())
    print(path.split('/')[-1], 'samples', T)
    print('  ', ', '.join('%s %.1f%%'%(k[6:],100*v/T) for k,v in tot.most_common(9)))
    for op in ['FFMA','MUFU','IMAD','HGMMA','WARPGROUP','BRA','FMUL','LDS']:
        c=byop[op]; s=sum(c.values())
        print('   %-10s %5.1f%%: %s'%(op,100*s/T,', '.join('%s %.1f'%(k[6:],100*v/T) for k,v in c.most_common(3))))
