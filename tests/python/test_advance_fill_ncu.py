# SPDX-License-Identifier: Apache-2.0
"""bench/advance-fill-ncu.sh and its table (bench/advance_fill_ncu.py) where
no GPU is needed (issue 34): the parser on hand-written pages in ncu's CSV
formats (the raw page: a column a metric under a row of units; the details
page: a row a metric), results lined up with tg-bench's ranges (a copy that
a copy engine ran has no kernel result; one run as a kernel has), and the
script's whole run against a fake tg-bench and a fake ncu: its skips (exit
77) without a GPU, without ncu and without counters, and the table.  The
measurement itself runs on a GPU: make ncu-advance-fill."""
import csv
import importlib.util
import io
import os
import stat
import subprocess
import sys
import tempfile
import unittest

import tap

TOP = os.environ.get("abs_top_srcdir", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(TOP, "bench", "advance-fill-ncu.sh")
PARSER = os.path.join(TOP, "bench", "advance_fill_ncu.py")
_spec = importlib.util.spec_from_file_location("advance_fill_ncu", PARSER)
afn = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(afn)

STALL = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
KERNEL = ("void advance_fill_kernel<true, true, 1>(unsigned long *, const unsigned long *, "
          "unsigned int *, const unsigned char *, unsigned int)")

# A raw page as `ncu --import R --csv --page raw` prints it, scaled units
# and thousands separators included: two launches of one kernel.
RAW = '''==PROF== Connected to process 4242 (/tmp/b/bench/tg-bench)
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","dram__bytes_read.sum","dram__bytes_write.sum","gpu__time_duration.sum","launch__grid_size","launch__block_size","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio","dram__throughput.avg.pct_of_peak_sustained_elapsed","dram__cycles_elapsed.avg.per_second","lts__t_sector_hit_rate.pct"
"","","","","","","","","","","","Mbyte","Kbyte","usecond","","","","","","%","cycle/nsecond","%"
"0","4242","tg-bench","gpu","@KERNEL@","1","13","(256, 1, 1)","(1,024, 1, 1)","0","9.0","13.11","8,390.00","6.40","1,024","256","21.50","1.00","3.25","88.10","2.62","n/a"
"1","4242","tg-bench","gpu","@KERNEL@","1","13","(256, 1, 1)","(1,024, 1, 1)","0","9.0","13.31","8,410.00","6.60","1,024","256","22.50","1.00","3.75","88.30","2.62","n/a"
'''.replace("@KERNEL@", KERNEL)

# The same first launch on the details page: a row a metric.
DETAILS_HEAD = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context",'
                '"Stream","Block Size","Grid Size","Device","CC","Section Name",'
                '"Metric Name","Metric Unit","Metric Value"')
DETAILS = "\n".join([DETAILS_HEAD] + [
    '"0","4242","tg-bench","gpu","%s","1","13","(256, 1, 1)","(1024, 1, 1)","0","9.0",'
    '"Command line profiler metrics","%s","%s","%s"' % (KERNEL, name, unit, value)
    for name, unit, value in [("dram__bytes_read.sum", "Mbyte", "13.11"),
                              ("dram__bytes_write.sum", "Kbyte", "8,390.00"),
                              ("gpu__time_duration.sum", "usecond", "6.40"),
                              ("launch__grid_size", "", "1,024")]]) + "\n"


def manifest(launches=2, copy_us=(10.0, 40.0)):
    """tg-bench --seeds-ranges output: at 2^20 and 2^22, two kernel ranges
    and the copy."""
    lines = ["# seeds ranges: Fake H200, 132 SMs, 60 MiB of L2, %d launches a range"
             % launches]
    times, index = [], 0
    for s, log2 in enumerate((20, 22)):
        n = 1 << log2
        for kind, what, nbytes, us in [
                ("kernel", "the call's kernel: one group, masked", 25 * n, copy_us[s] * 1.25),
                ("kernel", "the call's kernel: one group, unmasked", 24 * n, copy_us[s] * 1.2),
                ("copy", "cudaMemcpyAsync D2D, same bytes", 25 * n, copy_us[s])]:
            lines.append("range\t%d\t%d\t%s\t%d\t%d\t%s" % (index, log2, kind, nbytes,
                                                           launches, what))
            times.append("time\t%d\t%.4f\t%s" % (log2, us, what))
            index += 1
    return "\n".join(lines + times) + "\n"


def raw_page(results, units=None):
    """A raw page of @results (name, {metric: value}), durations in
    nanoseconds, other values in base units unless @units names one, as ncu
    quotes them."""
    units = dict({afn.DURATION: "nsecond"}, **(units or {}))
    names = sorted(set().union(*(m for _, m in results)))
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    w.writerow(list(afn.IDENTITY) + names)
    w.writerow([""] * len(afn.IDENTITY) + [units.get(n, "") for n in names])
    for i, (name, m) in enumerate(results):
        w.writerow([str(i), "4242", "tg-bench", "gpu", name, "1", "13", "(256, 1, 1)",
                    "(1024, 1, 1)", "0", "9.0"] + ["{:,}".format(m[n]) if n in m else ""
                                                   for n in names])
    return out.getvalue()


def kernel_launch(duration_ns, dram_bytes, stalls):
    m = {afn.DURATION: duration_ns, afn.DRAM_READ: dram_bytes * 0.6,
         afn.DRAM_WRITE: dram_bytes * 0.4, afn.DRAM_PCT: 80.0, afn.L2_BYTES: 2 * dram_bytes,
         afn.L2_HIT: 40.0, afn.OCCUPANCY: 70.0, afn.OCCUPANCY_MAX: 100.0, afn.GRID: 1024,
         afn.BLOCK: 256, afn.REGISTERS: 30, afn.WAVES: 0.97, afn.DRAM_PEAK: 2048.0,
         afn.DRAM_CLOCK: 2.4e9}
    m.update({STALL % k: v for k, v in stalls.items()})
    return (KERNEL, m)


def kernel_results(copy_kernel=False, launches=2):
    """The kernel replay of manifest(): each kernel range's @launches; the
    copy's none (a copy engine), or 2 of a copy kernel."""
    out = []
    for log2 in (20, 22):
        n = 1 << log2
        for _ in range(2 * launches):  # 2 kernel ranges
            out.append(kernel_launch(8000.0 * n / (1 << 20), 25.0 * n,
                                     {"long_scoreboard": 20.0, "selected": 1.0,
                                      "lg_throttle": 4.0, "wait": 2.0}))
        if copy_kernel:
            out += [("copyKernel(void *, const void *, unsigned long)",
                     {afn.DURATION: 7000.0, afn.DRAM_READ: 1.0e7, afn.DRAM_WRITE: 1.0e7})] * 2
    return out


def range_results():
    """The range replay of manifest(): a range's two launches in one."""
    out = []
    for log2 in (20, 22):
        n = 1 << log2
        for us in (12.0, 11.5, 10.0):
            out.append(("range", {afn.DURATION: 2 * us * 1e3 * n / (1 << 20),
                                  afn.DRAM_READ: 12.5 * n, afn.DRAM_WRITE: 12.5 * n,
                                  afn.DRAM_PCT: 75.0}))
    return out


def row(text, log2, what):
    [line] = [line for line in text.splitlines()
              if line.startswith("| 2^%d | %s |" % (log2, what))]
    return [c.strip() for c in line.strip("|").split("|")]


def cell(cells, name):
    """The cell of @cells (a row's) in the column named @name."""
    [head] = [line for line in afn.table(None, *afn.parse_ranges(manifest())[1:])
              if line.startswith("| E |")]
    return cells[[c.strip() for c in head.strip("|").split("|")].index(name)]


class Parser(unittest.TestCase):
    def test_raw_page(self):
        """The raw page: units row, scaled units, thousands separators,
        "n/a", results in ID order."""
        a, b = afn.parse_ncu_csv(RAW)
        self.assertEqual(a["name"], KERNEL)
        self.assertAlmostEqual(a["m"][afn.DRAM_READ], 13.11e6)
        self.assertAlmostEqual(a["m"][afn.DRAM_WRITE], 8.39e6)
        self.assertAlmostEqual(a["m"][afn.DURATION], 6.4e-6)
        self.assertAlmostEqual(a["m"][afn.DRAM_CLOCK], 2.62e9)
        self.assertEqual(a["m"][afn.GRID], 1024)
        self.assertIsNone(a["m"][afn.L2_HIT])
        self.assertAlmostEqual(b["m"][STALL % "long_scoreboard"], 22.5)

    def test_details_page(self):
        """The details page gives the same values."""
        [d] = afn.parse_ncu_csv(DETAILS)
        [a, _] = afn.parse_ncu_csv(RAW)
        for name in (afn.DRAM_READ, afn.DRAM_WRITE, afn.DURATION, afn.GRID):
            self.assertAlmostEqual(d["m"][name], a["m"][name])

    def test_figures(self):
        """Medians of the launches; DRAM bytes read + written; the two
        largest stalls, the issue itself ("selected") left out."""
        f = afn.figures(afn.parse_ncu_csv(RAW), 1)
        self.assertAlmostEqual(f["duration"], 6.5e-6)
        self.assertAlmostEqual(f["dram_bytes"], 13.21e6 + 8.4e6)
        self.assertEqual(f["stalls"], [("long_scoreboard", "22.0"), ("lg_throttle", "3.5")])

    def test_sampled_stalls(self):
        """Without the section's breakdown, the PC samples' shares."""
        m = {"smsp__pcsamp_warps_issue_stalled_%s" % k: v for k, v in
             [("long_scoreboard", 600.0), ("long_scoreboard_not_issued", 500.0),
              ("selected", 100.0), ("drain", 200.0), ("wait", 100.0)]}
        self.assertEqual(afn.top_stalls(m), [("long_scoreboard", "60% of samples"),
                                             ("drain", "20% of samples")])

    def test_no_header(self):
        with self.assertRaises(afn.Mismatch):
            afn.parse_ncu_csv("==ERROR== Failed to initialize the profiler\n")

    def test_short_name(self):
        self.assertEqual(afn.short_name(KERNEL), "advance_fill_kernel<true, true, 1>")


class Table(unittest.TestCase):
    def setUp(self):
        self.device, self.ranges, self.times = afn.parse_ranges(manifest())

    def test_copy_engine(self):
        """Kernel replay has no result of a copy engine's copy: the copy row
        takes the range replay's; the kernels' rows the kernel replay's."""
        kernels = afn.assign_kernels(self.ranges, afn.parse_ncu_csv(raw_page(kernel_results())))
        ranged = afn.assign_ranges(self.ranges, afn.parse_ncu_csv(raw_page(range_results())))
        self.assertEqual([len(kernels[i]) for i in range(6)], [2, 2, 0, 2, 2, 0])
        text = "\n".join(afn.table(self.device, self.ranges, self.times, kernels, ranged))
        self.assertIn("Device: Fake H200", text)
        self.assertIn("DRAM peak (ncu: ", text)
        self.assertIn("4915 GB/s", text)  # 2048 bytes a cycle at 2.4 GHz
        # 25 bytes an env over 8 µs, all from DRAM; L2 moved twice that.
        self.assertCells(row(text, 20, "the call's kernel: one group, masked"), {
            "measured by": "kernel replay", "grid × block": "1024 × 256, 30 regs, 0.97 waves",
            "µs a launch (events)": "12.50", "× copy (events)": "0.800", "ncu µs": "8.00",
            "range replay µs": "12.00", "DRAM GB/s": "%.0f" % (25 * 2**20 / 8e-6 / 1e9),
            "DRAM ÷ counted bytes": "1.00", "L2 GB/s": "%.0f" % (50 * 2**20 / 8e-6 / 1e9),
            "occupancy achieved / theoretical %": "70.0 / 100.0",
            "top 2 stalls (cycles an issue)": "long_scoreboard 20.0, lg_throttle 4.0"})
        self.assertCells(row(text, 22, "cudaMemcpyAsync D2D, same bytes"), {
            "measured by": "range replay", "ncu µs": "40.00", "× copy (events)": "1.000",
            "% of DRAM peak": "75.0", "occupancy achieved / theoretical %": "–"})

    def assertCells(self, cells, expected):
        self.assertEqual({name: cell(cells, name) for name in expected}, expected)

    def test_copy_kernel(self):
        """A copy run as a kernel is profiled as one and named."""
        kernels = afn.assign_kernels(self.ranges,
                                     afn.parse_ncu_csv(raw_page(kernel_results(True))))
        self.assertEqual([len(kernels[i]) for i in range(6)], [2, 2, 2, 2, 2, 2])
        text = "\n".join(afn.table(self.device, self.ranges, self.times, kernels))
        c = row(text, 20, "cudaMemcpyAsync D2D, same bytes")
        self.assertEqual(cell(c, "measured by"), "kernel replay (a kernel: copyKernel)")
        self.assertEqual(cell(c, "ncu µs"), "7.00")
        self.assertEqual(cell(c, "range replay µs"), "–")

    def test_events_only(self):
        """Without ncu, the events and a word why."""
        text = "\n".join(afn.table(self.device, self.ranges, self.times,
                                   notes=["no ncu"]))
        k = row(text, 22, "the call's kernel: one group, unmasked")
        self.assertEqual(cell(k, "measured by"), "events")
        self.assertEqual(cell(k, "× copy (events)"), "%.3f" % (24 / 25 / 1.2))
        self.assertEqual(cell(k, "DRAM GB/s"), "–")
        self.assertIn("Note: no ncu", text)

    def test_mismatch(self):
        """Results that do not line up with the ranges are refused, never
        shifted onto the wrong rows."""
        results = afn.parse_ncu_csv(raw_page(kernel_results()))
        with self.assertRaisesRegex(
                afn.Mismatch, r"range 3 \(the call's kernel: one group, masked, E = 2\^22\): "
                r"2 advance_fill launches expected from result 4, ncu has \['void adv"):
            afn.assign_kernels(self.ranges, results[:5])
        with self.assertRaisesRegex(afn.Mismatch, "1 kernel results past the last range"):
            afn.assign_kernels(self.ranges, results + results[-1:])
        with self.assertRaisesRegex(afn.Mismatch, "5 results for 6 ranges"):
            afn.assign_ranges(self.ranges, results[:5])

    def test_metrics(self):
        """The script asks ncu for what the table reads."""
        r = subprocess.run([sys.executable, PARSER, "--metrics", "kernel"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.stdout.strip().split(","), afn.KERNEL_METRICS)


FAKE_BENCH = """#!/bin/sh
[ "$1" = --seeds-ranges=3 ] || exit 2
[ -z "${FAKE_NO_GPU:-}" ] || { echo "tg-bench: needs a CUDA GPU: none" >&2; exit 77; }
cat "$FAKE_DIR/manifest.txt"
"""

# ncu as the script calls it: a profile writes the report named by -o
# (unless FAKE_NCU_ERROR says why not, or FAKE_NCU_REFUSE names a metric it
# was asked for, or FAKE_NCU_NO_RANGE refuses range replay); an import
# prints the page saved for that report (a range replay's without its last
# range where FAKE_NCU_SHORT_RANGE says so).
FAKE_NCU = """#!/bin/sh
case "$1" in --version) echo "NVIDIA (R) Nsight Compute Command Line Profiler"; echo "Version fake"; exit 0;; esac
if [ "$1" = --import ]; then
  page="$FAKE_DIR/$(basename "$2" .ncu-rep).page"
  if [ -n "${FAKE_NCU_SHORT_RANGE:-}" ] && [ "$(cat "$2.mode")" = range ]; then
    head -n -1 "$page"
  else
    cat "$page"
  fi
  exit 0
fi
all="$*"
echo "$all" >>"$FAKE_DIR/ncu-calls"
if [ -n "${FAKE_NCU_REFUSE:-}" ] && echo "$*" | grep -q -- "--metrics [^ ]*$FAKE_NCU_REFUSE"; then
  echo "==ERROR== Failed to find metric $FAKE_NCU_REFUSE"; exit 1
fi
if [ -n "${FAKE_NCU_NO_RANGE:-}" ] && echo "$*" | grep -q -- "--replay-mode range "; then
  echo "==ERROR== Range replay: unsupported API call"; exit 1
fi
out=
while [ $# -gt 0 ]; do
  case "$1" in -o) out=$2; shift;; esac
  shift
done
if [ -n "${FAKE_NCU_ERROR:-}" ]; then echo "==ERROR== $FAKE_NCU_ERROR"; exit 1; fi
: >"$out.ncu-rep"
case "$all" in
  *"--replay-mode range "*) echo range >"$out.ncu-rep.mode";;
  *) echo other >"$out.ncu-rep.mode";;
esac
"""


class Script(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        for name, text in [("tg-bench", FAKE_BENCH), ("ncu", FAKE_NCU),
                           ("manifest.txt", manifest(launches=3)),
                           ("kernel-replay.page", raw_page(kernel_results(launches=3))),
                           ("range-replay.page", raw_page(range_results()))]:
            path = os.path.join(self.dir, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)

    def tearDown(self):
        self.tmp.cleanup()

    def run_script(self, **env):
        e = dict(os.environ, FAKE_DIR=self.dir, NCU=os.path.join(self.dir, "ncu"),
                 NCU_DIR=os.path.join(self.dir, "out"), PYTHON=sys.executable)
        e.update(env)
        return subprocess.run(["sh", SCRIPT, os.path.join(self.dir, "tg-bench")],
                              capture_output=True, text=True, timeout=120, env=e)

    def test_no_gpu(self):
        r = self.run_script(FAKE_NO_GPU="1")
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("SKIP: no CUDA GPU: tg-bench: needs a CUDA GPU", r.stdout)

    def test_no_ncu(self):
        r = self.run_script(NCU=os.path.join(self.dir, "no-such-ncu"))
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("SKIP: no ncu", r.stdout)
        self.assertEqual(cell(row(r.stdout, 20, "cudaMemcpyAsync D2D, same bytes"),
                              "µs a launch (events)"), "10.00")

    def test_no_counters(self):
        """ncu that cannot read the counters (gVisor) skips, the events
        shown."""
        r = self.run_script(FAKE_NCU_ERROR="Failed to initialize the profiler: "
                            "LibraryNotLoaded")
        self.assertEqual(r.returncode, 77, r.stdout + r.stderr)
        self.assertIn("SKIP: ncu cannot read the counters here: ==ERROR== Failed", r.stdout)
        self.assertIn("| 2^22 | the call's kernel: one group, masked | events |", r.stdout)

    def test_ncu_failure(self):
        r = self.run_script(FAKE_NCU_ERROR="something else")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("kernel replay failed: ==ERROR== something else", r.stdout)

    def test_table(self):
        """Both replays, as the script asks for them, and the table."""
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "ncu-calls")) as f:
            kernel_call, range_call = f.read().splitlines()
        self.assertIn("--profile-from-start off --clock-control none "
                      "--cache-control none", kernel_call)
        # Range replay takes tg-bench's cudaProfilerStart/Stop ranges and
        # refuses --profile-from-start (ncu 2025.3 on the H100).
        self.assertTrue(range_call.startswith("--clock-control none --cache-control none"),
                        range_call)
        self.assertNotIn("--profile-from-start", range_call)
        self.assertIn("--section WarpStateStats", kernel_call)
        self.assertIn(",".join(afn.KERNEL_METRICS), kernel_call)
        self.assertIn("--replay-mode range --metrics " + ",".join(afn.RANGE_METRICS),
                      range_call)
        self.assertEqual(cell(row(r.stdout, 22, "cudaMemcpyAsync D2D, same bytes"),
                              "measured by"), "range replay")
        with open(os.path.join(self.dir, "out", "table.md")) as f:
            self.assertIn(f.read().strip(), r.stdout)

    def test_metric_refused(self):
        """A metric this ncu does not know costs its figures, not the run:
        kernel replay again with the sections alone, range replay with the
        time and DRAM bytes alone."""
        r = self.run_script(FAKE_NCU_REFUSE="lts__t_sector_hit_rate.pct")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "ncu-calls")) as f:
            calls = f.read().splitlines()
        self.assertEqual(len(calls), 4, calls)
        self.assertNotIn("--metrics", calls[1])
        self.assertIn("--metrics " + ",".join(afn.RANGE_LEAST) + " ", calls[3])
        self.assertIn("Note: kernel replay: the sections alone, ncu refused the metrics "
                      "beside them: ==ERROR== Failed to find metric", r.stdout)
        self.assertIn("Note: range replay: time and DRAM bytes alone", r.stdout)
        self.assertEqual(cell(row(r.stdout, 20, "cudaMemcpyAsync D2D, same bytes"),
                              "measured by"), "range replay")

    def test_range_refused(self):
        """Range replay refused: app-range replay takes the copy."""
        r = self.run_script(FAKE_NCU_NO_RANGE="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "ncu-calls")) as f:
            calls = f.read().splitlines()
        self.assertEqual(len(calls), 4, calls)
        self.assertIn("--replay-mode app-range --metrics " + ",".join(afn.RANGE_LEAST),
                      calls[3])
        self.assertIn("Note: app-range replay, time and DRAM bytes alone: range replay "
                      "failed: ==ERROR== Range replay: unsupported API call", r.stdout)
        self.assertEqual(cell(row(r.stdout, 22, "cudaMemcpyAsync D2D, same bytes"),
                              "ncu µs"), "26.67")

    def test_range_left_out(self):
        """A range replay that leaves a range out (one it would not replay)
        is not lined up with the others: app-range replay instead."""
        r = self.run_script(FAKE_NCU_SHORT_RANGE="1")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "ncu-calls")) as f:
            calls = f.read().splitlines()
        self.assertEqual([c.split(" --metrics")[0].split("-f -o ")[1] for c in calls[1:]], [
            self.dir + "/out/range-replay --replay-mode range",
            self.dir + "/out/range-replay --replay-mode range",
            self.dir + "/out/range-replay --replay-mode app-range"])
        self.assertIn("range replay failed: advance_fill_ncu.py: range replay: 5 results "
                      "for 6 ranges", r.stdout)
        self.assertEqual(cell(row(r.stdout, 22, "cudaMemcpyAsync D2D, same bytes"),
                              "ncu µs"), "26.67")

    def test_range_failed(self):
        """No replay of ranges at all: the kernels' table, the copy by
        events, and why."""
        r = self.run_script(FAKE_NCU_NO_RANGE="1", FAKE_NCU_REFUSE="gpu__time_duration")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        c = row(r.stdout, 22, "cudaMemcpyAsync D2D, same bytes")
        self.assertEqual(cell(c, "measured by"),
                         "events (no kernel: a copy engine's; no range replay)")
        self.assertIn("Note: ncu's range replay failed (no copy-engine figures)", r.stdout)


if __name__ == "__main__":
    sys.exit(tap.main())
