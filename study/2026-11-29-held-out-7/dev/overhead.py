"""Per calibrate part: wall time, steps, and for lmo the overhead a step
(campaign wall time less the roundtrips it timed, over its steps)."""
import duckdb, sys, os, shutil, tempfile
for d in sys.argv[1:]:
    tmp = tempfile.mktemp(suffix='.duckdb'); shutil.copy(d + '/cal.duckdb', tmp)
    c = duckdb.connect(tmp, read_only=True)
    out = []
    tot = 0
    for cid, b, s, f in c.execute("select id, benchmark, started, finished from campaigns order by id").fetchall():
        wall = (f - s).total_seconds()
        steps, meas = c.execute(f"select count(distinct step), sum(value_s) from samples where campaign={cid}").fetchone()
        tot += wall
        if b == 'lmo':
            out.append(f"lmo {wall:.0f} s, {steps} steps, timed {meas:.1f} s, overhead {(wall-meas)/steps*1e3:.0f} ms/step")
    c.close(); os.remove(tmp)
    print(os.path.basename(d), f"parts {tot:.0f} s;", *out)
