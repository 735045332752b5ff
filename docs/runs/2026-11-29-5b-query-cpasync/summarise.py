import re,sys,collections
d=collections.OrderedDict()
tag=None
for line in open(sys.argv[1]):
    if line.startswith('=='): tag=line[3:].strip(); continue
    m=re.search(r'(pages of 64|contiguous|compact pool)\s+([\d.]+) ms\s+([\d.]+) GB/s =\s+([\d.]+)%',line)
    if m and tag: d.setdefault((tag,m.group(1)),[]).append((float(m.group(3)),float(m.group(4)),m.group(2)))
for (tag,lay),v in d.items():
    print(f"{tag:38s} {lay:13s} GB/s {min(x[0] for x in v):7.1f}–{max(x[0] for x in v):7.1f}  %copy {min(x[1] for x in v):5.1f}–{max(x[1] for x in v):5.1f}  ms {' '.join(x[2] for x in v)}")
