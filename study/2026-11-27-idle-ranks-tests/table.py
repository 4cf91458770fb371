"""PLogP's L, o_s, o_r and g at a few sizes from every platform-*.yaml here (microseconds)."""

import glob

import yaml

print("| platform | L | o_s(1 KiB) | o_r(1 B) | o_r(1 KiB) | o_r(4 KiB) | o_r(16 KiB) | g(4 KiB) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for f in sorted(glob.glob("*platform*.yaml")):
    with open(f) as handle:
        p = yaml.safe_load(handle)["plogp"]
    at = {m: i for i, m in enumerate(p["sizes"])}
    us = [p["L"]] + [
        p[k][at[m]]
        for k, m in (
            ("o_s", 1024),
            ("o_r", 1),
            ("o_r", 1024),
            ("o_r", 4096),
            ("o_r", 16384),
            ("g", 4096),
        )
    ]
    print(f"| {f} | " + " | ".join(f"{x * 1e6:.1f}" for x in us) + " |")
