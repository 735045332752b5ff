import sys,re,statistics
for f in sys.argv[1:]:
    rows=[]
    for l in open(f):
        m=re.match(r'TL (\d+) sm (\d+) start ([\d.]+) end ([\d.]+) items (\d+) tiles (\d+)',l)
        if m: rows.append((int(m[1]),int(m[2]),float(m[3]),float(m[4]),int(m[5]),int(m[6])))
    if not rows: continue
    span=max(r[3] for r in rows)
    dur=[r[3]-r[2] for r in rows]
    print(f, 'blocks',len(rows),'span %.1f us'%span, 'last start %.1f'%max(r[2] for r in rows))
    # per-tile time
    pt=[(r[3]-r[2])/max(r[5],1) for r in rows]
    print('  us/tile: min %.2f med %.2f max %.2f'%(min(pt),statistics.median(pt),max(pt)), ' dur min %.1f med %.1f max %.1f'%(min(dur),statistics.median(dur),max(dur)))
    ends=sorted(r[3] for r in rows)
    print('  end quantiles', ' '.join('%.0f'%ends[int(q*(len(ends)-1))] for q in (0,.1,.25,.5,.75,.9,.99,1)))
    starts=sorted(r[2] for r in rows)
    print('  start quantiles', ' '.join('%.1f'%starts[int(q*(len(starts)-1))] for q in (0,.1,.25,.5,.75,.9,.99,1)))
    # SM busy: per SM, sum of durations / span
    from collections import defaultdict
    busy=defaultdict(float); cnt=defaultdict(int)
    for r in rows: busy[r[1]]+=r[3]-r[2]; cnt[r[1]]+=1
    b=sorted(busy.values())
    print('  SMs used',len(busy),' busy/span per SM (2 slots): min %.2f med %.2f max %.2f'%(b[0]/span/2,statistics.median(b)/span/2,b[-1]/span/2), ' blocks/SM', sorted(set(cnt.values())))
