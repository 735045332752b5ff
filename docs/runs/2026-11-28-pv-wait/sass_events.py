#!/usr/bin/env python3
# sass_events.py FILE.sass — per kernel of a `cuobjdump -sass` listing, the order of the events a schedule is made of:
# named barriers (BAR.SYNC / BAR.ARV), wgmma waits (WARPGROUP.DEPBAR.LE gsb0, N), the P·V wgmmas (HGMMA … tnspB) and
# runs of MUFU.EX2 (the softmax), each run printed once. The question it answers: does the wait for P·V come after the
# softmax's exponentials, as the source says, or before them?
#   cuobjdump -sass build/reference/task4_bf16/reference/flash_attention_bf16_sm90.o > fwd.sass; sass_events.py fwd.sass
import re
import sys

lines = open(sys.argv[1]).read().split('\n')
starts = [i for i, l in enumerate(lines) if 'Function :' in l] + [len(lines)]
for a, b in zip(starts, starts[1:]):
    events, count = [], 0
    for line in lines[a:b]:
        if not re.search(r'/\*[0-9a-f]{4}\*/', line):
            continue
        count += 1
        text = re.sub(r'\s+', ' ', line.split(';')[0]).strip()
        if 'DEPBAR.LE gsb0' in text or 'BAR.SYNC' in text or 'BAR.ARV' in text:
            events.append(text)
        for key, label in (('MUFU.EX2', 'MUFU.EX2 …'), ('tnspB', 'HGMMA P·V …')):
            if key in text and (not events or events[-1] != label):
                events.append(label)
    print(lines[a].split(':')[-1].strip()[-90:], f'({count} instructions)')
    for e in events:
        print('   ', e)
