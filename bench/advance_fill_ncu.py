#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of bench/advance-fill-ncu.sh (issue 34): each range that
`tg-bench --seeds-ranges` ran (the seeds advance_fill kernel in its shapes,
masked and unmasked, and the D2D copy its row is held to, at E = 2^20 and
2^22) with its GPU time by events and what ncu measured of it: duration,
DRAM and L2 bandwidth, the share of DRAM's peak, achieved and theoretical
occupancy, and the two largest stall reasons.

Inputs: the output of tg-bench --seeds-ranges (--ranges), and the raw
pages (`ncu --import R --csv --page raw`) of its kernel replay (--kernels)
and of its range replay (--range-csv), each optional.  ncu's kernel replay
profiles kernels only: a copy that a copy engine runs gives it no result,
so the copy's row then takes its figures from the range replay, where a
range holds the copies themselves; without either, its events alone.
Standard library only (the GPU machines have no GLib, and python3 there may
lack anything else)."""
import argparse
import csv
import io
import re
import statistics
import sys

DURATION = "gpu__time_duration.sum"
DRAM_READ = "dram__bytes_read.sum"
DRAM_WRITE = "dram__bytes_write.sum"
DRAM_PCT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_PEAK = "dram__bytes.sum.peak_sustained"  # bytes a DRAM cycle
DRAM_CLOCK = "dram__cycles_elapsed.avg.per_second"
L2_BYTES = "lts__t_bytes.sum"
L2_HIT = "lts__t_sector_hit_rate.pct"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
OCCUPANCY_MAX = "sm__maximum_warps_per_active_cycle_pct"
GRID, BLOCK = "launch__grid_size", "launch__block_size"
REGISTERS, WAVES = "launch__registers_per_thread", "launch__waves_per_multiprocessor"
# The WarpStateStats section's breakdown: cycles a warp spends in each
# state per instruction issued.  "selected" is the issue itself.  Where an
# ncu has it not, the PC samples of each state (shown as shares of them).
STALL = re.compile(r"smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio")
SAMPLED = re.compile(r"smsp__pcsamp_warps_issue_stalled_(\w+)")

# What the script asks ncu for beyond its sections (advance-fill-ncu.sh
# reads these lists from here).
KERNEL_METRICS = [DURATION, DRAM_READ, DRAM_WRITE, DRAM_PCT, DRAM_PEAK, DRAM_CLOCK,
                  L2_BYTES, L2_HIT, OCCUPANCY, OCCUPANCY_MAX]
RANGE_METRICS = [DURATION, DRAM_READ, DRAM_WRITE, DRAM_PCT, L2_BYTES, L2_HIT]
# Where a range replay refuses some of those: what a copy's row needs most.
RANGE_LEAST = [DURATION, DRAM_READ, DRAM_WRITE]
METRICS = {"kernel": KERNEL_METRICS, "range": RANGE_METRICS, "range-least": RANGE_LEAST}

IDENTITY = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
            "Stream", "Block Size", "Grid Size", "Device", "CC")

SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
SECONDS = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0,
           "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


class Mismatch(Exception):
    """ncu's results do not line up with the ranges tg-bench ran."""


def number(text):
    """A value of ncu's CSV as a float (thousands separators dropped), or
    None where it is no number ("n/a", a tuple like "(256, 1, 1)")."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def scale(unit):
    """The factor from @unit to its base unit (byte, second, byte/second,
    hz, cycle/second): ncu scales its values unless told --print-units
    base."""
    quantity, _, per = unit.strip().partition("/")
    factor = SECONDS.get(quantity)
    if factor is None:
        m = re.fullmatch(r"(Ki|Mi|Gi|Ti|[KMGTP]?)(?:byte|B|hz|Hz)", quantity)
        # %, counts, ratios, cycles: no prefix.
        factor = 1.0 if m is None else BINARY.get(m.group(1)) or SI[m.group(1)]
    return factor / SECONDS.get(per, 1.0)


def parse_ranges(text):
    """tg-bench --seeds-ranges output: its device line, the ranges in order
    and their GPU time a launch by events, by (log2 E, what)."""
    device, ranges, times = None, [], {}
    for line in text.splitlines():
        f = line.split("\t")
        if line.startswith("# seeds ranges: "):
            device = line[len("# seeds ranges: "):]
        elif f[0] == "range" and len(f) == 7:
            ranges.append({"index": int(f[1]), "log2": int(f[2]), "kind": f[3],
                           "bytes": int(f[4]), "launches": int(f[5]), "what": f[6]})
        elif f[0] == "time" and len(f) == 4:
            times[(int(f[1]), f[3])] = float(f[2]) * 1e-6
    if not ranges:
        raise Mismatch("no ranges in tg-bench --seeds-ranges' output")
    return device, ranges, times


def parse_ncu_csv(text):
    """Results of an ncu CSV page in ID order, each a dict: "name" (the
    kernel's, or the range's), "m" (metric name: value in base units, None
    where not a number).  Reads the raw page (a column a metric, a row of
    units under the names) and the details page (a row a metric)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        raise Mismatch("no CSV header (\"ID\", ...) in ncu's output")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, rows = rows[0], [r for r in rows[1:] if r]
    results = {}
    if "Metric Name" in header:
        col = {name: header.index(name) for name in ("ID", "Metric Name", "Metric Unit",
                                                     "Metric Value")}
        for r in rows:
            res = results.setdefault(r[col["ID"]], new_result(header, r))
            value = number(r[col["Metric Value"]])
            res["m"][r[col["Metric Name"]]] = (None if value is None else
                                               value * scale(r[col["Metric Unit"]]))
    else:
        units = [""] * len(header)
        if rows and rows[0][0] == "":  # the units row: an ID has none
            units, rows = rows[0], rows[1:]
        for r in rows:
            res = results.setdefault(r[0], new_result(header, r))
            for name, unit, cell in zip(header, units, r):
                if name not in IDENTITY:
                    value = number(cell)
                    res["m"][name] = None if value is None else value * scale(unit)
    return [results[k] for k in sorted(results, key=lambda k: number(k) or 0)]


def new_result(header, row):
    cell = dict(zip(header, row))
    name = cell.get("Kernel Name") or cell.get("Range Name") or cell.get("Name") or ""
    return {"name": name, "m": {}}


def assign_kernels(ranges, results):
    """The kernel replay's results of each range, by its index: a kernel
    range's launches, in order; a copy's, the results between (none where
    copy engines ran it)."""
    out, i = {}, 0
    for r in ranges:
        if r["kind"] == "kernel":
            got = results[i:i + r["launches"]]
            if len(got) < r["launches"] or any("advance_fill" not in g["name"] for g in got):
                raise Mismatch("range %d (%s, E = 2^%d): %d advance_fill launches expected "
                               "from result %d, ncu has %s" % (
                                   r["index"], r["what"], r["log2"], r["launches"], i,
                                   [g["name"] for g in got] or "none"))
        else:
            j = i
            while j < len(results) and "advance_fill" not in results[j]["name"]:
                j += 1
            got = results[i:j]
        out[r["index"]] = got
        i += len(got)
    if i != len(results):
        raise Mismatch("%d kernel results past the last range" % (len(results) - i))
    return out


def assign_ranges(ranges, results):
    """The range replay's result of each range, by its index."""
    if len(results) != len(ranges):
        raise Mismatch("range replay: %d results for %d ranges" % (len(results), len(ranges)))
    return {r["index"]: res for r, res in zip(ranges, results)}


def median(results, name):
    values = [res["m"].get(name) for res in results]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def figures(results, launches):
    """What the table shows of @results (one or more launches, or one range
    of @launches launches): medians, per launch."""
    m = {name: median(results, name) for name in
         set().union(*(res["m"] for res in results))}
    per = float(launches)
    f = {"duration": m.get(DURATION) and m[DURATION] / per,
         "dram_pct": m.get(DRAM_PCT), "l2_hit": m.get(L2_HIT),
         "occupancy": m.get(OCCUPANCY), "occupancy_max": m.get(OCCUPANCY_MAX),
         "grid": m.get(GRID), "block": m.get(BLOCK), "registers": m.get(REGISTERS),
         "waves": m.get(WAVES), "name": results[0]["name"]}
    if m.get(DRAM_READ) is not None and m.get(DRAM_WRITE) is not None:
        f["dram_bytes"] = (m[DRAM_READ] + m[DRAM_WRITE]) / per
    if m.get(L2_BYTES) is not None:
        f["l2_bytes"] = m[L2_BYTES] / per
    if m.get(DRAM_PEAK) and m.get(DRAM_CLOCK):
        f["dram_peak"] = m[DRAM_PEAK] * m[DRAM_CLOCK]
    f["stalls"] = top_stalls(m)
    return f


def top_stalls(m):
    """The two largest stall reasons of metrics @m, as (name, text)."""
    def states(pattern):
        return {p.group(1): v for p, v in ((pattern.fullmatch(k), v) for k, v in m.items())
                if p and v is not None and not p.group(1).endswith("_not_issued")}

    stalls, shown = states(STALL), "%.1f"
    if not stalls:
        stalls, shown = states(SAMPLED), "%.0f%% of samples"
        total = sum(stalls.values()) or 1.0
        stalls = {k: 100.0 * v / total for k, v in stalls.items()}
    stalls.pop("selected", None)
    top = sorted(stalls.items(), key=lambda kv: kv[1], reverse=True)[:2]
    return [(name, shown % v) for name, v in top]


def fmt(value, spec="%.1f", scale_by=1.0):
    return "–" if value is None else spec % (value / scale_by)


def kernel_shape(f):
    if f.get("grid") is None or f.get("block") is None:
        return "–"
    text = "%d × %d" % (f["grid"], f["block"])
    if f.get("registers") is not None:
        text += ", %d regs" % f["registers"]
    return text + (", %.2f waves" % f["waves"] if f.get("waves") is not None else "")


def short_name(name):
    """A kernel's name without "void " and its parameters."""
    name = re.sub(r"^void ", "", name)
    return re.sub(r"\((?:[^()]|\([^()]*\))*\)$", "", name)


def table(device, ranges, times, kernels=None, range_results=None, notes=()):
    """The markdown table (lines) of every range."""
    copy_gbs = {}
    for r in ranges:
        t = times.get((r["log2"], r["what"]))
        if r["kind"] == "copy" and t:
            copy_gbs[r["log2"]] = r["bytes"] / t / 1e9
    head = ["E", "what", "measured by", "grid × block", "µs a launch (events)",
            "GB/s (events)", "× copy (events)", "ncu µs", "range replay µs",
            "DRAM GB/s", "% of DRAM peak", "DRAM ÷ counted bytes", "L2 GB/s", "L2 hit %",
            "occupancy achieved / theoretical %", "top 2 stalls (cycles an issue)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    peak = None
    for r in ranges:
        t = times.get((r["log2"], r["what"]))
        gbs = r["bytes"] / t / 1e9 if t else None
        ratio = gbs / copy_gbs[r["log2"]] if gbs and copy_gbs.get(r["log2"]) else None
        ranged = (figures([range_results[r["index"]]], r["launches"])
                  if range_results else None)
        launches = (kernels or {}).get(r["index"]) or []
        if launches:
            f, source = figures(launches, 1), "kernel replay"
            if r["kind"] == "copy":
                source += " (a kernel: %s)" % short_name(f["name"])
        elif ranged is not None:
            f, source = ranged, "range replay"
        elif r["kind"] == "copy" and kernels is not None:
            f, source = {}, "events (no kernel: a copy engine's; no range replay)"
        else:
            f, source = {}, "events"
        peak = peak or f.get("dram_peak")
        d = f.get("duration")
        dram_gbs = f["dram_bytes"] / d / 1e9 if d and "dram_bytes" in f else None
        l2_gbs = f["l2_bytes"] / d / 1e9 if d and "l2_bytes" in f else None
        counted = f["dram_bytes"] / r["bytes"] if "dram_bytes" in f else None
        occupancy = ("%s / %s" % (fmt(f.get("occupancy")), fmt(f.get("occupancy_max")))
                     if f.get("occupancy") is not None else "–")
        stalls = ", ".join("%s %s" % kv for kv in f.get("stalls", [])) or "–"
        cells = ["2^%d" % r["log2"], r["what"], source, kernel_shape(f),
                 fmt(t, "%.2f", 1e-6), fmt(gbs, "%.0f"), fmt(ratio, "%.3f"),
                 fmt(d, "%.2f", 1e-6),
                 fmt(ranged and ranged.get("duration"), "%.2f", 1e-6),
                 fmt(dram_gbs, "%.0f"), fmt(f.get("dram_pct")), fmt(counted, "%.2f"),
                 fmt(l2_gbs, "%.0f"), fmt(f.get("l2_hit")), occupancy, stalls]
        lines.append("| " + " | ".join(cells) + " |")
    out = []
    if device:
        out.append("Device: %s." % device)
    if peak:
        out.append("DRAM peak (ncu: %s × %s): %.0f GB/s." % (DRAM_PEAK, DRAM_CLOCK, peak / 1e9))
    out += [""] + lines + [""]
    out.append("Events: the median of 21 rounds taken in turn, as `make bench` times its "
               "seeds rows, each kernel launched without the call's checks (the rows \"its "
               "kernel alone\"); GB/s and × copy count the bytes the rows count (25 an env "
               "masked, 24 unmasked; the copy reads and writes half each).  ncu: the "
               "median of the launches of a range (kernel replay), or the range's time "
               "over its launches (range replay); DRAM and L2 GB/s are bytes read + "
               "written over ncu's duration.")
    out += ["Note: " + n for n in notes]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranges", required=False, help="tg-bench --seeds-ranges output")
    ap.add_argument("--kernels", help="raw CSV page of the kernel replay")
    ap.add_argument("--range-csv", help="raw CSV page of the range replay")
    ap.add_argument("--note", action="append", default=[], help="a line under the table")
    ap.add_argument("--metrics", choices=sorted(METRICS),
                    help="print the metrics ncu is asked for in that replay, and exit")
    ap.add_argument("--check-range-csv", metavar="CSV",
                    help="exit 0 when this range replay's page has a result for each "
                    "range, else say why and exit 1")
    args = ap.parse_args(argv)
    if args.metrics:
        print(",".join(METRICS[args.metrics]))
        return 0
    if not args.ranges:
        ap.error("--ranges is required")
    notes = list(args.note)
    try:
        with open(args.ranges) as f:
            device, ranges, times = parse_ranges(f.read())
        if args.check_range_csv:
            with open(args.check_range_csv) as f:
                assign_ranges(ranges, parse_ncu_csv(f.read()))
            return 0
        kernels = None
        if args.kernels:
            with open(args.kernels) as f:
                kernels = assign_kernels(ranges, parse_ncu_csv(f.read()))
        range_results = None
        if args.range_csv:
            try:
                with open(args.range_csv) as f:
                    range_results = assign_ranges(ranges, parse_ncu_csv(f.read()))
            except Mismatch as e:  # the kernels' figures stand without it
                notes.append("range replay left out: %s" % e)
    except (Mismatch, OSError) as e:
        print("advance_fill_ncu.py: %s" % e, file=sys.stderr)
        return 1
    print("\n".join(table(device, ranges, times, kernels, range_results, notes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
