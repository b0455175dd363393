# SPDX-License-Identifier: Apache-2.0
"""Checked mode sees every driver call that enqueues work on a stream.

Checked mode (lib/exec/check-cupti.c) notes the CUDA calls a stage makes
through CUPTI's callbacks, enabled for the calls it lists alone.  A runtime
call it does not list is seen through the driver calls it makes; a driver
call it does not list is not seen at all: work that escapes a capture
through it would replay stale, silently.  So every driver call whose
parameters name a stream (CUPTI's generated_cuda_meta.h, in the toolkit
TrackGen was built with) must be listed there, or be one of the calls below
that enqueue nothing (queries, attributes, the capture's own bookkeeping).
A toolkit that adds such a call fails this test until the call is sorted.
"""
import os
import re
import unittest

import tap

SRCDIR = os.environ.get("abs_top_srcdir",
                        os.path.join(os.path.dirname(__file__), "..", ".."))
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")

# Driver calls that name a stream and enqueue no work on it, with why.
NOT_WORK = {
    "cuStreamQuery": "a query",
    "cuStreamGetPriority": "a query",
    "cuStreamGetFlags": "a query",
    "cuStreamGetId": "a query",
    "cuStreamGetCtx": "a query",
    "cuStreamGetCtx_v2": "a query",
    "cuStreamGetDevice": "a query",
    "cuStreamGetGreenCtx": "a query",
    "cuStreamGetAttribute": "a query",
    "cuStreamSetAttribute": "an attribute, no work",
    "cuStreamCopyAttributes": "attributes, no work",
    "cuStreamIsCapturing": "a query",
    "cuStreamGetCaptureInfo": "a query",
    "cuStreamGetCaptureInfo_v2": "a query",
    "cuStreamGetCaptureInfo_v3": "a query",
    "cuStreamUpdateCaptureDependencies": "the capture's bookkeeping",
    "cuStreamUpdateCaptureDependencies_v2": "the capture's bookkeeping",
    "cuStreamDestroy": "ends the stream",
    "cuStreamDestroy_v2": "ends the stream",
    "cuGraphUpload": "uploads a graph's work, runs none",
}


def meta_header():
    for sub in ("include", "extras/CUPTI/include"):
        path = os.path.join(CUDA_HOME, sub, "generated_cuda_meta.h")
        if os.path.exists(path):
            return path
    return None


def stream_calls(path):
    """The driver calls whose parameter struct has a CUstream field."""
    text = open(path).read()
    calls = set()
    for m in re.finditer(r"typedef struct (\w+)_params_st \{(.*?)\} \1_params;", text,
                         re.S):
        if re.search(r"\bCUstream\s+\w+\s*;", m.group(2)):
            calls.add(m.group(1))
    return calls


def listed_calls(path):
    """The driver calls check-cupti.c notes: its lists' entries and cases,
    each with its per-thread forms."""
    text = open(path).read()
    names = set()
    for block in re.finditer(r"#define DRIVER_\w+\((?:X|X1)\)(.*?)(?:\n\n|\n#)", text,
                             re.S):
        names.update(re.findall(r"\bX1? \((\w+)", block.group(1)))
    names.update(re.findall(r"DRIVER_PAIR \(\w+, (\w+),", text))
    names.update(re.findall(r"CUPTI_DRIVER_TRACE_CBID_(\w+):", text))
    return names | {n + s for n in names for s in ("_ptsz", "_ptds")}


class Coverage(unittest.TestCase):
    def test_every_stream_call_listed_or_not_work(self):
        header = meta_header()
        if header is None:
            self.skipTest("no generated_cuda_meta.h under %s (CUPTI's headers)" % CUDA_HOME)
        listed = listed_calls(os.path.join(SRCDIR, "lib", "exec", "check-cupti.c"))
        calls = stream_calls(header)
        self.assertGreater(len(calls), 50, "the header's parameter structs were not read")
        missing = sorted(c for c in calls
                         if c not in listed and re.sub(r"_pt(?:sz|ds)$", "", c) not in NOT_WORK)
        self.assertEqual(missing, [], "driver calls naming a stream that checked mode "
                         "does not note: list them in lib/exec/check-cupti.c, or in "
                         "NOT_WORK here with why they enqueue nothing")


if __name__ == "__main__":
    tap.main()
