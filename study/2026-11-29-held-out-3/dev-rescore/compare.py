"""Per draw: how many tcpflow predictions moved between before/ and DIR/ (argv[1]), closer
to or farther from the measured median (by the log ratio)."""
import json, sys, glob, os, math
for b in sorted(glob.glob('before/*/rs*/score.json')):
    a = b.replace("before/", sys.argv[1] + "/", 1)
    B, A = json.load(open(b)), json.load(open(a))
    n = 0; worse = better = 0; changed = 0
    for kind in ('schedules', 'forced'):
        for rb, ra in zip(B[kind], A[kind]):
            pb = rb['models']['tcpflow']['makespan_s']; pa = ra['models']['tcpflow']['makespan_s']
            m = rb['measured_s']
            if abs(pa - pb) > 1e-9 * max(pb, 1e-9):
                changed += 1
                eb, ea = abs(math.log(pb / m)), abs(math.log(pa / m))
                better += ea < eb; worse += ea > eb
            n += 1
    print(f"{b.split('/')[1]}/{b.split('/')[2]}: {changed}/{n} predictions changed, {better} closer, {worse} farther")
