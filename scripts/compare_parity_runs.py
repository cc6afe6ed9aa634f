"""Compare two output folders of scripts/replay_parity.py (before and after a change): records and summaries identical,
headers identical apart from timings (started, finished, timing), key orders included, and the files byte-identical
once the clock fields' values are blanked.

    python scripts/compare_parity_runs.py BEFORE_DIR AFTER_DIR BEFORE_CHECKOUT AFTER_CHECKOUT

The checkouts are the repository folders each run was made from (their paths are normalised). Exits 1 on a difference.
"""

import json
import re
import sys
from pathlib import Path

TIMING = {"started", "finished", "timing"}
#: the clock fields of the header as the JSON writer lays them out (one per line; "timing" an object of numbers)
CLOCK_LINES = re.compile(r'^ *"(started|finished|wall_s|generation_s|collection_and_scoring_s)": [0-9.e+-]+,?$',
                         re.M)


def clock_free_bytes(path: Path, root: str) -> bytes:
    """The file's bytes with the clock fields' values blanked and the checkout's own path normalised."""
    text = path.read_text(encoding="utf-8").replace(root, "<REPO>")
    return CLOCK_LINES.sub(lambda m: f'"{m.group(1)}": <clock>', text).encode("utf-8")


before, after = Path(sys.argv[1]), Path(sys.argv[2])
ROOTS = (sys.argv[3], sys.argv[4])  # the checkout each folder was made from
ok = True
names = sorted(p.name for p in before.glob("*.json"))
for name in names:
    # the two trees were run from different checkouts: their own paths are the repository's, not a difference
    a = json.loads((before / name).read_text().replace(str(ROOTS[0]), "<REPO>"))
    b_path = after / name
    if not b_path.exists():
        print(f"{name}: MISSING after"); ok = False; continue
    b = json.loads(b_path.read_text().replace(str(ROOTS[1]), "<REPO>"))
    ha = {k: v for k, v in a["header"].items() if k not in TIMING}
    hb = {k: v for k, v in b["header"].items() if k not in TIMING}
    same = {"cases": a["cases"] == b["cases"], "suites": a["suites"] == b["suites"], "header": ha == hb,
            "header key order": list(ha) == list(hb),
            "other keys": {k: v for k, v in a.items() if k not in ("header", "cases", "suites")} ==
                          {k: v for k, v in b.items() if k not in ("header", "cases", "suites")},
            "case key order": [list(c) for c in a["cases"]] == [list(c) for c in b["cases"]]}
    same["bytes apart from clock fields"] = clock_free_bytes(before / name, ROOTS[0]) == \
        clock_free_bytes(b_path, ROOTS[1])
    bad = [k for k, v in same.items() if not v]
    print(f"{name:<40} {len(a['cases']):>6} cases  {'identical' if not bad else 'DIFFER: ' + ', '.join(bad)}")
    if "header" in bad:
        for k in sorted(set(ha) | set(hb)):
            if ha.get(k) != hb.get(k):
                print(f"   header[{k}]: {str(ha.get(k))[:200]} -> {str(hb.get(k))[:200]}")
    ok &= not bad
print("ALL IDENTICAL" if ok else "DIFFERENCES FOUND")
sys.exit(0 if ok else 1)
