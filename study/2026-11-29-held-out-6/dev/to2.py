import json, sys, duckdb, os
for d in open('draws.txt').read().split():
    n = os.path.basename(d)
    J = json.load(open(f'exp-srms/{n}.json'))
    con = duckdb.connect(d + '/cal.duckdb', read_only=True)
    rows = con.execute("select s.pattern, s.size_bytes, s.quantity, s.extra, s.n_ranks from samples s join campaigns c on s.campaign=c.id where c.benchmark='ports' and s.quantity='burst'").fetchall()
    con.close()
    P = J['schedules'][0].get('ranks') or None
    tot = {}; 
    for p, m, q, x, nr in rows:
        x = json.loads(x); k = len(json.loads(x['flows']))
        t = tot.setdefault(p, {}).setdefault(m, [0, 0, k]); t[0] += x.get('timeouts') or 0; t[1] += 1
    host = tot.get('host', {})
    to_b = sum(v[0] for v in host.values()); by = sum(v[1]*v[2]*m for m, v in host.items())
    k = next(iter(host.values()))[2] if host else 0
    lam = to_b / by if by else 0
    Pn = k + 1
    meas = {s['size']: s['timeouts']/s['reps'] for s in J['schedules'] if s['label'].startswith('b-')}
    measA = {s['size']: s['timeouts']/s['reps'] for s in J['schedules'] if s['label'].startswith('a-')}
    pr = ' '.join(f"{m//1024}K:{v[0]}/{v[1]}" for m, v in sorted(host.items()))
    print(f"{n:16s} k={k:2d} probe {pr}")
    print(' '*17 + 'B timeouts/run ' + ' '.join(f"{m//1024}K:{t:.1f}" for m, t in sorted(meas.items())))
    print(' '*17 + 'A timeouts/run ' + ' '.join(f"{m//1024}K:{t:.1f}" for m, t in sorted(measA.items())))
