"""Replace the many_to_one section of the 2026-11-22 two-rack-16 platform with a new fit."""
import sys, yaml
new = yaml.safe_load(open(sys.argv[1]))["many_to_one"]
base = open("/work/wt/lead/study/2026-11-22-advise-two-rack-16/platform.yaml").read()
head, sep, _ = base.partition("\nmany_to_one:")
assert sep, "no many_to_one in the base platform"
lines = head.rstrip().splitlines()
while lines[-1].startswith("#"):
    lines.pop()
out = "\n".join(lines) + "\n# many_to_one re-measured 2026-11-23 (calibrate --parts tcp,many-to-one, sequential receives" + (", " + sys.argv[3] if len(sys.argv) > 3 else "") + ")\n"
out += yaml.safe_dump({"many_to_one": new}, sort_keys=False)
open(sys.argv[2], "w").write(out)
d = yaml.safe_load(open(sys.argv[2]))
print(sys.argv[2], "M1", d["many_to_one"]["M1"], "M2", d["many_to_one"]["M2"], "levels", d["many_to_one"]["levels"])
