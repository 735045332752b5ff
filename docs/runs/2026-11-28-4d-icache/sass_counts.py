#!/usr/bin/env python3
# Executed warp instructions by opcode in two ncu source pages (ncu -i R --page source --csv --print-source sass, xz'd),
# and their difference a query tile: sass_counts.py OLD.csv.xz NEW.csv.xz TILES
import collections, csv, io, lzma, sys


def counts(path):
    rows = list(csv.reader(io.StringIO(lzma.open(path, 'rt').read())))
    head, data = rows[1], rows[2:]
    src, ex = head.index('Source'), head.index('Instructions Executed')
    c = collections.Counter()
    for r in data:
        if not r[0].startswith('0x'):
            continue
        words = r[src].split()
        op = words[1] if words[0].startswith('@') else words[0]
        c[op.split('.')[0]] += int(r[ex] or 0)
    return c


old, new, tiles = counts(sys.argv[1]), counts(sys.argv[2]), int(sys.argv[3])
print(f'total a tile: {sum(old.values()) / tiles:.0f} against {sum(new.values()) / tiles:.0f} (warp instructions, 8 warps)')
for d, op in sorted(((old[k] - new[k], k) for k in set(old) | set(new)), reverse=True)[:12]:
    print(f'  {op:10s} {old[op]:12d} {new[op]:12d}  {d / tiles:+7.1f} a tile')
