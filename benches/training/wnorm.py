# Usage: python3 benches/training/wnorm.py RUN_OUT_DIR ...
# RMS of the convolution weights of a checkpoint's model.safetensors.
import json, struct, sys, glob, math, array
for d in sys.argv[1:]:
    f = sorted(glob.glob(d + '/checkpoints/iter-*/model.safetensors'))[-1]
    b = open(f, 'rb').read()
    n = struct.unpack('<Q', b[:8])[0]
    h = json.loads(b[8:8 + n])
    ss, cnt = 0.0, 0
    for k, v in h.items():
        if k == '__metadata__' or 'conv' not in k or not k.endswith('.w'): continue
        s, e = v['data_offsets']
        a = array.array('f'); a.frombytes(b[8 + n + s:8 + n + e])
        ss += sum(x * x for x in a); cnt += len(a)
    print(d.split('/')[-1], f.split('/')[-2], f"conv weight RMS {math.sqrt(ss / max(cnt,1)):.3f} over {cnt}")
