"""The Python main job, briefly: examples/simloop.py (a torch simulator
regenerating tracks inside one torch.cuda.graph) and examples/simloop_dist.py
under torch.distributed, two processes on one GPU over gloo; their
determinism checks and counters.  Without torch or a GPU they skip."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import tap
import tgtest

EXAMPLES = os.path.join(os.environ.get("abs_top_srcdir",
                                       os.path.join(os.path.dirname(__file__), "..", "..")),
                        "examples")


def run(args, timeout=600):
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable] + args, capture_output=True, text=True,
                          timeout=timeout, env=env)


class Examples(unittest.TestCase):
    def test_simloop(self):
        tgtest.require_gpu()
        with tempfile.TemporaryDirectory() as tmp:
            svg = os.path.join(tmp, "tracks.svg")
            r = run([os.path.join(EXAMPLES, "simloop.py"), "--envs", "256", "--steps", "300",
                     "--curriculum", "100", "--crash-prob", "0.002", "--svg", svg])
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            out = r.stdout
            self.assertRegex(out, r"in-graph: +\d+ env-steps/s")
            self.assertRegex(out, r"256 of 256 envs and the counters the same")
            self.assertRegex(out, r"determinism: (\d+) of \1 envs regenerated standalone")
            regen = int(re.search(r"tracks regenerated: (\d+)", out).group(1))
            skipped = int(re.search(r"skipped on the device after (\d+)", out).group(1))
            self.assertGreater(regen, 0)
            self.assertGreater(skipped, 0)
            with open(svg) as f:
                self.assertIn("<svg", f.read())

    def test_simloop_distributed(self):
        tgtest.require_gpu()
        r = run(["-m", "torch.distributed.run", "--nproc-per-node=2", "--master-port=29533",
                 os.path.join(EXAMPLES, "simloop_dist.py"), "--envs", "384", "--steps",
                 "200", "--backend", "gloo", "--check", "--no-compile"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("sharding determinism: 384/384 envs identical", r.stdout)
        self.assertEqual(sorted(re.findall(r"rank (\d) of 2 \(", r.stdout)), ["0", "1"])

    def test_help_and_skip(self):
        r = run([os.path.join(EXAMPLES, "simloop.py"), "--help"])
        self.assertEqual(r.returncode, 0)
        self.assertIn("--envs", r.stdout)
        try:
            import torch  # noqa: F401
            have = torch.cuda.is_available()
        except ImportError:
            have = False
        if not have:
            r = run([os.path.join(EXAMPLES, "simloop.py")])
            self.assertEqual(r.returncode, 77, r.stderr)


if __name__ == "__main__":
    sys.exit(tap.main())
