# SPDX-License-Identifier: Apache-2.0
"""Producers from several Python threads at once: the GIL is released while
libtrackgen runs and taken for Python stages, so four threads each running
their own producer, and two threads sharing one, all get exact results."""
import sys
import threading

import tap
import tgtest
from track_gen import exec as tx

CALLS = 50


class Threads(tgtest.GpuCase):
    def test_four_threads_four_producers(self):
        torch = self.torch

        def work(i):
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                chain = tgtest.Chain("thread%d" % i, stream=stream)
                for c in range(CALLS):
                    policy = (tx.Policy.EAGER, tx.Policy.REPLAY)[c % 2]
                    chain.set_inputs(i * 1000 + c, c)
                    chain.producer.run(stream, policy)
                    stream.synchronize()
                    want = tgtest.expected(i * 1000 + c, c)
                    if not torch.equal(chain.b.cpu(), want):
                        raise AssertionError("thread %d call %d: wrong result" % (i, c))
                chain.producer.close()

        self.run_threads(work, 4)

    def test_two_threads_one_producer(self):
        torch = self.torch
        chain = tgtest.Chain("shared")
        # Its tensors were made on this thread's stream, which the threads'
        # streams do not wait for.
        torch.cuda.current_stream().synchronize()
        lock = threading.Lock()  # inputs and result belong to one call at a time

        def work(i):
            stream = torch.cuda.Stream()
            for c in range(CALLS):
                with lock, torch.cuda.stream(stream):
                    chain.set_inputs(i * 7 + c, c)
                    chain.producer.run(stream)
                    stream.synchronize()
                    if not torch.equal(chain.b.cpu(), tgtest.expected(i * 7 + c, c)):
                        raise AssertionError("thread %d call %d: wrong result" % (i, c))

        self.run_threads(work, 2)
        self.assertEqual(chain.producer.runner.stats.n_replays, 2 * CALLS)
        chain.producer.close()

    def test_gil_released_while_trackgen_waits(self):
        """A HOST stage waits for a long kernel (ops.synchronize(), inside
        libtrackgen): another thread's Python code runs meanwhile."""
        torch = self.torch
        ticks = []
        done = threading.Event()
        p = tx.Producer("slow")
        p.add_device_stage("sleep", lambda ctx: torch.cuda._sleep(400_000_000))
        p.add_host_stage("wait", lambda ops: ops.synchronize())

        def ticker(i):
            while not done.is_set():
                ticks.append(1)
                done.wait(0.001)

        t = threading.Thread(target=ticker, args=(0,))
        t.start()
        before = len(ticks)
        p.run(torch.cuda.current_stream(), tx.Policy.EAGER)
        during = len(ticks) - before
        done.set()
        t.join()
        self.assertGreater(during, 10)
        p.close()


if __name__ == "__main__":
    sys.exit(tap.main())
