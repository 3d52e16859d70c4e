"""The typed schemas of the checkpoint documents: what the ``checkpoint.json`` of PSRO (and its variants and
family loops written by :mod:`psro.run.checkpoint`), of NFSP and of offline PSRO holds, field by field, with its
types and bounds. :func:`decode` checks a document read from disk against its schema (pydantic, strict: no string
read as a number, no number as a bool) before any consistency check or restore reads it, and names the first
field that is wrong. Fields a later release adds are allowed (``extra``), so that a document stays readable; the
fields a release needs are required.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["ArraysEntry", "NFSPDocument", "OfflineDocument", "PSRODocument", "decode"]

NonNegative = Annotated[int, Field(ge=0)]


class _Entry(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow", frozen=True)


class ArraysEntry(_Entry):
    """A file of the checkpoint, named with its SHA-256 (:func:`psro.run.store.write_arrays`)."""

    file: str
    sha256: str


class RngEntry(_Entry):
    """A numpy bit generator's state."""

    bit_generator: str
    state: dict[str, Any]


class EquilibriumEntry(_Entry):
    concept: str
    method: str


class PolicyFile(_Entry):
    """The rows ``start .. end`` (one per player) of the populations held by one policy file."""

    file: str
    start: list[NonNegative]
    end: list[NonNegative]


class PSROState(_Entry):
    iteration: Annotated[int, Field(ge=-1)]
    gap: float
    train_gap: float
    evaluations: NonNegative
    in_iteration: bool
    sizes_before: Annotated[list[NonNegative], Field(min_length=1)]
    wall_time: float
    cpu_time: float
    meta_strategy: EquilibriumEntry | None
    eval_meta_strategy: EquilibriumEntry | None
    top_up: Any


class PSROOptionsEntry(_Entry):
    game: str | dict[str, Any]   # (a mapping: a NormalFormGame's payoffs)


class PSRODocument(_Entry):
    """The checkpoint of :class:`psro.PSRO` and of every loop built on it."""

    version: int
    iteration: int
    arrays: str
    meta_game: str
    policy_files: Annotated[list[PolicyFile], Field(min_length=1)]
    options: PSROOptionsEntry
    config: dict[str, Any] | None
    state: PSROState
    rng: RngEntry
    history: list[dict[str, Any]]
    manifest: dict[str, str]
    extra: dict[str, Any] = {}


class NFSPOptionsEntry(_Entry):
    algorithm: str
    config: dict[str, Any]


class NFSPState(_Entry):
    gap: float
    train_gap: float
    wall: float
    cpu: float
    evaluations: NonNegative
    extra: dict[str, Any]
    measure_episodes: NonNegative = 0   # (absent from checkpoints written before it was counted)


class NFSPDocument(_Entry):
    """The checkpoint of :class:`psro.family.nfsp.NFSP`."""

    format: str
    version: int
    iteration: Annotated[int, Field(ge=-1)]
    options: NFSPOptionsEntry
    arrays: ArraysEntry
    rng: RngEntry
    history: list[dict[str, Any]]
    members: list[list[dict[str, Any]]]
    columns: list[str]
    learners: list[dict[str, Any]]
    state: NFSPState


class OfflineOptionsEntry(_Entry):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    algorithm: str
    members: NonNegative
    seed: NonNegative
    penalty: float
    uniform_weight: float
    meta_iterations: NonNegative
    tau: float
    max_histories: NonNegative
    game: str | None   # (None: a dataset without its game)


class DatasetEntry(_Entry):
    path: str
    sha256: str


class OfflineDocument(_Entry):
    """The checkpoint of :class:`psro.offline.coffee_psro.OfflinePSRO`."""

    options: OfflineOptionsEntry
    iteration: int
    rows: list[dict[str, Any]]
    wall: float
    cpu: float
    arrays: ArraysEntry
    dataset: DatasetEntry


def decode(schema: type[BaseModel], document, fail: Callable[[str], None]):
    """``document`` (parsed JSON) as an instance of ``schema``; else ``fail(what)`` (which raises) with the first
    wrong field and what is wrong with it.

    Examples
    --------
    >>> entry = decode(ArraysEntry, {"file": "a.npz", "sha256": "00"}, print)
    >>> entry.file
    'a.npz'
    >>> def fail(what):
    ...     raise ValueError(what)
    >>> decode(PolicyFile, {"file": "p.npz", "start": [0, -1], "end": [1, 1]}, fail)
    Traceback (most recent call last):
    ...
    ValueError: the field 'start.1' is wrong: Input should be greater than or equal to 0 (got -1)
    >>> decode(ArraysEntry, {"file": "a.npz"}, fail)
    Traceback (most recent call last):
    ...
    ValueError: the field 'sha256' is missing
    >>> decode(ArraysEntry, [], fail)
    Traceback (most recent call last):
    ...
    ValueError: the document is not a mapping of fields
    """
    if not isinstance(document, dict):
        fail("the document is not a mapping of fields")
    try:
        return schema.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "missing":
            fail(f"the field {where!r} is missing")
        if error["type"] == "extra_forbidden":
            fail(f"the field {where!r} is not one of its schema's")
        fail(f"the field {where!r} is wrong: {error['msg']} (got {error['input']!r:.80})")
