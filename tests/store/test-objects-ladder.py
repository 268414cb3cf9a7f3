#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Site-wide time per object over long ranges is read from the coarsest
whole buckets that fit (days at the edges, then weeks, then four-week
periods, all from the epoch): whatever the range, the sums equal those of
the batches whose day lies in it. Batches every 29 hours over 120 days
cross every kind of edge; ranges start and end at many offsets."""
import time

from lmktest import log
from storetest import Store, check_eq, make_batch

DAY = 86400
NOW = int(time.time())
T0 = (NOW // DAY - 121) * DAY


def obj_row(samples):
    return {"job": None, "step": None, "user": "root", "comm": "app", "object": "/usr/bin/solver",
            "kind": "exe", "build_id": None, "phase": "", "samples": samples,
            "cpu_time_ns": None, "cycles": None, "instructions": None}


def main():
    batches = []
    t, i = T0 + 3600, 0
    while t < NOW - 3600:
        batches.append((t, 1 + i % 17))
        t += 29 * 3600
        i += 1
    with Store() as s:
        for seq, (start, n) in enumerate(batches):
            b = make_batch(node="cn001", seq=seq, start=start, rows=[obj_row(n)])
            b["interval"]["end"] = start + 60
            check_eq(s.ingest(b)[0], 200, f"batch {seq}")
        checked = 0
        for since_days in (8, 13, 27, 28, 29, 35, 56, 57, 60, 84, 90, 100, 119):
            for until_back in (0, 1, 3, 9):
                if since_days - until_back < 8:
                    continue
                until = NOW - until_back * DAY - 3 * 3600 * until_back
                o = s.get_ok(f"/api/v1/objects?since={NOW - since_days * DAY}&until={until}&kind=exe")
                check_eq(o["grain"], "day", "a range of a week or more")
                want = sum(n for start, n in batches if o["since"] <= start - start % DAY < o["until"])
                got = o["objects"][0]["samples"] if o["objects"] else 0
                check_eq(got, want, f"samples since {since_days} days until {until_back} days back")
                checked += 1
        log(f"{len(batches)} batches, {checked} ranges")
    log("PASS")


if __name__ == "__main__":
    main()
