#!/usr/bin/env python3
"""TrackGen inside torch.cuda.graph, driven from Python (prints TAP).

Loads tests/libtgpy.so (the three archives plus a test producer) through
ctypes.  Inside a torch.cuda.graph capture it registers the capture with
TrackGen, records a producer guarded by a torch tensor used as the device
flag on torch's capture stream, and a masked epoch advance on TG_STREAM_AUTO
(which resolves to the registered capture); then replays the torch graph
with flags, inputs and masks changed by torch ops, checking every output
against eager runs on torch's stream; drops the Python-side producer handle
and keeps replaying; deletes the torch graph and observes the producer's
release.  Then, 100 times: a torch graph that retained a loaded producer is
deleted, and TrackGen's reaper thread frees that producer while a second
torch.cuda.graph capture (global mode) is in progress; that capture must end
valid, replay, and match an eager run.

Every call names torch's stream (torch.cuda.current_stream().cuda_stream, an
int; 0 is CUDA's default stream) unless it is about TG_STREAM_AUTO.
"""
import ctypes
import gc
import os
import sys

REPLAYS = 50
ROUNDS = 100
N = 4096
POLICY_AUTO, POLICY_EAGER = 0, 1
CAPTURE_MODE_GLOBAL = 0  # cudaStreamCaptureModeGlobal, torch's default

plan = []


def ok(cond, what):
    plan.append((bool(cond), what))
    print(("ok" if cond else "not ok") + " %d - %s" % (len(plan), what), flush=True)
    return cond


def skip_all(why):
    print("1..0 # SKIP %s" % why)
    sys.exit(0)


try:
    import torch
except ImportError:
    skip_all("no torch")
if not torch.cuda.is_available():
    skip_all("no CUDA device")

# [load]
lib_path = os.path.join(os.environ.get("abs_top_builddir", "."), "tests", "libtgpy.so")
lib = ctypes.CDLL(lib_path)
P, I, U32, I64, U64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_int64, ctypes.c_uint64
B, Z = ctypes.c_char_p, ctypes.c_size_t
lib.tgpy_chain_new.restype = P
lib.tgpy_chain_new.argtypes = [U32, P, P, B, I]
lib.tgpy_run.argtypes = [P, P, I, P, B, I]
lib.tgpy_unref.argtypes = [P]
lib.tgpy_release_wait.argtypes = [I64]
lib.tgpy_scope_begin.restype = P
lib.tgpy_scope_begin.argtypes = [P, I, B, I]
lib.tgpy_scope_end.argtypes = [P, B, I]
lib.tgpy_seeds_new.restype = P
lib.tgpy_seeds_new.argtypes = [ctypes.c_uint, U64, B, I]
lib.tgpy_seeds_advance.argtypes = [P, P, P, Z, B, I]
lib.tgpy_seeds_epochs.argtypes = [P, P, P, B, I]
lib.tgpy_seeds_unref.argtypes = [P]
lib.tgpy_reaper_hold.argtypes = [B, I]
err = ctypes.create_string_buffer(512)
STREAM_AUTO = ctypes.c_void_p(2**64 - 1)  # TG_STREAM_AUTO: resolve it for me


def torch_stream():
    """torch's current stream as a cudaStream_t (0: CUDA's default stream)."""
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
# [load]


def check(result, what):
    if not result:
        print("Bail out! %s: %s" % (what, err.value.decode()))
        sys.exit(1)
    return result


# [tensors]
def ptr(t):
    return ctypes.c_void_p(t.data_ptr())


dev = torch.device("cuda")
param = torch.zeros(1, dtype=torch.int32, device=dev)
flag = torch.zeros(1, dtype=torch.int32, device=dev)
mask = torch.zeros(N, dtype=torch.uint8, device=dev)
out = torch.zeros(N, dtype=torch.int32, device=dev)
ref_out = torch.zeros(N, dtype=torch.int32, device=dev)
# [tensors]
scratch = torch.zeros(N, dtype=torch.int32, device=dev)

producer = check(lib.tgpy_chain_new(N, ptr(out), ptr(param), err, len(err)), "producer")
reference = check(lib.tgpy_chain_new(N, ptr(ref_out), ptr(param), err, len(err)), "reference")
seeds = check(lib.tgpy_seeds_new(N, 1234, err, len(err)), "seed state")

print("1..10", flush=True)
finalized_before = lib.tgpy_finalized()

# [warm-up]
# Warm up on a side stream, as torch.cuda.graph's documentation asks.
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    check(lib.tgpy_run(producer, torch_stream(), POLICY_EAGER, None, err, len(err)),
          "warm-up")
torch.cuda.current_stream().wait_stream(side)
torch.cuda.synchronize()
# [warm-up]

# [capture]
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    stream = torch_stream()  # torch's capture stream
    scope = check(lib.tgpy_scope_begin(stream, CAPTURE_MODE_GLOBAL, err, len(err)), "scope")
    param.add_(1)  # torch work recorded before TrackGen's
    recorded = lib.tgpy_run(producer, stream, POLICY_AUTO, ptr(flag), err, len(err))
    # TG_STREAM_AUTO resolves to the registered capture's stream.
    advanced = lib.tgpy_seeds_advance(seeds, STREAM_AUTO, ptr(mask), N, err, len(err))
    check(lib.tgpy_scope_end(scope, err, len(err)), "scope end")
# [capture]
ok(recorded and advanced, "producer (conditional on a torch tensor) and masked advance "
   "(TG_STREAM_AUTO) recorded inside torch.cuda.graph")

expected_epochs = torch.zeros(N, dtype=torch.int64, device=dev)
torch.manual_seed(0)


def replay_and_compare(first, count):
    """Replays with flag, param and mask changed by torch ops; compares with eager runs."""
    mismatches = skipped = 0
    for i in range(first, first + count):
        out.zero_()
        ref_out.zero_()
        flag.fill_(1 if i % 3 else 0)
        mask.copy_((torch.rand(N, device=dev) < 0.3).to(torch.uint8))
        graph.replay()
        expected_epochs.add_(mask.to(torch.int64))
        # Eager reference on torch's stream, after the replay: the same inputs
        # (param was incremented by the graph).
        check(lib.tgpy_run(reference, torch_stream(), POLICY_EAGER, ptr(flag), err,
                           len(err)), "eager")
        torch.cuda.synchronize()
        skipped += int(flag.item() == 0)
        if not torch.equal(out, ref_out) or (flag.item() == 0 and out.any()):
            mismatches += 1
    return mismatches, skipped


mismatches, skipped = replay_and_compare(0, REPLAYS)
ok(mismatches == 0, "%d replays match eager runs (%d skipped on the device)" % (REPLAYS, skipped))
epochs = torch.zeros(N, dtype=torch.int32)
check(lib.tgpy_seeds_epochs(seeds, torch_stream(), ctypes.c_void_p(epochs.data_ptr()),
                            err, len(err)), "epochs")
ok(torch.equal(epochs.to(torch.int64), expected_epochs.cpu()),
   "epochs equal the number of replays each env's mask bit was set")

# [release]
# Drop the Python-side handle: the torch graph keeps the producer alive.
lib.tgpy_unref(producer)
producer = None
gc.collect()
# [release]
ok(lib.tgpy_finalized() == finalized_before, "producer alive after its handle was dropped")
mismatches, _ = replay_and_compare(REPLAYS, REPLAYS)
ok(mismatches == 0, "%d more replays after dropping the handle still match" % REPLAYS)

# [delete]
# Delete the torch graph: TrackGen releases the producer.
del graph
gc.collect()
torch.cuda.synchronize()
released = lib.tgpy_release_wait(10 * 1000 * 1000)
# [delete]
ok(released and lib.tgpy_finalized() == finalized_before + 1,
   "producer released after the torch graph was deleted")


def release_during_capture(second):
    """One round of the issue: the torch graph that retained a loaded producer
    is deleted, and TrackGen's reaper frees the producer while a second
    torch.cuda.graph capture (global mode) is in progress on this thread.
    Returns (released inside the capture, second graph matches eager)."""
    first = check(lib.tgpy_chain_new(N, ptr(scratch), ptr(param), err, len(err)), "first")
    # Loaded: a pinned readback buffer (eager condition), an own graph
    # (REPLAY), private and side streams; its release frees them all.
    check(lib.tgpy_run(first, torch_stream(), POLICY_EAGER, ptr(flag), err, len(err)),
          "first eager")
    check(lib.tgpy_run(first, torch_stream(), POLICY_AUTO, None, err, len(err)),
          "first replay")
    g1 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g1):
        stream = torch_stream()
        scope = check(lib.tgpy_scope_begin(stream, CAPTURE_MODE_GLOBAL, err, len(err)),
                      "first scope")
        check(lib.tgpy_run(first, stream, POLICY_AUTO, ptr(flag), err, len(err)),
              "first recorded")
        check(lib.tgpy_scope_end(scope, err, len(err)), "first scope end")
    lib.tgpy_unref(first)  # g1 alone holds it now
    g1.replay()
    torch.cuda.synchronize()
    # The reaper waits at a gate, so the release of `first` queues behind it.
    check(lib.tgpy_reaper_hold(err, len(err)), "reaper hold")
    finalized = lib.tgpy_finalized()
    del g1
    gc.collect()
    g2 = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g2):  # capture_error_mode="global"
        stream = torch_stream()
        scope = check(lib.tgpy_scope_begin(stream, CAPTURE_MODE_GLOBAL, err, len(err)),
                      "second scope")
        try:
            lib.tgpy_reaper_release()
            # A host-side wait: the reaper frees `first` now, during this capture.
            released = (lib.tgpy_release_wait(10 * 1000 * 1000)
                        and lib.tgpy_finalized() == finalized + 1)
            param.add_(1)  # raises if the capture was invalidated
            recorded = lib.tgpy_run(second, stream, POLICY_AUTO, None, err, len(err))
        finally:
            check(lib.tgpy_scope_end(scope, err, len(err)), "second scope end")
    out.zero_()
    ref_out.zero_()
    g2.replay()
    check(lib.tgpy_run(reference, torch_stream(), POLICY_EAGER, None, err, len(err)),
          "second eager")
    torch.cuda.synchronize()
    matches = recorded and torch.equal(out, ref_out) and bool(out.any())
    del g2
    gc.collect()
    return released, matches


# The second capture records a producer that outlives the rounds.
second = check(lib.tgpy_chain_new(N, ptr(out), ptr(param), err, len(err)), "second")
released = matched = 0
for r in range(ROUNDS):
    try:
        inside, matches = release_during_capture(second)
    except RuntimeError as e:  # torch: the second capture was invalidated
        print("# round %d: %s" % (r, e), flush=True)
        inside = matches = False
    released += int(inside)
    matched += int(matches)
ok(released == ROUNDS, "the reaper released a loaded producer inside a global torch "
   "capture in %d of %d rounds" % (released, ROUNDS))
ok(matched == ROUNDS, "%d of %d such captures ended valid, replayed and matched eager runs"
   % (matched, ROUNDS))
lib.tgpy_unref(second)
check(lib.tgpy_release_wait(10 * 1000 * 1000), "release wait")

finalized_before_unref = lib.tgpy_finalized()
lib.tgpy_unref(reference)
lib.tgpy_seeds_unref(seeds)
ok(lib.tgpy_finalized() == finalized_before_unref + 1, "reference producer freed normally")
ok(all(passed for passed, _ in plan), "all checks passed")
sys.exit(0 if all(passed for passed, _ in plan) else 1)
