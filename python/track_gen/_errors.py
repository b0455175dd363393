# SPDX-License-Identifier: Apache-2.0
"""The exceptions and the warning of track_gen: one class per GError domain of
libtrackgen, the capture family under CaptureError.

The native module raises them; track_gen.exec exports them.  Every instance
carries the GError it stands for: ``domain`` (the quark's name, such as
``"tg-capture-error-quark"``), ``code`` (the enum value), ``message``, and
the ``producer``, ``stage`` and ``binding`` it concerns, as libtrackgen set
them (None when it concerns none).
"""
from __future__ import annotations

from typing import Optional

__all__ = [
    "TrackGenError",
    "CaptureError",
    "NotCapturableError",
    "LegacyPluginStreamError",
    "CudaError",
    "ArgumentError",
    "StateError",
    "StageError",
    "RebindAfterCaptureWarning",
]


class TrackGenError(Exception):
    """Base of every error TrackGen raises: a libtrackgen GError.

    Attributes:
        message: the GError's message, which says the cause and the fix.
        domain: the GError domain's name (``"tg-capture-error-quark"``,
            ``"tg-cuda-error-quark"``, ``"tg-argument-error-quark"``,
            ``"tg-state-error-quark"``, or ``"tg-python-error-quark"`` for an
            exception a Python stage raised).
        code: the code in that domain (for CudaError the ``cudaError_t``).
        producer: the name of the producer the error concerns, or None.
        stage: the name of the stage it concerns, or None.
        binding: the name of the binding it concerns, or None.

    libtrackgen sets the last three (tg_error_get_producer() and its kin);
    they are never read from the message.
    """

    def __init__(self, message: str, domain: str = "", code: int = 0,
                 producer: Optional[str] = None, stage: Optional[str] = None,
                 binding: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.domain = domain
        self.code = code
        self.producer = producer
        self.stage = stage
        self.binding = binding

    def __reduce__(self):
        # The fields as arguments, and the rest of the instance (notes,
        # attributes set after it was raised) as state: multiprocessing and
        # torchrun's workers pass exceptions pickled.
        return (type(self), (self.message, self.domain, self.code, self.producer,
                             self.stage, self.binding), self.__dict__)


class CaptureError(TrackGenError):
    """TG_CAPTURE_ERROR: the capture error.

    As CaptureError itself (TG_CAPTURE_ERROR_FAILED) the caller's capture is
    lost: it was invalidated before the call, or a stage broke it, or a graph
    failed to instantiate.  End the capture and capture again.  Its
    subclasses are refusals that left the capture intact.
    """


class NotCapturableError(CaptureError):
    """TG_CAPTURE_ERROR_NOT_CAPTURABLE: the work cannot be recorded into a
    capture, and nothing was recorded; the caller's capture can go on.

    Run outside the capture (Policy.AUTO picks EAGER), or make the named
    stage capture-safe.

    With ``code`` TG_CAPTURE_ERROR_ESCAPED, checked mode
    (:func:`track_gen.exec.set_checks`) saw the named stage enqueue work
    outside its capture (or, under EAGER, on a stream not joined back to its
    own): the message names the CUDA call, the kernel and the stream.
    Enqueue on ``ctx.stream``, or fork the other stream from it and join it
    back.
    """


class LegacyPluginStreamError(CaptureError):
    """TG_CAPTURE_ERROR_LEGACY_PLUGIN_STREAM: a stage that launches only on the
    legacy default stream would escape the capture or the stream it was
    given.  Port it to launch on ``ctx.stream``.
    """


class CudaError(TrackGenError):
    """TG_CUDA_ERROR: a CUDA call failed; ``code`` is the ``cudaError_t`` and the
    message names the call and the error."""


class ArgumentError(TrackGenError, ValueError):
    """TG_ARGUMENT_ERROR: an argument is wrong at run time (memory that is not
    device memory, a size, a device, an id).  Also a ValueError."""


class StateError(TrackGenError, RuntimeError):
    """TG_STATE_ERROR: the arguments are fine, the state is not (a policy the
    stream's capture state refuses, a binding not bound, a producer busy on
    this thread).  Also a RuntimeError."""


class StageError(TrackGenError):
    """A stage, body or host function written in Python raised.

    The exception it raised is this one's ``__cause__``; the message names the
    producer and the stage.  A TrackGenError raised inside a stage (a nested
    producer's refusal) keeps its own class instead.
    """


class RebindAfterCaptureWarning(UserWarning):
    """A binding of a producer changed after the producer was captured.

    Its own graphs are updated at its next call; a graph of yours that
    recorded it (a ``torch.cuda.graph``) still uses the old buffer, which the
    producer keeps alive, and must be captured again.  A real warning: filter
    it, or turn it into an error, with the ``warnings`` module.
    """
