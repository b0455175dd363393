#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""simloop_dist.py: simloop.py under torch.distributed, one process per GPU.

Run it with torchrun: ``torchrun --nproc-per-node=2 examples/simloop_dist.py``.
Rank r of W owns envs [r E / W, (r + 1) E / W) of one global population: a
seed-state shard (SeedState.shard), its own track producer, Python stage and
step graph, on GPU r % (GPUs visible).  Every per-env decision is keyed by
the env's global index, so each env's run does not depend on the sharding.
After the loop the ranks reduce their episode statistics (all_reduce), and
with --check rank 0 runs the whole population in one process and compares
every env's final state, gathered from the ranks, bit for bit.  The backend
is NCCL on GPUs of their own and gloo when ranks share a GPU (or with
--backend gloo).  Without torch or a GPU it says so and exits 77.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import simloop  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--envs", type=int, default=4096, help="envs in all (default 4096)")
    p.add_argument("--steps", type=int, default=2000, help="steps (default 2000)")
    p.add_argument("--seed", type=int, default=1234, help="the population's base seed")
    p.add_argument("--backend", choices=("auto", "nccl", "gloo"), default="auto")
    p.add_argument("--check", action="store_true",
                   help="rank 0 also runs the population in one process and compares")
    simloop.add_compile_option(p)
    args = p.parse_args(argv)
    # The simulator's other options, at simloop.py's defaults.
    defaults = simloop.parse_args([])
    for k, v in vars(defaults).items():
        if not hasattr(args, k):
            setattr(args, k, v)
    args.svg = ""
    return args


def say(line):
    """One write per line: the ranks share torchrun's stdout, and print()
    unbuffered writes the newline apart, so two ranks' lines could mix."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def gather_snapshot(torch, dist, snap, first, n, total, device):
    """Rank 0 receives every rank's envs, in global order."""
    fields = {
        "seeds": torch.tensor([simloop.signed64(x) for x in snap["seeds"]],
                              dtype=torch.int64),
        "epochs": torch.tensor(snap["epochs"], dtype=torch.int64),
        "progress": snap["progress"], "lengths": snap["lengths"],
        "families": snap["families"].to(torch.int64), "valid": snap["valid"].to(torch.int64),
        "points": snap["points"].reshape(n, -1),
    }
    world = dist.get_world_size()
    out = {}
    for name, t in fields.items():
        t = t.to(device).contiguous()
        # Shards may differ in size by one env: pad to the largest.
        largest = (total + world - 1) // world
        padded = torch.zeros((largest,) + tuple(t.shape[1:]), dtype=t.dtype, device=device)
        padded[:n] = t
        parts = [torch.zeros_like(padded) for _ in range(world)]
        dist.all_gather(parts, padded)
        out[name] = [part.cpu() for part in parts]
    return out


def main(argv=None):
    args = parse_args(argv)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    error = simloop.loop_options_error(args) or (
        args.envs < world and "--envs must be at least the ranks' number, %d" % world)
    if error:
        print("simloop_dist.py: " + error, file=sys.stderr)
        return 2
    try:
        import torch
        import torch.distributed as dist
    except ImportError:
        print("simloop_dist.py: needs PyTorch", file=sys.stderr)
        return simloop.SKIP
    if not torch.cuda.is_available():
        print("simloop_dist.py: needs a CUDA GPU", file=sys.stderr)
        return simloop.SKIP
    import track_gen as tg
    import track_gen.interop.torch  # noqa: F401
    import track_gen.tracks  # noqa: F401

    rank = int(os.environ.get("RANK", "0"))
    device = rank % torch.cuda.device_count()
    torch.cuda.set_device(device)
    backend = args.backend
    if backend == "auto":
        backend = "nccl" if world <= torch.cuda.device_count() else "gloo"
    if "MASTER_ADDR" not in os.environ:  # run alone, without torchrun
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29511", RANK="0",
                          WORLD_SIZE="1")
    dist.init_process_group(backend)
    comm_device = torch.device("cuda", device) if backend == "nccl" else torch.device("cpu")

    first = rank * args.envs // world
    n = (rank + 1) * args.envs // world - first
    sim = simloop.Sim(torch, tg, n, args.seed, args, first_env=first, device=device)
    sim.capture()
    sim.reset()
    dist.barrier()
    start = time.perf_counter()
    sim.run_graph(args.steps)
    seconds = time.perf_counter() - start
    snap = sim.snapshot()

    totals = torch.tensor([snap["counters"][k] for k in simloop.COUNTERS],
                          dtype=torch.int64, device=comm_device)
    dist.all_reduce(totals)
    times = torch.tensor([seconds], dtype=torch.float64, device=comm_device)
    dist.all_reduce(times, op=dist.ReduceOp.MAX)
    gathered = gather_snapshot(torch, dist, snap, first, n, args.envs, comm_device)
    rate = n * args.steps / seconds
    say("rank %d of %d (device %d, %s): envs %d to %d, %.0f env-steps/s"
        % (rank, world, device, backend, first, first + n - 1, rate))

    status = 0
    if rank == 0:
        counters = dict(zip(simloop.COUNTERS, totals.tolist()))
        say("all ranks: %.0f env-steps/s (%d envs x %d steps in %.3f s); tracks "
            "regenerated %d; regeneration skipped on the device after %d shard-steps"
            % (args.envs * args.steps / float(times), args.envs, args.steps, float(times),
               counters["laps"] + counters["crashes"] + counters["invalid"],
               counters["skipped_steps"]))
        if args.check:
            whole = simloop.Sim(torch, tg, args.envs, args.seed, args)
            whole.capture()
            whole.reset()
            whole.run_graph(args.steps)
            ref = whole.snapshot()
            same = compare(torch, gathered, ref, args.envs, world)
            say("sharding determinism: %d/%d envs identical to the one-process run"
                % (same, args.envs))
            status = 0 if same == args.envs else 1
            whole.close()
    sim.close()
    dist.barrier()
    dist.destroy_process_group()
    return status


def compare(torch, gathered, ref, total, world):
    """Envs whose every field matches the one-process run, bit for bit."""
    same = 0
    for r in range(world):
        first = r * total // world
        n = (r + 1) * total // world - first
        for i in range(n):
            e = first + i
            ok = (int(gathered["seeds"][r][i]) & ((1 << 64) - 1) == ref["seeds"][e]
                  and int(gathered["epochs"][r][i]) == ref["epochs"][e]
                  and torch.equal(gathered["progress"][r][i], ref["progress"][e])
                  and torch.equal(gathered["lengths"][r][i], ref["lengths"][e])
                  and int(gathered["families"][r][i]) == int(ref["families"][e])
                  and int(gathered["valid"][r][i]) == int(ref["valid"][e])
                  and torch.equal(gathered["points"][r][i], ref["points"][e].reshape(-1)))
            same += ok
    return same


if __name__ == "__main__":
    sys.exit(main())
